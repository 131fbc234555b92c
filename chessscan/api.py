"""The Python API: :func:`scan` returns the report tables as pandas DataFrames."""

from __future__ import annotations

import os
from typing import Iterable

from chessscan.analysis.options import AnalysisOptions
from chessscan.engines.local import MemorySink, run, tables_for


def scan(paths: str | bytes | os.PathLike | Iterable[str | bytes | os.PathLike], *,
         positions: str = "all", fen: bool = False, cross_check: str = "off") -> dict:
    """Analyze PGN and EPD sources and return the report tables as DataFrames — ``positions``,
    ``games``, ``perpetuals`` for PGN, ``epd_positions`` for EPD, ``issues``,
    ``disagreements`` with a cross-check — with the columns and types ``chessscan analyze``
    writes, and ``"summary"`` (dict).

    ``paths``: one path (str, bytes or PathLike), ``'-'`` for stdin, or a list of them;
    ``.gz``/``.bz2``/``.xz``/``.zst`` are decompressed. Everything is held in memory: for
    large inputs use ``chessscan analyze``. Raises ``OSError`` if a source cannot be opened.

    >>> tables = scan("data/samples/lichess-magnus-300.pgn")    # doctest: +SKIP
    >>> tables["positions"].query("check_kind == 'double'")      # doctest: +SKIP
    """
    import pyarrow as pa

    from chessscan.reports.schema import schema_for
    from chessscan.reports.writers import to_record_batch

    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    paths = [os.fsdecode(p) for p in paths]
    options = AnalysisOptions(positions=positions, fen=fen, cross_check=cross_check)
    sink = MemorySink()
    tally = run(paths, sink, options)
    out = {}
    for name in tables_for(paths, options):
        schema = schema_for(name, ("fen",) if fen and name == "positions" else ())
        batches = [to_record_batch(b, schema, name) for b in sink.batches.get(name, [])]
        table = pa.Table.from_batches(batches, schema=schema)
        out[name] = table.to_pandas(types_mapper=_types_mapper)
    out["summary"] = tally.as_dict()
    return out


def _types_mapper(arrow_type):
    """Nullable pandas dtypes, so uint64 Zobrist keys and missing Elos survive exactly."""
    import pandas as pd
    import pyarrow as pa

    return {
        pa.int32(): pd.Int32Dtype(), pa.int64(): pd.Int64Dtype(), pa.uint64(): pd.UInt64Dtype(),
        pa.bool_(): pd.BooleanDtype(), pa.string(): pd.StringDtype(),
    }.get(arrow_type)
