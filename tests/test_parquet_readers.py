"""The positions table as written (per-column encodings and codecs, chessscan.reports.writers'
POSITIONS_ENCODINGS) reads back the same in pyarrow, pandas, Polars and DuckDB.

The encodings were chosen for speed and size; a reader that lacks one of them (a
DELTA_BINARY_PACKED page, an uncompressed column among zstd ones, dictionary pages of a
column stored as plain strings) fails here, not in a user's notebook.
"""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from chessscan.analysis.options import AnalysisOptions
from chessscan.engines.local import run, tables_for
from chessscan.reports.writers import POSITIONS_ENCODINGS, ReportWriter
from conftest import SAMPLES

SAMPLE = SAMPLES / "lichess-magnus-300.pgn.zst"
INTS = ("game_index", "ply", "move_number", "halfmove_clock", "repetition")
BOOLS = ("in_check", "by_en_passant", "by_castling", "by_promotion", "is_checkmate", "is_stalemate")
TEXT = ("source", "color", "san", "uci", "check_kind", "checkers")


@pytest.fixture(scope="module")
def positions(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    options = AnalysisOptions(cross_check="off")
    with ReportWriter(out, tables=tables_for([str(SAMPLE)], options)) as writer:
        run([str(SAMPLE)], writer, options)
    path = out / "positions.parquet"
    table = pq.read_table(path)
    assert table.num_rows > 20_000
    return path, table


def summary_of(columns: dict) -> dict:
    """What every reader must agree on: the rows in order, column by column (ints as ints,
    text as str, bools as bool), and the zobrist keys as unsigned 64-bit values."""
    return {name: [None if v is None else (int(v) if name in INTS + ("zobrist",) else
                                           bool(v) if name in BOOLS else str(v)) for v in values]
            for name, values in columns.items()}


def test_the_file_uses_the_chosen_encodings(positions):
    path, table = positions
    meta = pq.ParquetFile(path).metadata.row_group(0)
    for i in range(meta.num_columns):
        column = meta.column(i)
        encoding, codec, statistics = POSITIONS_ENCODINGS[column.path_in_schema]
        wanted = "RLE_DICTIONARY" if encoding == "dictionary" else encoding
        assert wanted in column.encodings, column.path_in_schema
        assert column.compression == ("UNCOMPRESSED" if codec == "none" else codec.upper())
        assert (column.statistics is not None and column.statistics.has_min_max) == statistics
    # A zobrist key above 2**63 is in the sample: signed readers would show it negative.
    assert max(table.column("zobrist").to_pylist()) > 2**63


def test_pandas_reads_it(positions):
    path, table = positions
    import pandas as pd

    df = pd.read_parquet(path, dtype_backend="numpy_nullable")
    assert summary_of({c: df[c].tolist() for c in df.columns}) == summary_of(table.to_pydict())


def test_polars_reads_it(positions):
    path, table = positions
    pl = pytest.importorskip("polars", reason="polars is not installed (pip install '.[test]')")
    df = pl.read_parquet(path)
    assert summary_of({c: df[c].to_list() for c in df.columns}) == summary_of(table.to_pydict())


def test_duckdb_reads_it(positions):
    path, table = positions
    duckdb = pytest.importorskip("duckdb", reason="duckdb is not installed (pip install '.[test]')")
    con = duckdb.connect()
    try:
        cursor = con.execute(f"SELECT * FROM read_parquet('{path}')")
        names = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
        counts = con.execute(f"SELECT count(*), count(*) FILTER (WHERE in_check), sum(ply), "
                             f"max(zobrist) FROM read_parquet('{path}')").fetchone()
    finally:
        con.close()
    got = summary_of({name: [r[i] for r in rows] for i, name in enumerate(names)})
    assert got == summary_of(table.to_pydict())
    in_check = table.column("in_check").to_pylist()
    assert counts == (table.num_rows, sum(in_check), sum(table.column("ply").to_pylist()),
                      max(table.column("zobrist").to_pylist()))
