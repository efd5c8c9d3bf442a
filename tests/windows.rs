//! The Windows build, run under wine: `scripts/release` puts
//! `onnx-doctor-VERSION-x86_64-windows.exe` and its `win_amd64` wheel in
//! `dist/`. Tested where `ONNX_DOCTOR_DIST` names that directory (`.ci/run`
//! builds it and sets it); elsewhere these tests say so and pass.
//!
//! Needs Debian's wine and mingw-w64: the tests build the worlds the
//! Windows probes read with it (a fake `nvml.dll` from the same C source as
//! the Linux fake, Windows programs that hang or spawn children), and a
//! `bcryptprimitives.dll` for the wine prefix: Rust's standard library
//! imports `ProcessPrng` from it, which real Windows has had since 8 and
//! wine 8.0 lacks. Nothing of that stand-in is part of the product.

#![allow(clippy::disallowed_methods)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;
use support::*;

/// The Windows executable in `dist/`, or None (with a note) where this run
/// has no release to test.
fn windows_exe() -> Option<PathBuf> {
    let Some(dist) = std::env::var_os("ONNX_DOCTOR_DIST") else {
        eprintln!("no release to test: run scripts/release and set ONNX_DOCTOR_DIST=dist");
        return None;
    };
    let found: Vec<PathBuf> = std::fs::read_dir(&dist)
        .unwrap_or_else(|e| panic!("{}: {e}", Path::new(&dist).display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().ends_with("-x86_64-windows.exe"))
        .collect();
    assert_eq!(found.len(), 1, "one Windows executable in {}: {found:?}", Path::new(&dist).display());
    found.into_iter().next()
}

/// Compiles C for Windows with mingw-w64.
fn mingw(source: &str, out: &Path, extra: &[&str]) {
    let dir = out.parent().unwrap();
    std::fs::create_dir_all(dir).unwrap();
    let c = dir.join(format!("{}.c", out.file_stem().unwrap().to_string_lossy()));
    std::fs::write(&c, source).unwrap();
    let status = Command::new("x86_64-w64-mingw32-gcc")
        .args(["-O2", "-o"])
        .arg(out)
        .arg(&c)
        .args(extra)
        .status()
        .expect("x86_64-w64-mingw32-gcc runs (Debian: gcc-mingw-w64-x86-64)");
    assert!(status.success(), "mingw could not build {}", out.display());
}

/// The wine prefix the tests share: made once per test binary, with the
/// stand-in `bcryptprimitives.dll` in its system32.
fn prefix() -> &'static Path {
    static PREFIX: OnceLock<PathBuf> = OnceLock::new();
    PREFIX.get_or_init(|| make_prefix("wine-prefix"))
}

/// A wine prefix under cargo's temporary directory, made once (wineboot
/// takes seconds), with the stand-in `bcryptprimitives.dll`.
fn make_prefix(name: &str) -> PathBuf {
    let prefix = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let system32 = prefix.join("drive_c/windows/system32");
    if !system32.join("bcryptprimitives.dll").is_file() {
        let _ = std::fs::remove_dir_all(&prefix);
        let out = wine_command(&prefix).arg("wineboot").arg("--init").output().expect("wine runs");
        assert!(system32.is_dir(), "wineboot made no prefix: {}", String::from_utf8_lossy(&out.stderr));
        mingw(
            "#include <windows.h>\n\
             BOOLEAN WINAPI SystemFunction036(PVOID, ULONG);\n\
             __declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {\n\
             \x20 while (len > 0) {\n\
             \x20   ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;\n\
             \x20   if (!SystemFunction036(data, n)) return FALSE;\n\
             \x20   data += n; len -= n;\n\
             \x20 }\n\
             \x20 return TRUE;\n\
             }\n",
            &system32.join("bcryptprimitives.dll"),
            &["-shared", "-ladvapi32"],
        );
    }
    prefix
}

/// `wine` in `prefix`, quiet, with no Mono or Gecko installer to offer.
fn wine_command(prefix: &Path) -> Command {
    let mut cmd = Command::new("timeout");
    cmd.args(["--kill-after=5", "120", "wine"])
        .env("WINEPREFIX", prefix)
        .env("WINEDEBUG", "-all")
        .env("WINEDLLOVERRIDES", "mscoree=d;mshtml=d")
        .env_remove("VIRTUAL_ENV")
        .env_remove("CONDA_PREFIX")
        .env("NO_COLOR", "1");
    cmd
}

/// A Unix path as the Windows program sees it (wine's Z: drive is `/`).
fn win(path: &Path) -> String {
    format!("Z:{}", path.display()).replace('/', "\\")
}

fn run_windows(exe: &Path, args: &[&str]) -> Output {
    wine_command(prefix()).arg(exe).args(args).output().unwrap()
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    })
}

/// Code and severity of each finding, in order.
fn codes(report: &Value) -> Vec<(String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["code"].as_str().unwrap().to_string(), f["severity"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn the_windows_build_is_a_pe32_plus_that_needs_only_dlls_windows_ships() {
    let Some(exe) = windows_exe() else { return };
    let bytes = std::fs::read(&exe).unwrap();
    let pe = goblin::pe::PE::parse(&bytes).unwrap();
    assert!(pe.is_64, "PE32+");
    assert_eq!(pe.header.coff_header.machine, goblin::pe::header::COFF_MACHINE_X86_64);
    // What every Windows from 8 on has in System32 (bcryptprimitives since 8,
    // the api-ms-win-core sets since 7): no MinGW runtime, no MSVC one.
    let ships =
        ["kernel32.dll", "ntdll.dll", "msvcrt.dll", "userenv.dll", "ws2_32.dll", "bcryptprimitives.dll"];
    for dll in &pe.libraries {
        let dll = dll.to_ascii_lowercase();
        assert!(ships.contains(&dll.as_str()) || dll.starts_with("api-ms-win-core-"), "needs {dll}");
    }
    let wheel =
        exe.with_file_name(format!("onnx_stack_doctor-{}-py3-none-win_amd64.whl", env!("CARGO_PKG_VERSION")));
    assert!(wheel.is_file(), "{} is missing", wheel.display());
    let sums = std::fs::read_to_string(exe.with_file_name("SHA256SUMS")).unwrap();
    for artifact in [&exe, &wheel] {
        let name = artifact.file_name().unwrap().to_string_lossy();
        assert!(sums.lines().any(|l| l.ends_with(&*name)), "SHA256SUMS lacks {name}");
    }
}

#[test]
fn under_wine_it_prints_its_version_and_reads_windows() {
    let Some(exe) = windows_exe() else { return };
    let out = run_windows(&exe, &["--version"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let linux = doctor().arg("--version").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&linux.stdout));

    // A CUDA toolkit as its installer leaves it: its folder named by
    // CUDA_PATH_V12_4.
    let t = tempfile::tempdir().unwrap();
    let cuda = t.path().join("NVIDIA GPU Computing Toolkit/CUDA/v12.4");
    std::fs::create_dir_all(&cuda).unwrap();
    std::fs::write(cuda.join("version.json"), r#"{"cuda": {"name": "CUDA SDK", "version": "12.4.131"}}"#)
        .unwrap();
    let out = wine_command(prefix())
        .env("CUDA_PATH_V12_4", win(&cuda))
        .arg(&exe)
        .args(["--format", "json", "--python", &win(&t.path().join("none"))])
        .output()
        .unwrap();
    let report = json_of(&out);
    let system = &report["snapshot"]["system"]["found"];
    assert!(system["os"]["found"].as_str().unwrap_or_default().starts_with("Windows "), "{system:#}");
    let toolkits = &report["snapshot"]["nvidia"]["found"]["toolkits"];
    assert_eq!(toolkits[0]["version"]["found"], "12.4.131", "{toolkits:#}");
    assert_eq!(toolkits[0]["found_via"], "CUDA_PATH_V12_4", "{toolkits:#}");
}

/// Pasted Windows tickets get the same findings, word for word, from the
/// Windows build as from the Linux one.
#[test]
fn a_pasted_windows_ticket_is_diagnosed_as_the_linux_build_diagnoses_it() {
    let Some(exe) = windows_exe() else { return };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tickets");
    let mut tickets: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "txt")
                && std::fs::read_to_string(p)
                    .is_ok_and(|t| t.contains("WinError") || t.contains("DLL load failed"))
        })
        .collect();
    tickets.sort();
    assert!(tickets.len() >= 3, "{tickets:?}");
    for ticket in tickets.iter().take(6) {
        let windows = json_of(&run_windows(&exe, &["diagnose", "--format", "json", &win(ticket)]));
        let linux = doctor().args(["diagnose", "--format", "json"]).arg(ticket).output().unwrap();
        let linux: Value = serde_json::from_slice(&linux.stdout).unwrap();
        assert!(!codes(&linux).is_empty(), "{}: nothing found", ticket.display());
        assert_eq!(windows["findings"], linux["findings"], "{}", ticket.display());
    }
}

/// A venv as Windows lays it out (`Scripts\python.exe`, `Lib\site-packages`)
/// holding a broken combination: `--fast` judges its packages from the
/// file system, exactly as the Linux build judges the same tree.
#[test]
fn a_windows_venv_is_judged_with_fast_as_the_linux_build_judges_it() {
    let Some(exe) = windows_exe() else { return };
    let t = tempfile::tempdir().unwrap();
    let env = t.path().join("env");
    std::fs::create_dir_all(env.join("Scripts")).unwrap();
    std::fs::write(env.join("Scripts/python.exe"), b"MZ").unwrap();
    std::fs::write(
        env.join("pyvenv.cfg"),
        "home = C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python311\r\n\
         include-system-site-packages = false\r\nversion = 3.11.9\r\n",
    )
    .unwrap();
    for (name, version) in
        [("onnxruntime", "1.17.1"), ("numpy", "2.0.1"), ("onnx", "1.13.0"), ("protobuf", "3.19.6")]
    {
        let info = env.join(format!("Lib/site-packages/{name}-{version}.dist-info"));
        std::fs::create_dir_all(&info).unwrap();
        std::fs::write(
            info.join("METADATA"),
            format!("Metadata-Version: 2.1\r\nName: {name}\r\nVersion: {version}\r\n"),
        )
        .unwrap();
    }
    let nowhere = t.path().join("nvml.dll");
    let windows = run_windows(
        &exe,
        &["--format", "json", "--fast", "--nvml-lib", &win(&nowhere), "--python", &win(&env)],
    );
    let windows = json_of(&windows);
    let linux = doctor()
        .args(["--format", "json", "--fast", "--nvml-lib"])
        .arg(&nowhere)
        .arg("--python")
        .arg(&env)
        .output()
        .unwrap();
    let linux: Value = serde_json::from_slice(&linux.stdout).unwrap();
    let found = codes(&windows);
    assert!(found.iter().any(|(c, _)| c == "onnxruntime-built-against-numpy1"), "{found:?}");
    assert_eq!(found, codes(&linux));
    let python = &windows["snapshot"]["pythons"][0];
    assert_eq!(python["executable"], win(&env.join("Scripts/python.exe")));
    let versions = |python: &Value| -> Vec<(String, String)> {
        python["distributions"]["found"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| (d["name"].as_str().unwrap().into(), d["version"].as_str().unwrap().into()))
            .collect()
    };
    assert_eq!(versions(python).len(), 4);
    assert_eq!(versions(python), versions(&linux["snapshot"]["pythons"][0]));
    assert_eq!(python["distributions"]["found"][0]["location"], win(&env.join("Lib/site-packages")));
}

/// NVML is `nvml.dll` in System32, where the driver puts it, loaded by
/// that full path: one left in the working directory is never loaded.
#[test]
fn nvml_dll_is_loaded_from_system32_and_not_from_the_working_directory() {
    let Some(exe) = windows_exe() else { return };
    let t = tempfile::tempdir().unwrap();
    let source =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake_nvml.c"))
            .unwrap();
    // A prefix of its own: the others stay without a driver.
    let prefix = make_prefix("wine-prefix-nvml");
    let report = |dir: &Path| -> Value {
        let out = wine_command(&prefix)
            .current_dir(dir)
            .arg(&exe)
            .args(["--format", "json", "--python", &win(&t.path().join("none"))])
            .output()
            .unwrap();
        json_of(&out)
    };
    let planted = t.path().join("planted");
    mingw(&source, &planted.join("nvml.dll"), &["-shared", "-DDRIVER=\"999.99\""]);
    let _ = std::fs::remove_file(prefix.join("drive_c/windows/system32/nvml.dll"));
    let nvidia = report(&planted)["snapshot"]["nvidia"]["found"].clone();
    assert!(nvidia["driver"]["found"].is_null(), "the working directory's nvml.dll was loaded: {nvidia:#}");
    assert!(nvidia["nvml"]["detail"].as_str().unwrap_or_default().contains("system32"), "{nvidia:#}");

    mingw(&source, &prefix.join("drive_c/windows/system32/nvml.dll"), &["-shared", "-DGPU_COUNT=1"]);
    let nvidia = report(&planted)["snapshot"]["nvidia"]["found"].clone();
    assert_eq!(nvidia["driver"]["found"]["version"], "570.124.06", "{nvidia:#}");
    assert_eq!(nvidia["gpus"]["found"][0]["name"], "NVIDIA GeForce RTX 5090", "{nvidia:#}");
}

/// An interpreter that hangs, and starts a child that hangs holding its
/// output: the probe gives up at the timeout and ends both (a job object
/// holds the whole tree).
#[test]
fn a_hanging_interpreter_and_its_children_are_ended_at_the_timeout() {
    let Some(exe) = windows_exe() else { return };
    let t = tempfile::tempdir().unwrap();
    let env = t.path().join("env");
    let marker = format!("onnx-doctor-hang-{}", std::process::id());
    mingw(
        &format!(
            "#include <windows.h>\n#include <stdio.h>\n#include <string.h>\n\
             int main(int argc, char **argv) {{\n\
             \x20 if (strcmp(argv[argc - 1], \"{marker}\") != 0) {{\n\
             \x20   char self[MAX_PATH], cmd[MAX_PATH + 64];\n\
             \x20   GetModuleFileNameA(NULL, self, MAX_PATH);\n\
             \x20   snprintf(cmd, sizeof cmd, \"\\\"%s\\\" {marker}\", self);\n\
             \x20   STARTUPINFOA si = {{ sizeof si }}; PROCESS_INFORMATION pi;\n\
             \x20   CreateProcessA(NULL, cmd, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi);\n\
             \x20 }}\n\
             \x20 printf(\"started\\n\"); fflush(stdout);\n\
             \x20 for (;;) Sleep(1000);\n\
             }}\n"
        ),
        &env.join("Scripts/python.exe"),
        &[],
    );
    std::fs::write(env.join("pyvenv.cfg"), "home = C:\\Python311\r\nversion = 3.11.9\r\n").unwrap();
    let with_marker = || -> Vec<String> {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .filter(|c| c.contains(&marker) && !c.contains("timeout"))
            .collect()
    };
    let started = Instant::now();
    // Into a file, not a pipe: a grandchild left holding a pipe would
    // keep this test waiting.
    let report_file = t.path().join("report.json");
    let mut child = wine_command(prefix())
        .arg(&exe)
        .args(["--format", "json", "--timeout", "3", "--python", &win(&env)])
        .stdout(std::fs::File::create(&report_file).unwrap())
        .spawn()
        .unwrap();
    // The grandchild does start: seen while the probe waits.
    let mut seen = false;
    while child.try_wait().unwrap().is_none() && started.elapsed() < Duration::from_secs(60) {
        seen |= !with_marker().is_empty();
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    let took = started.elapsed();
    assert!(seen, "the hanging interpreter's child never ran");
    assert!(took < Duration::from_secs(30), "took {took:?}");
    let report: Value = serde_json::from_slice(&std::fs::read(&report_file).unwrap()).unwrap();
    let python = &report["snapshot"]["pythons"][0];
    assert!(python["interpreter"]["not_evaluated"].is_string(), "{python:#}");
    // ... and is gone once the doctor has answered: no process on this
    // machine has the marker.
    std::thread::sleep(Duration::from_millis(500));
    let left = with_marker();
    if !left.is_empty() {
        let _ = Command::new("pkill").arg("-f").arg(&marker).status();
    }
    assert!(left.is_empty(), "still running: {left:?}");
}

/// A Windows workstation's Pythons: the Store's placeholder `python.exe`
/// on PATH is not judged when the `py` launcher knows a real interpreter,
/// and alone it is named for what it is.
#[test]
fn the_py_launchers_python_is_found_and_the_store_placeholder_is_named() {
    let Some(exe) = windows_exe() else { return };
    let t = tempfile::tempdir().unwrap();
    let store = t.path().join("AppData/Local/Microsoft/WindowsApps");
    mingw(
        "#include <stdio.h>\n\
         int main(void) {\n\
         \x20 fprintf(stderr, \"Python was not found; run without arguments to install from the Microsoft Store, \
         or disable this shortcut from Settings > Manage App Execution Aliases.\\n\");\n\
         \x20 return 9009;\n\
         }\n",
        &store.join("python.exe"),
        &[],
    );
    let real = t.path().join("Python312/python.exe");
    mingw("#include <stdio.h>\nint main(void) { puts(\"not a probe answer\"); return 1; }\n", &real, &[]);
    let launcher = t.path().join("launcher");
    let list =
        format!(" -V:3.12 *        {}\\n -V:3.11          C:\\\\Python311\\\\python.exe\\n", win(&real))
            .replace('\\', "\\\\")
            .replace("\\\\n", "\\n");
    mingw(
        &format!("#include <stdio.h>\nint main(void) {{ printf(\"{list}\"); return 0; }}\n"),
        &launcher.join("py.exe"),
        &[],
    );
    let pythons = |path: String| -> Vec<Value> {
        let out = wine_command(prefix())
            .env("WINEPATH", path)
            .arg(&exe)
            .args(["--format", "json"])
            .output()
            .unwrap();
        json_of(&out)["snapshot"]["pythons"].as_array().unwrap().clone()
    };
    let found = pythons(format!("{};{}", win(&store), win(&launcher)));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0]["source"], "py_launcher");
    assert_eq!(found[0]["executable"], win(&real));
    let found = pythons(win(&store));
    assert_eq!(found.len(), 1, "{found:#?}");
    let why = found[0]["interpreter"]["not_evaluated"].as_str().unwrap();
    assert!(why.contains("Microsoft Store's placeholder"), "{why}");
}

/// Under Windows' own search order: the CUDA provider's cuBLAS DLLs in the
/// environment's nvidia wheel, off the path, want the preload; the same
/// folder on PATH (wine reads WINEPATH) is found, and nothing is said.
#[test]
fn the_providers_dlls_are_found_on_path_as_windows_would_find_them() {
    let Some(exe) = windows_exe() else { return };
    let t = tempfile::tempdir().unwrap();
    let env = windows_metadata_env(
        &t.path().join("env"),
        &["onnxruntime_gpu-1.20.1", "nvidia_cublas_cu12-12.9.2.10"],
    );
    let site = env.join("Lib/site-packages");
    let capi = site.join("onnxruntime/capi");
    mingw_dll(&capi.join("onnxruntime_providers_shared.dll"), &["KERNEL32.dll"]);
    let provider = mingw_dll(
        &capi.join("onnxruntime_providers_cuda.dll"),
        &["cublasLt64_12.dll", "cublas64_12.dll", "onnxruntime_providers_shared.dll", "MSVCP140.dll"],
    );
    set_linker_version(&provider, (14, 44));
    let bin = site.join("nvidia/cublas/bin");
    mingw_dll(&bin.join("cublasLt64_12.dll"), &["KERNEL32.dll"]);
    mingw_dll(&bin.join("cublas64_12.dll"), &["cublasLt64_12.dll"]);
    let nowhere = t.path().join("nvml.dll");
    let args = ["--format", "json", "--fast", "--nvml-lib", &win(&nowhere), "--python", &win(&env)];
    let report = json_of(&run_windows(&exe, &args));
    let found = codes(&report);
    assert!(found.contains(&("onnxruntime-provider-needs-preload".into(), "warning".into())), "{found:?}");
    // The Visual C++ runtime, from the System32 Windows reports (wine's
    // carries no version resource, so only its presence is judged).
    let vc = &report["snapshot"]["nvidia"]["found"]["links"][0]["vc_runtime"];
    assert_eq!(vc["built_with"], "14.44", "{vc:#}");
    let msvcp = vc["dlls"][0]["path"].as_str().unwrap().to_lowercase();
    assert!(msvcp.ends_with("\\system32\\msvcp140.dll"), "{vc:#}");
    assert!(!found.iter().any(|(c, _)| c.starts_with("vc-runtime")), "{found:?}");
    let f = finding(&report, "onnxruntime-provider-needs-preload");
    assert!(
        f["fixes"].to_string().contains(&format!("$env:PATH = '{};'", win(&bin)).replace('\\', "\\\\")),
        "{f:#}"
    );
    let on_path = wine_command(prefix()).env("WINEPATH", win(&bin)).arg(&exe).args(args).output().unwrap();
    let report = json_of(&on_path);
    assert!(
        !codes(&report).iter().any(|(c, _)| c.starts_with("onnxruntime-provider")),
        "{:#}",
        report["findings"]
    );
    let link = &report["snapshot"]["nvidia"]["found"]["links"][0];
    let vias: Vec<(&str, &str)> = link["resolved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["soname"].as_str().unwrap(), r["via"].as_str().unwrap()))
        .collect();
    assert_eq!(
        vias,
        [
            ("cublasLt64_12.dll", "PATH"),
            ("cublas64_12.dll", "PATH"),
            ("onnxruntime_providers_shared.dll", "the library's folder")
        ]
    );
}
