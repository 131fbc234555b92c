"""Game tables as input, measured: CPU per position of a Parquet table against the same games
as `.pgn.zst`, and peak RSS on a Parquet table of more than a million games.

Builds in `--work DIR` (kept between runs; default a temporary folder), from the shared
corpora (`../shared/data/games`: lichess-jishanshaikh4, 37,221 games with `[%clk]`/`[%eval]`
comments, then pgnmentor, 333,596 games; `--corpus` to choose others):

  * `games.pgn.zst`: the corpora one after the other (their zstd frames concatenated: the same
    bytes decompressed);
  * `games.parquet`: the same games in the schema of the Lichess database on Hugging Face
    (`Event, Site, White, Black, Result, WhiteTitle, BlackTitle`, `WhiteElo, BlackElo,
    WhiteRatingDiff, BlackRatingDiff` int16, `UTCDate` date32, `UTCTime` time32, `ECO, Opening,
    Termination, TimeControl, movetext`; a tag that is not such a number or date is a null),
    then the tags it leaves out that these games use (`Date, Round, Variant, FEN, SetUp`) as
    strings; row groups of 65,536 rows, zstd. The movetext is each game's as written, its
    lines joined by a space (one line, as on the Hub), split off by chessscan's PGN reader;
  * `games-1M.parquet`: that table written `--times` times over (default 3: 1,112,451 games).

Then runs, each in a fresh process, `chessscan analyze --jobs 1 --cross-check off` on the
`.pgn.zst` and on `games.parquet` (CPU user+sys of the process, from `wait4`; its peak RSS,
sampled every 20 ms;
positions from summary.json, which must agree; `--repeat N`: N runs of each, in turn), and
`chessscan analyze --jobs 1` (the defaults) on `games-1M.parquet`, and prints one row per run
and the ratio of CPU per position, Parquet to `.pgn.zst`.

    python benchmarks/table_input.py [--work DIR] [--times 3] [--skip-1m] [--repeat N]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# ../shared beside the checkout (or beside the folder of worktrees holding it)
SHARED = next((p / "shared" / "data" / "games" for p in (REPO.parent, REPO.parent.parent)
               if (p / "shared" / "data" / "games").is_dir()), REPO.parent / "shared" / "data" / "games")
CORPORA = [SHARED / "lichess-jishanshaikh4.pgn.zst", SHARED / "pgnmentor-players-dedup.pgn.zst"]
ROW_GROUP = 65_536
HF = [("Event", "s"), ("Site", "s"), ("White", "s"), ("Black", "s"), ("Result", "s"), ("WhiteTitle", "s"),
      ("BlackTitle", "s"), ("WhiteElo", "i"), ("BlackElo", "i"), ("WhiteRatingDiff", "i"),
      ("BlackRatingDiff", "i"), ("UTCDate", "d"), ("UTCTime", "t"), ("ECO", "s"), ("Opening", "s"),
      ("Termination", "s"), ("TimeControl", "s")]
EXTRA = ["Date", "Round", "Variant", "FEN", "SetUp"]


def _schema():
    import pyarrow as pa

    types = {"s": pa.string(), "i": pa.int16(), "d": pa.date32(), "t": pa.time32("s")}
    return pa.schema([(n, types[k]) for n, k in HF] + [("movetext", pa.string())] + [(n, pa.string()) for n in EXTRA])


def _typed(kind: str, text: str | None):
    if text is None:
        return None
    try:
        if kind == "i":
            v = int(text)
            return v if -32768 <= v < 32768 else None
        if kind == "d":
            return datetime.date(*map(int, text.split(".")))
        if kind == "t":
            return datetime.time(*map(int, text.split(":")))
    except ValueError:
        return None
    return text


def build(work: Path, corpora: list[Path], times: int) -> None:
    """Write games.pgn.zst, games.parquet and games-1M.parquet in ``work`` (kept if there)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from chessscan.readers.pgn import read_games

    pgn = work / "games.pgn.zst"
    if not pgn.exists():
        with open(pgn, "wb") as out:
            for c in corpora:
                out.write(c.read_bytes())
    table_path = work / "games.parquet"
    schema = _schema()
    if not table_path.exists():
        start = time.perf_counter()
        columns = {n: [] for n in schema.names}
        writer = pq.ParquetWriter(table_path, schema, compression="zstd")

        def flush() -> None:
            writer.write_table(pa.table(columns, schema=schema), row_group_size=ROW_GROUP)
            for v in columns.values():
                v.clear()

        n = 0
        for raw in read_games(str(pgn)):
            for name, kind in HF:
                columns[name].append(_typed(kind, raw.tags.get(name)))
            mt = raw._mt.decode(raw._codec, "replace").replace("\r", "")
            columns["movetext"].append(" ".join(line.strip() for line in mt.split("\n") if line.strip()))
            for name in EXTRA:
                columns[name].append(raw.tags.get(name))
            n += 1
            if n % ROW_GROUP == 0:
                flush()
        flush()
        writer.close()
        print(f"built {table_path.name}: {n:,} games, {table_path.stat().st_size / 2**20:.1f} MiB "
              f"({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    big = work / "games-1M.parquet"
    if times and not big.exists():
        source = pq.ParquetFile(table_path)
        with pq.ParquetWriter(big, source.schema_arrow, compression="zstd") as writer:
            for _ in range(times):
                for g in range(source.num_row_groups):
                    writer.write_table(source.read_row_group(g), row_group_size=ROW_GROUP)
        print(f"built {big.name}: {pq.ParquetFile(big).metadata.num_rows:,} games, "
              f"{big.stat().st_size / 2**20:.1f} MiB", file=sys.stderr)


def _peak_rss(pid: int, peak: list[int], done: threading.Event) -> None:
    """Sample the RSS of process ``pid`` and its children every 20 ms into ``peak[0]``
    (``wait4``'s ru_maxrss would count this process's own pages, inherited at the fork)."""
    import psutil

    try:
        proc = psutil.Process(pid)
    except psutil.Error:
        return
    while not done.is_set():
        total = 0
        try:
            for p in [proc] + proc.children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    total += p.memory_info().rss
        except psutil.Error:
            pass
        peak[0] = max(peak[0], total)
        done.wait(0.02)


def measure(label: str, args: list[str], out: Path) -> dict:
    """Run ``chessscan analyze ARGS -o OUT`` in a fresh process: its CPU (user+sys, from
    ``wait4``), wall time, peak RSS (sampled), exit status and summary."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "chessscan", "analyze", *args, "-o", str(out), "--silent"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    peak, done = [0], threading.Event()
    sampler = threading.Thread(target=_peak_rss, args=(proc.pid, peak, done), daemon=True)
    sampler.start()
    err = proc.stderr.read().decode("utf-8", "replace")
    _, status, usage = os.wait4(proc.pid, 0)
    done.set()
    sampler.join()
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    summary = json.loads((out / "summary.json").read_text()) if (out / "summary.json").exists() else {}
    return {"label": label, "cpu": usage.ru_utime + usage.ru_stime, "wall": wall,
            "rss_mib": peak[0] / 2**20, "exit": proc.returncode, "summary": summary,
            "last": err.strip().splitlines()[-1] if err.strip() else ""}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=None, help="folder for the inputs (kept)")
    parser.add_argument("--corpus", type=Path, action="append", default=None, help="a .pgn.zst (repeatable)")
    parser.add_argument("--times", type=int, default=3, help="copies of the table in games-1M.parquet")
    parser.add_argument("--skip-1m", action="store_true", help="no run on games-1M.parquet")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each of the two inputs, in turn")
    args = parser.parse_args(argv)
    corpora = args.corpus or CORPORA
    missing = [c for c in corpora if not c.exists()]
    if missing:
        sys.exit(f"missing corpus: {missing[0]}")
    sys.path.insert(0, str(REPO))
    work = args.work or Path(tempfile.mkdtemp(prefix="chessscan-tables-"))
    work.mkdir(parents=True, exist_ok=True)
    build(work, corpora, 0 if args.skip_1m else args.times)
    runs = []
    for _ in range(args.repeat):  # in turn, so that a change of the machine's load hits both
        runs.append(measure("games.pgn.zst, analyze --jobs 1 --cross-check off",
                            [str(work / "games.pgn.zst"), "--jobs", "1", "--cross-check", "off"], work / "out-pgn"))
        runs.append(measure("games.parquet, analyze --jobs 1 --cross-check off",
                            [str(work / "games.parquet"), "--jobs", "1", "--cross-check", "off"],
                            work / "out-parquet"))
    if not args.skip_1m:
        runs.append(measure("games-1M.parquet, analyze --jobs 1 (defaults)",
                            [str(work / "games-1M.parquet"), "--jobs", "1"], work / "out-1m"))
    print(f"{'run':52} {'games':>10} {'positions':>12} {'CPU s':>8} {'µs/pos':>7} {'wall s':>7} "
          f"{'RSS MiB':>8} exit")
    for r in runs:
        s = r["summary"]
        pos = s.get("positions", 0)
        print(f"{r['label']:52} {s.get('games_read', 0):>10,} {pos:>12,} {r['cpu']:>8.2f} "
              f"{1e6 * r['cpu'] / pos if pos else 0:>7.3f} {r['wall']:>7.1f} {r['rss_mib']:>8.1f} {r['exit']}")
    a, b = runs[0]["summary"], runs[1]["summary"]
    if a.get("positions") != b.get("positions") or a.get("games_read") != b.get("games_read"):
        print(f"the two inputs disagree: {a.get('games_read')} / {b.get('games_read')} games, "
              f"{a.get('positions')} / {b.get('positions')} positions", file=sys.stderr)
        sys.exit(1)
    ratios = sorted(runs[k + 1]["cpu"] / runs[k]["cpu"] for k in range(0, 2 * args.repeat, 2))
    print(f"Parquet / .pgn.zst, CPU per position (the same positions), run by run: "
          f"{', '.join(f'{r:.3f}' for r in ratios)}; median {ratios[len(ratios) // 2]:.3f}")


if __name__ == "__main__":
    main()
