"""A Parquet game table spread by row group, over --jobs workers and Dask tasks: each task
reads its own range of row groups (planned from the footer, no counting pass), and the
tables and the summary are those of one process, also when a row group is corrupt."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import chessscan
from chessscan.cli import main
from chessscan.engines import parallel
from chessscan.readers.tables import row_group_ranges
from conftest import SAMPLES

TWIN = SAMPLES / "lichess-magnus-300.parquet"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def small_groups(folder: Path, corrupt: int | None = None) -> Path:
    """The sample's 300 games in 15 row groups of 20 rows; ``corrupt``: that row group's
    pages overwritten."""
    path = folder / "games.parquet"
    pq.write_table(pq.read_table(TWIN), path, row_group_size=20)
    if corrupt is not None:
        data = bytearray(path.read_bytes())
        meta = pq.ParquetFile(path).metadata
        start = min(meta.row_group(corrupt).column(i).data_page_offset for i in range(meta.num_columns))
        data[start:start + 4000] = b"\xff" * 4000
        path.write_bytes(bytes(data))
    return path


def assert_same(got: Path, expected: Path) -> None:
    a, b = chessscan.read_report(got), chessscan.read_report(expected)
    assert a.summary == b.summary
    assert sorted(a.tables) == sorted(b.tables)
    for name in a.tables:
        pd.testing.assert_frame_equal(a.tables[name], b.tables[name])


def test_ranges_come_from_the_footer(tmp_path):
    path = small_groups(tmp_path)
    ranges = row_group_ranges(path, rows=50)
    assert [(r, n) for r, n, _ in ranges] == [(range(3 * k, 3 * k + 3), 60) for k in range(5)]
    by_size = row_group_ranges(path, size=1)  # a range a row group
    assert [r for r, _, _ in by_size] == [range(k, k + 1) for k in range(15)]
    assert sum(b for _, _, b in by_size) == sum(pq.ParquetFile(path).metadata.row_group(k).total_byte_size
                                                for k in range(15))
    assert row_group_ranges(path, moves_column="nothing", rows=50) is None  # read whole: its error shows


@pytest.mark.parametrize("corrupt", [None, 7])
def test_jobs_spread_a_table_by_row_group(tmp_path, monkeypatch, corrupt):
    table = small_groups(tmp_path, corrupt)
    args = [table, "--silent", "--cross-check", "sample"]
    one, two = tmp_path / "one", tmp_path / "two"
    assert run("analyze", *args, "-o", one, "--jobs", "1").exit_code == 0
    monkeypatch.setattr(parallel, "PART_BATCH_GAMES", 50)  # ranges of 3 row groups, 60 rows
    monkeypatch.setattr(parallel, "_WORK_WHILE_POOL_STARTS", False)
    assert run("analyze", *args, "-o", two, "--jobs", "2").exit_code == 0
    assert_same(two, one)
    parts = [pq.read_metadata(p).num_rows for p in sorted((two / "games").glob("part-*.parquet"))]
    summary = json.loads((one / "summary.json").read_text())
    if corrupt is None:
        assert parts == [60] * 5  # a part a range (batches of 50 games would make 6)
        assert summary["games_read"] == 300
    else:
        # The rows before the corrupt group, then one game with the error; the ranges after
        # it are dropped as a read of the whole file stops there.
        assert parts == [60, 60, 21] and summary["games_read"] == 141
        issues = chessscan.read_report(two).issues
        assert issues.code.tolist() == ["truncated-input"] and issues.line.tolist() == [141]


@pytest.mark.parametrize("corrupt", [None, 7])
def test_dask_spreads_a_table_by_row_group(tmp_path, corrupt):
    pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    from chessscan.analysis.options import AnalysisOptions
    from chessscan.engines.dask import plan_shards, run_dask

    table = small_groups(tmp_path, corrupt)
    one = tmp_path / "one"
    assert run("analyze", table, "--silent", "--cross-check", "sample", "-o", one, "--jobs", "1").exit_code == 0
    shards = plan_shards([str(table)], shard_size=200_000)
    assert [(s.kind, s.start, s.end, s.first) for s in shards] == [("rows", 3 * k, 3 * k + 3, k == 0)
                                                                   for k in range(5)]
    assert sum(s.size for s in shards) == table.stat().st_size
    out = tmp_path / "dask"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        tally = run_dask([str(table)], str(out), AnalysisOptions(cross_check="sample"), client=client,
                         shard_size=200_000)
    summary = json.loads((one / "summary.json").read_text())
    del summary["sources"]
    assert tally.as_dict() == summary
    expected = chessscan.read_report(one)
    parts = sorted((out / "games").glob("part-*.parquet"))
    assert [pq.read_metadata(p).num_rows for p in parts] == ([60] * 5 if corrupt is None else [60, 60, 21])
    for name, want in expected.tables.items():
        got = pd.read_parquet(out / name, dtype_backend="numpy_nullable")
        pd.testing.assert_frame_equal(got.reset_index(drop=True).astype(want.dtypes.to_dict()), want,
                                      check_categorical=False)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="file names are bytes on Linux")
def test_dask_parts_in_a_folder_whose_name_is_not_utf8(tmp_path):
    # The parts are opened by their exact names: Arrow takes only UTF-8 ones.
    pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    import os

    from chessscan.analysis.options import AnalysisOptions
    from chessscan.engines.dask import run_dask

    empty = tmp_path / "empty.pgn"
    empty.write_bytes(b"")
    out = os.fsdecode(bytes(tmp_path) + b"/r\xff")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        tally = run_dask([str(small_groups(tmp_path)), str(empty)], out, AnalysisOptions(cross_check="off"),
                         client=client)
    assert tally.games == 300
    issues = os.path.join(out, "issues", "part-000001.parquet")  # the empty file's warning, added by the client
    with open(issues, "rb") as f:
        assert pq.read_table(f).column("code").to_pylist() == ["empty-input"]
