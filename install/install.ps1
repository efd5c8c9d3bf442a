# Installs onnx-doctor on Windows, in PowerShell (5.1 or 7):
#
#   & .\install.ps1 -ReleaseUrl https://github.com/OWNER/onnx-doctor/releases/download/v0.1.0 -Version 0.1.0
#
# Downloads the release's onnx-doctor-VERSION-x86_64-windows.exe, checks it
# against the release's SHA256SUMS, and puts it in
# %LOCALAPPDATA%\onnx-doctor\onnx-doctor.exe; nothing else is changed (add
# that folder to your Path, or run it by its full path). A download that
# does not match its checksum is deleted, and the script stops.
param(
    [Parameter(Mandatory = $true)][string]$ReleaseUrl,
    [Parameter(Mandatory = $true)][string]$Version
)
$ErrorActionPreference = 'Stop'
$file = "onnx-doctor-$Version-x86_64-windows.exe"
$dir = Join-Path $env:LOCALAPPDATA 'onnx-doctor'
New-Item -ItemType Directory -Force -Path $dir | Out-Null
$download = Join-Path $dir "$file.download"
$sums = Join-Path $dir 'SHA256SUMS.download'
try {
    Invoke-WebRequest -UseBasicParsing -Uri "$ReleaseUrl/$file" -OutFile $download
    Invoke-WebRequest -UseBasicParsing -Uri "$ReleaseUrl/SHA256SUMS" -OutFile $sums
    $pattern = ' \*?' + [regex]::Escape($file) + '\s*$'
    $line = Get-Content -Path $sums | Where-Object { $_ -match $pattern } | Select-Object -First 1
    if (-not $line) { throw "SHA256SUMS lists no $file" }
    $expected = ($line -split '\s+')[0].ToLowerInvariant()
    $actual = (Get-FileHash -Algorithm SHA256 -Path $download).Hash.ToLowerInvariant()
    if ($actual -ne $expected) { throw "$file does not match SHA256SUMS: $actual, expected $expected" }
    Move-Item -Force -Path $download -Destination (Join-Path $dir 'onnx-doctor.exe')
}
finally {
    Remove-Item -Force -ErrorAction SilentlyContinue -Path $download, $sums
}
& (Join-Path $dir 'onnx-doctor.exe') --version
