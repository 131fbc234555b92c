"""The Python API: scan()'s defaults and result shape, read_report() on every report layout,
the perpetuals table's columns, result_consistent for games cut short."""

from __future__ import annotations

import inspect

import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import chessscan
from chessscan.cli import analyze, main
from chessscan.reports.reader import Report
from conftest import SAMPLES, shared_skip_reason

MAGNUS = SAMPLES / "lichess-magnus-300.pgn"
WAC = SAMPLES / "arasan-wacnew.epd"


@pytest.fixture(scope="module")
def magnus():
    return chessscan.scan(MAGNUS, jobs=1)


def write_report(out, *paths, fmt="parquet"):
    res = CliRunner().invoke(main, ["analyze", *map(str, paths), "-o", str(out), "--format", fmt, "--silent",
                                    "--jobs", "1"])
    assert res.exit_code == 0, res.output
    return out


def test_scan_defaults_agree_with_the_cli():
    params = inspect.signature(chessscan.scan).parameters
    cli = {p.name: p.default for p in analyze.params}
    assert params["cross_check"].default == cli["cross_check"] == "sample"
    assert params["positions"].default == cli["positions"] == "all"
    assert params["jobs"].default is None and cli["jobs"] is None  # every core


def test_scan_returns_a_report_with_attributes(magnus):
    assert isinstance(magnus, Report)
    names = {"positions", "games", "perpetuals", "issues", "disagreements", "summary"}
    assert names <= set(dir(magnus))
    assert magnus.epd_positions is None  # no EPD input
    with pytest.raises(KeyError, match="'epd_positions': not written by this run; the tables present: positions, games"):
        magnus["epd_positions"]
    with pytest.raises(KeyError, match="'game': not a table name"):
        magnus["game"]
    assert set(magnus.keys()) == {"positions", "games", "perpetuals", "issues", "disagreements"}
    assert len(magnus.games) == 300 and len(magnus.positions) == magnus.summary["positions"]
    assert magnus["games"] is magnus.games and magnus["summary"] is magnus.summary
    assert isinstance(magnus.summary, dict) and "summary" not in magnus.tables
    # The sampled cross-check ran, as with the CLI.
    assert magnus.summary["cross_check"]["games"] >= 6 and magnus.summary["cross_check"]["disagreements"] == 0
    assert repr(magnus).startswith("Report(positions=")


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_read_report_gives_the_documented_dtypes(tmp_path, magnus, fmt):
    report = chessscan.read_report(write_report(tmp_path / "r", MAGNUS, fmt=fmt))
    assert report.summary["games_read"] == 300
    for name, expected in magnus.tables.items():
        got = report.tables[name]
        assert dict(got.dtypes) == dict(expected.dtypes), name
        pd.testing.assert_frame_equal(got, expected, check_exact=True, obj=name)
    games, positions = report.games, report.positions
    assert str(games.result_consistent.dtype) == "boolean"
    assert str(games.perpetuals.dtype) == "Int32" and str(games.error_ply.dtype) == "Int32"
    assert str(positions.zobrist.dtype) == "UInt64"
    # An empty checkers field stays the empty string, not NaN.
    quiet = positions[~positions.in_check]
    assert len(quiet) and (quiet.checkers == "").all()


def test_read_report_reads_dask_datasets(tmp_path, magnus):
    # The layout of `analyze --dask`: OUTPUT/<table>/part-NNNNNN.parquet, in input order.
    single = write_report(tmp_path / "single", MAGNUS)
    dataset = tmp_path / "dataset"
    for name in ("positions", "games", "perpetuals", "issues"):
        table = pq.read_table(single / name)
        (dataset / name).mkdir(parents=True)
        half = table.num_rows // 2
        pq.write_table(table.slice(0, half), dataset / name / "part-000000.parquet")
        pq.write_table(table.slice(half), dataset / name / "part-000001.parquet")
    # No summary.json: a run that did not finish, unless the caller asks for what is there.
    from chessscan.reports.reader import IncompleteReport, IncompleteReportWarning

    with pytest.raises(IncompleteReport, match=r"has no summary.json.*\(positions: 2 parts, games: 2 parts, "
                                               r"issues: 2 parts, perpetuals: 2 parts\)"):
        chessscan.read_report(dataset)
    with pytest.warns(IncompleteReportWarning, match="read what is there .positions: 2 parts, games: 2 parts"):
        report = chessscan.read_report(dataset, incomplete="ok")
    assert report.summary is None
    for name in ("positions", "games", "perpetuals", "issues"):
        pd.testing.assert_frame_equal(report.tables[name], magnus.tables[name], obj=name)


def test_read_report_epd_and_fen_columns(tmp_path):
    out = tmp_path / "r"
    res = CliRunner().invoke(main, ["analyze", str(WAC), str(MAGNUS), "-o", str(out), "--fen", "--silent",
                                    "--jobs", "1", "--format", "csv"])
    assert res.exit_code == 0
    report = chessscan.read_report(out)
    assert len(report.epd_positions) == 300 and str(report.epd_positions.legal_moves.dtype) == "Int32"
    import chess

    board = chess.Board()
    board.push_san(report.positions.san.iloc[0])
    assert report.positions.fen.iloc[0] == board.fen() == "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1"


def test_read_report_refuses_a_folder_without_tables(tmp_path):
    with pytest.raises(FileNotFoundError, match="holds no chessscan report table"):
        chessscan.read_report(tmp_path)
    with pytest.raises(FileNotFoundError, match="no report folder"):
        chessscan.read_report(tmp_path / "nope")


def test_perpetuals_name_the_players_and_merge_with_games(magnus):
    per, games = magnus.perpetuals, magnus.games
    assert len(per) == 14
    assert set(per.columns) & set(games.columns) == {"source", "game_index"}
    merged = per.merge(games, on=["source", "game_index"], validate="many_to_one")
    assert len(merged) == 14 and not any(c.endswith(("_x", "_y")) for c in merged.columns)
    white = merged.side == "white"
    assert (merged.checking_player[white] == merged.white[white]).all()
    assert (merged.checking_player[~white] == merged.black[~white]).all()
    assert (merged.checked_player[white] == merged.black[white]).all()
    assert (merged.game_result == merged.result).all()
    assert merged.checking_player.str.len().gt(0).all()


def test_result_consistent_is_unknown_for_a_game_cut_short(tmp_path):
    path = tmp_path / "g.pgn"
    path.write_text(
        '[Event "illegal"]\n[Result "1-0"]\n\n1. e4 e5 2. Ke3 Nf6 1-0\n\n'
        '[Event "bad token"]\n[Result "0-1"]\n\n1. e4 e5 2. Nf3 %% 0-1\n\n'
        '[Event "mismatch too"]\n[Result "1-0"]\n\n1. e4 e5 2. Kf3 0-1\n\n'
        '[Event "clean"]\n[Result "*"]\n\n1. e4 e5 *\n')
    games = chessscan.scan(path, jobs=1, cross_check="off").games
    assert games.error_code.tolist()[:3] == ["illegal-move", "unexpected-token", "illegal-move"]
    assert games.result_consistent.isna().tolist() == [True, True, False, False]
    assert games.result_consistent.tolist()[2:] == [False, True]


def test_skip_reason_says_the_shared_data_set_is_absent(tmp_path):
    reason = shared_skip_reason(tmp_path / "shared" / "data" / "messy")
    assert "large shared data set" in reason and "absent" in reason
    assert "project's machines" not in reason


def test_scan_reads_folders_and_reports_bad_paths_like_the_cli(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "wac.epd").write_bytes(WAC.read_bytes())
    report = chessscan.scan([folder, tmp_path / "gone.pgn"], jobs=1, cross_check="off")
    assert len(report.epd_positions) == 300
    assert report.issues.query("code == 'unreadable-input'").source.tolist() == [str(tmp_path / "gone.pgn")]
    assert report.summary["issues_by_code"]["unreadable-input"] == 1
    assert report.summary["sources"] == [str(folder / "wac.epd")]
    with pytest.raises(FileNotFoundError, match="no such file"):
        chessscan.scan(tmp_path / "gone.pgn")
    (tmp_path / "empty.pgn").write_text("")
    summary = chessscan.scan(tmp_path / "empty.pgn", jobs=1).summary
    assert (summary["sources"], summary["cross_check"]["mode"], summary["issues_by_code"]) == (
        [], "sample", {"empty-input": 1})


@pytest.mark.parametrize("jobs", [1, 2])
def test_scan_reports_repeated_facts_once_as_analyze(tmp_path, monkeypatch, jobs):
    """scan's issues table is analyze's: a game's UCI moves are one row, a file's games not
    in UTF-8 one row, each with its count in the message (chessscan.reports.filters)."""
    import io

    import chess.pgn

    import chessscan.engines.parallel as parallel

    monkeypatch.setattr(parallel, "_all_under_a_chunk", lambda paths, batch_bytes: False)  # small: still chunks
    monkeypatch.setattr(parallel, "_WORK_WHILE_POOL_STARTS", False)  # the chunks of a full one go to workers
    games = pd.read_parquet(SAMPLES / "lichess-magnus-300.parquet").head(3)
    uci = [" ".join(m.uci() for m in chess.pgn.read_game(io.StringIO(t)).mainline_moves()) for t in games.movetext]
    table = tmp_path / "uci.parquet"
    pd.DataFrame({"moves_uci": uci, "Result": games.Result}).to_parquet(table)
    uci_pgn = tmp_path / "uci.pgn"
    uci_pgn.write_text("".join(f'[Result "{r}"]\n\n{m} {r}\n\n' for m, r in zip(uci, games.Result)))
    latin = tmp_path / "latin.pgn"  # every game in Latin-1: more than one chunk (workers with jobs=2,
    # which then take the table's games too)
    latin.write_bytes(MAGNUS.read_text().replace('[White "', '[White "Müller ').encode("latin-1"))
    latin2 = tmp_path / "latin2.pgn"
    latin2.write_bytes(latin.read_bytes())
    for i, paths in enumerate(([table], [latin], [uci_pgn, latin, table, latin2])):
        out = tmp_path / f"out{i}"
        res = CliRunner().invoke(main, ["analyze", *map(str, paths), "-o", str(out), "--silent", "--jobs", str(jobs)])
        assert res.exit_code == 0, res.output
        analyzed = chessscan.read_report(out).issues
        scanned = chessscan.scan(paths, jobs=jobs).issues
        pd.testing.assert_frame_equal(scanned, analyzed)
    assert scanned.code.value_counts()[["uci-move", "decode-fallback"]].tolist() == [6, 2]
    assert scanned.message[scanned.code == "decode-fallback"].str.endswith(
        "; 300 games of this file are decoded so (reported once)").all()
    assert scanned.message[scanned.code == "uci-move"].str.contains(
        r"\(\d+ moves of this game are written so; reported once\)$").all()


def test_closed_vocabulary_categoricals_survive_concat(tmp_path):
    # Two runs' tables concatenate into categoricals, not text, whatever values each run met:
    # a column with a fixed set of values has that whole set as its categories.
    short = tmp_path / "short.pgn"
    short.write_text('[Event "a"]\n[White "A"]\n[Black "B"]\n[Result "1-0"]\n\n1. e4 e5 2. Ke3 1-0\n')
    a = chessscan.scan(short, jobs=1, cross_check="off")
    b = chessscan.scan(MAGNUS, jobs=1, cross_check="off")
    assert list(a.positions.check_kind.cat.categories) == ["direct", "discovered", "double", "none"]
    assert list(a.games.outcome.cat.categories) == [
        "checkmate", "fifty_moves", "fivefold_repetition", "insufficient_material", "none",
        "seventyfive_moves", "stalemate", "threefold_repetition"]
    assert list(a.games.winner.cat.categories) == ["black", "white"]
    assert list(a.issues.severity.cat.categories) == ["error", "warning"]
    assert "unclosed-comment" in a.issues.code.cat.categories
    assert "illegal-move" in a.games.error_code.cat.categories
    assert "missing-tags" not in a.games.error_code.cat.categories  # errors only
    games = pd.concat([a.games, b.games])
    positions = pd.concat([a.positions, b.positions])
    issues = pd.concat([a.issues, b.issues])
    for column in (positions.check_kind, positions.color, games.outcome, games.winner,
                   games.error_code, issues.severity, issues.code):
        assert column.dtype == "category", column.name
    assert positions.check_kind.value_counts()["double"] == b.summary["checks"]["double"] == 2
    epd = chessscan.scan(WAC, jobs=1).epd_positions
    assert list(epd.check_kind.cat.categories) == ["double", "none", "single"]
    # The same categories read back from a report folder, Parquet or CSV.
    for fmt in ("parquet", "csv"):
        back = chessscan.read_report(write_report(tmp_path / fmt, short, fmt=fmt))
        assert back.games.outcome.dtype == a.games.outcome.dtype
        assert back.positions.check_kind.dtype == a.positions.check_kind.dtype


UNGUARDED_SCRIPT = """\
import sys
import chessscan
import chessscan.engines.parallel as parallel

# Count the worker processes started (the pool's first task may already take the chunks).
started = []
real_start = parallel._WorkerProcess.start
parallel._WorkerProcess.start = lambda self: (started.append(1), real_start(self))[1]
parallel._WORK_WHILE_POOL_STARTS = False  # every chunk after the first goes to a worker
print("body ran", flush=True)
report = chessscan.scan(sys.argv[1], jobs=2, cross_check="sample")
print("workers", len(started), flush=True)
report.summary.pop("sources")  # (the path as given: the same)
__import__("pandas").to_pickle((report.tables, report.summary), sys.argv[2])
"""


@pytest.mark.parametrize("how", ["file", "stdin"])
def test_scan_with_jobs_from_a_script_without_a_main_guard(tmp_path, how):
    """A script as people write them (no ``if __name__ == "__main__":``) calling scan(jobs=2):
    worker processes do not run it again (its body ran once per worker, then every worker
    died starting a pool of its own), and the tables are those of jobs=1. Also from stdin
    (``python - < script.py``), which has no file a worker could run."""
    import subprocess
    import sys

    script = tmp_path / "scan_games.py"
    script.write_text(UNGUARDED_SCRIPT)
    out = tmp_path / "report.pickle"
    args = [sys.executable, str(script)] if how == "file" else [sys.executable, "-"]
    res = subprocess.run([*args, str(SAMPLES / "lichess-magnus-300.pgn.zst"), str(out)], cwd=tmp_path,
                         input=UNGUARDED_SCRIPT if how == "stdin" else None, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.count("body ran") == 1, res.stdout
    workers = int(res.stdout.split("workers ")[1].split()[0])
    assert workers == 2, res.stdout
    assert "Traceback" not in res.stderr and "note:" not in res.stderr, res.stderr
    one = chessscan.scan(SAMPLES / "lichess-magnus-300.pgn.zst", jobs=1, cross_check="sample")
    tables, summary = pd.read_pickle(out)
    assert tables.keys() == one.tables.keys() and len(one.positions) == 25_805
    for name, table in one.tables.items():
        pd.testing.assert_frame_equal(tables[name], table, obj=name)
    one.summary.pop("sources")
    assert summary == one.summary
