"""Lint throughput and start-up time, against peers measured in the same run.

  python bench/lint_throughput.py [-n 1000] [--repeat 3]

Peers: the bare libcst parse of the same files (sequential, and over 2 processes), and
Fixit 2 running one equivalent rule (PTO007 print-in-loop as a Fixit LintRule) with its
own defaults. Wall times are medians over --repeat runs; ratios are what the README
reports. Needs `pip install fixit` (the `bench` extra) for the Fixit peer.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

PARSE_SCRIPT = """
import sys, libcst
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
files = sorted(Path(sys.argv[1]).rglob('*.py'))
def parse(p):
    libcst.parse_module(p.read_text())
    return 1
if sys.argv[2] == '1':
    for f in files: parse(f)
else:
    with ProcessPoolExecutor(int(sys.argv[2])) as ex:
        list(ex.map(parse, files, chunksize=32))
"""


def timed(cmd, env=None, repeat=3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        times.append(time.perf_counter() - start)
        if proc.returncode not in (0, 1):
            raise SystemExit(f"{cmd[0]} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=1000, help="files in the generated corpus")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    lint = shutil.which("pypto-lint")
    if lint is None:
        raise SystemExit("pypto-lint is not installed (pip install -e .)")
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        subprocess.run([sys.executable, str(HERE / "corpus.py"), str(corpus), "-n", str(args.n), "--seed", "0"],
                       check=True, stdout=subprocess.DEVNULL)
        files = list(corpus.rglob("*.py"))
        lines = sum(p.read_text().count("\n") for p in files)
        print(f"corpus: {len(files)} files, {lines} lines, {os.cpu_count()} cores")

        results = {}
        results["pypto-lint"] = timed([lint, "--exit-zero", "--output-format", "concise", "-q", str(corpus)],
                                      repeat=args.repeat)
        results["libcst parse (1 process)"] = timed([sys.executable, "-c", PARSE_SCRIPT, str(corpus), "1"],
                                                    repeat=args.repeat)
        results["libcst parse (2 processes)"] = timed([sys.executable, "-c", PARSE_SCRIPT, str(corpus), "2"],
                                                      repeat=args.repeat)
        fixit = shutil.which("fixit")
        if fixit:
            env = dict(os.environ, PYTHONPATH=str(HERE / "fixit_peer"))
            results["fixit, 1 rule"] = timed([fixit, "--rules", "pto_peer_rules", "lint", str(corpus)],
                                             env=env, repeat=args.repeat)

        # start-up: one clean file, and --version
        one = Path(tmp) / "one.py"
        one.write_text(files[0].read_text())
        results["pypto-lint --version"] = timed([lint, "--version"], repeat=10)
        results["pypto-lint one file"] = timed([lint, "--exit-zero", str(one)], repeat=10)
        results["python -c pass"] = timed([sys.executable, "-c", "pass"], repeat=10)

    width = max(map(len, results))
    for name, seconds in results.items():
        print(f"{name:<{width}}  {seconds:8.3f} s")
    lint_t = results["pypto-lint"]
    print()
    print(f"pypto-lint / libcst parse, 1 process : {lint_t / results['libcst parse (1 process)']:.2f}x (goal <= 1.5x)")
    print(f"pypto-lint / libcst parse, 2 processes: {lint_t / results['libcst parse (2 processes)']:.2f}x")
    if "fixit, 1 rule" in results:
        print(f"fixit / pypto-lint                     : {results['fixit, 1 rule'] / lint_t:.1f}x faster (goal >= 2x)")
    print(f"start-up: --version {results['pypto-lint --version']:.3f} s, one file "
          f"{results['pypto-lint one file']:.3f} s (goal < 0.3 s; bare interpreter "
          f"{results['python -c pass']:.3f} s)")


if __name__ == "__main__":
    main()
