"""Game tables (Parquet, Arrow IPC, Feather) and URLs as inputs: the tables of the shipped
Parquet twin of the Lichess sample equal the PGN's; SAN-list and UCI columns; tags from
columns and from hive folders; a missing moves column and a corrupt footer; row-group ranges;
--jobs 2 and Dask equal one process; a real S3 endpoint (moto's server, on 127.0.0.1) and an
https:// server give the same tables."""

from __future__ import annotations

import datetime
import functools
import http.server
import json
import shutil
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import chessscan
from chessscan.cli import main
from chessscan.readers.inputs import REPORT_MANIFEST, resolve_each
from chessscan.readers.tables import TableReader, table_kind
from chessscan.reports.writers import MANIFEST_NAME
from conftest import SAMPLES

PGN = SAMPLES / "lichess-magnus-300.pgn.zst"
TWIN = SAMPLES / "lichess-magnus-300.parquet"
LOCATION = ["byte_offset", "line"]


def run(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def tables(out: Path) -> dict[str, pd.DataFrame]:
    found = {p.stem: pd.read_parquet(p, dtype_backend="numpy_nullable") for p in out.glob("*.parquet")}
    found.update({p.name: pd.read_parquet(p, dtype_backend="numpy_nullable") for p in out.iterdir() if p.is_dir()})
    return found


def same_name(frame: pd.DataFrame, name: str = "x") -> pd.DataFrame:
    """``frame`` with its source column set to one name (the two inputs' names differ)."""
    frame = frame.copy()
    if "source" in frame:
        frame["source"] = name
    return frame


def assert_twins(pgn: dict, table: dict) -> None:
    """The tables of the PGN and of its table twin: positions identical, games identical but
    for the location columns, no issue in either (the sample is clean), summary equal but for
    the sources."""
    pd.testing.assert_frame_equal(same_name(pgn["positions"]), same_name(table["positions"]))
    pd.testing.assert_frame_equal(same_name(pgn["games"]).drop(columns=LOCATION),
                                  same_name(table["games"]).drop(columns=LOCATION))
    assert len(pgn["issues"]) == len(table["issues"]) == 0
    assert list(table["games"].line) == list(range(1, 301))  # the row number
    assert list(table["games"].byte_offset) == list(range(300))  # the row index


@pytest.fixture(scope="module")
def pgn_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("pgn") / "r"
    assert run("analyze", PGN, "-o", out, "--silent", "--jobs", "1", "--cross-check", "off").exit_code == 0
    return out


def test_the_shipped_sample_is_the_script_output(tmp_path):
    # The script makes the same table again (the columns and values of the Hugging Face schema).
    script = SAMPLES / "make_parquet_sample.py"
    shutil.copy(script, tmp_path)
    shutil.copy(PGN, tmp_path)
    subprocess.run([sys.executable, str(tmp_path / script.name)], check=True, capture_output=True)
    made = pq.read_table(tmp_path / TWIN.name)
    assert made.equals(pq.read_table(TWIN))
    assert pq.ParquetFile(TWIN).metadata.num_row_groups == 5
    schema = pq.read_schema(TWIN)
    assert schema.names[:18] == ["Event", "Site", "White", "Black", "Result", "WhiteTitle", "BlackTitle",
                                 "WhiteElo", "BlackElo", "WhiteRatingDiff", "BlackRatingDiff", "UTCDate",
                                 "UTCTime", "ECO", "Opening", "Termination", "TimeControl", "movetext"]
    assert schema.field("WhiteElo").type == pa.int16() and schema.field("UTCDate").type == pa.date32()
    first = made.slice(0, 1).to_pylist()[0]
    assert first["UTCDate"] == datetime.date(2022, 4, 16) and first["WhiteElo"] == 3318
    assert first["movetext"].startswith("1. d4 { [%eval 0.3] [%clk 0:01:00] } 1... d5")
    assert first["movetext"].endswith("50. bxc3 { [%eval 9.65] [%clk 0:00:05] } 1-0")


def test_parquet_twin_gives_the_pgn_tables(tmp_path, pgn_report):
    out = tmp_path / "table"
    res = run("analyze", TWIN, "-o", out, "--silent", "--jobs", "1", "--cross-check", "off")
    assert res.exit_code == 0, res.output
    assert_twins(tables(pgn_report), tables(out))
    a = json.loads((pgn_report / "summary.json").read_text())
    b = json.loads((out / "summary.json").read_text())
    assert b.pop("sources") == [str(TWIN)] and a.pop("sources") == [str(PGN)]
    assert a == b
    assert b["games_read"] == 300 and b["positions"] == 25805


def test_tags_come_as_pgn_writes_them():
    games = list(TableReader(TWIN))
    assert len(games) == 300
    g = games[0]
    assert g.tags["WhiteElo"] == "3318" and g.tags["UTCDate"] == "2022.04.16" and g.tags["UTCTime"] == "23:59:05"
    assert g.tags["Date"] == "2022.04.16" and g.tags["Variant"] == "Standard" and g.tags["Result"] == "1-0"
    assert g.result == "1-0" and g.sans[:3] == ["d4", "d5", "Nc3"]
    assert (g.source, g.index, g.line, g.byte_offset) == (str(TWIN), 0, 1, 0)
    # A null is a missing tag (15 White players have no title).
    assert sum("WhiteTitle" not in g.tags for g in games) == 15


def test_a_range_of_row_groups_gives_the_games_of_the_whole_read():
    whole = list(TableReader(TWIN))
    part = list(TableReader(TWIN, row_groups=range(2, 4)))
    assert [g.index for g in part] == list(range(128, 256))
    assert [(g.sans, g.tags, g.line) for g in part] == [(g.sans, g.tags, g.line) for g in whole[128:256]]


def test_arrow_ipc_and_feather_v1_as_parquet(tmp_path, pgn_report):
    table = pq.read_table(TWIN)
    ipc = tmp_path / "games.data"  # told by content, whatever the name
    feather.write_feather(table, ipc)
    v1 = tmp_path / "games.fea"
    with warnings.catch_warnings():  # (deprecated, still read)
        warnings.simplefilter("ignore", DeprecationWarning)
        feather.write_feather(table.combine_chunks(), v1, version=1)
    assert (table_kind(ipc), table_kind(v1), table_kind(TWIN)) == ("arrow", "feather", "parquet")
    for path in (ipc, v1):
        out = tmp_path / path.name.replace(".", "-")
        assert run("analyze", path, "-o", out, "--silent", "--jobs", "1", "--cross-check", "off").exit_code == 0
        assert_twins(tables(pgn_report), tables(out))


def _pgn_moves(report) -> tuple[list[list[str]], list[list[str]]]:
    pos = report.positions
    san = pos.groupby("game_index").san.apply(list)
    uci = pos.groupby("game_index").uci.apply(list)
    return [san.get(i, []) for i in range(300)], [uci.get(i, []) for i in range(300)]


def test_san_list_and_uci_inputs(tmp_path):
    ref = chessscan.scan(str(PGN), jobs=1, cross_check="off")
    san, uci = _pgn_moves(ref)
    tags = pq.read_table(TWIN).drop_columns(["movetext"])
    paths = {
        "san-list.parquet": tags.append_column("moves_san", pa.array(san, pa.list_(pa.string()))),
        "uci-list.parquet": tags.append_column("MOVES_UCI", pa.array(uci, pa.list_(pa.string()))),
        "uci-string.parquet": tags.append_column("transcript", pa.array([" ".join(m) for m in uci])),
    }
    keep = ["game_index", "ply", "uci", "in_check", "check_kind", "is_checkmate", "is_stalemate", "zobrist",
            "repetition"]
    for name, table in paths.items():
        pq.write_table(table, tmp_path / name, row_group_size=100)
        got = chessscan.scan(str(tmp_path / name), jobs=1, cross_check="off")
        pd.testing.assert_frame_equal(got.positions[keep], ref.positions[keep])
        # No termination marker in a list or a transcript: the Result column alone.
        assert "missing-result" not in set(got.issues.code)
        assert got.summary["checkmates"] == ref.summary["checkmates"] == 40
        if name.startswith("uci"):
            # UCI is played as the PGN reader plays it: one warning a game, and a mate is one
            # "written without '#'" (UCI has no suffix).
            counts = {k: v for k, v in got.issues.code.value_counts().items() if v}
            assert counts == {"uci-move": 300, "suffix-mismatch": 40}  # (a game's moves reported once)
            assert got.summary["issues_by_code"]["uci-move"] == 25805  # (the summary counts each)
        else:
            # A list of moves holds no comments: no clock or evaluation (the PGN has them).
            notes = ["clock_ms", "emt_ms", "eval_cp", "eval_mate"]
            assert got.positions[notes].isna().all().all() and ref.positions.clock_ms.notna().all()
            pd.testing.assert_frame_equal(got.positions.drop(columns=notes), ref.positions.drop(columns=notes).assign(
                source=pd.Categorical([str(tmp_path / name)] * len(ref.positions))), check_dtype=False,
                check_categorical=False)
            assert got.issues.empty


def test_issues_locate_row_and_position_in_the_movetext(tmp_path):
    table = pa.table({
        "White": ["A", "B", "C", "D"],
        "Result": ["1-0", "*", "*", "*"],
        "movetext": ["1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0",     # a clean mate
                     "1. e4 {a comment} e5 2. Ke3 *",                   # illegal move at character 25
                     "1. d4\n1... d5 2. c4 $1 ( 2. Nf3 ) zz *",         # a token that is no move
                     "1. e4 e5"],                                       # no termination marker
        "moves_san": [None, None, None, None],  # (movetext comes first among the well-known names)
    })
    path = tmp_path / "errors.parquet"
    pq.write_table(table, path)
    issues = chessscan.scan(str(path), jobs=1, cross_check="off").issues
    got = [tuple(None if pd.isna(v) else v for v in (r.game_index, r.line, r.column, r.ply, r.code))
           for r in issues.itertuples()]
    assert got == [(1, 2, 25, 3, "illegal-move"), (2, 3, 35, 4, "unexpected-token"),
                   (3, 4, None, None, "missing-result")]
    # A list: the column is the move's place in the list.
    lists = pa.table({"moves_san": [["e4", "e5", "Ke3"], ["d4", "d5"]], "Result": ["*", "*"]})
    pq.write_table(lists, tmp_path / "lists.parquet")
    issues = chessscan.scan(str(tmp_path / "lists.parquet"), jobs=1, cross_check="off").issues
    assert [(r.line, r.column, r.ply, r.code, r.san) for r in issues.itertuples()] == [
        (1, 3, 3, "illegal-move", "Ke3")]


def test_a_table_with_no_moves_column_is_one_error_and_the_rest_is_read(tmp_path):
    path = tmp_path / "players.parquet"
    pq.write_table(pa.table({"White": ["A"], "Black": ["B"], "moves": ["1. e4 *"]}), path)
    out = tmp_path / "r"
    res = run("analyze", path, PGN, "-o", out, "--jobs", "1", "--silent", "--cross-check", "off")
    assert res.exit_code == 2
    assert res.stderr.splitlines()[0] == (
        f"{path}: error[unsupported-input]: {path} has no moves column (movetext, moves_san, moves_uci, "
        "transcript; or name it with --moves-column): its columns are White, Black, moves")
    assert json.loads((out / "summary.json").read_text())["games_read"] == 300
    # Named with --moves-column, the column is read (as PGN movetext), in analyze and validate.
    res = run("validate", path, "--moves-column", "Moves")
    assert res.exit_code == 0 and res.stderr.splitlines()[0] == "1 game: 1 ok, 0 with errors, 0 warnings"
    res = run("validate", path, "--moves-column", "nothing")
    assert res.exit_code == 2 and "has no column 'nothing' (--moves-column); its columns: White, Black, moves" \
        in res.stdout


def test_a_corrupt_footer_is_one_line_and_the_rest_is_read(tmp_path):
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(TWIN.read_bytes()[:-100])
    out = tmp_path / "r"
    res = run("analyze", cut, PGN, "-o", out, "--jobs", "1", "--silent", "--cross-check", "off")
    assert res.exit_code == 2
    lines = [ln for ln in res.stderr.splitlines() if str(cut) in ln]
    assert len(lines) == 2 and lines[0].startswith(
        f"{cut}: error[truncated-input]: {cut}: not a readable Parquet file (truncated or corrupt: ")
    assert lines[1].startswith("error: 1 input could not be analyzed")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["games_read"] == 300 and summary["sources"] == [str(PGN)]
    issues = pd.read_parquet(out / "issues")
    assert issues.code.tolist() == ["truncated-input"]


def test_a_corrupt_row_group_ends_the_file_with_an_error(tmp_path):
    # Pages of the last row group overwritten: the rows before it are read, then one error.
    data = bytearray(TWIN.read_bytes())
    meta = pq.ParquetFile(TWIN).metadata
    start = min(meta.row_group(4).column(i).data_page_offset for i in range(meta.num_columns))
    data[start:start + 4000] = b"\xff" * 4000
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(bytes(data))
    report = chessscan.scan(str(bad), jobs=1, cross_check="off")
    assert report.summary["games_read"] == 257  # 256 rows, then an empty game with the error
    assert report.issues.code.tolist() == ["truncated-input"] and report.issues.line.tolist() == [257]


def test_folders_hive_partitions_and_report_folders(tmp_path):
    data = tmp_path / "data"
    for month in ("01", "02"):
        (data / "year=2022" / f"month={month}").mkdir(parents=True)
        shutil.copy(TWIN, data / "year=2022" / f"month={month}" / "train-0.parquet")
    chess960 = data / "Variant=Chess960"
    chess960.mkdir()
    small = pq.read_table(TWIN).slice(0, 2).drop_columns(["Variant"])
    pq.write_table(small, chess960 / "x.parquet")
    # A report folder (its manifest) is not read as input.
    (data / "report").mkdir()
    (data / "report" / REPORT_MANIFEST).write_text("{}")
    (data / "report" / "positions").mkdir()
    shutil.copy(TWIN, data / "report" / "positions" / "part-000000.parquet")
    assert REPORT_MANIFEST == MANIFEST_NAME
    found = resolve_each([str(data)])
    assert found == [str(chess960 / "x.parquet"), str(data / "year=2022/month=01/train-0.parquet"),
                     str(data / "year=2022/month=02/train-0.parquet")]
    games = list(TableReader(chess960 / "x.parquet"))
    assert [g.tags["Variant"] for g in games] == ["Chess960", "Chess960"]  # from its folder's name
    assert "year" not in games[0].tags  # (not a tag)


def test_issues_of_a_table_located_in_a_worker(tmp_path):
    """A table's games analyzed by worker processes (--jobs 2) give the issues rows, with
    their place in the movetext, of one process: a game sent to a worker keeps how its moves
    were written (it had lost it, and locating its first issue raised AttributeError)."""
    path = tmp_path / "uci.parquet"
    pq.write_table(pa.table({"moves_uci": ["f2f3 e7e5 g2g4 d8h4", "e2e4 e7e5 e1e3"], "Result": ["0-1", "*"]}), path)
    from chessscan.engines import parallel

    frames = []
    for jobs in ("1", "2"):
        out = tmp_path / jobs
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(parallel, "_WORK_WHILE_POOL_STARTS", False)  # the table's games go to a worker
            res = run("analyze", SAMPLES / "lichess-magnus-300.pgn", path, "--silent", "-o", out, "--jobs", jobs)
        assert res.exit_code == 0, res.output
        frames.append(chessscan.read_report(out).issues)
    pd.testing.assert_frame_equal(frames[1], frames[0])
    got = frames[0].query("code == 'illegal-move'")
    assert (got.line.tolist(), got.column.tolist()) == ([2], [11])


def test_jobs_2_and_dask_equal_one_process(tmp_path, pgn_report):
    ref = tmp_path / "one"
    args = [TWIN, PGN, "--silent", "--cross-check", "sample"]
    assert run("analyze", *args, "-o", ref, "--jobs", "1").exit_code == 0
    two = tmp_path / "two"
    from chessscan.engines import parallel

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(parallel, "_WORK_WHILE_POOL_STARTS", False)
        assert run("analyze", *args, "-o", two, "--jobs", "2").exit_code == 0
    expected = tables(ref)
    for name, frame in tables(two).items():
        pd.testing.assert_frame_equal(frame, expected[name])
    assert json.loads((two / "summary.json").read_text()) == json.loads((ref / "summary.json").read_text())
    pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    from chessscan.analysis.options import AnalysisOptions
    from chessscan.engines.dask import plan_shards, run_dask

    # (the .zst file: read by the client, and sent to the workers in chunks)
    assert [(s.kind, s.source) for s in plan_shards([str(TWIN), str(PGN)])] == [("table", str(TWIN)),
                                                                              ("stream", str(PGN))]
    out = tmp_path / "dask"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        tally = run_dask([str(TWIN), str(PGN)], str(out), AnalysisOptions(cross_check="sample"), client=client)
    summary = json.loads((ref / "summary.json").read_text())
    del summary["sources"]
    assert tally.as_dict() == summary
    got = {p.name: pd.read_parquet(p, dtype_backend="numpy_nullable") for p in out.iterdir() if p.is_dir()}
    for name, frame in got.items():
        want = expected[name]
        pd.testing.assert_frame_equal(frame.reset_index(drop=True).astype(want.dtypes.to_dict()), want,
                                      check_categorical=False)


def test_validate_refuses_baselines_of_a_table(tmp_path):
    # (the split of tables: test_validate_split_tables.py)
    for option in ("--baseline", "--write-baseline"):
        res = run("validate", TWIN, option, tmp_path / "b.json")
        assert res.exit_code == 2 and "not a game table" in res.output
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- URLs


def test_s3_inputs_give_the_local_tables(tmp_path, s3_endpoint, pgn_report):
    out = tmp_path / "s3"
    twin = "s3://games/hf/data/year=2022/month=04/train-00000-of-00001.parquet"
    pgn = "s3://games/pgn/lichess-magnus-300.pgn.zst"
    res = run("analyze", "s3://games/hf/data", pgn, "-o", out, "--silent", "--jobs", "1", "--cross-check", "off")
    assert res.exit_code == 0, res.output
    got = tables(out)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["sources"] == [twin, pgn] and summary["games_read"] == 600
    expected = tables(pgn_report)
    by_source = {s: {n: f[f.source == s].reset_index(drop=True) for n, f in got.items()} for s in (twin, pgn)}
    assert_twins(expected, by_source[twin])
    pd.testing.assert_frame_equal(same_name(by_source[pgn]["games"]), same_name(expected["games"]))
    # A glob is listed through the file system, every match read in name order.
    found = resolve_each(["s3://games/*/*.pgn.zst", "s3://games/hf/data/year=*/month=0[1-4]/*.parquet"])
    assert found == [pgn, twin]
    # On Dask, the workers open the objects themselves (through fsspec).
    pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    from chessscan.analysis.options import AnalysisOptions
    from chessscan.engines.dask import plan_shards, run_dask

    assert [(s.kind, s.path) for s in plan_shards([twin, pgn])] == [("table", twin), ("pgn", pgn)]
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        tally = run_dask([twin, pgn], str(tmp_path / "dask"), AnalysisOptions(cross_check="off"), client=client)
    assert tally.games == 600 and tally.positions == 2 * 25805
    parts = pd.read_parquet(tmp_path / "dask" / "games", dtype_backend="numpy_nullable")
    pd.testing.assert_frame_equal(parts.astype(got["games"].dtypes.to_dict()), got["games"], check_categorical=False)
    # An unknown bucket: one line, exit 2, the other input still read.
    res = run("analyze", "s3://no-such-bucket/games.pgn", pgn, "-o", tmp_path / "r2", "--silent", "--jobs", "1")
    assert res.exit_code == 2
    assert res.stderr.splitlines()[0] == ("s3://no-such-bucket/games.pgn: error[unreadable-input]: no such object, "
                                          "folder or match")
    assert json.loads((tmp_path / "r2" / "summary.json").read_text())["games_read"] == 300


def test_https_input(tmp_path, pgn_report):
    pytest.importorskip("aiohttp", reason="aiohttp (the http extra) is not installed")
    handler = functools.partial(_QuietHandler, directory=str(SAMPLES))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        out = tmp_path / "http"
        res = run("analyze", f"{base}/{TWIN.name}", f"{base}/{PGN.name}", "-o", out, "--silent", "--jobs", "1",
                  "--cross-check", "off")
        assert res.exit_code == 0, res.output
        got = tables(out)
        twin = {n: f[f.source == f"{base}/{TWIN.name}"].reset_index(drop=True) for n, f in got.items()}
        assert_twins(tables(pgn_report), twin)
        # EPD too, told by its name as a local file is.
        epd = SAMPLES / "arasan-wacnew.epd"
        remote = chessscan.scan(f"{base}/{epd.name}", jobs=1, cross_check="off").epd_positions
        local = chessscan.scan(str(epd), jobs=1, cross_check="off").epd_positions
        assert len(remote) == 300
        pd.testing.assert_frame_equal(same_name(remote), same_name(local))
        res = run("validate", f"{base}/missing.pgn")  # (the only input: the run cannot start)
        assert res.exit_code == 2
        assert res.output == f"Error: cannot read input: no such object, folder or match: {base}/missing.pgn\n"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """A static file server that answers byte ranges (``Range: bytes=A-B``), as object stores
    and the Hub do: a Parquet reader reads the footer first."""

    def log_message(self, *args) -> None:
        pass

    def send_head(self):
        wanted = self.headers.get("Range", "")
        path = Path(self.translate_path(self.path))
        if not wanted.startswith("bytes=") or not path.is_file():
            return super().send_head()
        data = path.read_bytes()
        first, _, last = wanted[6:].partition("-")
        start = int(first) if first else len(data) - int(last)
        end = min(int(last), len(data) - 1) if first and last else len(data) - 1
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        self.send_header("Content-Length", str(end - start + 1))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        import io

        return io.BytesIO(data[start:end + 1])


def test_a_url_whose_file_system_is_missing_names_the_extra(tmp_path, monkeypatch):
    import fsspec.core

    def missing(url, **kwargs):
        raise ImportError("Please install gcsfs to access Google Storage")

    monkeypatch.setattr(fsspec.core, "url_to_fs", missing)
    res = run("analyze", "gs://bucket/games.pgn.zst", PGN, "-o", tmp_path / "r", "--silent", "--jobs", "1")
    assert res.exit_code == 2
    assert res.stderr.splitlines()[0] == (
        "gs://bucket/games.pgn.zst: error[unreadable-input]: reading gs:// needs its file system: pip install "
        "'chessscan[gcs]' (from a checkout: pip install '.[gcs]') (Please install gcsfs to access Google Storage)")
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["games_read"] == 300
