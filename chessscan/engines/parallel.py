"""Run the analysis on every core: the main process reads and cuts, worker processes analyze
and write.

Shape of a run (``chessscan analyze --jobs N``):

* The main process opens each PGN source (decompressing it), reads it in blocks into a
  buffer of shared memory (:class:`~chessscan.engines.chunks.Slot`) and cuts the text into
  chunks, each ending just before a *sure game start*
  (:func:`chessscan.readers.pgn.last_sure_game_start`: a line where the reader starts a game
  whatever state it is in, unless a brace comment opened before the bytes the rule looks at
  is still open there). That is all it does with the text, and none of it per game: a cut
  is a scan back from the chunk's end in C, and one pass in C counts the chunk's lines and
  ``[Event "`` lines (:func:`chessscan.readers.counts.text_counts`).
* Each chunk goes to a pool of ``N`` worker processes as a description of where its text
  lies (:class:`~chessscan.engines.chunks.ChunkText`: the worker maps the shared memory and
  reads it in place; bytes where there is none), with the game index, byte offset and line
  of its first byte. A worker reads it with the PGN reader, shifts its games to their place
  in the source (:meth:`~chessscan.readers.pgn.RawGame.rebase`), analyzes them (cross-check
  included) exactly as the single process path does, and either
  * writes their rows itself (:func:`write_chunk`): when the sink is a report whose tables
    take parts (:class:`~chessscan.reports.writers.ReportWriter` with ``parts=True``, what
    ``chessscan analyze`` writes), each table's rows go to a part of that table, under a
    temporary name (:mod:`chessscan.reports.dataset`), and the worker sends back a
    :class:`~chessscan.analysis.game.Tally` and the parts' names and row counts; or
  * sends the rows back, one Arrow record batch per table (:func:`analyze_chunk`: any other
    sink, such as ``validate``'s diagnostics or :func:`chessscan.scan`'s tables).
* The main process takes the results **in submission order** and merges the tallies in that
  order; it names the parts (``part-NNNNNN.parquet``, numbered in that order, or for CSV
  appends their rows to the table's file) or writes the rows it got. So every table has the
  same rows in the same order as with ``--jobs 1``, and the summary is the same (the
  counters' key order included). Rows the main process writes itself (the EPD sources, the
  warning of a source with no game, the once-a-file issues) go to parts of its own between
  the workers' ones.
* At most ``in_flight`` chunks (default ``2 * N``) are read ahead, so memory stays flat
  however large the input. The progress bar counts the input bytes of the chunks written.

Chunk sizes. With the rows sent back, chunks are about ``batch_bytes`` (1 MiB): the main
process holds a chunk's rows. With parts, a chunk is a part of every table, and its size
balances three costs: the parts of a large input (a file per table and chunk), the memory of
the chunks in flight (``in_flight`` of them in shared memory), and the wait at the end (the
last chunks' work, shared by fewer workers). The first chunks are ``batch_bytes``; then each
holds a ``2 N``-th of the text still to come (estimated from the size of the file and the
compression ratio so far; for stdin, ``batch_bytes`` doubled every ``N`` chunks), between
``batch_bytes`` and :data:`PART_BYTES` (16 MiB): a Lichess month (390 GB of PGN) is then
about 24,000 parts per table, 32 MiB of shared memory per worker, and the last chunks a
megabyte each.

Cuts inside comments. The cut is optimistic: only the reader of the text before it knows
whether a comment is still open there (PGN §5: a brace comment may hold blank lines and tag
lines). Each worker reports whether its chunk ended inside a comment
(:class:`~chessscan.readers.pgn.ReadEnd`); when the main process comes to write such a chunk
(not the last of its source), it drops that result and the next chunk's, and analyzes the two
chunks' text as one chunk (again, while it too ends inside a comment; the parts the workers
wrote for the two results are removed). A chunk whose next
chunk is not queued yet waits for it at the head of the queue; if the rest of the source is
then read here (below), the reading starts at that chunk. A comment decides within the
reader's look-ahead (64 KiB) whether it holds a game start, so one more chunk is usually
enough; should joined chunks reach ``MAX_CHUNK_BYTES`` (a comment at every cut), the rest of
the source is read here.

Game index. Only the reader knows how many games a chunk holds, so the main process
estimates each chunk's first game index by counting ``[Event "`` lines (exact for every
regular file) and checks the estimate when the chunk's result comes back in order. A wrong
estimate is corrected by shifting the ``game_index`` columns; with ``--cross-check sample``,
whose sample depends on the game index, or with parts (written already), the chunk is
analyzed again with the right index (its parts removed), and the rest of that source is read
in the main process (as below). A source with no sure
game start in ``MAX_CHUNK_BYTES`` bytes is read in the main process too: the main process
then reads games and sends them to the workers in batches of ``batch_games`` games.

The pool starts in a background thread once the first full chunk is read (with parts: at
once, as the first chunks are read): the first worker's start waits for the forkserver to
import chessscan (about 0.2 s), and meanwhile the main process analyzes the chunks it cuts
itself, so that no core waits (not with parts: the main process does no analysis there).

Parts and stops. A part is named only when its chunk's result is taken in order; the parts
of a result dropped (joined with the next chunk, analyzed again) are removed, and so are,
when a run stops or fails, those of every result not taken yet, and any part a worker was
writing (:func:`~chessscan.reports.dataset.sweep`): a stopped run leaves whole parts only,
the first ones in input order.

Stops. Ctrl-C, SIGTERM and SIGHUP become an exception that the signal handler raises in the
main thread between any two bytecodes (see chessscan.cli). So the main thread never changes
the pool's state itself: every task goes to the pool through that background thread (the
pool's thread), where Python runs no signal handler, and the main thread only waits for
it, a wait that a stop interrupts harmlessly. ``ProcessPoolExecutor.submit`` starts a
worker when none is idle, and a stop raised inside it used to cut that start in two:
after the forkserver forked the worker, before the worker got its process object (the
worker died of ``EOFError``, its traceback on stderr), or after the worker started, before
the pool recorded it (the pool never told that worker to stop, and Python's exit hook
waited for it forever). On a stop, the pool's thread finishes what it is doing before the
pool is stopped, so the pool knows every worker it has.

Game tables (Parquet, Arrow: :mod:`chessscan.readers.tables`) are read in the main process,
row group batch by batch, and their games sent to the workers in batches of ``batch_games``;
but when the workers write the parts, a Parquet table of at least ``jobs`` ranges of
``batch_games`` rows (:func:`~chessscan.readers.tables.row_group_ranges`: from the footer,
no counting pass) is spread by row group: each task reads its range itself
(:func:`~chessscan.readers.tables.read_row_groups`), its games numbered by their rows in the
file. A range whose read stops at a fault ends the table there, as one process's read does:
the results of the ranges after it are dropped, their parts removed.

Faults. A process of the run that dies (killed, out of memory) raises BrokenProcessPool
from :func:`run_parallel`, whichever it is: a worker (the pool sees it; one killed while it
sent its result left the pool's manager thread waiting for the rest, so the main process
looks at the workers itself while it waits), the forkserver (the workers it forked run on:
they are killed by pid, as the pool's SIGTERM does not end them) or the resource tracker
(multiprocessing would start a second one, which printed a traceback for every semaphore
it did not know). The workers are then killed at once, and nothing of the run is left.

EPD sources are analyzed in the main process (after the PGN chunks before them are
written). An input of less than one chunk is analyzed in the main process too: starting
the pool would cost more than it saves. When every input is a file under a sixteenth of a
chunk (less than one chunk even decompressed: too little work for a pool), the whole run is
the one-process run.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import signal
import sys
import threading
import types
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Iterable, Sequence

from chessscan.analysis.game import Tally
from chessscan.analysis.options import AnalysisOptions
from chessscan.analysis.sampling import Deferred
from chessscan.engines.local import (
    DEFAULT_BATCH_ROWS,
    _progress,
    count_progress,
    accepts_arrow,
    add_no_games_issue,
    analyze_one,
    flush_tables,
    game_source,
    is_epd,
    new_sampler,
    new_tables,
    optional_columns,
    replay_deferred,
    run,
    run_epd_source,
    sink_columns,
    tables_for,
)
from chessscan.engines.chunks import ChunkStream, ChunkText, Slots
from chessscan.readers.counts import termination_marks, text_counts
from chessscan.readers.pgn import ReadEnd, last_sure_game_start, read_games
from chessscan.readers.sources import TruncatedInput, open_source, source_name, source_size
from chessscan.readers.tables import is_table, read_row_groups, row_group_ranges
from chessscan.reports.dataset import PartTarget, add_rows, discard_parts, sweep
from chessscan.reports.writers import buffered_rows, new_buffers

__all__ = ["DEFAULT_BATCH_GAMES", "DEFAULT_BATCH_BYTES", "MAX_CHUNK_BYTES", "PART_BYTES", "default_jobs", "auto_jobs",
           "analyze_batch", "analyze_chunk", "write_batch", "write_chunk", "run_parallel"]

#: Input bytes per chunk sent to a worker (cut at the last sure game start before): large
#: enough that pickling and process switches are noise (1 MiB of Lichess games with clock
#: and eval comments is ~0.25 s of work), small enough to keep every core busy until the end.
DEFAULT_BATCH_BYTES = 1 << 20
#: A chunk grows up to this many bytes while it has no sure game start; beyond, the rest of
#: the source is read in the main process. Four times the reader's game cap
#: (:data:`~chessscan.readers.pgn.MAX_GAME_BYTES`): a game as long as it allows fits.
MAX_CHUNK_BYTES = 16 << 20
#: ... or up to about this many games (game termination markers counted): a worker holds a
#: chunk's rows until it is done, so a chunk of many tiny games without sure game starts
#: (1M tagless games fit in 3 MB) would cost memory in proportion to its games.
MAX_CHUNK_GAMES = 20_000
#: Games per batch when the main process reads a source itself (see the module doc).
DEFAULT_BATCH_GAMES = 200
#: ... when the workers write the parts (a batch is a part).
PART_BATCH_GAMES = 5000
#: The largest chunk cut when the workers write the parts (module doc: Chunk sizes).
PART_BYTES = 16 << 20
_READ_SIZE = 1 << 20
# Whether the main process analyzes chunks while the pool starts (tests turn it off to send
# every chunk after the first to the workers).
_WORK_WHILE_POOL_STARTS = True
_LOOKBACK = 1 << 16  # bytes looked at before a candidate game start


def default_jobs() -> int:
    """Number of cores this process may run on (the CPU affinity mask where the platform
    has one, else ``os.cpu_count()``); at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def auto_jobs() -> int:
    """``--jobs``' default: a worker process per core (:func:`default_jobs`), but one process
    on 2 cores or fewer. There, the single process's Parquet thread already takes the second
    core, and two workers beside the main process were no faster (lichess-magnus: 0.56 s
    wall in one process, 0.71 s with two workers; four times over: 2.08 s, 2.10 s)."""
    cores = default_jobs()
    return cores if cores > 2 else 1


def _all_under_a_chunk(paths: Sequence[str], batch_bytes: int) -> bool:
    """Whether every input is a file so small that it holds less than one chunk of text
    even decompressed: a sixteenth of ``batch_bytes`` (zstd and gzip shrink PGN 5 to 10
    times). Stdin and pipes, whose size is unknown, are not."""
    limit = batch_bytes // 16
    for path in paths:
        size = source_size(path)
        if size is None or size >= limit:
            return False
    return True


def analyze_batch(games: Sequence, options: AnalysisOptions, names: Sequence[str],
                  arrow: bool = True, full: int = 0) -> tuple[Tally, dict, Deferred | None]:
    """Analyze ``games`` (RawGames of one source, in input order) into fresh buffers for the
    tables ``names``; what a worker runs for one batch.

    Returns ``(tally, tables, deferred)``: ``tables`` maps each table name that received rows
    to a ``pyarrow.RecordBatch`` with the table's schema (``arrow=True``) or to its column
    buffers (``dict[str, list]``); ``deferred``: with ``--cross-check sample``, the games a
    rare kind may sample (:class:`~chessscan.analysis.sampling.Deferred`; ``full``: the
    mask of kinds whose quota the run has used up), for the main process to decide in
    input order (:func:`~chessscan.engines.local.replay_deferred`); else None.
    """
    tables = new_tables(names, options)
    tally = Tally()
    tally.cross_check_mode = options.cross_check
    deferred = Deferred(full) if options.cross_check == "sample" else None
    for raw in games:
        analyze_one(raw, tables, options, tally, None, deferred)
    out = {}
    for name in names:
        if buffered_rows(tables[name]):
            if arrow:
                from chessscan.reports.schema import schema_for
                from chessscan.reports.writers import to_record_batch

                out[name] = to_record_batch(tables[name], schema_for(name, optional_columns(name, options)), name)
            else:
                out[name] = sink_columns(tables[name], False)
    return tally, out, deferred


def analyze_chunk(data: ChunkText | bytes, error: BaseException | None, source: str, index0: int, offset0: int,
                  line0: int, options: AnalysisOptions, names: Sequence[str],
                  arrow: bool = True, full: int = 0) -> tuple[Tally, dict, int, bool, Deferred | None]:
    """Read the PGN text ``data`` (a :class:`~chessscan.engines.chunks.ChunkText`, read in
    place, or bytes: a part of ``source`` starting at a line start, after ``offset0`` bytes
    and ``line0`` lines of it; ``error`` is raised after the last byte, as the source raised
    it) and analyze its games, numbered from ``index0``; what a worker runs for one chunk.
    Returns ``(tally, tables, games, open, deferred)``: as :func:`analyze_batch`, the number
    of games read, and whether the text ended inside a comment
    (:class:`~chessscan.readers.pgn.ReadEnd`: the next chunk may continue it)."""
    end = ReadEnd()
    games = [raw.rebase(index0, offset0, line0)
             for raw in read_games(ChunkStream(data, error), source=source, end=end)]
    tally, tables, deferred = analyze_batch(games, options, names, arrow, full)
    return tally, tables, len(games), end.open, deferred


def write_chunk(data: ChunkText | bytes, error: BaseException | None, source: str, index0: int, offset0: int,
                line0: int, options: AnalysisOptions, names: Sequence[str], target: PartTarget, number: int,
                full: int = 0) -> tuple[Tally, dict, int, bool, dict, Deferred | None]:
    """:func:`analyze_chunk` for a report whose tables take parts: the rows go to this
    chunk's part of each table, written here (``target``; ``number``: a provisional part
    number, for its temporary name), as the rows of a run in one process, batch by batch.
    Returns ``(tally, parts, games, open, held, deferred)``: ``parts`` maps each table that
    got rows to ``(temporary path, rows)`` (its rows as its Parquet footer holds them),
    ``held`` the issue filter's once-a-file rows for the main process to merge
    (:meth:`~chessscan.reports.filters.IssueFilter.take_held`). On any error the parts
    written are removed."""
    end = ReadEnd()
    games = (raw.rebase(index0, offset0, line0) for raw in read_games(ChunkStream(data, error), source=source, end=end))
    tally, parts, count, held, deferred = _write_games(games, options, names, target, number, full)
    return tally, parts, count, end.open, held, deferred


def write_batch(games: Sequence, options: AnalysisOptions, names: Sequence[str], target: PartTarget, number: int,
                full: int = 0) -> tuple[Tally, dict, dict, Deferred | None]:
    """:func:`analyze_batch` for a report whose tables take parts (see :func:`write_chunk`):
    returns ``(tally, parts, held, deferred)``."""
    tally, parts, _, held, deferred = _write_games(iter(games), options, names, target, number, full)
    return tally, parts, held, deferred


class _PartSink:
    """Appends each table's rows to the chunk's part of it, opened at the first rows."""

    accepts_arrow = True

    def __init__(self, target: PartTarget, number: int) -> None:
        self.target, self.number = target, number
        self.writers: dict = {}

    def write(self, name: str, columns) -> None:
        w = self.writers.get(name)
        if w is None:
            w = self.writers[name] = self.target.writer(name, self.number)
        w.write(columns)


def _write_games(games, options: AnalysisOptions, names: Sequence[str], target: PartTarget, number: int,
                 full: int, batch_rows: int = DEFAULT_BATCH_ROWS):
    from chessscan.reports.filters import IssueFilter

    tables = new_tables(names, options)
    tally = Tally()
    tally.cross_check_mode = options.cross_check
    deferred = Deferred(full) if options.cross_check == "sample" else None
    parts = _PartSink(target, number)
    sink = IssueFilter(parts, target.select, target.ignore) if target.filtered else parts
    count = 0
    try:
        positions = tables["positions"]
        game_rows = tables["games"]["game_index"]
        issues = tables["issues"]["code"]
        for raw in games:
            count += 1
            analyze_one(raw, tables, options, tally, None, deferred)
            # As one process flushes (chessscan.engines.local.run): between games.
            if len(positions) >= batch_rows:
                flush_tables(sink, tables, ("positions",))
            if len(game_rows) >= batch_rows or len(issues) >= batch_rows:
                flush_tables(sink, tables, names)
        flush_tables(sink, tables, names)
        held = sink.take_held() if target.filtered else {}
        out = {}
        for name, w in parts.writers.items():
            w.close()
            rows = w.rows_written
            if target.fmt == "parquet":
                import pyarrow.parquet as pq

                with open(w.partial_path, "rb") as f:  # by its exact name (Arrow takes UTF-8 names)
                    rows = pq.read_metadata(f).num_rows  # as the file holds them
            out[name] = (str(w.partial_path), rows)
    except BaseException:
        for w in parts.writers.values():
            w.discard()
        raise
    return tally, out, count, held, deferred


def _add_rows(out: dict, name: str, rows: dict[str, list], arrow: bool, options: AnalysisOptions) -> None:
    """Add the rows ``rows`` (column buffers, in input order) to table ``name`` of a result
    ``out``, keeping the rows in ``game_index`` order (a stable sort: the rows of one game
    stay in their order)."""
    batch = out.get(name)
    if batch is not None:
        have = {k: v.to_pylist() for k, v in zip(batch.schema.names, batch.columns)} if arrow else batch
        rows = {k: have[k] + rows[k] for k in have}
        order = sorted(range(len(rows["game_index"])), key=rows["game_index"].__getitem__)
        rows = {k: [v[i] for i in order] for k, v in rows.items()}
    if arrow:
        from chessscan.reports.schema import schema_for
        from chessscan.reports.writers import to_record_batch

        out[name] = to_record_batch(rows, schema_for(name, optional_columns(name, options)), name)
    else:
        out[name] = rows


# The chunk size rule's counts (one C pass each, see chessscan.readers.counts): termination
# markers (PGN §8.2.6, Result tags included: about twice a chunk's games), and a chunk's line
# ends and games if every game has one ``[Event "`` line at a line start.
_termination_marks = termination_marks
_chunk_counts = text_counts


def _shift_game_index(out: dict, delta: int, arrow: bool) -> None:
    """Add ``delta`` to the ``game_index`` column of every table in ``out`` (a result of
    :func:`analyze_chunk` whose index estimate was off by ``-delta``)."""
    for name, batch in out.items():
        if arrow:
            import pyarrow.compute as pc

            i = batch.schema.get_field_index("game_index")
            if i >= 0:
                column = batch.column(i)
                out[name] = batch.set_column(i, "game_index", pc.add(column, delta).cast(column.type))
        elif "game_index" in batch:
            batch["game_index"] = [v + delta for v in batch["game_index"]]


def _start_pool(jobs: int) -> ProcessPoolExecutor:
    """A pool of ``jobs`` workers with its first worker running (the forkserver's imports
    done: the other workers then start in milliseconds). Runs in the pool's thread."""
    if hasattr(signal, "pthread_sigmask"):
        # The forkserver and the workers inherit this thread's signal mask. Ctrl-C reaches
        # the whole process group; with SIGINT blocked, the forkserver does not die with a
        # traceback in its imports (it ignores SIGINT only after them): the main process
        # alone handles it. The resource tracker is started first, as starting it unblocks
        # SIGINT in the calling thread.
        from multiprocessing import resource_tracker

        if hasattr(signal, "SIGHUP"):  # it leaves SIGHUP as it finds it; SIGHUP would kill it
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGHUP})
        resource_tracker.ensure_running()
        _never_restart_the_resource_tracker()
        # SIGTERM and SIGHUP too: `timeout` and a closed terminal signal the whole group, and
        # a worker that died of them would turn a clean stop into a broken pool.
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    pool = ProcessPoolExecutor(jobs, mp_context=_mp_context(), initializer=_init_worker,
                               initargs=(os.getpid(),))
    try:
        _submit(pool, int).result()
    except BaseException:
        _stop_pool(pool)
        raise
    return pool


def _submit(pool: ProcessPoolExecutor, fn, *args) -> Future:
    """``pool.submit``, which may start a worker: a forkserver gone (killed) makes that fail
    with EOFError or an OSError (its socket refused or gone), raised as the pool's breakage
    (BrokenProcessPool), like a worker that died."""
    try:
        return pool.submit(fn, *args)
    except BrokenProcessPool as exc:
        if dead := _dead_helpers(wait=0.2):  # say which (the pool says "a child process")
            raise BrokenProcessPool(f"{dead} process died") from exc
        raise
    except (EOFError, OSError) as exc:
        dead = _dead_helpers(wait=0.2)
        raise BrokenProcessPool(f"{dead} process died" if dead else
                                f"the forkserver could not start a worker process ({type(exc).__name__}: {exc}): "
                                "killed?") from exc


#: Seconds a stopped run waits for its workers to finish the chunks they hold (about a second
#: of work each) before it kills them.
STOP_GRACE_SECONDS = 30


def _stop_pool(pool: ProcessPoolExecutor, broken: bool = False) -> None:
    """Stop a pool: queued chunks cancelled, the chunks the workers hold finished (they
    ignore SIGINT, SIGTERM and SIGHUP), every worker waited for, so that no process outlives
    the run. Killing a worker instead can cut its result in half in the result pipe, where
    the pool's manager thread then waits for the rest forever, and Python's exit hook with
    it; a worker still busy after :data:`STOP_GRACE_SECONDS` is killed all the same.

    ``broken`` (or a pool that says so): a process of the run died (a worker, the forkserver,
    the resource tracker), and the run ends with an error: the workers are killed at once,
    and this process's end of the result pipe is closed, so that a manager thread waiting
    for the rest of a result cut in half reads the pipe's end instead of waiting forever."""
    import time

    # (No public API before 3.14; taken before shutdown, which drops them.)
    processes = list((getattr(pool, "_processes", None) or {}).values())
    call_queue = getattr(pool, "_call_queue", None)
    result_queue = getattr(pool, "_result_queue", None)
    manager = getattr(pool, "_executor_manager_thread", None)
    broken = broken or bool(getattr(pool, "_broken", False))
    pool.shutdown(wait=False, cancel_futures=True)
    deadline = time.monotonic() + (0 if broken else STOP_GRACE_SECONDS)
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
    late = processes if broken else [p for p in processes if p.is_alive()]
    if late:
        for process in late:
            process.kill()
        # The call queue's feeder thread may be blocked writing to a dead worker.
        if call_queue is not None:
            call_queue.cancel_join_thread()
        for process in late:
            process.join(5)
    if broken and result_queue is not None:
        try:
            result_queue._writer.close()  # (the workers, which hold the other write ends, are dead)
        except (AttributeError, OSError):
            pass
    if manager is not None:
        # The pool's manager thread closes its wake-up pipe as it ends. Still running at
        # exit, it raced Python's exit hook, which writes to that pipe: "Bad file
        # descriptor" and a traceback on stderr.
        manager.join(5)


def _result(fut, pool: ProcessPoolExecutor | None, every: float = 1.0, grace: float = 2.0):
    """``fut.result()``, for a task of ``pool``. A worker killed while it sends its result
    leaves half a result in the result pipe, and the pool's manager thread waits for the
    rest forever, the future with it: while waiting, the workers and multiprocessing's
    helper processes are looked at every ``every`` seconds, and a worker dead for ``grace``
    seconds with the pool not broken, or a dead helper, raises BrokenProcessPool."""
    import time
    from concurrent.futures import TimeoutError as FutureTimeout

    if pool is None or isinstance(fut, _Done):
        return fut.result()
    dead_since = None
    while True:
        try:
            return fut.result(timeout=every)
        except FutureTimeout:
            pass
        if dead := _dead_helpers():
            raise BrokenProcessPool(f"{dead} process died")
        if getattr(pool, "_broken", False):
            continue  # the manager thread saw it: the future is about to say so
        processes = list((getattr(pool, "_processes", None) or {}).values())
        if any(not p.is_alive() for p in processes):
            dead_since = dead_since or time.monotonic()
            if time.monotonic() - dead_since >= grace:
                raise BrokenProcessPool("a worker process was killed while it sent its result")


#: Signals that stop a run: the main process handles them; workers block or ignore them.
STOP_SIGNALS = frozenset(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))


def _init_worker(main_pid: int) -> None:
    # Ctrl-C, `timeout` and a closed terminal reach the whole process group: the main
    # process alone handles them (it stops the pool) instead of every worker printing a
    # traceback or dying under it. A worker whose main process is gone exits on its own
    # (its queue closes).
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    # Ignoring those, a worker must notice alone that its run is gone (killed, or ended by
    # SIGPIPE under `| head`): it checks that the main process is still there.
    threading.Thread(target=_exit_when_orphaned, args=(main_pid,), name="chessscan-orphan-watch",
                     daemon=True).start()
    _never_restart_the_resource_tracker()  # (the tracker is the main process's)


def _exit_when_orphaned(main_pid: int, every: float = 0.5) -> None:
    import time

    while True:
        time.sleep(every)
        try:
            os.kill(main_pid, 0)
        except ProcessLookupError:
            os._exit(1)
        except OSError:
            pass
        else:
            # A main process that died (killed) but that its parent has not waited for yet is
            # a zombie: still there for kill(). A parent that waits for the end of the run's
            # output pipes, which this worker holds, would wait forever.
            if _process_state(main_pid) in ("Z", "X"):
                os._exit(1)


def _process_state(pid: int) -> str | None:
    """The state letter of process ``pid`` (``R``, ``S``, ``Z`` for a zombie...) from Linux's
    /proc, or None where there is no /proc or no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    # pid (comm) state ...: comm may hold spaces and parentheses, the state follows the last ')'.
    return stat[stat.rfind(b")") + 2:][:1].decode("ascii", "replace") or None


class _KilledByPid:
    """A forkserver worker of the pool, killed when the pool terminates it. ProcessPoolExecutor
    terminates the workers of a broken pool (a worker, or the forkserver, died) with SIGTERM,
    which chessscan's workers ignore (a stop signal to the process group is the main
    process's to handle): they lived on, blocked on the pool's queues, and the main process
    waited for them forever at exit."""

    def terminate(self) -> None:
        self.kill()

    def kill(self) -> None:
        # By pid: the worker's Popen asks the forkserver whether it still runs, and once the
        # forkserver is gone it answers "exited with 255" for a worker that runs on.
        popen = self._popen
        if self.pid is None or popen is None or popen.poll() not in (None, 255):
            return  # not started, or ended and the forkserver said how
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass


def _dead_helpers(wait: float = 0.0) -> str:
    """Which of multiprocessing's helper processes this process started has died: ``'the
    forkserver'``, ``'the resource tracker'``, both joined, or ``''``; ``wait``: seconds
    to look again meanwhile (a pool sees a process's pipes close a moment before the process
    can be waited for). A dead resource tracker is also made harmless: multiprocessing would
    start another at the next semaphore made or removed, with a warning, and the new one
    printed a KeyError traceback for every semaphore it never saw; its pipe is pointed at
    os.devnull instead."""
    import time
    from multiprocessing import forkserver, resource_tracker

    deadline = time.monotonic() + wait
    while not (dead := _dead_helpers_now(forkserver, resource_tracker)) and time.monotonic() < deadline:
        time.sleep(0.02)
    return dead


def _dead_helpers_now(forkserver, resource_tracker) -> str:
    dead = []
    server = getattr(forkserver, "_forkserver", None)
    if _child_gone(getattr(server, "_forkserver_pid", None), reap=False):  # (multiprocessing reaps it)
        dead.append("the forkserver")
    tracker = getattr(resource_tracker, "_resource_tracker", None)
    fd = getattr(tracker, "_fd", None)
    if fd is not None and _child_gone(getattr(tracker, "_pid", None), reap=True):
        dead.append("the resource tracker")
        _tracker_pipe_to_devnull(fd)
        tracker._pid = None  # reaped here: not to be waited for again
    return " and ".join(dead)


def _tracker_pipe_to_devnull(fd: int) -> None:
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)  # the same descriptor number: other threads may hold it
        os.close(null)
    except OSError:
        pass


def _never_restart_the_resource_tracker() -> None:
    """Make this process's resource tracker, once started, never started again: a message to
    one that died (killed, or by a SIGHUP to the process group) goes nowhere instead. As it
    is, multiprocessing starts another at the next semaphore or shared memory made or
    removed, with a warning, and the new one prints a KeyError traceback for each it never
    saw, or the message raises BrokenPipeError when the tracker dies between its probe and
    the message. :func:`_dead_helpers` still sees that it died (it is not waited for here).
    Relies on ``ResourceTracker``'s private ``_fd`` and ``_send`` (as in Python 3.11); a
    tracker without them is left as it is."""
    from multiprocessing import resource_tracker

    tracker = getattr(resource_tracker, "_resource_tracker", None)
    start = getattr(tracker, "ensure_running", None)
    if start is None or getattr(start, "chessscan_guard", False) or not hasattr(tracker, "_send"):
        return

    def write(message: bytes) -> None:
        if tracker._fd is None:
            start()  # never started in this process (nor handed down by its parent)
        fd = tracker._fd
        try:
            os.write(fd, message)  # (under PIPE_BUF bytes: written whole, no lock needed)
        except OSError:  # the tracker died: its resources are removed by this run itself
            _tracker_pipe_to_devnull(fd)

    def ensure_running() -> None:
        write(b"PROBE:0:noop\n")

    def send(cmd: str, name: str, rtype: str) -> None:
        message = f"{cmd}:{name}:{rtype}\n".encode("ascii")
        if len(message) > 512:
            raise ValueError("msg too long")
        write(message)

    ensure_running.chessscan_guard = True
    tracker.ensure_running = ensure_running
    tracker._send = send


def _child_gone(pid: int | None, reap: bool) -> bool:
    """Whether child process ``pid`` has ended (``reap``: it is then waited for, else left
    for whoever waits for it); False for None or a process that is not this one's child."""
    if pid is None or not hasattr(os, "WNOHANG"):
        return False
    try:
        if reap:
            return os.waitpid(pid, os.WNOHANG)[0] == pid
        if not hasattr(os, "waitid"):
            return False
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except OSError:  # (ChildProcessError: not a child, or already waited for)
        return False


def _mp_context():
    # forkserver where there is one: workers are forked from a clean server process that has
    # imported chessscan once, never from the main process, whose threads (tqdm's monitor,
    # Arrow's pools) make fork unsafe. spawn elsewhere (Windows). Nothing a worker runs
    # imports pandas (chessscan.analysis.arrow builds the Arrow arrays), nor the caller's
    # main script (_WorkerProcess).
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = _ForkServerContext()
        ctx.set_forkserver_preload(["chessscan.engines.parallel"])
        return ctx
    return _SpawnContext()


_MAIN_LOCK = threading.Lock()


class _WorkerProcess:
    """A worker process that does not run the caller's main script.

    forkserver and spawn prepare each new process by running the parent's main script again
    (as ``__mp_main__``), so that the functions it defines can be unpickled there. A worker
    runs chessscan's functions only, and that re-run broke the API in plain scripts: an
    unguarded ``chessscan.scan(..., jobs=2)`` ran the script's body again in every worker,
    which then died starting a pool of its own ("bootstrapping phase"), as did a script with
    no file (``python - < script.py``). The preparation data (``multiprocessing.spawn``)
    names the main script after ``sys.modules["__main__"]``: while a worker starts (a few
    milliseconds, under a lock; nothing chessscan runs meanwhile looks that entry up), it is a
    blank module, so none is named and the worker imports only what it unpickles.
    """

    def start(self) -> None:
        with _MAIN_LOCK:
            main = sys.modules.get("__main__")
            sys.modules["__main__"] = _BLANK_MAIN
            try:
                super().start()
            finally:
                if main is None:
                    sys.modules.pop("__main__", None)
                else:
                    sys.modules["__main__"] = main


_BLANK_MAIN = types.ModuleType("__main__")


class _SpawnWorker(_WorkerProcess, multiprocessing.context.SpawnProcess):
    pass


class _SpawnContext(type(multiprocessing.get_context("spawn"))):
    Process = _SpawnWorker


if "forkserver" in multiprocessing.get_all_start_methods():
    # (Not on Windows, which has no forkserver: multiprocessing defines these classes
    # only where there is one.)
    class _ForkServerWorker(_WorkerProcess, _KilledByPid, multiprocessing.context.ForkServerProcess):
        pass

    class _ForkServerContext(multiprocessing.context.ForkServerContext):
        Process = _ForkServerWorker


class _Done:
    """A result computed in the main process, queued like a Future."""

    __slots__ = ("value",)

    def __init__(self, value) -> None:
        self.value = value

    def result(self):
        return self.value


class _Source:
    """A PGN source's state while its chunks are in flight: the index of the next game whose
    result has been written (exact), and whether its index estimates proved wrong."""

    __slots__ = ("exact", "irregular")

    def __init__(self) -> None:
        self.exact = 0
        self.irregular = False


def _part_target(sink):
    """The report writer whose tables take parts written by the workers, and the
    :class:`~chessscan.reports.dataset.PartTarget` they write to: ``sink`` itself, or the
    inner sink of an :class:`~chessscan.reports.filters.IssueFilter` (whose rules the workers
    then apply to their parts); ``(None, None)`` for any other sink (the rows come back to
    this process)."""
    from chessscan.reports.filters import IssueFilter
    from chessscan.reports.writers import ReportWriter

    if isinstance(sink, IssueFilter) and isinstance(sink.inner, ReportWriter):
        target = sink.inner.part_target(sink.select, sink.ignore, filtered=True)
        return (sink.inner, target) if target is not None else (None, None)
    if isinstance(sink, ReportWriter):
        target = sink.part_target()
        return (sink, target) if target is not None else (None, None)
    return None, None


class _Task:
    """A queued task: its result (a Future, or :class:`_Done`), the input bytes it covers,
    for a chunk its source's state, arguments and whether it is the source's last (its cut
    and game index estimate are checked when it is written), and the slots its text is in."""

    __slots__ = ("fut", "advance", "state", "args", "last", "slots", "source", "table")

    def __init__(self, fut, advance: int, state=None, args=None, last: bool = False, slots=(),
                 source: str | None = None, table=None) -> None:
        self.fut, self.advance, self.state, self.args, self.last = fut, advance, state, args, last
        self.slots = list(slots)
        self.source = source  # the source its games are of (None: it has none)
        self.table = table  # a range of a table's row groups: that read of the table (see read_table)


def run_parallel(paths: Iterable[str], sink, options: AnalysisOptions = AnalysisOptions(),
                 progress: bool = False, batch_rows: int = DEFAULT_BATCH_ROWS, jobs: int | None = None,
                 batch_bytes: int = DEFAULT_BATCH_BYTES, batch_games: int | None = None,
                 in_flight: int | None = None, progress_label: str = "analyze") -> Tally:
    """Like :func:`chessscan.engines.local.run`, with the games read and analyzed by ``jobs``
    worker processes (None: :func:`default_jobs`; 1: :func:`~chessscan.engines.local.run`
    itself).

    The sink receives the same rows in the same order as with one process (in batches of
    other sizes); the returned tally is the same. A report writer whose tables take parts
    (:class:`~chessscan.reports.writers.ReportWriter` with ``parts=True``, alone or under an
    :class:`~chessscan.reports.filters.IssueFilter`) gets them as parts the workers wrote,
    named in input order (module doc). ``batch_rows`` applies to the EPD sources (analyzed
    here); PGN sources go to the workers in chunks of about ``batch_bytes`` input bytes
    (parts: growing up to :data:`PART_BYTES`), or, read here, in batches of ``batch_games``
    games (default :data:`DEFAULT_BATCH_GAMES`, parts :data:`PART_BATCH_GAMES`): see the
    module doc; at most ``in_flight`` at a time (default ``2 * jobs``).

    Raises ``ValueError`` for ``jobs``, ``batch_bytes``, ``batch_games`` or ``in_flight``
    < 1, ``OSError`` when a source cannot be opened or read,
    :class:`~chessscan.reports.writers.OutputError` when a part cannot be written, and
    ``concurrent.futures.process.BrokenProcessPool`` when a worker dies (killed, out of
    memory). Bad content never raises.
    """
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    if (batch_games is not None and batch_games < 1) or batch_bytes < 1:
        raise ValueError("batch_games and batch_bytes must be at least 1")
    in_flight = 2 * jobs if in_flight is None else in_flight
    if in_flight < 1:
        raise ValueError(f"in_flight must be at least 1, not {in_flight}")
    paths = [os.fspath(p) for p in paths]
    if jobs > 1 and _all_under_a_chunk(paths, batch_bytes):
        # Too little work to pay for a pool: the main process would analyze nearly every
        # input as a task of its own, at a cost per task (1,000 one-game files: 5.8 s of
        # wall time against 1.0 s in one process).
        jobs = 1
    if jobs == 1:
        return run(paths, sink, options, progress=progress, batch_rows=batch_rows, progress_label=progress_label)

    names = tables_for(paths, options)
    pgn_names = tuple(n for n in names if n != "epd_positions")
    writer, target = _part_target(sink)
    parts = target is not None
    if batch_games is None:
        batch_games = PART_BATCH_GAMES if parts else DEFAULT_BATCH_GAMES
    arrow = accepts_arrow(sink)
    from chessscan.reports.filters import IssueFilter

    issue_filter = sink if parts and isinstance(sink, IssueFilter) else None
    # The analysis depends on the game index (the sample), or the rows are written already
    # (parts): a chunk whose first game index proves wrong is analyzed again.
    resample = options.cross_check == "sample" or parts
    tally = Tally()
    tally.cross_check_mode = options.cross_check
    sampler = new_sampler(options)  # decides the rare-kind sample, in input order
    tables = new_tables(names, options)  # for the EPD sources, analyzed here
    bar = _progress(paths, progress, progress_label)
    pool: ProcessPoolExecutor | None = None
    pool_thread: ThreadPoolExecutor | None = None  # runs every call that changes the pool (module doc)
    starting: Future | None = None  # the pool, while the pool's thread starts it
    pending: deque[_Task] = deque()
    ended: set = set()  # the reads of tables whose row groups stopped at a fault
    slots = Slots()
    numbers = itertools.count()  # provisional part numbers (the temporary names of a task's parts)
    chunk_fn = write_chunk if parts else analyze_chunk
    batch_fn = write_batch if parts else analyze_batch
    tail = (target,) if parts else (arrow,)  # the arguments after the tables' names

    def drop(fut) -> None:
        """Forget a task's result: its parts (if any) are removed, now or once it is done."""
        if not parts:
            return
        if isinstance(fut, _Done):
            discard_parts(fut.value[1])
            return

        def done(f) -> None:
            if not f.cancelled() and f.exception() is None:
                discard_parts(f.result()[1])

        fut.add_done_callback(done)

    def again(fn, args: tuple):
        """Run a task again (another cut, another first game index) and wait for it."""
        if parts:
            args = args[:-2] + (next(numbers), args[-1])
        return args, (_result(to_pool(fn, args), pool) if pool else fn(*args))

    def deliver(limit: int) -> None:
        """Write queued results, oldest first, until at most ``limit`` remain (or until the
        first is a chunk waiting for the chunk after it, not yet queued)."""
        while len(pending) > limit:
            task = pending.popleft()
            try:
                result = _result(task.fut, pool)
            except BrokenProcessPool as exc:
                if dead := _dead_helpers(wait=0.2):  # say which (the pool says "a child process")
                    raise BrokenProcessPool(f"{dead} process died") from exc
                raise
            if pool is not None and (dead := _dead_helpers()):
                raise BrokenProcessPool(f"{dead} process died")
            if task.table is not None:
                if task.table in ended:  # after a fault of its table: a read of it stops there
                    drop(_Done(result))
                    if bar is not None:
                        bar.update(task.advance)
                    continue
                if result.ended:
                    ended.add(task.table)
            if task.state is not None:
                state, args, last = task.state, task.args, task.last
                while result[3] and not last:
                    # The chunk ended inside a comment: the cut after it may lie inside that
                    # comment (module doc). Read it and the next chunk as one.
                    if not pending:
                        task.fut, task.args = _Done(result), args
                        pending.appendleft(task)
                        return
                    after = pending.popleft()
                    drop(_Done(result))
                    drop(after.fut)
                    args = (args[0] + after.args[0], after.args[1], args[2], state.exact) + args[4:]
                    args, result = again(chunk_fn, args)
                    task.advance += after.advance
                    task.slots += after.slots
                    last = after.last
                    if len(args[0]) >= MAX_CHUNK_BYTES:
                        state.irregular = True  # comments at every cut: read the rest here
                delta = state.exact - args[3]
                if delta:
                    if resample:
                        state.irregular = True
                        drop(_Done(result))
                        args, result = again(chunk_fn, args[:3] + (state.exact,) + args[4:])
                    else:
                        _shift_game_index(result[1], delta, arrow)
                state.exact += result[2]
            tally.merge(result[0])
            deferred = result[-1]
            found = replay_deferred(deferred, sampler, tally) if deferred is not None else None
            if parts:
                write_parts(result, found, task)
            else:
                out = result[1]
                if found is not None:
                    _add_rows(out, "disagreements", found, arrow, options)
                for name in pgn_names:  # table order does not matter, row order within one does
                    batch = out.get(name)
                    if batch is None:
                        continue
                    if arrow:
                        sink.write(name, dict(zip(batch.schema.names, batch.columns)))
                    else:
                        sink.write(name, batch)
            for slot in task.slots:
                slots.release(slot)
            task.slots = []
            if task.state is not None and last and not state.exact:
                no_games(args[2])
            if bar is not None:
                bar.update(task.advance)
                count_progress(bar, tally)

    def write_parts(result, found, task: _Task) -> None:
        """Name the parts of a task's result in input order (module doc)."""
        out, held = result[1], result[-2]
        if issue_filter is not None:
            if task.source is not None:
                issue_filter.next_source(task.source)  # the held rows of the sources before, first
            issue_filter.hold(held)
        number = writer.take_number() if writer.dataset else 0
        if found is not None:
            add_rows(out, "disagreements", found, target, number)
        for name in pgn_names:
            if name in out:
                path, rows = out.pop(name)
                if writer.dataset:
                    writer.publish_part(name, path, number, rows)
                else:
                    writer.append_part(name, path, rows)

    def no_games(name: str) -> None:
        """Write the warning of a PGN source read whole with no game in it."""
        issues = new_buffers("issues")
        add_no_games_issue(issues, tally, name)
        sink.write("issues", issues)

    def to_pool(fn, args: tuple) -> Future:
        """Send a task to the pool, from the pool's thread (module doc: Stops)."""
        return pool_thread.submit(_submit, pool, fn, *args).result()

    def dispatch(task: _Task, fn, args: tuple) -> None:
        deliver(in_flight - 1)
        task.fut = to_pool(fn, args)
        pending.append(task)

    def pool_ready(wait: bool) -> bool:
        """Whether the pool is up (waiting for it to start if ``wait``)."""
        nonlocal pool, starting
        if pool is None:
            if starting is None or not (wait or starting.done()):
                return False
            pool = starting.result()
            starting = None
        return True

    def submit(fn, args: tuple, advance: int, full: bool, state=None, last: bool = False, held=(),
               table=None) -> None:
        """Queue a task (a chunk or batch, or with ``table`` a range of that table's row
        groups, ``args[1]`` its source); ``full``: a whole batch or chunk (else the last of
        its source); ``held``: the slots its text is in. Until the pool is up, or when all
        the input is less than one chunk, the main process runs the task itself."""
        if full:
            start_pool()
        if table is not None:
            source = args[1]
        else:
            source = args[2] if state is not None else (args[0][0].source if args[0] else None)
        task = _Task(None, advance, state, args if state is not None else None, last, held, source, table)
        # (With parts, the main process analyzes nothing itself once a pool is coming: it
        # waits for the pool, reading on meanwhile is not worth what one game's analysis costs.)
        if pool_ready(wait=not _WORK_WHILE_POOL_STARTS or (parts and starting is not None)):
            dispatch(task, fn, args)
        else:
            deliver(in_flight - 1)
            try:
                task.fut = _Done(fn(*args))
            except BaseException:
                for slot in held:
                    slots.release(slot)
                raise
            pending.append(task)

    def start_pool() -> None:
        """Start the pool in the pool's thread, unless it is started already."""
        nonlocal pool_thread, starting
        if pool is None and starting is None:
            pool_thread = ThreadPoolExecutor(1, thread_name_prefix="chessscan-pool")
            starting = pool_thread.submit(_start_pool, jobs)

    def deliver_all() -> None:
        pool_ready(wait=True)
        deliver(0)

    def read_here(stream, head: bytes, error, name: str, state: _Source, offset0: int, line0: int,
                  seen: int) -> None:
        """The main process reads the rest of a source (``head``, then ``error`` if the source
        raised one, else the rest of ``stream``) and sends its games in batches; the chunks
        before it are written first (their game count is then known)."""
        deliver_all()
        if pending:  # a chunk that ended inside a comment (see deliver): read on from its start
            task = pending.popleft()
            drop(task.fut)
            head, offset0, line0 = _text_bytes(task.args[0], task.slots) + head, task.args[4], task.args[5]
            seen -= task.advance
            for slot in task.slots:
                slots.release(slot)
        batch: list = []
        size = 0
        index0 = state.exact
        read = 0
        for raw in read_games(_Rest(head, error, stream), source=name):
            read += 1
            batch.append(raw.rebase(index0, offset0, line0))
            size += len(raw._mt) + 1
            if len(batch) >= batch_games or size >= batch_bytes:
                now = stream.bytes_read
                full = sampler.full() if sampler is not None else 0
                submit(batch_fn, (batch, options, pgn_names, *tail, *numbered(), full), now - seen, True)
                seen = now
                batch, size = [], 0
        if batch or stream.bytes_read > seen:
            full = sampler.full() if sampler is not None else 0
            submit(batch_fn, (batch, options, pgn_names, *tail, *numbered(), full), stream.bytes_read - seen, False)
        if not read and not state.exact:
            deliver_all()
            no_games(name)

    def numbered() -> tuple:
        return (next(numbers),) if parts else ()

    def chunk_target(sent: int, text: int, stream, size: int | None) -> int:
        """Bytes of text the next chunk should hold (module doc: Chunk sizes): ``sent``
        chunks of the source so far, ``text`` bytes of it read, ``size`` its size on disk
        (None: unknown)."""
        if not parts or pool is None:
            return batch_bytes  # (and while the pool starts, small chunks the main process analyzes)
        if size:
            read = stream.bytes_read
            left = max(0, size - read) * text // max(read, 1)  # the text still to come, at the ratio so far
            want = left // (2 * jobs)
        else:
            want = batch_bytes << min(sent // jobs, 16)
        return max(batch_bytes, min(want, PART_BYTES, MAX_CHUNK_BYTES))

    def read_chunks(stream, name: str, size: int | None) -> None:
        """Cut a PGN source into chunks and send them to the workers (module doc)."""
        state = _Source()
        offset0 = line0 = 0  # bytes and lines of the source sent so far
        estimate = 0  # the next chunk's first game index, as estimated
        seen = 0  # input bytes (compressed) accounted for
        sent = 0  # chunks sent
        marks = 0  # game termination markers in the held text (about its games; not with parts)
        error = None
        want = chunk_target(0, 0, stream, size)
        slot = slots.take(want + 2 * _READ_SIZE)
        start = held = 0  # slot.view[start:held]: the text held, not sent yet
        searched = 0  # bytes of the held text known to hold no sure game start
        try:
            def send(end: int, last: bool) -> None:
                nonlocal start, offset0, line0, estimate, seen, sent
                now = stream.bytes_read
                full = sampler.full() if sampler is not None else 0
                text = ChunkText((slot.segment(start, end),), end - start)
                lines, events = _chunk_counts(slot.view, start, end)
                args = (text, error if last else None, name, estimate, offset0, line0, options, pgn_names, *tail,
                        *numbered(), full)
                slots.hold(slot)
                submit(chunk_fn, args, now - seen, not last, state, last, (slot,))
                seen = now
                sent += 1
                estimate += events
                offset0 += end - start
                line0 += lines
                start = end

            # A plain or zstd stream is read straight into the slot: what it gives before an
            # error does not depend on the size of the reads, as it does for gzip, bzip2, xz.
            direct = parts and stream.compression in (None, "zstd") and stream.text_encoding is None
            while True:
                if held + _READ_SIZE > slot.capacity:
                    # On to a slot with room for the text held and a chunk more.
                    keep = held - start
                    new = slots.take(max(want, keep) + 2 * _READ_SIZE)
                    new.view[:keep] = slot.view[start:held]
                    slots.release(slot)
                    slot, start, held = new, 0, keep
                try:
                    data = b""
                    n = stream.readinto(slot.view[held:held + _READ_SIZE]) if direct else 0
                    if not n:
                        # Always whole blocks: how much a corrupt stream gives before its error
                        # depends on the read size, and the reader in one process reads the same.
                        # (After a direct read that gave nothing: the end, or the error it ended with.)
                        data = stream.read(_READ_SIZE)
                        n = len(data)
                        slot.view[held:held + n] = data
                except TruncatedInput as exc:
                    error, n = exc, 0
                if n:
                    if not parts:
                        marks += _termination_marks(data)
                    held += n
                    if held - start < want:
                        continue
                if state.irregular or (not n and marks > MAX_CHUNK_GAMES):
                    read_here(stream, bytes(slot.view[start:held]), error, name, state, offset0, line0, seen)
                    return
                if not n:
                    send(held, True)
                    return
                # As many chunks of about ``want`` bytes as the text allows: each ends at the
                # last sure game start within ``want``, or within twice, four times... that.
                with slot.view[:held] as view:
                    while held - start >= want:
                        hi = start + want
                        while (cut := last_sure_game_start(view, max(start, start + searched - _LOOKBACK), hi)) < 0 \
                                and hi < held:
                            hi = min(held, start + 2 * (hi - start))
                        if cut < 0:
                            searched = held - start
                            break
                        send(cut, False)
                        searched = 0
                        want = chunk_target(sent, offset0, stream, size)
                        if state.irregular:
                            break
                if not parts and start:
                    marks = _termination_marks(bytes(slot.view[start:held]))
                if held - start >= MAX_CHUNK_BYTES or marks > MAX_CHUNK_GAMES:
                    read_here(stream, bytes(slot.view[start:held]), None, name, state, offset0, line0, seen)
                    return
        finally:
            slots.release(slot)

    def read_table(path: str) -> None:
        """A game table: the main process reads its rows and sends its games in batches of
        ``batch_games``; or, for a Parquet table of at least ``jobs`` ranges of
        ``batch_games`` rows whose parts the workers write, each worker reads a range of its
        row groups itself (module doc)."""
        ranges = row_group_ranges(path, options.moves_column, batch_games) if parts else None
        if ranges is not None and len(ranges) >= jobs:
            name = source_name(path)
            size = source_size(path) or 0
            total = sum(rows for _, rows, _ in ranges)
            read = object()  # this read of the table (the same file may be given twice)
            seen = 0
            for groups, rows, _ in ranges:
                advance = size * (seen + rows) // total - size * seen // total
                seen += rows
                full = sampler.full() if sampler is not None else 0
                submit(read_row_groups, (path, name, groups, options.moves_column, batch_fn, options, pgn_names,
                                         *tail, *numbered(), full), advance, True, table=read)
            return
        with game_source(path, options) as reader:
            batch: list = []
            seen = read = 0
            for raw in reader:
                read += 1
                batch.append(raw)
                if len(batch) >= batch_games:
                    full = sampler.full() if sampler is not None else 0
                    submit(batch_fn, (batch, options, pgn_names, *tail, *numbered(), full), reader.bytes_read - seen,
                           True)
                    seen, batch = reader.bytes_read, []
            if batch or reader.bytes_read > seen:
                full = sampler.full() if sampler is not None else 0
                submit(batch_fn, (batch, options, pgn_names, *tail, *numbered(), full), reader.bytes_read - seen,
                       False)
            if not read:
                deliver_all()
                no_games(reader.name)

    def flush_epd() -> None:
        flush_tables(sink, tables, names)

    try:
        if parts and any(not is_epd(p) and ((size := source_size(p)) is None or size >= batch_bytes // 4)
                         for p in paths):
            start_pool()  # at once: it starts while the first chunks are read
        for path in paths:
            if is_epd(path):
                deliver_all()  # rows of earlier games first (they share the issues table)
                run_epd_source(path, tables, tally, flush_epd, bar, batch_rows)
                flush_epd()
                continue
            if is_table(path):
                read_table(path)
                continue
            with open_source(path) as stream:
                read_chunks(stream, source_name(path), source_size(path))
        deliver_all()
    except BaseException as exc:
        # The pool's semaphores and the slots tell the resource tracker when they go; one
        # that died (a SIGHUP to the process group reaches it too) would be started again,
        # and print a KeyError traceback for each it never saw: a dead one is made harmless.
        _dead_helpers()
        if pool_thread is not None:
            # What the pool's thread is doing (starting the pool or a worker) ends first:
            # the pool then holds every worker it started. What it has not begun is dropped.
            pool_thread.shutdown(wait=True, cancel_futures=True)
        if starting is not None:
            try:
                pool = starting.result()
            except BaseException:
                pass  # the start failed: nothing to shut down, the first error is the one to see
        if pool is not None:
            _stop_pool(pool, broken=isinstance(exc, BrokenProcessPool))
            pool = None
        if parts:
            # What the workers wrote for results never written is removed: a stopped run
            # leaves whole parts only.
            for task in pending:
                fut = task.fut
                if fut is not None and (isinstance(fut, _Done) or (fut.done() and not fut.cancelled()
                                                                    and fut.exception() is None)):
                    discard_parts(fut.result()[1])
            pending.clear()
            sweep(str(writer.out_dir), pgn_names, writer.fmt, keep=writer.writing())
        raise
    finally:
        if pool_thread is not None:
            pool_thread.shutdown(wait=True)
        if pool is not None:
            pool.shutdown(wait=True)
        _dead_helpers()  # (as above: removing the slots tells the resource tracker)
        slots.close()
        if bar is not None:
            bar.close()
    return tally


def _text_bytes(text: ChunkText, held) -> bytes:
    """A chunk's text as bytes, read here from the slots ``held`` (their shared memory
    mapped once, by this process) or the bytes it carries."""
    views = {slot.name: slot.view for slot in held if slot.name is not None}
    return b"".join(views[seg[0]][seg[1]:seg[2]] if isinstance(seg, tuple) else seg for seg in text.segments)


class _Rest:
    """A binary stream of text already in hand (``head``), then ``error`` if given (the
    source raised it after that text), else what is left of ``stream`` if given: a chunk,
    or a source read on from the middle."""

    def __init__(self, head: bytes, error: BaseException | None, stream=None) -> None:
        self._head = head
        self._pos = 0
        self._error = error
        self._stream = stream

    def read(self, size: int = -1) -> bytes:
        head, pos = self._head, self._pos
        if pos < len(head):
            end = len(head) if size is None or size < 0 else min(pos + size, len(head))
            self._pos = end
            return head if pos == 0 and end == len(head) else head[pos:end]
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return self._stream.read(size) if self._stream is not None else b""
