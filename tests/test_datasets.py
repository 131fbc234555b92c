"""The report layout: each Parquet table a dataset folder of parts in input order, whatever
wrote it, read back the same by chessscan.read_report, pandas, pyarrow, Polars and DuckDB."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.dataset as ds
import pytest
from click.testing import CliRunner

import chessscan
from chessscan.cli import main
from conftest import SAMPLES

MAGNUS = SAMPLES / "lichess-magnus-300.pgn"
VARIANTS = SAMPLES / "lichess-jishanshaikh4-variants.pgn"
WAC = SAMPLES / "arasan-wacnew.epd"


def analyze(out: Path, *args) -> Path:
    result = CliRunner().invoke(main, ["analyze", *map(str, args), "-o", str(out), "--silent"])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return out


def plain(values) -> list:
    """Values as Python objects, missing ones as None, whatever the reader's types."""
    return [None if v is None or v is pd.NA or (isinstance(v, float) and v != v) else
            (v.item() if hasattr(v, "item") else v) for v in values]


def test_one_process_writes_one_part_per_table(tmp_path):
    out = analyze(tmp_path / "r", VARIANTS, WAC, MAGNUS, "--jobs", "1")
    tables = ["positions", "games", "perpetuals", "epd_positions", "issues", "disagreements"]
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == sorted(tables)
    for t in tables:
        assert [p.name for p in (out / t).iterdir()] == ["part-000000.parquet"], t
    assert not (out / "disagreements").is_file()


def test_every_reader_reads_a_report_the_same_way(tmp_path):
    """read_report, pd.read_parquet on the folder, pyarrow's dataset, Polars and DuckDB on
    ``<table>/*.parquet``: the same rows in the same order, value for value."""
    pl = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    out = analyze(tmp_path / "r", VARIANTS, WAC, MAGNUS, "--jobs", "1", "--cross-check", "full")
    report = chessscan.read_report(out)
    assert len(report.positions) > 30_000 and len(report.issues) >= 8 and report.disagreements.empty
    for name, want in report.tables.items():
        folder = out / name
        columns = list(want.columns)
        by_pandas = pd.read_parquet(folder, dtype_backend="numpy_nullable")
        by_arrow = ds.dataset(folder).to_table()
        by_polars = pl.read_parquet(str(folder / "*.parquet"))
        rel = duckdb.sql(f"SELECT * FROM read_parquet('{folder}/*.parquet')")
        by_duckdb = rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()
        for reader, got in (("pandas", {c: by_pandas[c].tolist() for c in columns}),
                            ("pyarrow", {c: by_arrow.column(c).to_pylist() for c in columns}),
                            ("polars", {c: by_polars[c].to_list() for c in columns}),
                            ("duckdb", {c: by_duckdb.column(c).to_pylist() for c in columns})):
            assert list(got) == columns, (name, reader)
            for c in columns:
                assert plain(got[c]) == plain(want[c].tolist()), (name, reader, c)
