#!/usr/bin/env python3
"""Writes matrix/operator-kernels.yaml: the operator kernels each onnxruntime
release registers, per execution provider.

onnxruntime generates its docs/OperatorKernels.md from
`get_all_opkernel_def()`; this script asks the same function of each
release's wheel. Where no wheel can answer (the CUDA provider needs a GPU;
wheels before 1.16 do not export that function) it reads the document, at the
release's tag or at the commit on main where the release branched, and adds
what the document leaves out: kernels that declare no type constraint, for
which its generator writes no row (NonMaxSuppression). At the branch points
of 1.17, 1.18, 1.19, 1.21 and 1.22 the document and source so read list
exactly what the CPU wheel registers.

`build` refuses a series in which a release takes an operator version
that the next release read does not: kernels are only ever added, so such a
document is incomplete (1.13's lists no com.microsoft kernel for CUDA).

    scripts/operator-kernels.py dump            # in a Python with onnxruntime: JSON on stdout
    scripts/operator-kernels.py build DIR...    # folders of dumps (or dump files) -> YAML on stdout
                                                # (in a Python with onnx: its function bodies too)
    scripts/operator-kernels.py fetch OUT R...  # install each release R in a scratch venv and dump it to OUT
    scripts/operator-kernels.py doc OperatorKernels.md PROVIDER RELEASE READ SOURCE [GITDIR REV]
                                                # one provider of the document, as a dump (with
                                                # the kernels it cannot list, from a clone at REV)
    scripts/operator-kernels.py doc-git GITDIR REV PROVIDER RELEASE READ
                                                # the same from an onnxruntime clone at REV, with
                                                # the kernels the document cannot list (see untyped)

A range is written as onnxruntime's document writes it (`6-12`, `13`,
`14+`), followed by the releases that register it when that is not every
release read: `@1.17` (from 1.17 on), `@..1.16` (up to 1.16),
`@1.17..1.19`.
"""

import json
import os
import re
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


def doc(path, provider, release, read, source, gitdir=None, rev=None):
    """One provider's section of an OperatorKernels.md, as a dump: for
    providers no wheel here can answer for (CUDA needs a GPU). With an
    onnxruntime clone and a revision, adds the kernels the document cannot
    list (see untyped) from that revision's source."""
    ops = doc_kernels(path, provider)
    if gitdir:
        merge(ops, untyped_at(gitdir, rev, provider))
    write_dump(release, read, source, provider, ops)


def write_dump(release, read, source, provider, ops):
    kernels = {d: {o: sorted(r) for o, r in sorted(x.items())} for d, x in sorted(ops.items())}
    out = {"release": release, "read": read, "source": source, "kernels": {provider: kernels}}
    json.dump(out, sys.stdout, indent=0, sort_keys=True)


def merge(ops, more):
    for domain, x in more.items():
        for op, ranges in x.items():
            have = ops.setdefault(domain, {}).setdefault(op, [])
            have += [r for r in ranges if r not in have]


def doc_kernels(path, provider):
    """domain -> operator -> [[start, end]] of one provider's section."""
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
    return ops


# The source folders whose kernel registrations make up each provider.
PROVIDER_SOURCES = {
    "CPUExecutionProvider": ["onnxruntime/core/providers/cpu", "onnxruntime/contrib_ops/cpu"],
    "CUDAExecutionProvider": ["onnxruntime/core/providers/cuda", "onnxruntime/contrib_ops/cuda"],
}
PROVIDER_TOKENS = {"kCpuExecutionProvider": "CPUExecutionProvider", "kCudaExecutionProvider": "CUDAExecutionProvider"}
DOMAIN_TOKENS = {
    "kOnnxDomain": "ai.onnx",
    "kMLDomain": "ai.onnx.ml",
    "kMSDomain": "com.microsoft",
    "kMSNchwcDomain": "com.microsoft.nchwc",
    "kMSInternalNHWCDomain": "com.ms.internal.nhwc",
    "kPytorchAtenDomain": "org.pytorch.aten",
}


def untyped(tree, provider):
    """The kernels of `provider` in the source `tree` that declare no type
    constraint. gen_opkernel_doc.py writes a row per type constraint, so
    the document never lists these (NonMaxSuppression, QLinearConcat, ...)
    although the release registers them: read from the registration macros."""

    found = {}
    call = re.compile(r"\b(ONNX_(?:CPU_)?OPERATOR_[A-Z_]*KERNEL(?:_EX)?)\s*\(")
    for folder in PROVIDER_SOURCES[provider]:
        for root, _, files in os.walk(os.path.join(tree, folder)):
            for name in files:
                if not name.endswith((".cc", ".cpp")):
                    continue
                text = open(os.path.join(root, name), encoding="utf-8", errors="replace").read()
                for m in call.finditer(text):
                    args = macro_args(text, m.end())
                    kernel = registration(m.group(1), args)
                    if kernel and kernel[0] == provider and not any("TypeConstraint" in a for a in args):
                        _, domain, op, r = kernel
                        ranges = found.setdefault(domain, {}).setdefault(op, [])
                        if r not in ranges:
                            ranges.append(r)
    return found


def macro_args(text, start):
    """The top-level arguments of the call whose `(` ends at `start`."""
    args, depth, cur = [], 1, []
    for ch in text[start:]:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                args.append("".join(cur).strip())
                return args
        if ch == "," and depth == 1:
            args.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    return []


def registration(macro, args):
    """(provider, domain, op, [start, end]) of one registration macro, or
    None where its arguments are not literal (a macro's own definition)."""
    versioned = "VERSIONED" in macro
    types = 2 if "TWO_TYPED" in macro else 1 if "TYPED" in macro else 0
    if "CLASS_NAME" in macro:
        return None
    if macro.endswith("_EX"):
        if len(args) < 5:
            return None
        op, domain = args[0], DOMAIN_TOKENS.get(args[1])
        rest = args[2:]
    else:
        op = args[0] if args else ""
        domain = ("com.microsoft.nchwc" if "NCHWC" in macro else "com.microsoft" if "_MS_" in macro
                  else "ai.onnx.ml" if "_ML_" in macro else "ai.onnx")
        rest = args[1:]
    nver = 2 if versioned else 1
    if not re.fullmatch(r"[A-Za-z_]\w*", op) or domain is None or len(rest) < nver + types:
        return None
    try:
        start, end = int(rest[0]), int(rest[nver - 1]) if versioned else INT_MAX
    except ValueError:
        return None
    rest = rest[nver + types:]
    if macro.endswith("_EX"):
        provider = PROVIDER_TOKENS.get(rest[0]) if rest else None
    else:
        provider = "CPUExecutionProvider"
    return (provider, domain, op, [start, end]) if provider else None


def git_tree(gitdir, rev, paths, tree):
    """Writes `paths` of `rev` into the folder `tree`; returns the commit."""
    git = ["git", "--git-dir", gitdir]
    commit = subprocess.run([*git, "rev-parse", f"{rev}^{{commit}}"], capture_output=True, text=True,
                            check=True).stdout.strip()
    archive = subprocess.run([*git, "archive", commit, *paths], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True)
    return commit


def untyped_at(gitdir, rev, provider):
    with tempfile.TemporaryDirectory() as tree:
        git_tree(gitdir, rev, PROVIDER_SOURCES[provider], tree)
        return untyped(tree, provider)


def doc_git(gitdir, rev, provider, release, read):
    """doc() of one revision of an onnxruntime clone: its document and the
    kernels its source registers that the document cannot list."""
    with tempfile.TemporaryDirectory() as tree:
        commit = git_tree(gitdir, rev, ["docs/OperatorKernels.md", *PROVIDER_SOURCES[provider]], tree)
        ops = doc_kernels(os.path.join(tree, "docs", "OperatorKernels.md"), provider)
        merge(ops, untyped(tree, provider))
    at = rev if re.fullmatch(r"v[\d.]+", rev) else commit
    write_dump(release, read, f"https://github.com/microsoft/onnxruntime/blob/{at}/docs/OperatorKernels.md",
               provider, ops)


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


def takes(ranges, since):
    """onnxruntime's VerifyVersion: an open range takes only its start."""
    return any(since == a if b >= INT_MAX else a <= since <= b for a, b in ranges)


def lost_kernels(old, new):
    """The `domain:op-since` that `old` runs and `new` does not."""
    lost = []
    for domain, ops in sorted(old.items()):
        for op, ranges in sorted(ops.items()):
            for a, b in ranges:
                for since in [a] if b >= INT_MAX else range(a, b + 1):
                    if not takes(new.get(domain, {}).get(op, []), since):
                        lost.append(f"{domain}:{op}-{since}")
    return lost


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
    for provider in providers:
        order = [r for r in everyone if provider in dumps[r]["kernels"]]
        for old, new in zip(order, order[1:]):
            lost = lost_kernels(dumps[old]["kernels"][provider], dumps[new]["kernels"][provider])
            if lost:
                sys.exit(f"{provider}: {new} lacks {len(lost)} kernels {old} has ({', '.join(lost[:5])}, ...): "
                         "one of the two documents is incomplete")
    lines = [
        "# yaml-language-server: $schema=schema.json",
        "# The operator kernels each onnxruntime release registers, per execution",
        "# provider: what its docs/OperatorKernels.md lists. Written by",
        "# scripts/operator-kernels.py from each release's wheel (get_all_opkernel_def,",
        "# the function that generates that document), or from the document itself",
        "# where no wheel can answer (the CUDA provider needs a GPU); do not edit by hand.",
        "#",
        "# A range is `6-12`, `13` or `14+`: `14+` is a kernel registered from",
        "# version 14 with no end, which serves the operator's schema version 14",
        "# only (a later schema version needs a kernel of its own, as onnxruntime's",
        "# registry looks kernels up); `@1.17` means from 1.17 on, `@..1.16` up to",
        "# 1.16, `@1.17..1.19` those releases only; no mark means every release listed.",
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
    lines += INITIALIZERS
    print("\n".join(lines))


# What no wheel can be asked: onnxruntime's Graph constructor turns every
# Constant node into an initializer, in every release read.
INITIALIZERS = [
    "# The operators onnxruntime never looks a kernel up for: loading a graph",
    "# turns every such node into an initializer.",
    "operator_initializers:",
    "  sources:",
    "    - https://github.com/microsoft/onnxruntime/blob/v1.10.0/onnxruntime/core/graph/graph.cc",
    "    - https://github.com/microsoft/onnxruntime/blob/c98a0e014b641e289ed25f42b792bca1893ccb03/onnxruntime/core/graph/graph.cc",
    "  ops:",
    "    ai.onnx: [Constant]",
]


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
    elif cmd == "doc" and len(sys.argv) in (7, 9):
        doc(*sys.argv[2:])
    elif cmd == "doc-git" and len(sys.argv) == 7:
        doc_git(*sys.argv[2:])
    elif cmd == "fetch" and len(sys.argv) > 3:
        fetch(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
