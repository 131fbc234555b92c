"""EPD positions through the detector, against python-chess on every valid position."""

from __future__ import annotations

import chess
import pytest

from chessscan import scan
from chessscan.analysis.epd import epd_position
from chessscan.core.checks import square_list
from conftest import SAMPLES, SHARED, shared_path


def compare_with_python_chess(table):
    """Rows of ``epd_positions`` whose values python-chess does not reproduce."""
    bad = []
    for row in table.itertuples():
        if not row.valid:
            continue
        pos, _ = epd_position(row.fen)
        board = chess.Board(row.fen, chess960=pos.chess960)
        count = board.legal_moves.count()
        expected = (board.is_check(), square_list(board.checkers_mask()), count,
                    board.is_checkmate(), board.is_stalemate())
        got = (row.in_check, row.checkers, row.legal_moves, row.is_checkmate, row.is_stalemate)
        if got != expected:
            bad.append((row.line, row.fen, got, expected))
    return bad


@pytest.mark.parametrize("name", ["arasan-wacnew.epd", "sf-books-stalemates-500.epd"])
def test_shipped_epd_agree_with_python_chess(name):
    tables = scan(SAMPLES / name)
    table = tables["epd_positions"]
    expected_lines = [i for i, l in enumerate((SAMPLES / name).read_text().splitlines(), 1)
                      if l.strip() and not l.startswith("#")]
    assert list(table.line) == expected_lines
    assert table.valid.all()
    assert compare_with_python_chess(table) == []
    if name.startswith("arasan"):
        assert table.bm_legal.all()
        assert table.id.iloc[0] == "WAC.001" and table.bm.iloc[0] == "Qg6"
    else:
        assert not table.is_stalemate.any()  # SOURCES: none of them is stalemate itself
        assert table.in_check.sum() > 0


def test_check_kind_without_last_move(tmp_path):
    path = tmp_path / "k.epd"
    path.write_text(
        "4k3/8/8/8/8/8/8/4K2R b K - bm Kd7; id \"none\";\n"
        "4k3/8/8/8/8/8/8/4R1K1 b - - id \"single\";\n"
        "4k3/8/3N4/8/8/8/8/4R1K1 b - - id \"double\";\n"
        "7k/5Q2/6K1/8/8/8/8/8 b - - id \"stalemate\";\n"
        "7k/6Q1/6K1/8/8/8/8/8 b - - id \"mate\";\n"
        "not an epd line\n"
        "8/8/8/8/8/8/8/K7 w - - id \"no kings\";\n"
        "4k3/8/8/8/8/8/8/4K2R w K - bm e1g1; am Rh8+ Kxe8;\n")
    tables = scan(path)
    t = tables["epd_positions"]
    assert list(t.line) == [1, 2, 3, 4, 5, 6, 7, 8]
    assert list(t.valid) == [True, True, True, True, True, False, False, True]
    assert list(t.check_kind[:5]) == ["none", "single", "double", "none", "single"]
    assert list(t.checkers[:3]) == ["", "e1", "e1 d6"]
    assert t.is_stalemate[3] and t.is_checkmate[4] and not t.is_checkmate[3]
    assert t.legal_moves[0] == 5 and t.legal_moves[4] == 0
    assert t.bm_legal[0]
    assert t.bm_legal[7] and not t.am_legal[7]
    issues = tables["issues"]
    assert set(issues.code) == {"invalid-epd", "missing-king", "uci-move", "illegal-move"}
    assert issues[issues.code == "missing-king"].line.tolist() == [7]
    assert issues[issues.code == "uci-move"].severity.tolist() == ["warning"]
    assert issues[issues.code == "illegal-move"].san.tolist() == ["Kxe8"]


EPD_FILES = sorted(p.relative_to(SHARED / "epd").as_posix() for p in (SHARED / "epd").rglob("*.epd")) \
    if (SHARED / "epd").exists() else []


@pytest.mark.parametrize("name", EPD_FILES or ["(absent)"])
def test_shared_epd_files_agree_with_python_chess(name):
    path = shared_path("epd", name)
    tables = scan(path)
    table = tables["epd_positions"]
    lines = [l for l in path.read_bytes().splitlines() if l.strip(b" \t\r\x00") and not l.startswith(b"#")]
    assert len(table) == len(lines)
    assert compare_with_python_chess(table) == []


@pytest.mark.slow
def test_popular_positions_agree_with_python_chess():
    path = shared_path("epd", "sf-books-popularpos_lichess_v3.epd.zst")
    table = scan(path)["epd_positions"]
    assert len(table) == 200_000
    assert table.valid.all()
    assert compare_with_python_chess(table) == []
