#!/usr/bin/env bash
# Re-derives matrix facts from the released artifacts and diffs them
# against matrix/ (see bench/derive.py for what it measures).
#
#   bash bench/derive.sh                 # everything, cached results reused
#   bash bench/derive.sh --only torch    # one part: ort, torch, symbolics, dlls, pairing, ctranslate2
#   bash bench/derive.sh --fresh --strict
#
# Needs network access to the package index pip is configured with. Builds
# scratch environments under target/derive/ (onnx to write the test models;
# numpy 1.x for onnxruntime wheels built against it; derive.py adds one with
# numpy per older CPython it finds, for the releases with no wheel for this
# one); the onnxruntime wheels are unpacked one at a time and removed after.
# Results are cached there: --fresh measures again.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
W=target/derive
mkdir -p "$W"
pipi() { timeout 600 "$1/bin/python" -m pip install --quiet --disable-pip-version-check "${@:2}"; }
if [ ! -x "$W/venv/bin/python" ] || [ ! -e "$W/venv/.ready" ]; then
  timeout 120 "$PY" -m venv --clear "$W/venv"
  pipi "$W/venv" onnx numpy pyyaml packaging
  touch "$W/venv/.ready"
fi
if [ ! -x "$W/venv-numpy1/bin/python" ] || [ ! -e "$W/venv-numpy1/.ready" ]; then
  timeout 120 "$PY" -m venv --clear "$W/venv-numpy1"
  pipi "$W/venv-numpy1" "numpy==1.26.4"
  touch "$W/venv-numpy1/.ready"
fi
exec timeout 3600 "$W/venv/bin/python" bench/derive.py "$@"
