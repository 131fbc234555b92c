"""How `chessscan analyze --jobs N` scales, measured per process, and a Lichess month modelled
from it (run by hand).

    python benchmarks/scaling.py [PATH] [--times 10] [--jobs 1,2] [--format csv] [--no-plain]

PATH defaults to ``<repo>/../shared/data/games/lichess-magnus.pgn.zst``. The runs read PATH
itself and PATH ten times over (``--times``: its text repeated, compressed again with zstd
into a temporary ``.pgn.zst``, so that both inputs are decompressed by the main process as
a Lichess dump is), and that text as a plain ``.pgn`` (what the main process costs without
zstd; ``--no-plain``: not). Each run is the command a user types, ``chessscan analyze INPUT
-o OUT --jobs N --cross-check off --silent``, in a fresh interpreter. Per run it prints:

* wall time (from the command's start to its end, imports excluded);
* CPU time of the main process (``getrusage``), and of each of its threads, named as the
  OS names them (``/proc/PID/task/TID``: sampled every 20 ms by this script, the last value
  seen of each thread, so a thread that ends keeps what it used up to 20 ms before);
* CPU time of the workers: the forkserver's own and that of its children, which it reaps
  (``/proc/PID/stat`` ``cutime``/``cstime``, read when the run ends, before the forkserver
  exits: exact, unlike sampling);
* positions per CPU-second (all processes), and the peak RSS summed over the process tree
  (sampled every 20 ms; pages shared between processes count in each);
* per position: the main process's CPU and the workers', and the *marginal* figures: the
  difference between the long run and the short one divided by the positions added, which
  leaves out what a run pays once (imports, the pool's start, the forkserver's imports).

Then the zstd floor (the CPU of decompressing each input alone, ``zstandard``'s
``stream_reader``, in a fresh process) and the model: the wall time of a 100M-game month
(``--month-games``; the input's positions per game and PGN bytes per game) on 4, 16 and 64
cores with ``--jobs`` (the run's wall time is at least the main process's busiest thread's
work, the whole CPU over the cores, and the reading of the ``.zst`` at ``--disk-gbs``), and
on a 64-core Dask cluster: today (the month decompressed to shared storage first, one core;
then every worker reads its shards at ``--shared-gbs`` in all) and with the client
streaming the ``.zst`` to the workers (the client's main process as the local one's, the
text sent over ``--network-gbs``).

Wall times on a shared machine count the other processes too (the load average is printed);
the CPU figures do not.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_INPUT = REPO.parent / "shared" / "data" / "games" / "lichess-magnus.pgn.zst"
TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


# --- the measured run (in a fresh interpreter) ------------------------------------------------

def _stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (field 3 on), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode("ascii", "replace")
    except OSError:
        return None
    return text[text.rfind(")") + 2:].split()


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def side(args) -> None:
    """Run the command in this process and print what it cost as JSON."""
    import chessscan.cli as cli  # (imports not timed: a run pays them once)

    argv = ["analyze", args.input, "-o", args.out, "--jobs", str(args.jobs), "--cross-check", "off", "--silent"]
    if args.format != "parquet":
        argv += ["--format", args.format]
    usage0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    status = 0
    try:
        cli.main(argv, standalone_mode=True)
    except SystemExit as exc:
        status = exc.code or 0
    wall = time.perf_counter() - t0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    workers = 0.0
    helpers = {}
    for child in _children(os.getpid()):
        fields = _stat_fields(child)
        if fields is None:
            continue
        # utime, stime, cutime, cstime: fields 14-17 (11-14 here)
        own = (int(fields[11]) + int(fields[12])) / TICK
        reaped = (int(fields[13]) + int(fields[14])) / TICK
        what = _cmdline(child)
        kind = ("forkserver" if "forkserver" in what else "resource tracker" if "resource_tracker" in what
                else "other")
        helpers[kind] = helpers.get(kind, 0.0) + own
        workers += own + reaped
    summary = json.loads((Path(args.out) / "summary.json").read_text()) if status == 0 else {}
    print(json.dumps({
        "status": status, "wall": wall,
        "main_cpu": (usage.ru_utime - usage0.ru_utime) + (usage.ru_stime - usage0.ru_stime),
        "workers_cpu": workers, "helpers": helpers,
        "games": summary.get("games_read", 0), "positions": summary.get("positions", 0),
        "main_rss_mib": usage.ru_maxrss / 1024,
    }))


# --- the driver -----------------------------------------------------------------------------

class TreeSampler:
    """Samples a process tree every ``every`` seconds: the RSS summed over it (the peak is
    kept) and the CPU of each thread of the root (the last value seen per thread)."""

    def __init__(self, pid: int, every: float = 0.02) -> None:
        self.pid = pid
        self.every = every
        self.peak_rss = 0
        self.threads: dict[int, tuple[str, float]] = {}  # tid -> (name, CPU seconds)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._page = os.sysconf("SC_PAGE_SIZE")

    def _tree(self) -> list[int]:
        pids, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            pids.append(pid)
            todo.extend(_children(pid))
        return pids

    def _sample(self) -> None:
        rss = 0
        for pid in self._tree():
            try:
                with open(f"/proc/{pid}/statm") as f:
                    rss += int(f.read().split()[1]) * self._page
            except OSError:
                pass
        self.peak_rss = max(self.peak_rss, rss)
        try:
            tids = os.listdir(f"/proc/{self.pid}/task")
        except OSError:
            return
        for tid in tids:
            try:
                with open(f"/proc/{self.pid}/task/{tid}/comm") as f:
                    name = f.read().strip()
                with open(f"/proc/{self.pid}/task/{tid}/schedstat") as f:
                    cpu = int(f.read().split()[0]) / 1e9
            except OSError:
                continue
            # (Python threads are all named after the interpreter: those are the encoder,
            # pool and progress threads.)
            label = "main thread" if int(tid) == self.pid else "other threads" if name.startswith("python") else name
            self.threads[int(tid)] = (label, cpu)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self.every)

    def __enter__(self) -> "TreeSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def by_name(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for name, cpu in self.threads.values():
            out[name] = out.get(name, 0.0) + cpu
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def measure(path: str, jobs: int, fmt: str = "parquet") -> dict:
    out = tempfile.mkdtemp(prefix="chessscan-scaling-out-")
    try:
        env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        cmd = [sys.executable, __file__, "--side", "--side-out", os.path.join(out, "report"), "--side-jobs",
               str(jobs), "--format", fmt, path]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env=env)
        with TreeSampler(proc.pid) as sampler:
            text, errors = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"the run failed (exit {proc.returncode}): {cmd}\n{errors.decode(errors='replace')}")
        result = json.loads(text)
        if result["status"] != 0:
            raise SystemExit(f"chessscan exited {result['status']}: {cmd}")
        threads = sampler.by_name()
        # Imports ran on the main thread before the timed part: the main thread is given
        # what getrusage counted for the run, less the other threads' share.
        others = sum(cpu for name, cpu in threads.items() if name != "main thread")
        threads["main thread"] = max(0.0, result["main_cpu"] - others)
        result["threads"] = threads
        result["peak_rss_mib"] = sampler.peak_rss / 2**20
        return result
    finally:
        shutil.rmtree(out, ignore_errors=True)


def zstd_floor(path: str) -> float:
    """CPU seconds to decompress ``path`` alone (a fresh process, 1 MiB reads into one buffer)."""
    code = ("import resource, sys, zstandard\n"
            "f = open(sys.argv[1], 'rb')\n"
            "r = zstandard.ZstdDecompressor(max_window_size=2**31).stream_reader(f)\n"
            "b = bytearray(1 << 20)\n"
            "u0 = resource.getrusage(resource.RUSAGE_SELF)\n"
            "while r.readinto(b): pass\n"
            "u = resource.getrusage(resource.RUSAGE_SELF)\n"
            "print(u.ru_utime - u0.ru_utime + u.ru_stime - u0.ru_stime)\n")
    return float(subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True,
                                check=True).stdout)


def repeated(path: str, times: int, dest: str, plain: str | None = None) -> int:
    """Write ``path``'s text ``times`` times over to ``dest`` as one zstd frame (and to
    ``plain`` as text); the size of ``dest``."""
    import zstandard

    sys.path.insert(0, str(REPO))
    from chessscan.readers.sources import open_source

    with open(dest, "wb") as f, open(plain or os.devnull, "wb") as text:
        writer = zstandard.ZstdCompressor(level=3, threads=-1).stream_writer(f, closefd=False)
        for _ in range(times):
            with open_source(path) as src:
                while chunk := src.read(1 << 20):
                    writer.write(chunk)
                    text.write(chunk)
            writer.write(b"\n\n")  # the next copy starts a game of its own
            text.write(b"\n\n")
        writer.close()
    return os.path.getsize(dest)


def text_size(path: str) -> int:
    sys.path.insert(0, str(REPO))
    from chessscan.readers.sources import open_source

    n = 0
    with open_source(path) as src:
        while chunk := src.read(1 << 20):
            n += len(chunk)
    return n


def load() -> str:
    try:
        return "load average %.1f %.1f %.1f" % os.getloadavg()
    except OSError:
        return "load average unknown"


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)  # noqa: E731
                               for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def hours(seconds: float) -> str:
    return f"{seconds / 60:,.0f} min" if seconds < 5400 else f"{seconds / 3600:,.1f} h"


def model(runs: dict, floor_ns: float, args, per_game: float, bytes_per_game: float, ratio: float,
          small: str, big: str) -> None:
    """Print the modelled month (see the module doc): from the runs on the inputs ``small``
    and ``big`` (both .zst), marginal figures where they differ."""
    positions = args.month_games * per_game
    text = args.month_games * bytes_per_game
    packed = text / ratio
    jobs = max(j for (i, j) in runs if i == big)
    long_run, short_run = runs[(big, jobs)], runs.get((small, jobs))

    def per_position(key: str, threads: str | None = None) -> float:
        def value(r):
            return r["threads"].get(threads, 0.0) if threads else r[key]
        if short_run is not None and short_run is not long_run:
            added = long_run["positions"] - short_run["positions"]
            return (value(long_run) - value(short_run)) / added
        return value(long_run) / long_run["positions"]

    main_us = per_position("main_cpu") * 1e6
    busiest = max(long_run["threads"], key=lambda n: per_position("", n))
    thread_us = per_position("", busiest) * 1e6
    worker_us = per_position("workers_cpu") * 1e6
    print(f"\nmodel: a month of {args.month_games:,.0f} games, {per_game:.1f} positions a game "
          f"({positions / 1e9:.2f}G positions), {bytes_per_game:,.0f} bytes of PGN a game ({text / 1e9:,.0f} GB; "
          f"{packed / 1e9:,.0f} GB as .zst at this input's ratio, {ratio:.1f}x)")
    print(f"  from --jobs {jobs} on the {'marginal' if short_run is not long_run else 'long'} figures: main process "
          f"{main_us:.3f} us a position (its busiest thread, {busiest}: {thread_us:.3f} us), workers {worker_us:.3f} us; "
          f"zstd alone {floor_ns:.2f} ns a byte of text ({floor_ns * bytes_per_game / per_game / 1e3:.3f} us a position)")
    print(f"  assumptions: the .zst read at {args.disk_gbs:g} GB/s from local disk; a Dask cluster's shared "
          f"storage {args.shared_gbs:g} GB/s in all, its network {args.network_gbs:g} GB/s into the workers; "
          f"one core decompresses zstd at this machine's speed; a worker's CPU a position as measured here")
    rows = []
    for cores in (4, 16, 64):
        serial = positions * thread_us / 1e6
        cpu = positions * (main_us + worker_us) / 1e6 / cores
        disk = packed / (args.disk_gbs * 1e9)
        wall = max(serial, cpu, disk)
        limit = {serial: "main process's busiest thread", cpu: "CPU (all cores busy)", disk: "disk"}[wall]
        rows.append([f"--jobs {cores} on {cores} cores", hours(serial), hours(cpu), hours(disk), hours(wall), limit])
    # Dask today: one core decompresses the month to shared storage, then 64 workers.
    unpack = text * floor_ns / 1e9
    work = positions * worker_us / 1e6 / 64
    shared = text / (args.shared_gbs * 1e9)
    rows.append(["Dask, 64 cores, decompressed first", hours(unpack) + " (zstd -d)", hours(work), hours(shared),
                 hours(unpack + max(work, shared)), "zstd -d, then " + ("storage" if shared > work else "CPU")])
    # Dask with the client streaming the .zst: its main process as the local one's.
    stream = positions * thread_us / 1e6
    net = text / (args.network_gbs * 1e9)
    wall = max(stream, work, net)
    limit = {stream: "client's busiest thread", work: "CPU", net: "network"}[wall]
    rows.append(["Dask, 64 cores, client streams the .zst", hours(stream), hours(work), hours(net), hours(wall),
                 limit])
    print(table(rows, ["where", "main / serial part", "CPU over the cores", "storage / network", "wall", "limit"]))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input", nargs="?", default=str(DEFAULT_INPUT))
    ap.add_argument("--times", type=int, default=10, help="the long input: the input this many times over")
    ap.add_argument("--jobs", default="1,2", help="--jobs values to run (comma-separated)")
    ap.add_argument("--format", default="parquet", choices=["parquet", "csv"])
    ap.add_argument("--no-plain", action="store_true", help="no run on the long input as plain text")
    ap.add_argument("--month-games", type=float, default=100e6)
    ap.add_argument("--disk-gbs", type=float, default=2.0)
    ap.add_argument("--shared-gbs", type=float, default=1.0)
    ap.add_argument("--network-gbs", type=float, default=1.25)
    ap.add_argument("--side", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--side-out", help=argparse.SUPPRESS)
    ap.add_argument("--side-jobs", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.side:
        args.out, args.jobs = args.side_out, args.side_jobs
        return side(args)
    if not Path(args.input).is_file():
        raise SystemExit(f"no such file: {args.input}")
    jobs = [int(j) for j in args.jobs.split(",")]
    tmp = tempfile.mkdtemp(prefix="chessscan-scaling-in-")
    try:
        inputs = {"x1": args.input}
        if args.times > 1:
            long_path = os.path.join(tmp, f"x{args.times}.pgn.zst")
            plain = None if args.no_plain else os.path.join(tmp, f"x{args.times}.pgn")
            repeated(args.input, args.times, long_path, plain)
            inputs[f"x{args.times}"] = long_path
            if plain:
                inputs[f"x{args.times} plain"] = plain
        sizes = {k: (os.path.getsize(p), text_size(p)) for k, p in inputs.items()}
        print(f"input: {args.input} ({sizes['x1'][1] / 1e6:.1f} MB of PGN, {sizes['x1'][0] / 1e6:.1f} MB as .zst)"
              + (f"; x{args.times}: {sizes[f'x{args.times}'][1] / 1e6:.1f} MB, {sizes[f'x{args.times}'][0] / 1e6:.1f} "
                 f"MB as .zst (level 3)" if args.times > 1 else ""))
        print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, {load()} (before)")
        runs = {}
        rows = []
        for key, path in inputs.items():
            for n in jobs:
                r = runs[(key, n)] = measure(path, n, args.format)
                pos = r["positions"]
                threads = ", ".join(f"{name} {cpu:.2f}" for name, cpu in r["threads"].items() if cpu >= 0.005)
                rows.append([f"{key} --jobs {n}", f"{pos:,}", f"{r['wall']:.2f}", f"{r['main_cpu']:.2f}",
                             f"{r['main_cpu'] / pos * 1e6:.3f}", f"{r['workers_cpu']:.2f}",
                             f"{r['workers_cpu'] / pos * 1e6:.3f}",
                             f"{pos / max(r['main_cpu'] + r['workers_cpu'], 1e-9):,.0f}",
                             f"{r['peak_rss_mib']:.0f}", threads])
        print(table(rows, ["run", "positions", "wall s", "main CPU s", "main us/pos", "workers CPU s",
                           "workers us/pos", "pos/CPU-s", "peak RSS MiB", "main process threads, CPU s"]))
        print(f"(workers: the forkserver and the processes it forked; {load()} after)")
        if len(inputs) > 1:
            a, b = list(inputs)[:2]
            for n in jobs:
                short, long_ = runs[(a, n)], runs[(b, n)]
                added = long_["positions"] - short["positions"]
                print(f"--jobs {n}, marginal per position ({b} less {a}): main process "
                      f"{(long_['main_cpu'] - short['main_cpu']) / added * 1e6:.3f} us, workers "
                      f"{(long_['workers_cpu'] - short['workers_cpu']) / added * 1e6:.3f} us")
            if 1 in jobs and 2 in jobs:
                print(f"{b}: --jobs 2 wall time {runs[(b, 2)]['wall']:.2f} s against --jobs 1 "
                      f"{runs[(b, 1)]['wall']:.2f} s: {runs[(b, 1)]['wall'] / runs[(b, 2)]['wall']:.2f}x")
        floors = {k: zstd_floor(p) for k, p in inputs.items() if p.endswith(".zst")}
        for k, cpu in floors.items():
            print(f"zstd alone, {k}: {cpu:.3f} s of CPU ({cpu / sizes[k][1] * 1e9:.2f} ns a byte of text, "
                  f"{cpu / runs[(k, jobs[0])]['positions'] * 1e6:.3f} us a position)")
        last = list(inputs)[1] if len(inputs) > 1 else "x1"
        base = runs[(last, jobs[0])]
        per_game = base["positions"] / base["games"]
        bytes_per_game = sizes[last][1] / base["games"]
        model(runs, floors[last] / sizes[last][1] * 1e9, args, per_game, bytes_per_game,
              sizes["x1"][1] / sizes["x1"][0], "x1", last)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
