#!/usr/bin/env bash
# Installs onnx-doctor into PREFIX/bin (default ~/.local).
#
#   install/install.sh                   build from this checkout with cargo
#   install/install.sh --binary PATH     install a binary built elsewhere
#   install/install.sh --prefix /usr/local
#
# Idempotent: running it again replaces the binary with the same or a newer
# one. It checks that the installed binary runs before saying where it went.
set -euo pipefail

prefix="${PREFIX:-$HOME/.local}"
binary=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
    --binary) binary="${2:?--binary needs a file}"; shift 2 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

here="$(cd "$(dirname "$0")/.." && pwd)"
if [ -z "$binary" ]; then
  if ! command -v cargo >/dev/null 2>&1; then
    echo "install.sh: cargo is not installed. Install Rust (https://rustup.rs), or pass --binary PATH to install a prebuilt onnx-doctor." >&2
    exit 1
  fi
  (cd "$here" && cargo build --release --locked --quiet)
  binary="$here/target/release/onnx-doctor"
fi
if [ ! -x "$binary" ]; then
  echo "install.sh: $binary is not an executable file" >&2
  exit 1
fi

mkdir -p "$prefix/bin"
# Copy to a temporary name, then rename: a running onnx-doctor is never
# overwritten in place.
tmp="$prefix/bin/.onnx-doctor.$$"
cp "$binary" "$tmp"
chmod 755 "$tmp"
mv -f "$tmp" "$prefix/bin/onnx-doctor"

if ! version="$("$prefix/bin/onnx-doctor" --version)"; then
  echo "install.sh: the installed $prefix/bin/onnx-doctor does not run" >&2
  exit 1
fi
echo "installed $version to $prefix/bin/onnx-doctor"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "note: $prefix/bin is not on PATH; add it, e.g. export PATH=\"$prefix/bin:\$PATH\"" ;;
esac
