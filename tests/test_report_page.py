"""report.html (`chessscan report`, `analyze --html`): the summary's chart data against the
tables, the page's numbers against summary.json for Parquet, CSV and --dask-style datasets,
the games with errors on boards, bounded reads, and the page in headless Chromium."""

from __future__ import annotations

import base64
import fcntl
import html
import json
import os
import re
import select
import shutil
import subprocess
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from chessscan.cli import main
from conftest import SAMPLES

pytest.importorskip("matplotlib", reason="the report extra: pip install 'chessscan[report]'")

INPUTS = [SAMPLES / "lichess-magnus-300.pgn.zst", SAMPLES / "lichess-jishanshaikh4-variants.pgn",
          SAMPLES / "arasan-wacnew.epd", SAMPLES / "sf-books-stalemates-500.epd"]

# Real openings, each with one fault: a move that ignores a check (2...Nf6 leaves the king on
# e8 in check from h5), a Result that a checkmate on the board contradicts (scholar's mate
# scored 0-1), and a clean game between them.
FAULTY_PGN = """[Event "Faulty"]
[White "Alpha"]
[Black "Beta"]
[Result "1-0"]

1. e4 f5 2. Qh5+ Nf6 3. Qe8# 1-0

[Event "Clean"]
[White "Gamma"]
[Black "Delta"]
[Result "1/2-1/2"]

1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 1/2-1/2

[Event "Mismatch"]
[White "Epsilon"]
[Black "Zeta"]
[Result "0-1"]

1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 0-1
"""


def analyze(out: Path, paths, *args) -> Path:
    result = CliRunner().invoke(main, ["analyze", *map(str, paths), "-o", str(out), "--silent", "--jobs", "1",
                                       *args])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return out


@pytest.fixture(scope="module")
def samples_report(tmp_path_factory) -> Path:
    """data/samples/ analyzed to Parquet, with report.html."""
    return analyze(tmp_path_factory.mktemp("samples") / "out", INPUTS, "--html")


def numbers(page: str) -> dict[str, int]:
    """The page's figures marked ``data-key``, as ints."""
    found = {}
    for key, text in re.findall(r'data-key="([^"]+)">([^<]*)<', page):
        found[html.unescape(key)] = int(text.replace(",", "")) if re.fullmatch(r"[\d,]+", text) else text
    return found


def text(part: str) -> str:
    """A part of the page as text: tags removed, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", part))


def read(folder: Path, table: str) -> pd.DataFrame:
    return pd.read_parquet(folder / table, dtype_backend="numpy_nullable")


def test_summary_chart_data_agrees_with_the_tables(samples_report):
    """The histograms, routes, results and issues-by-source the analysis adds to summary.json
    are what the tables hold."""
    s = json.loads((samples_report / "summary.json").read_text())
    games, positions, issues = (read(samples_report, t) for t in ("games", "positions", "issues"))
    h = s["histograms"]
    assert {int(k): v for k, v in h["game_length_plies"].items()} == games.plies.value_counts().to_dict()
    checks = positions[positions.in_check]
    assert {int(k): v for k, v in h["checks_by_move_number"].items()} == checks.move_number.value_counts().to_dict()
    mated = games[games.outcome == "checkmate"][["source", "game_index", "plies"]]
    mates = positions.merge(mated, left_on=["source", "game_index", "ply"], right_on=["source", "game_index", "plies"])
    assert mates.is_checkmate.all() and len(mates) == s["checkmates"] == 68
    assert {int(k): v for k, v in h["checkmates_by_move_number"].items()} == mates.move_number.value_counts().to_dict()
    assert {k: v for k, v in s["checkmate_kinds"].items() if v} == mates.check_kind.astype(str).value_counts().to_dict()
    assert s["checkmate_kinds"] == {"direct": 68, "discovered": 0, "double": 0}
    for route in ("en_passant", "castling", "promotion"):
        assert s["checkmate_routes"][route] == mates[f"by_{route}"].sum(), route
    for route in ("en_passant", "castling", "promotion"):
        got = checks[checks[f"by_{route}"]].check_kind.astype(str).value_counts().to_dict()
        assert {k: v for k, v in s["check_routes"][route].items() if v} == got, route
    assert s["check_routes"]["promotion"]["direct"] == 22 and s["check_routes"]["en_passant"]["direct"] == 2
    verdict = games.result_consistent.map({True: "consistent", False: "inconsistent"}).fillna("not_checked")
    tag = games.result.where(games.result.isin(["1-0", "0-1", "1/2-1/2", "*"]), "other").fillna("missing")
    table = pd.crosstab(tag, verdict)
    for t, row in s["results"].items():
        for v, n in row.items():
            assert (table.loc[t, v] if v in table.columns else 0) == n, (t, v)
    by_source = issues.astype({"source": str, "severity": str}).groupby(["source", "severity"]).size().to_dict()
    assert {(src, sev): n for src, d in s["issues_by_source"].items() for sev, n in d.items() if n} == by_source


def test_page_numbers_are_the_summary(samples_report):
    s = json.loads((samples_report / "summary.json").read_text())
    page = (samples_report / "report.html").read_text()
    n = numbers(page)
    for key in ("games_read", "games_ok", "games_with_errors", "positions", "checkmates", "stalemates",
                "perpetual_checks", "twofold_check_cycles", "epd_positions", "games_unsupported_variant"):
        assert n[key] == s[key], key
    assert (n["games_read"], n["positions"], n["checkmates"]) == (408, 33_156, 68)
    assert n["checks"] == sum(s["checks"].values())
    assert n["warnings"] == s["issues_by_severity"].get("warning", 0)
    for kind, count in s["checks"].items():
        assert n[f"checks.{kind}"] == count
    for key in ("checkmate_kinds", "checkmate_routes"):
        for name, count in s[key].items():
            assert n[f"{key}.{name}"] == count
    for route, kinds in s["check_routes"].items():
        for kind, count in kinds.items():
            assert n[f"check_routes.{route}.{kind}"] == count
    for outcome, count in s["outcomes"].items():
        assert n[f"outcomes.{outcome}"] == count
    for code, count in s["issues_by_code"].items():
        assert n[f"issues_by_code.{code}"] == count
    for tag, row in s["results"].items():
        for verdict, count in row.items():
            assert n[f"results.{tag}.{verdict}"] == count
    h = s["histograms"]
    assert n["games_by_length"] == s["games_read"]
    assert n["longest_game_plies"] == max(int(k) for k in h["game_length_plies"])
    assert n["checks_by_move_total"] == sum(s["checks"].values())
    assert n["checkmates_by_move_total"] == s["checkmates"]
    assert n["rows.positions"] == s["positions"] and n["rows.games"] == s["games_read"]
    assert n["rows.epd_positions"] == s["epd_positions"]
    # run.json's facts, and the page is self-contained.
    run = json.loads((samples_report / "run.json").read_text())
    assert run["options"]["format"] == "parquet" and run["elapsed_seconds"] > 0
    assert "positions_per_second" in n
    assert page.count("<svg") >= 8 + 3  # the charts, and boards of the rare events
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", page) and "<script" not in page
    # The data dictionary is the schemas: every column of every table, with its doc.
    from chessscan.reports.schema import TABLE_SPECS

    for table, columns in TABLE_SPECS.items():
        assert f'id="table-{table}"' in page
        for c in columns:
            assert f"<code>{c.name}</code>" in page and html.escape(c.doc, quote=True) in page


def test_the_median_game_length_is_the_median(tmp_path, samples_report):
    """The mean of the two middle games for an even count, not the lower one."""
    import statistics

    h = json.loads((samples_report / "summary.json").read_text())["histograms"]["game_length_plies"]
    lengths = [int(plies) for plies, games in h.items() for _ in range(games)]
    assert f"median {statistics.median(lengths):g} plies" in text((samples_report / "report.html").read_text())
    two = tmp_path / "two.pgn"  # 2 and 5 plies: the median is 3.5
    two.write_text('[Event "a"]\n\n1. e4 e5 *\n\n[Event "b"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 *\n')
    page = (analyze(tmp_path / "out", [two], "--html") / "report.html").read_text()
    assert "mean 3.5 plies, median 3.5 plies" in text(page)


def test_rare_events_are_drawn(samples_report):
    page = (samples_report / "report.html").read_text()
    section = page[page.index("Rare events"):page.index('id="dictionary"')]
    # The two en-passant checks of the Magnus sample (ply 73 gxh6+, ply 45 gxf6+), the castling
    # check (O-O-O+), and the two perpetual checks of the variants file.
    assert "gxh6+" in section and "gxf6+" in section and "O-O-O+" in section
    assert section.count("occurrences, result") == 2
    assert section.count("<svg") == 2 + 1 + 2


def test_a_perpetual_check_is_drawn_at_its_last_check(samples_report):
    """The card says "the last check of a run": it shows and draws that check, the side's
    last move up to last_ply (the repeated position may stand after the checked side's reply,
    which the card drew before)."""
    page = (samples_report / "report.html").read_text()
    section = page[page.index("<h3>perpetual checks</h3>"):page.index('id="dictionary"')]
    perpetuals = read(samples_report, "perpetuals").query("occurrences >= 3")
    positions = read(samples_report, "positions")
    found = re.findall(r'· <span class="gi">game_index (\d+)</span></div><div><b>[^<]*</b></div><div>(\w+) '
                       r"checks \d+ times, plies \d+–(\d+), .*?the last check: ply (\d+) <code>([^<]+)</code>",
                       section)
    assert len(found) == 2
    for game_index, side, last_ply, ply, san in found:
        run = perpetuals[(perpetuals.game_index == int(game_index)) & (perpetuals.last_ply == int(last_ply))]
        assert len(run) == 1 and run.side.iloc[0] == side
        row = positions[(positions.source == run.source.iloc[0]) & (positions.game_index == int(game_index))
                        & (positions.ply == int(ply))].iloc[0]
        assert row.san == san and row.in_check and row.color == side and int(ply) <= int(last_ply)
        later = positions[(positions.source == run.source.iloc[0]) & (positions.game_index == int(game_index))
                          & (positions.ply > int(ply)) & (positions.ply <= int(last_ply))]
        assert not (later.color == side).any()  # no later move of that side in the run


def test_shares_counts_and_labels_say_what_the_tables_say(tmp_path, samples_report):
    """Shares as stderr writes them (15 of 333,596 games: 0.0045%, not 0.0%); issues found
    (every occurrence, as summary.json) beside the issues table's rows; '1 ply'; the
    data dictionary's flags column has a header; many sources are counted in the header."""
    from chessscan.reports.summary import percent

    out = tmp_path / "out"
    shutil.copytree(samples_report, out)
    summary = json.loads((out / "summary.json").read_text())
    summary.update(games_read=333_596, games_ok=333_581, games_with_errors=15)
    (out / "summary.json").write_text(json.dumps(summary))
    assert CliRunner().invoke(main, ["report", str(out)]).exit_code == 0
    page = (out / "report.html").read_text()
    assert "games with errors (0.0045%)" in page and "games ok (&gt;99.9%)" in page
    assert percent(15, 333_596) == "0.0045%"
    header = page[page.index("<header>"):page.index("</header>")]
    assert text(header).endswith(f"4 files: {INPUTS[0]}, {INPUTS[1]}, {INPUTS[2]}, ...")
    assert "<details><summary>4 files</summary>" in page
    assert "<th>column</th><th>type</th><th>flags</th><th>meaning</th>" in page

    # uci-move: 3 found in one game, one row in the issues table; an error at ply 2: 1 ply.
    pgn = tmp_path / "uci.pgn"
    pgn.write_text('[Event "U"]\n\n1. e2e4 e7e5 2. g1f3 b8c6 *\n\n[Event "E"]\n\n1. e4 Ke7 *\n')
    out = analyze(tmp_path / "uci", [pgn], "--html")
    page = (out / "report.html").read_text()
    n = numbers(page)
    assert (n["issues_by_code.uci-move"], n["issue_rows.uci-move"]) == (4, 1)
    assert (n["issues_by_code.illegal-move"], n["issue_rows.illegal-move"]) == (1, 1)
    assert (n["warnings"], n["errors"]) == (4, 1)
    assert "the issues table holds 2 rows: uci-move 4 found, 1 row (once a game)" in text(page)
    assert "1 ply replayed" in page and "1 plies" not in page


def test_every_id_on_the_page_is_unique(samples_report):
    """matplotlib numbers each figure's elements alike (figure_1, patch_1...) and python-chess
    names its pieces (white-pawn): each SVG's ids are scoped, and every reference finds its id."""
    from html.parser import HTMLParser

    class Ids(HTMLParser):
        def __init__(self):
            super().__init__()
            self.ids, self.refs = [], []

        def handle_starttag(self, tag, attrs):
            for name, value in attrs:
                if name == "id":
                    self.ids.append(value)
                elif name in ("href", "xlink:href") and value and value.startswith("#"):
                    self.refs.append(value[1:])
                elif value and "url(#" in value:
                    self.refs += re.findall(r"url\(#([^)]+)\)", value)

    page = (samples_report / "report.html").read_text()
    parser = Ids()
    parser.feed(page)
    assert len(parser.ids) > 600  # the charts' and boards' elements
    assert [i for i in set(parser.ids) if parser.ids.count(i) > 1] == []
    assert parser.refs and set(parser.refs) <= set(parser.ids)
    assert "chart-outcomes" in parser.ids and "table-games" in parser.ids  # the page's own anchors stay


def test_csv_and_dataset_reports_render_the_same_numbers(tmp_path, samples_report):
    """CSV tables, and Parquet datasets in parts as --dask writes them, give the same page."""
    csv = analyze(tmp_path / "csv", INPUTS, "--format", "csv", "--html")
    dataset = tmp_path / "dataset"
    dataset.mkdir()
    shutil.copy(samples_report / "summary.json", dataset)
    for table in ("positions", "games", "issues", "perpetuals", "epd_positions", "disagreements"):
        t = pq.read_table(samples_report / table)
        (dataset / table).mkdir()
        step = max(1, -(-t.num_rows // 3))
        for i, start in enumerate(range(0, max(t.num_rows, 1), step)):
            pq.write_table(t.slice(start, step), dataset / table / f"part-{i:06d}.parquet")
    result = CliRunner().invoke(main, ["report", str(dataset)])
    assert result.exit_code == 0, result.output
    want = numbers((samples_report / "report.html").read_text())
    for folder in (csv, dataset):
        got = numbers((folder / "report.html").read_text())
        for key in ("elapsed_seconds", "positions_per_second"):
            want.pop(key, None), got.pop(key, None)
        assert got == want, folder
    page = (dataset / "report.html").read_text()
    assert "positions/ (3 Parquet parts)" in page
    assert "disagreements/ (1 Parquet part)" in page  # no rows: one part, said in the singular
    assert page.count("<svg") == (samples_report / "report.html").read_text().count("<svg")


def test_a_dask_report_renders_the_same_numbers(tmp_path, samples_report):
    """A report written by the Dask engine (OUTPUT/<table>/part-*.parquet)."""
    pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    from chessscan.analysis.options import AnalysisOptions
    from chessscan.engines import dask as dask_engine
    from chessscan.reports.page import build_report
    from chessscan.reports.writers import ReportWriter

    out = tmp_path / "dask"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        tally = dask_engine.run_dask([str(p) for p in INPUTS], str(out), AnalysisOptions(cross_check="sample"),
                                     client=client, shard_size=256 << 10)
    summary = tally.as_dict()
    summary["sources"] = [str(p) for p in INPUTS]
    ReportWriter(out, tables=()).write_summary(summary)
    assert len(list((out / "positions").glob("part-*.parquet"))) > 1
    page = build_report(out).read_text()
    got, want = numbers(page), numbers((samples_report / "report.html").read_text())
    for key in ("elapsed_seconds", "positions_per_second"):
        want.pop(key, None)
    assert got == want


def test_games_with_errors_show_the_position_and_the_move(tmp_path):
    pgn = tmp_path / "faulty.pgn"
    pgn.write_text(FAULTY_PGN)
    out = analyze(tmp_path / "out", [pgn], "--html")
    page = (out / "report.html").read_text()
    s = json.loads((out / "summary.json").read_text())
    assert s["games_with_errors"] == 2 and numbers(page)["games_with_errors.list"] == 2
    section = page[page.index('id="errors"'):page.index("Rare events")]
    games = section.split('<div class="game">')[1:]
    assert len(games) == 2
    # The illegal move: file:line:column, its game_index as the tables hold it, players, the
    # move, the board before it (from the FEN in the message) and an arrow g8 -> f6.
    first = games[0]
    assert f"{pgn}:6:18 · game_index 0" in text(first) and "Alpha – Beta" in first
    assert "3 plies replayed" in first
    assert "illegal-move" in first and "ply 4, move <code>Nf6</code>" in first
    assert first.count("<svg") == 1 and 'class="arrow"' in first
    assert "rnbqkbnr/ppppp1pp/8/5p1Q/4P3/8/PPPP1PPP/RNB1KBNR b KQkq - 1 2" in first
    # The result that the mate contradicts, at its Result tag: the board replayed from the
    # positions table, with the mating move as the arrow.
    second = games[1]
    assert f"{pgn}:18:1 · game_index 2" in text(second) and "result-mismatch" in second
    assert "Qxf7#" in second and second.count("<svg") == 1 and 'class="arrow"' in second


def test_a_blank_fen_tag_has_no_board(tmp_path):
    # [FEN "   "] is an invalid-fen at ply 0 whose start_fen splits into no fields:
    # the page ended with an IndexError.
    pgn = tmp_path / "blank.pgn"
    pgn.write_text('[Event "Blank"]\n[White "Alpha"]\n[SetUp "1"]\n[FEN "   "]\n\n1. e4 *\n')
    out = analyze(tmp_path / "out", [pgn], "--html")
    page = (out / "report.html").read_text()
    game, = page[page.index('id="errors"'):page.index("Rare events")].split('<div class="game">')[1:]
    assert "invalid-fen" in game and "<svg" not in game
    assert "no board:  is not a placement python-chess can draw" in game


def test_the_positions_table_is_only_read_through_filters(tmp_path, samples_report, monkeypatch):
    """Bounded reads: every scan of positions is filtered (to a few games, or to rare
    events), and reads a few columns; nothing loads a table whole."""
    from chessscan.reports import page, readback

    scans = []
    real = readback.ReportTables.scan

    def spy(self, table, columns, filter=None):
        scans.append((table, tuple(columns), filter))
        return real(self, table, columns, filter)

    monkeypatch.setattr(readback.ReportTables, "scan", spy)
    monkeypatch.setattr(readback.ReportTables, "head",
                        lambda self, table, columns, filter=None, limit=10: [] if limit <= 0 else
                        [r for b in self.scan(table, columns, filter) for r in b.to_pylist()][:limit])
    page.build_report(samples_report, tmp_path / "page.html")
    positions = [s for s in scans if s[0] == "positions"]
    assert positions and all(f is not None and len(cols) <= 10 for _, cols, f in positions)
    assert all(len(cols) < 19 for _, cols, _ in scans)


def test_report_of_a_folder_that_is_no_report(tmp_path):
    result = CliRunner().invoke(main, ["report", str(tmp_path)])
    assert result.exit_code == 2 and "holds no summary.json" in result.output and result.exception is not None
    assert not isinstance(result.exception, (ValueError, KeyError))  # a clean exit, no traceback
    result = CliRunner().invoke(main, ["report", str(tmp_path / "missing")])
    assert result.exit_code == 2 and "no such folder" in result.output


def test_report_of_a_summary_or_run_json_that_is_no_object(tmp_path):
    pgn = tmp_path / "g.pgn"
    pgn.write_text('[Event "E"]\n\n1. e4 e5 *\n')
    out = analyze(tmp_path / "out", [pgn])
    (out / "run.json").write_text("[]")  # ignored, as a run.json that is not JSON
    assert CliRunner().invoke(main, ["report", str(out)]).exit_code == 0
    assert "no run.json in this folder" in (out / "report.html").read_text()
    (out / "summary.json").write_text("[1, 2]")  # was an AttributeError
    result = CliRunner().invoke(main, ["report", str(out)])
    assert result.exit_code == 2 and "not a chessscan summary (a JSON list, not an object)" in result.output
    assert not isinstance(result.exception, AttributeError)


def test_report_o_writes_over_no_file_it_did_not_write(tmp_path):
    """``report -o FILE`` refuses (exit 2, nothing written) a file of the report itself and
    any existing file, named or a link's target, that is not a page chessscan wrote; an
    earlier page is replaced (a rerun), through a link too."""
    pgn = tmp_path / "g.pgn"
    pgn.write_text('[Event "E"]\n\n1. e4 e5 *\n')
    out = analyze(tmp_path / "out", [pgn], "--format", "csv")

    def report(target):
        return CliRunner().invoke(main, ["report", str(out), "-o", str(target)])

    kept = {p: p.read_bytes() for p in [pgn, *out.iterdir()]}
    link = tmp_path / "lnk.html"
    link.symlink_to(pgn)
    for target, said in ((out / "summary.json", "is summary.json, a file of the report"),
                         (out / "run.json", "is run.json, a file of the report"),
                         (out / "games.csv", "is games.csv, a file of the report"),
                         (pgn, "is not a page chessscan wrote"),
                         (link, "(a link to ")):
        result = report(target)
        assert result.exit_code == 2 and said in result.output, result.output
    assert {p: p.read_bytes() for p in kept} == kept and not (out / "report.html").exists()
    page = tmp_path / "page.html"
    assert report(page).exit_code == 0
    assert page.read_bytes().startswith(b'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
                                        b'<meta name="generator" content="chessscan">')
    assert report(page).exit_code == 0  # a rerun replaces its own page
    link.unlink()
    link.symlink_to(page)
    page.write_bytes(b"old")  # (no longer a page: refused through the link)
    assert report(link).exit_code == 2 and page.read_bytes() == b"old"
    page.unlink()
    assert report(tmp_path / "page2.html").exit_code == 0
    (tmp_path / "page2.html").rename(page)
    assert report(link).exit_code == 0 and link.is_symlink()  # written through the link
    assert page.read_bytes().startswith(b"<!DOCTYPE html>")


def test_report_of_a_hand_edited_summary(tmp_path, samples_report):
    """A summary whose fields have other JSON types than ``analyze`` writes gets a clean
    error naming the field (each of these was an AttributeError or TypeError traceback); the
    summary as written has none, and missing top-level fields or extra fields are allowed."""
    from chessscan.reports.readback import summary_shape_problem

    written = json.loads((samples_report / "summary.json").read_text())
    assert summary_shape_problem(written) is None
    assert summary_shape_problem({"extra": [1], "games_read": 2.5}) is None
    out = tmp_path / "out"
    shutil.copytree(samples_report, out)
    for key, value, problem in [
            ("checks", None, '"checks" is null, not an object'),
            ("outcomes", [1, 2], '"outcomes" is array, not an object'),
            ("cross_check", "x", '"cross_check" is string, not an object'),
            ("games_read", "many", '"games_read" is string, not a number'),
            ("outcomes", {"checkmate": "x"}, '"outcomes.checkmate" is string, not a number'),
            ("check_routes", {}, '"check_routes" has no "en_passant"'),
            ("results", {"1-0": 3}, '"results.1-0" is number, not an object'),
            ("outcomes", {"none": {}}, '"outcomes.none" is object, not a number'),
            ("sources", None, '"sources" is null, not an array'),
            ("histograms", {**written["histograms"], "game_length_plies": {"a": 1}},
             '"histograms.game_length_plies.a" is not an integer count by an integer key'),
            ("histograms", {**written["histograms"], "checks_by_move_number": {"1": 10 ** 30}},
             '"histograms.checks_by_move_number.1" is not an integer count by an integer key'),
            ("games_read", float("nan"), '"games_read" is nan, not a finite number')]:
        (out / "summary.json").write_text(json.dumps({**written, key: value}))
        result = CliRunner().invoke(main, ["report", str(out)])
        assert result.exit_code == 2 and problem in result.output, (key, result.output)
        assert isinstance(result.exception, SystemExit)
    (out / "summary.json").write_text("[" * 100_000)  # was a RecursionError
    result = CliRunner().invoke(main, ["report", str(out)])
    assert result.exit_code == 2 and "cannot read it as JSON" in result.output
    # run.json is information only: fields of another type are left out, the page is written.
    (out / "summary.json").write_text(json.dumps(written))
    (out / "run.json").write_text(json.dumps({"options": None, "elapsed_seconds": "x", "games_per_second": None,
                                              "positions_per_second": float("nan")}))
    result = CliRunner().invoke(main, ["report", str(out)])
    assert result.exit_code == 0, result.output


# ---------------------------------------------------------------------------
# Headless Chromium, driven through the DevTools protocol on a pipe (no extra dependency)
# ---------------------------------------------------------------------------
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars"]


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        exe = shutil.which(name)
        if exe:
            return exe
    pytest.skip("no headless Chromium: Debian's 'chromium' package is not installed "
                "(.ci/run installs it with apt-get when it can)")


class DevTools:
    """A Chromium started with ``--remote-debugging-pipe``: commands go to its fd 3, replies
    and events come from its fd 4, JSON messages ended by NUL."""

    def __init__(self, exe: str, profile: Path) -> None:
        to_chrome_r, self._w = os.pipe()
        self._r, from_chrome_w = os.pipe()
        # Out of the way of 3 and 4, which the child gets.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_chrome_r, from_chrome_w)]
        os.close(to_chrome_r), os.close(from_chrome_w)

        def wire() -> None:
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        self.proc = subprocess.Popen([exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                                      "--remote-debugging-pipe", "about:blank"],
                                     preexec_fn=wire, pass_fds=(3, 4), stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        for fd in high:
            os.close(fd)
        self._next = 0
        self._buf = b""
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None,
             timeout: float = 30) -> dict:
        self._next += 1
        msg = {"id": self._next, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._w, json.dumps(msg).encode() + b"\0")
        while True:
            reply = self._read(timeout)
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 30) -> dict:
        for e in self.events:
            if e.get("method") == method:
                return e
        while True:
            e = self._read(timeout)
            self.events.append(e)
            if e.get("method") == method:
                return e

    def drain(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if not select.select([self._r], [], [], max(0.0, end - time.monotonic()))[0] and b"\0" not in self._buf:
                break
            try:
                self.events.append(self._read(max(0.01, end - time.monotonic())))
            except TimeoutError:
                break

    def _read(self, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._r], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer")
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise EOFError("Chromium closed the pipe")
            self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._w), os.close(self._r)


# Run in the page: what sticks out of the viewport, what runs out of its card (a chart's figure,
# a game, an example, a headline card), and which text boxes overlap (each HTML text node's
# line boxes and each SVG <text>, as laid out: getBoundingClientRect / getClientRects).
LAYOUT_PROBE = r"""
(() => {
  // What sticks out of the viewport, and which text boxes overlap (rects in CSS px).
  const vw = document.documentElement.clientWidth;
  const name = (el) => {
    let s = el.tagName.toLowerCase();
    if (el.id) s += "#" + el.id;
    if (el.classList && el.classList.length) s += "." + [...el.classList].join(".");
    const fig = el.closest && el.closest("figure[id], section[id], div.game, div.example");
    if (fig && fig !== el) s = (fig.id || fig.className) + " > " + s;
    return s;
  };
  // Rendered: not inside a closed <details>, not display:none (checkVisibility, Chromium 105).
  const shown = (el) => !el.checkVisibility || el.checkVisibility({visibilityProperty: true});
  const wide = [];
  for (const el of document.querySelectorAll("body *")) {
    const r = el.getBoundingClientRect();
    if ((r.width === 0 && r.height === 0) || !shown(el)) continue;
    const out = (x) => x.right > vw + 0.5 || x.left < -0.5;
    if (out(r) && !(el.parentElement && el.parentElement !== document.body && out(el.parentElement.getBoundingClientRect())))
      wide.push(`${name(el)} [${Math.round(r.left)}, ${Math.round(r.right)}]`);
  }
  // Elements that run out of their card (a chart's figure, a game, an example, a headline card).
  const escapes = [];
  for (const el of document.querySelectorAll("figure *, .card *, .example *, .game *")) {
    if (el.closest("svg") && el.tagName.toLowerCase() !== "svg") continue;
    const box = el.parentElement.closest("figure, .card, .example, .game");
    const r = el.getBoundingClientRect(), b = box.getBoundingClientRect();
    if (r.width > 0 && (r.right > b.right + 0.5 || r.left < b.left - 0.5))
      escapes.push(`${name(el)} [${Math.round(r.left)}, ${Math.round(r.right)}] out of ${name(box)} [${Math.round(b.left)}, ${Math.round(b.right)}]`);
  }
  // Text boxes: each HTML text node's line boxes, and each SVG <text> (charts' labels).
  const boxes = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.data.trim() || node.parentElement.closest("svg") || !shown(node.parentElement)) continue;
    range.selectNodeContents(node);
    for (const r of range.getClientRects())
      if (r.width > 0 && r.height > 0) boxes.push({r, el: node.parentElement, text: node.data.trim().slice(0, 40)});
  }
  for (const t of document.querySelectorAll("svg text")) {
    if (!shown(t)) continue;
    const r = t.getBoundingClientRect();
    if (r.width > 0 && r.height > 0) boxes.push({r, el: t, text: t.textContent.trim().slice(0, 40)});
  }
  // Clipped text: a box that overflow hides part of (an ancestor with overflow other than visible).
  const overlaps = [];
  const slack = 2;  // px: touching line boxes are no overlap
  boxes.sort((a, b) => a.r.top - b.r.top);
  for (let i = 0; i < boxes.length; i++) {
    const a = boxes[i].r;
    for (let j = i + 1; j < boxes.length && boxes[j].r.top < a.bottom - slack; j++) {
      const b = boxes[j].r;
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > slack && h > slack && boxes[i].el !== boxes[j].el)
        overlaps.push(`"${boxes[i].text}" (${name(boxes[i].el)}) / "${boxes[j].text}" (${name(boxes[j].el)})`);
    }
  }
  return JSON.stringify({viewport: vw, scrollWidth: document.documentElement.scrollWidth,
                         height: document.documentElement.scrollHeight, textBoxes: boxes.length,
                         wide: wide, escapes: escapes, overlaps: overlaps});
})()
"""


def long_paths_report(tmp_path: Path) -> Path:
    """A report of eight inputs under a long folder name, two holding perpetual checks and
    errors: the rare events' source paths sit side by side, the header has many sources."""
    folder = tmp_path / "a-dataset-folder-with-a-rather-long-name" / "and-a-subfolder-of-pgn-exports-2024"
    folder.mkdir(parents=True)
    paths = []
    for i in range(8):
        path = folder / f"lichess_export_{i:02d}_with_perpetual_checks_and_faults.pgn"
        shutil.copy(SAMPLES / "lichess-jishanshaikh4-variants.pgn", path) if i < 2 else path.write_text(FAULTY_PGN)
        paths.append(path)
    return analyze(tmp_path / "long", paths, "--html")


def test_page_in_headless_chromium(tmp_path, samples_report):
    """From a file:// URL, at 400 px (a phone) and 1280 px wide, for the samples' report and
    one of long paths and many sources: no element wider than the viewport, none out of its
    card, no text box over another, no console error, no request but the page itself; a
    screenshot of each."""
    exe = chromium()
    pages = {"samples": tmp_path / "samples.html", "long": tmp_path / "long.html"}
    shutil.copy(samples_report / "report.html", pages["samples"])
    shutil.copy(long_paths_report(tmp_path) / "report.html", pages["long"])
    try:
        browser = DevTools(exe, tmp_path / "profile")
    except OSError as exc:
        pytest.skip(f"cannot start {exe}: {exc}")
    found, shots, requests = {}, {}, []
    try:
        try:
            target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        except (TimeoutError, EOFError) as exc:
            pytest.skip(f"{exe} does not run headless here: {exc}")
        session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            browser.send(f"{domain}.enable", session=session)
        for name, page in pages.items():
            for width in (400, 1280):
                browser.send("Emulation.setDeviceMetricsOverride",
                             {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600},
                             session=session)
                browser.events = [e for e in browser.events if e.get("method") != "Page.loadEventFired"]
                browser.send("Page.navigate", {"url": page.as_uri()}, session=session)
                browser.wait_for("Page.loadEventFired")
                browser.drain(0.5)
                probe = browser.send("Runtime.evaluate", {"expression": LAYOUT_PROBE, "returnByValue": True},
                                     session=session)
                found[name, width] = json.loads(probe["result"]["value"])
                height = found[name, width]["height"]
                shots[name, width] = browser.send(
                    "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                               "clip": {"x": 0, "y": 0, "width": width, "height": min(height, 8000),
                                                        "scale": 1}}, session=session, timeout=60)
                requests.append(page.as_uri())
        title = browser.send("Runtime.evaluate", {"expression": "document.title"}, session=session)
    finally:
        browser.close()
    for (name, width), layout in found.items():
        png = tmp_path / f"{name}-{width}.png"
        png.write_bytes(base64.b64decode(shots[name, width]["data"]))
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert int.from_bytes(png.read_bytes()[16:20], "big") == width  # IHDR width
        assert layout["viewport"] == width and layout["scrollWidth"] == width, (name, width)
        assert (layout["wide"], layout["escapes"], layout["overlaps"]) == ([], [], []), (name, width)
        assert layout["textBoxes"] > 500 and layout["height"] > 3000  # the whole report, laid out
    assert found["samples", 400]["height"] > found["samples", 1280]["height"]  # one column on a phone
    assert title["result"]["value"].startswith("chessscan report")
    errors = [e for e in browser.events
              if e.get("method") == "Runtime.exceptionThrown"
              or (e.get("method") == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert"))
              or (e.get("method") == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")]
    assert errors == []
    sent = [e["params"]["request"]["url"] for e in browser.events if e.get("method") == "Network.requestWillBeSent"]
    assert sent == requests
