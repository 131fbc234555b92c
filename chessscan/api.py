"""The Python API: :func:`scan` analyzes sources and :func:`read_report` reads a report folder;
both return a :class:`~chessscan.reports.reader.Report` of pandas DataFrames."""

from __future__ import annotations

import os
from typing import Iterable

from chessscan.analysis.options import AnalysisOptions
from chessscan.engines.local import MemorySink, run, tables_for
from chessscan.reports.reader import Report, read_report, to_dataframe

__all__ = ["scan", "read_report", "Report"]


def scan(paths: str | bytes | os.PathLike | Iterable[str | bytes | os.PathLike], *,
         positions: str = "all", fen: bool = False, cross_check: str = "sample",
         jobs: int | None = None, moves_column: str | None = None) -> Report:
    """Analyze PGN and EPD sources as ``chessscan analyze`` does (the same defaults: a sampled
    cross-check, every core) and return the report tables as DataFrames.

    ``paths``: one path (str, bytes or PathLike), ``'-'`` for stdin, or a list of them;
    a folder stands for its ``.pgn``/``.epd`` files (recursively, in sorted order);
    ``.gz``/``.bz2``/``.xz``/``.zst`` are decompressed; ``.epd`` files (and other files whose
    first record is a FEN) are EPD. A path that gives no games (missing, not text, empty) is
    an ``issues`` row, as with the CLI. ``positions``: ``'all'``, ``'checks'`` or ``'none'``;
    ``fen``: add the FEN after each move; ``cross_check``: ``'off'``, ``'sample'`` or
    ``'full'``; ``jobs``: worker processes (None: every core, or this process only on 2 cores
    or fewer; 1: this process only; the tables are the same for any number; workers never
    run the calling script, so a script needs no ``if __name__ == "__main__":`` guard). Game
    tables (Parquet, Arrow IPC, Feather) and URLs (``s3://``, ``hf://``, ...) are read as by
    the CLI; ``moves_column``: a table's moves column (``--moves-column``).

    Returns a :class:`~chessscan.reports.reader.Report`: ``.positions``, ``.games``,
    ``.perpetuals`` for PGN, ``.epd_positions`` for EPD, ``.issues``, ``.disagreements``
    with a cross-check (None for a table not written), each with the columns and dtypes of
    the tables ``chessscan analyze`` writes (docs: reference/tables.md), and ``.summary``
    (dict, as ``summary.json``). Everything is held in memory: for large inputs use
    ``chessscan analyze`` and :func:`chessscan.read_report`. Raises ``FileNotFoundError``
    when no path can be read at all, ``OSError`` when reading fails midway.

    >>> report = scan("data/samples/lichess-magnus-300.pgn")    # doctest: +SKIP
    >>> report.positions.query("check_kind == 'double'")        # doctest: +SKIP
    """
    import pyarrow as pa

    from chessscan.reports.schema import schema_for
    from chessscan.reports.writers import to_record_batch

    from chessscan.analysis.game import Tally
    from chessscan.engines.local import report_input_problems
    from chessscan.readers.inputs import resolve_inputs
    from chessscan.readers.sources import source_name
    from chessscan.reports.filters import IssueFilter

    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    given = [os.fsdecode(p) for p in paths]
    paths, problems = resolve_inputs(given, moves_column)
    unreadable = [p for p in problems if p.code == "unreadable-input"]
    if given and not paths and unreadable and len(unreadable) == len(problems):
        raise FileNotFoundError(f"cannot read {unreadable[0].path}: {unreadable[0].message}")
    options = AnalysisOptions(positions=positions, fen=fen, cross_check=cross_check, moves_column=moves_column)
    sink = MemorySink()
    tally = Tally()
    tally.cross_check_mode = cross_check  # (the mode asked for, even with no game to read)
    report_input_problems(problems, sink, tally)
    # Through the filter ``chessscan analyze`` writes with (its rule that a repeated fact is
    # reported once: a game's UCI moves, a file's decoded games), so the issues rows are its.
    issues = IssueFilter(sink)
    if paths:
        tally.merge(run(paths, issues, options, jobs=jobs))
    issues.finish()
    out = {}
    for name in tables_for(paths, options):
        schema = schema_for(name, ("fen",) if fen and name == "positions" else ())
        batches = [to_record_batch(b, schema, name) for b in sink.batches.get(name, [])]
        out[name] = to_dataframe(pa.Table.from_batches(batches, schema=schema), name)
    summary = tally.as_dict()
    summary["sources"] = [source_name(p) for p in paths]  # as summary.json: the sources read
    return Report(out, summary)
