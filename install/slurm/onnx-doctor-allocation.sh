#!/usr/bin/env bash
# Runs onnx-doctor on every node of the current Slurm allocation, gathers one
# JSON report per node into OUTDIR, and ends with the fleet's verdict: which
# nodes fail, on what, and how their versions drift. Its exit code is the
# fleet's (1 when a node has an error finding).
#
#   salloc -N 16 --gres=gpu:1 install/slurm/onnx-doctor-allocation.sh [OUTDIR] [-- DOCTOR ARGS...]
#   sbatch -N 16 --gres=gpu:1 install/slurm/onnx-doctor-allocation.sh
#
# The release binary (scripts/release) needs glibc 2.17, so it runs on RHEL 7
# and 8 nodes as well as newer ones. OUTDIR must be on a shared file system.
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
# One task per node; each prints its findings and verdict line, prefixed by
# the node's name, and writes its own report. The command is single-quoted
# on purpose: the node expands it, not this shell.
# shellcheck disable=SC2016
srun --ntasks-per-node=1 --ntasks="${SLURM_JOB_NUM_NODES:-1}" bash -c \
  'node="$(hostname)"; onnx-doctor --quiet --json "$0/$node.json" "$@" | sed "s/^/$node: /"' "$out" "$@" || true
echo
onnx-doctor fleet "$out"
