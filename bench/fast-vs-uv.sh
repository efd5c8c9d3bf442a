#!/usr/bin/env bash
# `onnx-doctor --fast` against `uv pip check` on the same environments,
# paired: each round runs one, then the other, so machine noise hits both
# alike. Prints medians; asserts nothing.
#
#   bench/fast-vs-uv.sh [VENV...]   # default: the test venvs ort-only and torch
#
# Needs uv on PATH (or UV=/path/to/uv).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet
BIN=$PWD/target/release/onnx-doctor
UV=${UV:-$(command -v uv || true)}
[ -x "$UV" ] || { echo "no uv; install it (pip install uv) or set UV" >&2; exit 2; }
ROUNDS=${ROUNDS:-40}
[ $# -gt 0 ] || set -- target/test-venvs/ort-only target/test-venvs/torch
for venv in "$@"; do
  [ -x "$venv/bin/python" ] || { echo "no $venv; run 'cargo test' first" >&2; exit 2; }
  python3 - "$BIN" "$UV" "$venv" "$ROUNDS" <<'PY'
import statistics, subprocess, sys, time
doctor, uv, venv, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
py = f"{venv}/bin/python"
cmds = {"onnx-doctor --fast": [doctor, "--fast", "--python", py, "-o", "/dev/null"],
        "uv pip check": [uv, "pip", "check", "--python", py]}
times = {k: [] for k in cmds}
for _ in range(rounds):
    for name, cmd in cmds.items():
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/")
        times[name].append((time.perf_counter() - t) * 1000)
med = {k: statistics.median(v) for k, v in times.items()}
n = sum(1 for _ in __import__("pathlib").Path(venv).glob("lib/python3*/site-packages/*.dist-info"))
print(f"{venv} ({n} distributions), median of {rounds} paired rounds:")
for k, v in med.items():
    print(f"  {k:20} {v:6.1f} ms")
print(f"  ratio doctor/uv      {med['onnx-doctor --fast'] / med['uv pip check']:.2f}")
PY
done
