"""Streaming writers for the report tables.

Data flow: the analysis layer fills **column buffers** (``dict[str, list]``,
one Python list per declared column, all the same length), and every N rows
hands them to :meth:`ReportWriter.write` and then :func:`clear`\\ s them. The
writer converts the buffers into an Arrow record batch with the table's
FIXED schema (``schema.py``; types are never inferred) and appends it to
the output file. Nothing but the current (parquet: current row group) rows
is kept in memory.

Formats:

* ``parquet``: one file per table, zstd (snappy if zstd is unavailable),
  row groups of about ``row_group_size`` rows (default 65 536) or 4 MiB of Arrow data.
* ``csv``: header written at open, bools as ``true``/``false``, null as an
  empty unquoted field, the empty string as ``""``.
* ``jsonl``: one JSON object per row; ``null`` for None. An empty table is
  an empty file (JSON lines has no header to carry column names).

Reading back with pandas: use ``pd.read_parquet(p, dtype_backend=
"numpy_nullable")`` (or :func:`read_table` then ``to_pandas``) so that
nullable ints stay ``Int32``/``UInt64``; pandas' default turns an int column
with nulls into float64, which loses Zobrist hashes >= 2**53.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Iterable, Mapping, MutableMapping, Sequence

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from .schema import OPTIONAL_COLUMNS, TABLE_NAMES, column_names, schema_for

__all__ = [
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
]

FORMATS: tuple[str, ...] = ("parquet", "csv", "jsonl")
EXTENSIONS: dict[str, str] = {"parquet": ".parquet", "csv": ".csv", "jsonl": ".jsonl"}
DEFAULT_ROW_GROUP_SIZE = 65_536
#: A row group is also cut when its pending Arrow data reaches this many bytes, so that a
#: table of wide rows (games: names, events, sites) holds as little memory on a 100M-game
#: input as on a small one.
ROW_GROUP_BYTES = 4 << 20
DEFAULT_TABLES: tuple[str, ...] = ("positions", "games", "issues")

Buffers = MutableMapping[str, list]


# ---------------------------------------------------------------------------
# Output folders
# ---------------------------------------------------------------------------
def part_name(number: int, fmt: str = "parquet") -> str:
    """File name of part ``number`` in a table's dataset folder (sorts in input order)."""
    return f"part-{number:06d}.{fmt}"


_PART = re.compile(r"part-\d{6}\.parquet\Z")


def remove_report(out_dir: str | os.PathLike) -> None:
    """Remove what an earlier run wrote to ``out_dir``: the tables, single files
    (``<table>.parquet|csv|jsonl``) or datasets (``<table>/part-NNNNNN.parquet``, the folder
    too once empty), and ``summary.json``, so one folder never mixes two runs and a run that
    stops early leaves no summary. Only files named like chessscan's outputs are touched.
    Raises ``OSError`` when one cannot be removed."""
    out = Path(out_dir)
    if not out.is_dir():
        return
    (out / "summary.json").unlink(missing_ok=True)
    for name in TABLE_NAMES:
        for ext in ("parquet", "csv", "jsonl"):
            path = out / f"{name}.{ext}"
            if path.is_file():
                path.unlink()
        folder = out / name
        if folder.is_dir():
            for entry in folder.iterdir():
                if _PART.match(entry.name) and entry.is_file():
                    entry.unlink()
            if not any(folder.iterdir()):
                folder.rmdir()


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
    if hasattr(columns, "to_arrays"):  # typed buffers (chessscan.analysis.rows)
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
                arr = values.cast(f.type)
                if isinstance(arr, pa.ChunkedArray):
                    arr = arr.combine_chunks()
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


# ---------------------------------------------------------------------------
# One table, one file
# ---------------------------------------------------------------------------
class TableWriter:
    """Append-only writer of one table to one file with a fixed schema.

    ``TableWriter(path, schema, fmt)`` opens (truncates) ``path`` at once, so
    a table that never receives a row is still a valid file carrying the
    schema (parquet) or the header (csv).

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

    Use as a context manager or call :meth:`close`; close is idempotent and
    also runs on exceptions, leaving a readable file with the rows written
    so far.
    """

    def __init__(self, path: str | os.PathLike, schema: pa.Schema,
                 fmt: str = "parquet", *, table: str | None = None,
                 row_group_size: int = DEFAULT_ROW_GROUP_SIZE,
                 compression: str = "zstd") -> None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown format {fmt!r}; expected one of {FORMATS}")
        if row_group_size < 1:
            raise ValueError("row_group_size must be >= 1")
        self.path = Path(path)
        self.schema = schema
        self.fmt = fmt
        self.table = table
        self.row_group_size = row_group_size
        self.rows_written = 0  # rows accepted by write(), incl. pending ones
        self._pending: list[pa.RecordBatch] = []
        self._pending_rows = 0
        self._pending_bytes = 0
        self._closed = True  # until the sink is open, close() has nothing to do
        self._sink: Any = None

        self.path.parent.mkdir(parents=True, exist_ok=True)
        if fmt == "parquet":
            if not pa.Codec.is_available(compression):
                compression = "snappy"
            # Dictionary pages only for text: Zobrist keys, counts and flags gain nothing from
            # them and cost a fifth of the write time.
            text = [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_dictionary(f.type)]
            self._sink = pq.ParquetWriter(self.path, schema, compression=compression, use_dictionary=text)
        elif fmt == "csv":
            # CSVWriter writes the header immediately; bools come out as true/false.
            self._sink = pacsv.CSVWriter(self.path, schema)
        else:
            self._sink = open(self.path, "w", encoding="utf-8", newline="\n")
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
            self._pending_bytes += batch.nbytes
            if self._pending_rows >= self.row_group_size or self._pending_bytes >= ROW_GROUP_BYTES:
                self.flush()
        elif self.fmt == "csv":
            self._sink.write_batch(batch)
        else:
            self._write_jsonl(batch)
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
        self._sink.write_table(tbl, row_group_size=tbl.num_rows)

    def close(self) -> None:
        """Flush and close the file. Idempotent."""
        if self._closed:
            return
        try:
            self.flush()
        finally:
            # Close the sink even if the last flush failed, so the file
            # handle is released; never retried (close is idempotent).
            self._closed = True
            self._pending = []
            self._pending_rows = 0
            self._pending_bytes = 0
            self._sink.close()

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
    """Writes a report directory: one file per table plus ``summary.json``.

    ``ReportWriter(out_dir, fmt="parquet", tables=("positions", "games",
    "issues"), optional_columns={"positions": ("fen",)})`` creates
    ``out_dir`` and opens ``<out_dir>/<table>.<fmt>`` for each table.

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
                 compression: str = "zstd") -> None:
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
        self.optional_columns = {t: optional.get(t, ()) for t in tables}
        self.schemas: dict[str, pa.Schema] = {
            t: schema_for(t, self.optional_columns[t]) for t in tables
        }
        self.paths: dict[str, Path] = {
            t: self.out_dir / f"{t}{EXTENSIONS[fmt]}" for t in tables
        }
        self.summary_path = self.out_dir / "summary.json"
        self.out_dir.mkdir(parents=True, exist_ok=True)

        self._writers: dict[str, TableWriter] = {}
        try:
            for t in tables:
                self._writers[t] = TableWriter(
                    self.paths[t], self.schemas[t], fmt, table=t,
                    row_group_size=row_group_size, compression=compression)
        except BaseException:
            self.close()  # don't leak the writers already opened
            raise
        self._closed = False

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
    def write(self, table_name: str, columns: Mapping[str, Any]) -> int:
        """Append column buffers to ``table_name``; returns the row count.

        Raises ``ValueError`` for a table not opened by this writer or for
        bad buffers (see :func:`to_record_batch`).
        """
        self._schema(table_name)
        return self._writers[table_name].write(columns)

    @property
    def rows_written(self) -> dict[str, int]:
        """Rows accepted so far, per table."""
        return {t: w.rows_written for t, w in self._writers.items()}

    def write_summary(self, summary: Mapping[str, Any]) -> Path:
        """Write ``summary`` as pretty JSON to ``<out_dir>/summary.json``.

        Key order is preserved. Non-JSON values are converted: sets/tuples
        to lists, numpy scalars via ``.item()``, anything else via ``str``.
        Written to a temp file then renamed, so a reader never sees half a
        file. Returns the path.
        """
        text = json.dumps(summary, indent=2, ensure_ascii=False, default=_json_default)
        tmp = self.summary_path.with_name(self.summary_path.name + ".tmp")
        tmp.write_text(text + "\n", encoding="utf-8")
        os.replace(tmp, self.summary_path)
        return self.summary_path

    def close(self) -> None:
        """Close every table (all of them even if one fails; first error re-raised)."""
        self._closed = True
        first: BaseException | None = None
        for w in self._writers.values():
            try:
                w.close()
            except BaseException as e:  # keep closing the others
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
def read_table(path: str | os.PathLike, schema: pa.Schema | None = None) -> pa.Table:
    """Read a table file written by :class:`TableWriter` into a ``pa.Table``.

    Format from the suffix (.parquet / .csv / .jsonl). For csv and jsonl,
    pass ``schema`` to get the declared types back exactly (text formats do
    not carry types); for csv, an empty unquoted field is null and ``""``
    is the empty string, mirroring the writer. Without ``schema`` types are
    inferred.
    """
    path = Path(path)
    suffix = path.suffix.lower()
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

        if path.stat().st_size == 0:
            return (schema or pa.schema([])).empty_table()
        # The JSON reader cannot build dictionaries: read text, then cast.
        plain = pa.schema([f.with_type(f.type.value_type) if pa.types.is_dictionary(f.type) else f
                           for f in schema]) if schema else None
        parse = pajson.ParseOptions(explicit_schema=plain) if schema else None
        tbl = pajson.read_json(path, parse_options=parse)
        return tbl.select(schema.names).cast(schema) if schema is not None else tbl
    raise ValueError(f"cannot tell the format of {path} (expected .parquet/.csv/.jsonl)")
