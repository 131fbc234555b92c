"""Bounded, streamed reads of a report folder's tables (for ``chessscan report``).

A report folder holds, per table, one file (``<table>.parquet`` or ``<table>.csv``, as
``analyze --format`` wrote it) or a Parquet dataset (``<table>/part-NNNNNN.parquet``, as
``analyze --dask`` writes it). :class:`ReportTables` finds each table and scans it with
``pyarrow.dataset``: only the columns asked for are decoded, filters are pushed down
(Parquet row groups whose statistics exclude them are skipped), and rows come in record
batches, so memory stays bounded by a few batches whatever the table's size — a Lichess
month's positions table is never held in memory.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Iterator, Sequence

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from .schema import TABLE_NAMES, schema_for

__all__ = ["ReportTables", "ReportError", "BATCH_ROWS"]

#: Rows per scanned batch.
BATCH_ROWS = 65_536


class ReportError(ValueError):
    """The folder is not a chessscan report (no summary.json, or a table that cannot be read)."""


def _kind(value) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {dict: "object", list: "array", str: "string", type(None): "null"}.get(type(value), "value")


# Maps keyed by data whose values are maps of counts (the others hold counts).
_MAPS_OF_MAPS = frozenset({"results", "issues_by_source"})


def summary_shape_problem(summary: dict, reference: dict | None = None, where: str = "") -> str | None:
    """Where a summary (``summary.json`` as read) differs in shape from the one ``analyze``
    writes, in words (``'"checks" is null, not an object'``), or None. Each field the written
    summary has must have the JSON type written (a count may be any number), and within a
    field that is an object, every field written must be there; the maps keyed by data
    (outcomes, codes, move numbers; results and issues by source one level deeper) hold
    numbers. Top-level fields may be missing, and extra fields are allowed. Raises nothing."""
    if reference is None:
        from chessscan.analysis.game import Tally

        reference = {**Tally().as_dict(), "sources": []}  # (the run adds its sources)
    if where:
        for key in reference:
            if key not in summary:
                return f'"{where}" has no "{key}"'
    for key, value in summary.items():
        name = f"{where}.{key}" if where else key
        want = reference.get(key)
        if key not in reference:
            if not reference:  # a map keyed by data
                want = {} if where.rsplit(".", 1)[-1] in _MAPS_OF_MAPS else 0
            elif isinstance(value, dict):
                want = {}  # an extra map (the sample's counts by reason): of counts
            else:
                continue
        if want is None:
            continue
        if where.startswith("histograms.") and not (
                re.fullmatch(r"-?[0-9]{1,18}", key) and isinstance(value, int) and 0 <= value < 1 << 63):
            # (charted: a move number or length and its count, as 64-bit ints)
            return f'"{name}" is not an integer count by an integer key'
        if isinstance(value, float) and not math.isfinite(value):
            return f'"{name}" is {value}, not a finite number'
        if _kind(value) != _kind(want):
            article = "an" if _kind(want) in ("object", "array") else "a"
            return f'"{name}" is {_kind(value)}, not {article} {_kind(want)}'
        if isinstance(want, dict):
            problem = summary_shape_problem(value, want, name)
            if problem is not None:
                return problem
    return None


class ReportTables:
    """The tables of one report folder.

    ``ReportTables(folder)`` reads ``summary.json`` (raises :class:`ReportError` when it is
    missing or not JSON: a report is only complete once its summary is written) and
    ``run.json`` when present (``{}`` otherwise), and finds each table's file or dataset.
    """

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)
        if not self.folder.is_dir():
            raise ReportError(f"{self.folder}: no such folder")
        summary = self.folder / "summary.json"
        if not summary.is_file():
            raise ReportError(f"{self.folder} holds no summary.json: not a chessscan report, or its "
                              "analysis did not finish")
        try:
            self.summary: dict = json.loads(summary.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as exc:  # (RecursionError: arrays nested 100,000 deep)
            raise ReportError(f"{summary}: cannot read it as JSON ({exc})") from exc
        if not isinstance(self.summary, dict):  # valid JSON, but no summary: [] ended in an AttributeError
            raise ReportError(f"{summary}: not a chessscan summary (a JSON {type(self.summary).__name__}, "
                              "not an object)")
        problem = summary_shape_problem(self.summary)
        if problem is not None:
            raise ReportError(f"{summary}: not as `chessscan analyze` writes it: {problem}")
        run = self.folder / "run.json"
        try:
            self.run: dict = json.loads(run.read_text(encoding="utf-8")) if run.is_file() else {}
        except (OSError, ValueError, RecursionError):
            self.run = {}
        if not isinstance(self.run, dict):
            self.run = {}
        # run.json is information only: a field of another type than analyze writes is left out.
        for key, want in (("options", dict), ("elapsed_seconds", float), ("games_per_second", float),
                          ("positions_per_second", float)):
            value = self.run.get(key)
            if key in self.run and not (isinstance(value, dict) if want is dict else (
                    isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
                    and abs(value) < 1e18)):
                del self.run[key]
        self.paths: dict[str, tuple[str, Path]] = {}  # table -> (format, path)
        for name in TABLE_NAMES:
            found = self._locate(name)
            if found is not None:
                self.paths[name] = found
        self._datasets: dict[str, ds.Dataset] = {}
        self._dirfd: int | None = None

    def close(self) -> None:
        """Let go of the folder (see :meth:`_arrow_path`); the tables cannot be read after."""
        self._datasets.clear()
        fd, self._dirfd = self._dirfd, None
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def _arrow_path(self, path: Path) -> str:
        """``path`` (in the folder) as Arrow can open it. Arrow takes paths as UTF-8 text, so
        in a folder whose name is not UTF-8 (Latin-1 bytes, on Linux) each file is opened
        through the folder opened once, ``/proc/self/fd/N/<table file>``: the same bytes."""
        text = os.fspath(path)
        try:
            text.encode("utf-8")
            return text
        except UnicodeEncodeError:
            pass
        if self._dirfd is None:
            if not os.path.isdir("/proc/self/fd"):
                raise ReportError(f"{self.folder}: a folder whose name is not UTF-8 cannot be read on this "
                                  "system (rename it)")
            self._dirfd = os.open(self.folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
        return f"/proc/self/fd/{self._dirfd}/{os.path.relpath(text, os.fspath(self.folder))}"

    def _locate(self, name: str) -> tuple[str, Path] | None:
        folder = self.folder / name
        if folder.is_dir() and any(folder.glob("part-*.parquet")):
            return "parquet", folder
        for fmt in ("parquet", "csv"):
            path = self.folder / f"{name}.{fmt}"
            if path.is_file():
                return fmt, path
        return None

    def has(self, table: str) -> bool:
        """Whether the folder holds ``table``."""
        return table in self.paths

    def describe(self, table: str) -> str:
        """Where ``table`` is, as a user reads it: ``games.parquet``, ``games/ (3 parts)``."""
        fmt, path = self.paths[table]
        if path.is_dir():
            n = len(list(path.glob('part-*.parquet')))
            return f"{table}/ ({n} Parquet part{'' if n == 1 else 's'})"
        return path.name

    def dataset(self, table: str) -> ds.Dataset:
        """The ``pyarrow.dataset`` of ``table`` (raises ``KeyError`` when it is absent)."""
        if table not in self._datasets:
            fmt, path = self.paths[table]
            try:
                if fmt == "parquet":
                    source = ([self._arrow_path(p) for p in sorted(path.glob("part-*.parquet"))]
                              if path.is_dir() else self._arrow_path(path))
                    self._datasets[table] = ds.dataset(source, format="parquet")
                else:
                    self._datasets[table] = ds.dataset(self._arrow_path(path), format=_csv_format(table, path))
            except (pa.ArrowException, OSError) as exc:
                raise ReportError(f"{path}: cannot read the {table} table ({exc})") from exc
        return self._datasets[table]

    def columns(self, table: str) -> tuple[str, ...]:
        """Column names ``table`` holds (``()`` when it is absent)."""
        return tuple(self.dataset(table).schema.names) if self.has(table) else ()

    def count(self, table: str, filter: ds.Expression | None = None) -> int:
        """Rows of ``table`` (matching ``filter``); 0 when the table is absent."""
        if not self.has(table):
            return 0
        return self.dataset(table).count_rows(filter=filter)

    def scan(self, table: str, columns: Sequence[str], filter: ds.Expression | None = None
             ) -> Iterator[pa.RecordBatch]:
        """Record batches of ``columns`` of the rows of ``table`` matching ``filter``, in file
        order (parts in part order); nothing when the table is absent. Raises
        :class:`ReportError` for a file that cannot be read.

        Parquet is read one row group at a time (``ParquetFile.iter_batches``, no pre-buffering,
        no read-ahead: Arrow memory stays flat, about 12 MiB on a 27M-row positions table),
        skipping the row groups whose statistics rule ``filter`` out; CSV through a
        ``pyarrow.dataset`` scanner, block by block."""
        if not self.has(table):
            return
        fmt, path = self.paths[table]
        try:
            if fmt == "parquet":
                yield from self._scan_parquet(table, list(columns), filter)
                return
            scanner = self.dataset(table).scanner(columns=list(columns), filter=filter,
                                                  batch_size=BATCH_ROWS, batch_readahead=1,
                                                  fragment_readahead=1)
            for batch in scanner.to_batches():
                if batch.num_rows:
                    yield batch
        except (pa.ArrowException, OSError) as exc:
            raise ReportError(f"{path}: cannot read the {table} table ({exc})") from exc

    def _scan_parquet(self, table: str, columns: list[str], filter: ds.Expression | None
                      ) -> Iterator[pa.RecordBatch]:
        names = self.dataset(table).schema.names
        read = list(columns)
        if filter is not None:  # the filter's columns too (column names are identifiers)
            text = str(filter)
            read += [n for n in names if n not in read and re.search(rf"\b{re.escape(n)}\b", text)]
        for fragment in self.dataset(table).get_fragments():
            if filter is None:
                groups = None
            else:  # statistics: only the row groups that may hold a match
                groups = [rg.id for piece in fragment.split_by_row_group(filter) for rg in piece.row_groups]
                if not groups:
                    continue
            with pq.ParquetFile(fragment.path, pre_buffer=False) as f:
                for batch in f.iter_batches(batch_size=BATCH_ROWS, row_groups=groups, columns=read,
                                            use_threads=False):
                    if filter is not None:
                        batch = pa.Table.from_batches([batch]).filter(filter).combine_chunks()
                        batch = batch.to_batches()[0] if batch.num_rows else None
                        if batch is None:
                            continue
                    if batch.num_rows:
                        yield batch.select(columns)

    def head(self, table: str, columns: Sequence[str], filter: ds.Expression | None = None,
             limit: int = 10) -> list[dict]:
        """The first ``limit`` matching rows as dicts (the scan stops there)."""
        rows: list[dict] = []
        if limit <= 0:
            return rows
        for batch in self.scan(table, columns, filter):
            rows.extend(batch.slice(0, limit - len(rows)).to_pylist())
            if len(rows) >= limit:
                break
        return rows


def _csv_format(table: str, path: Path) -> ds.CsvFileFormat:
    """CSV as :class:`~chessscan.reports.writers.TableWriter` writes it: the declared types,
    ``true``/``false``, an empty unquoted field null, ``""`` the empty string."""
    with open(path, encoding="utf-8") as f:
        header = f.readline()
    optional = [c for c in ("fen",) if table == "positions" and '"fen"' in header]
    schema = schema_for(table, optional)
    convert = pacsv.ConvertOptions(column_types=dict(zip(schema.names, schema.types)),
                                   strings_can_be_null=True, quoted_strings_can_be_null=False,
                                   true_values=["true"], false_values=["false"])
    return ds.CsvFileFormat(convert_options=convert)
