"""What `chessscan analyze FILE.pgn.zst --dask` costs the client and each worker, against
`--jobs 2` on the same file (run by hand).

    python benchmarks/dask_stream.py [PATH] [--workers 2] [--shard-size 8M] [--runs 1]

PATH defaults to ``<repo>/../shared/data/games/lichess-magnus.pgn.zst``. A ``dask scheduler``
and ``--workers`` one-thread ``dask worker --no-nanny`` processes are started here on
127.0.0.1 (and ended by pid); then, in turn, the command a user types runs in a fresh
interpreter: ``chessscan analyze PATH -o OUT --dask ADDRESS --shard-size SIZE --cross-check
off --silent`` (the client reads and decompresses the file, cuts it at game starts and sends
the chunks), and ``--jobs 2`` (:func:`scaling.measure`). Per run it prints the wall time, the
CPU of the client (``getrusage``, imports excluded; its threads as ``/proc`` tells) or of the
``--jobs`` main process, the CPU each worker process used during the run (``/proc/PID/stat``
before and after) and how many chunks it analyzed (the scheduler's task stream), all per
position too; and the tables of the two runs compared value for value.

CPU figures count this run's processes only; wall times on a shared machine count the others
too (the load average is printed).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scaling  # noqa: E402  (benchmarks/scaling.py: measure, TreeSampler, _stat_fields)

REPO = scaling.REPO
DASK = [sys.executable, "-m", "dask"]


def side(args) -> None:
    """Run the Dask command in this process and print what it cost as JSON, with the
    scheduler's record of which worker ran which task."""
    import chessscan.cli as cli  # (imports not timed)
    import distributed

    argv = ["analyze", args.input, "-o", args.out, "--dask", args.address, "--shard-size", args.shard_size,
            "--cross-check", "off", "--silent"]
    with distributed.Client(args.address, set_as_default=False) as client:
        with distributed.get_task_stream(client) as stream:
            usage0 = resource.getrusage(resource.RUSAGE_SELF)
            t0 = time.perf_counter()
            status = 0
            try:
                cli.main(argv, standalone_mode=True)
            except SystemExit as exc:
                status = exc.code or 0
            wall = time.perf_counter() - t0
            usage = resource.getrusage(resource.RUSAGE_SELF)
        tasks: dict[str, int] = {}
        for t in stream.data:
            if str(t["key"]).startswith("analyze_shard-"):
                tasks[t["worker"]] = tasks.get(t["worker"], 0) + 1
    summary = json.loads((Path(args.out) / "summary.json").read_text()) if status == 0 else {}
    print(json.dumps({"status": status, "wall": wall,
                      "main_cpu": (usage.ru_utime - usage0.ru_utime) + (usage.ru_stime - usage0.ru_stime),
                      "tasks": tasks, "positions": summary.get("positions", 0), "games": summary.get("games_read", 0),
                      "main_rss_mib": usage.ru_maxrss / 1024}))


def _cpu(pid: int) -> float:
    fields = scaling._stat_fields(pid)
    return (int(fields[11]) + int(fields[12])) / scaling.TICK if fields else 0.0


class Cluster:
    """A scheduler and ``n`` one-thread workers (no nanny: the worker is the process whose
    CPU is read) on 127.0.0.1, each in a process group of its own, ended by pid."""

    def __init__(self, folder: str, n: int) -> None:
        self.procs: list[subprocess.Popen] = []
        try:
            self._start_all(folder, n)
        except BaseException:
            self.stop()
            raise

    def _start_all(self, folder: str, n: int) -> None:
        env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        sched_file = os.path.join(folder, "scheduler.json")
        self._start([*DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address",
                     "127.0.0.1:0", "--scheduler-file", sched_file], env, folder, "scheduler")
        deadline = time.monotonic() + 60
        while not (os.path.exists(sched_file) and os.path.getsize(sched_file)):
            if time.monotonic() > deadline:
                raise SystemExit("the scheduler did not start")
            time.sleep(0.1)
        with open(sched_file) as f:
            self.address = json.load(f)["address"]
        self.workers = [self._start([*DASK, "worker", "--scheduler-file", sched_file, "--host", "127.0.0.1",
                                     "--nthreads", "1", "--no-nanny", "--no-dashboard"], env, folder, f"worker{i}")
                        for i in range(n)]
        import distributed

        with distributed.Client(self.address, set_as_default=False, timeout=60) as client:
            client.wait_for_workers(n, timeout=60)
            pids = client.run(os.getpid)  # address -> pid
        self.addresses = {pid: a for a, pid in pids.items()}

    def _start(self, cmd, env, folder, name) -> subprocess.Popen:
        log = open(os.path.join(folder, f"{name}.log"), "wb")
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=folder,
                                start_new_session=True)
        log.close()
        self.procs.append(proc)
        return proc

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def measure_dask(path: str, cluster: Cluster, shard_size: str, out: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    before = {p.pid: _cpu(p.pid) for p in cluster.workers}
    cmd = [sys.executable, __file__, "--side", "--side-out", out, "--address", cluster.address, "--shard-size",
           shard_size, path]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
    with scaling.TreeSampler(proc.pid) as sampler:
        text, errors = proc.communicate()
    if proc.returncode:
        raise SystemExit(f"the run failed (exit {proc.returncode}): {errors.decode(errors='replace')}")
    result = json.loads(text)
    threads = sampler.by_name()
    others = sum(cpu for name, cpu in threads.items() if name != "main thread")
    threads["main thread"] = max(0.0, result["main_cpu"] - others)
    result["threads"] = threads
    result["workers_cpu"] = {p.pid: _cpu(p.pid) - before[p.pid] for p in cluster.workers}
    return result


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("input", nargs="?", default=str(scaling.DEFAULT_INPUT))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--shard-size", default="8M")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--side", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--side-out", help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.side:
        args.out = args.side_out
        side(args)
        return
    folder = tempfile.mkdtemp(prefix="chessscan-dask-stream-")
    cluster = Cluster(folder, args.workers)
    try:
        print(f"input: {args.input} ({os.path.getsize(args.input):,} bytes); {args.workers} workers; "
              f"--shard-size {args.shard_size}; load average {os.getloadavg()[0]:.2f}")
        for run in range(args.runs):
            out = os.path.join(folder, f"dask{run}")
            d = measure_dask(args.input, cluster, args.shard_size, out)
            n = d["positions"]
            per = lambda s: f"{s / n * 1e6:.3f} µs"  # noqa: E731
            threads = ", ".join(f"{k} {v:.2f} s" for k, v in d["threads"].items())
            print(f"--dask: exit {d['status']}, {d['games']:,} games, {n:,} positions, wall {d['wall']:.2f} s; "
                  f"client CPU {d['main_cpu']:.2f} s ({per(d['main_cpu'])} a position; {threads}), "
                  f"peak RSS of the client {d['main_rss_mib']:.0f} MiB")
            for pid, cpu in d["workers_cpu"].items():
                address = cluster.addresses.get(pid, "?")
                print(f"  worker {address} (pid {pid}): CPU {cpu:.2f} s ({per(cpu)} a position), "
                      f"{d['tasks'].get(address, 0)} tasks")
            j = scaling.measure(args.input, 2)
            n2 = j["positions"]
            threads = ", ".join(f"{k} {v:.2f} s" for k, v in j["threads"].items())
            print(f"--jobs 2: exit {j['status']}, {n2:,} positions, wall {j['wall']:.2f} s; main process CPU "
                  f"{j['main_cpu']:.2f} s ({j['main_cpu'] / n2 * 1e6:.3f} µs a position; {threads}); workers CPU "
                  f"{j['workers_cpu']:.2f} s ({j['workers_cpu'] / n2 * 1e6:.3f} µs a position)")
        local = os.path.join(folder, "local")
        subprocess.run([sys.executable, "-m", "chessscan", "analyze", args.input, "-o", local, "--jobs", "1",
                        "--cross-check", "off", "--silent"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env=dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")))
        import pandas as pd

        import chessscan

        want, got = chessscan.read_report(local), chessscan.read_report(os.path.join(folder, "dask0"))
        for name, table in want.tables.items():
            pd.testing.assert_frame_equal(table, got.tables[name].reset_index(drop=True), check_exact=True)
        assert got.summary == want.summary
        print(f"tables and summary.json of --dask equal to --jobs 1's: "
              + ", ".join(f"{k} {len(v):,} rows" for k, v in want.tables.items()))
    finally:
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
