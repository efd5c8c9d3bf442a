"""Writes matrix/published.yaml: every release of the distributions the
doctor pins in its fixes that the package index serves, per platform
(Linux x86_64, Linux aarch64 up to glibc 2.28, Windows x86_64), with the
CPython versions it has wheels for; and for the distributions in GLIBC,
the oldest glibc each range of releases' Linux x86_64 wheels install on
(their manylinux tags), a range reaching over releases without such wheels.

    python3 bench/published.py            # rewrites matrix/published.yaml
    python3 bench/published.py --check    # exits 1 when the index changed

It reads the file list of each distribution from the index pip is
configured with (its JSON pages), and the wheels' tags: a release counts
for a CPython when a wheel for Linux x86_64 installs there.
"""
import json
import os
import re
import subprocess
import sys
import urllib.request
from concurrent.futures import ThreadPoolExecutor

# Each distribution, and where its releases are announced.
DISTRIBUTIONS = {
    "onnxruntime": "https://github.com/microsoft/onnxruntime/releases",
    "onnxruntime-gpu": "https://onnxruntime.ai/docs/install/",
    "onnx": "https://github.com/onnx/onnx/releases",
    "torch": "https://github.com/pytorch/pytorch/releases",
    "torchvision": "https://github.com/pytorch/vision/releases",
}
# Those whose manylinux tags state the glibc their libraries need (torch's
# were tagged manylinux1 long after they needed glibc 2.17).
GLIBC = ["onnxruntime", "onnxruntime-gpu"]
PYTHONS = [(3, m) for m in range(6, 15)]
OUT = "matrix/published.yaml"
# The platforms, and whether a wheel's platform tag installs there. On
# aarch64 only wheels for glibc 2.28 or older count: the newer ones are
# server-ARM builds that Jetson's JetPack 5 (glibc 2.31) cannot take, and
# what installs everywhere is what a fix can promise.
PLATFORMS = {
    "linux-x86_64": lambda t: t.startswith(("manylinux", "linux")) and t.endswith("_x86_64"),
    "linux-aarch64": lambda t: t.endswith("_aarch64") and glibc(t) <= (2, 28),
    "windows-x86_64": lambda t: t == "win_amd64",
}


def glibc(tag):
    legacy = {"manylinux2014": (2, 17), "manylinux2010": (2, 12), "manylinux1": (2, 5)}
    for name, v in legacy.items():
        if tag.startswith(name + "_"):
            return v
    m = re.match(r"manylinux_(\d+)_(\d+)_", tag)
    return (int(m.group(1)), int(m.group(2))) if m else (99, 0)


def index_url():
    """The simple index pip is configured with (PEP 691 JSON pages)."""
    url = os.environ.get("PIP_INDEX_URL")
    if not url:
        out = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.index-url"],
                             capture_output=True, text=True)
        url = out.stdout.strip() if out.returncode == 0 else ""
    if not url:
        from pip._internal.models.index import PyPI
        url = PyPI.simple_url
    return url.rstrip("/")


WHEEL = re.compile(r"^(?P<name>[^-]+)-(?P<ver>[^-]+)(-\d[^-]*)?-(?P<py>[^-]+)-(?P<abi>[^-]+)-(?P<plat>[^-]+)\.whl$")


def pythons_of(py, abi):
    """The CPython minors a wheel's tags install on."""
    out = set()
    for tag in py.split("."):
        m = re.fullmatch(r"cp3(\d+)", tag)
        if m:
            minor = int(m.group(1))
            # abi3 wheels install on every later CPython too.
            out |= {(3, n) for n in range(minor, 15)} if "abi3" in abi else {(3, minor)}
        elif tag in ("py3", "py2.py3"):
            out |= set(PYTHONS)
    return out & set(PYTHONS)


def releases(dist):
    """Per platform: each version with wheels there, and their CPython minors."""
    req = urllib.request.Request(f"{index_url()}/{dist}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        files = json.load(r)["files"]
    found = {platform: {} for platform in PLATFORMS}
    floors = {}
    for f in files:
        m = WHEEL.match(f["filename"])
        # Pre-releases are left out: pip installs them only when asked to.
        if not m or f.get("yanked") or not re.fullmatch(r"[\d.]+(\.post\d+)?", m["ver"]):
            continue
        for platform, takes in PLATFORMS.items():
            if any(t == "any" or takes(t) for t in m["plat"].split(".")):
                found[platform].setdefault(m["ver"], set()).update(pythons_of(m["py"], m["abi"]))
        linux = [glibc(t) for t in m["plat"].split(".") if PLATFORMS["linux-x86_64"](t)]
        if linux and pythons_of(m["py"], m["abi"]):
            floors[m["ver"]] = min(min(linux), floors.get(m["ver"], min(linux)))
    published = {platform: {v: p for v, p in rows.items() if p} for platform, rows in found.items()}
    return published, floors


def glibc_table(dist, source, floors):
    """Releases in ranges of the same glibc floor, each range reaching up to
    the next one's first release."""
    ordered = sorted(floors, key=key)
    starts = [v for i, v in enumerate(ordered) if i == 0 or floors[v] != floors[ordered[i - 1]]]
    lines = [
        f"  {dist}-linux-glibc:",
        f"    description: The oldest glibc the Linux x86_64 wheels of each range of {dist} releases install on (their manylinux tag).",
        f"    key: {dist}",
        "    columns: [glibc]",
        "    sources:",
        f"      - {source}",
        "      - https://peps.python.org/pep-0600/",
        "    rows:",
    ]
    for i, v in enumerate(starts):
        upper = f",<{starts[i + 1]}" if i + 1 < len(starts) else ""
        g = floors[v]
        lines.append(f'      - {{ versions: ">={v}{upper}", glibc: "{g[0]}.{g[1]}" }}')
    return lines


def key(v):
    parts = []
    for p in v.replace("+", ".").split("."):
        parts.append((0, int(p)) if p.isdigit() else (1, p))
    return parts


def render():
    with ThreadPoolExecutor(len(DISTRIBUTIONS)) as pool:
        answers = dict(zip(DISTRIBUTIONS, pool.map(releases, DISTRIBUTIONS)))
    lines = [
        "# yaml-language-server: $schema=schema.json",
        "# What the package index serves, per platform: each release of the",
        "# distributions the doctor pins in its fixes, with the CPython versions",
        "# it ships wheels for. A fix that asks for a release no row of the",
        "# machine's platform lists, or one without a wheel for the checked",
        "# Python, is never printed.",
        "# Written by bench/published.py from the index's file lists; not edited by hand.",
        "tables:",
    ]
    for dist, source in DISTRIBUTIONS.items():
        if dist in GLIBC:
            lines += glibc_table(dist, source, answers[dist][1])
        for platform in PLATFORMS:
            pythons = answers[dist][0][platform]
            lines += [
                f"  {dist}-published-{platform.replace('_', '-')}:",
                f"    description: The {dist} releases the package index serves for {platform}, and their CPython versions.",
                f"    key: {dist}",
                f"    published: {platform}",
                "    columns: [python]",
                "    sources:",
                f"      - {source}",
                "    rows:" if pythons else "    rows: []",
            ]
            for v in sorted(pythons, key=key):
                lo, hi = min(pythons[v]), max(pythons[v])
                lines.append(f'      - {{ versions: "=={v}", python: ">={lo[0]}.{lo[1]},<{hi[0]}.{hi[1] + 1}" }}')
    return "\n".join(lines) + "\n"


def main():
    text = render()
    if "--check" in sys.argv:
        old = open(OUT).read()
        if old != text:
            print(f"{OUT} is out of date: run python3 bench/published.py")
            sys.exit(1)
        return
    open(OUT, "w").write(text)


if __name__ == "__main__":
    main()
