#!/usr/bin/env python3
"""Which releases of packages downstream of the stack pull in the CPU
onnxruntime, and which of their extras pull onnxruntime-gpu.

    python3 bench/pulls.py [PACKAGE ...]     # needs packaging and pyyaml
    python3 bench/pulls.py --check           # diff against the matrix table

Both distributions install the same `onnxruntime` module, so a package whose
base requirements name `onnxruntime` installs the CPU build beside (or over)
an onnxruntime-gpu the user installed, and `pip install pkg[gpu]` of such a
release installs both. Read from each release's wheel METADATA (one wheel
per release, its zip's central directory and that one member by range
requests, cached under target/derive/ like bench/derive.py), on the index
pip is configured with. Releases in a row share the same answer; markers
are printed as they stand.

The matrix table `onnxruntime-required-by` (matrix/python-packages.yaml)
holds the packages whose every release in a range requires onnxruntime
unconditionally; `--check` re-derives each of its packages and reports a
release the table places on the wrong side of its range, or a `gpu_extras`
that differs. It never writes the matrix.
"""
from __future__ import annotations

import sys
from email.parser import Parser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import derive  # noqa: E402
from packaging.requirements import Requirement  # noqa: E402
from packaging.utils import canonicalize_name  # noqa: E402

# Packages seen in tickets beside onnxruntime(-gpu), and their peers.
CANDIDATES = [
    "rembg", "faster-whisper", "optimum", "chromadb", "fastembed", "rapidocr-onnxruntime",
    "insightface", "piper-tts", "silero-vad", "openwakeword", "onnx2torch", "sherpa-onnx",
    "deepface", "ultralytics", "paddleocr", "onnxruntime-extensions", "txtai",
    "unstructured-inference", "open-clip-torch", "nudenet", "whisperx", "onnx-asr",
    "dghs-imgutils", "gfpgan", "kokoro-onnx",
]

Answer = tuple[str, tuple[str, ...], tuple[str, ...]]


def classify(metadata: str) -> Answer:
    """(the base requirement on onnxruntime: "" none, "always" or its marker;
    extras that pull onnxruntime-gpu; extras that pull onnxruntime)."""
    base, gpu, cpu = "", set(), set()
    for line in Parser().parsestr(metadata).get_all("Requires-Dist") or []:
        try:
            r = Requirement(line)
        except Exception:  # noqa: BLE001 - a malformed line names nothing
            continue
        name = canonicalize_name(r.name)
        if name not in ("onnxruntime", "onnxruntime-gpu"):
            continue
        marker = str(r.marker or "")
        extras = [part.split("==", 1)[1].strip().strip("'\"") for part in marker.split(" and ") if "extra ==" in part]
        if extras:
            (gpu if name == "onnxruntime-gpu" else cpu).update(extras)
        elif name == "onnxruntime":
            base = marker or "always"
    return base, tuple(sorted(gpu)), tuple(sorted(cpu))


def rows(name: str) -> list[tuple[str, str, Answer]]:
    out: list[list] = []
    for version, files in derive.wheels_by_version(name).items():
        wheel = next((f for f in files if f["filename"].endswith("py3-none-any.whl")), derive.smallest(files))
        try:
            z = derive.RemoteZip(wheel["url"], wheel.get("size"))
            member = next(n for n in z.names() if n.endswith(".dist-info/METADATA"))
            answer = classify(z.read(member).decode("utf-8", "replace"))
        except Exception as e:  # noqa: BLE001 - one unreadable wheel is reported, not fatal
            print(f"# {name} {version}: {e}", file=sys.stderr)
            continue
        if out and out[-1][2] == answer:
            out[-1][1] = str(version)
        else:
            out.append([str(version), str(version), answer])
    return [(a, b, c) for a, b, c in out]


def check() -> int:
    import yaml
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    matrix = Path(__file__).resolve().parent.parent / "matrix" / "python-packages.yaml"
    table = yaml.safe_load(matrix.read_text())["tables"]["onnxruntime-required-by"]
    wrong = 0
    for row in table["rows"]:
        name, spec = row["package"], SpecifierSet(row["versions"])
        extras = tuple(sorted(e for e in row["gpu_extras"].replace(",", " ").split() if e))
        for version, files in derive.wheels_by_version(name).items():
            version = Version(str(version))
            inside = spec.contains(version, prereleases=True)
            found = next(((b, g) for first, last, (b, g, _) in rows_cached(name)
                          if Version(first) <= version <= Version(last)), ("", ()))
            requires = found[0] == "always"
            if inside != requires or inside and found[1] != extras:
                wrong += 1
                print(f"{name} {version}: table says {'requires' if inside else 'not'} {extras}, "
                      f"the wheel says {found[0] or 'not'} {found[1]}")
    print(f"{len(table['rows'])} rows checked, {wrong} releases differ")
    return 1 if wrong else 0


_ROWS: dict[str, list] = {}


def rows_cached(name: str) -> list:
    if name not in _ROWS:
        _ROWS[name] = rows(name)
    return _ROWS[name]


def main() -> int:
    if sys.argv[1:] == ["--check"]:
        return check()
    print("package\treleases\tbase requires onnxruntime\textras with onnxruntime-gpu\textras with onnxruntime")
    for name in sys.argv[1:] or CANDIDATES:
        try:
            found = rows(name)
        except Exception as e:  # noqa: BLE001 - a package the index lacks
            print(f"# {name}: {e}", file=sys.stderr)
            continue
        for first, last, (base, gpu, cpu) in found:
            if base or gpu or cpu:
                print(f"{name}\t{first}..{last}\t{base or '-'}\t{','.join(gpu) or '-'}\t{','.join(cpu) or '-'}")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
