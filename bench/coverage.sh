#!/usr/bin/env bash
# How many released versions of each component the matrix covers.
#
# Asks the package registry (through pip) for every release of the packages
# the matrix has tables for, keeps those in the matrix's stated range, and
# prints per table the releases some row covers and the ones none does.
# Needs network access; nothing is installed.
set -euo pipefail
cd "$(dirname "$0")/.."

# table  package  lowest release the matrix promises to cover
specs=(
  "torch-releases torch 1.2.0"
  "onnx-releases onnx 1.5.0"
  "onnxruntime-releases onnxruntime 1.0.0"
  "onnxruntime-gpu-builds onnxruntime-gpu 1.0.0"
  "cudnn-releases nvidia-cudnn-cu12 0"
  "cudnn-releases nvidia-cudnn-cu13 0"
  "torch-cuda-arch torch 1.2.0"
  "cudnn-cuda nvidia-cudnn-cu12 0"
  "tensorrt-gpus tensorrt 0"
  "tensorrt-cuda tensorrt 0"
  "tensorrt-releases tensorrt 0"
  "tensorrt-onnx-ops tensorrt 0"
  "ctranslate2-builds ctranslate2 1.20.0"
  "faster-whisper-builds faster-whisper 0"
)

# pip lists only the releases with a wheel for the Python it is asked about,
# so ask for every CPython from 3.5 on, on Linux x86_64, and merge.
releases() { # package → versions, oldest first, final releases only
  {
  for py in 3.5 3.6 3.7 3.8 3.9 3.10 3.11 3.12 3.13 3.14 3.15; do
    { python3 -m pip index versions "$1" --python-version "$py" --only-binary :all: \
      --platform manylinux1_x86_64 --platform manylinux2014_x86_64 \
      --platform manylinux_2_17_x86_64 --platform manylinux_2_27_x86_64 \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_34_x86_64 2>/dev/null || true; } |
      sed -n 's/^Available versions: //p' | tr ',' '\n' | tr -d ' '
  done
  # and whatever this interpreter can install, source distributions included
  { python3 -m pip index versions "$1" 2>/dev/null || true; } | sed -n 's/^Available versions: //p' | tr ',' '\n' | tr -d ' '
  } | { grep -Ev '(a|b|rc|dev)[0-9]*$' || true; } | sort -uV
}

cargo build --quiet --release --example coverage
for spec in "${specs[@]}"; do
  read -r table package lowest <<<"$spec"
  releases "$package" | while read -r v; do
    if [ "$(printf '%s\n%s\n' "$lowest" "$v" | sort -V | head -1)" = "$lowest" ]; then
      echo "$table $v"
    fi
  done
done | target/release/examples/coverage
