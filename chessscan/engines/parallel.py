"""Run the analysis on every core: the main process reads, worker processes analyze.

Shape of a run (``chessscan analyze --jobs N``):

* The main process opens each source and reads it with the PGN reader (which is much faster
  than the analysis), cutting the games into batches of ``batch_games`` games (or
  ``batch_bytes`` bytes of movetext, whichever comes first).
* Each batch (a list of :class:`~chessscan.readers.pgn.RawGame`, pickled) goes to a pool of
  ``N`` worker processes, which analyze it (cross-check included) exactly as the single
  process path does and send back a :class:`~chessscan.analysis.game.Tally` and one Arrow
  record batch per table. Building the Arrow arrays in the workers matters: converting
  Python lists to Arrow costs about half as much as the analysis itself.
* The main process writes the results **in submission order** and merges the tallies in that
  order, so every table has the same rows in the same order as with ``--jobs 1``, and the
  summary is the same (the counters' key order included).
* At most ``in_flight`` batches (default ``2 * N``) are read ahead, so memory stays flat
  however large the input. The progress bar counts the input bytes of the batches written.

The pool starts in a background thread once the first full batch is read: the first
worker's start waits for the forkserver to import chessscan and pandas (about 0.4 s), and
the main process goes on reading meanwhile, holding up to ``BACKLOG_BYTES`` of movetext
until the workers are up.

EPD sources are analyzed in the main process (after the PGN batches before them are
written). An input of less than one batch is analyzed in the main process too: starting
the pool would cost more than it saves.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Iterable, Sequence

from chessscan.analysis.game import Tally
from chessscan.analysis.options import AnalysisOptions
from chessscan.engines.local import (
    DEFAULT_BATCH_ROWS,
    _progress,
    analyze_one,
    flush_tables,
    is_epd,
    new_tables,
    optional_columns,
    run,
    run_epd_source,
    tables_for,
)
from chessscan.readers.pgn import read_games
from chessscan.readers.sources import open_source, source_name
from chessscan.reports.writers import buffered_rows

__all__ = ["DEFAULT_BATCH_GAMES", "DEFAULT_BATCH_BYTES", "BACKLOG_BYTES", "default_jobs", "analyze_batch",
           "run_parallel"]

#: Games per batch sent to a worker: large enough that pickling and process switches are
#: noise (a batch of Lichess games is ~0.2 s of work), small enough to keep every core busy
#: until the end of the input.
DEFAULT_BATCH_GAMES = 200
#: A batch is also cut at this many bytes of movetext, so that huge games keep memory flat.
DEFAULT_BATCH_BYTES = 4 << 20
#: Movetext bytes read ahead while the pool starts (games in memory take about twice that).
BACKLOG_BYTES = 16 << 20


def default_jobs() -> int:
    """Number of cores this process may run on (the CPU affinity mask where the platform
    has one, else ``os.cpu_count()``); at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def analyze_batch(games: Sequence, options: AnalysisOptions, names: Sequence[str],
                  arrow: bool = True) -> tuple[Tally, dict]:
    """Analyze ``games`` (RawGames, in input order) into fresh buffers for the tables
    ``names``; what a worker runs for one batch.

    Returns ``(tally, tables)``: ``tables`` maps each table name that received rows to a
    ``pyarrow.RecordBatch`` with the table's schema (``arrow=True``) or to its column
    buffers (``dict[str, list]``).
    """
    tables = new_tables(names, options)
    tally = Tally()
    for raw in games:
        analyze_one(raw, tables, options, tally)
    out = {}
    for name in names:
        if buffered_rows(tables[name]):
            if arrow:
                from chessscan.reports.schema import schema_for
                from chessscan.reports.writers import to_record_batch

                out[name] = to_record_batch(tables[name], schema_for(name, optional_columns(name, options)), name)
            else:
                out[name] = tables[name]
    return tally, out


def _start_pool(jobs: int) -> ProcessPoolExecutor:
    """A pool of ``jobs`` workers with its first worker running (the forkserver's imports
    done: the other workers then start in milliseconds)."""
    pool = ProcessPoolExecutor(jobs, mp_context=_mp_context(), initializer=_init_worker)
    try:
        pool.submit(int).result()
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    return pool


def _init_worker() -> None:
    # Ctrl-C reaches the whole process group: let the main process alone handle it (it
    # shuts the pool down) instead of every worker printing a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _mp_context():
    # forkserver where there is one: workers are forked from a clean server process that has
    # imported chessscan once, never from the main process, whose threads (tqdm's monitor,
    # Arrow's pools) make fork unsafe. spawn elsewhere (Windows). pandas is preloaded too:
    # pyarrow imports it on the first list -> Arrow conversion (~0.3 s), better once in the
    # server than once per worker.
    # Both re-import the main script in each worker, which fails for a script read from
    # stdin ('<stdin>' is no file): fork is then the only start method that works.
    methods = multiprocessing.get_all_start_methods()
    main_file = getattr(sys.modules.get("__main__"), "__file__", None)
    if main_file is not None and not os.path.exists(main_file) and "fork" in methods:
        return multiprocessing.get_context("fork")
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["chessscan.engines.parallel", "pandas"])
        return ctx
    return multiprocessing.get_context("spawn")


def _accepts_arrow(sink) -> bool:
    """Whether ``sink.write`` takes Arrow arrays as column buffers (a ReportWriter or a
    MemorySink does; any other sink gets Python lists)."""
    from chessscan.engines.local import MemorySink
    from chessscan.reports.writers import ReportWriter

    return isinstance(sink, (ReportWriter, MemorySink)) or bool(getattr(sink, "accepts_arrow", False))


class _Done:
    """A result computed in the main process, queued like a Future."""

    __slots__ = ("value",)

    def __init__(self, value) -> None:
        self.value = value

    def result(self):
        return self.value


def run_parallel(paths: Iterable[str], sink, options: AnalysisOptions = AnalysisOptions(),
                 progress: bool = False, batch_rows: int = DEFAULT_BATCH_ROWS, jobs: int | None = None,
                 batch_games: int = DEFAULT_BATCH_GAMES, batch_bytes: int = DEFAULT_BATCH_BYTES,
                 in_flight: int | None = None) -> Tally:
    """Like :func:`chessscan.engines.local.run`, with the games analyzed by ``jobs`` worker
    processes (None: :func:`default_jobs`; 1: :func:`~chessscan.engines.local.run` itself).

    The sink receives the same rows in the same order as with one process (in batches of
    other sizes); the returned tally is the same. ``batch_rows`` applies to the EPD sources
    (analyzed here); PGN games go to workers in batches of ``batch_games`` games or
    ``batch_bytes`` bytes of movetext, at most ``in_flight`` batches at a time (default
    ``2 * jobs``).

    Raises ``ValueError`` for ``jobs``, ``batch_games``, ``batch_bytes`` or ``in_flight`` < 1,
    ``OSError`` when a source cannot be opened, and
    ``concurrent.futures.process.BrokenProcessPool`` when a worker dies (killed, out of
    memory). Bad content never raises.
    """
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    if batch_games < 1 or batch_bytes < 1:
        raise ValueError("batch_games and batch_bytes must be at least 1")
    in_flight = 2 * jobs if in_flight is None else in_flight
    if in_flight < 1:
        raise ValueError(f"in_flight must be at least 1, not {in_flight}")
    paths = [os.fspath(p) for p in paths]
    if jobs == 1:
        return run(paths, sink, options, progress=progress, batch_rows=batch_rows)

    names = tables_for(paths, options)
    pgn_names = tuple(n for n in names if n != "epd_positions")
    arrow = _accepts_arrow(sink)
    tally = Tally()
    tables = new_tables(names, options)  # for the EPD sources, analyzed here
    bar = _progress(paths, progress)
    pool: ProcessPoolExecutor | None = None
    starter: ThreadPoolExecutor | None = None
    starting: Future | None = None  # the pool, while a thread starts it
    backlog: list[tuple[list, int]] = []  # (games, input bytes) read while the pool starts
    backlog_bytes = 0
    pending: deque[tuple[Future | _Done, int]] = deque()  # (result, input bytes it covers)

    def deliver(limit: int) -> None:
        """Write queued results, oldest first, until at most ``limit`` remain."""
        while len(pending) > limit:
            fut, advance = pending.popleft()
            batch_tally, out = fut.result()
            tally.merge(batch_tally)
            for name in pgn_names:  # table order does not matter, row order within one does
                batch = out.get(name)
                if batch is None:
                    continue
                if arrow:
                    sink.write(name, dict(zip(batch.schema.names, batch.columns)))
                else:
                    sink.write(name, batch)
            if bar is not None:
                bar.update(advance)

    def dispatch(games: list, advance: int) -> None:
        deliver(in_flight - 1)
        pending.append((pool.submit(analyze_batch, games, options, pgn_names, arrow), advance))

    def pool_ready(wait: bool) -> bool:
        """Whether the pool is up; once it is (waiting for it if ``wait``), the backlog goes
        to it first."""
        nonlocal pool, starting
        if pool is None:
            if starting is None or not (wait or starting.done()):
                return False
            pool = starting.result()
            starting = None
            for games, advance in backlog:
                dispatch(games, advance)
            backlog.clear()
        return True

    def submit(games: list, advance: int, size: int, full: bool) -> None:
        nonlocal starter, starting, backlog_bytes
        if pool is None and starting is None:
            if not full:  # the whole input so far is less than one batch
                pending.append((_Done(analyze_batch(games, options, pgn_names, arrow)), advance))
                return
            starter = ThreadPoolExecutor(1, thread_name_prefix="chessscan-pool-start")
            starting = starter.submit(_start_pool, jobs)
        if pool_ready(wait=False):
            dispatch(games, advance)
        else:
            backlog.append((games, advance))
            backlog_bytes += size
            if backlog_bytes >= BACKLOG_BYTES:
                pool_ready(wait=True)

    def deliver_all() -> None:
        pool_ready(wait=True)
        deliver(0)

    def flush_epd() -> None:
        flush_tables(sink, tables, names)

    try:
        for path in paths:
            if is_epd(path):
                deliver_all()  # rows of earlier games first (they share the issues table)
                run_epd_source(path, tables, tally, flush_epd, bar, batch_rows)
                flush_epd()
                continue
            with open_source(path) as stream:
                seen = 0
                batch: list = []
                size = 0
                for raw in read_games(stream, source=source_name(path)):
                    batch.append(raw)
                    size += len(raw._mt) + 1
                    if len(batch) >= batch_games or size >= batch_bytes:
                        now = stream.bytes_read
                        submit(batch, now - seen, size, True)
                        seen = now
                        batch, size = [], 0
                if batch:
                    submit(batch, stream.bytes_read - seen, size, False)
                elif bar is not None and stream.bytes_read > seen:
                    bar.update(stream.bytes_read - seen)  # blank tail after the last game
        deliver_all()
    except BaseException:
        if starting is not None:
            try:
                pool = starting.result()
            except BaseException:
                pass  # the start failed: nothing to shut down, the first error is the one to see
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
            pool = None
        raise
    finally:
        if starter is not None:
            starter.shutdown(wait=True)
        if pool is not None:
            pool.shutdown(wait=True)
        if bar is not None:
            bar.close()
    return tally
