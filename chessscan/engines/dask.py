"""Run the analysis on a Dask cluster (``chessscan analyze --dask ADDRESS|local``).

Needs the optional extra ``chessscan[dask]`` (``dask[dataframe]``, ``distributed``); this
module imports them only inside :func:`run_dask`, and raises ``ImportError`` with the install
command when they are missing.

How a run goes:

1. **Shards** (:func:`plan_shards`, on the client): an uncompressed PGN file larger than
   ``shard_size`` is cut into byte ranges, each starting at a game boundary; a compressed
   file (no random access), a UTF-16 one (read transcoded) and an EPD file are one shard
   each. A cut is made only where the reader starts a game whatever state it is in, unless
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
   in input order. The client merges the shards' tallies in shard order into summary.json.

Workers open the input files and write the output folder themselves: on a real cluster both
must be on a filesystem every worker sees under the same path (relative paths are made
absolute on the client; the ``source`` column keeps the path as given), or the inputs are
URLs, which each worker opens through fsspec. A URL, and a game table, is one shard.
"""

from __future__ import annotations

import io
import os
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
from chessscan.readers.pgn import ReadEnd, count_line_ends, line_at, read_games, sure_game_start
from chessscan.readers.sources import detect_compression, detect_utf16, source_name, source_size
from chessscan.readers.tables import is_table
from chessscan.readers.urls import is_url
from chessscan.reports.filters import IssueFilter, held_row
from chessscan.reports.schema import schema_for
from chessscan.reports.writers import (TableWriter, buffered_rows, clear, new_buffers, part_name, prepare_output,
                                       report_files)

__all__ = ["DEFAULT_SHARD_SIZE", "Shard", "plan_shards", "count_range", "settle_shards", "analyze_shard",
           "finish_shards", "run_dask", "INSTALL_HINT"]

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
    (a whole PGN file), ``'epd'`` (a whole EPD file) or ``'table'`` (a whole game table); ``size``: bytes on disk, for
    progress; ``first``: whether it is the first shard of its file.
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


def plan_shards(paths: Iterable[str], shard_size: int = DEFAULT_SHARD_SIZE) -> list[Shard]:
    """Cut the sources into shards, in input order (see the module doc).

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
            # One task a file: the workers open it themselves (a URL through fsspec), and a
            # table's reader numbers its rows.
            kind = "table" if is_table(p) else "epd" if is_epd(p) else "pgn"
            size = source_size(p) or 0
            shards.append(Shard(len(shards), p if is_url(p) else os.path.abspath(p), name, kind, 0, size, size, True))
            continue
        path = os.path.abspath(p)
        size = os.path.getsize(path)
        if is_epd(p) or size <= shard_size or _whole_file(path):
            kind = "epd" if is_epd(p) else "pgn"
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
        if k + 1 < len(shards) and not shards[k + 1].first:
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


def analyze_shard(shard: Shard, first_index: int, first_line: int, options: AnalysisOptions,
                  names: Sequence[str], out_dir: str, write_empty: bool = False,
                  batch_rows: int = DEFAULT_BATCH_ROWS, select: Iterable[str] | None = None,
                  ignore: Iterable[str] = ()) -> tuple[Tally, Deferred | None, dict]:
    """Analyze one shard and write its part of each table in ``names`` to
    ``<out_dir>/<table>/part-<number>.parquet``; what a Dask task runs.

    ``first_index``, ``first_line``: game index and number of lines before the shard in its
    file (0 for a whole file). A table that gets no row has no part, unless ``write_empty``
    (so the first shard of a run gives every folder its schema). The issues go through
    :class:`~chessscan.reports.filters.IssueFilter` (``select``, ``ignore``, one row a game
    for ``uci-move``), as in a local run; the one row a file of ``decode-fallback`` is held
    back, for :func:`finish_shards` to write once for the whole file. Returns the shard's
    tally; with ``--cross-check sample``, the games a rare kind may sample
    (:class:`~chessscan.analysis.sampling.Deferred`; else None); and the held rows
    (:meth:`~chessscan.reports.filters.IssueFilter.take_held`). Raises ``OSError`` when the
    input cannot be read or the part cannot be written.
    """
    tables = new_tables(names, options)
    tally = Tally()
    tally.cross_check_mode = options.cross_check
    deferred = Deferred() if options.cross_check == "sample" else None
    writers: dict[str, TableWriter] = {}

    def writer(name: str) -> TableWriter:
        w = writers.get(name)
        if w is None:
            path = os.path.join(out_dir, name, part_name(shard.number))
            w = writers[name] = TableWriter(path, schema_for(name, optional_columns(name, options)),
                                            "parquet", table=name)
        return w

    sink = IssueFilter(_PartSink(writer), select, ignore)

    def flush() -> None:
        for name in names:
            if buffered_rows(tables[name]):
                sink.write(name, tables[name])
                clear(tables[name])

    try:
        if shard.kind == "epd":
            run_epd_source(shard.path, tables, tally, flush, None, batch_rows, source=shard.source)
        else:
            if shard.kind == "range":
                stream = _open_range(shard.path, shard.start, shard.end)
            else:  # a whole PGN file or game table
                stream = game_source(shard.path, options, shard.source)
            positions = tables["positions"]
            games = tables["games"]["game_index"]
            with stream:
                for raw in (read_games(stream, source=shard.source) if shard.kind == "range" else stream):
                    if shard.start:
                        raw.rebase(first_index, shard.start, first_line)
                    analyze_one(raw, tables, options, tally, None, deferred)
                    if len(positions) >= batch_rows or len(games) >= batch_rows:
                        flush()
        flush()
        held = sink.take_held()
        if write_empty:
            for name in names:
                writer(name)
    finally:
        for w in writers.values():
            w.close()
    return tally, deferred, held


def finish_shards(shards: Sequence[Shard], results: Sequence[tuple[Tally, Deferred | None, dict]],
                  options: AnalysisOptions, out_dir: str, select: Iterable[str] | None = None,
                  ignore: Iterable[str] = (), problems: Sequence = ()) -> Tally:
    """Merge the shards' :func:`analyze_shard` results in shard order into the run's tally,
    on the client. With ``--cross-check sample``, decide in input order which games the rare
    kinds sample (:class:`~chessscan.analysis.sampling.Sampler`), cross-check those the
    shards did not, and add their disagreements to the shard's part of the
    ``disagreements`` table (rewritten, rows in ``game_index`` order). The issues a local
    run adds at a file's end (the one ``decode-fallback`` row of a file cut in shards, the
    ``empty-input`` warning of one with no game) are added to its last shard's part, and the
    rows of ``problems`` (:class:`~chessscan.readers.inputs.InputProblem`, not counted here)
    at the head of the first part, where a local run writes them; all as ``select`` and
    ``ignore`` keep them."""
    tally = Tally()
    tally.cross_check_mode = options.cross_check
    sampler = new_sampler(options)
    wanted = IssueFilter(None, select, ignore).wanted
    games = 0  # of the PGN source being merged
    held: dict[str, list] = {}  # of the PGN source being merged: source -> [first row, count]
    for k, (shard, (shard_tally, deferred, shard_held)) in enumerate(zip(shards, results)):  # in shard order: see run_dask
        tally.merge(shard_tally)
        games = shard_tally.games + (0 if shard.first else games)
        if shard.first:
            held = {}
        for source, (row, count) in shard_held.items():
            held.setdefault(source, [row, 0])[1] += count
        if deferred is not None:
            found = replay_deferred(deferred, sampler, tally)
            if found is not None:
                _add_part_rows(os.path.join(out_dir, "disagreements", part_name(shard.number)), found)
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
            _add_part_rows(os.path.join(out_dir, "issues", part_name(shard.number)), issues, "issues")
    shown = [p for p in problems if wanted(p.code)]
    if shown:
        issues = new_buffers("issues")
        for p in shown:
            add_issue(issues, Tally(), p.source, None, None, None, None, p.severity, p.code, p.message)
        _add_part_rows(os.path.join(out_dir, "issues", part_name(0)), issues, "issues", first=True)
    return tally


def _add_part_rows(path: str, rows: dict[str, list], table: str = "disagreements", first: bool = False) -> None:
    """Rewrite the Parquet part ``path`` of ``table`` (it may not exist yet) with ``rows``
    added: for ``disagreements`` in ``game_index`` order (a stable sort), for ``issues``
    after the part's rows (a file's own rows come after its games' issues), or before them
    if ``first``."""
    import pyarrow.parquet as pq

    schema = schema_for(table, ())
    if os.path.exists(path):
        have = pq.read_table(path).to_pydict()
        rows = {k: rows[k] + have[k] if first else have[k] + rows[k] for k in have}
        if table == "disagreements":
            order = sorted(range(len(rows["game_index"])), key=rows["game_index"].__getitem__)
            rows = {k: [v[i] for i in order] for k, v in rows.items()}
    os.makedirs(os.path.dirname(path), exist_ok=True)
    w = TableWriter(path, schema, "parquet", table=table)
    try:
        w.write(rows)
    finally:
        w.close()


def _client(address: str, jobs: int | None):
    """A ``distributed.Client`` for ``address`` (``'local'``: a LocalCluster of ``jobs``
    one-thread worker processes) and the cluster to close after it (or None)."""
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
            # One thread per worker: a task holds the GIL.
            cluster = LocalCluster(n_workers=jobs or default_jobs(), threads_per_worker=1,
                                   processes=True, dashboard_address=":0")
            client = Client(cluster)
        finally:
            for sig, handler in ignored.items():
                signal.signal(sig, handler)
            if masked:
                signal.pthread_sigmask(signal.SIG_SETMASK, old)
        return client, cluster
    try:
        return Client(address), None
    except OSError as exc:  # refused, timed out, bad address
        raise ConnectionError(f"cannot reach the Dask scheduler at {address}: {exc}") from exc


def run_dask(paths: Iterable[str], out_dir: str, options: AnalysisOptions = AnalysisOptions(),
             address: str = "local", client=None, jobs: int | None = None,
             shard_size: int = DEFAULT_SHARD_SIZE, progress: bool = False,
             select: Iterable[str] | None = None, ignore: Iterable[str] = (), problems: Sequence = ()) -> Tally:
    """Analyze ``paths`` on a Dask cluster and write one Parquet dataset per table of
    :func:`~chessscan.engines.local.tables_for` under ``out_dir`` (``<out_dir>/<table>/
    part-*.parquet``). Does not write summary.json: the caller adds ``sources`` to the
    returned tally's ``as_dict()``.

    ``client``: a ``distributed.Client`` to use; else one is made for ``address`` (a
    scheduler address such as ``tcp://host:8786``, or ``'local'`` for a LocalCluster of
    ``jobs`` workers, default every core) and closed at the end. What an earlier run wrote to
    ``out_dir`` is removed first, and nothing else (:func:`~chessscan.reports.writers.prepare_output`;
    raises its ``OutputFolderError``). The rows equal a local run's once sorted by
    (source, game_index, ply); read in part order they are in input order too. The issues
    are those a local run writes: ``select`` and ``ignore`` as ``--select``/``--ignore``,
    and ``problems`` (the :class:`~chessscan.readers.inputs.InputProblem` of the paths left
    out; counted by the caller) first.

    Raises ``ImportError`` (with :data:`INSTALL_HINT`) when dask or distributed is missing,
    ``ValueError`` for stdin or a bad ``shard_size``, ``OSError`` when an input cannot be
    read; an error in a task is re-raised here.
    """
    paths = [os.fspath(p) for p in paths]
    shards = plan_shards(paths, shard_size)
    out_dir = os.path.abspath(out_dir)
    names = tables_for(paths, options)

    cluster = None
    if client is None:
        client, cluster = _client(address, jobs)
        own = True
    else:
        own = False
    try:
        # (only once the scheduler answers: an unreachable one leaves no folder behind)
        # (a part left by an earlier, larger run would be read back as part of this dataset)
        prepare_output(out_dir, report_files(names, dataset=True), inputs=paths)
        # Game index and line number of each shard's first game: counts of the ranges
        # before it in its file (the last range of a file needs no count); a cut that
        # proves to lie inside a comment is dropped.
        def count(needed: list[Shard]) -> list:
            return client.gather(client.map(count_range, [s.path for s in needed],
                                            [s.start for s in needed], [s.end for s in needed],
                                            pure=False))

        shards, firsts = settle_shards(shards, count)

        futures = [client.submit(analyze_shard, s, i0, l0, options, names, out_dir, s.number == 0,
                                 select=select, ignore=ignore, pure=False)
                   for s, (i0, l0) in zip(shards, firsts)]
        if progress:
            import sys

            from distributed import as_completed
            from tqdm import tqdm

            sizes = {f.key: s.size for f, s in zip(futures, shards)}
            with tqdm(total=sum(sizes.values()), unit="B", unit_scale=True, unit_divisor=1024,
                      file=sys.stderr, desc="analyze (dask)", leave=False, dynamic_ncols=True) as bar:
                for f in as_completed(futures):
                    bar.update(sizes[f.key])
        results = client.gather(futures)
    except BaseException:
        # Stopped (Ctrl-C, SIGTERM) or failed: closing a cluster with tasks in flight makes
        # distributed log every cancelled task and closed connection. The user has the one
        # message that matters; the cluster's shutdown chatter is not it.
        import logging

        for name in ("distributed", "asyncio", "tornado"):
            logging.getLogger(name).setLevel(logging.CRITICAL + 1)
        raise
    finally:
        if own:
            client.close()
            if cluster is not None:
                cluster.close()
    # In shard order, so the summary's counters keep the local key order and the sample is
    # a local run's.
    return finish_shards(shards, results, options, out_dir, select, ignore, problems)
