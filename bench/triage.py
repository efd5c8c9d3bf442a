#!/usr/bin/env python3
"""What the triage bot would post on the ticket corpus (tests/fixtures/tickets).

Runs `onnx-doctor diagnose TICKET --reply` on every ticket, as the bot does on
an issue's text, and counts per part (`dev`, `test`; tests/tickets.rs splits
them by a hash of the source URL) and per `--fail-on` level:

- replies: tickets that get a comment at all;
- on environment tickets: replies naming an expected cause (a finding in
  `expect:` among those the reply shows), replies that only ask (a symptom's
  likely causes and what to paste back), replies with an error that is in
  neither `expect:` nor `also:` (wrong);
- on not-environment tickets: replies at all, and replies that blame the
  installation (a finding whose rule's cause is `environment`, which the
  ticket's thread says was not the cause).

    python3 bench/triage.py [--binary target/release/onnx-doctor]
"""

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORDER = ["info", "warning", "error"]


def part(source):
    h = 0xCBF29CE484222325
    for b in source.rstrip("/").encode():
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "test" if h % 3 == 0 else "dev"


def tickets():
    for path in sorted(glob.glob(os.path.join(ROOT, "tests/fixtures/tickets/*.txt"))):
        head, _, body = open(path, encoding="utf-8").read().partition("\n---\n")
        fields = dict(line.split(":", 1) for line in head.splitlines() if ":" in line)
        fields = {k.strip(): v.strip() for k, v in fields.items()}
        codes = lambda k: {c.strip() for c in fields.get(k, "").split(",") if c.strip()}
        yield os.path.basename(path), fields["cause"], part(fields["source"]), codes("expect"), codes("also"), body


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(ROOT, "target/release/onnx-doctor"))
    ap.add_argument("--list", action="store_true", help="name the tickets behind each count")
    args = ap.parse_args()
    rules = json.loads(subprocess.run([args.binary, "rules", "--format", "json"], capture_output=True,
                                      check=True, text=True).stdout)
    cause = {r["code"]: r.get("cause", "environment") for r in rules}
    for level in ("error", "warning"):
        score = {}
        for name, kind, where, expect, also, body in tickets():
            with tempfile.TemporaryDirectory() as tmp:
                text, report = os.path.join(tmp, "t.txt"), os.path.join(tmp, "r.json")
                open(text, "w", encoding="utf-8").write(body)
                run = subprocess.run([args.binary, "diagnose", text, "--reply", "--fail-on", level, "--json", report],
                                     capture_output=True, text=True, timeout=60)
                if run.returncode not in (0, 1):
                    sys.exit("%s: exit %d\n%s" % (name, run.returncode, run.stderr))
                findings = json.load(open(report)).get("findings", [])
            shown = [f for f in findings if ORDER.index(f["severity"]) >= ORDER.index(level) or f.get("likely")]
            s = score.setdefault(where, {k: [] for k in (
                "env", "env_replied", "env_right", "env_asked", "env_wrong", "other", "other_replied",
                "other_blamed")})
            posted = run.returncode == 1
            codes = {f["code"] for f in shown}
            if kind == "environment":
                s["env"].append(name)
                if posted:
                    s["env_replied"].append(name)
                    if codes & expect:
                        s["env_right"].append(name)
                    elif all(f.get("likely") for f in shown):
                        s["env_asked"].append(name)
                    if any(f["severity"] == "error" and f["code"] not in expect | also for f in shown):
                        s["env_wrong"].append(name)
            else:
                s["other"].append(name)
                if posted:
                    s["other_replied"].append(name)
                    if any(cause.get(f["code"]) == "environment" and not f.get("likely") for f in shown):
                        s["other_blamed"].append(name)
        for where in ("dev", "test"):
            s = score[where]
            n = {k: len(v) for k, v in s.items()}
            print("post-at %-7s %-4s environment tickets %3d: replied %3d, naming the cause %3d, only asking %3d, "
                  "with a wrong error %d | other tickets %3d: replied %2d, blaming the installation %d" % (
                      level, where, n["env"], n["env_replied"], n["env_right"], n["env_asked"], n["env_wrong"],
                      n["other"], n["other_replied"], n["other_blamed"]))
            if args.list:
                for k in ("env_wrong", "other_replied", "other_blamed"):
                    if s[k]:
                        print("    %s: %s" % (k, " ".join(s[k])))


if __name__ == "__main__":
    main()
