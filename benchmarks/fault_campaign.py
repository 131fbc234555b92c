"""Fault campaign: stop, kill and starve `chessscan analyze` at random points and check what
is left on disk.

Each trial runs `chessscan analyze` on a generated input (the Lichess sample repeated) and
  * sends SIGINT, SIGTERM or SIGHUP to the whole process group after a random delay
    (`--jobs 1`, `--jobs 2`, `--dask local`), or to the main process only, as a supervisor or
    Kubernetes does (`signal-main:1`, `signal-main:2`), or
  * SIGKILLs one worker process after a random delay (`--jobs 2`), or
  * writes to a small tmpfs of a random size (needs root to mount it), or
  * writes into a folder holding the user's own table-named files.
Then it checks: the exit status (0, 128+N, 3 for a killed worker, 4 for a full disk, 2 for a
refused folder), no traceback on stderr, every table file readable (Parquet footer, CSV parse)
or absent, no `*.partial` file beside a summary.json, summary.json only when the run
succeeded, the user's files untouched, and no process of the run left behind.

    python benchmarks/fault_campaign.py --trials 20 [--seed 1] [--skip-dask]

Prints one line per trial and the counts per kind and outcome; exit 1 if any check failed.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "samples" / "lichess-magnus-300.pgn"
CHESSSCAN = [sys.executable, "-m", "chessscan", "analyze"]


def marked(mark: str) -> list[int]:
    """Processes carrying CAMPAIGN_MARK=mark in their environment (the run's tree)."""
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit() and int(d.name) != os.getpid():
            try:
                if f"CAMPAIGN_MARK={mark}".encode() in (d / "environ").read_bytes().split(b"\0"):
                    found.append(int(d.name))
            except OSError:
                pass
    return found


def children(pid: int) -> list[int]:
    """Child processes of ``pid``, whichever of its threads started them."""
    found = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                found += [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                pass
    except OSError:
        pass
    return found


def check_folder(out: Path, succeeded: bool, user_file: Path | None = None) -> list[str]:
    problems = []
    if not out.is_dir():
        return problems
    entries = sorted(out.rglob("*"))
    has_summary = (out / "summary.json").exists() and out / "summary.json" != user_file
    if has_summary != succeeded:
        problems.append(f"summary.json {'present' if has_summary else 'absent'} after "
                        f"{'success' if succeeded else 'failure'}")
    for p in entries:
        if p == user_file:
            continue
        if p.name.endswith(".partial"):
            if has_summary:
                problems.append(f"{p.name} beside summary.json")
            continue
        try:
            if p.suffix == ".parquet":
                pq.read_metadata(p)
            elif p.suffix == ".csv":
                pd.read_csv(p)
        except Exception as exc:  # noqa: BLE001 - any unreadable table is the finding
            problems.append(f"{p.relative_to(out)} unreadable: {type(exc).__name__}")
    return problems


def trial(kind: str, rng: random.Random, work: Path, big: Path, n: int) -> tuple[str, list[str]]:
    out = work / f"out{n}"
    mark = f"{os.getpid()}-{n}"
    env = dict(os.environ, CAMPAIGN_MARK=mark)
    args = [*CHESSSCAN, str(big), "-o", str(out), "--silent", "--cross-check", "off"]
    mount = None
    user_file = None
    sig = None
    if kind.startswith("signal"):
        sig = rng.choice([signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
        mode = kind.split(":")[1]
        main_only = kind.startswith("signal-main")
        args += ["--dask", "local", "--jobs", "2"] if mode == "dask" else ["--jobs", mode]
    elif kind == "kill-worker":
        args += ["--jobs", "2"]
    elif kind == "full-disk":
        mount = work / f"small{n}"
        mount.mkdir()
        size = rng.choice([64, 200, 400, 800, 1600])
        if subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}k", "tmpfs", str(mount)]).returncode:
            return "skipped (cannot mount a tmpfs)", []
        out = mount / "r"
        fmt = rng.choice(["parquet", "csv"])
        args = [*CHESSSCAN, str(big), "-o", str(out), "--silent", "--cross-check", "off",
                "--format", fmt, "--jobs", rng.choice(["1", "2"])]
        kind = f"full-disk:{size}k:{fmt}"
    elif kind == "foreign":
        out.mkdir()
        user_file = out / rng.choice(["games.csv", "positions.parquet", "summary.json", "issues.jsonl"])
        user_file.write_text("the user's own file\n")
        args += ["--jobs", "1"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            start_new_session=True)
    delay = rng.uniform(0.3, 4.0)
    if kind == "kill-worker":
        # wait for the pool's first worker, then a random moment of its work
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None and not any(
                children(p) for p in children(proc.pid)):
            time.sleep(0.05)
    if sig is not None or kind == "kill-worker":
        time.sleep(delay)
        if proc.poll() is None:
            if sig is not None:
                if main_only:
                    os.kill(proc.pid, sig)
                else:
                    os.killpg(proc.pid, sig)
            else:
                # a worker: a child of the forkserver (itself a child of the main process)
                servers = [p for p in children(proc.pid)
                           if b"forkserver" in Path(f"/proc/{p}/cmdline").read_bytes()]
                victims = [w for p in servers for w in children(p)]
                if victims:
                    os.kill(rng.choice(victims), signal.SIGKILL)
    try:
        _, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        dump = shutil.which("py-spy")
        if dump:  # where it hangs, for the bug report
            for pid in [proc.pid, *marked(mark)]:
                done = subprocess.run([dump, "dump", "--pid", str(pid)], capture_output=True, text=True)
                print(f"--- stacks of {pid}:\n{done.stdout}{done.stderr}", file=sys.stderr)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        label = kind if sig is None else f"{kind}:{signal.Signals(sig).name}"
        return f"{label}: HANG", ["did not exit within 120 s"]
    err = err.decode("utf-8", "replace")
    time.sleep(0.5)
    problems = []
    left = marked(mark)
    if left:
        problems.append(f"{len(left)} processes left")
        for p in left:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
    status = proc.returncode
    if sig is not None and status == -sig and not out.exists():
        # The signal came while Python was still importing, before chessscan could handle
        # it: nothing was written. Python prints its own KeyboardInterrupt traceback then.
        return f"{kind}:{signal.Signals(sig).name}: stopped at start-up (exit {status})", []
    if "Traceback" in err:
        problems.append("traceback: " + err.strip().splitlines()[-1][:120])
    if "leaked" in err:
        problems.append("leaked resources warning")
    expected = {0}
    if sig is not None:
        expected.add(128 + sig)
    if kind == "kill-worker":
        expected.add(3)
    if kind.startswith("full-disk"):
        expected.add(4)
    if kind == "foreign":
        expected = {2}
        if user_file.read_text() != "the user's own file\n":
            problems.append("the user's file changed")
    if status not in expected:
        problems.append(f"exit {status} not in {sorted(expected)}: {err.strip()[-200:]}")
    problems += check_folder(out, status == 0, user_file)
    if mount is not None:
        subprocess.run(["umount", str(mount)])
    label = f"{kind}{'' if sig is None else ':' + signal.Signals(sig).name}"
    return f"{label}: exit {status}", problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20, help="trials per kind")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--copies", type=int, default=60, help="copies of the sample in the input")
    ap.add_argument("--skip-dask", action="store_true")
    ap.add_argument("--only", metavar="KIND", help="one kind: signal:1, signal:2, signal:dask, "
                                                   "signal-main:1, signal-main:2, kill-worker, "
                                                   "full-disk or foreign")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    kinds = ["signal:1", "signal:2", "signal-main:2", "kill-worker", "full-disk", "foreign"]
    if not args.skip_dask:
        kinds.append("signal:dask")
    if args.only:
        kinds = [args.only]
    counts: collections.Counter = collections.Counter()
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        big = work / "big.pgn"
        big.write_bytes(b"\n".join([SAMPLE.read_bytes()] * args.copies))
        n = 0
        for kind in kinds:
            for _ in range(args.trials):
                n += 1
                label, problems = trial(kind, rng, work, big, n)
                kind_name, _, outcome = label.rpartition(": ")
                if kind_name.startswith("full-disk"):
                    kind_name = "full-disk:" + kind_name.rsplit(":", 1)[-1]  # by format
                counts[f"{kind_name}: {outcome}"] += 1
                print(f"{n:4d} {label}{'  PROBLEMS: ' + '; '.join(problems) if problems else ''}", flush=True)
                failed += bool(problems)
    print("\ncounts (kind, exit status):")
    for key, value in sorted(counts.items()):
        print(f"  {key:40s} {value}")
    print(f"\n{n} trials, {failed} with problems")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
