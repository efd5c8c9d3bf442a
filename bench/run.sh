#!/usr/bin/env bash
# Measures the doctor; prints numbers, asserts nothing.
#
#   bench/run.sh            # uses target/test-venvs/healthy (built by the tests)
#
# Needs hyperfine for the timings if available (falls back to a loop).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
BIN=$PWD/target/release/onnx-doctor
VENV=${VENV:-$PWD/target/test-venvs/healthy}
[ -x "$VENV/bin/python" ] || { echo "no $VENV; run 'cargo test' first or set VENV" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# Time a command N times, print the median wall time in ms.
median_ms() {
  local n=$1; shift
  python3 - "$n" "$@" <<'PY'
import subprocess, sys, time, statistics
n = int(sys.argv[1]); cmd = sys.argv[2:]
times = []
for _ in range(n):
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times.append((time.perf_counter() - t) * 1000)
print(f"{statistics.median(times):.1f}")
PY
}

# Wall time and peak RSS (VmHWM) of the doctor's own process, sampled until
# it exits, as "SECONDS KIB"; the Python interpreters it runs are separate
# processes and not counted.
wall_and_peak() {
  python3 - "$@" <<'PY'
import subprocess, sys, time
t = time.perf_counter()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
peak = 0
while p.poll() is None:
    try:
        with open(f"/proc/{p.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
    except OSError:
        pass
    time.sleep(0.001)
print(f"{time.perf_counter() - t:.3f} {peak}")
PY
}
peak_kib() { wall_and_peak "$@" | cut -d' ' -f2; }

# A fake environment with N distributions (dist-info directories with METADATA).
fake_env() {
  local dir=$1 n=$2
  python3 -m venv --without-pip "$dir"
  local site
  site=$(echo "$dir"/lib/python3*/site-packages)
  python3 - "$site" "$n" <<'PY'
import os, sys
site, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(site, f"package_{i:04d}-1.{i % 50}.{i % 7}.dist-info")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w") as f:
        f.write(f"Metadata-Version: 2.1\nName: package-{i:04d}\nVersion: 1.{i % 50}.{i % 7}\nRequires-Dist: numpy>=1.20\n\n")
PY
}

fake_env "$WORK/env50" 50
fake_env "$WORK/env1000" 1000

echo "== --fast (median of 20 runs, wall ms)"
echo "50 distributions:    $(median_ms 20 "$BIN" --fast --python "$WORK/env50/bin/python")"
echo "1000 distributions:  $(median_ms 20 "$BIN" --fast --python "$WORK/env1000/bin/python")"
echo "healthy venv:        $(median_ms 20 "$BIN" --fast --python "$VENV/bin/python")"

echo "== full check vs the imports alone (median of 10 runs, wall ms)"
# The same packages the doctor imports, where installed (it imports each
# stack package present, torchvision and onnxscript included).
IMPORTS="import $("$VENV/bin/python" -c '
import importlib.util as u
mods = ["numpy", "google.protobuf", "torch", "torchvision", "onnx", "onnxruntime", "tensorrt", "onnxscript"]
print(", ".join(m for m in mods if u.find_spec(m.split(".")[0]) and u.find_spec(m)))')"
# Interleave the two so machine noise hits both alike.
read -r base full < <(python3 - "$VENV/bin/python" "$IMPORTS" "$BIN" <<'PY'
import subprocess, sys, time, statistics
py, imports, doctor = sys.argv[1:4]
a, b = [], []
for _ in range(10):
    for cmd, ts in (([py, "-c", imports], a), ([doctor, "--python", py], b)):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/")
        ts.append((time.perf_counter() - t) * 1000)
print(f"{statistics.median(a):.1f} {statistics.median(b):.1f}")
PY
)
echo "python -c \"$IMPORTS\": $base"
echo "onnx-doctor (full):  $full   (overhead $(python3 -c "print(f'{$full-$base:.1f}')") ms)"

echo "== compared with pip (median of 5 runs, wall ms)"
pl=$(median_ms 5 "$VENV/bin/python" -m pip list)
pc=$(median_ms 5 "$VENV/bin/python" -m pip check)
fast=$(median_ms 20 "$BIN" --fast --python "$VENV/bin/python")
echo "pip list:  $pl   (pip list / onnx-doctor --fast = $(python3 -c "print(f'{$pl/$fast:.0f}')"))"
echo "pip check: $pc   (onnx-doctor full / pip check = $(python3 -c "print(f'{$full/$pc:.1f}')"); the doctor also imports the stack)"
if "$VENV/bin/python" -c "import torch" 2>/dev/null; then
  ce=$(median_ms 3 "$VENV/bin/python" -m torch.utils.collect_env)
  echo "collect_env: $ce   (onnx-doctor full / collect_env = $(python3 -c "print(f'{$full/$ce:.2f}')"))"
fi

echo "== peak memory of onnx-doctor itself (KiB, max RSS)"
echo "--fast, 1000 distributions: $(peak_kib "$BIN" --fast --python "$WORK/env1000/bin/python")"
echo "full check, healthy venv:   $(peak_kib "$BIN" --python "$VENV/bin/python")"

echo "== diagnose on large pastes (wall s)"
python3 - "$BIN" "$WORK" <<'PY'
import subprocess, sys, time, os
doctor, work = sys.argv[1], sys.argv[2]
root = os.path.join(os.path.dirname(os.path.abspath(doctor)), "..", "..", "tests", "fixtures", "pastes")
src = "".join(open(os.path.join(root, f)).read() for f in sorted(os.listdir(root)))
for mb in (10, 100):
    path = os.path.join(work, f"paste{mb}.txt")
    with open(path, "w") as f:
        f.write((src * (mb * 1024 * 1024 // len(src) + 1))[: mb * 1024 * 1024])
    t = time.perf_counter()
    subprocess.run([doctor, "diagnose", path, "--format", "json", "-o", "/dev/null"])
    print(f"{mb} MB paste: {time.perf_counter() - t:.3f}")
    os.remove(path)
# A long training log: every line distinct, so nothing is skipped as already
# read; the real pastes come at its end.
for mb in (10, 100):
    path = os.path.join(work, f"log{mb}.txt")
    with open(path, "w") as f:
        i, size = 0, 0
        while size < mb * 1024 * 1024:
            line = (f"epoch {i // 1000} step {i} loss {1 / (i + 1):.6f} lr {3e-4 * 0.999 ** (i % 5000):.3e} "
                    f"grad_norm {(i * 7919) % 10007 / 997:.4f} tokens/s {12000 + i % 977} mem {i % 81}.2GiB\n")
            f.write(line)
            size += len(line)
            i += 1
        f.write(src)
    t = time.perf_counter()
    subprocess.run([doctor, "diagnose", path, "--format", "json", "-o", "/dev/null"])
    print(f"{mb} MB log of distinct lines: {time.perf_counter() - t:.3f}")
    os.remove(path)
# The adversary's paste: the tickets' own prose, every line made distinct
# by a counter (nothing is skipped as already read); then prose dense with
# versions, GPU names and non-ASCII characters (emoji, curly quotes).
tickets = os.path.join(root, "..", "tickets")
prose = [l for f in sorted(os.listdir(tickets)) if f.endswith(".txt")
         for l in open(os.path.join(tickets, f)).read().split("\n---\n", 1)[-1].splitlines()]
dense = ["🐛 torch 2.1.0 on RTX 3090, Windows 11, CUDA 12.1 “quoted” onnxruntime-gpu 1.17 ngc 23.10",
         "❓ python 3.10 … nvidia driver 535.54 – tensorrt 8.6 — numpy 1.26 protobuf 3.20 é",
         "Ünïcödé: pytorch 1.12 + cu113 and both onnxruntime and onnxruntime-gpu ✨ value = 1.2"]
for name, src_lines in (("distinct prose lines", prose), ("dense non-ASCII prose", dense)):
    path = os.path.join(work, "prose100.txt")
    with open(path, "w") as f:
        i, size = 0, 0
        while size < 100 * 1024 * 1024:
            line = f"{src_lines[i % len(src_lines)]} {i}\n"
            f.write(line)
            size += len(line.encode())
            i += 1
    t = time.perf_counter()
    subprocess.run([doctor, "diagnose", path, "--format", "json", "-o", "/dev/null"])
    print(f"100 MB {name}: {time.perf_counter() - t:.3f}")
    os.remove(path)
PY

# The model check on ~2 GB models (writes 4 GB to a temporary directory;
# opt in with BIG=1).
if [ "${BIG:-0}" = 1 ]; then
  echo "== model check on 2 GB models (wall s, peak KiB of onnx-doctor)"
  "$VENV/bin/python" bench/make_big_models.py "$WORK/big"
  for m in inline external; do
    read -r secs kib < <(wall_and_peak "$BIN" model "$WORK/big/$m.onnx" --target onnxruntime==1.31.1 -o /dev/null)
    echo "$WORK/big/$m.onnx: $secs s, peak $kib KiB"
  done
  rm -rf "$WORK/big"
fi

echo "== model check of a 10,000-step model (11,001 nodes): needs over every release, kernels, shape operands, TensorRT profile (median ms)"
"$VENV/bin/python" bench/make_wide_model.py "$WORK/wide.onnx"
echo "$(median_ms 5 "$BIN" model "$WORK/wide.onnx" --target onnxruntime==1.24.4 --target tensorrt==10.0.1 -o /dev/null) ms"

echo "== fleet: 10,000 node reports (wall s, peak KiB)"
"$BIN" --format json --python "$VENV/bin/python" --output "$WORK/one.json" || true
python3 - "$BIN" "$WORK" <<'PY'
import json, os, sys
_, work = sys.argv[1:3]
base = json.load(open(os.path.join(work, "one.json")))
d = os.path.join(work, "fleet")
os.makedirs(d, exist_ok=True)
for i in range(10000):
    r = json.loads(json.dumps(base))
    r["snapshot"]["probed_by"] = f"node{i}"
    if i % 97 == 0:
        r["findings"].append({"code": "driver-too-old-for-torch-cuda", "severity": "error"})
    with open(os.path.join(d, f"node{i:05}.json"), "w") as f:
        json.dump(r, f)
PY
read -r secs kib < <(wall_and_peak "$BIN" fleet "$WORK/fleet" --format json -o /dev/null)
echo "10000 reports: $secs s, peak $kib KiB"
