#!/usr/bin/env bash
# On the GPU machine: apply the doctor's plan to a copy of the Python stack
# installed there, and check again with trials.
#
#   bash bench/device-apply.sh BINARY WHEEL OUTDIR
#
# The machine has no network, so the wheel the plan's pip command would
# install is carried in and unpacked the way pip installs it. The copy
# links every other entry of the original site-packages, so torch,
# onnxruntime and the rest are the machine's own.
set -u
bin=$1 wheel=$2 out=$3
mkdir -p "$out"
py=${PYTHON:-$(command -v python3)}
base=$("$py" -c 'import sys; print(sys._base_executable)')
site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
name=$(basename "$wheel" | cut -d- -f1)
copy=$(mktemp -d)/applied

"$bin" --version > "$out/version.txt" 2>&1
timeout 120 "$bin" -v --python "$py" > "$out/before.txt" 2>&1; echo "exit $?" >> "$out/before.txt"
timeout 120 "$bin" --format json --python "$py" > "$out/before.json" 2> "$out/before.err"

"$base" -m venv --without-pip "$copy"
new=$("$copy/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
for entry in "$site"/*; do
  e=$(basename "$entry")
  case "$e" in "$name"|"$name"-*.dist-info) continue ;; esac
  ln -s "$entry" "$new/$e"
done
"$base" -m zipfile -e "$wheel" "$new"
echo "replaced $name in a copy of $site by $(basename "$wheel")" > "$out/applied.txt"

timeout 120 "$bin" -v --python "$copy/bin/python" > "$out/after.txt" 2>&1; echo "exit $?" >> "$out/after.txt"
timeout 120 "$bin" --format json --python "$copy/bin/python" > "$out/after.json" 2> "$out/after.err"
"$base" - "$out" <<'PY'
import json, sys
out = sys.argv[1]
def codes(f):
    try:
        return sorted((x["severity"], x["code"]) for x in json.load(open(f"{out}/{f}"))["findings"])
    except Exception as e:
        return [("unreadable", str(e))]
before, after = codes("before.json"), codes("after.json")
print("before:", before)
print("after: ", after)
print("gone:  ", [c for c in before if c not in after])
print("new:   ", [c for c in after if c not in before])
PY
