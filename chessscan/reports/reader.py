"""Report tables as pandas DataFrames: :class:`Report` (what :func:`chessscan.scan` returns)
and :func:`read_report` (a report folder written by ``chessscan analyze``, read back).

Every table comes with the dtypes its declared Arrow schema (:mod:`chessscan.reports.schema`)
maps to, whatever the file format: ``int32``/``int64``/``uint64`` columns as pandas'
``Int32``/``Int64``/``UInt64`` (nullable, exact: Zobrist keys above 2**53 survive), ``bool``
as ``boolean`` (``<NA>`` where unknown, e.g. ``result_consistent``), strings as ``string``
(an empty ``checkers`` stays ``""``; a missing value is ``<NA>``), low-cardinality text
(``color``, ``check_kind``, ``code``, ``outcome``…) as ``category`` with sorted categories.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterator

from chessscan.reports.schema import OPTIONAL_COLUMNS, TABLE_NAMES, schema_for

__all__ = ["Report", "read_report", "to_dataframe", "pandas_dtype", "IncompleteReport", "IncompleteReportWarning"]


def pandas_dtype(arrow_type):
    """The pandas dtype a column of ``arrow_type`` gets (nullable extension dtypes), or None
    for a type left to pyarrow's default."""
    import pandas as pd
    import pyarrow as pa

    return {
        pa.int32(): pd.Int32Dtype(), pa.int64(): pd.Int64Dtype(), pa.uint64(): pd.UInt64Dtype(),
        pa.bool_(): pd.BooleanDtype(), pa.string(): pd.StringDtype(),
    }.get(arrow_type)


def _vocabularies() -> dict[str, dict[str, tuple[str, ...]]]:
    """table -> column -> every value a column of a fixed set of values can hold."""
    from chessscan.analysis.game import OUTCOMES
    from chessscan.analysis.rows import CHECK_KINDS, COLORS as sides
    from chessscan.core.checks import DOUBLE, NONE, SINGLE
    from chessscan.reports.codes import ISSUE_CODES, SEVERITIES

    return {
        "positions": {"color": sides, "check_kind": CHECK_KINDS},
        "epd_positions": {"check_kind": (NONE, SINGLE, DOUBLE)},  # core.checks.setup_check_kind
        "games": {"outcome": OUTCOMES,
                  "winner": sides,
                  "error_code": tuple(c for c, e in ISSUE_CODES.items() if e.severity == "error")},
        "issues": {"severity": tuple(SEVERITIES), "code": tuple(ISSUE_CODES)},
        "perpetuals": {"side": sides},
    }


def to_dataframe(table, name: str | None = None):
    """A ``pyarrow.Table`` of a report table as a DataFrame with the documented dtypes.
    Dictionary-typed (low-cardinality) columns become ``category`` with their categories
    sorted, so that a table has the same dtypes however it was written and read back (the
    order of an Arrow dictionary is the order values were first met). With the table's
    ``name``, a column of a fixed set of values (``check_kind``, ``outcome``, ``code``...)
    has that whole set as its categories, not only the values met: the tables of two runs
    then concatenate into categoricals, where differing categories would give plain text."""
    df = table.to_pandas(types_mapper=pandas_dtype)
    fixed = _vocabularies().get(name, {}) if name is not None else {}
    for column_name in df.columns:
        column = df[column_name]
        if column.dtype == "category":
            categories = set(column.cat.categories)
            categories = sorted(categories.union(fixed.get(column_name, ())))
            if categories != list(column.cat.categories):
                df[column_name] = column.cat.set_categories(categories)
    return df


class Report:
    """The tables of one run, as DataFrames: one attribute per table (``positions``,
    ``games``, ``perpetuals``, ``epd_positions``, ``issues``, ``disagreements``; None for a
    table the run did not write) and ``summary`` (the dict of ``summary.json``, or None).

    ``report["games"]`` works too, ``"summary"`` included (KeyError, naming the tables
    present, for a table the run did not write), and ``tables`` maps the names of the tables
    present to their DataFrames. Tab completion lists the attributes.
    """

    positions: Any
    games: Any
    perpetuals: Any
    epd_positions: Any
    issues: Any
    disagreements: Any

    def __init__(self, tables: dict, summary: dict | None = None) -> None:
        for name in TABLE_NAMES:
            setattr(self, name, tables.get(name))
        self.summary = summary
        self.tables = {name: tables[name] for name in TABLE_NAMES if name in tables}

    def __getitem__(self, name: str):
        if name == "summary":
            return self.summary
        try:
            return self.tables[name]
        except KeyError:
            kind = "not written by this run" if name in TABLE_NAMES else "not a table name"
            raise KeyError(f"{name!r}: {kind}; the tables present: {', '.join(self.tables) or 'none'}") from None

    def __contains__(self, name: str) -> bool:
        return name in self.tables or (name == "summary" and self.summary is not None)

    def __iter__(self) -> Iterator[str]:
        return iter(self.tables)

    def keys(self):
        """The names of the tables present."""
        return self.tables.keys()

    def __repr__(self) -> str:
        rows = ", ".join(f"{name}={len(df):,} rows" for name, df in self.tables.items())
        return f"Report({rows})"


def _table_file(folder: Path, name: str) -> tuple[str, list[Path]] | None:
    for ext in ("parquet", "csv", "jsonl"):
        path = folder / f"{name}.{ext}"
        if path.is_file():
            return ext, [path]
    dataset = folder / name
    if dataset.is_dir():
        parts = sorted(dataset.glob("part-*.parquet"))  # part numbers keep the input order
        return "parquet", parts
    return None


def _columns_of(kind: str, path: Path) -> list[str]:
    if kind == "parquet":
        import pyarrow.parquet as pq

        with open(path, "rb") as f:  # (by its exact name: Arrow takes only UTF-8 names)
            return pq.read_schema(f).names
    if kind == "csv":
        import csv

        with open(path, newline="", encoding="utf-8") as f:
            return next(csv.reader(f), [])
    with open(path, encoding="utf-8") as f:
        line = f.readline()
    return list(json.loads(line)) if line.strip() else []


def _read_url_report(url: str, incomplete: str) -> Report:
    """:func:`read_report` of a report under a URL (``s3://bucket/prefix``...: what
    ``analyze -o URL`` put there), read through its fsspec file system."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from chessscan.readers.urls import url_fs
    from chessscan.reports.writers import _PART, read_table

    fs, root = url_fs(url)
    root = root.rstrip("/")
    shown = url.rstrip("/")
    fs.invalidate_cache()
    if not fs.isdir(root):
        raise FileNotFoundError(f"no report folder: {shown}")
    found_files: dict[str, tuple[str, list[str]]] = {}
    for name in TABLE_NAMES:
        for ext in ("parquet", "csv", "jsonl"):
            if fs.isfile(f"{root}/{name}.{ext}"):
                found_files[name] = (ext, [f"{root}/{name}.{ext}"])
                break
        else:
            if fs.isdir(f"{root}/{name}"):
                parts = sorted(p for p in fs.ls(f"{root}/{name}", detail=False)
                               if _PART.match(p.rsplit("/", 1)[-1]) and p.rsplit("/", 1)[-1].startswith("part-")
                               and p.endswith(".parquet"))
                found_files[name] = ("parquet", parts)
    if not found_files:
        raise FileNotFoundError(f"{shown} holds no chessscan report table")
    summary = json.loads(fs.cat_file(f"{root}/summary.json")) if fs.isfile(f"{root}/summary.json") else None
    _check_complete(shown, summary, found_files, incomplete, depth=2)
    tables = {}
    for name, (kind, files) in found_files.items():
        columns: list[str] = []
        if files:
            with fs.open(files[0], "rb") as f:
                if kind == "parquet":
                    columns = pq.read_schema(f).names
                else:
                    line = f.readline().decode("utf-8")
                    columns = line.rstrip("\r\n").split(",") if kind == "csv" else list(json.loads(line or "{}"))
        schema = schema_for(name, [c for c in OPTIONAL_COLUMNS[name] if c in columns])
        read = []
        for p in files:
            with fs.open(p, "rb") as f:
                read.append(read_table(f, schema, kind))
        tables[name] = to_dataframe(pa.concat_tables(read) if read else schema.empty_table(), name)
    return Report(tables, summary)


class IncompleteReport(FileNotFoundError):
    """A report folder without ``summary.json``: the run that wrote it stopped or failed
    before the end (or it is not a chessscan run's), so its tables may hold only part of
    the input. ``folder``: the folder; ``parts``: table -> number of files there."""

    def __init__(self, folder: Path, parts: dict[str, int]) -> None:
        self.folder, self.parts = folder, parts
        super().__init__(f"{folder} has no summary.json: the run that wrote it did not finish (stopped or "
                         f"failed), so its tables may hold only part of the input ({_count_parts(parts)}); "
                         "read_report(path, incomplete='ok') reads what is there")


class IncompleteReportWarning(UserWarning):
    """What :func:`read_report` read with ``incomplete='ok'`` from a folder without summary.json."""


def _check_complete(where, summary: dict | None, found_files: dict, incomplete: str, depth: int = 1) -> None:
    """A report without ``summary.json`` (an unfinished or foreign run): raise
    :class:`IncompleteReport`, or with ``incomplete="ok"`` warn, naming what is there (the
    warning shown at the caller of :func:`read_report`, ``depth`` calls below it)."""
    if summary is not None:
        return
    parts = {name: len(files) for name, (_, files) in found_files.items()}
    if incomplete == "raise":
        raise IncompleteReport(where, parts)
    import warnings

    warnings.warn(f"{where} has no summary.json: read what is there ({_count_parts(parts)})",
                  IncompleteReportWarning, stacklevel=2 + depth)


def _count_parts(parts: dict[str, int]) -> str:
    return ", ".join(f"{name}: {n} part{'s' if n != 1 else ''}" for name, n in parts.items()) or "no table"


def read_report(path: str | os.PathLike, incomplete: str = "raise") -> Report:
    """Read the report folder ``path`` that ``chessscan analyze -o PATH`` wrote: the tables in
    any format it writes (``<table>.parquet``, ``<table>.csv``, ``<table>.jsonl``, or a Dask
    run's datasets ``<table>/part-*.parquet``) and ``summary.json``. ``path`` may be a URL
    (``s3://bucket/prefix``...: what ``analyze -o URL`` put there), read through fsspec.

    Returns a :class:`Report` whose DataFrames have the dtypes of the declared schema (see
    the module docstring), the same as :func:`chessscan.scan` returns for the same input.
    Raises ``FileNotFoundError`` when ``path`` is not a folder or holds no report table.

    ``summary.json`` is written last, once every table is whole: a folder without it holds
    a run that stopped or failed (a Dask run whose worker died, say: some parts are missing)
    or no chessscan run's. Then ``incomplete='raise'`` (the default) raises
    :class:`IncompleteReport` (a ``FileNotFoundError``) naming how many parts each table has
    there; ``incomplete='ok'`` reads them, with ``summary`` None, and says how many parts it
    read in an :class:`IncompleteReportWarning`. Parts being written (``*.partial``, hidden
    names) are never read.
    """
    from chessscan.readers.urls import is_url
    from chessscan.reports.writers import read_table

    if incomplete not in ("raise", "ok"):
        raise ValueError(f"incomplete must be 'raise' or 'ok', not {incomplete!r}")
    if is_url(path):
        return _read_url_report(path, incomplete)
    folder = Path(path)
    if not folder.is_dir():
        raise FileNotFoundError(f"no report folder: {folder}")
    found_files = {name: found for name in TABLE_NAMES if (found := _table_file(folder, name)) is not None}
    if not found_files:
        raise FileNotFoundError(f"{folder} holds no chessscan report table")
    summary_path = folder / "summary.json"
    summary = json.loads(summary_path.read_text(encoding="utf-8")) if summary_path.is_file() else None
    _check_complete(folder, summary, found_files, incomplete)
    tables = {}
    for name, (kind, files) in found_files.items():
        optional = [c for c in OPTIONAL_COLUMNS[name] if files and c in _columns_of(kind, files[0])]
        schema = schema_for(name, optional)
        if not files:
            arrow = schema.empty_table()
        else:
            import pyarrow as pa

            arrow = pa.concat_tables([read_table(f, schema) for f in files])
        tables[name] = to_dataframe(arrow, name)
    return Report(tables, summary)
