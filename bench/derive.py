#!/usr/bin/env python3
"""Re-derive matrix facts from the released artifacts and diff them against matrix/.

    bash bench/derive.sh [--only ort,torch,pairing,ctranslate2] [--fresh] [--strict]

What it measures, release by release:

ort      onnxruntime-releases: installs each onnxruntime wheel that runs on
         this Python, or else on the newest older CPython installed (pyenv's
         included), into a scratch folder (no dependency but numpy) and,
         with the CPU provider, loads and runs models of rising IR version
         (opset 7) and rising default-domain opset (at the highest IR it
         loaded) whose graph has no node (float[1] in, the same out), so
         that only the loader's own IR and opset checks decide; the highest
         of each is compared with max_ir and max_opset. The same models with
         one Identity node tell where the CPU kernels lag the loader (noted,
         not compared). The Pythons each release ships Linux wheels for
         (from the file names on the package index) are compared with the
         python column, for every release the index has.
torch    torch-releases: reads torch/onnx/_constants.py (or, before 1.12,
         torch/onnx/symbolic_helper.py) out of one wheel of each release with
         HTTP range requests (the zip's central directory and that one
         member, never the whole wheel) and compares the default export
         opset and the highest accepted opset with onnx_opset and
         onnx_max_opset.
symbolics
         torch_onnx_symbolics (matrix/torch-export.yaml): reads every
         torch/onnx/symbolic*.py of one wheel of each torch X.Y.0 from 1.0
         (range requests again) and lists the ATen operators each registers
         at each opset: functions taking the graph `g` and aliases built by a
         call before 1.13, `@_onnx_symbolic("aten::name")` after. A symbolic
         that only refuses (`_onnx_opset_unsupported`) or only writes the
         ATen fallback node counts as no export. Each operator's first
         release and that release's lowest opset are compared with the
         table; `--emit-symbolics` prints the table instead, each row citing
         the file and line at the release's tag.
dlls     library_wheels (matrix/library-wheels.yaml), its Windows rows:
         lists the newest win_amd64 wheel of each nvidia-* CUDA 12 and 13
         package (the zip's central directory only) and compares the DLLs
         it ships, and where, with the rows whose soname is a DLL;
         `--emit-dlls` prints those rows instead.
pairing  torch-releases: the torchvision release whose metadata pins
         torch==V (read out of its wheel the same way; where none pins it,
         the newer ones that declare it compatible) against the torchvision
         column, which must accept them and no torchvision pinned to a torch
         outside the row; the Pythons torch ships Linux wheels for against
         the python column.
ctranslate2
         ctranslate2-builds and ctranslate2-cudnn (matrix/ctranslate2.yaml):
         reads the CTranslate2 library out of each release's Linux x86_64,
         aarch64 and Windows wheels (range requests, that one member) and
         lists the cuBLAS and cuDNN names it opens at run time
         (libcublas.so.12, cudnn64_8.dll: CTranslate2 loads CUDA
         dynamically, so they are strings, not DT_NEEDED entries); their
         majors are compared with the cuda, cudnn and cudnn_windows columns,
         and every aarch64 wheel must name none. faster-whisper-builds: each
         faster-whisper release's Requires-Dist on ctranslate2, and the CUDA
         majors of the CTranslate2 releases it accepts, against the cuda
         column.

The package index is the one pip is configured with (PIP_INDEX_URL, pip's
config, else pip's default), read through the JSON form of the simple API.
Everything fetched is cached under target/derive/ (index pages for a day,
files for good, measurements per release), so a second run is quick.
Every network call and subprocess has a timeout.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
import zlib
from email.parser import Parser
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import parse_wheel_filename
from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).resolve().parent.parent
WORK = ROOT / "target" / "derive"
HTTP_TIMEOUT = 60
INDEX_MAX_AGE = 24 * 3600
# The model levels probed: a release that loads the top one is reported as
# "at least" that, never as a maximum.
IR_RANGE = range(3, 17)
OPSET_RANGE = range(7, 31)
PROBE_VERSION = 2  # bump to invalidate cached measurements


# --------------------------------------------------------------------------
# HTTP, cached


def _cache_path(key: str) -> Path:
    return WORK / "http" / hashlib.sha256(key.encode()).hexdigest()


def http_get(url: str, *, headers: dict | None = None, byte_range: tuple[int, int] | None = None,
             max_age: float | None = None) -> bytes:
    """GET url (or bytes first..last of it); cached, retried, bounded."""
    key = url + (f"#{byte_range[0]}-{byte_range[1]}" if byte_range else "") + json.dumps(headers or {})
    path = _cache_path(key)
    if path.exists() and (max_age is None or time.time() - path.stat().st_mtime < max_age):
        return path.read_bytes()
    hdrs = dict(headers or {})
    hdrs.setdefault("User-Agent", "onnx-doctor-derive")
    if byte_range:
        hdrs["Range"] = f"bytes={byte_range[0]}-{byte_range[1]}"
    err: Exception | None = None
    for attempt in range(3):
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=hdrs), timeout=HTTP_TIMEOUT) as r:
                if byte_range and r.status != 206:
                    raise RuntimeError(f"{url}: server ignored the range request ({r.status})")
                data = r.read()
            break
        except (urllib.error.URLError, TimeoutError, ConnectionError, RuntimeError) as e:
            err = e
            time.sleep(2 * (attempt + 1))
    else:
        raise RuntimeError(f"GET {url} failed: {err}")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    return data


def index_url() -> str:
    """The simple index pip is configured with; pip's default otherwise."""
    url = os.environ.get("PIP_INDEX_URL")
    if not url:
        for key in ("global.index-url", "install.index-url", "download.index-url"):
            try:
                out = subprocess.run([sys.executable, "-m", "pip", "config", "get", key],
                                     capture_output=True, text=True, timeout=60)
            except subprocess.TimeoutExpired:
                continue
            if out.returncode == 0 and out.stdout.strip():
                url = out.stdout.strip()
                break
    if not url:
        from pip._internal.models.index import PyPI  # pip's own default index

        url = PyPI.simple_url
    return url.rstrip("/")


def project_files(name: str) -> list[dict]:
    """The files of a project on the index (PEP 691 JSON)."""
    data = http_get(f"{index_url()}/{name}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"},
                    max_age=INDEX_MAX_AGE)
    return [f for f in json.loads(data)["files"] if not f.get("yanked")]


def final_version(s: str) -> Version | None:
    try:
        v = Version(s)
    except InvalidVersion:
        return None
    return None if (v.is_prerelease or v.is_devrelease or v.local) else v


def wheels_by_version(name: str) -> dict[Version, list[dict]]:
    out: dict[Version, list[dict]] = {}
    for f in project_files(name):
        if not f["filename"].endswith(".whl"):
            continue
        try:
            _, ver, _, tags = parse_wheel_filename(f["filename"])
        except Exception:
            continue
        v = final_version(str(ver))
        if v is not None:
            f["tags"] = tags
            out.setdefault(v, []).append(f)
    return dict(sorted(out.items()))


def cpython_minors(files: list[dict]) -> set[int]:
    """The CPython 3 minors some Linux wheel of a release is built for (the
    doctor runs on Linux, x86_64 or aarch64)."""
    minors = set()
    for f in files:
        for t in f["tags"]:
            m = re.fullmatch(r"cp3(\d+)t?", t.interpreter)
            if not t.platform.startswith(("linux", "manylinux")):
                continue
            if m:
                minors.add(int(m.group(1)))
    return minors


# --------------------------------------------------------------------------
# Reading members out of a remote zip with range requests


class RemoteZip:
    def __init__(self, url: str, size: int | None):
        self.url = url
        if size is None:
            size = self._size()
        self.size = size
        tail_start = max(0, size - 65536)
        tail = http_get(url, byte_range=(tail_start, size - 1))
        at = tail.rfind(b"PK\x05\x06")
        if at < 0:
            raise RuntimeError(f"{url}: no end of central directory")
        (_, _, _, _, _, cd_size, cd_offset, _) = struct.unpack("<4s4H2LH", tail[at:at + 22])
        if cd_offset == 0xFFFFFFFF or cd_size == 0xFFFFFFFF:
            loc = tail[at - 20:at]
            if loc[:4] != b"PK\x06\x07":
                raise RuntimeError(f"{url}: zip64 locator missing")
            (z64_off,) = struct.unpack("<Q", loc[8:16])
            rec = http_get(url, byte_range=(z64_off, z64_off + 55))
            cd_size, cd_offset = struct.unpack("<QQ", rec[40:56])
        if cd_offset >= tail_start:
            cd = tail[cd_offset - tail_start:cd_offset - tail_start + cd_size]
        else:
            cd = http_get(url, byte_range=(cd_offset, cd_offset + cd_size - 1))
        self.entries: dict[str, tuple[int, int, int]] = {}
        pos = 0
        while pos + 46 <= len(cd) and cd[pos:pos + 4] == b"PK\x01\x02":
            (method, csize, usize, nlen, xlen, clen, offset) = (
                struct.unpack("<H", cd[pos + 10:pos + 12])[0],
                *struct.unpack("<2L", cd[pos + 20:pos + 28]),
                *struct.unpack("<3H", cd[pos + 28:pos + 34]),
                struct.unpack("<L", cd[pos + 42:pos + 46])[0],
            )
            name = cd[pos + 46:pos + 46 + nlen].decode("utf-8", "replace")
            extra = cd[pos + 46 + nlen:pos + 46 + nlen + xlen]
            if 0xFFFFFFFF in (csize, usize, offset):
                csize, usize, offset = self._zip64(extra, csize, usize, offset)
            self.entries[name] = (method, csize, offset)
            pos += 46 + nlen + xlen + clen

    def _size(self) -> int:
        req = urllib.request.Request(self.url, method="HEAD", headers={"User-Agent": "onnx-doctor-derive"})
        with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT) as r:
            return int(r.headers["Content-Length"])

    @staticmethod
    def _zip64(extra: bytes, csize: int, usize: int, offset: int) -> tuple[int, int, int]:
        p = 0
        while p + 4 <= len(extra):
            hid, hlen = struct.unpack("<2H", extra[p:p + 4])
            if hid == 1:
                body, q = extra[p + 4:p + 4 + hlen], 0
                if usize == 0xFFFFFFFF:
                    usize, q = struct.unpack("<Q", body[q:q + 8])[0], q + 8
                if csize == 0xFFFFFFFF:
                    csize, q = struct.unpack("<Q", body[q:q + 8])[0], q + 8
                if offset == 0xFFFFFFFF:
                    offset = struct.unpack("<Q", body[q:q + 8])[0]
            p += 4 + hlen
        return csize, usize, offset

    def names(self) -> list[str]:
        return list(self.entries)

    def read(self, name: str) -> bytes:
        method, csize, offset = self.entries[name]
        head = http_get(self.url, byte_range=(offset, offset + 29))
        nlen, xlen = struct.unpack("<2H", head[26:30])
        start = offset + 30 + nlen + xlen
        data = http_get(self.url, byte_range=(start, start + csize - 1)) if csize else b""
        if method == 0:
            return data
        if method == 8:
            return zlib.decompressobj(-15).decompress(data)
        raise RuntimeError(f"{self.url}:{name}: compression method {method}")


def smallest(files: list[dict]) -> dict:
    return min(files, key=lambda f: f.get("size") or 1 << 62)


# --------------------------------------------------------------------------
# The matrix


def load_tables() -> dict[str, dict]:
    tables: dict[str, dict] = {}
    for path in sorted((ROOT / "matrix").glob("*.yaml")):
        doc = yaml.safe_load(path.read_text()) or {}
        for name, table in (doc.get("tables") or {}).items():
            table["file"] = path.relative_to(ROOT).as_posix()
            tables[name] = table
    return tables


def row_for(table: dict, version: Version) -> dict | None:
    for row in table["rows"]:
        if SpecifierSet(row["versions"]).contains(version, prereleases=True):
            return row
    return None


def minors_of(spec: str) -> set[int]:
    s = SpecifierSet(spec)
    return {m for m in range(0, 21) if s.contains(f"3.{m}")}


def compare_pythons(report, table, package, wheels):
    """The Pythons each release ships a wheel for against the row's `python` column."""
    report.section(f"{package}-releases ({table['file']}): Pythons with a {package} wheel on the index")
    for v, files in wheels.items():
        row = row_for(table, v)
        if row is None:
            continue
        got = cpython_minors(files)
        report.compare(f"{package} python", f"{package} {v}", minors_text(got), row["python"],
                       got == minors_of(row["python"]))


def minors_text(minors: set[int]) -> str:
    if not minors:
        return "none"
    lo, hi = min(minors), max(minors)
    text = f">=3.{lo},<3.{hi + 1}"
    gaps = sorted(set(range(lo, hi + 1)) - minors)
    return text + (f" (none for {', '.join(f'3.{g}' for g in gaps)})" if gaps else "")


# --------------------------------------------------------------------------
# Results


class Report:
    def __init__(self, out=None):
        self.out = out or sys.stdout
        self.checks: dict[str, dict[str, int]] = {}
        self.lines: list[str] = []
        self.differences: list[dict] = []

    def section(self, title: str):
        self.lines.append("")
        self.lines.append(f"== {title}")
        print(self.lines[-1], file=self.out, flush=True)

    def note(self, text: str):
        self.lines.append(f"   {text}")
        print(self.lines[-1], file=self.out, flush=True)

    def compare(self, fact: str, subject: str, derived, stated, agree: bool, detail: str = ""):
        c = self.checks.setdefault(fact, {"checked": 0, "agree": 0, "differ": 0})
        c["checked"] += 1
        c["agree" if agree else "differ"] += 1
        if not agree:
            self.differences.append({"fact": fact, "subject": subject, "derived": derived,
                                     "matrix": stated, "detail": detail})
        mark = "ok  " if agree else "DIFF"
        line = f"{mark} {fact:<28} {subject:<22} derived {derived!s:<24} matrix {stated}"
        if detail:
            line += f"  ({detail})"
        self.lines.append(line)
        print(line, file=self.out, flush=True)


# --------------------------------------------------------------------------
# 1. onnxruntime: what each wheel loads

PROBE = r"""
import json, sys, os
import numpy as np
import onnxruntime as ort
models = sys.argv[1]
try:
    ort.set_default_logger_severity(4)
except Exception:
    pass
def loads(path):
    try:
        so = ort.SessionOptions()
        try:
            so.log_severity_level = 4
        except Exception:
            pass
        try:
            s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        except TypeError:  # 1.0 takes no providers: the CPU one is its default
            s = ort.InferenceSession(path, so)
        out = s.run(None, {"x": np.array([3.0], dtype=np.float32)})[0]
        return (out.tolist() == [3.0]), ""
    except Exception as e:
        return False, str(e).splitlines()[0][:240] if str(e) else type(e).__name__
res = {"version": ort.__version__, "ir": {}, "opset": {}, "identity": {}, "bare": "bare_"}
for ir in range(%(ir_lo)d, %(ir_hi)d):
    res["ir"][ir] = loads(os.path.join(models, "bare_ir%%d_op7.onnx" %% ir))
if not any(ok for ok, _ in res["ir"].values()):  # a loader that wants a node
    res["bare"] = ""
    for ir in range(%(ir_lo)d, %(ir_hi)d):
        res["ir"][ir] = loads(os.path.join(models, "ir%%d_op7.onnx" %% ir))
max_ir = max([ir for ir, (ok, _) in res["ir"].items() if ok], default=None)
res["max_ir"] = max_ir
if max_ir is not None:
    for op in range(%(op_lo)d, %(op_hi)d):
        res["opset"][op] = loads(os.path.join(models, "%%sir%%d_op%%d.onnx" %% (res["bare"], max_ir, op)))
        res["identity"][op] = loads(os.path.join(models, "ir%%d_op%%d.onnx" %% (max_ir, op)))
res["max_opset"] = max([op for op, (ok, _) in res["opset"].items() if ok], default=None)
res["max_identity_opset"] = max([op for op, (ok, _) in res["identity"].items() if ok], default=None)
print(json.dumps(res))
"""


def build_models() -> Path:
    import onnx
    from onnx import TensorProto, helper

    out = WORK / "models"
    stamp = out / f".built-{onnx.__version__}-{PROBE_VERSION}"
    if stamp.exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    for ir in IR_RANGE:
        for op in OPSET_RANGE:
            x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
            y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
            graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g", [x], [y])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", op)])
            model.ir_version = ir  # set after make_model, which would stamp its own
            (out / f"ir{ir}_op{op}.onnx").write_bytes(model.SerializeToString())
            # No node: what the loader accepts, whatever kernels it has.
            bare = helper.make_model(helper.make_graph([], "g", [x], [helper.make_tensor_value_info(
                "x", TensorProto.FLOAT, [1])]), opset_imports=[helper.make_opsetid("", op)])
            bare.ir_version = ir
            (out / f"bare_ir{ir}_op{op}.onnx").write_bytes(bare.SerializeToString())
    stamp.touch()
    return out


# The newest numpy 1.x with wheels for each older CPython minor.
NUMPY_FOR = {6: "1.19.5", 7: "1.21.6", 8: "1.24.4", 9: "1.26.4", 10: "1.26.4"}


def older_pythons() -> dict[int, Path]:
    """CPython 3 minors older than this one that are installed (on PATH or
    under pyenv), for the onnxruntime releases with no wheel for this one."""
    found: dict[int, Path] = {}
    roots = [Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"]
    for m in NUMPY_FOR:
        if m >= sys.version_info.minor:
            continue
        cands = [Path(p) for p in [shutil.which(f"python3.{m}")] if p and "shims" not in p]
        for r in roots:
            cands += sorted(r.glob(f"3.{m}.*/bin/python3.{m}"))
        for c in cands:
            try:
                out = subprocess.run([str(c), "-c", "import sys; print(sys.version_info[1])"],
                                     capture_output=True, text=True, timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                continue
            if out.returncode == 0 and out.stdout.strip() == str(m):
                found[m] = c
                break
    return found


def older_env(minor: int, python: Path) -> Path | None:
    """A scratch environment with numpy for an older Python, made once."""
    env = WORK / f"venv-py3{minor}"
    if (env / ".ready").exists():
        return env
    try:
        subprocess.run([str(python), "-m", "venv", "--clear", str(env)], check=True, timeout=180,
                       capture_output=True)
        subprocess.run([str(env / "bin" / "python"), "-m", "pip", "install", "--quiet",
                        "--disable-pip-version-check", f"numpy=={NUMPY_FOR[minor]}"],
                       check=True, timeout=600, capture_output=True)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as e:
        print(f"   no environment for Python 3.{minor}: {e}", flush=True)
        return None
    (env / ".ready").touch()
    return env


def numpy_env_for(wheel: Path) -> Path:
    """The scratch environment whose numpy the wheel's metadata accepts."""
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        msg = Parser().parsestr(z.read(meta).decode())
    spec = SpecifierSet()
    for req in msg.get_all("Requires-Dist") or []:
        r = Requirement(req)
        if r.name == "numpy" and not r.marker:
            spec = r.specifier
    old = WORK / "venv-numpy1"
    if spec.contains("1.26.4") and (old / "bin" / "python").exists():
        return old
    return WORK / "venv"


def derive_onnxruntime(report: Report, tables: dict, fresh: bool):
    table = tables["onnxruntime-releases"]
    report.section(f"onnxruntime-releases ({table['file']}): IR and opset loaded with the CPU provider")
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    older = older_pythons()
    wheels = wheels_by_version("onnxruntime")
    models = build_models()
    results_dir = WORK / "ort-results"
    results_dir.mkdir(parents=True, exist_ok=True)
    for v, files in wheels.items():
        row = row_for(table, v)
        if row is None:
            continue
        def linux_wheels(tag: str) -> list[dict]:
            return [f for f in files if any(t.interpreter == tag and "linux" in t.platform and
                                            t.platform.endswith("x86_64") for t in f["tags"])]

        here, env = linux_wheels(tag), None
        if not here:  # the newest older Python installed that it has a wheel for
            for m in sorted(older, reverse=True):
                if linux_wheels(f"cp3{m}"):
                    here, env = linux_wheels(f"cp3{m}"), (m, older[m])
                    break
        if not here:
            report.note(f"onnxruntime {v}: no Linux x86_64 wheel for an installed Python; not measured")
            continue
        cached = results_dir / f"{v}.json"
        res = None
        if cached.exists() and not fresh:
            res = json.loads(cached.read_text())
            if res.get("probe") != PROBE_VERSION:
                res = None
        if res is None:
            python = None
            if env is not None:
                venv = older_env(*env)
                if venv is None:
                    report.note(f"onnxruntime {v}: no Python 3.{env[0]} environment; not measured")
                    continue
                python = venv / "bin" / "python"
            res = probe_onnxruntime(v, smallest(here), models, python)
            res["probe"] = PROBE_VERSION
            cached.write_text(json.dumps(res, indent=1))
        if "error" in res:
            report.note(f"onnxruntime {v}: not measured: {res['error']}")
            continue
        # The node-less model shows the loader's own checks. Before 1.5 the
        # loader checked no opset (and 1.0-1.1 no IR version either): then
        # the Identity model tells where the operator registry stops.
        if res["max_opset"] == OPSET_RANGE[-1] and res["max_identity_opset"] != OPSET_RANGE[-1]:
            report.note(f"onnxruntime {v}: its loader checks no opset; the opset is where its "
                        f"operator registry stops (Identity model)")
            res["max_opset"], res["opset"] = res["max_identity_opset"], res["identity"]
        for fact, col, rng in (("max_ir", "max_ir", IR_RANGE), ("max_opset", "max_opset", OPSET_RANGE)):
            got = res[fact]
            if got == rng[-1]:
                report.note(f"onnxruntime {v}: loads {col} {got}, the highest probed: it checks none, "
                            f"so {col} {row[col]} cannot be measured (not compared)")
                continue
            first_fail = next((f"{k}: {msg}" for k, (ok, msg) in res["ir" if col == "max_ir" else "opset"].items()
                               if not ok and int(k) > (got or 0)), "")
            report.compare(f"onnxruntime {col}", f"onnxruntime {v}", got, row[col],
                           str(got) == str(row[col]), "" if str(got) == str(row[col]) else f"first refused {first_fail}")
        if res["max_identity_opset"] not in (res["max_opset"], OPSET_RANGE[-1]):
            op = (res["max_identity_opset"] or 0) + 1
            report.note(f"onnxruntime {v} loads opset {res['max_opset']} but its CPU provider runs Identity only up to "
                        f"opset {res['max_identity_opset']}: {res['identity'][str(op)][1]}")

    compare_pythons(report, table, "onnxruntime", wheels)


def probe_onnxruntime(v: Version, wheel_file: dict, models: Path, python: Path | None) -> dict:
    wheels_dir = WORK / "wheels"
    wheels_dir.mkdir(parents=True, exist_ok=True)
    wheel = wheels_dir / wheel_file["filename"]
    print(f"   measuring onnxruntime {v} ({wheel_file['filename']})", flush=True)
    try:
        if not wheel.exists():
            data = http_get_uncached(wheel_file["url"])
            want = (wheel_file.get("hashes") or {}).get("sha256")
            if want and hashlib.sha256(data).hexdigest() != want:
                return {"error": "sha256 mismatch"}
            wheel.write_bytes(data)
        site = WORK / "ort-site" / str(v)
        shutil.rmtree(site, ignore_errors=True)
        site.mkdir(parents=True)
        with zipfile.ZipFile(wheel) as z:
            z.extractall(site)
        python = python or numpy_env_for(wheel) / "bin" / "python"
        code = PROBE % {"ir_lo": IR_RANGE[0], "ir_hi": IR_RANGE[-1] + 1,
                        "op_lo": OPSET_RANGE[0], "op_hi": OPSET_RANGE[-1] + 1}
        proc = subprocess.run([str(python), "-c", code, str(models)],
                              capture_output=True, text=True, timeout=300,
                              env={**os.environ, "PYTHONPATH": str(site), "OMP_NUM_THREADS": "1"},
                              cwd=WORK)
        if proc.returncode != 0:
            return {"error": (proc.stderr.strip().splitlines() or ["exit %d" % proc.returncode])[-1][:300]}
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        if res["version"] != str(v):
            return {"error": f"imported onnxruntime {res['version']}, not {v}"}
        return res
    except subprocess.TimeoutExpired:
        return {"error": "timed out"}
    finally:
        shutil.rmtree(WORK / "ort-site" / str(v), ignore_errors=True)
        wheel.unlink(missing_ok=True)


def http_get_uncached(url: str) -> bytes:
    req = urllib.request.Request(url, headers={"User-Agent": "onnx-doctor-derive"})
    with urllib.request.urlopen(req, timeout=HTTP_TIMEOUT) as r:
        return r.read()


# --------------------------------------------------------------------------
# 2. torch: the export opsets inside each wheel


def torch_opsets(z: RemoteZip) -> dict:
    """Default and highest export opset, from the sources inside the wheel."""
    out: dict = {}
    names = set(z.names())

    def num(text: str, *keys: str) -> int | None:
        for k in keys:
            m = re.search(rf"^{k}\s*(?::\s*\w+\s*)?=\s*(\d+)\s*$", text, re.M)
            if m:
                return int(m.group(1))
        return None

    if "torch/onnx/_constants.py" in names:
        text = z.read("torch/onnx/_constants.py").decode()
        out["source"] = "torch/onnx/_constants.py"
        out["default"] = num(text, "ONNX_DEFAULT_OPSET", "onnx_default_opset")
        out["max"] = num(text, "ONNX_MAX_OPSET", "onnx_main_opset")
        ts_max = num(text, "ONNX_TORCHSCRIPT_EXPORTER_MAX_OPSET")
        if ts_max is not None:
            out["torchscript_max"] = ts_max
    else:
        text = z.read("torch/onnx/symbolic_helper.py").decode()
        out["source"] = "torch/onnx/symbolic_helper.py"
        out["default"] = num(text, "_default_onnx_opset_version")
        main = num(text, "_onnx_main_opset")
        m = re.search(r"^_onnx_stable_opsets\s*=\s*\[([\d,\s]*)\]", text, re.M)
        stable = [int(x) for x in re.findall(r"\d+", m.group(1))] if m else []
        out["max"] = max([x for x in [main, *stable] if x is not None], default=None)
    exp = "torch/onnx/_internal/exporter/_constants.py"
    if exp in names:
        text = z.read(exp).decode()
        out["torchlib_opset"] = num(text, "TORCHLIB_OPSET")
        out["exporter_ir"] = num(text, "ONNX_IR_VERSION")
    return out


def read_wheel_cached(cache_dir: Path, v: Version, files: list[dict], read, fresh: bool, report) -> dict | None:
    """`read(RemoteZip)` of the smallest wheel of release `v`, cached as
    cache_dir/V.json; None (and a note) when the wheel cannot be read."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    cached = cache_dir / f"{v}.json"
    if cached.exists() and not fresh:
        return json.loads(cached.read_text())
    f = smallest(files)
    try:
        got = read(RemoteZip(f["url"], f.get("size")))
    except Exception as e:  # noqa: BLE001 - reported, the run goes on
        report.note(f"torch {v}: {f['filename']} not read: {e}")
        return None
    got["wheel"] = f["filename"]
    cached.write_text(json.dumps(got, indent=1))
    return got


def derive_torch(report: Report, tables: dict, fresh: bool):
    table = tables["torch-releases"]
    report.section(f"torch-releases ({table['file']}): export opsets in each wheel's torch/onnx")
    wheels = wheels_by_version("torch")
    cache_dir = WORK / "torch-results"
    for v, files in wheels.items():
        row = row_for(table, v)
        if row is None:
            continue
        got = read_wheel_cached(cache_dir, v, files, torch_opsets, fresh, report)
        if got is None:
            continue
        extra = ", ".join(f"{k} {got[k]}" for k in ("torchscript_max", "torchlib_opset", "exporter_ir") if k in got)
        report.compare("torch onnx_opset", f"torch {v}", got["default"], row["onnx_opset"],
                       str(got["default"]) == str(row["onnx_opset"]), extra if str(got["default"]) != str(row["onnx_opset"]) else "")
        report.compare("torch onnx_max_opset", f"torch {v}", got["max"], row["onnx_max_opset"],
                       str(got["max"]) == str(row["onnx_max_opset"]), extra if str(got["max"]) != str(row["onnx_max_opset"]) else "")


# --------------------------------------------------------------------------
# 2b. torch: which ATen operators each release's TorchScript exporter maps

SYMBOLIC_VERSION = 1  # bump to invalidate cached readings
REFUSES = ("_onnx_opset_unsupported(", "_onnx_unsupported(")


def symbolic_file_opset(name: str) -> int | None:
    m = re.search(r"symbolic_opset(\d+)\.py$", name)
    if m:
        return int(m.group(1))
    # torch 1.0 and 1.1 kept every symbolic in one file, for opset 9.
    return 9 if name == "torch/onnx/symbolic.py" else None


def exports_nothing(text: str, node) -> bool:
    """Whether a symbolic only refuses or only writes the ATen fallback node."""
    src = ast.get_source_segment(text, node) or ""
    ops = re.findall(r"g\.op\(\s*[\"'](\w+)", src)
    real = [o for o in ops if o != "ATen"]
    if ops and not real:
        return True
    if "g.at(" in src and not ops:
        return True
    return any(c in src for c in REFUSES) and not real


def registered_symbolics(text: str) -> dict[str, tuple[int, bool]]:
    """{operator: (line, exports nothing)} of one symbolic file."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return {}
    lines = text.splitlines()
    decorated = "onnx_symbolic(" in text
    out: dict[str, tuple[int, bool]] = {}
    for node in tree.body:
        first = min([d.lineno for d in getattr(node, "decorator_list", [])] + [node.lineno])
        nothing = isinstance(node, ast.FunctionDef) and exports_nothing(text, node)
        if decorated:
            seg = "\n".join(lines[first - 1:node.end_lineno])
            for m in re.finditer(r"onnx_symbolic\(\s*[\"']aten::(\w+)[\"']", seg):
                out.setdefault(m.group(1), (first, nothing))
            continue
        if isinstance(node, ast.FunctionDef):
            # A symbolic takes the graph first; the rest are helpers.
            if not node.args.args or node.args.args[0].arg != "g":
                continue
            names = [node.name]
        elif isinstance(node, ast.Assign) and isinstance(node.value, (ast.Call, ast.Name)):
            # avg_pool1d = _avg_pool("avg_pool1d", ...), or an alias
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        else:
            continue
        for n in names:
            private = n.startswith("_") and not n.startswith("__")
            if (not re.fullmatch(r"[a-z_][a-z0-9_]*", n) or n.startswith("prim_")
                    or (n.startswith("__") and n.endswith("__"))
                    or (private and not isinstance(node, ast.FunctionDef))):
                continue
            out.setdefault(n, (first, nothing))
    return out


def release_symbolics(z: "RemoteZip") -> dict:
    """{"version": SYMBOLIC_VERSION, "ops": {operator: [[opset, file,
    line, exports nothing], ...]}} of one wheel."""
    per: dict[str, list] = {}
    for name in sorted(z.names()):
        opset = symbolic_file_opset(name) if name.startswith("torch/onnx/") else None
        if opset is None:
            continue
        for op, (line, nothing) in registered_symbolics(z.read(name).decode()).items():
            per.setdefault(op, []).append([opset, name, line, nothing])
    return {"version": SYMBOLIC_VERSION, "ops": per}


def symbolic_history(fresh: bool, report: "Report") -> dict[str, dict]:
    """Each operator's first release that really exports it, and that
    release's lowest opset, with the file and line at the release's tag."""
    cache_dir = WORK / "torch-symbolics"
    readings: dict[Version, dict] = {}
    for v, files in wheels_by_version("torch").items():
        if v.micro != 0 or v < Version("1.0"):
            continue
        got = read_wheel_cached(cache_dir, v, files, release_symbolics, fresh, report)
        if got is not None and got.get("version") != SYMBOLIC_VERSION:
            got = read_wheel_cached(cache_dir, v, files, release_symbolics, True, report)
        if got is not None:
            readings[v] = got["ops"]
    # Underscore names were registered like any other before 1.13, helpers
    # among them: an underscore operator counts when a decorated release
    # names it as aten::_name.
    decorated = {op for v, ops in readings.items() if v >= Version("1.13") for op in ops}
    history: dict[str, dict] = {}
    for v, ops in readings.items():
        for op, entries in ops.items():
            if op in history or (op.startswith("_") and not op.startswith("__") and op not in decorated):
                continue
            real = [e for e in entries if not e[3]]
            if real:
                opset, name, line, _ = min(real, key=lambda e: e[0])
                history[op] = {"torch": f"{v.major}.{v.minor}", "opset": opset,
                               "source": f"https://github.com/pytorch/pytorch/blob/v{v}/{name}#L{line}"}
    report.note(f"{len(readings)} releases read ({min(readings)} to {max(readings)}), "
                f"{len(history)} operators exported by some release")
    return history


def derive_symbolics(report: Report, tables: dict, fresh: bool, emit: bool = False):
    report.section("torch_onnx_symbolics (matrix/torch-export.yaml): the first torch and opset that export each operator")
    history = symbolic_history(fresh, report)
    if emit:
        for op in sorted(history, key=lambda o: (Version(history[o]["torch"]), o)):
            h = history[op]
            print(f'  {op}: {{ opset: "{h["opset"]}", torch: "{h["torch"]}", source: {h["source"]} }}')
        return
    doc = yaml.safe_load((ROOT / "matrix" / "torch-export.yaml").read_text())
    stated = doc.get("torch_onnx_symbolics") or {}
    for op, row in stated.items():
        got = history.get(op)
        derived = f'torch {got["torch"]} opset {got["opset"]}' if got else "never exported"
        report.compare("torch symbolic", op, derived, f'torch {row["torch"]} opset {row["opset"]}',
                       bool(got) and got["torch"] == str(row["torch"]) and str(got["opset"]) == str(row["opset"]))
    missing = sorted(set(history) - set(stated))
    if missing:
        report.note(f"{len(missing)} operators some release exports are not in the table: {', '.join(missing[:20])}")


# --------------------------------------------------------------------------
# 2c. Windows: which nvidia-* wheel ships each DLL, and where

# CUDA 12 wheels carry a -cu12 suffix; CUDA 13 toolkit wheels carry none
# (their own 13.x, 12.x or 10.x line), cuDNN keeps -cu13.
DLL_PACKAGES = {
    "12": ["nvidia-cublas-cu12", "nvidia-cuda-cupti-cu12", "nvidia-cuda-nvrtc-cu12", "nvidia-cuda-runtime-cu12",
           "nvidia-cudnn-cu12", "nvidia-cufft-cu12", "nvidia-curand-cu12", "nvidia-cusolver-cu12",
           "nvidia-cusparse-cu12", "nvidia-nvjitlink-cu12", "nvidia-cusparselt-cu12"],
    "13": ["nvidia-cublas", "nvidia-cuda-cupti", "nvidia-cuda-nvrtc", "nvidia-cuda-runtime", "nvidia-cudnn-cu13",
           "nvidia-cufft", "nvidia-curand", "nvidia-cusolver", "nvidia-cusparse", "nvidia-nvjitlink"],
}


def windows_dlls(report: Report) -> list[dict]:
    """One row per DLL the newest Windows wheel of each package ships."""
    rows = []
    for cuda, packages in DLL_PACKAGES.items():
        for package in packages:
            wheels = [(v, f) for v, fs in wheels_by_version(package).items() for f in fs
                      if "win_amd64" in f["filename"] and (cuda != "13" or package.endswith("-cu13") or v.major >= 10)]
            if not wheels:
                report.note(f"{package}: no Windows wheel")
                continue
            v, f = wheels[-1]
            try:
                names = RemoteZip(f["url"], f.get("size")).names()
            except Exception as e:  # noqa: BLE001 - reported, the run goes on
                report.note(f"{package} {v}: not listed: {e}")
                continue
            for name in sorted(n for n in names if n.lower().endswith(".dll")):
                folder, _, dll = name.rpartition("/")
                rows.append({"soname": dll, "cuda": cuda, "package": package, "dir": folder, "wheel": f["filename"]})
    return rows


def derive_dlls(report: Report, tables: dict, fresh: bool, emit: bool = False):
    report.section("library_wheels (matrix/library-wheels.yaml): the DLLs each Windows wheel ships")
    rows = windows_dlls(report)
    if emit:
        for r in rows:
            print(f'    - soname: {r["soname"]}\n      cuda: "{r["cuda"]}"\n      package: {r["package"]}\n      dir: {r["dir"]}')
        return
    doc = yaml.safe_load((ROOT / "matrix" / "library-wheels.yaml").read_text())
    stated = {(w["soname"], str(w["cuda"])): w for w in doc["library_wheels"]["wheels"] if w["soname"].endswith(".dll")}
    derived = {(r["soname"], r["cuda"]): r for r in rows}
    for key in sorted(set(stated) | set(derived)):
        got, row = derived.get(key), stated.get(key)
        report.compare("windows dll", f"{key[0]} (CUDA {key[1]})",
                       f'{got["package"]} {got["dir"]}' if got else "in no wheel",
                       f'{row["package"]} {row["dir"]}' if row else "no row",
                       bool(got and row) and got["package"] == row["package"] and got["dir"] == row["dir"])


# --------------------------------------------------------------------------
# 3. torchvision pairing and torch's Pythons


def torchvision_requirements(fresh: bool) -> dict[Version, SpecifierSet | None]:
    """torchvision release -> its Requires-Dist on torch (None: none declared)."""
    cache = WORK / "torchvision-requires.json"
    known: dict[str, str | None] = {}
    if cache.exists() and not fresh:
        known = json.loads(cache.read_text())
    out: dict[Version, SpecifierSet | None] = {}
    for v, files in wheels_by_version("torchvision").items():
        if str(v) not in known:
            # Some platforms' wheels declare a bare "torch"; the Linux x86_64
            # wheel, read first, carries the pin where there is one.
            linux_first = sorted(files, key=lambda f: (not f["filename"].endswith("x86_64.whl") or
                                                      "linux" not in f["filename"], f.get("size") or 0))
            spec = None
            for f in linux_first[:3]:
                z = RemoteZip(f["url"], f.get("size"))
                meta = next(n for n in z.names() if n.endswith(".dist-info/METADATA"))
                msg = Parser().parsestr(z.read(meta).decode("utf-8", "replace"))
                for req in msg.get_all("Requires-Dist") or []:
                    r = Requirement(req)
                    if r.name == "torch" and not (r.marker and "extra" in str(r.marker)):
                        spec = str(r.specifier)
                if spec:
                    break
            known[str(v)] = spec
            cache.write_text(json.dumps(known, indent=1))
        s = known[str(v)]
        # a bare "torch" (or none) says nothing about the pairing
        out[v] = SpecifierSet(s) if s else None
    return out


def torchvision_stable_abi(v: Version, fresh: bool) -> bool:
    """Whether torchvision v's compiled extensions link LibTorch only through
    its stable C ABI: torchvision names such builds *_stable.so, and where
    nm is at hand their undefined symbols must include no C++ one of c10,
    at or torch."""
    cache = WORK / "torchvision-stable-abi.json"
    known = json.loads(cache.read_text()) if cache.exists() and not fresh else {}
    if str(v) not in known:
        files = wheels_by_version("torchvision")[v]
        linux = [f for f in files if "linux" in f["filename"] and f["filename"].endswith("x86_64.whl")] or files
        z = RemoteZip(smallest(linux)["url"], smallest(linux).get("size"))
        libs = [n for n in z.names() if re.fullmatch(r"torchvision/[^/]+\.so", n)]
        ok = bool(libs) and all(n.endswith("_stable.so") for n in libs)
        if ok and shutil.which("nm"):
            scratch = WORK / "so-scratch"
            scratch.mkdir(parents=True, exist_ok=True)
            for n in libs:
                lib = scratch / Path(n).name
                lib.write_bytes(z.read(n))
                out = subprocess.run(["nm", "-D", "--undefined-only", str(lib)], capture_output=True,
                                     text=True, timeout=60).stdout
                lib.unlink()
                if re.search(r"\b_ZN(3c10|2at|5torch)", out):
                    ok = False
        known[str(v)] = ok
        cache.write_text(json.dumps(known, indent=1))
    return known[str(v)]


def derive_pairing(report: Report, tables: dict, fresh: bool):
    table = tables["torch-releases"]
    report.section(f"torch-releases ({table['file']}): torchvision pinning each torch release")
    tv = torchvision_requirements(fresh)
    torch_wheels = wheels_by_version("torch")
    for v, _files in torch_wheels.items():
        row = row_for(table, v)
        if row is None:
            continue
        spec = SpecifierSet(row["torchvision"])
        exact = sorted(t for t, req in tv.items() if req is not None and
                       any(s.operator in ("==", "===") and s.version == str(v) for s in req))
        # No pin: the torchvision releases after the last one pinned to an
        # older torch that declare this one compatible.
        floor = max((t for t, req in tv.items() if req is not None and
                     any(s.operator == "==" and Version(s.version.rstrip(".*")) < v for s in req)),
                    default=Version("0"))
        declared = exact or sorted(t for t, req in tv.items() if t > floor and req is not None and req.contains(v))
        # torchvision releases the row accepts that pin another torch, outside this row
        row_torch = {t for t in torch_wheels if row_for(table, t) is row}
        foreign = sorted(t for t, req in tv.items() if spec.contains(t) and req is not None and
                         any(s.operator == "==" for s in req) and
                         not any(req.contains(x) for x in row_torch))
        # A pin to another torch binds pip, not the binary: an extension that
        # uses only LibTorch's stable C ABI loads into a later torch.
        stable = [t for t in foreign if torchvision_stable_abi(t, fresh)]
        foreign = [t for t in foreign if t not in stable]
        derived = ",".join(map(str, declared)) or "none"
        kind = "" if exact else ("declared compatible, no pin" if declared else "no torchvision names it")
        ok = bool(declared) and all(spec.contains(t) for t in declared) and not foreign
        notes = [kind] if kind else []
        if stable:
            notes.append("row also accepts " + ",".join(f"{t} (pins torch{tv[t]}, stable ABI only)" for t in stable))
        if foreign:
            notes.append("row also accepts " + ",".join(f"{t} (pins torch{tv[t]})" for t in foreign))
        detail = "; ".join(notes)
        report.compare("torch torchvision", f"torch {v}", derived, row["torchvision"], ok, detail)

    compare_pythons(report, table, "torch", torch_wheels)


# --------------------------------------------------------------------------


# --------------------------------------------------------------------------
# 4. CTranslate2 (faster-whisper): the CUDA and cuDNN each wheel loads

CT2_VERSION = 1  # bump to invalidate cached readings
# CTranslate2 opens CUDA's libraries at run time (CUDA_DYNAMIC_LOADING), so
# their names are strings in its library, not DT_NEEDED entries.
CT2_LIBS = {
    "linux": (r"ctranslate2(?:\.libs)?/libctranslate2[^/]*\.so[^/]*", rb"libcublas\.so\.(\d+)", rb"libcudnn\.so\.(\d+)"),
    "windows": (r"ctranslate2/ctranslate2\.dll", rb"cublas64_(\d+)\.dll", rb"cudnn64_(\d+)\.dll"),
}


def ct2_platform_wheel(files: list[dict], platform: str) -> dict | None:
    def fits(name: str) -> bool:
        if platform == "linux":
            return "linux" in name and name.endswith("x86_64.whl")
        if platform == "aarch64":
            return "linux" in name and name.endswith("aarch64.whl")
        return name.endswith("win_amd64.whl")
    chosen = [f for f in files if fits(f["filename"])]
    return smallest(chosen) if chosen else None


def ct2_majors(f: dict, platform: str) -> dict:
    """The cuBLAS and cuDNN majors one wheel's library names (None: none)."""
    member, cublas, cudnn = CT2_LIBS["windows" if platform == "windows" else "linux"]
    z = RemoteZip(f["url"], f.get("size"))
    libs = [n for n in z.names() if re.fullmatch(member, n)]
    if not libs:
        return {"error": "no CTranslate2 library in the wheel"}
    data = z.read(libs[0])
    majors = lambda pattern: sorted({int(m) for m in re.findall(pattern, data)}) or None  # noqa: E731
    return {"cuda": majors(cublas), "cudnn": majors(cudnn), "member": libs[0]}


def ct2_readings(fresh: bool, report: Report) -> dict[str, dict]:
    cache = WORK / "ctranslate2-majors.json"
    known = json.loads(cache.read_text()) if cache.exists() and not fresh else {}
    if known.get("_version") != CT2_VERSION:
        known = {"_version": CT2_VERSION}
    for v, files in wheels_by_version("ctranslate2").items():
        for platform in ("linux", "aarch64", "windows"):
            key = f"{v} {platform}"
            f = ct2_platform_wheel(files, platform)
            if key in known or f is None:
                continue
            try:
                known[key] = ct2_majors(f, platform) | {"wheel": f["filename"]}
            except Exception as e:  # noqa: BLE001 - reported, the run goes on
                report.note(f"ctranslate2 {v} {platform}: {f['filename']} not read: {e}")
                continue
            cache.write_text(json.dumps(known, indent=1))
    return known


def faster_whisper_requirements(fresh: bool) -> dict[Version, str | None]:
    """faster-whisper release -> its Requires-Dist on ctranslate2."""
    cache = WORK / "faster-whisper-requires.json"
    known = json.loads(cache.read_text()) if cache.exists() and not fresh else {}
    for v, files in wheels_by_version("faster-whisper").items():
        if str(v) not in known:
            z = RemoteZip(smallest(files)["url"], smallest(files).get("size"))
            meta = next(n for n in z.names() if n.endswith(".dist-info/METADATA"))
            msg = Parser().parsestr(z.read(meta).decode("utf-8", "replace"))
            known[str(v)] = next((str(Requirement(r).specifier) for r in msg.get_all("Requires-Dist") or []
                                  if Requirement(r).name.lower() == "ctranslate2"), None)
            cache.write_text(json.dumps(known, indent=1))
    return {Version(k): s for k, s in known.items()}


def derive_ctranslate2(report: Report, tables: dict, fresh: bool):
    table, cudnn_table = tables["ctranslate2-builds"], tables["ctranslate2-cudnn"]
    report.section(f"ctranslate2-builds, ctranslate2-cudnn ({table['file']}): the CUDA and cuDNN each wheel's library loads")
    readings = ct2_readings(fresh, report)
    versions = sorted({Version(k.split()[0]) for k in readings if not k.startswith("_")})
    text = lambda majors: ",".join(map(str, majors)) if majors else "none"  # noqa: E731
    for v in versions:
        row, cudnn_row = row_for(table, v) or {}, row_for(cudnn_table, v) or {}
        for platform, column in (("linux", "cudnn"), ("windows", "cudnn_windows")):
            got = readings.get(f"{v} {platform}")
            if got is None or "error" in got:
                continue
            stated = row.get("cuda", "no row"), cudnn_row.get(column, "none")
            derived = text(got["cuda"]), text(got["cudnn"])
            report.compare(f"ctranslate2 {platform}", f"ctranslate2 {v}", "/".join(derived), "/".join(stated),
                           derived == stated)
        got = readings.get(f"{v} aarch64")
        if got is not None and "error" not in got:
            report.compare("ctranslate2 aarch64 cpu-only", f"ctranslate2 {v}", text(got["cuda"]), "none",
                           got["cuda"] is None)
    fw = tables["faster-whisper-builds"]
    report.section(f"faster-whisper-builds ({fw['file']}): the CUDA of every CTranslate2 each release accepts")
    for v, spec in faster_whisper_requirements(fresh).items():
        row = row_for(fw, v)
        accepted = [c for c in versions if spec and SpecifierSet(spec).contains(c)]
        cudas = sorted({(row_for(table, c) or {}).get("cuda", "no row") for c in accepted})
        derived = ",".join(cudas) or "none"
        report.compare("faster-whisper cuda", f"faster-whisper {v}", f"{derived} (ctranslate2{spec})",
                       (row or {}).get("cuda", "no row"), derived == (row or {}).get("cuda"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="ort,torch,symbolics,dlls,pairing,ctranslate2",
                    help="comma-separated: ort, torch, symbolics, dlls, pairing, ctranslate2")
    ap.add_argument("--emit-dlls", action="store_true",
                    help="print library_wheels' Windows rows as derived and stop")
    ap.add_argument("--emit-symbolics", action="store_true",
                    help="print torch_onnx_symbolics as derived (for matrix/torch-export.yaml) and stop")
    ap.add_argument("--fresh", action="store_true", help="measure again instead of using cached results")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a fact disagrees")
    args = ap.parse_args()
    started = time.monotonic()
    WORK.mkdir(parents=True, exist_ok=True)
    tables = load_tables()
    report = Report()
    if args.emit_dlls:
        derive_dlls(Report(out=sys.stderr), tables, args.fresh, emit=True)
        return 0
    if args.emit_symbolics:
        derive_symbolics(Report(out=sys.stderr), tables, args.fresh, emit=True)
        return 0
    steps = {"ort": derive_onnxruntime, "torch": derive_torch, "symbolics": derive_symbolics, "dlls": derive_dlls, "pairing": derive_pairing,
             "ctranslate2": derive_ctranslate2}
    for name in args.only.split(","):
        steps[name.strip()](report, tables, args.fresh)
    report.section("summary")
    for fact, c in report.checks.items():
        report.note(f"{fact:<28} {c['checked']:>3} checked, {c['agree']:>3} agree, {c['differ']:>3} differ")
    total = {k: sum(c[k] for c in report.checks.values()) for k in ("checked", "agree", "differ")}
    report.note(f"{'all':<28} {total['checked']:>3} checked, {total['agree']:>3} agree, {total['differ']:>3} differ"
                f" in {time.monotonic() - started:.0f} s")
    (WORK / "report.json").write_text(json.dumps(
        {"checks": report.checks, "differences": report.differences}, indent=1, default=str))
    (WORK / "report.txt").write_text("\n".join(report.lines) + "\n")
    return 1 if args.strict and total["differ"] else 0


if __name__ == "__main__":
    sys.exit(main())
