#!/usr/bin/env python3
"""Which torch release each release of a package built against torch
requires: torchaudio, Torch-TensorRT, torch_xla.

    python3 bench/pins.py [PACKAGE ...]     # needs packaging and pyyaml
    python3 bench/pins.py --check           # diff against the matrix tables

Each of these ships compiled code linked against one LibTorch, and its
wheel metadata says which (`Requires-Dist: torch==2.4.0`,
`torch>=2.5.0,<2.6.0`). Read from each release's wheel METADATA (one wheel
per release, its zip's central directory and that one member by range
requests, cached under target/derive/ like bench/derive.py), on the index
pip is configured with. Consecutive releases with the same requirement are
printed as one range.

The matrix tables `torchaudio-releases`, `torch-tensorrt-releases` and
`torch-xla-releases` (matrix/torch.yaml) give a `torch` specifier per
release; `--check` re-derives every release the index has and reports one
whose wheel requires torch outside its row's specifier (or that no row
covers); for torch_xla, whose wheels state nothing, a row that is not the
release's own torch line. Rows for releases the index never served
(Torch-TensorRT before 1.3) come from each release's setup.py and are left
alone. It never writes the matrix.
"""
from __future__ import annotations

import sys
from email.parser import Parser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import derive  # noqa: E402
from packaging.requirements import Requirement  # noqa: E402
from packaging.utils import canonicalize_name  # noqa: E402

TABLES = {
    "torchaudio": "torchaudio-releases",
    "torch-tensorrt": "torch-tensorrt-releases",
    "torch-xla": "torch-xla-releases",
}


def torch_requirement(metadata: str) -> str:
    """The specifier on torch the base requirements state ("" for none)."""
    for line in Parser().parsestr(metadata).get_all("Requires-Dist") or []:
        try:
            r = Requirement(line)
        except Exception:  # noqa: BLE001 - a malformed line names nothing
            continue
        if canonicalize_name(r.name) == "torch" and "extra ==" not in str(r.marker or ""):
            return str(r.specifier) or "any"
    return ""


def releases(name: str) -> list[tuple[str, str]]:
    """(release, torch specifier) for every release with a wheel."""
    out = []
    for version, files in derive.wheels_by_version(name).items():
        linux = [f for f in files if "manylinux" in f["filename"] and "x86_64" in f["filename"]]
        wheel = derive.smallest(linux or files)
        try:
            z = derive.RemoteZip(wheel["url"], wheel.get("size"))
            member = next(n for n in z.names() if n.endswith(".dist-info/METADATA"))
            out.append((str(version), torch_requirement(z.read(member).decode("utf-8", "replace"))))
        except Exception as e:  # noqa: BLE001 - one unreadable wheel is reported, not fatal
            print(f"# {name} {version}: {e}", file=sys.stderr)
    return out


def check() -> int:
    import yaml
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    matrix = Path(__file__).resolve().parent.parent / "matrix" / "torch.yaml"
    tables = yaml.safe_load(matrix.read_text())["tables"]
    wrong = checked = 0
    for name, table in TABLES.items():
        rows = [(SpecifierSet(r["versions"]), SpecifierSet(r["torch"])) for r in tables[table]["rows"]]
        for version, required in releases(name):
            checked += 1
            row = next((t for v, t in rows if v.contains(Version(version))), None)
            if not required:
                # torch_xla's wheels state nothing; its README pairs the
                # release lines. A release with no requirement and no row
                # (torchaudio 2.11) is left unjudged by design.
                line = Version(version).release[:2]
                same_line = f"{line[0]}.{line[1]}.0"
                if row is not None and not row.contains(same_line):
                    wrong += 1
                    print(f"{name} {version}: the table says torch {row}, not its own release line")
                continue
            if row is None:
                wrong += 1
                print(f"{name} {version}: no row; the wheel requires torch {required}")
                continue
            # The row must admit the lowest torch the wheel admits.
            floor = min((s.version.rstrip(".*") for s in SpecifierSet(required) if s.operator in ("==", ">=")),
                        key=Version, default=None)
            if floor is None or not row.contains(floor):
                wrong += 1
                print(f"{name} {version}: the table says torch {row}, the wheel requires {required}")
    print(f"{checked} releases checked, {wrong} differ")
    return 1 if wrong else 0


def main() -> int:
    if sys.argv[1:] == ["--check"]:
        return check()
    for name in sys.argv[1:] or TABLES:
        found = releases(name)
        start = 0
        for i, (version, required) in enumerate(found):
            if i + 1 == len(found) or found[i + 1][1] != required:
                first = found[start][0]
                span = first if first == version else f"{first}..{version}"
                print(f"{name}\t{span}\ttorch {required or '(none)'}")
                start = i + 1
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
