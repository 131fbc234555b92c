"""Throughput of chessscan against python-chess, scaling over cores, and memory (run by hand).

    python benchmarks/throughput.py [PATH] [--games N] [--esca-python PY]   # vs python-chess, esca
    python benchmarks/throughput.py [PATH] --jobs           # --jobs 1 vs --jobs 2 wall time
    python benchmarks/throughput.py [PATH] --memory         # peak RSS on 1x and 10x the input
    python benchmarks/throughput.py [PATH] --sample-cost    # --cross-check sample vs off, CPU
    python benchmarks/throughput.py --quick [--jobs|--memory]   # smoke run on 300 games

PATH defaults to ``<repo>/../shared/data/games/lichess-magnus.pgn.zst`` (for ``--quick``
without it, ``data/samples/lichess-magnus-300.pgn.zst``); any PGN file (plain, .gz, .bz2,
.zst) works. ``--games N`` uses only the first N games (python-chess
plays ~30k positions/s, so the whole default corpus takes about half a minute): they are
copied, decompressed, to a temporary .pgn file that both sides read.

Each measured side runs in a fresh subprocess (this script with ``--side``), so imports,
caches and peak RSS (``ru_maxrss``) are not shared. Times are wall clock of the work
itself (imports excluded) plus its CPU time: on a shared machine wall time also counts the
other processes' load, which is printed, and CPU time does not.

What is compared, per position after each move:

* python-chess, the fastest way a user would write it: ``chess.pgn.read_game``, then
  ``is_check``, ``checkers_mask``, ``is_checkmate``, ``is_stalemate`` and a repetition count
  kept in a dict keyed by ``board._transposition_key()`` (``is_repetition`` would replay the
  move stack at every ply). Games of variants chessscan does not analyze are read, not played.
* chessscan: ``chessscan.engines.local.run`` in one process, writing the positions, games and
  issues tables as Parquet to a temporary folder, ``cross_check="off"`` — what
  ``chessscan analyze --jobs 1 --cross-check off`` does, and much more per position (check
  kinds, SAN checks, Zobrist keys, draw rules, the tables).
* esca (PyPI, compiled, Python >= 3.12 only), when importable: ``esca.pgn.read`` on the
  input decompressed first (it reads plain text only: a .zst file reads as no games, not
  timed), ``PgnGame.game().positions``, then per position ``in_check`` and ``checkers()``,
  and ``legal_moves()`` of each game's last position (checkmate or stalemate); no
  repetition count. It runs under ``--esca-python PY``, else
  ``$CHESSSCAN_ESCA_PYTHON``, else the first of ``python3.13``, ``python3.12`` on PATH and
  this interpreter that imports esca; none: a note, and the side is left out. That side of
  this script imports only the standard library and esca.
* pgn-extract ``-r`` (reports errors, extracts nothing), on the decompressed input, when
  installed.

The default run also prints each side's ratio with its start-up subtracted (its CPU on the
input's first game alone: the tables' files opened and closed, first-use caches filled),
and the *library floor* of the positions run, measured in a process of its own: the CPU of
decompressing the input (chessscan's source reader) plus that of pyarrow's Parquet encoding,
from memory, of the very positions table chessscan writes for it, with chessscan's options
and row groups; chessscan's CPU for that run, start-up subtracted, as a multiple of it. The
same for ``--positions none``, whose floor is the decompression plus the encoding of the
games, perpetuals and issues tables and hashlib's BLAKE2b of the games' moves hashes. Last,
the *bound of this reader and detector*: ``validate``'s CPU (reading, playing and checking
every move, writing no table), start-up subtracted, plus the library's part of each run's
tables. Every analyze run does what ``validate`` does and more, so no run can take less
than that bound, however cheap its own building of the tables; printed as a multiple of
the floor and as the most it allows against python-chess.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # this checkout's chessscan, as the sides get through PYTHONPATH
    sys.path.insert(0, str(REPO))
DEFAULT_INPUT = REPO.parent / "shared" / "data" / "games" / "lichess-magnus.pgn.zst"
# What --quick reads when the default input is absent (a clone without ../shared).
SAMPLE_INPUT = REPO / "data" / "samples" / "lichess-magnus-300.pgn.zst"
QUICK_GAMES = 300
MEMORY_FACTOR = 10
SAMPLE_COST_PAIRS = 5  # --sample-cost: off/sample pairs run in turn
REPEATS = 5  # the default run: runs of each fast side, in turn
PLAYED_VARIANTS = {"", "standard", "chess", "normal", "from position", "fromposition", "chess960",
                   "chess 960", "fischerandom", "fischer random", "960"}


# --- the measured sides (run in a subprocess) ---------------------------------------------

def _open_text(path: str):
    """Decompressed text stream of ``path`` for python-chess (zstd with long windows)."""
    if path == "-":
        return io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8-sig", errors="replace")
    raw = open(path, "rb")
    if path.endswith((".zst", ".zstd")):
        import zstandard

        raw = zstandard.ZstdDecompressor(max_window_size=2**31).stream_reader(raw)
    elif path.endswith(".gz"):
        import gzip

        raw = gzip.GzipFile(fileobj=raw)
    elif path.endswith(".bz2"):
        import bz2

        raw = bz2.BZ2File(raw)
    return io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace")


def side_python_chess(path: str) -> tuple[int, int]:
    """(games, positions) replayed the python-chess way."""
    import chess.pgn

    games = positions = 0
    with _open_text(path) as text:
        while True:
            game = chess.pgn.read_game(text)
            if game is None:
                break
            games += 1
            if game.headers.get("Variant", "").strip().lower() not in PLAYED_VARIANTS:
                continue
            board = game.board()
            seen = {board._transposition_key(): 1}
            for move in game.mainline_moves():
                board.push(move)
                positions += 1
                board.is_check()
                board.checkers_mask()
                board.is_checkmate()
                board.is_stalemate()
                key = board._transposition_key()
                seen[key] = seen.get(key, 0) + 1
    return games, positions


def side_esca(path: str) -> tuple[int, int, dict]:
    """(games, positions, summary) the esca way, on a plain-text PGN file. Runs under an
    interpreter without chessscan: standard library and esca only."""
    import collections
    import re

    import esca.pgn

    games = positions = checks = checkmates = stalemates = 0
    unread: collections.Counter = collections.Counter()
    reader = esca.pgn.read(path)
    while True:
        try:
            pgn = next(reader)
        except StopIteration:
            break
        except ValueError as e:  # a game esca cannot read (e.g. an unknown variant); the stream goes on
            games += 1
            unread[re.sub(r"^line \d+, column \d+: ", "", str(e))] += 1
            continue
        games += 1
        played = pgn.game().positions  # the start position first, as python-chess's board()
        for position in played[1:]:
            positions += 1
            position.checkers()
            if position.in_check:
                checks += 1
        last = played[-1]
        if len(played) > 1 and not last.legal_moves():
            if last.in_check:
                checkmates += 1
            else:
                stalemates += 1
    return games, positions, {"checks": checks, "checkmates": checkmates, "stalemates": stalemates,
                              "unread": dict(unread.most_common())}


ESCA_PROBE = ("import sys, esca; assert sys.version_info >= (3, 12); "
              "print(esca.__version__, sys.version.split()[0])")


def find_esca_python(option: str | None) -> tuple[str | None, str]:
    """(interpreter, description) for the esca side, or (None, why not): ``--esca-python``,
    else ``$CHESSSCAN_ESCA_PYTHON``, else the first of python3.13, python3.12 on PATH and this
    interpreter under which ``import esca`` works (esca's wheels need Python >= 3.12)."""
    explicit = option or os.environ.get("CHESSSCAN_ESCA_PYTHON")
    if explicit:
        candidates = [explicit]
    else:
        candidates = [exe for exe in (shutil.which("python3.13"), shutil.which("python3.12"), sys.executable)
                      if exe]
    for exe in dict.fromkeys(candidates):
        try:
            proc = subprocess.run([exe, "-c", ESCA_PROBE], stdin=subprocess.DEVNULL, capture_output=True,
                                  text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if proc.returncode == 0:
            version, python = proc.stdout.split()
            return exe, f"esca {version} under {exe} (Python {python})"
    if explicit:
        return None, f"esca: skipped, not importable under {explicit} (Python >= 3.12 needed)"
    return None, "esca: skipped, not importable under any Python >= 3.12 found; pass --esca-python"


def side_validate(path: str) -> tuple[int, int, dict]:
    """(games, positions, summary) of ``chessscan validate --jobs 1`` (diagnostics rendered
    as text and dropped)."""
    from chessscan.analysis.options import AnalysisOptions
    from chessscan.engines.local import run
    from chessscan.reports.diagnostics import DiagnosticSink, format_text

    lines = []
    sink = DiagnosticSink(lambda d: lines.append(format_text(d)))
    tally = run([path], sink, AnalysisOptions(positions="none", cross_check="off", moves_hash=False))
    sink.finish()
    summary = tally.as_dict()
    summary["diagnostics"] = len(lines)
    return tally.games, tally.positions, summary


def side_chessscan(path: str, jobs: int, cross_check: str = "off", positions: str = "all",
                   keep: str | None = None) -> tuple[int, int, dict]:
    """(games, positions, summary) of chessscan's analyze path, tables to a temp folder (to
    ``keep``, kept, when given)."""
    from chessscan.analysis.options import AnalysisOptions
    from chessscan.engines.local import run, tables_for
    from chessscan.reports.writers import ReportWriter

    options = AnalysisOptions(cross_check=cross_check, positions=positions)
    out = keep or tempfile.mkdtemp(prefix="chessscan-bench-")
    try:
        with ReportWriter(out, fmt="parquet", tables=tables_for([path], options)) as writer:
            tally = run([path], writer, options, jobs=jobs)
    finally:
        if keep is None:
            shutil.rmtree(out, ignore_errors=True)
    return tally.games, tally.positions, tally.as_dict()


def side_floor(path: str, repeat: int) -> dict:
    """The library floor of ``analyze`` with the positions table: the CPU seconds of the two
    library calls no implementation can avoid, each the median of ``repeat`` runs: the
    input's decompression (chessscan's own source reader: zstd and the rest), and pyarrow's
    Parquet encoding, from memory, of the very positions table chessscan writes for it, with
    the options chessscan writes it with (``parquet_options``), in the same row groups. The
    table is made first by a chessscan run, not timed, and read into memory.

    Also the library part of the other tables, for ``--positions none``'s floor and for the
    bound below which no run with this reader and detector can go (see :func:`main`):
    ``encode_other``, pyarrow's encoding of the games, perpetuals and issues tables the same
    way, in the row groups of chessscan's files; ``hashes``, hashlib's BLAKE2b of each game's
    moves hash input (``' '.join([fen, *ucis])`` as bytes, built beforehand, untimed; each
    digest checked against the games table's ``moves_hash``), for the games that have one;
    ``encode_startup`` and ``encode_other_startup``, the same writers on each table's first row
    alone (opening and closing them)."""
    import statistics
    from hashlib import blake2b

    import pyarrow.parquet as pq

    from chessscan.readers.sources import open_source
    from chessscan.reports.writers import DEFAULT_ROW_GROUP_SIZE, parquet_options

    out = tempfile.mkdtemp(prefix="chessscan-bench-")
    try:
        side_chessscan(path, 1, keep=out)
        table = pq.read_table(os.path.join(out, "positions.parquet"))
        target = os.path.join(out, "floor.parquet")
        others = {name: pq.ParquetFile(os.path.join(out, f"{name}.parquet"))
                  for name in ("games", "perpetuals", "issues")}
        others = {name: (f.read(), [f.metadata.row_group(i).num_rows for i in range(f.metadata.num_row_groups)])
                  for name, f in others.items()}
        games = others["games"][0]
        moves = _moves_hash_inputs(table, games)
        decompress, encode, encode_other, hashes, encode_startup, encode_other_startup = [], [], [], [], [], []
        for _ in range(repeat):
            t0 = time.process_time()
            with open_source(path) as src:
                while src.read(1 << 20):
                    pass
            decompress.append(time.process_time() - t0)
            t0 = time.process_time()
            with pq.ParquetWriter(target, table.schema, **parquet_options(table.schema)) as w:
                for start in range(0, table.num_rows, DEFAULT_ROW_GROUP_SIZE):
                    w.write_table(table.slice(start, DEFAULT_ROW_GROUP_SIZE), row_group_size=DEFAULT_ROW_GROUP_SIZE)
            encode.append(time.process_time() - t0)
            t0 = time.process_time()
            for name, (other, groups) in others.items():
                with pq.ParquetWriter(target, other.schema, **parquet_options(other.schema)) as w:
                    start = 0
                    for rows in groups:
                        w.write_table(other.slice(start, rows), row_group_size=max(1, rows))
                        start += rows
            encode_other.append(time.process_time() - t0)
            # The same writers on each table's first row alone: their opening and closing,
            # which the bound leaves out as chessscan's start-up is left out of its runs.
            t0 = time.process_time()
            with pq.ParquetWriter(target, table.schema, **parquet_options(table.schema)) as w:
                w.write_table(table.slice(0, 1))
            encode_startup.append(time.process_time() - t0)
            t0 = time.process_time()
            for name, (other, groups) in others.items():
                with pq.ParquetWriter(target, other.schema, **parquet_options(other.schema)) as w:
                    w.write_table(other.slice(0, 1))
            encode_other_startup.append(time.process_time() - t0)
            t0 = time.process_time()
            digests = [blake2b(text, digest_size=16).hexdigest() for text in moves]
            hashes.append(time.process_time() - t0)
        if digests != [digest for digest in games.column("moves_hash").to_pylist() if digest is not None]:
            raise AssertionError("the moves hashes recomputed differ from the games table's")
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return {"rows": table.num_rows, "decompress": statistics.median(decompress),
            "encode": statistics.median(encode), "decompress_runs": decompress, "encode_runs": encode,
            "games": games.num_rows, "encode_other": statistics.median(encode_other),
            "hashes": statistics.median(hashes), "encode_startup": statistics.median(encode_startup),
            "encode_other_startup": statistics.median(encode_other_startup)}


def _moves_hash_inputs(positions, games) -> list[bytes]:
    """Each game's moves hash input, ``' '.join([fen, *ucis])`` as bytes (the games table's
    ``moves_hash`` column: BLAKE2b-128 of it), in the games table's order, from the positions
    table's ``uci`` column and the games table's ``start_fen`` (None: the standard start);
    games without a moves hash (variants not played) left out."""
    from chessscan.core.position import STARTING_FEN

    ucis: dict[int, list[str]] = {}
    for gi, uci in zip(positions.column("game_index").to_pylist(), positions.column("uci").to_pylist()):
        if uci is not None:
            ucis.setdefault(gi, []).append(uci)
    return [" ".join([fen or STARTING_FEN, *ucis.get(gi, ())]).encode()
            for gi, fen, digest in zip(games.column("game_index").to_pylist(), games.column("start_fen").to_pylist(),
                                       games.column("moves_hash").to_pylist())
            if digest is not None]


class _Descendants:
    """Samples the CPU time and RSS of this process's descendants (the --jobs workers, which
    the forkserver forks, so that ``RUSAGE_CHILDREN`` never sees them) every 50 ms. Needs
    psutil (installed with the dask extra); without it, reports nothing."""

    def __init__(self, enabled: bool = True) -> None:
        import threading

        self.cpu: dict[int, float] = {}
        self.peak_rss = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._me = None
        if enabled:  # not for one process: sampling costs the measured process some CPU
            try:
                import psutil

                self._me = psutil.Process()
                self._error = psutil.Error
            except ImportError:
                pass

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            rss = 0
            for child in self._me.children(recursive=True):
                try:
                    t = child.cpu_times()
                    self.cpu[child.pid] = t.user + t.system
                    rss += child.memory_info().rss
                except self._error:
                    pass  # exited between listing and reading
            self.peak_rss = max(self.peak_rss, rss)

    def __enter__(self):
        if self._me is not None:
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._me is not None:
            self._thread.join()


def run_side(args) -> None:
    if args.side == "floor":
        import chessscan.cli  # noqa: F401  (as the chessscan sides)

        json.dump(side_floor(args.path, max(1, args.repeat)), sys.stdout)
        return
    if args.side == "python-chess":
        import chess.pgn  # noqa: F401  (imports are not timed)
    elif args.side == "esca":
        import esca.pgn  # noqa: F401
    else:
        import chessscan.cli  # noqa: F401  (first, as the command starts: it sets numpy's thread count)
        import chessscan.engines.local  # noqa: F401
        import chessscan.reports.writers  # noqa: F401
    cpu0 = time.process_time()
    t0 = time.perf_counter()
    summary = None
    with _Descendants(enabled=args.side == "chessscan" and args.side_jobs > 1) as workers:
        if args.side == "python-chess":
            games, positions = side_python_chess(args.path)
        elif args.side == "esca":
            games, positions, summary = side_esca(args.path)
        elif args.side == "validate":
            games, positions, summary = side_validate(args.path)
        else:
            games, positions, summary = side_chessscan(args.path, args.side_jobs, args.side_cross_check,
                                                       args.side_positions)
        wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    json.dump({"games": games, "positions": positions, "wall": wall, "cpu": cpu + sum(workers.cpu.values()),
               "main_cpu": cpu,
               "rss_mib": rss_kib / 1024 + workers.peak_rss / 2**20, "summary": summary}, sys.stdout)


# --- the driver -----------------------------------------------------------------------------

def measure(side: str, path: str, jobs: int = 1, feed=None, cross_check: str = "off",
            positions: str = "all", python: str = sys.executable, repeat: int = 1) -> dict:
    """Run one side in a fresh interpreter (``python``: the esca side's is another one);
    ``feed`` (a callable writing to a binary stream) supplies stdin when ``path`` is ``'-'``;
    ``cross_check``, ``positions``: the chessscan side's options (the python-chess import of a
    cross-check, done only when a game is replayed, is timed); ``repeat``: the floor side's
    runs."""
    cmd = [python, __file__, "--side", side, "--side-jobs", str(jobs), "--side-cross-check",
           cross_check, "--side-positions", positions, "--repeat", str(repeat), path]
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE if feed else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, env=env)
    if feed:
        try:
            feed(proc.stdin)
        finally:
            proc.stdin.close()
    out = proc.stdout.read()
    if proc.wait() != 0:
        raise SystemExit(f"{side} failed (exit {proc.returncode})")
    return json.loads(out)


PGN_EXTRACT = "/usr/games/pgn-extract"


def measure_pgn_extract(path: str, tmp: str) -> dict | None:
    """``pgn-extract -r`` (report errors, extract nothing) on ``path``, decompressed first
    (pgn-extract reads plain text; not timed): games, error reports, wall and CPU time. None
    when pgn-extract is not installed."""
    import re

    exe = shutil.which("pgn-extract") or (PGN_EXTRACT if os.path.exists(PGN_EXTRACT) else None)
    if exe is None:
        return None
    plain = plain_input(path, tmp)
    t0 = time.perf_counter()
    proc = subprocess.Popen([exe, "-r", plain], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read()
    _, _, usage = os.wait4(proc.pid, 0)  # this child's own CPU time and peak RSS
    proc.returncode = 0
    proc.stderr.close()
    wall = time.perf_counter() - t0
    cpu = usage.ru_utime + usage.ru_stime
    text = err.decode("utf-8", "replace")
    m = re.search(r"(\d+) games? matched out of (\d+)", text)
    games = int(m.group(2)) if m else 0
    # Besides one line per game (its players, event, site and date) and the closing count,
    # every line is part of an error report.
    lines = [ln for ln in text.splitlines() if ln.strip() and not re.search(r"games? matched out of", ln)]
    reports = max(0, len(lines) - games)
    return {"games": games, "positions": 0, "wall": wall, "cpu": cpu, "rss_mib": usage.ru_maxrss / 1024,
            "reports": reports}


def plain_input(path: str, tmp: str) -> str:
    """``path`` itself when it is plain text, else its decompressed copy in ``tmp`` (made once,
    not timed): pgn-extract and esca read plain text only."""
    if path.endswith(".pgn"):
        return path
    plain = os.path.join(tmp, "plain-input.pgn")
    if not os.path.exists(plain):
        first_games(path, None, plain)
    return plain


def first_games(path: str, n: int | None, dest: str) -> int:
    """Copy the first ``n`` games of ``path``, decompressed, to ``dest``; returns the number
    copied. Streams: only the bytes before game ``n`` are read twice."""
    from chessscan.readers.pgn import read_games
    from chessscan.readers.sources import open_source

    end = None
    count = 0
    for raw in read_games(path):
        if n is not None and raw.index == n:
            end = raw.byte_offset
            break
        count += 1
    with open_source(path) as src, open(dest, "wb") as dst:
        left = end
        while left is None or left > 0:
            chunk = src.read(1 << 20 if left is None else min(1 << 20, left))
            if not chunk:
                break
            dst.write(chunk)
            if left is not None:
                left -= len(chunk)
    return count


def repeat_feed(path: str, times: int):
    """A feed writing the decompressed input ``times`` times, 1 MiB at a time."""
    from chessscan.readers.sources import open_source

    def feed(pipe) -> None:
        for _ in range(times):
            with open_source(path) as src:
                while chunk := src.read(1 << 20):
                    pipe.write(chunk)
            pipe.write(b"\n\n")  # the next copy starts a new game even after a missing newline
    return feed


def _busy_loop(n: int) -> float:
    t0 = time.perf_counter()
    x = 0
    for i in range(n):
        x += i
    return time.perf_counter() - t0


def cores_available(n: int = 2, loops: int = 10_000_000) -> float:
    """How many cores' worth of CPU ``n`` pure-Python busy loops get together right now
    (``n`` on an idle machine; less when other processes or the host take CPU)."""
    import multiprocessing

    alone = _busy_loop(loops)
    with multiprocessing.get_context("spawn").Pool(n) as pool:
        pool.map(_busy_loop, [1000] * n)  # start the workers first
        together = pool.map(_busy_loop, [loops] * n)
    return n * alone / max(together)


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)  # noqa: E731
                               for i, (c, w) in enumerate(zip(r, widths)))
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def row(label: str, m: dict) -> list[str]:
    return [label, f"{m['games']:,}", f"{m['positions']:,}", f"{m['wall']:.2f}", f"{m['cpu']:.2f}",
            f"{m['games'] / m['wall']:,.0f}", f"{m['positions'] / m['wall']:,.0f}",
            f"{m['positions'] / max(m['cpu'], 1e-9):,.0f}", f"{m['rss_mib']:.0f}"]


HEADER = ["side", "games", "positions", "wall s", "cpu s", "games/s", "positions/s",
          "pos/cpu-s", "peak RSS MiB"]


def load() -> str:
    try:
        return "load average %.1f %.1f %.1f" % os.getloadavg()
    except OSError:
        return "load average unknown"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path", nargs="?", default=str(DEFAULT_INPUT), help="PGN input (default: %(default)s)")
    ap.add_argument("--games", type=int, default=None, help="use only the first N games (both sides)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--jobs", action="store_true", help="measure --jobs 1 vs --jobs 2 (see --max-jobs)")
    mode.add_argument("--memory", action="store_true",
                      help=f"peak RSS on the input and on it repeated {MEMORY_FACTOR} times (via stdin)")
    mode.add_argument("--sample-cost", action="store_true",
                      help="CPU time of --cross-check sample (the default) against off, one process, "
                           f"{SAMPLE_COST_PAIRS} pairs run in turn (median ratio)")
    ap.add_argument("--max-jobs", type=int, default=2, help="with --jobs: also 4, 8, ... up to this")
    ap.add_argument("--quick", action="store_true", help=f"smoke run: the first {QUICK_GAMES} games")
    ap.add_argument("--repeat", type=int, default=REPEATS,
                    help="runs of each side but python-chess, in turn; the median CPU run is shown "
                         f"(default {REPEATS})")
    ap.add_argument("--esca-python", metavar="PY",
                    help="a Python >= 3.12 that imports esca, for the esca side (default: "
                         "$CHESSSCAN_ESCA_PYTHON, else python3.13, python3.12 or this one if it imports esca)")
    ap.add_argument("--side", choices=["python-chess", "chessscan", "validate", "esca", "floor"],
                    help=argparse.SUPPRESS)
    ap.add_argument("--side-jobs", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--side-cross-check", default="off", help=argparse.SUPPRESS)
    ap.add_argument("--side-positions", default="all", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.side:
        return run_side(args)

    if args.quick and args.path == str(DEFAULT_INPUT) and not DEFAULT_INPUT.is_file():
        args.path = str(SAMPLE_INPUT)
    if args.path != "-" and not Path(args.path).is_file():
        raise SystemExit(f"no such file: {args.path}")
    games = args.games if args.games is not None else (QUICK_GAMES if args.quick else None)
    tmp = tempfile.mkdtemp(prefix="chessscan-bench-in-")
    try:
        path = args.path
        what = path
        if games is not None:
            path = os.path.join(tmp, "input.pgn")
            copied = first_games(args.path, games, path)
            what = f"{args.path}, first {copied:,} games ({os.path.getsize(path) / 2**20:.1f} MiB decompressed)"
        print(f"input: {what}")
        print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}, {load()} (before)")

        if args.jobs:
            counts = [1]
            while counts[-1] * 2 <= max(2, args.max_jobs):
                counts.append(counts[-1] * 2)
            print(f"machine: {counts[-1]} busy loops in parallel get {cores_available(counts[-1]):.2f} cores' "
                  f"worth of CPU (ideal {counts[-1]}): the best speed-up possible right now")
            results = {n: measure("chessscan", path, jobs=n) for n in counts}
            base = results[1]
            rows = [row(f"chessscan --jobs {n}", m) + [f"{base['wall'] / m['wall']:.2f}x"]
                    for n, m in results.items()]
            print(table(rows, HEADER + ["speed-up"]))
            print("(cpu s and peak RSS: the main process plus the forkserver and workers, sampled every 50 ms with psutil; RSS is summed, so pages they share count once per process)")
            for n, m in results.items():
                if n > 1 and m["cpu"] > m["main_cpu"]:
                    main_us = m["main_cpu"] / m["positions"] * 1e6
                    worker_us = (m["cpu"] - m["main_cpu"]) / m["positions"] * 1e6
                    print(f"--jobs {n}: CPU per position {main_us:.2f} us in the main process (decompressing, "
                          f"cutting chunks, writing, and analyzing chunks while the pool starts), "
                          f"{worker_us:.2f} us in the forkserver and workers")
            same = all(m["summary"] == base["summary"] for m in results.values())
            print(f"same summary for every --jobs: {'yes' if same else 'NO'}")
        elif args.sample_cost:
            # The difference is a few percent, within one run's noise on a shared machine:
            # pairs run in turn, and the median of their ratios is the figure.
            pairs = [{mode: measure("chessscan", path, cross_check=mode) for mode in ("off", "sample")}
                     for _ in range(SAMPLE_COST_PAIRS)]
            ratios = [p["sample"]["cpu"] / p["off"]["cpu"] for p in pairs]
            middle = sorted(range(len(pairs)), key=ratios.__getitem__)[len(pairs) // 2]
            runs = pairs[middle]
            print(table([row(f"chessscan --cross-check {mode}", m) for mode, m in runs.items()], HEADER))
            checked = runs["sample"]["summary"]["cross_check"]
            by = ", ".join(f"{k} {v}" for k, v in checked["games_sampled_by"].items())
            print(f"sampled: {checked['games']} games, {checked['positions']:,} positions ({by})")
            print(f"sample / off, CPU time, {len(pairs)} pairs run in turn: "
                  f"{' '.join(f'{r:.3f}' for r in ratios)}; median {ratios[middle]:.3f}x "
                  f"(the budget: 1.10x; the table shows the median pair)")
        elif args.memory:
            rows = []
            for times in (1, MEMORY_FACTOR):
                m = measure("chessscan", "-", jobs=1, feed=repeat_feed(path, times))
                rows.append(row(f"chessscan, input x{times} via stdin", m))
            print(table(rows, HEADER))
        else:
            a = measure("python-chess", path)
            esca_python, esca_note = find_esca_python(args.esca_python)
            # The fast sides take a second or two, where a shared machine's noise is tens of
            # percent: each runs --repeat times, in turn, and its median CPU run is shown.
            fast = {"chessscan analyze (1 process, positions table)": lambda: measure("chessscan", path, jobs=1),
                    "chessscan analyze --positions none": lambda: measure("chessscan", path, jobs=1, positions="none"),
                    "chessscan validate --jobs 1": lambda: measure("validate", path)}
            if esca_python:
                plain = plain_input(path, tmp)
                fast["esca"] = lambda: measure("esca", plain, python=esca_python)
            fast["pgn-extract -r"] = lambda: measure_pgn_extract(path, tmp)
            runs = {label: [] for label in fast}
            for _ in range(max(1, args.repeat)):
                for label, run_side_once in fast.items():
                    runs[label].append(run_side_once())
            medians = {}
            for label, ms in runs.items():
                if ms[0] is not None:
                    ms.sort(key=lambda m: m["cpu"])
                    medians[label] = ms[len(ms) // 2]
            sides = [(label, medians[label]) for label in list(fast)[:3]]
            esca = medians.get("esca")
            extract = medians.get("pgn-extract -r")
            rows = [row("python-chess (read_game + checks)", a)] + [row(label, m) for label, m in sides]
            if esca is not None:
                rows.append(row("esca (pgn.read + in_check, checkers)", esca))
            if extract is not None:
                rows.append(row("pgn-extract -r (validate only)", extract))
            print(table(rows, HEADER))
            print(f"CPU s of each side but python-chess over {max(1, args.repeat)} runs in turn "
                  "(min / median / max; the table shows the median run):")
            for label, ms in runs.items():
                if ms[0] is not None:
                    print(f"  {label}: {ms[0]['cpu']:.2f} / {medians[label]['cpu']:.2f} / {ms[-1]['cpu']:.2f}")
            print("CPU time against python-chess (its CPU seconds per game or position / the tool's):")
            others = [("esca", esca)] if esca is not None else []
            others += [("pgn-extract -r", extract)] if extract is not None else []
            for label, m in sides + others:
                per_game = (a["cpu"] / a["games"]) / (m["cpu"] / m["games"])
                per_position = (f", {(a['cpu'] / a['positions']) / (m['cpu'] / m['positions']):.1f}x per position"
                                if m["positions"] else "")
                print(f"  {label}: {per_game:.1f}x per game{per_position}")
            # Start-up, as each side's CPU on the input's first game alone (the writer's files
            # opened and closed, first-use caches filled), subtracted: what the input costs.
            one = os.path.join(tmp, "one-game.pgn")
            first_games(path, 1, one)
            a_one = measure("python-chess", one)
            startup = {label: sorted((measure(*how, one) if how[0] != "chessscan" else
                                      measure("chessscan", one, jobs=1, positions=how[1])
                                      for _ in range(max(1, args.repeat))), key=lambda m: m["cpu"])
                       for label, how in zip(list(fast)[:3], (("chessscan", "all"), ("chessscan", "none"),
                                                               ("validate",)))}
            startup = {label: ms[len(ms) // 2]["cpu"] for label, ms in startup.items()}
            a_net = a["cpu"] - a_one["cpu"]
            print(f"CPU time against python-chess, each side's start-up subtracted (its CPU on the input's "
                  f"first game alone: python-chess {a_one['cpu']:.3f} s; chessscan, median of {max(1, args.repeat)}):")
            for label, m in sides:
                net = m["cpu"] - startup[label]
                print(f"  {label}: {m['cpu']:.3f} - {startup[label]:.3f} = {net:.3f} s: "
                      f"{(a_net / a['positions']) / (net / m['positions']):.1f}x per position")
            # The library floor: what decompressing the input and pyarrow's encoding of the
            # positions table alone cost, measured in a process of its own.
            floor = measure("floor", path, repeat=max(1, args.repeat))
            bottom = floor["decompress"] + floor["encode"]
            label, m = sides[0]
            net = m["cpu"] - startup[label]
            print(f"library floor of the positions run (medians of {max(1, args.repeat)}): decompressing the input "
                  f"{floor['decompress']:.3f} s + pyarrow's Parquet encoding of its {floor['rows']:,}-row "
                  f"positions table from memory, chessscan's options {floor['encode']:.3f} s = {bottom:.3f} s")
            print(f"  {label}, start-up subtracted: {net:.3f} s = {net / bottom:.2f}x the floor "
                  f"({net - bottom:.3f} s of chessscan's own work above it)")
            other = floor["encode_other"] + floor["hashes"]
            label_none, m_none = sides[1]
            net_none = m_none["cpu"] - startup[label_none]
            print(f"library floor of --positions none: decompressing the input {floor['decompress']:.3f} s + pyarrow's "
                  f"encoding of its games, perpetuals and issues tables {floor['encode_other']:.3f} s + hashlib's "
                  f"BLAKE2b of its {floor['games']:,} games' moves hashes {floor['hashes']:.3f} s = "
                  f"{floor['decompress'] + other:.3f} s")
            print(f"  {label_none}, start-up subtracted: {net_none:.3f} s = "
                  f"{net_none / (floor['decompress'] + other):.2f}x that floor")
            # validate reads, plays and checks every move and writes no table: a run with tables
            # does that and more, so validate's CPU plus the library's part of the tables is the
            # least any run can take with this reader and detector, however cheap the tables'
            # own building.
            label_validate, m_validate = sides[2]
            net_validate = m_validate["cpu"] - startup[label_validate]
            # The writers' opening and closing left out, as the runs' start-up is.
            other_net = other - floor["encode_other_startup"]
            print(f"bound of this reader and detector: {label_validate}, start-up subtracted "
                  f"({net_validate:.3f} s: decompressing, reading, playing and checking every move, no table), "
                  f"plus the library's part of the tables above less their writers' opening and closing "
                  f"({floor['encode_startup']:.3f} s and {floor['encode_other_startup']:.3f} s); no run can take less:")
            for what, least, bottom_of in (("positions run", net_validate + floor["encode"] - floor["encode_startup"]
                                            + other_net, bottom),
                                           ("--positions none", net_validate + other_net, None)):
                against = f" = {least / bottom_of:.2f}x its floor" if bottom_of else ""
                print(f"  {what}: >= {least:.3f} s{against}, so at most "
                      f"{(a_net / a['positions']) / (least / m_validate['positions']):.1f}x python-chess per position")
            print("counts:")
            print(f"  python-chess: {a['games']:,} games, {a['positions']:,} positions")
            for label, m in sides:
                s = m["summary"]
                extra = f", {s['diagnostics']:,} diagnostics" if "diagnostics" in s else ""
                print(f"  {label}: {s['games_read']:,} games ({s['games_with_errors']:,} with errors, "
                      f"{s['issues_by_severity'].get('warning', 0):,} warnings), {s['positions']:,} positions"
                      f"{extra}")
            if esca is None:
                print(f"  {esca_note}")
            else:
                s, ours = esca["summary"], sides[0][1]["summary"]
                unread = ", ".join(f"{n:,} {why}" for why, n in s["unread"].items())
                print(f"  {esca_note}: {esca['games']:,} games ({sum(s['unread'].values()):,} not read"
                      f"{': ' + unread if unread else ''}), {esca['positions']:,} positions")
                theirs = (esca["positions"], s["checks"], s["checkmates"], s["stalemates"])
                mine = (ours["positions"], sum(ours["checks"].values()), ours["checkmates"], ours["stalemates"])
                print("    positions, in check, checkmates, stalemates: esca "
                      + " / ".join(f"{n:,}" for n in theirs) + ", chessscan analyze "
                      + " / ".join(f"{n:,}" for n in mine) + (": same" if theirs == mine else ": DIFFERENT"))
            if extract is None:
                print(f"  pgn-extract: not run ({PGN_EXTRACT} not found; Debian package pgn-extract)")
            else:
                print(f"  pgn-extract -r: {extract['games']:,} games, {extract['reports']:,} line{'s' if extract['reports'] != 1 else ''} of error reports")
        print(f"machine: {load()} (after)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
