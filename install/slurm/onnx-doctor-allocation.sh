#!/usr/bin/env bash
# Runs onnx-doctor on every node of the current Slurm allocation and gathers
# one JSON report per node into OUTDIR.
#
#   salloc -N 16 --gres=gpu:1 install/slurm/onnx-doctor-allocation.sh [OUTDIR] [-- DOCTOR ARGS...]
#   sbatch -N 16 --gres=gpu:1 install/slurm/onnx-doctor-allocation.sh
set -euo pipefail

out="${1:-onnx-doctor-reports}"
shift || true
[ "${1:-}" = "--" ] && shift
if [ -z "${SLURM_JOB_ID:-}" ]; then
  echo "onnx-doctor-allocation.sh: run inside a Slurm allocation (salloc or sbatch)" >&2
  exit 2
fi
if ! command -v onnx-doctor >/dev/null 2>&1; then
  echo "onnx-doctor-allocation.sh: onnx-doctor is not on PATH (see install/install.sh)" >&2
  exit 2
fi
mkdir -p "$out"
# One task per node; each writes its own file, named after the node. The
# command is single-quoted on purpose: the node expands it, not this shell.
# shellcheck disable=SC2016
srun --ntasks-per-node=1 --ntasks="${SLURM_JOB_NUM_NODES:-1}" bash -c \
  'onnx-doctor --format json --output "$0/$(hostname).json" "$@" || true' "$out" "$@"
echo "reports in $out/"
find "$out" -maxdepth 1 -name '*.json' | wc -l
