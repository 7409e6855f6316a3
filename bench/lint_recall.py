#!/usr/bin/env python3
"""Recall and precision of pypto-lint on a labelled set of kernels written apart from the rules.

    python bench/lint_recall.py DIR [--codes PTO001-PTO014] [--slack 2] [--json OUT]

DIR holds kernel files and ``labels.json``: ``{"file.py": [{"code": "PTO001", "line": 12}, ...]}``
(an empty list: a clean file, every finding on it a false alarm).  A finding matches a label of the
same code within ``--slack`` lines (a multi-line statement is reported at its first line, a label
may name another of its lines).  Only the codes in ``--codes`` count.  Per code and overall: true
positives, misses (label without finding), false alarms (finding without label), recall, precision;
then every miss and false alarm with its line.

A label may carry ``"overruled": "why"``: a label its writer gave that a later review, by someone who
had not written the rules, found wrong against pypto's own behaviour (the evidence is in the set's
README).  It stays in the file as written and is counted apart: the table is over the labels that
stand, and a last line gives recall and precision as labelled (overruled labels counted as labels,
their findings none).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def code_range(text: str) -> set:
    codes = set()
    for part in text.split(","):
        a, _, b = part.strip().partition("-")
        lo, hi = int(a[3:]), int((b or a)[3:])
        codes |= {f"PTO{n:03d}" for n in range(lo, hi + 1)}
    return codes


def findings(directory: Path, files: list) -> dict:
    """{file: [(code, line)]} from pypto-lint's JSON output."""
    done = subprocess.run([sys.executable, "-m", "pypto_ast.cli.lint", "--output-format", "json",
                           *[str(directory / f) for f in files]], capture_output=True, text=True,
                          cwd=ROOT)
    out: dict = {f: [] for f in files}
    try:
        rows = json.loads(done.stdout or "[]")
    except ValueError:
        raise SystemExit(f"pypto-lint gave no JSON:\n{done.stdout}\n{done.stderr}")
    for row in rows:
        name = Path(row.get("filename") or row.get("path") or "").name
        code = row.get("code")
        line = (row.get("location") or {}).get("row") or (row.get("span") or {}).get("start", {}).get("line")
        if name in out and code and line:
            out[name].append((code, int(line)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory", type=Path)
    ap.add_argument("--codes", default="PTO001-PTO014")
    ap.add_argument("--slack", type=int, default=2, help="lines a finding may be from its label (default 2)")
    ap.add_argument("--json", dest="json_out")
    ns = ap.parse_args(argv)
    labels = json.loads((ns.directory / "labels.json").read_text(encoding="utf-8"))
    codes = code_range(ns.codes)
    found = findings(ns.directory, sorted(labels))
    stats: dict = {c: {"tp": 0, "miss": 0, "false": 0} for c in sorted(codes)}
    misses, alarms, overruled = [], [], []
    for name in sorted(labels):
        overruled += [f"{name}:{lab['line']} {lab['code']}" for lab in labels[name]
                      if lab["code"] in codes and lab.get("overruled")]
        want = [(lab["code"], int(lab["line"])) for lab in labels[name] if lab["code"] in codes
                and not lab.get("overruled")]
        got = [(c, line) for c, line in found[name] if c in codes]
        used = set()
        for code, line in want:
            hit = next((i for i, (c, l) in enumerate(got) if c == code and abs(l - line) <= ns.slack and i not in used),
                       None)
            if hit is None:
                stats[code]["miss"] += 1
                misses.append(f"{name}:{line} {code}")
            else:
                used.add(hit)
                stats[code]["tp"] += 1
        for i, (code, line) in enumerate(got):
            if i not in used:
                stats[code]["false"] += 1
                alarms.append(f"{name}:{line} {code}")
    total = {k: sum(s[k] for s in stats.values()) for k in ("tp", "miss", "false")}

    def ratio(a, b):
        return f"{a / b:.2f}" if b else "-"

    print(f"{'code':8} {'tp':>4} {'miss':>5} {'false':>6} {'recall':>7} {'precision':>9}")
    for code, s in stats.items():
        if any(s.values()):
            print(f"{code:8} {s['tp']:4} {s['miss']:5} {s['false']:6} {ratio(s['tp'], s['tp'] + s['miss']):>7} "
                  f"{ratio(s['tp'], s['tp'] + s['false']):>9}")
    print(f"{'all':8} {total['tp']:4} {total['miss']:5} {total['false']:6} "
          f"{ratio(total['tp'], total['tp'] + total['miss']):>7} {ratio(total['tp'], total['tp'] + total['false']):>9}")
    if overruled:
        # as labelled: every overruled label a miss (PTO-lint is silent on each, as the review says it should be)
        tp, miss = total["tp"], total["miss"] + len(overruled)
        print(f"as labelled, with the {len(overruled)} overruled label(s): recall {ratio(tp, tp + miss)}, "
              f"precision {ratio(tp, tp + total['false'])}")
    for line in misses:
        print(f"miss   {line}")
    for line in overruled:
        print(f"overruled {line}")
    for line in alarms:
        print(f"false  {line}")
    if ns.json_out:
        Path(ns.json_out).write_text(json.dumps({"stats": stats, "misses": misses, "false": alarms, "overruled": overruled}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
