#!/usr/bin/env python3
"""Writes matrix/operator-kernels.yaml: the operator kernels each onnxruntime
release registers, per execution provider.

onnxruntime generates its docs/OperatorKernels.md from
`get_all_opkernel_def()`; this script asks the same function of each
release's wheel, so every row is what that release's own document lists.

    scripts/operator-kernels.py dump            # in a Python with onnxruntime: JSON on stdout
    scripts/operator-kernels.py build DIR...    # folders of dumps (or dump files) -> YAML on stdout
                                                # (in a Python with onnx: its function bodies too)
    scripts/operator-kernels.py fetch OUT R...  # install each release R in a scratch venv and dump it to OUT
    scripts/operator-kernels.py doc OperatorKernels.md PROVIDER RELEASE READ SOURCE
                                                # one provider of the document, as a dump

A range is written as onnxruntime's document writes it (`6-12`, `13`,
`14+`), followed by the releases that register it when that is not every
release read: `@1.17` (from 1.17 on), `@..1.16` (up to 1.16),
`@1.17..1.19`.
"""

import json
import os
import subprocess
import sys
import tempfile

INT_MAX = 2**31 - 1


def dump():
    import onnxruntime
    from onnxruntime.capi import _pybind_state as C

    kernels = {}
    for k in C.get_all_opkernel_def():
        start, end = k.version_range
        ops = kernels.setdefault(k.provider, {}).setdefault(k.domain or "ai.onnx", {})
        ops.setdefault(k.op_name, set()).add((start, end))
    out = {
        "release": onnxruntime.__version__,
        "kernels": {
            p: {d: {op: sorted(r) for op, r in sorted(ops.items())} for d, ops in sorted(doms.items())}
            for p, doms in sorted(kernels.items())
        },
    }
    json.dump(out, sys.stdout, indent=0, sort_keys=True)


def doc(path, provider, release, read, source):
    """One provider's section of an OperatorKernels.md, as a dump: for
    providers no wheel here can answer for (CUDA needs a GPU)."""
    import re

    ops, section, domain, op = {}, None, None, None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        m = re.match(r"## Operators implemented by (\S+)", line)
        if m:
            section = m.group(1)
            continue
        if section != provider or not line.startswith("|"):
            continue
        m = re.match(r"\|\*\*Operator Domain:\*\* \*([^*]+)\*", line)
        if m:
            domain, op = m.group(1), None
            continue
        cells = line.split("|")
        if len(cells) < 6 or domain is None or cells[1].strip().startswith(("Op Name", "---")):
            continue
        op = cells[1].strip() or op
        v = cells[3].strip()
        if m := re.fullmatch(r"\[(\d+),\s*(\d+)\]", v):
            r = [int(m.group(1)), int(m.group(2))]
        elif m := re.fullmatch(r"(\d+)\+", v):
            r = [int(m.group(1)), INT_MAX]
        elif m := re.fullmatch(r"(\d+)", v):
            r = [int(m.group(1))] * 2
        else:
            sys.exit(f"{path}: {op}: version {v!r} is none of [a, b], a+, a")
        ranges = ops.setdefault(domain, {}).setdefault(op, [])
        if r not in ranges:
            ranges.append(r)
    if not ops:
        sys.exit(f"{path}: no section for {provider}")
    kernels = {d: {o: sorted(r) for o, r in sorted(x.items())} for d, x in sorted(ops.items())}
    out = {"release": release, "read": read, "source": source, "kernels": {provider: kernels}}
    json.dump(out, sys.stdout, indent=0, sort_keys=True)


def fetch(out, releases):
    os.makedirs(out, exist_ok=True)
    for release in releases:
        with tempfile.TemporaryDirectory() as venv:
            subprocess.run([sys.executable, "-m", "venv", venv], check=True)
            py = os.path.join(venv, "bin", "python")
            # Releases before 1.19 were built against numpy 1 and do not import under 2.
            numpy = "numpy<2" if key(release) < (1, 19) else "numpy"
            subprocess.run(
                [py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                 f"onnxruntime=={release}", numpy],
                check=True,
            )
            with open(os.path.join(out, f"{release}.json"), "w") as f:
                subprocess.run([py, os.path.abspath(__file__), "dump"], stdout=f, check=True)
        print(f"read onnxruntime {release}", file=sys.stderr)


def minor(release):
    return ".".join(release.split(".")[:2])


def key(release):
    return tuple(int(p) for p in release.split("."))


def token(start, end):
    if end >= INT_MAX:
        return f"{start}+"
    return str(start) if start == end else f"{start}-{end}"


def spans(present, order):
    """The runs of consecutive releases in `order` that are in `present`."""
    runs, run = [], []
    for r in order:
        if r in present:
            run.append(r)
        elif run:
            runs.append(run)
            run = []
    if run:
        runs.append(run)
    return runs


def build(paths):
    files = []
    for p in paths:
        files += [os.path.join(p, f) for f in sorted(os.listdir(p))] if os.path.isdir(p) else [p]
    dumps, meta = {}, {}
    for f in files:
        with open(f) as fh:
            d = json.load(fh)
        # A dump of onnxruntime's document rather than a wheel names its
        # own `read` and `source`, and may add a provider the wheel of the
        # same release line lacks.
        line = minor(d["release"])
        full = d["release"]
        for provider in d["kernels"]:
            meta[(line, provider)] = (
                d.get("read", full),
                d.get("source", f"https://github.com/microsoft/onnxruntime/blob/v{full}/docs/OperatorKernels.md"),
            )
        dumps.setdefault(line, {"kernels": {}})["kernels"].update(d["kernels"])
    everyone = sorted(dumps, key=key)
    providers = sorted({p for d in dumps.values() for p in d["kernels"]})
    lines = [
        "# yaml-language-server: $schema=schema.json",
        "# The operator kernels each onnxruntime release registers, per execution",
        "# provider: what its docs/OperatorKernels.md lists. Written by",
        "# scripts/operator-kernels.py from each release's wheel (get_all_opkernel_def,",
        "# the function that generates that document), or from the document itself",
        "# where no wheel can answer (the CUDA provider needs a GPU); do not edit by hand.",
        "#",
        "# A range is `6-12`, `13` or `14+` (14 and every later version the release",
        "# knows); `@1.17` means from 1.17 on, `@..1.16` up to 1.16, `@1.17..1.19`",
        "# those releases only; no mark means every release listed.",
        "operator_kernels:",
    ]
    for provider in providers:
        order = [r for r in everyone if provider in dumps[r]["kernels"]]
        first, last = order[0], order[-1]
        lines += [
            "  - runtime: onnxruntime",
            f"    provider: {provider}",
            "    releases:",
        ]
        for r in order:
            read, source = meta[(r, provider)]
            lines.append(f"      - {{ release: \"{r}\", read: \"{read}\", source: {source} }}")
        lines.append("    ops:")
        domains = sorted({d for r in order for d in dumps[r]["kernels"].get(provider, {})})
        for domain in domains:
            lines.append(f"      {domain}:")
            ops = sorted({op for r in order for op in dumps[r]["kernels"].get(provider, {}).get(domain, {})})
            for op in ops:
                where = {}
                for r in order:
                    for start, end in dumps[r]["kernels"].get(provider, {}).get(domain, {}).get(op, []):
                        where.setdefault((start, end), set()).add(r)
                toks = []
                for (start, end), present in sorted(where.items()):
                    for run in spans(present, order):
                        mark = ""
                        if run[0] != first or run[-1] != last:
                            a = "" if run[0] == first else run[0]
                            b = "" if run[-1] == last else run[-1]
                            mark = f"@{a}" if not b else f"@{a}..{b}"
                        toks.append(token(start, end) + mark)
                lines.append(f"        {op}: \"{' '.join(toks)}\"")
    lines += functions()
    print("\n".join(lines))


def functions():
    """The operator versions whose schema has a function body, from the
    onnx package of the Python running this script."""
    import onnx
    from onnx import defs

    bodies = {}
    for schema in defs.get_all_schemas_with_history():
        if schema.deprecated or not (schema.has_function or schema.has_context_dependent_function):
            continue
        domain = schema.domain or "ai.onnx"
        bodies.setdefault(domain, {}).setdefault(schema.name, []).append(schema.since_version)
    v = onnx.__version__
    out = [
        "# The operator versions whose ONNX schema has a function body: onnxruntime",
        "# runs the body where it has no kernel. From the onnx package's schemas.",
        "operator_functions:",
        f"  read: \"{v}\"",
        f"  sources: [https://github.com/onnx/onnx/blob/v{v}/docs/Operators.md]",
        "  ops:",
    ]
    for domain in sorted(bodies):
        out.append(f"    {domain}:")
        for op in sorted(bodies[domain]):
            out.append(f"      {op}: \"{' '.join(str(x) for x in sorted(bodies[domain][op]))}\"")
    return out


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "dump":
        dump()
    elif cmd == "build":
        build(sys.argv[2:])
    elif cmd == "doc" and len(sys.argv) == 7:
        doc(*sys.argv[2:])
    elif cmd == "fetch" and len(sys.argv) > 3:
        fetch(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
