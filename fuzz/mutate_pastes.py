#!/usr/bin/env python3
"""Mutation fuzzing of `onnx-doctor diagnose` through the binary, for
machines without cargo-fuzz: the real tickets of tests/fixtures/tickets,
cut, spliced, repeated and salted with hostile fragments, piped in as pastes.
Any exit other than 0-3, or a run over 10 s, is saved for a regression test.

    fuzz/mutate_pastes.py BINARY [SECONDS] [SEED]

Prints the runs, the failures, and the worst time per MB of paste.
"""
import glob, os, random, subprocess, sys, tempfile, time

binary = sys.argv[1] if len(sys.argv) > 1 else sys.exit(__doc__)
seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 240
random.seed(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
here = os.path.dirname(os.path.abspath(__file__))
bodies = [
    open(f, "rb").read().split(b"\n---\n", 1)[-1]
    for f in glob.glob(os.path.join(here, "..", "tests", "fixtures", "tickets", "*.txt"))
]
hostile = [
    b"\xff\xfe", b"\x00", b"\r", b"\xe2\x80\xae", b"**" * 500, b"| " * 3000,
    b"JetPack 9999999999999999999.1", b"nvcr.io/nvidia/pytorch:99.99-py3", b"L4T R" + b"3" * 50,
    b"torch==" + b"9" * 400, b"ONNX: " + b"1." * 2000, b"Python version: Python",
    b"\nBefore:\n", b"\nAfter:\n", b"\n**Machine A**\n", b"\nWorking: torch 1.11, onnx 1.16\n",
    b"onnx 1.16.0 requires protobuf>=3.20.2, but you have protobuf 3.19.6 which is incompatible.",
    b"ERROR: a 1 has requirement " + b"(" * 300 + b", but you'll have b 2 which is incompatible.",
    b"I installed both onnxruntime and onnxruntime-gpu", b"torch: 1.0 -> 2.0 -> \xe2\x86\x92 3.0",
    b"Could not find a version that satisfies the requirement x (from " + b"(" * 200 + b" (from versions: )",
    b"Exporting the operator 'aten::fft_fft' to ONNX opset version 99999999999999999999 is not supported.",
]
out = tempfile.mkdtemp(prefix="onnx-doctor-fuzz-")
worst, runs, failures = 0.0, 0, 0
deadline = time.time() + seconds
while time.time() < deadline:
    a = bytearray(random.choice(bodies))
    for _ in range(random.randint(1, 20)):
        op, pos = random.random(), random.randint(0, len(a))
        if op < 0.3 and a:
            a[random.randrange(len(a))] = random.randrange(256)
        elif op < 0.6:
            a[pos:pos] = random.choice(hostile)
        elif op < 0.8:
            a[pos:pos] = random.choice(bodies)[: random.randint(0, 400)]
        else:
            del a[pos : pos + random.randint(0, 50)]
    if random.random() < 0.05:
        a = a * random.randint(2, 200)
    fmt = random.choice(["json", "text", "markdown"])
    t = time.time()
    try:
        p = subprocess.run([binary, "diagnose", "-", "--format", fmt], input=bytes(a), capture_output=True, timeout=10)
    except subprocess.TimeoutExpired:
        failures += 1
        open(os.path.join(out, f"hang{runs}.txt"), "wb").write(a)
        continue
    worst = max(worst, (time.time() - t) / max(1, len(a) / 1e6))
    runs += 1
    if p.returncode not in (0, 1, 2, 3):
        failures += 1
        open(os.path.join(out, f"crash{runs}.txt"), "wb").write(a)
        print("exit", p.returncode, p.stderr[-300:].decode(errors="replace"))
print(f"{runs} runs, {failures} crashes or hangs (saved in {out}), worst {worst:.3f} s per MB (or per run under 1 MB)")
