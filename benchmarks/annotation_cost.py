"""CPU cost of the positions run with the clock / evaluation columns, against a checkout without
them (run by hand).

    python benchmarks/annotation_cost.py --baseline CHECKOUT [PATH] [--repeat N]

Runs ``python -m chessscan analyze PATH --positions all --cross-check off --jobs 1`` (Parquet
tables to a temporary folder) with this checkout's chessscan and with ``CHECKOUT``'s (a
checkout built in place from before the ``clock_ms`` / ``emt_ms`` / ``eval_cp`` /
``eval_mate`` columns), in turn, ``N`` times each (default 3), and prints each side's CPU time
(user + sys of the process, start-up included), the median of each, and their ratio. PATH
defaults to ``data/samples/lichess-magnus-300.pgn.zst`` (a clock and an evaluation on almost
every ply). CPU time, not wall time: the machine may be shared.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_INPUT = REPO / "data" / "samples" / "lichess-magnus-300.pgn.zst"


def cpu_of_run(checkout: Path, path: str, out: Path) -> float:
    """CPU seconds (user + sys) of one positions run with ``checkout``'s chessscan."""
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, PYTHONPATH=str(checkout))
    env.pop("CHESSSCAN_PURE", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "chessscan", "analyze", path, "-o", str(out), "--positions", "all",
                           "--cross-check", "off", "--jobs", "1", "--silent"], env=env, capture_output=True,
                          cwd=checkout)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: exit {done.returncode}\n{done.stderr.decode(errors='replace')[-2000:]}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", nargs="?", default=str(DEFAULT_INPUT), help="PGN input (default: %(default)s)")
    ap.add_argument("--baseline", type=Path, required=True, help="a checkout without the annotation columns")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each side, in turn (default 3)")
    args = ap.parse_args(argv)
    path = str(Path(args.path).resolve())
    sides = {"without (baseline)": args.baseline.resolve(), "with (this checkout)": REPO}
    times: dict[str, list[float]] = {name: [] for name in sides}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            for name, checkout in sides.items():
                times[name].append(cpu_of_run(checkout, path, Path(tmp) / "out"))
        import pyarrow.parquet as pq

        positions = pq.read_table(Path(tmp) / "out" / "positions.parquet", columns=["clock_ms", "eval_cp",
                                                                                   "eval_mate"])
        rows = positions.num_rows
        clocks = rows - positions.column("clock_ms").null_count
    print(f"input: {path}: {rows:,} positions, {clocks:,} with a clock")
    for name, values in times.items():
        print(f"{name:22} CPU s: {' '.join(f'{v:.2f}' for v in values)}  median {statistics.median(values):.2f}")
    base, new = (statistics.median(v) for v in times.values())
    print(f"with / without: {new / base:.3f} ({(new / base - 1) * 100:+.1f}% CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
