//! Shared test harness: the doctor binary, real virtual environments built
//! from the package registry (cached under `test-venvs` in cargo's target directory), and fake
//! executables.
#![allow(dead_code, clippy::disallowed_methods)]

pub mod cases;
pub mod samples;
pub mod world;

use std::fs::File;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The doctor with a predictable environment: no active venv or conda env,
/// so only `--python` decides what is probed.
pub fn doctor() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::cargo_bin("onnx-doctor").expect("binary built");
    cmd.env_remove("VIRTUAL_ENV").env_remove("CONDA_PREFIX").env_remove("PYTHONPATH").env("NO_COLOR", "1");
    cmd
}

pub fn base_python() -> String {
    std::env::var("ONNX_DOCTOR_TEST_PYTHON").unwrap_or_else(|_| "python3".into())
}

/// `test-venvs` in cargo's target directory, wherever CARGO_TARGET_DIR
/// puts it (cargo sets CARGO_TARGET_TMPDIR to its `tmp` folder).
fn venv_root() -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tmp.parent().unwrap_or(tmp).join("test-venvs")
}

/// A virtual environment with exactly these pip install steps applied, in
/// order (each step is one `pip install` argument list). Built once and
/// reused while the steps stay the same; concurrent tests wait on a lock.
pub fn venv(name: &str, steps: &[&[&str]]) -> PathBuf {
    venv_made(name, &[], steps)
}

/// Like [`venv`], with extra `python -m venv` options (`--without-pip`,
/// `--system-site-packages`).
pub fn venv_made(name: &str, venv_args: &[&str], steps: &[&[&str]]) -> PathBuf {
    cached(name, &format!("{venv_args:?} {steps:?}"), |dir| {
        run(Command::new(base_python()).args(["-m", "venv"]).args(venv_args).arg(dir));
        for step in steps {
            pip(dir, step);
        }
    })
}

/// An environment made by uv (`uv venv`: no pip in it) with these packages.
pub fn uv_venv(name: &str, packages: &[&str]) -> PathBuf {
    let uv = venv("uv-tool", &[&["uv"]]).join("bin/uv");
    cached(name, &format!("uv {packages:?}"), |dir| {
        run(Command::new(&uv).arg("venv").arg("--quiet").arg(dir));
        if !packages.is_empty() {
            run(Command::new(&uv)
                .args(["pip", "install", "--quiet", "--python"])
                .arg(dir.join("bin/python"))
                .args(packages));
        }
    })
}

/// A directory under the test-venv root, built by `make` once per recipe.
fn cached(name: &str, recipe: &str, make: impl FnOnce(&Path)) -> PathBuf {
    let root = venv_root();
    std::fs::create_dir_all(&root).unwrap();
    let lock = File::create(root.join(format!("{name}.lock"))).unwrap();
    // SAFETY: flock on a descriptor we own; released when `lock` drops.
    assert_eq!(unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) }, 0);
    let dir = root.join(name);
    let marker = dir.join(".onnx-doctor-recipe");
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(recipe) {
        return dir;
    }
    let _ = std::fs::remove_dir_all(&dir);
    make(&dir);
    std::fs::write(&marker, recipe).unwrap();
    dir
}

/// A fresh, uncached environment (for tests that change it).
pub fn fresh_venv(dir: &Path, steps: &[&[&str]]) -> PathBuf {
    build_venv(dir, steps);
    dir.to_path_buf()
}

/// A fresh environment that starts as a copy of a cached one, then has
/// these steps applied. The copy is made of hard links, so that gigabytes
/// of CUDA wheels are neither downloaded nor stored twice; the cached one
/// stays as it was, because pip unlinks a file before it writes one and
/// Python writes bytecode to a new file that it renames. A venv finds its
/// prefix from where its `bin/python` is, so the copy is an environment of
/// its own (its scripts' shebangs still name the original: use `-m`).
pub fn fresh_venv_from(cached: &Path, dir: &Path, steps: &[&[&str]]) -> PathBuf {
    run(Command::new("cp").arg("-al").arg(cached).arg(dir));
    for step in steps {
        pip(dir, step);
    }
    dir.to_path_buf()
}

fn build_venv(dir: &Path, steps: &[&[&str]]) {
    run(Command::new(base_python()).args(["-m", "venv"]).arg(dir));
    for step in steps {
        pip(dir, step);
    }
}

pub fn pip(venv: &Path, args: &[&str]) {
    run(Command::new(venv.join("bin/python"))
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
        .args(args)
        .env("PIP_NO_CACHE_DIR", "1"));
}

/// A printed command, run by the shell as a user would paste it. pip keeps
/// no cache of what it downloads: the CUDA wheels would otherwise be stored
/// a second time, on a disk that CI shares with every environment here.
pub fn shell(line: &str) -> std::process::Output {
    Command::new("sh").arg("-c").arg(line).env("PIP_NO_CACHE_DIR", "1").output().expect("sh starts")
}

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("command starts");
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One onnxruntime release (`1.24.4`, or a line: `1.18.*`), for judging
/// models against the real thing. Releases before 1.19 were built against
/// numpy 1 and do not import under 2.
pub fn onnxruntime_venv(release: &str) -> PathBuf {
    let pin = format!("onnxruntime=={release}");
    let minor: u32 = release.split('.').nth(1).and_then(|m| m.parse().ok()).unwrap_or(99);
    let numpy = if minor < 19 { "numpy<2" } else { "numpy" };
    venv(&format!("ort-{}", release.trim_end_matches(".*")), &[&[pin.as_str(), numpy]])
}

/// torch (the torch venv's, not a second copy) with onnx and onnxscript,
/// which its default exporter needs.
pub fn torch_export_venv() -> PathBuf {
    let torch = torch_venv();
    cached("torch-export", "pth to the torch venv; onnx onnxscript", |dir| {
        run(Command::new(base_python()).args(["-m", "venv"]).arg(dir));
        let purelib = |python: &Path| {
            let out = Command::new(python)
                .args(["-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"])
                .output()
                .expect("python runs");
            PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
        };
        let here = purelib(&dir.join("bin/python"));
        let there = purelib(&torch.join("bin/python"));
        std::fs::write(here.join("torch-venv.pth"), format!("{}\n", there.display())).unwrap();
        pip(dir, &["onnx", "onnxscript"]);
    })
}

/// The current onnx stack, as pip resolves it today.
pub fn healthy_venv() -> PathBuf {
    venv("healthy", &[&["onnx", "onnxruntime", "numpy", "protobuf"]])
}

/// onnxruntime 1.17.1 declares no numpy upper bound, so pip happily pairs it
/// with numpy 2, and `pip check` passes; the import fails.
pub fn ort117_numpy2_venv() -> PathBuf {
    venv("ort117-numpy2", &[&["onnxruntime==1.17.1", "numpy>=2"]])
}

/// onnx 1.13.0's generated code needs protobuf 3.20+; 3.19.6 installed
/// without dependency resolution breaks `import onnx`.
pub fn onnx113_protobuf319_venv() -> PathBuf {
    venv(
        "onnx113-protobuf319",
        &[&["--no-deps", "onnx==1.13.0", "protobuf==3.19.6", "numpy<2", "typing_extensions"]],
    )
}

/// Writes an executable script.
pub fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

pub fn json(out: &[u8]) -> serde_json::Value {
    serde_json::from_slice(out)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{}", String::from_utf8_lossy(out)))
}

pub fn finding_codes(report: &serde_json::Value) -> Vec<String> {
    report["findings"].as_array().unwrap().iter().map(|f| f["code"].as_str().unwrap().to_string()).collect()
}

pub fn finding<'a>(report: &'a serde_json::Value, code: &str) -> &'a serde_json::Value {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == code)
        .unwrap_or_else(|| panic!("no finding {code} in {:#}", report["findings"]))
}

/// The first environment's import record of `package`, if the probe made one.
pub fn import<'a>(report: &'a serde_json::Value, package: &str) -> Option<&'a serde_json::Value> {
    report["snapshot"]["pythons"][0]["imports"].as_array()?.iter().find(|i| i["package"] == package)
}

/// Compiles the fake NVML library with these `-D` definitions.
pub fn fake_nvml(dir: &Path, defines: &[&str]) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake_nvml.c");
    let out = dir.join(format!("libnvidia-ml-{}.so.1", dir.read_dir().map(|d| d.count()).unwrap_or(0)));
    let mut cmd = Command::new("cc");
    cmd.args(["-shared", "-fPIC", "-o"]).arg(&out).arg(&src);
    for d in defines {
        cmd.arg(format!("-D{d}"));
    }
    run(&mut cmd);
    out
}

/// Compiles a tiny shared library from C source, with extra gcc arguments
/// (`-L`, `-l`, `-Wl,-rpath,...`, `-Wl,-soname,...`).
pub fn shared_library(out: &Path, source: &str, args: &[&str]) -> PathBuf {
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let src = out.with_extension("c");
    std::fs::write(&src, source).unwrap();
    run(Command::new("cc").args(["-shared", "-fPIC", "-o"]).arg(out).arg(&src).args(args));
    out.to_path_buf()
}

/// A virtual environment on disk with these distributions' metadata
/// (`torch-2.6.0+cu126`), never run: for `--fast` checks.
pub fn metadata_env(dir: &Path, python: &str, dists: &[&str]) -> PathBuf {
    let xy: Vec<&str> = python.split('.').take(2).collect();
    let site = dir.join(format!("lib/python{}/site-packages", xy.join(".")));
    std::fs::create_dir_all(&site).unwrap();
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    std::fs::write(dir.join("bin/python"), "").unwrap();
    std::fs::write(dir.join("pyvenv.cfg"), format!("home = /usr/bin\nversion = {python}\n")).unwrap();
    for d in dists {
        let (name, version) = d.split_once('-').unwrap();
        let info = site.join(format!("{name}-{version}.dist-info"));
        std::fs::create_dir_all(&info).unwrap();
        std::fs::write(info.join("METADATA"), format!("Name: {name}\nVersion: {version}\n\n")).unwrap();
    }
    dir.join("bin/python")
}

/// A venv as Windows lays it out (`Scripts\\python.exe`,
/// `Lib\\site-packages`) with these distributions' metadata, never run:
/// for `--fast` checks by either build. Returns the environment's root.
pub fn windows_metadata_env(dir: &Path, dists: &[&str]) -> PathBuf {
    let site = dir.join("Lib/site-packages");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::create_dir_all(dir.join("Scripts")).unwrap();
    std::fs::write(dir.join("Scripts/python.exe"), b"MZ").unwrap();
    std::fs::write(
        dir.join("pyvenv.cfg"),
        "home = C:\\Users\\me\\AppData\\Local\\Programs\\Python\\Python311\r\nversion = 3.11.9\r\n",
    )
    .unwrap();
    for d in dists {
        let (name, version) = d.split_once('-').unwrap();
        let info = site.join(format!("{name}-{version}.dist-info"));
        std::fs::create_dir_all(&info).unwrap();
        std::fs::write(info.join("METADATA"), format!("Name: {name}\r\nVersion: {version}\r\n\r\n")).unwrap();
    }
    dir.to_path_buf()
}

/// A DLL built with mingw-w64 whose import table names `imports`, each
/// through an import library dlltool writes from a one-line `.def`, so
/// none of them has to exist.
pub fn mingw_dll(out: &Path, imports: &[&str]) -> PathBuf {
    let dir = out.parent().unwrap();
    std::fs::create_dir_all(dir).unwrap();
    let work = tempfile::tempdir().unwrap();
    let mut source = String::new();
    let mut call = String::from("0");
    let mut libs = Vec::new();
    for (i, name) in imports.iter().enumerate() {
        let def = work.path().join(format!("i{i}.def"));
        std::fs::write(&def, format!("LIBRARY {name}\nEXPORTS\nimported_{i}\n")).unwrap();
        run(Command::new("x86_64-w64-mingw32-dlltool")
            .arg("-d")
            .arg(&def)
            .arg("-l")
            .arg(work.path().join(format!("libi{i}.a"))));
        source.push_str(&format!("extern int imported_{i}(void);\n"));
        call.push_str(&format!(" + imported_{i}()"));
        libs.push(format!("-li{i}"));
    }
    source.push_str(&format!("__declspec(dllexport) int entry(void) {{ return {call}; }}\n"));
    let c = work.path().join("dll.c");
    std::fs::write(&c, source).unwrap();
    run(Command::new("x86_64-w64-mingw32-gcc")
        .args(["-shared", "-o"])
        .arg(out)
        .arg(&c)
        .arg(format!("-L{}", work.path().display()))
        .args(&libs));
    out.to_path_buf()
}

/// A mingw-w64 DLL at `out` with a version resource saying `version`
/// (`14.34.31931.0`), as Microsoft's runtime DLLs carry one.
pub fn mingw_versioned_dll(out: &Path, version: &str) -> PathBuf {
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let work = tempfile::tempdir().unwrap();
    let commas = version.replace('.', ",");
    let rc = work.path().join("v.rc");
    std::fs::write(
        &rc,
        format!(
            "1 VERSIONINFO\nFILEVERSION {commas}\nPRODUCTVERSION {commas}\nBEGIN\n  BLOCK \"StringFileInfo\"\n  BEGIN\n    BLOCK \"040904B0\"\n    BEGIN\n      VALUE \"FileVersion\", \"{version}\"\n    END\n  END\nEND\n"
        ),
    )
    .unwrap();
    let res = work.path().join("v.o");
    run(Command::new("x86_64-w64-mingw32-windres").arg(&rc).arg("-o").arg(&res));
    let c = work.path().join("dll.c");
    std::fs::write(&c, "__declspec(dllexport) int imported_0(void) { return 0; }\n").unwrap();
    run(Command::new("x86_64-w64-mingw32-gcc").args(["-shared", "-o"]).arg(out).arg(&c).arg(&res));
    out.to_path_buf()
}

/// Sets the linker version in a PE image's optional header, as the
/// Visual Studio toolset that linked it would have (`(14, 42)`).
pub fn set_linker_version(dll: &Path, (major, minor): (u8, u8)) {
    let mut bytes = std::fs::read(dll).unwrap();
    let pe = u32::from_le_bytes(bytes[0x3c..0x40].try_into().unwrap()) as usize;
    bytes[pe + 24 + 2] = major;
    bytes[pe + 24 + 3] = minor;
    std::fs::write(dll, bytes).unwrap();
}

/// The win_amd64 wheel of `requirement` for CPython 3.11 from the package
/// index (cached in cargo's temporary directory), unpacked into `site` as
/// pip would, less what no probe reads: its DLLs and its METADATA.
pub fn windows_wheel_unpacked(requirement: &str, site: &Path) {
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("windows-wheels")
        .join(requirement.replace(['=', '<', '>'], "_"));
    if !cache.read_dir().is_ok_and(|mut d| d.next().is_some()) {
        run(Command::new(base_python())
            .args([
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--only-binary=:all:",
                "--platform",
                "win_amd64",
            ])
            .args(["--python-version", "3.11", requirement, "-d"])
            .arg(&cache)
            .env("PIP_NO_CACHE_DIR", "1"));
    }
    let wheel = cache.read_dir().unwrap().next().unwrap().unwrap().path();
    let unpack = "import sys, zipfile\n\
                  z = zipfile.ZipFile(sys.argv[1])\n\
                  z.extractall(sys.argv[2], [n for n in z.namelist() if n.endswith(('.dll', 'METADATA'))])\n";
    run(Command::new(base_python()).args(["-c", unpack]).arg(&wheel).arg(site));
}

pub fn site_packages(env_python: &Path) -> PathBuf {
    let env = env_python.parent().unwrap().parent().unwrap();
    std::fs::read_dir(env.join("lib")).unwrap().next().unwrap().unwrap().path().join("site-packages")
}

/// The real onnxruntime-gpu wheel, without its CUDA dependencies (which is
/// exactly how its CUDA provider ends up unable to load).
pub fn onnxruntime_gpu_venv() -> PathBuf {
    venv("onnxruntime-gpu-nodeps", &[&["--no-deps", "onnxruntime-gpu"]])
}

/// The doctor's JSON report on a world's snapshot.
pub fn judge(world: &world::World) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("snapshot.json");
    std::fs::write(&path, world.0.to_string()).unwrap();
    let out = doctor().args(["--format", "json", "--snapshot"]).arg(&path).output().unwrap();
    json(&out.stdout)
}

/// The doctor's JSON report on a paste given on standard input.
pub fn diagnose_text(text: &str) -> serde_json::Value {
    let out = doctor()
        .args(["diagnose", "-", "--format", "json"])
        .write_stdin(text.as_bytes().to_vec())
        .output()
        .unwrap();
    json(&out.stdout)
}

/// `pip install torch` as a new user runs it: the CUDA build from the
/// package registry, with its nvidia-* wheels (several GB, cached).
pub fn torch_venv() -> PathBuf {
    venv("torch", &[&["torch"]])
}
