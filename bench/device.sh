#!/usr/bin/env bash
# The doctor on a real NVIDIA machine: what NVML, nvidia-smi, torch and
# onnxruntime say there, and what the doctor makes of it, probed and pasted.
#
#   bench/device.sh BINARY OUTDIR
#
# BINARY is a release build (scripts/release --target x86_64: glibc 2.17, so it
# runs on any host). Writes into OUTDIR:
#   machine.txt   nvidia-smi, nvidia-smi -q, the Pythons, pip list, collect_env
#   check.txt     `onnx-doctor -v` (with trials), then with NVML unloadable
#   check.json    `onnx-doctor --json`      fast.json   `onnx-doctor --fast --json`
#   report.md     `onnx-doctor report`
#   diagnose.txt  `onnx-doctor diagnose` on what machine.txt pasted
#   timings.txt   wall times of the runs above
# Every step is bounded; a failing step is recorded and the script goes on.
set -u
bin=$1 out=$2
mkdir -p "$out"
step() { echo "== $*"; timeout 120 "$@" 2>&1; echo "== exit $?"; }
ms() { local s e; s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N); echo $(( (e - s) / 1000000 )); }
py=$(command -v python3)
{
  step nvidia-smi
  step nvidia-smi -q
  step uname -a
  step sh -c 'which -a python3 python; ls /usr/local/cuda* -d /usr/lib/x86_64-linux-gnu/libnvidia-ml* 2>&1'
  step "$py" -m pip list
  step "$py" -m torch.utils.collect_env
  step "$py" -c 'import torch; print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version(), torch.cuda.get_arch_list(), torch.cuda.get_device_capability())'
  step "$py" -c 'import onnxruntime as o; print(o.__version__, o.get_available_providers())'
} > "$out/machine.txt"
{
  step "$bin" --version
  step "$bin" -v
  echo "### NVML unloadable: the nvidia-smi fallback"
  step "$bin" -v --no-trials --nvml-lib /nonexistent/libnvidia-ml.so.1
  echo "### inside a build: no GPU visible"
  step env CUDA_VISIBLE_DEVICES= "$bin" --no-trials
} > "$out/check.txt"
"$bin" --json "$out/check.json" >/dev/null 2>&1
"$bin" --fast --json "$out/fast.json" >/dev/null 2>&1
"$bin" report > "$out/report.md" 2>&1
{
  step "$bin" diagnose "$out/machine.txt"
  step "$bin" diagnose -v "$out/report.md"
} > "$out/diagnose.txt"
{
  echo "--version (ms, 10 runs): $(for _ in $(seq 10); do ms "$bin" --version; done | tr '\n' ' ')"
  echo "--fast (ms, 10 runs): $(for _ in $(seq 10); do ms "$bin" --fast; done | tr '\n' ' ')"
  echo "--no-trials (ms, 5 runs): $(for _ in $(seq 5); do ms "$bin" --no-trials; done | tr '\n' ' ')"
  echo "default, with trials (ms, 3 runs): $(for _ in $(seq 3); do ms "$bin"; done | tr '\n' ' ')"
  echo "python3 importing the stack alone (ms, 3 runs): $(for _ in $(seq 3); do ms "$py" -c "import numpy, google.protobuf, torch, torchvision, onnx, onnxruntime, onnxscript"; done | tr "\n" " ")"
} > "$out/timings.txt"
ls -la "$out"
