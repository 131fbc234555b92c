"""Streaming writers for the report tables.

Data flow: the analysis layer fills **column buffers** (``dict[str, list]``,
one Python list per declared column, all the same length), and every N rows
hands them to :meth:`ReportWriter.write` and then :func:`clear`\\ s them. The
writer converts the buffers into an Arrow record batch with the table's
FIXED schema (``schema.py``; types are never inferred) and appends it to
the output file. Nothing but the current (parquet: current row group) rows
is kept in memory.

Formats:

* ``parquet``: one file per table, zstd (snappy if zstd is unavailable) but for the
  positions columns it gains little on (:data:`POSITIONS_ENCODINGS`), row groups of about
  ``row_group_size`` rows (default 65 536) or 4 MiB of Arrow data.
* ``csv``: header written at open, bools as ``true``/``false``, null as an
  empty unquoted field, the empty string as ``""``. A text value that a
  spreadsheet would run as a formula (starting with ``=``, ``+``, ``-``, ``@``,
  tab or carriage return: a PGN tag value can hold anything) gets a leading
  ``'`` (OWASP "CSV injection"); ``csv_formula_guard=False`` writes it as read.
  Parquet and JSON lines always keep every value as read.
* ``jsonl``: one JSON object per row; ``null`` for None. An empty table is
  an empty file (JSON lines has no header to carry column names).

Reading back with pandas: use ``pd.read_parquet(p, dtype_backend=
"numpy_nullable")`` (or :func:`read_table` then ``to_pandas``) so that
nullable ints stay ``Int32``/``Int64``; pandas' default turns an int column
with nulls into float64, which loses integers >= 2**53.
"""

from __future__ import annotations

import errno
import inspect
import io
import json
import os
import queue
import re
import threading
from pathlib import Path
from typing import Any, Iterable, Mapping, MutableMapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from chessscan.analysis.arrow import from_list, from_numpy

from . import files as _files
from .files import PARTIAL_SUFFIX
from .schema import OPTIONAL_COLUMNS, TABLE_NAMES, column_names, schema_for

__all__ = [
    "report_file_of",
    "FORMATS",
    "EXTENSIONS",
    "DEFAULT_ROW_GROUP_SIZE",
    "DEFAULT_TABLES",
    "TableWriter",
    "ReportWriter",
    "new_buffers",
    "clear",
    "buffered_rows",
    "to_record_batch",
    "read_table",
    "prepare_output",
    "replace_file",
    "report_files",
    "OutputError",
    "OutputFolderError",
    "MANIFEST_NAME",
]

FORMATS: tuple[str, ...] = ("parquet", "csv", "jsonl")
EXTENSIONS: dict[str, str] = {"parquet": ".parquet", "csv": ".csv", "jsonl": ".jsonl"}
DEFAULT_ROW_GROUP_SIZE = 65_536
#: A row group is also cut when its pending Arrow data reaches this many bytes, so that a
#: table of wide rows (games: names, events, sites) holds as little memory on a 100M-game
#: input as on a small one. A positions row takes about 90 bytes in Arrow with its clock and
#: evaluation columns: its row groups are cut by their rows (at 4 MiB they were cut at ~47,000
#: rows, which cost 5% more time to encode).
ROW_GROUP_BYTES = 8 << 20
#: Text columns written without Parquet min/max statistics (see TableWriter).
_NO_STATISTICS = frozenset({"san", "uci", "checkers", "fen"})
#: How each column of the positions table is written to Parquet, chosen by measurement
#: (``benchmarks/parquet_options.py``; docs: explanation/speed-and-scale.md, "Parquet
#: encodings and writer options"): (encoding, codec, min/max statistics). Encoding
#: ``"dictionary"``: dictionary pages and RLE codes; the others are Parquet's own. The other
#: tables (and a column not listed): text columns dictionary-encoded, the rest plain, zstd,
#: statistics but for :data:`_NO_STATISTICS`.
POSITIONS_ENCODINGS: dict[str, tuple[str, str, bool]] = {
    # Statistics only where rows are clustered, so that a reader filtering on them skips row
    # groups. No compression where zstd saves less than a byte a row per 25 ns a row of CPU.
    # BYTE_STREAM_SPLIT would beat plain zstd on the small integers, but readers of only a
    # few years back (DuckDB 1.x, pyarrow before 16) cannot read it on integers.
    "source": ("dictionary", "none", True),
    "game_index": ("PLAIN", "zstd", True),
    "ply": ("PLAIN", "zstd", False),
    "move_number": ("PLAIN", "zstd", False),
    "color": ("dictionary", "zstd", False),
    "san": ("dictionary", "zstd", False),
    "uci": ("dictionary", "zstd", False),
    "in_check": ("PLAIN", "none", False),
    "check_kind": ("dictionary", "none", False),
    "checkers": ("PLAIN", "zstd", False),
    "by_en_passant": ("PLAIN", "zstd", False),
    "by_castling": ("PLAIN", "zstd", False),
    "by_promotion": ("PLAIN", "zstd", False),
    "is_checkmate": ("PLAIN", "zstd", False),
    "is_stalemate": ("PLAIN", "zstd", False),
    "halfmove_clock": ("DELTA_BINARY_PACKED", "zstd", False),
    "zobrist": ("PLAIN", "none", False),  # random: zstd saves 5% at 2.4 times the CPU
    "repetition": ("PLAIN", "zstd", False),
    # A clock reads whole seconds (Lichess) or tenths: a row group holds a few thousand
    # values, so dictionary codes (0.72 B/row against 1.34 with deltas, and faster to write;
    # past pyarrow's dictionary page limit a row group falls back to plain pages). Evals and
    # the mostly null columns gain nothing from zstd after delta packing.
    "clock_ms": ("dictionary", "zstd", False),
    "emt_ms": ("DELTA_BINARY_PACKED", "none", False),
    "eval_cp": ("DELTA_BINARY_PACKED", "none", False),
    "eval_mate": ("DELTA_BINARY_PACKED", "none", False),
}
#: zstd levels other than 1 (pyarrow's) for positions columns compressed with zstd. On the
#: sorted game numbers and move numbers zstd's fast level -5 takes 15 to 50% less time than
#: level 1 for about as many bytes (Lichess, TCEC and pgnmentor games); on the other
#: columns it saves under 2 ns a row for more bytes than the rule above allows.
POSITIONS_ZSTD_LEVELS: dict[str, int] = {"game_index": -5, "move_number": -5}
#: Rows a data page of the positions table holds at most: so many that pages are cut by their
#: bytes alone (pyarrow's ``data_page_size``, 1 MiB, checked after each batch of values), which
#: makes one page of most column chunks. Recent pyarrow cuts a page at 20,000 rows by default:
#: four pages to a chunk, each compressed with a zstd context of its own and with its own
#: header and levels, for 8% more time and 1% more bytes (the page index and page statistics,
#: which small pages serve, are not written). Older pyarrow has no such limit, nor the option.
POSITIONS_PAGE_ROWS = 1 << 20
_PAGE_ROWS_OPTION = "max_rows_per_page" in inspect.signature(pq.ParquetWriter.__init__).parameters
#: Bytes Arrow gathers before each write to a table's file.
_WRITE_BUFFER = 1 << 20
DEFAULT_TABLES: tuple[str, ...] = ("positions", "games", "issues")

Buffers = MutableMapping[str, list]


class _Encoding:
    """One Parquet row group, written on the process's encoder thread: pyarrow's
    ``ParquetWriter.write_table`` releases the GIL, so the encoding and compression (a
    quarter of a run that writes the positions table) overlap with the analysis instead of
    following it. The writer waits for it (:meth:`wait`) before it writes the next row group
    of its table or closes the file."""

    __slots__ = ("sink", "table", "error", "done")

    def __init__(self, sink, table: pa.Table) -> None:
        self.sink = sink
        self.table = table
        self.error: BaseException | None = None
        self.done = threading.Event()
        _encoder().put(self)

    def wait(self) -> BaseException | None:
        """Wait for the write to end; return its exception, if any."""
        self.done.wait()
        return self.error


def _encode(jobs: "queue.SimpleQueue[_Encoding]") -> None:
    while True:
        job = jobs.get()
        try:
            job.sink.write_table(job.table, row_group_size=job.table.num_rows)
        except BaseException as exc:  # raised again by the writer, in its own thread
            job.error = exc
        finally:
            job.table = None
            job.done.set()


# One encoder thread per process, started on first use: a daemon, so that nothing is left
# for the interpreter to join at exit (a Ctrl-C there left a pool's join hanging), and one
# thread for the whole run (a thread per row group spread Arrow's allocations over more
# arenas: the peak RSS grew with the input).
_QUEUE: "queue.SimpleQueue[_Encoding] | None" = None
_QUEUE_LOCK = threading.Lock()


def _encoder() -> "queue.SimpleQueue[_Encoding]":
    global _QUEUE
    with _QUEUE_LOCK:
        if _QUEUE is None:
            _QUEUE = queue.SimpleQueue()
            threading.Thread(target=_encode, args=(_QUEUE,), name="chessscan-parquet", daemon=True).start()
        return _QUEUE


def _forget_encoder() -> None:
    # A forked child has no encoder thread: it starts its own when it needs one.
    global _QUEUE, _QUEUE_LOCK
    _QUEUE, _QUEUE_LOCK = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_encoder)


# ---------------------------------------------------------------------------
# Output folders
# ---------------------------------------------------------------------------
def part_name(number: int, fmt: str = "parquet") -> str:
    """File name of part ``number`` in a table's dataset folder (sorts in input order)."""
    return f"part-{number:06d}.{fmt}"


# A part of a dataset folder, or one being written: a hidden name ending .partial (see
# TableWriter's hidden), and the names earlier versions and the Dask engine write while a part
# is not whole.
_PART = re.compile(r"(part-\d{6,}\.parquet((\.[0-9a-f]{16})?\.partial)?"
                   r"|\.part-\d{6,}\.parquet(\.[0-9a-f]+)?(\.partial)?)\Z")

#: The file in an output folder that lists what chessscan runs wrote there (JSON: ``{"tool":
#: "chessscan", "files": [...]}``, names relative to the folder, a dataset folder as
#: ``"<table>/"``). Only what it lists is ever removed.
MANIFEST_NAME = ".chessscan-manifest.json"
# PARTIAL_SUFFIX (from .files): a file is written as NAME.<random>.partial and renamed to its
# name once closed, so a table file either reads back whole or is absent.
SUMMARY_NAME = "summary.json"


def _shown(path: str | os.PathLike) -> str:
    from chessscan.readers.sources import display_path  # (a name that is not UTF-8: \xNN)

    return display_path(path)


class OutputError(OSError):
    """A report file could not be written (disk full, permission denied, read-only
    filesystem); the message names the file and the cause. ``path`` is the file."""

    def __init__(self, path: str | os.PathLike, cause: BaseException | str) -> None:
        code = getattr(cause, "errno", None)
        if not code:  # Arrow's errors carry the errno in their text only
            found = re.search(r"\[errno (\d+)\]", str(cause), re.I)
            code = int(found.group(1)) if found else None
        reason = os.strerror(code) if code else (getattr(cause, "strerror", None) or str(cause))
        super().__init__(code or 0, f"cannot write {_shown(path)}: {reason}")
        self.path = os.fspath(path)

    def __str__(self) -> str:
        return self.args[1]

    def __reduce__(self):  # (raised in a worker process, read in the main one)
        return (_output_error, (self.path, self.errno, self.args[1]))


def _output_error(path: str, code: int, message: str) -> OutputError:
    error = OutputError.__new__(OutputError)
    OSError.__init__(error, code, message)
    error.path = path
    return error


class OutputFolderError(Exception):
    """The output folder holds files with report names that no chessscan run recorded
    writing (see :data:`MANIFEST_NAME`): chessscan neither overwrites nor removes them.
    ``files`` lists them (relative names)."""

    def __init__(self, out_dir: str | os.PathLike, files: Sequence[str], why: str | None = None) -> None:
        self.files = list(files)
        shown = ", ".join(self.files[:5]) + (f" and {len(self.files) - 5} more" if len(self.files) > 5 else "")
        why = why or (f"which chessscan did not write there (it removes only what its {MANIFEST_NAME} "
                      f"lists)")
        super().__init__(f"{_shown(out_dir)} holds {shown}, {why}: move them away or choose another "
                         f"output folder")


#: What a run writes beside its tables: the summary, the run's facts (date, elapsed time,
#: options) and the page ``--html`` or ``chessscan report`` renders.
RUN_FILES = (SUMMARY_NAME, "run.json", "report.html")


def replace_file(path: str | os.PathLike, data: bytes, through: bool = True) -> None:
    """Write ``data`` to ``path`` so that a reader never sees half of it: a new temporary file
    beside it (:func:`~chessscan.reports.files.create_temporary`), renamed over ``path``.
    With ``through`` (a path the user named), a ``path`` that is a symlink or not a regular
    file (``/dev/stdout``, a FIFO, ``/dev/full``) is written through instead, never replaced:
    renaming over it would replace the device or the link. Without it (a file of a report
    folder), whatever stands at ``path`` is replaced, never written through. Raises
    :class:`OutputError`."""
    target = Path(path)
    try:
        if through and (target.is_symlink() or (target.exists() and not target.is_file())):
            with open(target, "wb") as f:
                f.write(data)
            return
        tmp, f = _files.create_temporary(target)
        try:
            with f:
                f.write(data)
            _files.commit(tmp, target)
        except BaseException:
            _files.discard(tmp)
            raise
    except OSError as exc:
        raise OutputError(os.fsdecode(os.fspath(path)), exc) from None


def report_files(tables: Iterable[str], fmt: str = "parquet", dataset: bool = False) -> list[str]:
    """Names (relative to the output folder) a run writes: ``<table>.<ext>`` per table, or
    ``<table>/`` (a folder of ``part-NNNNNN.parquet``) when ``dataset``; then
    :data:`RUN_FILES`."""
    names = [f"{t}/" if dataset else f"{t}{EXTENSIONS[fmt]}" for t in tables]
    return names + list(RUN_FILES)


def report_file_of(out_dir: str | os.PathLike, path: str | os.PathLike) -> str | None:
    """The name of the report folder ``out_dir``'s own file (:func:`report_files`, or its
    manifest or lock) that ``path`` is or lies in, after links (a link's target counts), or
    None. ``report.html`` counts only as the page, not as a file the report reads."""
    from chessscan.reports.files import LOCK_NAME

    try:
        rel = os.path.relpath(os.path.realpath(path), os.path.realpath(out_dir))
    except ValueError:  # (another drive)
        return None
    first = Path(rel).parts[0] if rel != "." else "."
    if first == os.pardir or Path(rel).is_absolute():
        return None
    if first in (".", MANIFEST_NAME, LOCK_NAME) or (first != "report.html" and (
            _is_report_name(first) or _is_report_name(first + "/"))):
        return first
    return None


def _is_report_name(name: str) -> bool:
    """Whether ``name`` is one a run writes in its folder (:func:`report_files`): a table's
    file or dataset folder, or one of :data:`RUN_FILES`; never a path elsewhere."""
    if name in RUN_FILES:
        return True
    table = name[:-1] if name.endswith("/") else name.rpartition(".")[0]
    return table in TABLE_NAMES and (name.endswith("/") or name.rpartition(".")[2] in FORMATS)


def _report_named(out: Path) -> list[str]:
    """Entries of ``out`` named as a report's: :data:`RUN_FILES`, table files (also while
    written), dataset folders holding parts, links named as a dataset folder. Sorted,
    relative names."""
    found = []
    tables = set(TABLE_NAMES)
    for entry in sorted(out.iterdir(), key=lambda e: e.name):
        name = entry.name
        base = _files.temporary_of(name) or name
        if _is_report_name(base):
            found.append(name)
        elif name in tables and entry.is_symlink():
            found.append(name + "/")  # a dataset written through it would land elsewhere
        elif name in tables and entry.is_dir():
            if any(_PART.match(p.name) for p in entry.iterdir()):
                found.append(name + "/")
    return found


def _read_manifest(out: Path) -> set[str]:
    """The names the folder's manifest lists, kept only when they are report names: a
    manifest edited by hand, or not chessscan's, can name no other file (``../games.pgn``,
    an absolute path, an input beside the report) for the next run to remove."""
    try:
        data = json.loads((out / MANIFEST_NAME).read_text(encoding="utf-8"))
        files = data.get("files", []) if data.get("tool") == "chessscan" else []
        return {f for f in files if isinstance(f, str) and _is_report_name(f)}
    except (OSError, ValueError, AttributeError):
        return set()


def _owned(name: str, owned: set[str]) -> bool:
    return (_files.temporary_of(name) or name) in owned


def _temporaries(folder: Path, name: str) -> list[Path]:
    """The files a run left in ``folder`` while writing ``name`` (``NAME.<hex>.partial``,
    and ``NAME.partial`` of earlier versions)."""
    return [Path(p) for p in _files.temporaries_of(folder / name)]


def _inputs_here(out: Path, names: Iterable[str], inputs: Iterable[str]) -> list[str]:
    """The report names among ``names`` whose entry in ``out`` (or its partial file) is
    one of ``inputs``: the same file, found by device and inode."""
    read = set()
    for p in inputs:
        try:
            st = os.stat(p)
        except (OSError, ValueError):
            continue
        read.add((st.st_dev, st.st_ino))
    if not read:
        return []
    found = []
    for name in sorted(set(names)):
        base = out / name.rstrip("/")
        for path in (base, *_temporaries(out, base.name)):
            try:
                if path.is_symlink():
                    continue  # removing or replacing a link leaves what it points to
                st = os.stat(path)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) in read:
                found.append(name)
                break
    return found


def prepare_output(out_dir: str | os.PathLike, files: Sequence[str], check_only: bool = False,
                   inputs: Iterable[str] = ()) -> None:
    """Make ``out_dir`` ready for a run that writes ``files`` (see :func:`report_files`).

    Removes what earlier chessscan runs recorded writing there (their manifest), so one
    folder never mixes two runs and a run that stops early leaves no summary; records
    ``files`` in the manifest before anything is written, so that a run killed midway is
    cleaned up by the next. Nothing else is touched. ``check_only``: only the checks.

    A report name in the folder that is one of ``inputs`` (the same file, by any path or
    link) is neither removed nor written over.

    Raises :class:`OutputFolderError` when the folder holds report-named files (tables,
    ``summary.json``, ``run.json``, ``report.html``, dataset parts, a link named as a
    dataset folder) not in its manifest, for instance a user's own ``games.csv``, or one
    that is an input; ``OSError`` when ``out_dir`` is a file or cannot be written.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(20, f"{out_dir} is not a folder")
    owned = _read_manifest(out) if out.is_dir() else set()
    if out.is_dir():
        foreign = [n for n in _report_named(out) if not _owned(n, owned)]
        if foreign:
            raise OutputFolderError(out_dir, foreign)
        read = _inputs_here(out, [*owned, *files], inputs)
        if read:
            raise OutputFolderError(out_dir, read, "which this run reads: writing the report there "
                                                   "would remove it")
    if check_only:
        return
    if out.is_dir():
        for name in sorted(owned):
            path = out / name.rstrip("/")
            if name.endswith("/"):
                if path.is_symlink():  # the link only: never the folder it points to
                    path.unlink()
                elif path.is_dir():
                    for entry in path.iterdir():
                        if _PART.match(entry.name) and entry.is_file():
                            entry.unlink()
                    if not any(path.iterdir()):
                        path.rmdir()
            else:
                for p in (path, *_temporaries(out, path.name)):
                    if p.is_file():
                        p.unlink()
        for p in _temporaries(out, MANIFEST_NAME):  # a manifest a killed run was writing
            if p.is_file() or p.is_symlink():
                p.unlink()
    out.mkdir(parents=True, exist_ok=True)
    manifest = json.dumps({"tool": "chessscan", "files": sorted(set(files))}, indent=1) + "\n"
    replace_file(out / MANIFEST_NAME, manifest.encode("utf-8"), through=False)


def check_run_file(out_dir: str | os.PathLike, name: str) -> None:
    """Refuse to write ``name`` (one of :data:`RUN_FILES`, e.g. ``report.html``) in the
    report folder ``out_dir`` over a file that no chessscan run recorded writing there, or
    through a link. Raises :class:`OutputFolderError`."""
    path = Path(out_dir) / name
    if path.is_symlink():
        raise OutputFolderError(out_dir, [name], "a link: writing the page would write where it points")
    if path.exists() and name not in _read_manifest(Path(out_dir)):
        raise OutputFolderError(out_dir, [name])


# ---------------------------------------------------------------------------
# Column buffers
# ---------------------------------------------------------------------------
def new_buffers(table_name: str, optional: Iterable[str] = ()) -> dict[str, list]:
    """Empty column buffers for ``table_name``: ``{column: []}`` in schema order.

    ``optional`` enables optional columns (e.g. ``("fen",)`` for
    ``positions``); raises ``ValueError`` for an unknown table or a name
    that is not an optional column of it.
    """
    return {name: [] for name in column_names(table_name, optional)}


def clear(buffers) -> None:
    """Empty every list in place (keeps the list objects, so cached
    ``buffers[col].append`` bound methods stay valid); typed buffers (an object with
    ``to_arrays()``, such as the positions rows) clear themselves."""
    if not isinstance(buffers, Mapping):
        buffers.clear()
        return
    for values in buffers.values():
        values.clear()


def buffered_rows(buffers) -> int:
    """Number of rows in ``buffers`` (length of the first column; 0 if none)."""
    if not isinstance(buffers, Mapping):
        return len(buffers)
    for values in buffers.values():
        return len(values)
    return 0


# ---------------------------------------------------------------------------
# Buffers -> Arrow
# ---------------------------------------------------------------------------
def to_record_batch(columns: Mapping[str, Any], schema: pa.Schema,
                    table: str | None = None) -> pa.RecordBatch:
    """Convert column buffers to a ``pa.RecordBatch`` with exactly ``schema``.

    ``columns`` maps every schema column name to a sequence (list, numpy
    array or Arrow array) of equal length. Raises ``ValueError`` on unknown
    columns, missing columns, unequal lengths, values that do not fit the
    declared type (e.g. 2**31 in an int32 column, a str in an int column)
    and ``None`` in a non-nullable column. ``table`` only improves messages.
    """
    where = f"table {table!r}" if table else "table"
    if type(columns) is not dict:  # (a dict has neither method: no failed attribute lookup)
        to_batch = getattr(columns, "to_batch", None)
        if to_batch is not None:  # typed buffers (chessscan.analysis.rows): their own batch, if they make one
            batch = to_batch(schema)
            if batch is not None:
                return batch
        if hasattr(columns, "to_arrays"):
            columns = columns.to_arrays()
    names = schema.names
    given = set(columns)
    declared = set(names)
    unknown = [c for c in columns if c not in declared]
    if unknown:
        opt = set(OPTIONAL_COLUMNS.get(table or "", ()))
        hint = ""
        if opt & set(unknown):
            hint = f" ({sorted(opt & set(unknown))} are optional columns that were not enabled)"
        raise ValueError(f"{where}: unknown column(s) {unknown}{hint}")
    missing = [c for c in names if c not in given]
    if missing:
        raise ValueError(f"{where}: missing column(s) {missing}")

    lengths = {name: len(columns[name]) for name in names}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"{where}: columns have different lengths {lengths}")

    arrays = []
    for f in schema:
        values = columns[f.name]
        try:
            if isinstance(values, (pa.Array, pa.ChunkedArray)):
                # (A cast to the array's own type is no copy but still a pass over it: UTF-8
                # checks of every string, bounds checks of every dictionary code.)
                arr = values if values.type == f.type else values.cast(f.type)
                if isinstance(arr, pa.ChunkedArray):
                    arr = arr.combine_chunks()
            elif isinstance(values, np.ndarray):
                arr = from_numpy(values, f.type)
            elif isinstance(values, list):
                arr = from_list(values, f.type)
            else:
                arr = pa.array(values, type=f.type)
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as e:
            raise ValueError(f"{where}: column {f.name!r} ({f.type}): {e}") from e
        if not f.nullable and arr.null_count:
            first = arr.is_null().index(True).as_py()
            raise ValueError(
                f"{where}: column {f.name!r} is not nullable but has "
                f"{arr.null_count} None value(s), first at row {first}"
            )
        arrays.append(arr)
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


_FORMULA_START = r"^[=+\-@\t\r]"


def guard_formula(text: str) -> str:
    """``text`` with a leading ``'`` when it starts like a spreadsheet formula (the rule of
    :func:`guard_formulas`, for one value)."""
    return "'" + text if re.match(_FORMULA_START, text) else text


def guard_formulas(batch: pa.RecordBatch) -> pa.RecordBatch:
    """``batch`` with every text value that starts like a spreadsheet formula (``=``, ``+``,
    ``-``, ``@``, tab, CR) prefixed with ``'``, as OWASP advises against CSV injection.
    Other columns and values are unchanged; returns ``batch`` itself when nothing matches."""
    import pyarrow.compute as pc

    arrays = list(batch.columns)
    changed = False
    for i, column in enumerate(arrays):
        if pa.types.is_dictionary(column.type) and pa.types.is_string(column.type.value_type):
            values = column.dictionary
            guarded = guard_formulas(pa.RecordBatch.from_arrays([values], ["v"])).column(0)
            if guarded is not values:
                arrays[i] = pa.DictionaryArray.from_arrays(column.indices, guarded)
                changed = True
            continue
        if not pa.types.is_string(column.type) or not len(column):
            continue
        risky = pc.match_substring_regex(column, _FORMULA_START)
        if not pc.any(risky).as_py():
            continue
        arrays[i] = pc.if_else(risky, pc.binary_join_element_wise("'", column, ""), column)
        changed = True
    return pa.RecordBatch.from_arrays(arrays, schema=batch.schema) if changed else batch


def column_encodings(schema: pa.Schema) -> dict[str, tuple[str, str, bool]]:
    """``{column: (encoding, codec, statistics)}`` of a table of ``schema`` as
    :class:`TableWriter` writes it to Parquet (see :data:`POSITIONS_ENCODINGS`)."""
    table = (schema.metadata or {}).get(b"chessscan.table", b"").decode()
    chosen = POSITIONS_ENCODINGS if table == "positions" else {}
    out = {}
    for f in schema:
        text = pa.types.is_string(f.type) or pa.types.is_dictionary(f.type)
        # Dictionary pages only for text: Zobrist keys, counts and flags gain nothing from
        # them. No min/max statistics for the moves' text: over a row group they span nearly
        # every value, so no reader can skip a row group by them.
        out[f.name] = chosen.get(f.name) or ("dictionary" if text else "PLAIN", "zstd",
                                             f.name not in _NO_STATISTICS)
    return out


def parquet_options(schema: pa.Schema, compression: str = "zstd",
                    encodings: Mapping[str, tuple[str, str, bool]] | None = None) -> dict:
    """Keyword arguments of ``pyarrow.parquet.ParquetWriter`` for a table of ``schema``:
    :func:`column_encodings` (or ``encodings``), with ``compression`` in place of zstd (and
    snappy where this pyarrow has no zstd); zstd at :data:`POSITIONS_ZSTD_LEVELS`' levels, and
    the positions table's pages as long as :data:`POSITIONS_PAGE_ROWS` allows."""
    if encodings is None:
        encodings = column_encodings(schema)
    if not pa.Codec.is_available(compression):
        compression = "snappy"
    codecs = {name: compression if codec == "zstd" else codec for name, (_, codec, _) in encodings.items()}
    table = (schema.metadata or {}).get(b"chessscan.table", b"").decode()
    levels = {name: level for name, level in POSITIONS_ZSTD_LEVELS.items()
              if table == "positions" and codecs.get(name) == "zstd"}
    options = {
        "use_dictionary": [name for name, (encoding, _, _) in encodings.items() if encoding == "dictionary"],
        "column_encoding": {name: encoding for name, (encoding, _, _) in encodings.items()
                            if encoding not in ("dictionary", "PLAIN")} or None,
        "compression": codecs,
        "write_statistics": [name for name, (_, _, statistics) in encodings.items() if statistics],
        "compression_level": levels or None,
        # Values handed to a column's writer at once (pyarrow's default: 1,024): a row
        # group's chunks (the positions rows: ~8,192 rows each) go in whole, and the writer's
        # work per batch of values (allocations, kernel dispatch, page checks) is done less often.
        "write_batch_size": DEFAULT_ROW_GROUP_SIZE,
    }
    if table == "positions" and _PAGE_ROWS_OPTION:
        options["max_rows_per_page"] = POSITIONS_PAGE_ROWS
    return options


# ---------------------------------------------------------------------------
# One table, one file
# ---------------------------------------------------------------------------
class TableWriter:
    """Append-only writer of one table to one file with a fixed schema.

    ``TableWriter(path, schema, fmt)`` creates ``path.<random hex>.partial`` at once (a new
    file, never one or a link planted there: :mod:`chessscan.reports.files`) and
    renames it to ``path`` when closed, so ``path`` is either absent or a whole,
    readable table (a table that never receives a row still carries the schema
    (parquet) or the header (csv)); a run killed midway leaves only the
    ``.partial`` file.

    Parameters
    ----------
    path: output file; parent directories are created.
    schema: the table's ``pa.Schema`` (see ``schema.schema_for``).
    fmt: ``"parquet"`` | ``"csv"`` | ``"jsonl"``.
    table: table name, used in error messages only.
    row_group_size: parquet only; rows are accumulated (as Arrow arrays,
        not Python objects) until at least this many, then written as one
        row group. A row group is also cut at :data:`ROW_GROUP_BYTES` of
        pending Arrow data: memory is bounded by that + one batch.
    compression: parquet codec; falls back to snappy if unavailable.
    hidden: the temporary name starts with ``.`` (a part of a dataset folder, which its
        readers then skip while it is written).
    publish: False leaves the closed, whole file at :attr:`partial_path` instead of renaming
        it (a part written by a worker process: the process that runs the report gives it
        its name, or removes it).
    csv_header: False writes CSV rows without the header line (a part appended to a table
        file that has it).

    Use as a context manager or call :meth:`close`; close is idempotent and
    also runs on exceptions, leaving a readable file with the rows written
    so far. A failed write or close (disk full…) raises :class:`OutputError`
    naming the file, and removes the partial file: nothing unreadable stays.
    Parquet row groups are encoded on a background thread, one at a time per
    table (in order): a failure of one is raised by the next :meth:`write`
    that flushes, or by :meth:`close`.
    """

    def __init__(self, path: str | os.PathLike, schema: pa.Schema,
                 fmt: str = "parquet", *, table: str | None = None,
                 row_group_size: int = DEFAULT_ROW_GROUP_SIZE,
                 compression: str = "zstd", csv_formula_guard: bool = True, hidden: bool = False,
                 publish: bool = True, csv_header: bool = True) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")
        if row_group_size < 1:
            raise ValueError("row_group_size must be >= 1")
        self.path = Path(path)
        self.partial_path: Path | None = None  # NAME.<random>.partial, once made
        self.schema = schema
        self.fmt = fmt
        self.table = table
        self.row_group_size = row_group_size
        self.csv_formula_guard = csv_formula_guard
        self.publish = publish
        #: Closed whole: at :attr:`path`, or with ``publish=False`` at :attr:`partial_path`.
        self.whole = False
        self.rows_written = 0  # rows accepted by write(), incl. pending ones
        self._pending: list[pa.RecordBatch] = []
        self._pending_rows = 0
        self._pending_bytes = 0
        self._closed = True  # until the sink is open, close() has nothing to do
        self._sink: Any = None
        self._encoding: _Encoding | None = None  # the row group being written in the background
        self._file: Any = None  # the new file under the sink (Arrow writes to it, never opens a path)
        self._raw_file: Any = None  # that file, under Arrow's buffer

        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Made by us, new (never a file or link planted at the name), then handed to Arrow.
            self.partial_path, self._file = _files.create_temporary(self.path, "wb", hidden=hidden)
            self._raw_file = self._file
            if fmt != "jsonl":
                # Arrow's own buffer in front of the Python file: Arrow's writes reach Python
                # once a MiB, not a few hundred times a row group, each waiting for the GIL the
                # analysis holds (which made a row group's write several times slower).
                self._file = pa.output_stream(self._file, buffer_size=_WRITE_BUFFER)
            if fmt == "parquet":
                self._sink = pq.ParquetWriter(self._file, schema,
                                              **parquet_options(schema, compression))
            elif fmt == "csv":
                # CSVWriter writes the header immediately; bools come out as true/false.
                self._sink = pacsv.CSVWriter(self._file, schema,
                                             write_options=pacsv.WriteOptions(include_header=csv_header))
            else:
                self._sink = io.TextIOWrapper(self._file, encoding="utf-8", newline="\n")
        except (OSError, pa.ArrowException) as exc:
            self._discard()
            raise OutputError(self.path, exc) from None
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed

    def write(self, columns: Mapping[str, Any]) -> int:
        """Append one batch of rows given as column buffers; returns its row count.

        The buffers are converted immediately, so the caller may
        :func:`clear` and reuse them right after this returns.
        """
        if self._closed:
            raise ValueError(f"write to closed writer {self.path}")
        batch = to_record_batch(columns, self.schema, self.table)
        n = batch.num_rows
        if n == 0:
            return 0  # no empty row groups / no-op for csv
        self.rows_written += n
        if self.fmt == "parquet":
            self._pending.append(batch)
            self._pending_rows += n
            # The sum of the batch's buffers' sizes: its nbytes where each buffer spans exactly
            # its rows (the positions rows, the arrays made from lists), more for a slice of a
            # larger array (its group is cut sooner); nbytes walks every buffer's referenced
            # range, which cost as much as a tenth of the positions table's conversion.
            self._pending_bytes += batch.get_total_buffer_size()
            if self._pending_rows >= self.row_group_size or self._pending_bytes >= ROW_GROUP_BYTES:
                self.flush()
            return n
        try:
            if self.fmt == "csv":
                self._sink.write_batch(guard_formulas(batch) if self.csv_formula_guard else batch)
            else:
                self._write_jsonl(batch)
        except (OSError, pa.ArrowException) as exc:
            self._fail(exc)
        return n

    def _write_jsonl(self, batch: pa.RecordBatch) -> None:
        dumps = json.dumps
        self._sink.write("".join(
            dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"
            for row in batch.to_pylist()
        ))

    def flush(self) -> None:
        """Write pending parquet rows now as one row group (no-op otherwise)."""
        if self._closed or not self._pending:
            return
        tbl = pa.Table.from_batches(self._pending, schema=self.schema)
        self._pending = []
        self._pending_rows = 0
        self._pending_bytes = 0
        # One row group per flush: bounded by row_group_size or ROW_GROUP_BYTES + one batch.
        # One in flight per table: row groups keep their order, and memory holds at most one
        # more row group per table.
        self._finish_encoding()
        self._encoding = _Encoding(self._sink, tbl)

    def _finish_encoding(self) -> None:
        """Wait for the row group being written in the background; raise OutputError (the
        partial file removed) if writing it failed."""
        encoding = self._encoding
        if encoding is not None:
            exc = encoding.wait()
            # (Forgotten only once done: a stop during the wait leaves it for close to wait on.)
            self._encoding = None
            if exc is not None:
                if isinstance(exc, (OSError, pa.ArrowException)):
                    self._fail(exc)
                self._discard()
                raise exc

    def append_file(self, path: str | os.PathLike, rows: int) -> None:
        """Append the bytes of the file ``path`` (CSV rows of this table's columns, without a
        header: a part a worker process wrote) after the rows written so far, then remove
        it; ``rows``: its row count. The copy is made by the kernel (``copy_file_range``
        where the platform has it). Raises :class:`OutputError` naming this table's file."""
        if self._closed or self.fmt != "csv":
            raise ValueError(f"append_file: {self.path} is not an open CSV table")
        try:
            self._file.flush()  # Arrow's buffer, then the file's own
            self._raw_file.flush()
            out = self._raw_file.fileno()
            with open(path, "rb") as src:
                left = os.fstat(src.fileno()).st_size
                copy = getattr(os, "copy_file_range", None)
                while left > 0:
                    try:
                        n = copy(src.fileno(), out, left) if copy else 0
                    except OSError as exc:
                        if exc.errno not in (errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
                            raise
                        copy, n = None, 0
                    if not n:  # (no copy_file_range here, or an end of file sooner than its size)
                        data = src.read(min(left, 1 << 20))
                        if not data:
                            break
                        view = memoryview(data)
                        while view:
                            view = view[os.write(out, view):]
                        n = len(data)
                    left -= n
        except OSError as exc:
            self._fail(exc)
        _files.discard(path)
        self.rows_written += rows

    def close(self) -> None:
        """Flush and close the file, then give it its name. Idempotent. Raises
        :class:`OutputError` (the partial file removed) when the last writes fail."""
        if self._closed:
            return
        try:
            self.flush()
            self._finish_encoding()
        except BaseException:
            self._discard()
            raise
        self._closed = True
        self._pending = []
        self._pending_rows = 0
        self._pending_bytes = 0
        try:
            self._sink.close()
            if self._file is not None:
                self._file.close()
            if self.publish:
                _files.commit(self.partial_path, self.path)
        except (OSError, pa.ArrowException) as exc:
            self._discard()
            raise OutputError(self.path, exc) from None
        self.whole = True

    def _fail(self, exc: BaseException) -> None:
        self._discard()
        raise OutputError(self.path, exc) from None

    def discard(self) -> None:
        """Close without naming the file, and remove it (also once closed with
        ``publish=False``: a part whose chunk is dropped). Never raises."""
        self.whole = False
        self._discard()

    def _discard(self) -> None:
        """Close the sink without raising and remove the partial file: a table that could
        not be written whole is absent."""
        self._closed = True
        self._pending = []
        if self._encoding is not None:
            self._encoding.wait()  # the sink is not closed under a write in progress
            self._encoding = None
        sink, self._sink = self._sink, None
        for closing in (sink, self._file):
            if closing is not None:
                try:
                    closing.close()
                except Exception:
                    pass
        if self.partial_path is not None:
            _files.discard(self.partial_path)

    def __enter__(self) -> "TableWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # last resort, keeps the file readable
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<TableWriter {self.fmt} {str(self.path)!r} rows={self.rows_written} {state}>"


# ---------------------------------------------------------------------------
# All tables of one report
# ---------------------------------------------------------------------------
class ReportWriter:
    """Writes a report directory: the tables plus ``summary.json``.

    ``ReportWriter(out_dir, fmt="parquet", tables=("positions", "games",
    "issues"), optional_columns={"positions": ("fen",)})`` creates
    ``out_dir`` and opens ``<out_dir>/<table>.<fmt>`` for each table.

    ``parts=True`` (what ``chessscan analyze`` writes) lays the tables out so that other
    processes may write parts of them (the ``--jobs`` workers, see
    :mod:`chessscan.engines.parallel`): a Parquet table is a dataset folder,
    ``<out_dir>/<table>/part-NNNNNN.parquet``, its parts in input order (one part,
    ``part-000000``, for a run in one process; every table has that part, empty or not, so
    that its folder carries its schema); a CSV table stays one file, to which the parts of
    the workers are appended in order (:meth:`append_part`). Rows given to :meth:`write`
    go to the current part of the writer's own; :meth:`take_number` closes it and hands
    out the next part number, and :meth:`publish_part` names a worker's part.

    ``optional_columns`` maps table -> optional column names to enable
    (default: none, i.e. no ``fen`` in ``positions``). Entries for known
    tables that are not in ``tables`` are ignored so a CLI can always pass
    the same mapping; unknown tables / columns raise ``ValueError``.

    ``row_group_size`` and ``compression`` are passed to each
    :class:`TableWriter`.
    """

    def __init__(self, out_dir: str | os.PathLike, fmt: str = "parquet",
                 tables: Iterable[str] = DEFAULT_TABLES,
                 optional_columns: Mapping[str, Iterable[str]] | None = None, *,
                 row_group_size: int = DEFAULT_ROW_GROUP_SIZE,
                 compression: str = "zstd", parts: bool = False) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")
        tables = tuple(dict.fromkeys(tables))  # dedupe, keep order
        for t in tables:
            if t not in TABLE_NAMES:
                raise ValueError(f"unknown table {t!r}; known: {', '.join(TABLE_NAMES)}")
        optional = {t: tuple(cols) for t, cols in (optional_columns or {}).items()}
        for t, cols in optional.items():
            if t not in TABLE_NAMES:
                raise ValueError(f"optional_columns: unknown table {t!r}")
            schema_for(t, cols)  # validates the column names

        self.out_dir = Path(out_dir)
        self.fmt = fmt
        self.tables = tables
        self.parts = parts
        #: Parquet tables as dataset folders (``parts`` with Parquet).
        self.dataset = parts and fmt == "parquet"
        self.optional_columns = {t: optional.get(t, ()) for t in tables}
        self.schemas: dict[str, pa.Schema] = {
            t: schema_for(t, self.optional_columns[t]) for t in tables
        }
        self.paths: dict[str, Path] = {
            t: self.out_dir / t if self.dataset else self.out_dir / f"{t}{EXTENSIONS[fmt]}" for t in tables
        }
        self.summary_path = self.out_dir / "summary.json"
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self._options = {"row_group_size": row_group_size, "compression": compression}
        #: Dataset parts named so far, per table: ``(path, rows)``, in input order.
        self.published: dict[str, list[tuple[Path, int]]] = {t: [] for t in tables}
        self._next = 0  # the next part number (dataset)
        self._part: int | None = None  # the number of the part open for write() (dataset)
        self._failed: set[str] = set()  # tables a part of which could not be written

        self._writers: dict[str, TableWriter] = {}
        self._closed = False
        try:
            if self.dataset:
                self._part = self._allocate()
            for t in tables:
                self._writer(t)
        except BaseException:
            self.close()  # don't leak the writers already opened
            raise

    # -- buffers -----------------------------------------------------------
    def columns(self, table_name: str) -> tuple[str, ...]:
        """Column names of ``table_name`` as written here (incl. enabled optionals)."""
        return tuple(self._schema(table_name).names)

    def new_buffers(self, table_name: str) -> dict[str, list]:
        """Empty buffers for ``table_name`` matching this writer's columns."""
        self._schema(table_name)
        return new_buffers(table_name, self.optional_columns[table_name])

    def _schema(self, table_name: str) -> pa.Schema:
        try:
            return self.schemas[table_name]
        except KeyError:
            raise ValueError(
                f"table {table_name!r} is not open in this report "
                f"(open: {', '.join(self.tables) or 'none'})") from None

    # -- writing -----------------------------------------------------------
    def _allocate(self) -> int:
        number, self._next = self._next, self._next + 1
        return number

    def _writer(self, table: str) -> TableWriter:
        """The writer of ``table`` that :meth:`write` appends to (opened here if need be)."""
        w = self._writers.get(table)
        if w is None:
            if self.dataset:
                if self._part is None:
                    self._part = self._allocate()
                path = self.paths[table] / part_name(self._part)
            else:
                path = self.paths[table]
            w = self._writers[table] = TableWriter(path, self.schemas[table], self.fmt, table=table,
                                                   hidden=self.dataset, **self._options)
        return w

    def write(self, table_name: str, columns: Mapping[str, Any]) -> int:
        """Append column buffers to ``table_name``; returns the row count.

        Raises ``ValueError`` for a table not opened by this writer or for
        bad buffers (see :func:`to_record_batch`).
        """
        self._schema(table_name)
        return self._writer(table_name).write(columns)

    def _close_part(self, keep_empty: bool = True) -> None:
        """Close the part :meth:`write` appends to (dataset) and record what it holds; a
        table's part with no row is dropped unless ``keep_empty`` (the end of a run with
        no other part of that table makes one anyway, see :meth:`close`)."""
        writers, self._writers = self._writers, {}
        self._part = None
        first: BaseException | None = None
        for table, w in writers.items():
            if not keep_empty and not w.rows_written:
                w.discard()
                continue
            try:
                w.close()
            except BaseException as e:  # keep closing the others
                first = first or e
            if w.whole:
                self.published[table].append((w.path, w.rows_written))
            else:
                self._failed.add(table)  # absent: it could not be written whole
        if first is not None:
            raise first

    def take_number(self) -> int:
        """The number of the next part, for a part written elsewhere (dataset): the part
        :meth:`write` appended to until now is closed first, so the rows written here and
        the parts published keep their input order."""
        if self._writers:
            self._close_part(keep_empty=False)
        self._part = None
        return self._allocate()

    def part_path(self, table: str, number: int) -> Path:
        """Where part ``number`` of ``table`` stands once published (dataset)."""
        return self.paths[table] / part_name(number)

    def publish_part(self, table: str, partial: str | os.PathLike, number: int, rows: int) -> Path:
        """Give the whole part ``partial`` (written by another process, of ``rows`` rows) its
        name, part ``number`` of ``table`` (:meth:`take_number`). Raises :class:`OutputError`."""
        final = self.part_path(table, number)
        try:
            _files.commit(partial, final)
        except OSError as exc:
            raise OutputError(final, exc) from None
        self.published[table].append((final, rows))
        return final

    def append_part(self, table: str, partial: str | os.PathLike, rows: int) -> None:
        """Append the CSV rows of ``partial`` (written by another process, no header) to
        ``table``'s file, after the rows written so far, and remove it."""
        self._writer(table).append_file(partial, rows)

    def writing(self) -> list[str]:
        """The temporary files of the tables this writer has open (:meth:`write`'s)."""
        return [str(w.partial_path) for w in self._writers.values() if not w.closed and w.partial_path]

    def part_target(self, select=None, ignore=(), filtered: bool = False):
        """Where other processes write parts of this report's tables
        (:class:`~chessscan.reports.dataset.PartTarget`); None when its tables take none
        (``parts=False``, or JSON lines)."""
        if not self.parts or self.fmt not in ("parquet", "csv"):
            return None
        from chessscan.reports.dataset import PartTarget

        return PartTarget(str(self.out_dir), self.fmt, dict(self.optional_columns),
                          None if select is None else frozenset(select), frozenset(ignore), filtered)

    @property
    def rows_written(self) -> dict[str, int]:
        """Rows accepted so far, per table."""
        rows = {t: sum(n for _, n in self.published[t]) for t in self.tables}
        for t, w in self._writers.items():
            rows[t] += w.rows_written
        return rows

    def write_summary(self, summary: Mapping[str, Any]) -> Path:
        """Write ``summary`` as pretty JSON to ``<out_dir>/summary.json``.

        Key order is preserved. Non-JSON values are converted: sets/tuples
        to lists, numpy scalars via ``.item()``, anything else via ``str``.
        Written to a temp file then renamed, so a reader never sees half a
        file. Returns the path.
        """
        text = json.dumps(summary, indent=2, ensure_ascii=False, default=_json_default)
        # Never invalid UTF-8, even for a name that slipped through unescaped.
        replace_file(self.summary_path, (text + "\n").encode("utf-8", "backslashreplace"), through=False)
        return self.summary_path

    def close(self) -> None:
        """Close every table (all of them even if one fails; first error re-raised). A
        dataset table that has no part at all gets an empty one (its schema)."""
        if self._closed:
            return
        self._closed = True
        first: BaseException | None = None
        try:
            self._close_part()
        except BaseException as e:
            first = e
        if self.dataset and first is None:
            for t in self.tables:
                if not self.published[t] and t not in self._failed:
                    try:
                        with TableWriter(self.paths[t] / part_name(0), self.schemas[t], self.fmt, table=t,
                                         hidden=True, **self._options) as w:
                            pass
                        self.published[t].append((w.path, 0))
                    except BaseException as e:
                        first = first or e
        if first is not None:
            raise first

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> "ReportWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _json_default(o: Any) -> Any:
    if isinstance(o, (set, frozenset)):
        try:
            return sorted(o)
        except TypeError:
            return list(o)
    if isinstance(o, tuple):
        return list(o)
    if hasattr(o, "item") and callable(o.item):  # numpy scalar
        try:
            return o.item()
        except Exception:
            pass
    if isinstance(o, os.PathLike):
        return os.fspath(o)
    return str(o)


# ---------------------------------------------------------------------------
# Reading back
# ---------------------------------------------------------------------------
def read_table(path: str | os.PathLike, schema: pa.Schema | None = None, fmt: str | None = None) -> pa.Table:
    """Read a table file written by :class:`TableWriter` into a ``pa.Table``.

    Format from the suffix (.parquet / .csv / .jsonl), or ``fmt`` (``path`` is then a binary
    file object open for reading, such as an fsspec file's). For csv and jsonl,
    pass ``schema`` to get the declared types back exactly (text formats do
    not carry types); for csv, an empty unquoted field is null and ``""``
    is the empty string, mirroring the writer. Without ``schema`` types are
    inferred.
    """
    if fmt is None:
        path = Path(path)
        suffix = path.suffix.lower()
        try:
            str(path).encode("utf-8")
        except UnicodeEncodeError:  # Arrow takes only UTF-8 names: read it through an open file
            with open(path, "rb") as f:
                return read_table(f, schema, suffix[1:])
    else:
        suffix = f".{fmt}"
    if suffix == ".parquet":
        tbl = pq.read_table(path)
        return tbl.select(schema.names).cast(schema) if schema is not None else tbl
    if suffix == ".csv":
        convert = pacsv.ConvertOptions(
            column_types=dict(zip(schema.names, schema.types)) if schema else None,
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
            true_values=["true"], false_values=["false"],
        )
        tbl = pacsv.read_csv(path, convert_options=convert)
        return tbl.select(schema.names).cast(schema) if schema is not None else tbl
    if suffix == ".jsonl":
        import pyarrow.json as pajson

        if fmt is not None:
            path = pa.BufferReader(path.read())
        if (path.size() if fmt is not None else path.stat().st_size) == 0:
            return (schema or pa.schema([])).empty_table()
        # The JSON reader cannot build dictionaries: read text, then cast.
        plain = pa.schema([f.with_type(f.type.value_type) if pa.types.is_dictionary(f.type) else f
                           for f in schema]) if schema else None
        parse = pajson.ParseOptions(explicit_schema=plain) if schema else None
        tbl = pajson.read_json(path, parse_options=parse)
        return tbl.select(schema.names).cast(schema) if schema is not None else tbl
    raise ValueError(f"cannot tell the format of {path} (expected .parquet/.csv/.jsonl)")
