"""A report's tables written in parts by several processes (``chessscan analyze --jobs N``).

With a report whose tables take parts (:class:`~chessscan.reports.writers.ReportWriter` with
``parts=True``), each ``--jobs`` worker writes its chunk's rows to a part of each table
itself (:class:`PartTarget`), under a temporary name: a hidden
``.part-NNNNNN.parquet.<hex>.partial`` in the table's dataset folder (its readers skip it),
or for CSV ``<table>.csv.<hex>.partial`` (rows without the header). It hands back the
temporary paths and row counts; the main process names them
(:meth:`~chessscan.reports.writers.ReportWriter.publish_part`), or appends the CSV rows to
the table's file (:meth:`~chessscan.reports.writers.ReportWriter.append_part`), when it
writes the chunk in input order, and removes them (:func:`discard_parts`) when it drops the
chunk's result (read again with the next chunk, or with another first game index). A run
that stops removes what its workers were writing (:func:`sweep`).
"""

from __future__ import annotations

import os
from typing import NamedTuple, Sequence

__all__ = ["PartTarget", "discard_parts", "sweep", "add_rows"]


class PartTarget(NamedTuple):
    """Where a worker writes its chunk's parts (module doc): the report folder, its format,
    the optional columns of each table, and the issue filter's codes (``select``: None for
    every code; ``filtered``: whether :class:`~chessscan.reports.filters.IssueFilter`'s
    rules apply, as they do in ``chessscan analyze``)."""

    out_dir: str
    fmt: str
    optional: dict
    select: frozenset | None
    ignore: frozenset
    filtered: bool

    def writer(self, table: str, number: int):
        """A :class:`~chessscan.reports.writers.TableWriter` for part ``number`` of
        ``table`` (a provisional number: the main process names the part), left whole under
        its temporary name when closed."""
        from chessscan.reports.schema import schema_for
        from chessscan.reports.writers import TableWriter, part_name

        schema = schema_for(table, self.optional.get(table, ()))
        if self.fmt == "parquet":
            path = os.path.join(self.out_dir, table, part_name(number))
            return TableWriter(path, schema, "parquet", table=table, hidden=True, publish=False)
        return TableWriter(os.path.join(self.out_dir, f"{table}.{self.fmt}"), schema, self.fmt, table=table,
                           publish=False, csv_header=False)


def discard_parts(parts: dict | None) -> None:
    """Remove the temporary files of a chunk's parts (``{table: (path, rows)}``)."""
    from chessscan.reports.files import discard

    for path, _ in (parts or {}).values():
        discard(path)


def sweep(out_dir: str, tables: Sequence[str], fmt: str, keep: Sequence[str] = ()) -> None:
    """Remove the parts being written that a run stopped before naming (hidden
    ``.part-*.partial`` in each table's dataset folder; for CSV, the table's temporary
    files), but those in ``keep``: the parts or tables the main process itself is writing."""
    from chessscan.reports.files import discard, temporaries_of

    kept = {os.path.abspath(k) for k in keep}
    for table in tables:
        if fmt == "parquet":
            folder = os.path.join(out_dir, table)
            try:
                names = os.listdir(folder)
            except OSError:
                continue
            found = [os.path.join(folder, n) for n in names if n.startswith(".part-") and n.endswith(".partial")]
        else:
            found = temporaries_of(os.path.join(out_dir, f"{table}.{fmt}"))
        for path in found:
            if os.path.abspath(path) not in kept:
                discard(path)


def add_rows(parts: dict, table: str, rows: dict[str, list], target: PartTarget, number: int) -> None:
    """Add ``rows`` (column buffers, in input order) to the part of ``table`` in a chunk's
    ``parts`` (``{table: (temporary path, rows)}``; made if the chunk had none), keeping the
    rows in ``game_index`` order (a stable sort: a game's rows keep theirs): the
    disagreements of the games the main process cross-checked, beside those the worker
    found. The part is written again under a new temporary name."""
    from chessscan.reports.schema import schema_for

    schema = schema_for(table, target.optional.get(table, ()))
    have = parts.get(table)
    if have is not None:
        old = _read_part(have[0], target.fmt, schema)
        rows = {k: old.column(k).to_pylist() + rows[k] for k in schema.names}
        order = sorted(range(len(rows["game_index"])), key=rows["game_index"].__getitem__)
        rows = {k: [v[i] for i in order] for k, v in rows.items()}
    w = target.writer(table, number)
    try:
        w.write(rows)
        w.close()
    except BaseException:
        w.discard()
        raise
    if have is not None:
        from chessscan.reports.files import discard

        discard(have[0])
    parts[table] = (str(w.partial_path), w.rows_written)


def _read_part(path: str, fmt: str, schema):
    """A temporary part as a ``pyarrow.Table`` of ``schema`` (opened here by its exact name:
    Arrow takes names as UTF-8 text, and a folder may be named in other bytes)."""
    if fmt == "parquet":
        import pyarrow.parquet as pq

        with open(path, "rb") as f:
            return pq.read_table(f).cast(schema)
    import pyarrow.csv as pacsv

    convert = pacsv.ConvertOptions(column_types=dict(zip(schema.names, schema.types)), strings_can_be_null=True,
                                   quoted_strings_can_be_null=False, true_values=["true"], false_values=["false"])
    with open(path, "rb") as f:
        return pacsv.read_csv(f, read_options=pacsv.ReadOptions(column_names=schema.names),
                              convert_options=convert).select(schema.names).cast(schema)
