"""Run the analysis on a Dask cluster (``chessscan analyze --dask ADDRESS|auto|local``).

Needs the optional extra ``chessscan[dask]`` (``dask[dataframe]``, ``distributed``); this
module imports them only inside :func:`run_dask`, and raises ``ImportError`` with the install
command when they are missing.

How a run goes:

1. **Shards** (:func:`plan_shards`, on the client): an uncompressed PGN file larger than
   ``shard_size`` is cut into byte ranges, each starting at a game boundary; an EPD file is
   one shard; a compressed file (no random access) and a UTF-16 one (read transcoded) are a
   ``'stream'``, read by the client (5.). A cut is made only where the reader starts a game whatever state it is in, unless
   a comment opened before is still open there (see 2.)
   (:func:`chessscan.readers.pgn.sure_game_start`, the rule ``--jobs`` cuts chunks by): a
   line beginning ``[Event "`` after one or more blank lines, where the last non-blank line
   before them ends with a termination marker outside comments and is neither a tag nor
   an escape line. If no such line lies within ``shard_size`` bytes after a target offset,
   the shard just grows.
2. **Counts** (one task per cut, :func:`settle_shards`): the games and lines in each range
   before the last one of a file, read with the same PGN reader, give every shard the game
   index and line number of its first game, so ``game_index``, ``line`` and the cross-check
   sample (which depends on the game index) are those of a local run. A range whose text
   ends inside a comment (a brace comment opened before the bytes the rule looked at may
   hold the cut) is joined with the next one, and the joined range counted again.
3. **Analysis** (one task per shard): the shard's games go through the same steps as
   :func:`chessscan.engines.local.run`, and each table's rows are streamed (row groups of
   64k rows, flat memory) to ``<out_dir>/<table>/part-<shard>.parquet``: one part, i.e. one
   DataFrame partition, per shard. Every folder is a Parquet dataset, readable with
   ``pandas.read_parquet(folder)`` or ``dask.dataframe.read_parquet(folder)``; part names sort
   in input order. A part is written under a hidden name of its own and renamed once whole,
   and the task reports it with the rows its footer holds.
4. **Check and merge** (on the client): every part reported must be there, as the client
   sees it, with those rows (:func:`chessscan.reports.parts.check_parts`); then the client
   merges the shards' tallies in shard order into summary.json.

5. **Streams** (:func:`_stream_source`): the client reads a compressed file, decompressing
   it, and cuts its text into chunks of about ``shard_size`` bytes at sure game starts, with
   the compiled cutter of ``--jobs`` (:class:`_Cutter`); each chunk is a task that carries its
   text (the scheduler holds it until the task's result is taken, and hands it to another
   worker should the first die), with its first game index estimated from the ``[Event "``
   lines before it. At most twice the cluster's threads of chunks are in flight, and their
   results are taken in input order, so the client holds at most that many chunks. As
   ``--jobs`` does, a chunk whose text ends inside a comment is analyzed again joined with
   the next one, and one whose first game index proves wrong again with the right one; from
   then on (or where no sure game start comes within 16 MiB) the rest of the file is one
   task that reads it itself. Part numbers are handed out in input order as tasks are sent:
   a chunk joined with the one before leaves its number unused.

Workers open the input files and write the output folder themselves: on a real cluster both
must be on a filesystem every worker sees under the same path (relative paths are made
absolute on the client; the ``source`` column keeps the path as given), or the inputs are
URLs, which each worker opens through fsspec. A PGN or EPD URL is one shard; a Parquet game table is cut
by row group (``shard_size`` uncompressed bytes a shard, from its footer: no counting pass),
its games numbered by their rows in the file; a range whose read stops at a fault ends the
table there (the parts of the ranges after it are removed, their tallies not merged), as a
local read does. Another game table is one shard.
The output may be a URL too (``-o s3://bucket/prefix``, :func:`run_dask` given it): each task
then writes its parts in its worker's temporary folder and puts each, once whole, as one object
under the prefix (:class:`~chessscan.reports.store.ObjectParts`, through the worker's own
file system and credentials; a part put again, by a retried task, is replaced whole), so a
cluster needs no shared folder for its output either; the run marker is an object there, and
the client checks, rewrites and sweeps the parts there, through its own file system.
While the run goes on, ``<out_dir>/`` :data:`RUN_MARKER` holds its id: a task publishes a
part only while it finds it there, so a worker that does not see the folder stops at once, and a task still
running after its run was stopped or failed (a cancelled task runs on to its end) leaves
nothing. On every way out the client removes the marker, cancels the tasks, waits a little
for those running on a cluster that goes on, and removes the parts being written that it
sees (:func:`sweep_parts`). A failure is one exception naming what failed
(:class:`ShardFailed` with the shard, :class:`SchedulerLost`, :class:`SchedulerUnreachable`,
:class:`AddressError`, :class:`~chessscan.reports.parts.PartMissing`; a task that cannot use the
output's store raises :class:`StoreUnreachable`).
"""

from __future__ import annotations

import contextlib
import io
import itertools
import os
import pickle
import re
from typing import Iterable, NamedTuple, Sequence

from chessscan.analysis.game import Tally, add_issue
from chessscan.analysis.options import AnalysisOptions
from chessscan.analysis.sampling import Deferred
from chessscan.engines.local import (
    DEFAULT_BATCH_ROWS,
    add_no_games_issue,
    analyze_one,
    game_source,
    is_epd,
    new_sampler,
    new_tables,
    optional_columns,
    replay_deferred,
    run_epd_source,
    tables_for,
)
from chessscan.engines.chunks import ChunkStream
from chessscan.readers.counts import text_counts
from chessscan.readers.pgn import (ReadEnd, count_line_ends, last_sure_game_start, line_at, read_games,
                                   sure_game_start)
from chessscan.readers.sources import (TruncatedInput, detect_compression, detect_utf16, open_source, source_name,
                                       source_size)
from chessscan.readers.tables import TableReader, is_table, row_group_ranges
from chessscan.readers.urls import is_url
from chessscan.reports.filters import IssueFilter, held_row
from chessscan.reports.schema import schema_for
from chessscan.reports.store import one_line_error
from chessscan.reports.writers import (OutputError, TableWriter, buffered_rows, clear, new_buffers, part_name,
                                       prepare_output, replace_file, report_files)

__all__ = ["DEFAULT_SHARD_SIZE", "Shard", "ShardResult", "plan_shards", "count_range", "settle_shards",
           "analyze_shard", "finish_shards", "run_dask", "resolve_address", "probe_scheduler", "sweep_parts",
           "describe_shard", "INSTALL_HINT", "RUN_MARKER", "AddressError", "SchedulerUnreachable", "SchedulerLost",
           "ShardFailed", "RunGone", "StoreUnreachable"]

#: Target shard size in bytes: about 10 s of work per task at ~100k positions/s, so a few
#: thousand tasks for a Lichess monthly dump and little scheduler overhead.
DEFAULT_SHARD_SIZE = 32 << 20
INSTALL_HINT = "pip install 'chessscan[dask]'"

_COMPRESSED_SUFFIXES = (".gz", ".gzip", ".bz2", ".zst", ".zstd", ".xz")
_CANDIDATE = re.compile(rb'[\r\n]\[Event "')
_LOOKBACK = 1 << 16
_SCAN_CHUNK = 1 << 20


class Shard(NamedTuple):
    """One task's input.

    ``number``: position in the run (part files are named after it); ``path``: the file to
    open (absolute); ``source``: the name written in the rows (the path as given);
    ``kind``: ``'range'`` (bytes ``start``..``end`` of an uncompressed PGN file), ``'pgn'``
    (a whole PGN file), ``'epd'`` (a whole EPD file), ``'table'`` (a whole game table) or
    ``'rows'`` (row groups ``start``..``end`` of a Parquet table); ``size``: bytes on disk, for
    progress (of a ``'rows'`` shard: its share of the file); ``first``: whether it is the
    first shard of its file.

    A compressed or UTF-16 PGN file is planned as one ``'stream'`` shard, which the client
    reads and cuts into ``'chunk'`` shards (text bytes ``start``..``end`` of the decompressed
    text, sent with the task; ``size``: the bytes of the file read for it) and, where the
    chunks cannot go on, one ``'tail'`` shard (the text from ``start`` to the end, which the
    task reads from the file itself): see :func:`run_dask`.
    """

    number: int
    path: str
    source: str
    kind: str
    start: int
    end: int
    size: int
    first: bool


def _whole_file(path: str) -> bool:
    """Whether ``path`` must be read from its start: compressed, or UTF-16 text (read
    transcoded; byte ranges of it would not be)."""
    with open(path, "rb") as f:
        head = f.read(32)
    return detect_compression(head) is not None or detect_utf16(head) is not None or (
        bool(head) and os.path.splitext(path)[1].lower() in _COMPRESSED_SUFFIXES)


def _find_start(f, target: int, limit: int, size: int) -> int | None:
    """Offset of the first sure game start in ``[target, limit)`` of the open file ``f``
    (``size`` bytes), or None."""
    end = min(limit, size)
    pos = target
    while pos < end:
        back = max(0, pos - _LOOKBACK)  # room to look at the lines before a candidate
        f.seek(back)
        data = f.read(pos - back + _SCAN_CHUNK + 16)  # +16: a candidate across the chunk end
        for m in _CANDIDATE.finditer(data, max(0, pos - back - 1)):
            start = back + m.start() + 1  # the '[' of '[Event "'
            if start < target:
                continue
            if start >= end:
                return None
            lo = max(0, m.start() + 1 - _LOOKBACK)
            line = line_at(data, m.start() + 1)
            if line is not None and sure_game_start(data[lo : m.start() + 1], line, back + lo == 0):
                return start
        pos += _SCAN_CHUNK
    return None


def plan_shards(paths: Iterable[str], shard_size: int = DEFAULT_SHARD_SIZE,
                moves_column: str | None = None) -> list[Shard]:
    """Cut the sources into shards, in input order (see the module doc). A Parquet table is
    cut by row group, ``shard_size`` uncompressed bytes a shard, from its footer alone
    (:func:`~chessscan.readers.tables.row_group_ranges`; ``moves_column`` as
    ``--moves-column``).

    Raises ``ValueError`` for ``'-'`` (stdin cannot be shared out) or ``shard_size`` < 1,
    ``OSError`` when a file cannot be opened.
    """
    if shard_size < 1:
        raise ValueError(f"shard_size must be at least 1 byte, not {shard_size}")
    shards: list[Shard] = []
    for p in paths:
        p = os.fspath(p)
        if p == "-":
            raise ValueError("stdin ('-') cannot be analyzed on a Dask cluster: give files")
        name = source_name(p)
        if is_url(p) or is_table(p):
            # One task a file, or a range of a Parquet table's row groups: the workers open it
            # themselves (a URL through fsspec), and a table's reader numbers its rows.
            kind = "table" if is_table(p) else "epd" if is_epd(p) else "pgn"
            size = source_size(p) or 0
            ranges = row_group_ranges(p, moves_column, size=shard_size, source=name) if kind == "table" else None
            if ranges is not None and len(ranges) > 1:
                total, seen = sum(n for _, n, _ in ranges), 0
                for groups, rows, _ in ranges:
                    share = size * (seen + rows) // total - size * seen // total
                    seen += rows
                    shards.append(Shard(len(shards), p if is_url(p) else os.path.abspath(p), name, "rows",
                                        groups.start, groups.stop, share, groups.start == 0))
                continue
            shards.append(Shard(len(shards), p if is_url(p) else os.path.abspath(p), name, kind, 0, size, size, True))
            continue
        path = os.path.abspath(p)
        size = os.path.getsize(path)
        if is_epd(p) or size <= shard_size or _whole_file(path):
            # (a compressed or UTF-16 PGN file: read here, in chunks; see _stream_source)
            kind = "epd" if is_epd(p) else "stream" if _whole_file(path) else "pgn"
            shards.append(Shard(len(shards), path, name, kind, 0, size, size, True))
            continue
        cuts = [0]
        with open(path, "rb") as f:
            for target in range(shard_size, size, shard_size):
                if target < cuts[-1]:
                    continue
                at = _find_start(f, target, target + shard_size, size)
                if at is not None and at > cuts[-1]:
                    cuts.append(at)
        cuts.append(size)
        for k, (a, b) in enumerate(zip(cuts, cuts[1:])):
            shards.append(Shard(len(shards), path, name, "range", a, b, b - a, k == 0))
    return shards


class _Range(io.RawIOBase):
    """Raw binary stream over bytes ``start``..``end`` of a file."""

    def __init__(self, path: str, start: int, end: int) -> None:
        super().__init__()
        self._f = open(path, "rb")
        self._f.seek(start)
        self._left = end - start

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[override]
        n = min(len(b), self._left)
        if n <= 0:
            return 0
        got = self._f.readinto(memoryview(b)[:n]) or 0
        self._left -= got
        return got

    def close(self) -> None:
        if not self.closed:
            self._f.close()
            super().close()


def _open_range(path: str, start: int, end: int) -> io.BufferedReader:
    return io.BufferedReader(_Range(path, start, end), buffer_size=1 << 16)


def count_range(path: str, start: int, end: int) -> tuple[int, int, bool]:
    """``(games, lines, open)`` in bytes ``start``..``end`` of an uncompressed PGN file, as
    the reader splits them (``end`` must be a shard cut, i.e. a line start); ``open``: the
    range ends inside a comment (:class:`~chessscan.readers.pgn.ReadEnd`), so the cut at
    ``end`` may lie inside it."""
    read_end = ReadEnd()
    with _open_range(path, start, end) as stream:
        games = sum(1 for _ in read_games(stream, source="", end=read_end))
    lines = 0
    cr_end = False
    with _open_range(path, start, end) as stream:
        while True:
            chunk = stream.read(_SCAN_CHUNK)
            if not chunk:
                break
            lines += count_line_ends(chunk)
            if cr_end and chunk[:1] == b"\n":
                lines -= 1  # a \r\n split between two chunks
            cr_end = chunk[-1:] == b"\r"
    return games, lines, read_end.open


def settle_shards(shards: list[Shard], count) -> tuple[list[Shard], list[tuple[int, int]]]:
    """Check the cuts of :func:`plan_shards` and number each shard's first game and line.

    ``count`` maps a list of ``'range'`` shards to their :func:`count_range` results, in
    order (:func:`run_dask` runs them as Dask tasks). Every range but the last of its file is
    counted; one that ends inside a comment is joined with the range after it (the cut may
    lie inside that comment: a sure game start cannot see a comment opened long before it),
    and the joined range is counted again. Returns the final shards, renumbered, and for each
    the ``(game index, line)`` of its first game in its file.
    """
    counts: dict[tuple[str, int, int], tuple[int, int, bool]] = {}

    def key(s: Shard) -> tuple[str, int, int]:
        return s.path, s.start, s.end

    while True:
        needed = [s for k, s in enumerate(shards) if s.kind == "range" and k + 1 < len(shards)
                  and not shards[k + 1].first and key(s) not in counts]
        if needed:
            counts.update(zip(map(key, needed), count(needed)))
        joined: list[Shard] = []
        for s in shards:
            prev = joined[-1] if joined else None
            if not s.first and prev is not None and key(prev) in counts and counts[key(prev)][2]:
                joined[-1] = prev._replace(end=s.end, size=s.end - prev.start)
            else:
                joined.append(s)
        if len(joined) == len(shards):
            break
        shards = joined
    shards = [s._replace(number=k) for k, s in enumerate(shards)]
    firsts = []
    index0 = line0 = 0
    for k, s in enumerate(shards):
        if s.first:
            index0 = line0 = 0
        firsts.append((index0, line0))
        if s.kind == "range" and k + 1 < len(shards) and not shards[k + 1].first:
            games, lines, _ = counts[key(s)]
            index0 += games
            line0 += lines
    return shards, firsts


class _PartSink:
    """The sink of one shard's parts: ``write(table, columns)`` appends to the table's part."""

    accepts_arrow = True

    def __init__(self, writer) -> None:
        self.writer = writer

    def write(self, name: str, columns) -> None:
        self.writer(name).write(columns)


#: The file in the output folder that says which run may publish parts there (its text: the
#: run's id). The client writes it before the first task and removes it on every way out; a
#: task publishes a part only while it holds the task's run id, so a task still running after
#: its run was stopped or failed (a cancelled task runs on to its end) leaves nothing, and a
#: worker that does not see the client's folder finds none.
RUN_MARKER = ".chessscan-dask-run"
#: Seconds between a task's looks at the run marker while it analyzes (and at every part it
#: publishes): how long a task of a stopped run goes on.
MARKER_CHECK_SECONDS = 1.0
# A part being written: hidden (readers of the dataset skip names starting with '.') and
# unique to the task's attempt, renamed to its part name when whole; or a part's temporary
# file (NAME.<hex>.partial, reports.files), the client's own or an earlier version's.
_TEMP_PART = re.compile(r"\.part-\d{6}\.parquet\.[0-9a-f]+\Z|\.?part-\d{6}\.parquet(\.[0-9a-f]+)*\.partial\Z")


class RunGone(Exception):
    """Raised in a task whose run marker (:data:`RUN_MARKER`) is missing or names another
    run: the run was stopped or failed, or the worker does not see the client's output
    folder. ``marker``: the marker's path; ``worker``: the worker's address, if known."""

    def __init__(self, marker: str, worker: str | None, found: str | None) -> None:
        self.marker, self.worker, self.found = marker, worker, found
        what = "missing" if found is None else "another run's"
        super().__init__(f"{marker} is {what} on the worker {worker or '(unknown)'}")

    def __reduce__(self):  # (raised on a worker, read on the client)
        return type(self), (self.marker, self.worker, self.found)


class ShardResult(NamedTuple):
    """What :func:`analyze_shard` returns: the shard's tally; with ``--cross-check sample``,
    the games a rare kind may sample (else None); the held once-a-file rows; the parts it
    wrote, as ``(path, rows)`` with the rows their Parquet footers hold; the games read; and
    whether the text ended inside a comment (:class:`~chessscan.readers.pgn.ReadEnd`; for a
    ``'chunk'`` shard: the cut after it may lie inside that comment)."""

    tally: Tally
    deferred: Deferred | None
    held: dict
    parts: list
    games: int = 0
    open: bool = False
    #: A ``'rows'`` shard whose read stopped at a fault: its table ends there.
    ended: bool = False


class StoreUnreachable(Exception):
    """Raised in a task that cannot use the object store of the run's output URL (``-o
    URL``) as its worker's file system has it: no credentials or endpoint, access denied
    (``cause``: the file system's error, in one line). ``url``: the output; ``worker``:
    the worker's address, if known."""

    def __init__(self, url: str, worker: str | None, cause: str) -> None:
        self.url, self.worker, self.cause = url, worker, cause
        super().__init__(f"the worker {worker or '(unknown)'} cannot use {url}/: {cause}")

    def __reduce__(self):  # (raised on a worker, read on the client)
        return type(self), (self.url, self.worker, self.cause)


def _store(out_dir: str):
    """The :class:`~chessscan.reports.store.ObjectParts` of an output URL (None for a local
    folder)."""
    if not is_url(out_dir):
        return None
    from chessscan.reports.store import ObjectParts

    return ObjectParts(out_dir)


def _worker_address() -> str | None:
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return None


def _check_run(marker: str, run_id: str, store=None) -> None:
    """Raise :class:`RunGone` unless ``marker`` holds ``run_id`` (with ``store``, an
    :class:`~chessscan.reports.store.ObjectParts`: its object :data:`RUN_MARKER`; one that
    cannot be read but for its absence raises :class:`StoreUnreachable`)."""
    if store is not None:
        try:
            data = store.read(RUN_MARKER)
        except Exception as exc:  # noqa: BLE001 (botocore's NoCredentialsError, PermissionError...)
            raise StoreUnreachable(store.url, _worker_address(), one_line_error(exc)) from None
        try:
            found = data.decode("ascii").strip() if data is not None else None
        except UnicodeDecodeError:
            found = None
    else:
        try:
            with open(marker, encoding="ascii") as f:
                found = f.read().strip()
        except (OSError, UnicodeDecodeError):
            found = None
    if found != run_id:
        raise RunGone(marker, _worker_address(), found)


def analyze_shard(shard: Shard, first_index: int, first_line: int, options: AnalysisOptions,
                  names: Sequence[str], out_dir: str, write_empty: bool = False,
                  batch_rows: int = DEFAULT_BATCH_ROWS, select: Iterable[str] | None = None,
                  ignore: Iterable[str] = (), run_id: str | None = None, text: bytes | None = None,
                  error: BaseException | None = None) -> ShardResult:
    """Analyze one shard and write its part of each table in ``names`` to
    ``<out_dir>/<table>/part-<number>.parquet``; what a Dask task runs.

    ``first_index``, ``first_line``: game index and number of lines before the shard in its
    file (0 for a whole file). A ``'chunk'`` shard's text is ``text`` (then ``error``, if
    given, is raised by the stream after its last byte, as the source raised it); a
    ``'tail'`` shard's is its file's text from byte ``shard.start`` of the decompressed text
    to the end. A table that gets no row has no part, unless ``write_empty``
    (so the first shard of a run gives every folder its schema). The issues go through
    :class:`~chessscan.reports.filters.IssueFilter` (``select``, ``ignore``, one row a game
    for ``uci-move``), as in a local run; the one row a file of ``decode-fallback`` is held
    back, for :func:`finish_shards` to write once for the whole file.

    Each part is written under a hidden name of its own (``.part-<number>.parquet.<token>``,
    skipped by dataset readers) and renamed to its part name once whole, so that a worker
    killed midway leaves no part that reads as whole. With ``run_id``, the task looks at
    ``<out_dir>/`` :data:`RUN_MARKER` as it starts, about every :data:`MARKER_CHECK_SECONDS`
    while it analyzes, and around each rename: when it does not hold ``run_id``, the task
    removes what it wrote and raises :class:`RunGone`.

    An ``out_dir`` that is a URL (``s3://bucket/prefix``) is an object store's: each part is
    written in a new folder under the worker's temporary folder and, once whole, put as the
    object ``<out_dir>/<table>/part-<number>.parquet`` (replacing whole one a first try of
    the task put), the run marker being the object ``<out_dir>/`` :data:`RUN_MARKER`; the
    parts are reported by URL. The temporary folder is removed on every way out.

    Returns a :class:`ShardResult`. Raises ``OSError`` when the input cannot be read,
    :class:`~chessscan.reports.writers.OutputError` when a part cannot be written,
    :class:`StoreUnreachable` when the output URL's store cannot be used from this worker.
    """
    import shutil
    import tempfile
    import time
    import uuid

    store = _store(out_dir)
    marker = store.url_of(RUN_MARKER) if store is not None else os.path.join(out_dir, RUN_MARKER)
    checked = [time.monotonic()]

    def check(now: bool = False) -> None:
        if run_id is not None and (now or time.monotonic() - checked[0] >= MARKER_CHECK_SECONDS):
            _check_run(marker, run_id, store)
            checked[0] = time.monotonic()

    check(now=True)
    tables = new_tables(names, options)
    tally = Tally()
    tally.cross_check_mode = options.cross_check
    deferred = Deferred() if options.cross_check == "sample" else None
    writers: dict[str, TableWriter] = {}
    token = uuid.uuid4().hex[:12]
    # (an object store's parts: written here, each put once whole)
    local = tempfile.mkdtemp(prefix=f"chessscan-dask-{shard.number:06d}-") if store is not None else None

    def writer(name: str) -> TableWriter:
        w = writers.get(name)
        if w is None:
            path = (os.path.join(local, name, part_name(shard.number)) if local is not None
                    else os.path.join(out_dir, name, f".{part_name(shard.number)}.{token}"))
            w = writers[name] = TableWriter(path, schema_for(name, optional_columns(name, options)),
                                            "parquet", table=name)
        return w

    sink = IssueFilter(_PartSink(writer), select, ignore)

    def flush() -> None:
        check()
        for name in names:
            if buffered_rows(tables[name]):
                sink.write(name, tables[name])
                clear(tables[name])

    published: list[str] = []
    done = False
    read_end = ReadEnd()
    count = 0
    try:
        if shard.kind == "epd":
            run_epd_source(shard.path, tables, tally, flush, None, batch_rows, source=shard.source)
        else:
            if shard.kind == "range":
                stream = _open_range(shard.path, shard.start, shard.end)
            elif shard.kind == "chunk":
                # (bytes: a chunk's text may arrive as a view of the frame it came in)
                stream = contextlib.nullcontext(ChunkStream(bytes(text) if text is not None else b"", error))
            elif shard.kind == "tail":
                stream = _open_tail(shard.path, shard.source, shard.start)
            elif shard.kind == "rows":  # its games numbered by their rows in the file
                stream = TableReader(shard.path, options.moves_column, row_groups=range(shard.start, shard.end),
                                     source=shard.source)
            else:  # a whole PGN file or game table
                stream = game_source(shard.path, options, shard.source)
            positions = tables["positions"]
            games = tables["games"]["game_index"]
            with stream as opened:
                raws = (read_games(opened, source=shard.source, end=read_end)
                        if shard.kind in ("range", "chunk", "tail") else opened)
                for raw in raws:
                    count += 1
                    if shard.start and shard.kind != "rows":
                        raw.rebase(first_index, shard.start, first_line)
                    analyze_one(raw, tables, options, tally, None, deferred)
                    if len(positions) >= batch_rows or len(games) >= batch_rows:
                        flush()
        flush()
        held = sink.take_held()
        if write_empty:
            for name in names:
                writer(name)
        for w in writers.values():
            w.close()
        parts = (_put_parts(writers, store, shard.number, check, published) if store is not None
                 else _publish(writers, out_dir, check, published))
        done = True
    finally:
        if not done:
            for w in writers.values():
                try:
                    w.close()
                except BaseException:
                    pass
            if store is not None:
                store.remove(published)
            for path in [*(str(w.path) for w in writers.values()), *(published if store is None else ())]:
                try:
                    os.unlink(path)
                except OSError:
                    pass
        if local is not None:
            shutil.rmtree(local, ignore_errors=True)
    return ShardResult(tally, deferred, held, parts, count, read_end.open, shard.kind == "rows" and stream.ended)


def _open_tail(path: str, source: str, start: int):
    """The source ``path`` opened (:func:`~chessscan.readers.sources.open_source`) and read
    up to byte ``start`` of its decompressed text: what a ``'tail'`` shard reads on from.
    Raises ``OSError`` when it cannot be opened, or holds fewer than ``start`` bytes."""
    stream = open_source(path, name=source)
    try:
        left = start
        while left > 0:
            data = stream.read(min(left, _SCAN_CHUNK))
            if not data:
                raise OSError(f"{source} is shorter than it was: its text ends before byte {start:,}")
            left -= len(data)
    except BaseException:
        stream.close()
        raise
    return stream


def _publish(writers: dict, out_dir: str, check, published: list[str]) -> list[tuple[str, int]]:
    """Rename each closed part from its hidden name to its part name while the run goes on
    (``check()`` raises otherwise: the parts published so far are in ``published``, for the
    caller to remove). Returns ``(path, rows)`` per part, rows from its Parquet footer."""
    import pyarrow.parquet as pq

    parts = []
    for name, w in writers.items():
        temp = str(w.path)
        with open(temp, "rb") as f:  # by its exact name (Arrow takes UTF-8 names)
            rows = pq.read_metadata(f).num_rows
        final = os.path.join(out_dir, name, os.path.basename(temp)[1:].rsplit(".", 1)[0])
        check(now=True)
        try:
            os.replace(temp, final)
        except OSError as exc:
            raise OutputError(final, exc) from None
        published.append(final)
        parts.append((final, rows))
    check(now=True)  # a stop during the renames: they are removed
    return parts


def _put_parts(writers: dict, store, number: int, check, published: list[str]) -> list[tuple[str, int]]:
    """Put each closed part (a local file) as one whole object of ``store`` (an
    :class:`~chessscan.reports.store.ObjectParts`) while the run goes on (``check()`` raises
    otherwise: the parts put so far are in ``published``, for the caller to remove). Returns
    ``(url, rows)`` per part, rows from its Parquet footer. Raises
    :class:`~chessscan.reports.writers.OutputError` when a part cannot be put,
    :class:`StoreUnreachable` when the store refuses this worker (no credentials, access
    denied)."""
    import pyarrow.parquet as pq

    parts = []
    check(now=True)  # (once, not before each put: a request each; a stop during the puts is seen below)
    for name, w in writers.items():
        path = str(w.path)
        with open(path, "rb") as f:  # by its exact name (Arrow takes UTF-8 names)
            rows = pq.read_metadata(f).num_rows
        url = store.url_of(f"{name}/{part_name(number)}")
        try:
            store.put(path, url)
        except PermissionError as exc:
            raise StoreUnreachable(store.url, _worker_address(), one_line_error(exc)) from None
        except OSError as exc:
            raise OutputError(url, exc) from None
        except Exception as exc:  # noqa: BLE001 (the file system's client's own: botocore's...)
            raise StoreUnreachable(store.url, _worker_address(), one_line_error(exc)) from None
        published.append(url)
        parts.append((url, rows))
    check(now=True)  # a stop during the puts: they are removed
    return parts


def _empty_parts(names: Sequence[str], options: AnalysisOptions, out_dir: str, store=None) -> list[tuple[str, int]]:
    """Write an empty ``part-000000.parquet`` (its table's columns, no row) for each table of
    ``names``, on the client: what a run with no shard writes, so that every table has a
    part whatever the engine (with ``store``, put whole: :func:`_write_part`). Returns
    ``(path or URL, 0)`` per part. Raises :class:`~chessscan.reports.writers.OutputError`."""
    parts = []
    for name in names:
        at = _part_at(out_dir, name, 0, store)
        _write_part(at, name, schema_for(name, optional_columns(name, options)), None, store)
        parts.append((at, 0))
    return parts


def _write_part(at: str, table: str, schema, rows: dict[str, list] | None, store=None) -> None:
    """Write the Parquet part ``at`` of ``table`` holding ``rows`` (None: no row). With
    ``store`` (:class:`~chessscan.reports.store.ObjectParts`), ``at`` is its URL: the part is
    written in a new temporary folder and put whole (an object store has no rename), the
    folder removed on every way out. Raises :class:`~chessscan.reports.writers.OutputError`."""
    import shutil
    import tempfile

    local = tempfile.mkdtemp(prefix="chessscan-dask-part-") if store is not None else None
    try:
        if local is None:
            os.makedirs(os.path.dirname(at), exist_ok=True)
        w = TableWriter(at if local is None else os.path.join(local, table, at.rsplit("/", 1)[-1]),
                        schema, "parquet", table=table)
        try:
            if rows is not None:
                w.write(rows)
        finally:
            w.close()
        if store is not None:
            try:
                store.put(str(w.path), at)
            except Exception as exc:  # noqa: BLE001 (the file system's own errors too)
                raise OutputError(at, exc) from None
    finally:
        if local is not None:
            shutil.rmtree(local, ignore_errors=True)


def finish_shards(shards: Sequence[Shard], results: Sequence[tuple], options: AnalysisOptions, out_dir: str,
                  select: Iterable[str] | None = None, ignore: Iterable[str] = (), problems: Sequence = (),
                  store=None) -> Tally:
    """Merge the shards' :func:`analyze_shard` results in shard order into the run's tally,
    on the client. With ``--cross-check sample``, decide in input order which games the rare
    kinds sample (:class:`~chessscan.analysis.sampling.Sampler`), cross-check those the
    shards did not, and add their disagreements to the shard's part of the
    ``disagreements`` table (rewritten, rows in ``game_index`` order). The issues a local
    run adds at a file's end (the one ``decode-fallback`` row of a file cut in shards, the
    ``empty-input`` warning of one with no game) are added to its last shard's part, and the
    rows of ``problems`` (:class:`~chessscan.readers.inputs.InputProblem`, not counted here)
    at the head of the first part, where a local run writes them; all as ``select`` and
    ``ignore`` keep them. ``store``: the :class:`~chessscan.reports.store.ObjectParts` of an
    output URL (``out_dir``), where the parts are removed and rewritten (each put again
    whole)."""
    tally = Tally()
    tally.cross_check_mode = options.cross_check
    sampler = new_sampler(options)
    wanted = IssueFilter(None, select, ignore).wanted
    games = 0  # of the PGN source being merged
    held: dict[str, list] = {}  # of the PGN source being merged: source -> [first row, count]
    ended = False  # the table being merged stopped at a fault (a 'rows' shard's read did)
    for k, (shard, result) in enumerate(zip(shards, results)):  # in shard order: see run_dask
        if shard.first:
            held, ended = {}, False
        if ended:  # rows after the fault, which a read of the whole table never reaches
            _unlink_parts(result, store)
        else:
            shard_tally, deferred, shard_held = result[:3]
            tally.merge(shard_tally)
            games = shard_tally.games + (0 if shard.first else games)
            for source, (row, count) in shard_held.items():
                held.setdefault(source, [row, 0])[1] += count
            if deferred is not None:
                found = replay_deferred(deferred, sampler, tally)
                if found is not None:
                    _add_part_rows(_part_at(out_dir, "disagreements", shard.number, store), found, store=store)
            ended = bool(getattr(result, "ended", False))
        if not (k + 1 == len(shards) or shards[k + 1].first):
            continue  # the file goes on in the next shard
        issues = new_buffers("issues")
        for row, count in held.values():
            for name, value in held_row(row, count).items():
                issues[name].append(value)
        if shard.kind != "epd" and not games and wanted("empty-input"):
            # (an EPD file is one shard: run_epd_source adds its warning)
            add_no_games_issue(issues, tally, shard.source)
        if buffered_rows(issues):
            _add_part_rows(_part_at(out_dir, "issues", shard.number, store), issues, "issues", store=store)
    shown = [p for p in problems if wanted(p.code)]
    if shown:
        issues = new_buffers("issues")
        for p in shown:
            add_issue(issues, Tally(), p.source, None, None, None, None, p.severity, p.code, p.message)
        _add_part_rows(_part_at(out_dir, "issues", 0, store), issues, "issues", first=True, store=store)
    return tally


def _part_at(out_dir: str, table: str, number: int, store=None) -> str:
    """Where part ``number`` of ``table`` is: a path in ``out_dir``, or with ``store`` its URL."""
    name = part_name(number)
    return store.url_of(f"{table}/{name}") if store is not None else os.path.join(out_dir, table, name)


def _add_part_rows(path: str, rows: dict[str, list], table: str = "disagreements", first: bool = False,
                   store=None) -> None:
    """Rewrite the Parquet part ``path`` of ``table`` (it may not exist yet) with ``rows``
    added: for ``disagreements`` in ``game_index`` order (a stable sort), for ``issues``
    after the part's rows (a file's own rows come after its games' issues), or before them
    if ``first``. With ``store`` (:class:`~chessscan.reports.store.ObjectParts`), ``path``
    is the part's URL: read there, written here in a new temporary folder and put whole.
    Raises :class:`~chessscan.reports.writers.OutputError` when it cannot be written or put."""
    import pyarrow.parquet as pq

    schema = schema_for(table, ())
    have = None
    if store is not None:
        try:
            with store.open(path) as f:
                have = pq.read_table(f).to_pydict()
        except FileNotFoundError:
            pass
    elif os.path.exists(path):
        with open(path, "rb") as f:  # by its exact name (Arrow takes UTF-8 names)
            have = pq.read_table(f).to_pydict()
    if have is not None:
        rows = {k: rows[k] + have[k] if first else have[k] + rows[k] for k in have}
        if table == "disagreements":
            order = sorted(range(len(rows["game_index"])), key=rows["game_index"].__getitem__)
            rows = {k: [v[i] for i in order] for k, v in rows.items()}
    _write_part(path, table, schema, rows, store)


# ---------------------------------------------------------------------------
# The cluster: addresses, connecting, failures
# ---------------------------------------------------------------------------
class AddressError(ValueError):
    """A ``--dask`` address that is not one (empty, an unknown scheme, no port...)."""


class SchedulerUnreachable(ConnectionError):
    """No Dask scheduler answered at the address within Dask's connect timeout (nothing
    listens there, or what answered is not a scheduler: a dashboard, a worker...)."""


class SchedulerLost(ConnectionError):
    """The client lost its scheduler during the run (it died, or the network went)."""


class ShardFailed(Exception):
    """A task of the run failed. ``shard``: its :class:`Shard`; ``cause``: the exception
    (``distributed``'s ``KilledWorker`` when its workers died each time it ran: ``killed``
    is then true), ``traceback`` the task's traceback (or None), ``worker`` the address of
    the worker it last ran on (or None); ``counting``: a task of the counting pass."""

    def __init__(self, shard: Shard, cause: BaseException, traceback=None, counting: bool = False) -> None:
        self.shard, self.cause, self.traceback, self.counting = shard, cause, traceback, counting
        self.killed = type(cause).__name__ == "KilledWorker"
        last = getattr(cause, "last_worker", None) if self.killed else None
        self.worker = getattr(last, "address", None) or getattr(cause, "worker", None)
        super().__init__(f"{describe_shard(shard)}: {self.reason()}")

    def reason(self) -> str:
        cause = self.cause
        if self.killed:
            tries = getattr(cause, "allowed_failures", 0) + 1
            return (f"its worker died each of the {tries} times it ran it (last on {self.worker}), and Dask "
                    "gave up (KilledWorker): out of memory, or killed? See the workers' logs")
        text = str(cause).splitlines()[0] if str(cause) else ""
        return f"{type(cause).__name__}: {text}" if text else type(cause).__name__


def describe_shard(shard: Shard) -> str:
    """A shard in words, for messages: ``shard 3 (games.pgn, bytes 1,048,576-2,097,152)``."""
    where = (f"bytes {shard.start:,}-{shard.end:,}" if shard.kind == "range"
             else f"bytes {shard.start:,}-{shard.end:,} of its text" if shard.kind == "chunk"
             else f"its text from byte {shard.start:,}" if shard.kind == "tail" else "the whole file")
    return f"shard {shard.number} ({shard.source}, {where})"


def resolve_address(address: str) -> tuple[str, str]:
    """The scheduler address to use for ``--dask ADDRESS`` and where it came from, in words.

    ``'local'``: a LocalCluster here. ``'auto'``: Dask's own configuration, as
    ``distributed.Client()`` reads it (``DASK_SCHEDULER_ADDRESS``, or ``scheduler-address`` in
    a Dask config file), else a LocalCluster. Anything else is a scheduler address, checked
    for its form: ``[tcp://]HOST:PORT`` (or ``tls://``, ``ws://``, ``wss://``, ``ucx://``).
    Raises :class:`AddressError` for an address of no such form.
    """
    given = address
    address = (address or "").strip()
    origin = "given"
    if address == "auto":
        import dask
        import distributed  # noqa: F401  (adds its defaults to dask.config)

        key = "scheduler-address"  # (what distributed.Client() reads; DASK_SCHEDULER_ADDRESS sets it)
        address = str(dask.config.get(key, None) or "").strip()
        if not address:
            return "local", "Dask's configuration names no scheduler: DASK_SCHEDULER_ADDRESS, scheduler-address"
        origin = ("DASK_SCHEDULER_ADDRESS" if os.environ.get("DASK_SCHEDULER_ADDRESS")
                  else "scheduler-address in Dask's configuration")
    if address == "local":
        return "local", origin
    if not address or address.startswith("-"):
        raise AddressError(f"{given!r} is not a Dask scheduler address: --dask takes tcp://HOST:PORT, 'auto' "
                           "or 'local'")
    from distributed.comm import registry
    from distributed.comm.addressing import parse_address, parse_host_port

    where = "" if origin == "given" else f" (from {origin})"
    try:
        scheme, loc = parse_address(address)
        registry.get_backend(scheme)
    except (ValueError, ImportError) as exc:
        raise AddressError(f"{address!r}{where} is not a Dask scheduler address: {exc}") from None
    if scheme == "inproc":
        raise AddressError(f"{address!r}{where}: an inproc:// address is reachable only inside its own process")
    if scheme != "ucx":
        try:
            host, port = parse_host_port(loc)
        except ValueError as exc:
            raise AddressError(f"{address!r}{where} is not a Dask scheduler address ([tcp://]HOST:PORT): "
                               f"{exc}") from None
        if not host or not 0 < port < 65536:
            raise AddressError(f"{address!r}{where} is not a Dask scheduler address ([tcp://]HOST:PORT): "
                               f"{'no host' if not host else f'no port {port}'}")
    return address, origin


def connect_timeout() -> float:
    """Dask's connect timeout in seconds (``distributed.comm.timeouts.connect``, 30 s by
    default; ``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT`` sets it)."""
    import dask
    import distributed  # noqa: F401
    from dask.utils import parse_timedelta

    return float(parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), default="seconds"))


def probe_scheduler(address: str, timeout: float) -> dict:
    """Ask ``address`` who it is, all within ``timeout`` seconds: connect, handshake and
    answer (Dask bounds only the connect: a dashboard's port accepts the connection and
    never answers). Returns the scheduler's identity (``type``, ``workers``...). Raises
    :class:`SchedulerUnreachable` when nothing answers in time or what answers is not a
    Dask scheduler."""
    import asyncio
    import threading

    from distributed.comm import connect
    from distributed.security import Security

    async def ask() -> dict:
        comm = await connect(address, timeout=timeout, **Security().get_connection_args("client"))
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    answer: list = []

    def run() -> None:  # in a thread of its own: the caller may be inside an event loop
        try:
            # (A little past Dask's own deadline for the connect, so that a refused or
            # unresolved address is reported as Dask reports it.)
            answer.append(asyncio.run(asyncio.wait_for(ask(), timeout + 0.25)))
        except BaseException as exc:  # noqa: BLE001 (handed to the caller)
            answer.append(exc)

    thread = threading.Thread(target=run, name="chessscan-dask-probe", daemon=True)
    thread.start()
    thread.join(timeout + 5)
    got = answer[0] if answer else TimeoutError()
    if isinstance(got, (asyncio.TimeoutError, TimeoutError)):
        raise SchedulerUnreachable(f"no Dask scheduler answered at {address} within {timeout:g} s (Dask's connect "
                                   "timeout, distributed.comm.timeouts.connect): is it the scheduler's port "
                                   "(8786 by default), not its dashboard's?")
    if isinstance(got, BaseException):
        why = " ".join(str(got).split()) if isinstance(got, OSError) and str(got) else _one_line(got)
        raise SchedulerUnreachable(f"cannot reach a Dask scheduler at {address}: {why}")
    if not isinstance(got, dict) or got.get("type") != "Scheduler":
        kind = got.get("type") if isinstance(got, dict) and got.get("type") else "something else"
        raise SchedulerUnreachable(f"{address} is not a Dask scheduler: a {kind} answered there")
    return got


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _client(address: str, jobs: int | None):
    """A ``distributed.Client`` for ``address`` (``'local'``: a LocalCluster of ``jobs``
    one-thread worker processes) and the cluster to close after it (or None). A scheduler
    address is asked first whether it is one (:func:`probe_scheduler`)."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise ImportError(f"running on Dask needs the dask extra: {INSTALL_HINT}") from exc
    if address == "local":
        from chessscan.engines.parallel import STOP_SIGNALS, default_jobs

        import signal
        import threading

        # Ctrl-C, `timeout` and a closed terminal signal the whole process group: the
        # cluster's thread and the worker processes it starts inherit these blocked, so that
        # this process alone handles them (it closes the cluster) and no worker dies midway
        # printing tracebacks.
        stop = STOP_SIGNALS
        masked = hasattr(signal, "pthread_sigmask")
        old = signal.pthread_sigmask(signal.SIG_BLOCK, stop) if masked else None
        # Ignored dispositions survive the workers' exec, and a Python started with SIGINT
        # ignored installs no KeyboardInterrupt handler: the workers' asyncio loops then
        # never raise one (and print it) when Ctrl-C reaches the group.
        ignored = {}
        if threading.current_thread() is threading.main_thread():
            for sig in stop - {getattr(signal, "SIGTERM", None)}:  # SIGTERM: how the nanny stops them
                ignored[sig] = signal.signal(sig, signal.SIG_IGN)
        try:
            # One thread per worker: a task holds the GIL. The dashboard on this machine only.
            cluster = LocalCluster(n_workers=jobs or default_jobs(), threads_per_worker=1,
                                   processes=True, dashboard_address="127.0.0.1:0")
            client = Client(cluster, set_as_default=False)
        finally:
            for sig, handler in ignored.items():
                signal.signal(sig, handler)
            if masked:
                signal.pthread_sigmask(signal.SIG_SETMASK, old)
        return client, cluster
    timeout = connect_timeout()
    probe_scheduler(address, timeout)
    try:
        return Client(address, timeout=timeout, set_as_default=False), None
    except (OSError, TimeoutError) as exc:  # gone between the probe and now
        raise SchedulerUnreachable(f"cannot reach the Dask scheduler at {address}: {_one_line(exc)}") from exc


def dashboard_note(client, local: bool = False) -> str | None:
    """``Dask dashboard: LINK`` for ``client``'s scheduler, or None when it names none.
    ``local``: the scheduler runs in this process (a LocalCluster), whose pages need bokeh
    here: said when it is missing."""
    try:
        link = client.dashboard_link
    except Exception:  # noqa: BLE001 (an old scheduler's info lacks it: nothing to show)
        return None
    if not link:
        return None
    if local:
        try:
            import bokeh  # noqa: F401
        except ImportError:
            return f"Dask dashboard: {link} (its pages need bokeh: pip install 'bokeh>=3.1')"
    return f"Dask dashboard: {link}"


def _wait(client, futures: list, shards: list[Shard], on_done=None, counting: bool = False) -> list:
    """The results of ``futures`` (one per shard of ``shards``), in order, taken as they
    finish (``on_done(k, result)`` for each). The first to fail raises :class:`ShardFailed`;
    futures cancelled because the scheduler went away raise :class:`SchedulerLost`. (A
    result lost with its worker is computed again: it is waited for again.)"""
    from distributed import as_completed

    index = {f.key: k for k, f in enumerate(futures)}
    results: list = [None] * len(futures)
    left = len(futures)

    def lost(why: str) -> SchedulerLost:
        first = next((shards[i] for i, r in enumerate(results) if r is None), None)
        return SchedulerLost(_lost(client, first, left, why))

    try:
        # (with_results: each result fetched in the client's event loop as it comes, not by a
        # call from this thread per future, which cost ~5 ms each)
        pending = as_completed(futures, loop=client.loop, with_results=True, raise_errors=False)
        for f, result in pending:
            k = index[f.key]
            if f.status == "finished":
                results[k] = result
                left -= 1
                if on_done is not None:
                    on_done(k, results[k])
                continue
            if f.status == "error":
                raise ShardFailed(shards[k], f.exception(), f.traceback(), counting)
            if f.status == "cancelled":
                raise lost(_cancel_reason(f))
            pending.add(f)  # lost with its worker since: computed again
    except (ShardFailed, SchedulerLost):
        raise
    except (OSError, TimeoutError) as exc:  # the comm to the scheduler closed under a call
        if isinstance(exc, OutputError):
            raise
        raise lost("connection closed" if type(exc).__name__ == "CommClosedError" else _one_line(exc)) from None
    except Exception as exc:  # noqa: BLE001
        if type(exc).__name__ in ("FutureCancelledError", "CancelledError"):
            raise lost(str(getattr(exc, "reason", "") or "cancelled").replace("-", " ")) from None
        raise
    return results


def _cancel_reason(future) -> str:
    try:
        future.result(timeout=2)
    except BaseException as exc:  # noqa: BLE001 (FutureCancelledError: its reason)
        return str(getattr(exc, "reason", "") or type(exc).__name__).replace("-", " ")
    return "cancelled"


def _lost(client, shard: Shard | None, left: int, why: str = "") -> str:
    where = getattr(client, "scheduler", None)
    address = getattr(where, "address", None) or "the scheduler"
    why = f" ({why})" if why else ""
    first = f"; first unfinished: {describe_shard(shard)}" if shard is not None else ""
    return (f"lost the connection to the Dask scheduler at {address}{why} with {left} "
            f"task{'s' if left != 1 else ''} unfinished{first}")


def _retried(client, futures: list, shards: list[Shard]) -> list[dict]:
    """The shards the scheduler ran again after a worker died while running them (its
    count of such deaths, ``suspicious``), in shard order."""
    keys = [f.key for f in futures]

    def deaths(dask_scheduler, keys):  # runs on the scheduler (pickled by value)
        tasks = dask_scheduler.tasks
        return {k: tasks[k].suspicious for k in keys if k in tasks and tasks[k].suspicious}

    try:
        died = client.run_on_scheduler(deaths, keys=keys)
    except Exception:  # noqa: BLE001 (a scheduler that runs no client code: nothing to report)
        return []
    return [{"shard": s.number, "source": s.source, "bytes": [s.start, s.end], "workers_died": died[k]}
            for s, k in zip(shards, keys) if k in died]


def sweep_parts(out_dir: str, names: Iterable[str], store=None, keep: Iterable[str] = ()) -> int:
    """Remove the parts being written (hidden ``.part-*`` names, and the ``*.partial`` files
    of parts) in the dataset folders ``names`` of ``out_dir`` that this process sees; returns how
    many. (What a killed worker or a stopped run left: never a whole part.)

    With ``store`` (the :class:`~chessscan.reports.store.ObjectParts` of an output URL,
    where nothing is ever half written): remove every part object under ``<table>/`` of
    ``names`` but those in ``keep`` (URLs: the parts of the results the client took), i.e.
    what the tasks of a run that stopped or failed put after their last result was taken."""
    if store is not None:
        kept = set(keep)
        return store.remove([url for url in store.parts(names) if url not in kept])
    removed = 0
    for name in names:
        folder = os.path.join(out_dir, name)
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for entry in entries:
            if _TEMP_PART.match(entry):
                try:
                    os.unlink(os.path.join(folder, entry))
                    removed += 1
                except OSError:
                    pass
    return removed


# ---------------------------------------------------------------------------
# A compressed source on the cluster: read and cut here, analyzed there
# ---------------------------------------------------------------------------
_READ_SIZE = 1 << 20
#: Bytes of text past a chunk's target size searched for a sure game start before the rest of
#: the source goes to one task (``--jobs``' limit, :data:`~chessscan.engines.parallel.MAX_CHUNK_BYTES`).
_MAX_GROWTH = 16 << 20


class _Chunk(NamedTuple):
    """A piece of a source's text cut at a sure game start: ``text`` (then ``error``, the
    one the source ended with, if ``last``); ``offset``, ``line``: text bytes and lines
    before it; ``index``: its first game index as estimated (``[Event "`` lines before it);
    ``lines``, ``events``: its own; ``advance``: the bytes of the file read for it."""

    text: bytes
    error: BaseException | None
    last: bool
    offset: int
    line: int
    index: int
    lines: int
    events: int
    advance: int

    def __add__(self, after: "_Chunk") -> "_Chunk":  # two chunks read as one
        return _Chunk(self.text + after.text, after.error, after.last, self.offset, self.line, self.index,
                      self.lines + after.lines, self.events + after.events, self.advance + after.advance)


class _Cutter:
    """Cuts the text of an open source (:func:`~chessscan.readers.sources.open_source`) into
    :class:`_Chunk` of about ``want`` bytes, as the ``--jobs`` main process does: read in
    blocks of 1 MiB into one buffer (a plain or zstd stream straight into it), each chunk
    ending at the last sure game start within ``want`` bytes, or within twice, four times...
    that (:func:`~chessscan.readers.pgn.last_sure_game_start`, a compiled scan back from the
    end), its lines and ``[Event "`` lines counted in one compiled pass
    (:func:`~chessscan.readers.counts.text_counts`). No work per game: the text is copied
    once more, into the ``bytes`` a task carries."""

    def __init__(self, stream, want: int) -> None:
        self.stream = stream
        self.want = max(1, want)
        self.buf = bytearray(min(self.want, _MAX_GROWTH) + 2 * _READ_SIZE)
        self.start = self.held = 0  # buf[start:held]: the text read, not cut yet
        self.searched = 0  # bytes of it known to hold no sure game start
        self.offset = self.line = self.index = 0  # text bytes, lines, [Event " lines cut so far
        self.seen = 0  # bytes of the file accounted for
        self.error: BaseException | None = None
        self.ended = self.done = False  # the stream gave its last byte; the last chunk was cut
        # As --jobs reads: a gzip, bzip2 or xz stream always in whole blocks (what a corrupt
        # one gives before its error depends on the read size; one process reads the same).
        self.direct = stream.compression in (None, "zstd") and stream.text_encoding is None

    def _read(self) -> None:
        if self.held + _READ_SIZE > len(self.buf):
            keep = self.held - self.start
            if self.start:
                self.buf[:keep] = self.buf[self.start:self.held]
                self.start, self.held = 0, keep
            if keep + _READ_SIZE > len(self.buf):
                self.buf.extend(bytes(keep + _READ_SIZE - len(self.buf)))
        n = 0
        try:
            if self.direct:
                n = self.stream.readinto(memoryview(self.buf)[self.held:self.held + _READ_SIZE])
            if not n:  # (after a direct read that gave nothing: the end, or the error it ended with)
                data = self.stream.read(_READ_SIZE)
                n = len(data)
                self.buf[self.held:self.held + n] = data
        except TruncatedInput as exc:
            self.error, n = exc, 0
        self.held += n
        self.ended = not n

    def next(self) -> _Chunk | None:
        """The next chunk; None once the last one was given, or when no sure game start
        lies within ``want`` + 16 MiB bytes (:attr:`done` is then False: the rest of the
        source, from :attr:`offset`, cannot be cut)."""
        while not self.done:
            if self.ended:
                self.done = True
                return self._cut(self.held, True)
            if self.held - self.start >= self.want:
                hi = self.start + self.want
                lo = self.start + max(0, self.searched - (1 << 16))
                with memoryview(self.buf)[:self.held] as view:
                    while (cut := last_sure_game_start(view, lo, hi)) < 0 and hi < self.held:
                        hi = min(self.held, self.start + 2 * (hi - self.start))
                if cut >= 0:
                    self.searched = 0
                    return self._cut(cut, False)
                self.searched = self.held - self.start
                if self.searched >= self.want + _MAX_GROWTH:
                    return None
            self._read()
        return None

    def _cut(self, end: int, last: bool) -> _Chunk:
        start = self.start
        lines, events = text_counts(self.buf, start, end) if end > start else (0, 0)
        now = self.stream.bytes_read
        chunk = _Chunk(bytes(memoryview(self.buf)[start:end]), self.error if last else None, last, self.offset,
                       self.line, self.index, lines, events, now - self.seen)
        self.seen = now
        self.offset += end - start
        self.line += lines
        self.index += events
        self.start = end
        return chunk


def _unlink_parts(result, store=None) -> None:
    """Remove the parts a result reported (a result dropped: its chunk is analyzed again);
    with ``store`` (:class:`~chessscan.reports.store.ObjectParts`), the objects."""
    if store is not None:
        store.remove(path for path, _ in result.parts)
        return
    for path, _ in result.parts:
        try:
            os.unlink(path)
        except OSError:
            pass


def _stream_source(shard: Shard, task, take, in_flight, numbers, chunk_size: int,
                   store=None) -> list[tuple[Shard, ShardResult]]:
    """Analyze the ``'stream'`` shard ``shard`` (a compressed or UTF-16 PGN file) on the
    cluster: read and cut here (:class:`_Cutter`), each chunk a task carrying its text, at
    most ``in_flight()`` of them at a time, their results taken in input order. Returns
    ``(shard, result)`` per task kept, in input order.

    ``task(shard, index, line, text, error)`` submits a task (:func:`analyze_shard`) and
    returns its future; ``take(future, shard)`` waits for its result (raising as
    :func:`_wait` does); ``numbers``: the run's part numbers, handed out in input order;
    ``store``: the :class:`~chessscan.reports.store.ObjectParts` of an output URL, where the
    parts of a result dropped are removed.

    As ``--jobs`` does: a chunk whose text ended inside a comment (the cut after it may lie
    inside it) is analyzed again joined with the next chunk, and its and the next one's
    parts removed; a chunk whose first game index proves wrong (a game without an
    ``[Event "`` line, or one inside a comment) is analyzed again with the right one. From
    then on, or where no sure game start lies within 16 MiB past the target (or joined chunks
    reach that size), the rest of the source is one ``'tail'`` task, which reads it from the
    file itself (on a cluster: a file the workers see).
    """
    from collections import deque

    out: list[tuple[Shard, ShardResult]] = []
    pending: deque = deque()  # [future, shard, chunk] in input order
    exact = 0  # the first game index of the next chunk whose result is taken (exact)

    def chunk_shard(number: int, chunk: _Chunk) -> Shard:
        return Shard(number, shard.path, shard.source, "chunk", chunk.offset, chunk.offset + len(chunk.text),
                     chunk.advance, chunk.offset == 0)

    def send(chunk: _Chunk, number: int | None = None) -> list:
        s = chunk_shard(next(numbers) if number is None else number, chunk)
        return [task(s, chunk.index, chunk.line, chunk.text, chunk.error), s, chunk]

    def deliver(cutter: _Cutter):
        """Take the oldest result. Returns None, or ``(offset, line)`` where the rest of
        the source must go to one task."""
        nonlocal exact
        fut, s, chunk = pending.popleft()
        result = take(fut, s)
        rest = False
        while result.open and not chunk.last:
            if pending:
                fut2, s2, after = pending.popleft()
                _unlink_parts(take(fut2, s2), store)
            else:
                after = cutter.next()
                if after is None:  # no sure game start after it: it goes with the rest
                    _unlink_parts(result, store)
                    return chunk.offset, chunk.line
            _unlink_parts(result, store)
            fut, s, chunk = send((chunk + after)._replace(index=exact), s.number)
            result = take(fut, s)
            rest = rest or len(chunk.text) >= _MAX_GROWTH
        if exact != chunk.index:
            _unlink_parts(result, store)
            fut, s, chunk = send(chunk._replace(index=exact), s.number)
            result = take(fut, s)
            rest = True
        exact += result.games
        out.append((s, result))
        if rest and not chunk.last:
            return chunk.offset + len(chunk.text), chunk.line + chunk.lines
        return None

    tail = None
    with open_source(shard.path, name=shard.source) as stream:
        cutter = _Cutter(stream, chunk_size)
        while tail is None:
            if len(pending) >= max(1, in_flight()):
                tail = deliver(cutter)
                continue
            chunk = cutter.next()
            if chunk is None:
                if not cutter.done:
                    tail = (cutter.offset, cutter.line)
                break
            pending.append(send(chunk))
        while pending and tail is None:
            tail = deliver(cutter)
        # What was sent after the rest's start is dropped (waited for: a task still running
        # would publish its parts after they were removed).
        while pending:
            fut, s, _ = pending.popleft()
            _unlink_parts(take(fut, s), store)
    if tail is not None:
        offset, line = tail
        advance = max(0, shard.size - sum(s.size for s, _ in out))
        s = Shard(next(numbers), shard.path, shard.source, "tail", offset, shard.size, advance, offset == 0)
        out.append((s, take(task(s, exact, line, None, None), s)))
    return out


def _analyze_in_order(client, shards: list[Shard], firsts: list, task, futures: list, chunk_size: int,
                      on_done=None, retried: list | None = None, store=None) -> tuple[list[Shard], list]:
    """:func:`run_dask`'s analysis when some shard is a ``'stream'`` (:func:`_stream_source`):
    the shards in input order, each numbered (its part number) as it is sent, so that a
    stream's chunks, whose count is known only once it is read, come between the shards
    before and after it. The other shards are sent at once, and waited for at the end.
    Returns the shards analyzed and their results, in input order."""
    import itertools
    import time

    numbers = itertools.count()
    order: list = []  # (shard, future) or (shard, result)
    waiting: list = []  # (position in order, shard, future)
    threads = [0, 0.0]  # the cluster's threads, and when they were last asked

    def in_flight() -> int:
        """At most twice the cluster's threads of chunks at a time (asked again every second:
        workers come and go)."""
        if time.monotonic() - threads[1] >= 1.0:
            try:
                threads[0] = sum(client.nthreads().values())
            except Exception:  # noqa: BLE001 (the scheduler gone: the next wait says so)
                pass
            threads[1] = time.monotonic()
        return max(2, 2 * threads[0])

    def take(fut, s: Shard):
        result = _wait(client, [fut], [s])[0]
        if retried is not None:
            retried.extend(_retried(client, [fut], [s]))
        if on_done is not None:
            on_done(s, result)
        futures.remove(fut)
        fut.release()  # (the scheduler drops its text)
        return result

    def send(s: Shard, index: int, line: int, text=None, error=None):
        fut = task(s, index, line, text, error)
        futures.append(fut)
        return fut

    for shard, (i0, l0) in zip(shards, firsts):
        if shard.kind != "stream":
            s = shard._replace(number=next(numbers))
            waiting.append((len(order), s, send(s, i0, l0)))
            order.append((s, None))
            continue
        order.extend(_stream_source(shard, send, take, in_flight, numbers, chunk_size, store))
    if waiting:
        wanted = [f for _, _, f in waiting]
        got = _wait(client, wanted, [s for _, s, _ in waiting],
                    None if on_done is None else lambda k, r: on_done(waiting[k][1], r))
        if retried is not None:
            retried.extend(_retried(client, wanted, [s for _, s, _ in waiting]))
        for (k, s, _), result in zip(waiting, got):
            order[k] = (s, result)
    if retried is not None:
        retried.sort(key=lambda r: r["shard"])
    return [s for s, _ in order], [r for _, r in order]


SHARED_FOLDER_HINT = ("the workers and this client must see the output folder under the same path "
                      "(a shared filesystem such as NFS, mounted alike everywhere)")
STORE_HINT = ("the workers must reach the same object store as this client: its file system's extra, "
              "credentials and endpoint (AWS_*, GOOGLE_*, AZURE_*, HF_TOKEN...) as this client has them")


def run_dask(paths: Iterable[str], out_dir: str, options: AnalysisOptions = AnalysisOptions(),
             address: str = "local", client=None, jobs: int | None = None,
             shard_size: int = DEFAULT_SHARD_SIZE, progress: bool = False,
             select: Iterable[str] | None = None, ignore: Iterable[str] = (), problems: Sequence = (),
             say=None, retried: list | None = None, later_tables: Sequence[str] = (), output=None,
             parts: list | None = None) -> Tally:
    """Analyze ``paths`` on a Dask cluster and write one Parquet dataset per table of
    :func:`~chessscan.engines.local.tables_for` under ``out_dir`` (``<out_dir>/<table>/
    part-*.parquet``). Does not write summary.json: the caller adds ``sources`` to the
    returned tally's ``as_dict()``.

    ``client``: a ``distributed.Client`` to use; else one is made for ``address``
    (:func:`resolve_address`: a scheduler address such as ``tcp://host:8786``, ``'auto'``
    for Dask's configured one, or ``'local'`` for a LocalCluster of ``jobs`` workers,
    default every core) and closed at the end. What an earlier run wrote to ``out_dir`` is
    removed first, and nothing else (:func:`~chessscan.reports.writers.prepare_output`;
    raises its ``OutputFolderError``). A compressed or UTF-16 PGN file is read here and sent
    to the workers in chunks of about ``shard_size`` bytes of text, at most twice the
    cluster's threads of them at a time (module doc, 5.). The rows equal a local run's once sorted by
    (source, game_index, ply); read in part order they are in input order too. The issues
    are those a local run writes: ``select`` and ``ignore`` as ``--select``/``--ignore``,
    and ``problems`` (the :class:`~chessscan.readers.inputs.InputProblem` of the paths left
    out; counted by the caller) first. ``say(line)`` is given a line about the cluster
    (which scheduler, its dashboard); ``retried`` (a list) gets a dict per shard that was
    run again after a worker died (``shard``, ``source``, ``bytes``, ``workers_died``);
    ``parts`` (a list) gets the ``(path or URL, rows)`` of every part the tasks wrote.

    ``out_dir`` may be a URL (``s3://bucket/prefix``, any fsspec file system that writes; a
    ``file://`` one is the local folder it names): the tasks put their parts there
    themselves (module doc), and the run marker and every check and rewrite of a part go
    through the file system; the prefix is made ready first
    (:meth:`~chessscan.reports.store.ObjectOutput.prepare`: a manifest, no staging folder),
    unless ``output`` is its :class:`~chessscan.reports.store.ObjectOutput` prepared
    already. Nothing is written on this machine, but the parts the client rewrites (module
    doc, 4.) while they are put.

    Every part the tasks report is checked as this process sees it before the run counts
    as done (:func:`~chessscan.reports.parts.check_parts`). On every way out the run's
    tasks are cancelled, and no part being written stays (:func:`sweep_parts`); a task
    still running elsewhere publishes nothing (:data:`RUN_MARKER`).

    Raises ``ImportError`` (with :data:`INSTALL_HINT`) when dask or distributed is missing;
    ``ValueError`` for stdin or a bad ``shard_size``, :class:`AddressError` for an address
    of no known form; ``OSError`` when an input cannot be read here;
    :class:`SchedulerUnreachable` when no scheduler answers at the address within Dask's
    connect timeout; :class:`ShardFailed` when a task fails (``cause``: its exception; a
    :class:`RunGone` one means the worker does not see the output folder);
    :class:`SchedulerLost`; :class:`~chessscan.reports.parts.PartMissing` when a part a
    task wrote is not here; :class:`~chessscan.reports.writers.OutputError` when the folder
    or a part cannot be written.
    """
    import uuid

    from chessscan.reports.parts import check_parts

    paths = [os.fspath(p) for p in paths]
    shards = plan_shards(paths, shard_size, options.moves_column)
    remote = output
    if remote is None and is_url(out_dir):
        from chessscan.readers.urls import url_fs
        from chessscan.reports.store import object_output

        remote = object_output(out_dir)
        if remote is None:  # file://: the local folder it names
            out_dir = url_fs(out_dir, "writing")[1]
    store = None
    if remote is not None:
        from chessscan.reports.store import ObjectParts

        out_dir = remote.url
        store = ObjectParts(out_dir)
    else:
        out_dir = os.path.abspath(out_dir)
    names = tables_for(paths, options)
    say = say or (lambda line: None)

    cluster = None
    own = client is None
    if own:
        address, origin = resolve_address(address)
        client, cluster = _client(address, jobs)
        if address == "local":
            workers = len(client.scheduler_info().get("workers", {}))
            say(f"Dask: a LocalCluster of {workers} worker{'s' if workers != 1 else ''} on this machine"
                + (f" ({origin})" if origin != "given" else ""))  # ('auto' with no address configured)
        else:
            workers = len(client.scheduler_info().get("workers", {}))
            say(f"Dask scheduler: {address}" + (f" (from {origin})" if origin != "given" else "")
                + (f", {workers} worker{'s' if workers != 1 else ''}" if workers
                   else ", no worker yet: the tasks wait for one"))
    note = dashboard_note(client, local=cluster is not None)
    if note:
        say(note)
    run_id = uuid.uuid4().hex
    marker = store.url_of(RUN_MARKER) if store is not None else os.path.join(out_dir, RUN_MARKER)
    marked = False
    futures: list = []
    reported: set = set()  # (the parts of the results taken: a stopped run's sweep keeps them)
    done = False
    try:
        # (only once the scheduler answers: an unreachable one leaves no folder behind)
        # (a part left by an earlier, larger run would be read back as part of this dataset)
        try:
            # (later_tables: those the caller writes once the run is done, in the manifest too)
            files = report_files((*names, *later_tables), dataset=True)
            if store is not None:
                if output is None:  # (the prefix's own rules: what an earlier run put goes)
                    remote.prepare(files, inputs=paths, stage=False)
                marked = True
                try:
                    store.put_bytes(RUN_MARKER, (run_id + "\n").encode("ascii"))
                except Exception as exc:  # noqa: BLE001 (the file system's own errors too)
                    raise OutputError(marker, exc) from None
            else:
                prepare_output(out_dir, files, inputs=paths)
                sweep_parts(out_dir, names)
                marked = True  # (removed on every way out, even when written only in part)
                replace_file(marker, (run_id + "\n").encode("ascii"), through=False)  # a new file, never a link's
        except OSError as exc:
            if isinstance(exc, OutputError):
                raise
            raise OutputError(getattr(exc, "filename", None) or out_dir, exc) from None

        # Game index and line number of each shard's first game: counts of the ranges
        # before it in its file (the last range of a file needs no count); a cut that
        # proves to lie inside a comment is dropped.
        def count(needed: list[Shard]) -> list:
            bar = _bar(progress, sum(s.size for s in needed), "count (dask)")
            counted = [0]

            def counted_one(k: int, result) -> None:
                counted[0] += result[0]
                if bar is not None:
                    bar.update(needed[k].size)
                    bar.set_postfix_str(f"{counted[0]:,} games", refresh=False)

            futures[:] = client.map(count_range, [s.path for s in needed], [s.start for s in needed],
                                    [s.end for s in needed],
                                    key=[f"count_range-{run_id}-{k:06d}" for k in range(len(needed))])
            try:
                return _wait(client, futures, needed, counted_one, counting=True)
            finally:
                if bar is not None:
                    bar.close()

        shards, firsts = settle_shards(shards, count)

        bar = None
        if progress:
            from chessscan.engines.progress import Progress

            bar = Progress(sum(s.size for s in shards), "analyze (dask)")
        seen = Tally()

        def analyzed(shard: Shard, result) -> None:
            reported.update(path for path, _ in result.parts)
            if bar is not None:
                seen.merge(result[0])
                bar.update(shard.size)
                bar.count(seen.games, seen.games_with_errors)

        attempts = itertools.count()

        def task(s: Shard, i0: int, l0: int, text: bytes | None = None, error=None):
            # (a chunk analyzed again is a task of its own: one key per attempt)
            key = f"analyze_shard-{run_id}-{s.number:06d}" + (f"-{next(attempts)}" if s.kind in ("chunk", "tail")
                                                               else "")
            return client.submit(analyze_shard, s, i0, l0, options, names, out_dir, s.number == 0, select=select,
                                 ignore=ignore, run_id=run_id, error=error, key=key,
                                 # (out of band: Dask then sends the text as a frame of its own,
                                 # not copied into the task's pickle and scanned there)
                                 text=None if text is None else pickle.PickleBuffer(text))

        try:
            if any(s.kind == "stream" for s in shards):
                import dask

                # A chunk's text travels in its task (the scheduler holds it until the result is
                # taken, and gives it to another worker should the first one die): a large "graph".
                with dask.config.set({"distributed.admin.large-graph-warning-threshold": "4GiB"}):
                    shards, results = _analyze_in_order(client, shards, firsts, task, futures, shard_size,
                                                        analyzed, retried, store)
            else:
                futures[:] = [task(s, i0, l0) for s, (i0, l0) in zip(shards, firsts)]
                results = _wait(client, futures, shards, lambda k, result: analyzed(shards[k], result))
                if retried is not None:
                    retried.extend(_retried(client, futures, shards))
        finally:
            if bar is not None:
                bar.close()
        _settle(client, futures, run_id)
        # Before the client touches a part (finish_shards adds rows to some): a part a worker
        # wrote where this process does not see it fails the run here, not as a missing row.
        written = [p for r in results for p in r.parts]
        if not shards:  # (no input to analyze: no task gives the tables their one empty part)
            written = _empty_parts(names, options, out_dir, store)
            reported.update(path for path, _ in written)
        if store is not None:
            check_parts(written, STORE_HINT, open_part=store.open)
        else:
            check_parts(written, SHARED_FOLDER_HINT)
        if parts is not None:
            parts.extend(written)
        done = True
    except BaseException:
        # Stopped (Ctrl-C, SIGTERM) or failed: closing a cluster with tasks in flight makes
        # distributed log every cancelled task and closed connection. The user has the one
        # message that matters; the cluster's shutdown chatter is not it.
        quiet_logs()
        raise
    finally:
        _end_run(client, cluster if own else None, own, futures, done, marker if marked else None, out_dir, names,
                 run_id, store, reported)
    # In shard order, so the summary's counters keep the local key order and the sample is
    # a local run's.
    return finish_shards(shards, results, options, out_dir, select, ignore, problems, store)


def quiet_logs() -> None:
    """Silence the log lines of distributed (and of the libraries under it) in this process:
    a lost connection, each reconnect attempt, a closing cluster's chatter. (distributed
    gives some of its loggers levels of their own: each is set.)"""
    import logging

    roots = ("distributed", "tornado", "asyncio", "bokeh")
    names = [n for n in list(logging.root.manager.loggerDict) if n.split(".")[0] in roots]
    for name in (*roots, *names):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def _bar(enabled: bool, total: int, label: str):
    if not enabled:
        return None
    import sys

    from tqdm import tqdm

    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, file=sys.stderr, desc=label,
                leave=False, dynamic_ncols=True)


def _end_run(client, cluster, own: bool, futures: list, done: bool, marker: str | None, out_dir: str,
             names: Sequence[str], run_id: str, store=None, reported: Iterable[str] = ()) -> None:
    """The end of a run, on every way out: the run marker removed (a task still running
    publishes nothing after it), the tasks not done cancelled and, on a cluster that goes on,
    waited for (a few seconds at most: a cancelled task runs on until it sees the marker
    gone, then removes what it wrote), the client (and a LocalCluster) closed, and the parts
    being written here removed. With ``store`` (an output URL's), the marker is an object,
    and a run not done removes the part objects but those ``reported`` by the results it
    took (:func:`sweep_parts`).

    A marker that holds another run's id (a second run started into the same output
    meanwhile) is that run's: it stays, and nothing is swept (the parts there are the other
    run's; this run's tasks remove their own once they find the marker not theirs)."""
    ours = True
    if marker is not None:
        try:
            _check_run(marker, run_id, store)
        except RunGone as exc:
            ours = exc.found is None
        except Exception:  # noqa: BLE001 (the store went away: remove what can be, as before)
            pass
    if marker is not None and ours and store is not None:
        store.remove([marker])
    elif marker is not None and ours:
        try:
            os.unlink(marker)
        except OSError:
            pass
    live = getattr(client, "status", None) == "running"
    if not done and futures and live:
        try:
            client.cancel(futures, force=True)
        except Exception:  # noqa: BLE001 (the scheduler went away: nothing left to cancel)
            pass
        if cluster is None:
            _await_tasks(client, run_id, 3 * MARKER_CHECK_SECONDS + 2)
    if own:
        try:
            client.close(timeout=5)
        except Exception:  # noqa: BLE001
            pass
        if cluster is not None:
            try:
                cluster.close()
            except Exception:  # noqa: BLE001
                pass
    if not ours:
        return
    if store is not None:
        if not done:  # (a part put whole is never half written: after a run done, nothing to sweep)
            sweep_parts(out_dir, names, store, reported)
    else:
        sweep_parts(out_dir, names)  # (also after a run done: what its workers killed midway left)


#: Seconds a run whose results are all taken waits for its tasks still running on the
#: workers (results computed again: :func:`_settle`) before it checks its parts.
LATE_TASK_SECONDS = 60.0


def _settle(client, futures: list, run_id: str, seconds: float = LATE_TASK_SECONDS) -> None:
    """Once every result of the run is taken, before its parts are checked and its marker
    removed: no task of the run is left to run. The scheduler computes again a result lost
    with its worker while the client holds its future, even one the client took already
    (queued after the tasks waiting then, it may run as the run ends): such a task puts its
    shard's parts again and, finding the marker gone after its puts, would remove them, i.e.
    the parts the client took and checked (a table lost, the run done). So the futures are
    released (nothing is computed again after this), those being computed again cancelled
    (one not started never starts), and the tasks of the run still executing waited for,
    the marker still there (they put the same rows again, and end), at most ``seconds``."""
    if getattr(client, "status", None) != "running" or not futures:
        return
    late = [f for f in futures if f.status != "finished"]
    for f in futures:
        if f.status == "finished":
            f.release()
    if not late:
        return
    try:
        client.cancel(late, force=True)
    except Exception:  # noqa: BLE001 (the scheduler went away: nothing left to run)
        return
    _await_tasks(client, run_id, seconds)


def _await_tasks(client, run_id: str, seconds: float) -> bool:
    """Wait until no worker runs a task of the run ``run_id`` (its key holds it), at most
    ``seconds``; returns whether none does. (Asks the workers: a cancelled task leaves the
    scheduler at once, but runs on in its worker.)"""
    import threading
    import time

    def running(dask_worker, run_id):  # runs on each worker (pickled by value)
        state = getattr(dask_worker, "state", None)
        return sum(run_id in str(ts.key) for ts in getattr(state, "executing", ()))

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        answer: list = []

        def ask() -> None:
            try:
                answer.append(client.run(running, run_id=run_id, on_error="ignore"))
            except Exception:  # noqa: BLE001
                answer.append(None)

        thread = threading.Thread(target=ask, name="chessscan-dask-wait", daemon=True)
        thread.start()
        thread.join(max(0.0, deadline - time.monotonic()))
        if not answer or answer[0] is None:
            return False
        if not any(isinstance(n, int) and n for n in answer[0].values()):
            return True
        time.sleep(0.2)
    return False
