"""End to end: PGN -> detector -> tables, and agreement with python-chess."""

from __future__ import annotations

import re

import chess
import chess.pgn
import pandas as pd
import pytest
from click.testing import CliRunner

from chessscan import scan
from chessscan.analysis.crosscheck import cross_check_game
from chessscan.cli import main
from chessscan.readers.pgn import read_games
from chessscan.reports.schema import column_names
from chessscan.reports.writers import new_buffers
from conftest import SAMPLES, shared_path

MAGNUS = SAMPLES / "lichess-magnus-300.pgn"
VARIANTS = SAMPLES / "lichess-jishanshaikh4-variants.pgn"


def python_chess_counts(path, limit=None):
    """Per-game plies, checks, final checkmate and stalemate as python-chess sees them."""
    out = []
    with open(path, encoding="utf-8-sig") as f:
        while True:
            game = chess.pgn.read_game(f)
            if game is None or (limit is not None and len(out) >= limit):
                break
            variant = game.headers.get("Variant", "Standard")
            if variant not in ("Standard", "Chess960", "From Position"):
                out.append(None)
                continue
            board = game.board()
            checks = plies = 0
            for move in game.mainline_moves():
                board.push(move)
                plies += 1
                checks += board.is_check()
            out.append((plies, checks, board.is_checkmate(), board.is_stalemate()))
    return out


def cross_check_file(path):
    """Every position of ``path`` against python-chess, through the core API replay."""
    rows = new_buffers("disagreements")
    games = positions = 0
    for raw in read_games(str(path)):
        result = cross_check_game(raw, rows)
        games += 1
        positions += result[0] if result else 0
    return games, positions, pd.DataFrame(rows)


def test_scan_sample_matches_python_chess():
    tables = scan(MAGNUS)
    games, positions = tables["games"], tables["positions"]
    assert len(games) == 300
    expected = python_chess_counts(MAGNUS)
    got = list(zip(games.plies, games.checks, games.outcome == "checkmate", games.outcome == "stalemate"))
    assert got == expected
    assert len(positions) == games.plies.sum()
    assert tables["summary"]["games_ok"] == 300
    assert set(positions.check_kind) <= {"none", "direct", "discovered", "double"}
    assert (positions.in_check == (positions.check_kind != "none")).all()
    assert positions.is_checkmate.sum() == (games.outcome == "checkmate").sum()


@pytest.mark.parametrize("path", [MAGNUS, VARIANTS], ids=lambda p: p.name)
def test_every_position_agrees_with_python_chess(path):
    games, positions, rows = cross_check_file(path)
    assert games == len(re.findall(r"^\[Event ", path.read_text(encoding="utf-8"), re.M))
    assert positions > 7000
    assert rows.empty, rows.head(10).to_string()


# 2,800 games, 25 s of CPU (50 s more uncompiled): slow. The quick run holds the tables to
# python-chess on the shipped samples (above, and the full cross-check of test_crosscheck),
# and the slow whole-corpus runs below cover these three sources whole.
@pytest.mark.slow
@pytest.mark.parametrize("name", ["lichess-magnus-first1000.pgn", "pgnmentor-Fischer.pgn",
                                  "tcec-nocomments-first1000.pgn"])
def test_shared_samples_agree_with_python_chess(name):
    """The values written to the tables (the hot loop's) against python-chess."""
    path = shared_path("games", "samples", name)
    tables = scan(path, cross_check="full")
    assert len(tables["games"]) == len(re.findall(rb"^\[Event ", path.read_bytes(), re.M))
    rows = tables["disagreements"]
    assert rows.empty, rows.head(10).to_string()
    assert tables["summary"]["cross_check"]["positions"] == len(tables["positions"])


def test_variants_are_reported_not_analyzed():
    tables = scan(VARIANTS)
    games, issues = tables["games"], tables["issues"]
    assert len(games) == 108
    unsupported = issues[issues.code == "unsupported-variant"]
    assert sorted(games.loc[unsupported.game_index, "variant"]) == sorted(
        ["Atomic", "Atomic", "Crazyhouse", "Crazyhouse", "Three-check", "King of the Hill",
         "Antichess", "Racing Kings"])
    assert (games.loc[unsupported.game_index, "plies"] == 0).all()
    chess960 = games[games.variant == "Chess960"]
    assert len(chess960) == 25 and (chess960.plies > 0).all()
    assert tables["summary"]["games_unsupported_variant"] == 8


@pytest.mark.parametrize("name", ["Standard", "From Position", "Chess", "Classical", "normal", "Regular",
                                  "regular", " Standard "])
def test_standard_chess_under_the_names_exporters_write(tmp_path, name):
    """lichess, python-chess, xboard/cutechess/TCEC and kokopu ("Regular") name standard
    chess in the Variant tag: such a game is analyzed (it was an unsupported-variant)."""
    path = tmp_path / "g.pgn"
    path.write_text(f'[Event "E"]\n[Variant "{name}"]\n[Result "1-0"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 '
                    '4. Qxf7# 1-0\n')
    tables = scan(path, cross_check="off")
    assert list(tables["issues"].code) == []
    assert tables["games"].plies[0] == 7 and tables["games"].outcome[0] == "checkmate"
    assert tables["summary"]["games_unsupported_variant"] == 0


BROKEN = """[Event "a"]
[White "W"]
[Black "B"]
[Result "*"]

1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Bxc6 dxc6 5. Ke3 Nf6 *

[Event "b"]
[Result "1-0"]

1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0

[Event "c"]
[Result "*"]

1. Nc3 d5 2. Nc3 *

[Event "d"]
[FEN "7k/8/8/8/8/8/8/K7 w - - 0 1"]
[SetUp "1"]
[Result "*"]

1. Kb2 *
"""


def test_errors_are_recorded_and_reading_goes_on(tmp_path):
    path = tmp_path / "broken.pgn"
    path.write_text(BROKEN)
    tables = scan(path)
    games, issues = tables["games"], tables["issues"]
    assert list(games.plies) == [8, 7, 2, 1]
    assert list(games.error_code.astype("string").fillna("")) == ["illegal-move", "", "illegal-move", ""]
    assert list(games.error_ply.fillna(-1)) == [9, -1, 3, -1]
    assert list(games.outcome) == ["none", "checkmate", "none", "insufficient_material"]
    assert list(games.winner.astype("string").fillna("")) == ["", "white", "", ""]
    # Game d starts dead (two bare kings): its move comes after the automatic end, and "*"
    # is not the result of a finished game.
    assert sorted(issues[issues.game_index == 3].code) == ["moves-after-end", "result-unfinished"]
    err = issues[issues.game_index == 0].iloc[0]
    assert (err.line, err.column, err.ply, err.san, err.severity) == (6, 47, 9, "Ke3", "error")
    assert "FEN before the move: r1bqkbnr/1pp2ppp/p1p5/4p3/4P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 0 5" in err.message
    assert err.message.startswith("5.Ke3 is illegal: no king can reach e3")
    err2 = issues[issues.game_index == 2].iloc[0]
    assert (err2.line, err2.ply, err2.san) == (16, 3, "Nc3")
    assert "d1" not in err2.message and "c3 holds a piece" in err2.message


def test_reader_errors_have_their_ply_in_issues_and_games(tmp_path):
    """An unexpected token stands at the ply it would have been (moves read before it + 1):
    the issues row and games.error_ply say so. games.error_code/error_ply name the first error
    in the text: a move error before the token wins, one after it cannot happen (the moves
    after the token are not read); a stray ')' comes before an illegal move after it."""
    path = tmp_path / "tokens.pgn"
    path.write_text('[Event "a"]\n\n1. e4 e5 2. Sf3 Nc6 *\n\n'
                    '[Event "b"]\n\n1. e4 e5 2. Nf3 1/2\n\n'
                    '[Event "c"]\n\n1. d4 \u00bd-\u00bd\n\n'
                    '[Event "d"]\n\n1. e4 e5 2. Ke3 Nc6 3. Sf3 *\n\n'
                    '[Event "e"]\n\n1. e4 ) e5 2. Ke3 *\n\n'
                    '[Event "f"]\n[Site x]\n\n1. e4 e5 2. Ke3 *\n\n')
    tables = scan(path)
    games, issues = tables["games"], tables["issues"]
    errors = issues[issues.severity == "error"].fillna({"ply": -1})
    assert errors[["game_index", "code", "ply"]].values.tolist() == [
        [0, "unexpected-token", 3], [1, "unexpected-token", 4], [2, "unexpected-token", 2],
        [3, "unexpected-token", 5], [3, "illegal-move", 3],
        [4, "unbalanced-variation", 2], [4, "illegal-move", 3],
        [5, "bad-tag", -1], [5, "illegal-move", 3]]
    assert games.error_code.tolist() == ["unexpected-token"] * 3 + ["illegal-move", "unbalanced-variation", "bad-tag"]
    assert games.error_ply.fillna(-1).tolist() == [3, 4, 2, 3, 2, -1]
    assert list(games.plies) == [2, 3, 1, 2, 2, 2]


def test_invalid_fen_tag_lists_every_fault(tmp_path):
    path = tmp_path / "fen.pgn"
    path.write_text('[Event "x"]\n[FEN "8/8/8/8/8/8/8/K7 w - - 0 1"]\n[SetUp "1"]\n\n1. Kb2 *\n\n'
                    '[Event "y"]\n\n1. e4 *\n')
    tables = scan(path)
    games, issues = tables["games"], tables["issues"]
    assert list(games.plies) == [0, 1]
    assert games.error_code[0] == "missing-king"
    assert list(issues.code) == ["missing-king"]
    assert issues.ply[0] == 0


def test_cli_analyze_writes_tables_that_pandas_reads(tmp_path):
    out = tmp_path / "report"
    # (--cross-check full through the CLI: test_engines' jobs_2_equals_jobs_1[magnus-full])
    result = CliRunner().invoke(main, ["analyze", str(MAGNUS), "-o", str(out)])
    assert result.exit_code == 0, result.output
    positions = pd.read_parquet(out / "positions")
    games = pd.read_parquet(out / "games")
    assert list(positions.columns) == list(column_names("positions"))
    assert list(games.columns) == list(column_names("games"))
    assert len(games) == 300 and len(positions) == games.plies.sum()
    assert pd.read_parquet(out / "disagreements").empty
    import json

    summary = json.loads((out / "summary.json").read_text())
    assert summary["games_read"] == 300
    assert summary["cross_check"]["mode"] == "sample" and summary["cross_check"]["games"] > 0
    assert summary["cross_check"]["disagreements"] == 0
    assert summary["positions"] == len(positions)


def test_cli_csv_checks_only_with_fen(tmp_path):
    out = tmp_path / "r"
    result = CliRunner().invoke(main, ["analyze", str(SAMPLES / "lichess-magnus-300.pgn.zst"), "-o", str(out),
                                       "--format", "csv", "--positions", "checks", "--fen", "--cross-check", "off"])
    assert result.exit_code == 0, result.output
    positions = pd.read_csv(out / "positions.csv")
    assert len(positions) > 0 and positions.in_check.all()
    assert list(positions.columns) == list(column_names("positions", ("fen",)))
    # The FEN after a checking move puts the side to move in check (python-chess agrees).
    for fen in positions.fen.head(50):
        assert chess.Board(fen).is_check()
    assert not (out / "disagreements.csv").exists()


def test_cli_reads_stdin(tmp_path):
    out = tmp_path / "r"
    result = CliRunner().invoke(main, ["analyze", "-", "-o", str(out), "--cross-check", "off"],
                                input=MAGNUS.read_bytes())
    assert result.exit_code == 0, result.output
    games = pd.read_parquet(out / "games")
    assert len(games) == 300 and set(games.source) == {"<stdin>"}


def test_utf16_file_gives_the_utf8_tables(tmp_path):
    """A UTF-16 copy (as PowerShell 5's `>` writes it) reads as the UTF-8 file: the same
    rows, byte offsets included (they count the UTF-8 bytes), names with accents intact."""
    text = ('[Event "Café"]\n[White "Jürgen Müller"]\n[Black "Åsa Öberg"]\n[Result "1-0"]\n\n'
            "1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n") + VARIANTS.read_text(encoding="utf-8")
    utf8, utf16 = tmp_path / "games.pgn", tmp_path / "games-utf16.pgn"
    utf8.write_bytes(text.encode("utf-8"))
    utf16.write_bytes(b"\xff\xfe" + text.encode("utf-16-le"))
    expected, got = scan(utf8), scan(utf16)
    assert got["games"].white[0] == "Jürgen Müller" and got["games"].outcome[0] == "checkmate"
    assert len(got["games"]) == 109 and len(got["positions"]) > 5000
    for name in ("positions", "games", "issues"):
        pd.testing.assert_frame_equal(got[name].drop(columns="source"), expected[name].drop(columns="source"))


def test_cli_reads_epd_from_stdin(tmp_path):
    """stdin holding EPD (its first record starts with a FEN), compressed or not, is read as
    EPD by analyze and validate."""
    import gzip

    suite = SAMPLES / "sf-books-stalemates-500.epd"
    result = CliRunner().invoke(main, ["analyze", str(suite), "-o", str(tmp_path / "file"), "--silent"])
    assert result.exit_code == 0, result.output
    expected = pd.read_parquet(tmp_path / "file" / "epd_positions").drop(columns="source")
    assert len(expected) == 500 and expected.valid.all()
    for blob in (suite.read_bytes(), gzip.compress(suite.read_bytes())):
        out = tmp_path / "r"
        result = CliRunner().invoke(main, ["analyze", "-", "-o", str(out), "--silent"], input=blob)
        assert result.exit_code == 0, result.output
        assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["epd_positions", "issues"]
        got = pd.read_parquet(out / "epd_positions")
        assert set(got.source) == {"<stdin>"}
        pd.testing.assert_frame_equal(got.drop(columns="source"), expected)
    result = CliRunner().invoke(main, ["validate", "-"], input=suite.read_bytes())
    assert result.exit_code == 0 and "500 EPD positions: 500 valid" in result.output


def test_cli_missing_file_alone_is_an_input_error(tmp_path):
    result = CliRunner().invoke(main, ["analyze", str(tmp_path / "nope.pgn")])
    assert result.exit_code == 2
    assert "no such file" in result.output


def test_cli_warns_of_a_file_given_twice(tmp_path):
    out = tmp_path / "r"
    result = CliRunner().invoke(main, ["analyze", str(MAGNUS), str(MAGNUS), "-o", str(out), "--silent"])
    assert result.exit_code == 0
    assert result.output.count("is given more than once: its games are read again") == 1
    assert len(pd.read_parquet(out / "games")) == 600


def test_a_file_given_twice_keeps_each_reading_s_once_a_game_rows(tmp_path):
    uci = tmp_path / "uci.pgn"
    uci.write_text('[Event "u"]\n\n1. e2e4 e7e5 2. g1f3 *\n\n[Event "v"]\n\n1. d2d4 d7d5 *\n')
    out = tmp_path / "r"
    result = CliRunner().invoke(main, ["analyze", str(uci), str(uci), "-o", str(out), "--silent", "--jobs", "1"])
    assert result.exit_code == 0
    issues = pd.read_parquet(out / "issues")
    assert issues["code"].tolist() == ["uci-move"] * 4 and issues["game_index"].tolist() == [0, 1, 0, 1]
    assert issues["message"].str.endswith("(3 moves of this game are written so; reported once)").tolist() == [
        True, False, True, False]


def test_a_file_decoded_as_cp1252_with_uci_moves(tmp_path):
    """decode-fallback (once a file) and uci-move (once a game) in the same games."""
    latin = tmp_path / "latin.pgn"
    latin.write_bytes(b"".join(b'[Event "Caf\xe9 %d"]\n\n1. e2e4 e7e5 2. g1f3 *\n\n' % k for k in range(3)))
    out = tmp_path / "r"
    result = CliRunner().invoke(main, ["analyze", str(latin), "-o", str(out), "--silent", "--jobs", "1"])
    assert result.exit_code == 0, result.output
    issues = pd.read_parquet(out / "issues")
    assert issues["code"].tolist() == ["uci-move"] * 3 + ["decode-fallback"]
    assert issues["game_index"].tolist() == [0, 1, 2, 0]
    assert issues["message"].iloc[-1].endswith("3 games of this file are decoded so (reported once)")


def test_cli_warns_of_stdin_given_twice(tmp_path):
    out = tmp_path / "r"
    result = CliRunner().invoke(main, ["analyze", "-", "-", "-o", str(out), "--silent"],
                                input=MAGNUS.read_bytes())
    assert result.exit_code == 0
    assert result.output.count("- is given more than once: stdin is read once: the next gives nothing") == 1
    assert len(pd.read_parquet(out / "games")) == 300


def test_cli_interrupt_leaves_no_summary(tmp_path, monkeypatch):
    """Ctrl-C: the tables keep what was analyzed, summary.json (an earlier run's too) is
    gone, exit status 130."""
    out = tmp_path / "r"
    assert CliRunner().invoke(main, ["analyze", str(MAGNUS), "-o", str(out), "--silent"]).exit_code == 0
    assert (out / "summary.json").is_file()

    def interrupted(paths, sink, options, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("chessscan.engines.local.run", interrupted)
    result = CliRunner().invoke(main, ["analyze", str(MAGNUS), "-o", str(out), "--silent"])
    assert result.exit_code == 130
    assert "interrupted: the tables in" in result.output and "no summary.json" in result.output
    assert not (out / "summary.json").exists() and pd.read_parquet(out / "games").empty


def test_odd_counters_and_elos_are_reported_not_a_crash(tmp_path):
    # A [FEN] clock past int32 raised OverflowError from the compiled Position; an Elo of
    # digits that int() refuses ("2²": str.isdigit() holds) raised ValueError.
    path = tmp_path / "odd.pgn"
    path.write_text('[Event "a"]\n[SetUp "1"]\n[FEN "4k3/8/8/8/8/8/8/4K3 w - - 99999999999999999999 1"]\n\n'
                    '1. Ke2 *\n\n[Event "b"]\n[WhiteElo "2\u00b2"]\n[BlackElo "2100"]\n\n1. e4 *\n',
                    encoding="utf-8")
    tables = scan(path, jobs=1)
    games, issues = tables["games"], tables["issues"]
    assert list(games.plies) == [0, 1]
    assert list(issues.code) == ["invalid-fen"] and list(issues.line) == [3]
    assert pd.isna(games.white_elo[1]) and games.black_elo[1] == 2100
    epd = tmp_path / "odd.epd"
    epd.write_text("4k3/8/8/8/8/8/8/4K3 w - - 3000000000 1\n4k3/8/8/8/8/8/8/4K3 w - - hmvc 5;\n")
    issues = scan(epd, jobs=1)["issues"]
    assert list(issues.code) == ["invalid-fen"] and list(issues.line) == [1]


def test_scan_takes_bytes_and_pathlike_paths(tmp_path):
    games = tmp_path / "three.pgn"  # (the three first of MAGNUS: the path's type is what is tested)
    games.write_bytes(b"[Event ".join(MAGNUS.read_bytes().split(b"[Event ")[:4]))
    for path in (bytes(games), games, [str(games)]):
        assert len(scan(path)["games"]) == 3


def test_scan_of_nothing_has_empty_game_tables():
    tables = scan([])
    assert [len(tables[name]) for name in ("positions", "games", "perpetuals", "issues")] == [0, 0, 0, 0]
    assert tables["summary"]["games_read"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("name", ["lichess-magnus.pgn.zst", "lichess-jishanshaikh4.pgn.zst",
                                  "tcec-archive-nocomments.pgn.zst", "pgnmentor-players-dedup.pgn.zst"])
def test_whole_corpus_agrees_with_python_chess(name):
    path = shared_path("games", name)
    import zstandard

    with open(path, "rb") as f:
        data = zstandard.ZstdDecompressor(max_window_size=2**31).stream_reader(f, read_across_frames=True).read()
    tag_sections = len(re.findall(rb"^\[Event ", data, re.M))
    games, positions, rows = cross_check_file(path)
    assert games == tag_sections
    # The two pgnmentor games with a real illegal move are the only move disagreements allowed:
    # both sides must reject the same token.
    assert rows.empty, rows.head(20).to_string()


def test_chess960_is_inferred_from_castling_rights(tmp_path):
    # Rooks on c1 and h1 with the king on e1 and "KQkq": only Chess960 explains the Q right.
    path = tmp_path / "frc.pgn"
    path.write_text('[Event "x"]\n[FEN "bbrnkqnr/pppppppp/8/8/8/8/PPPPPPPP/BBRNKQNR w KQkq - 0 1"]\n'
                    '[SetUp "1"]\n\n1. Nc3 Nc6 2. O-O-O *\n\n')
    tables = scan(path, cross_check="full")
    assert tables["issues"].code.tolist() == ["chess960-inferred"]
    assert tables["games"].plies[0] == 3 and tables["games"].error_code.isna()[0]
    assert tables["positions"].uci.iloc[-1] == "e1c1"
    assert tables["disagreements"].empty


def test_moves_hash_is_blake2b_128_of_the_start_fen_and_the_uci_moves():
    """games.moves_hash recomputed apart: python-chess's FEN and UCI moves, hashlib's BLAKE2b
    (the compiled and the uncompiled core alike; Chess960 and [FEN] starts among them)."""
    import hashlib

    games = scan(VARIANTS)["games"]
    want = []
    with open(VARIANTS, encoding="utf-8") as f:
        while (game := chess.pgn.read_game(f)) is not None:
            if game.headers.get("Variant", "Standard") not in ("Standard", "Chess960", "From Position"):
                want.append(None)
                continue
            board = game.board()
            text = [board.fen()]
            for move in game.mainline_moves():
                text.append(board.uci(move))
                board.push(move)
            want.append(hashlib.blake2b(" ".join(text).encode(), digest_size=16).hexdigest())
    assert [h if isinstance(h, str) else None for h in games.moves_hash] == want
    assert sum(h is not None for h in want) == 100


def test_without_the_moves_hash_only_the_moves_hash_column_is_empty():
    """AnalysisOptions(moves_hash=False) (validate without --duplicates) leaves
    games.moves_hash null and every other value of every table as it was."""
    import pyarrow as pa

    from chessscan.analysis.options import AnalysisOptions
    from chessscan.api import MemorySink
    from chessscan.engines.local import run
    from chessscan.reports.writers import to_record_batch
    from chessscan.reports.schema import schema_for

    def tables(**kw):
        sink = MemorySink()
        run([str(VARIANTS)], sink, AnalysisOptions(cross_check="off", **kw))
        return {name: pa.Table.from_batches([to_record_batch(b, schema_for(name, ()), name) for b in batches],
                                            schema=schema_for(name, ())).to_pandas()
                for name, batches in sink.batches.items()}

    full, lean = tables(), tables(moves_hash=False)
    assert set(full) == set(lean) and {"games", "positions", "issues"} <= set(full)
    assert full["games"].moves_hash.notna().sum() == 100
    assert lean["games"].moves_hash.isna().all()
    for name in full:
        pd.testing.assert_frame_equal(full[name].drop(columns=["moves_hash"], errors="ignore"),
                                      lean[name].drop(columns=["moves_hash"], errors="ignore"))


def test_a_chessscan_bug_in_analyze_exits_3_with_one_line_and_no_summary(tmp_path, monkeypatch):
    """A bug met while analyzing is exit 3 (chessscan/exits.py), not the traceback's 1, which
    a CI gate reads as "issues found"; the traceback is printed, then one line; no summary."""
    def crashing_run(sources, sink, options, **kw):
        raise RuntimeError("boom")

    monkeypatch.setattr("chessscan.engines.local.run", crashing_run)
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["analyze", str(SAMPLES / "lichess-magnus-300.pgn.zst"), "-o", str(out),
                                    "--silent"])
    assert res.exit_code == 3, res.output
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: internal error: RuntimeError: boom (a chessscan bug")
    assert "no summary.json is written" in last
    assert "Traceback" in res.stderr
    assert not (out / "summary.json").exists()
