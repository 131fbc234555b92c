"""Games that are there twice: the duplicate search over report folders' games tables.

Two games are duplicates when their ``moves_hash`` (the games table's column: BLAKE2b-128
of the start FEN and the moves played in UCI, :data:`chessscan.analysis.plies.MOVES_HASH`)
is equal: the same moves from the same position, whatever their tags. The search reads
only the games tables (``source``, ``game_index``, ``line``, ``moves_hash``), never the PGN,
and runs in DuckDB with a memory limit, spilling to a temporary folder when the hashes do
not fit: a window over the games partitioned by hash gives each game its first occurrence,
and the games that are not their own first are written in the games' order. Nothing here holds the hashes in Python.

A games table is read in either layout a run writes: one file (``games.parquet``,
``games.csv``) or a dataset folder (``games/part-NNNNNN.parquet``, ``--dask``). The
**run's order** of a game is its row's 0-based position in the games table (the parts in
name order, then the rows of each), and across several reports the reports in the order
given: the first occurrence of a hash is the game earliest in that order.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

__all__ = ["DuplicateError", "games_files", "Search", "DEFAULT_MEMORY_LIMIT"]

#: DuckDB's memory limit for the search unless told otherwise (``--duplicates-memory``).
DEFAULT_MEMORY_LIMIT = "512MB"
#: The temporary folder DuckDB spills to, inside the output folder during ``analyze
#: --duplicates`` (removed afterwards).
SPILL_DIR_NAME = ".chessscan-duplicates.tmp"
#: The start position's bytes at the head of a ``moves_key`` (:data:`chessscan.analysis.plies.MOVES_KEY`).
_START_KEY_BYTES = 8


class DuplicateError(Exception):
    """A folder that is not a report with a games table holding ``moves_hash``, or DuckDB
    missing: a one-line message (the CLI's exit 2)."""


def need_duckdb():
    """The ``duckdb`` module, or :class:`DuplicateError` saying how to install it."""
    try:
        import duckdb
    except ImportError as exc:
        raise DuplicateError(f"the duplicate search runs in DuckDB, which is not installed: "
                             f"pip install 'chessscan[duplicates]' ({exc})") from None
    return duckdb


def _utf8(name: str) -> bool:
    """Whether ``name`` (a path, surrogate-escaped as os.fsdecode gives it) is UTF-8."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def games_files(report_dir: str | os.PathLike, also: str | None = None) -> tuple[str, list[Path]]:
    """The games table of the report folder ``report_dir``: its format (``"parquet"`` or
    ``"csv"``) and its files in order (one file, or a dataset folder's parts by name).
    Raises :class:`DuplicateError` when there is none, or when it has no ``moves_hash`` (or
    no column ``also``, ``"moves_key"`` for the contained-games search)."""
    folder = Path(report_dir)
    if not folder.is_dir():
        raise DuplicateError(f"{report_dir}: not a folder")
    for fmt, files in (("parquet", [folder / "games.parquet"]), ("csv", [folder / "games.csv"]),
                       ("parquet", sorted((folder / "games").glob("part-*.parquet")))):
        files = [f for f in files if f.is_file()]
        if not files:
            continue
        if fmt == "parquet":
            with open(files[0], "rb") as f:  # (by its exact name: Arrow takes only UTF-8 names)
                names = pq.read_schema(f).names
        else:
            with open(files[0], encoding="utf-8") as f:
                names = [n.strip('"') for n in f.readline().strip().split(",")]
        if "moves_hash" not in names:
            raise DuplicateError(f"{report_dir}: its games table has no moves_hash column (a report "
                                 "written by an older chessscan): run analyze again")
        if also is not None and also not in names:
            raise DuplicateError(f"{report_dir}: its games table has no {also} column: run analyze again with "
                                 "--duplicates --contained-games")
        return fmt, files
    raise DuplicateError(f"{report_dir}: not a chessscan report (no games.parquet, games.csv or "
                         "games/part-*.parquet in it)")


class Search:
    """One DuckDB connection over the games tables of ``reports`` (report folders, in
    order), with ``memory_limit`` (DuckDB's syntax: ``'256MB'``, ``'2GB'``) and spilling to
    ``spill_dir`` (made if needed; default: a new folder in the system's temporary folder,
    removed on :meth:`close`). View ``g``: ``report`` (0-based index in ``reports``),
    ``ord`` (the run's order, across the reports), ``source``, ``game_index``, ``line``,
    ``moves_hash``, for every game with a hash."""

    def __init__(self, reports, memory_limit: str = DEFAULT_MEMORY_LIMIT, spill_dir=None,
                 contained: bool = False) -> None:
        duckdb = need_duckdb()
        self.reports = [str(r) for r in reports]
        tables = [games_files(r, "moves_key" if contained else None) for r in self.reports]
        # (the contained-games search reads two more columns; the others do not need them)
        extra = ", plies, moves_key" if contained else ""
        extra_cast = (", CAST(plies AS INTEGER) AS plies, CAST(moves_key AS VARCHAR) AS moves_key"
                      if contained else "")
        if spill_dir is not None and not _utf8(str(spill_dir)):
            spill_dir = None  # (DuckDB takes only UTF-8 names: the system's temporary folder then)
        self._own_spill = spill_dir is None
        self.spill_dir = Path(tempfile.mkdtemp(prefix="chessscan-duplicates-")) if spill_dir is None else Path(spill_dir)
        self.spill_dir.mkdir(parents=True, exist_ok=True)
        self.con = con = duckdb.connect()
        try:
            con.execute(f"SET memory_limit = '{_size(memory_limit)}'")
            con.execute(f"SET temp_directory = {_quote(str(self.spill_dir))}")
            con.execute("SET enable_progress_bar = false")
            # (the order of the rows written is the ORDER BY's: no other order to keep)
            con.execute("SET preserve_insertion_order = false")
            # (rows ordered by the run's order: a CSV's are numbered in the order it is read)
            if any(fmt == "csv" for fmt, _ in tables):
                con.execute("SET threads = 1")
            parts = []
            base = 0
            self.files: list[tuple[int, str, Path, int]] = []  # (report, fmt, path, rows before it)
            parquet_files = []  # (path, report, rows before it)
            for r, (fmt, files) in enumerate(tables):
                for path in files:
                    named = self._utf8_name(path, len(self.files))
                    if fmt == "parquet":
                        with open(path, "rb") as f:
                            n = pq.ParquetFile(f).metadata.num_rows
                        parquet_files.append((named, r, base))
                    else:
                        scan = (f"SELECT row_number() OVER () - 1 AS row, source, game_index, line, moves_hash{extra} "
                                f"FROM read_csv({_quote(named)}, header = true, all_varchar = true)")
                        n = con.execute(f"SELECT count(*) FROM read_csv({_quote(named)}, header = true, "
                                        "all_varchar = true)").fetchone()[0]
                        parts.append(f"SELECT {r} AS report, {base} + row AS ord, {_columns(extra_cast)} "
                                     f"FROM ({scan}) WHERE moves_hash IS NOT NULL AND moves_hash <> ''")
                    self.files.append((r, fmt, path, base))
                    base += n
            if parquet_files:
                # One scan of every Parquet file, each row's run order from its file's first:
                # a UNION ALL of one scan a file held buffers for each, and a dataset has a part
                # a chunk (25 files of 10M games ran out of 256MB where one scan did not).
                con.execute("CREATE TEMP TABLE files (filename VARCHAR, report INTEGER, base BIGINT)")
                con.executemany("INSERT INTO files VALUES (?, ?, ?)", parquet_files)
                listed = ", ".join(_quote(f) for f, _, _ in parquet_files)
                parts.append(f"SELECT files.report AS report, files.base + t.file_row_number AS ord, "
                             f"{_columns(extra_cast)} FROM read_parquet([{listed}], file_row_number = true, "
                             f"filename = true, union_by_name = true) AS t JOIN files USING (filename) "
                             f"WHERE moves_hash IS NOT NULL AND moves_hash <> ''")
            self.rows = base
            con.execute("CREATE TEMP VIEW g AS " + " UNION ALL ".join(parts))
        except BaseException:
            self.close()
            raise

    def _utf8_name(self, path: Path, k: int) -> str:
        """``path`` as DuckDB can be given it: itself, or when it is not UTF-8 (a Latin-1
        folder name), a link to it in the spill folder."""
        name = str(path)
        if _utf8(name):
            return name
        link = self.spill_dir / f"input-{k}{path.suffix}"
        os.symlink(os.path.abspath(path), link)
        return str(link)

    def close(self) -> None:
        try:
            self.con.close()
        finally:
            if self._own_spill or self.spill_dir.name == SPILL_DIR_NAME:
                shutil.rmtree(self.spill_dir, ignore_errors=True)

    def __enter__(self) -> "Search":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def duplicates(self, out: Path) -> int:
        """Write every game whose hash an earlier game has (in the run's order) to the
        Parquet file ``out``, ordered by the run's order: ``ord``, ``report``, ``source``,
        ``game_index``, ``line``, ``first_ord`` (the first occurrence's run order),
        ``first_report``, ``first_source``, ``first_game_index``, ``first_line``,
        ``moves_hash``. Returns the rows written."""
        # A window over the games partitioned by hash (DuckDB sorts it out of core): the
        # first occurrence's columns beside each game, with no join back to the games. (A
        # GROUP BY of the repeated hashes joined back twice took the same CPU and memory on 1M
        # games; both ran out within 64MB on 10M.)
        self.con.execute(f"""
            COPY (
                SELECT ord, report, source, game_index, line, first_ord, first_report, first_source,
                       first_game_index, first_line, moves_hash
                FROM (SELECT *, first_value(ord) OVER w AS first_ord, first_value(report) OVER w AS first_report,
                             first_value(source) OVER w AS first_source,
                             first_value(game_index) OVER w AS first_game_index,
                             first_value(line) OVER w AS first_line
                      FROM g WINDOW w AS (PARTITION BY moves_hash ORDER BY ord))
                WHERE ord > first_ord
                ORDER BY ord
            ) TO {_quote(str(out))} (FORMAT parquet)""")
        return pq.ParquetFile(out).metadata.num_rows

    def shared(self, out: Path) -> int:
        """Write every game whose hash is in two or more of the reports (one report: two or
        more times in it) to the Parquet file ``out``, grouped by hash in the order of their
        first occurrence: ``report``, ``ord``, ``source``, ``game_index``, ``line``,
        ``moves_hash``. Returns the rows written."""
        several = len(self.reports) > 1
        keep = "min(report) OVER w < max(report) OVER w" if several else "count(*) OVER w > 1"
        self.con.execute(f"""
            COPY (
                SELECT report, ord, source, game_index, line, moves_hash
                FROM (SELECT *, {keep} AS shared, min(ord) OVER w AS first_ord
                      FROM g WINDOW w AS (PARTITION BY moves_hash))
                WHERE shared
                ORDER BY first_ord, ord
            ) TO {_quote(str(out))} (FORMAT parquet)""")
        return pq.ParquetFile(out).metadata.num_rows

    def contained(self, out: Path) -> int:
        """Write every game whose whole mainline is the start of another game's from the
        same start position (its ``moves_key`` a proper prefix of the other's) to the
        Parquet file ``out``, in the run's order: ``ord``, ``report``, ``source``,
        ``game_index``, ``line``, ``plies``, then ``in_ord``, ``in_report``, ``in_source``,
        ``in_game_index``, ``in_line``, ``in_plies`` of one game that continues it: of those,
        the ones whose ``moves_key`` comes first in order, and of these the first in the run's
        order. A game with no moves (its key only the start's) is not counted. Needs the view
        with ``moves_key`` (``contained=True``). Returns the rows written."""
        # Sorted by key, a key that is the start of any other key is the start of the next
        # different one; with the run's order within a key, the row before a change of key is
        # its last copy and the row after is the next key's first. DuckDB sorts out of core
        # (a window's lead() over the one partition, and a GROUP BY over the keys, ran out of
        # memory where the sort did not); the neighbours are compared here a batch at a time;
        # the copies of a found key are joined again with the few keys found as build side.
        ordered = self.spill_dir / "contained-sorted.parquet"
        keys = self.spill_dir / "contained-keys.parquet"
        inner = self.spill_dir / "contained-games.parquet"
        threads = self.con.execute("SELECT current_setting('threads')").fetchone()[0]
        try:
            # One thread: each thread holds its own buffers of these long keys (a sort's runs,
            # a scan's row groups); on 4M games of the shared corpora 256MB ran out with two
            # threads, in the sort and in the join, and did not with one.
            self.con.execute("SET threads = 1")
            self.con.execute(f"""
                COPY (SELECT moves_key, ord FROM g WHERE moves_key IS NOT NULL ORDER BY moves_key, ord)
                TO {_quote(str(ordered))} (FORMAT parquet)""")
            _next_keys(ordered, keys)
            ordered.unlink()
            # Two joins, each with the few found rows as its build side: the games with a found
            # key, then the games that continue them.
            self.con.execute(f"""
                COPY (SELECT a.ord, a.report, a.source, a.game_index, a.line, a.plies, found.next_ord
                      FROM g AS a JOIN read_parquet({_quote(str(keys))}) AS found USING (moves_key))
                TO {_quote(str(inner))} (FORMAT parquet)""")
            self.con.execute(f"""
                COPY (
                    SELECT a.ord, a.report, a.source, a.game_index, a.line, a.plies, b.ord AS in_ord,
                           b.report AS in_report, b.source AS in_source, b.game_index AS in_game_index,
                           b.line AS in_line, b.plies AS in_plies
                    FROM g AS b JOIN read_parquet({_quote(str(inner))}) AS a ON b.ord = a.next_ord
                    ORDER BY a.ord
                ) TO {_quote(str(out))} (FORMAT parquet)""")
        finally:
            self.con.execute(f"SET threads = {int(threads)}")
            for f in (ordered, keys, inner):
                f.unlink(missing_ok=True)
        return pq.ParquetFile(out).metadata.num_rows

    def counts(self, found: Path) -> dict:
        """Counts for a ``found`` file of :meth:`duplicates`: games with a hash, duplicate
        games, distinct games repeated."""
        hashed = self.con.execute("SELECT count(*) FROM g").fetchone()[0]
        dups, repeated = self.con.execute(
            f"SELECT count(*), count(DISTINCT first_ord) FROM read_parquet({_quote(str(found))})").fetchone()
        return {"games_hashed": hashed, "duplicate_games": dups, "games_repeated": repeated}


def _next_keys(ordered: Path, out: Path) -> None:
    """From ``ordered`` (``moves_key``, ``ord`` sorted by both), write to ``out`` each key
    that is the start of the next different key, with that one's first ``ord``
    (``moves_key``, ``next_ord``), a batch in memory at a time. A key with no moves (only the
    start's bytes) is not written."""
    import pyarrow.compute as pc

    schema = pa.schema([("moves_key", pa.string()), ("next_ord", pa.int64())])
    last = None  # the previous batch's last row: (key, ord) as one-row arrays
    with pq.ParquetWriter(out, schema) as writer:
        # (pre_buffer off: on, pyarrow read the whole file ahead, 1 GiB at peak on 4M games)
        for batch in pq.ParquetFile(ordered, pre_buffer=False).iter_batches(batch_size=65_536,
                                                                           columns=["moves_key", "ord"]):
            key, ord_ = batch.column(0), batch.column(1)
            if last is not None:
                key, ord_ = pa.concat_arrays([last[0], key]), pa.concat_arrays([last[1], ord_])
            last = key.slice(len(key) - 1), ord_.slice(len(ord_) - 1)
            this, after = key.slice(0, len(key) - 1), key.slice(1)
            # (sorted: 'after' starts with 'this' exactly when it sorts before 'this' + 'g', a
            # letter after every hex digit)
            hit = pc.and_(pc.and_(pc.not_equal(this, after),
                                  pc.less(after, pc.binary_join_element_wise(this, "g", ""))),
                          pc.greater(pc.binary_length(this), 2 * _START_KEY_BYTES))
            if pc.any(hit).as_py():
                writer.write_table(pa.table([this.filter(hit), ord_.slice(1).filter(hit)], schema=schema))


def _columns(extra_cast: str) -> str:
    """The view's columns after ``report`` and ``ord``, cast to their types."""
    return ("CAST(source AS VARCHAR) AS source, CAST(game_index AS BIGINT) AS game_index, "
            f"CAST(line AS BIGINT) AS line, CAST(moves_hash AS VARCHAR) AS moves_hash{extra_cast}")


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _size(text: str) -> str:
    """A memory size for DuckDB: digits and a unit (KB, MB, GB, KiB, MiB, GiB...)."""
    t = str(text).strip().replace(" ", "")
    import re

    if not re.fullmatch(r"\d+(\.\d+)?([KMGT]i?B|B)?", t, re.IGNORECASE):
        raise DuplicateError(f"memory limit {text!r}: give a size such as 256MB or 2GB")
    return t


# --- analyze --duplicates: the duplicates table and games.duplicate_of -----------------------

def write_duplicates_table(found: Path, out_dir: Path, fmt: str, dataset: bool) -> None:
    """The report's ``duplicates`` table, from the :meth:`Search.duplicates` file ``found``
    (one report: its first-occurrence columns name that report's games)."""
    from chessscan.reports.schema import schema_for
    from chessscan.reports.writers import EXTENSIONS, TableWriter, part_name

    schema = schema_for("duplicates")
    path = out_dir / "duplicates" / part_name(0) if dataset else out_dir / f"duplicates{EXTENSIONS[fmt]}"
    if dataset and path.parent.is_dir():
        for old in path.parent.glob("part-*.parquet"):
            old.unlink()
    with _whole(TableWriter(path, schema, fmt, table="duplicates")) as writer:
        for batch in pq.ParquetFile(found, pre_buffer=False).iter_batches(batch_size=65_536):
            cols = {name: batch.column(name) for name in batch.schema.names}
            writer.write({"source": cols["source"], "game_index": cols["game_index"], "line": cols["line"],
                          "first_source": cols["first_source"], "first_game_index": cols["first_game_index"],
                          "first_line": cols["first_line"], "duplicate_of": cols["first_ord"],
                          "moves_hash": cols["moves_hash"]})


def write_contained_table(found: Path, out_dir: Path, fmt: str, dataset: bool) -> None:
    """The report's ``contained_games`` table, from the :meth:`Search.contained` file
    ``found``."""
    from chessscan.reports.schema import schema_for
    from chessscan.reports.writers import EXTENSIONS, TableWriter, part_name

    schema = schema_for("contained_games")
    name = "contained_games"
    path = out_dir / name / part_name(0) if dataset else out_dir / f"{name}{EXTENSIONS[fmt]}"
    if dataset and path.parent.is_dir():
        for old in path.parent.glob("part-*.parquet"):
            old.unlink()
    with _whole(TableWriter(path, schema, fmt, table=name)) as writer:
        for batch in pq.ParquetFile(found, pre_buffer=False).iter_batches(batch_size=65_536):
            cols = {n: batch.column(n) for n in batch.schema.names}
            writer.write({"source": cols["source"], "game_index": cols["game_index"], "line": cols["line"],
                          "plies": cols["plies"], "in_source": cols["in_source"],
                          "in_game_index": cols["in_game_index"], "in_line": cols["in_line"],
                          "in_plies": cols["in_plies"], "contained_in": cols["in_ord"]})


class _whole:
    """A TableWriter that is named only when written whole: an exception or a stop midway
    removes its partial file (a table cut short, the games table above all, must not take
    the place of the whole one), where TableWriter's own exit keeps the rows written."""

    def __init__(self, writer) -> None:
        self.writer = writer

    def __enter__(self):
        return self.writer

    def __exit__(self, kind, value, tb) -> None:
        if kind is None:
            self.writer.close()
        else:
            self.writer._discard()


def add_duplicate_of(search: Search, found: Path, fmt: str) -> None:
    """Write each games table file of the one report of ``search`` again with its
    ``duplicate_of`` column (the first occurrence's run order, from ``found``), in a
    batch's memory: the games and the found rows are both in the run's order."""
    import numpy as np

    from chessscan.reports.schema import schema_for
    from chessscan.reports.writers import TableWriter

    kept = ("moves_key",) if "moves_key" in _games_names(search.files[0]) else ()
    schema = schema_for("games", kept + ("duplicate_of",))
    dup_batches = pq.ParquetFile(found, pre_buffer=False).iter_batches(batch_size=65_536,
                                                                       columns=["ord", "first_ord"])
    pending = [np.zeros(0, np.int64), np.zeros(0, np.int64)]

    def take(until: int):
        """The found rows whose ord < until (the rows of one games batch)."""
        nonlocal pending
        while not len(pending[0]) or pending[0][-1] < until:
            try:
                b = next(dup_batches)
            except StopIteration:
                break
            pending = [np.concatenate([pending[0], b.column(0).to_numpy()]),
                       np.concatenate([pending[1], b.column(1).to_numpy()])]
        k = int(np.searchsorted(pending[0], until))
        out = pending[0][:k], pending[1][:k]
        pending = [pending[0][k:], pending[1][k:]]
        return out

    for _report, file_fmt, path, base in search.files:
        start = base
        with _whole(TableWriter(path, schema, fmt, table="games", csv_formula_guard=False)) as writer:
            for batch in _games_batches(path, file_fmt):
                n = batch.num_rows
                ords, firsts = take(start + n)
                values = np.zeros(n, np.int64)
                valid = np.zeros(n, bool)
                values[ords - start] = firsts
                valid[ords - start] = True
                cols = {name: batch.column(name) for name in batch.schema.names if name != "duplicate_of"}
                cols["duplicate_of"] = pa.array(values, pa.int64(), mask=~valid)
                writer.write(cols)
                start += n


def _games_names(file) -> list[str]:
    """The column names of a :attr:`Search.files` entry's games table file."""
    _report, fmt, path, _base = file
    if fmt == "parquet":
        with open(path, "rb") as f:
            return pq.read_schema(f).names
    with open(path, encoding="utf-8") as f:
        return [n.strip('"') for n in f.readline().strip().split(",")]


def _games_batches(path: Path, fmt: str):
    """The record batches of a games table file as written (the declared types)."""
    from chessscan.reports.schema import schema_for

    if fmt == "parquet":  # (every file here read a batch at a time, not read ahead whole)
        with open(path, "rb") as f:
            yield from pq.ParquetFile(f, pre_buffer=False).iter_batches(batch_size=65_536)
        return
    import pyarrow.csv as pacsv

    schema = schema_for("games", ("moves_key",))  # (hex digits are text, whatever they look like)
    # Read as written: an empty unquoted field is null, "" the empty string; the text keeps
    # the formula guard it was written with (written again as read).
    types = {f.name: (pa.string() if pa.types.is_dictionary(f.type) else f.type) for f in schema}
    reader = pacsv.open_csv(path, read_options=pacsv.ReadOptions(block_size=8 << 20),
                            convert_options=pacsv.ConvertOptions(
                                column_types=types, strings_can_be_null=True, quoted_strings_can_be_null=False,
                                true_values=["true"], false_values=["false"]))
    for batch in reader:
        yield batch


# --- validate --duplicates: the games' hashes kept on disk, the warnings at the end ---------

class HashCollector:
    """A sink wrapper for ``validate --duplicates``: passes every write on to ``inner`` and
    keeps the ``source``, ``game_index``, ``line`` and ``moves_hash`` of each ``games`` row
    in ``folder/games.parquet`` (on disk: the hashes of a 100M-game input are not held),
    a games table for :class:`Search`. :meth:`close` ends the file."""

    accepts_arrow = True
    #: Reads the games' moves_hash (not only the columns naming a game), whatever ``inner`` reads.
    reads_game_names = False

    def __init__(self, inner, folder: Path) -> None:
        self.inner = inner
        self.folder = Path(folder)
        self.schema = pa.schema([("source", pa.string()), ("game_index", pa.int64()), ("line", pa.int64()),
                                 ("moves_hash", pa.string())])
        self._writer = pq.ParquetWriter(self.folder / "games.parquet", self.schema)

    def __getattr__(self, name):  # (wanted, finish, hidden, reported... of the wrapped sink)
        return getattr(self.inner, name)

    def write(self, table_name: str, columns) -> None:
        if table_name == "games":
            arrays = []
            for name, field in zip(self.schema.names, self.schema):
                col = columns[name]
                if isinstance(col, (pa.Array, pa.ChunkedArray)):
                    arrays.append(col.cast(field.type) if not pa.types.is_dictionary(col.type)
                                  else col.dictionary_decode().cast(field.type))
                else:
                    arrays.append(pa.array(col, field.type))
            self._writer.write_batch(pa.record_batch(arrays, schema=self.schema))
        self.inner.write(table_name, columns)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None


def duplicate_diagnostics(found: Path):
    """The ``duplicate-game`` warnings of a :meth:`Search.duplicates` file, in the run's
    order: :class:`~chessscan.reports.diagnostics.Diagnostic` objects, one per game that
    repeats an earlier one, naming that one's file and line."""
    from chessscan.reports.diagnostics import Diagnostic

    for batch in pq.ParquetFile(found, pre_buffer=False).iter_batches(
            batch_size=8192, columns=["source", "game_index", "line", "first_source", "first_game_index",
                                      "first_line"]):
        for source, gi, line, first_source, first_gi, first_line in zip(*(c.to_pylist() for c in batch.columns)):
            yield Diagnostic(source, line, None, "warning", "duplicate-game",
                             f"the same moves from the same start position as game_index {first_gi} at "
                             f"{first_source}:{first_line}", gi)
