"""Check kinds (chessscan.core.checks) on crafted positions, one test per taxonomy row,
plus checkmate / stalemate detection.

Every crafted FEN and move is first verified against python-chess (the independent oracle:
the position is valid, the move legal, and ``is_check`` / ``checkers()`` /
``is_checkmate`` / ``is_stalemate`` agree with what the row claims), so the test data
itself is known to be right before chessscan is asked about it.
"""

from __future__ import annotations

import chess
import pytest

from chessscan.core.checks import (
    CHECK_KINDS, DIRECT, DISCOVERED, DOUBLE, NONE, SINGLE, MoveCheck, classify_move,
    setup_check_kind, square_list,
)
from chessscan.core.fen import parse_fen
from chessscan.core.movegen import checkers, has_legal_move, legal_moves, slider_blockers
from chessscan.core.san import move_san, resolve_san


def bb(*names: str) -> int:
    """Bitboard of square names (a1 = bit 0), built with python-chess's square parser."""
    out = 0
    for name in names:
        out |= 1 << chess.parse_square(name)
    return out


def names(mask: int) -> list[str]:
    return sorted(chess.square_name(s) for s in range(64) if mask >> s & 1)


def oracle_board(fen: str, chess960: bool = False) -> chess.Board:
    board = chess.Board(fen, chess960=chess960)
    assert board.is_valid(), f"crafted FEN is not valid for python-chess: {fen} ({board.status()!r})"
    return board


# (id, FEN, SAN, kind, checker squares, by_en_passant, by_castling, by_promotion)
KIND_ROWS = [
    # -- direct: the moved piece gives check ----------------------------------------------
    ("direct-pawn", "8/8/4k3/8/3P4/8/8/4K3 w - - 0 1", "d5", DIRECT, ["d5"], False, False, False),
    ("direct-knight", "4k3/8/8/8/4N3/8/8/4K3 w - - 0 1", "Nf6", DIRECT, ["f6"], False, False, False),
    ("direct-bishop", "4k3/8/8/8/8/8/8/4KB2 w - - 0 1", "Bb5", DIRECT, ["b5"], False, False, False),
    ("direct-rook", "4k3/8/8/8/8/8/8/R3K3 w - - 0 1", "Ra8", DIRECT, ["a8"], False, False, False),
    ("direct-queen", "4k3/8/8/8/8/8/8/3QK3 w - - 0 1", "Qh5", DIRECT, ["h5"], False, False, False),
    ("direct-black-knight", "4k3/8/8/8/8/8/5n2/R3K3 b - - 0 1", "Nd3", DIRECT, ["d3"], False, False, False),
    # -- discovered: a piece that did not move checks --------------------------------------
    # Bishop e4 leaves the e-file: rook e1 sees e8.
    ("discovered-bishop-unmasks-rook", "4k3/8/8/8/4B3/8/8/K3R3 w - - 0 1", "Bd5", DISCOVERED, ["e1"],
     False, False, False),
    # Pawn c6 advances off the a4-e8 diagonal.
    ("discovered-pawn-push-unmasks-bishop", "4k3/8/2P5/8/B7/8/8/4K3 w - - 0 1", "c7", DISCOVERED, ["a4"],
     False, False, False),
    # The king itself leaves the d-file.
    ("discovered-king-move-unmasks-rook", "3k4/8/8/8/3K4/8/8/3R4 w - - 0 1", "Ke4", DISCOVERED, ["d1"],
     False, False, False),
    # -- double ----------------------------------------------------------------------------
    ("double-knight-and-bishop", "4k3/3N4/8/1B6/8/8/8/4K3 w - - 0 1", "Nf6", DOUBLE, ["b5", "f6"],
     False, False, False),
    ("double-rook-and-bishop", "4k3/8/2R5/8/B7/8/8/4K3 w - - 0 1", "Rc8", DOUBLE, ["a4", "c8"],
     False, False, False),
    # -- en passant ------------------------------------------------------------------------
    # The capturing pawn lands on f6 and attacks g7.
    ("en-passant-direct", "8/6k1/8/4Pp2/8/8/8/4K3 w - f6 0 1", "exf6", DIRECT, ["f6"], True, False, False),
    # Removing the captured d5 pawn opens the a2-g8 diagonal (e5 is not on it).
    ("en-passant-discovered-diagonal", "6k1/8/8/3pP3/8/8/B7/4K3 w - d6 0 1", "exd6", DISCOVERED, ["a2"],
     True, False, False),
    # Removing d5 (and vacating e5) opens the fifth rank for the rook.
    ("en-passant-discovered-rank", "8/8/8/R2pP2k/8/8/8/4K3 w - d6 0 1", "exd6", DISCOVERED, ["a5"],
     True, False, False),
    # Pawn lands on d6 (attacks e7) and leaves e5 (opens the e-file for the rook).
    ("en-passant-double", "8/4k3/8/3pP3/8/8/8/K3R3 w - d6 0 1", "exd6", DOUBLE, ["d6", "e1"],
     True, False, False),
    # -- castling: the rook gives check --------------------------------------------------------
    ("castling-short-rook-checks", "5k2/8/8/8/8/8/8/4K2R w K - 0 1", "O-O", DIRECT, ["f1"], False, True, False),
    ("castling-long-rook-checks", "3k4/8/8/8/8/8/8/R3K3 w Q - 0 1", "O-O-O", DIRECT, ["d1"], False, True, False),
    ("castling-long-black", "r3k3/8/8/8/8/8/8/3K4 b q - 0 1", "O-O-O", DIRECT, ["d8"], False, True, False),
    # -- promotion -------------------------------------------------------------------------
    ("promotion-queen-direct", "4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a8=Q", DIRECT, ["a8"], False, False, True),
    ("underpromotion-knight-direct", "8/3P1k2/8/8/8/8/8/4K3 w - - 0 1", "d8=N", DIRECT, ["d8"],
     False, False, True),
    # Pawn e7 leaves the seventh rank; the new knight on e8 does not attack h7.
    ("promotion-discovered", "8/R3P2k/8/8/8/8/8/4K3 w - - 0 1", "e8=N", DISCOVERED, ["a7"], False, False, True),
    # Capture-promotion to a knight on f8 (attacks h7) plus the rook on the seventh rank.
    ("promotion-double", "5r2/R3P2k/8/8/8/8/8/4K3 w - - 0 1", "exf8=N", DOUBLE, ["a7", "f8"],
     False, False, True),
    # -- no check: route flags stay False when the special move does not check ------------------
    ("none-quiet", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "e4", NONE, [], False, False, False),
    ("none-castling", "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "O-O", NONE, [], False, False, False),
    ("none-en-passant", "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "exd6", NONE, [], False, False, False),
    ("none-promotion", "4k3/P7/8/8/8/8/8/K7 w - - 0 1", "a8=N", NONE, [], False, False, False),
]


@pytest.mark.parametrize(
    "fen, san, kind, checker_names, by_ep, by_castling, by_promotion",
    [pytest.param(*row[1:], id=row[0]) for row in KIND_ROWS],
)
def test_check_kind_row(fen, san, kind, checker_names, by_ep, by_castling, by_promotion):
    # The oracle first: the move is legal and gives exactly these checkers.
    board = oracle_board(fen)
    oracle_move = board.parse_san(san)
    assert oracle_move in board.legal_moves
    # When the row says a special move checks, python-chess must agree the move is one.
    if by_ep:
        assert board.is_en_passant(oracle_move)
    if by_castling:
        assert board.is_castling(oracle_move)
    if by_promotion:
        assert oracle_move.promotion is not None
    board.push(oracle_move)
    assert board.is_check() == bool(checker_names)
    assert names(int(board.checkers())) == checker_names

    pos = parse_fen(fen)
    move = resolve_san(pos, san)
    assert pos.move_uci(move) == oracle_move.uci()
    result = classify_move(pos, move)
    assert result == MoveCheck(kind, bb(*checker_names), by_ep, by_castling, by_promotion)
    assert result.kind in CHECK_KINDS
    assert names(result.checkers) == checker_names
    assert square_list(result.checkers) == " ".join(sorted(checker_names, key=chess.parse_square))


def test_every_kind_has_a_row():
    kinds = {row[3] for row in KIND_ROWS}
    assert kinds == set(CHECK_KINDS)
    assert {row[0].split("-")[0] for row in KIND_ROWS} >= {
        "direct", "discovered", "double", "en", "castling", "promotion", "underpromotion", "none"}


# Chess960 castling: the rook is the checker, whether or not it moves.
CHESS960_CASTLING = [
    # King b1 -> g1, rook h1 -> f1 checks the f-file.
    ("960-short-far-king", "5k2/8/8/8/8/8/8/1K5R w H - 0 1", "O-O", "b1h1", ["f1"]),
    # The rook already stands on f1 and does not move; the king leaving e1 opens the first
    # rank for it. The taxonomy counts the castling rook as the arrived piece: direct.
    ("960-rook-stays-on-f1", "8/8/8/8/8/8/8/2k1KR2 w F - 0 1", "O-O", "e1f1", ["f1"]),
]


@pytest.mark.parametrize("fen, san, uci, checker_names",
                         [pytest.param(*row[1:], id=row[0]) for row in CHESS960_CASTLING])
def test_chess960_castling_rook_check(fen, san, uci, checker_names):
    board = oracle_board(fen, chess960=True)
    oracle_move = board.parse_san(san)
    assert board.is_castling(oracle_move) and oracle_move.uci() == uci
    board.push(oracle_move)
    assert names(int(board.checkers())) == checker_names

    pos = parse_fen(fen, chess960=True)
    move = resolve_san(pos, san)
    assert pos.move_uci(move) == uci
    assert classify_move(pos, move) == MoveCheck(DIRECT, bb(*checker_names), False, True, False)


def test_classify_move_leaves_position_untouched():
    fen = "8/4k3/8/3pP3/8/8/8/K3R3 w - d6 0 1"
    pos = parse_fen(fen)
    before = pos.copy()
    classify_move(pos, resolve_san(pos, "exd6"))
    assert pos == before
    assert pos.fen() == fen


# -- setup_check_kind (no last move known) -----------------------------------------------------

@pytest.mark.parametrize("fen, expected, checker_names", [
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", NONE, []),
    ("4k3/8/8/8/8/3n4/8/4K3 w - - 0 1", SINGLE, ["d3"]),
    ("4k3/8/8/8/7b/8/8/4K3 w - - 0 1", SINGLE, ["h4"]),
    ("4r2k/8/8/8/8/5n2/8/4K3 w - - 0 1", DOUBLE, ["e8", "f3"]),
    ("8/8/8/3pP3/2k1K3/6q1/5r2/8 w - d6 0 1", SINGLE, ["d5"]),
])
def test_setup_check_kind(fen, expected, checker_names):
    board = oracle_board(fen)
    assert names(int(board.checkers())) == checker_names
    pos = parse_fen(fen)
    mask = checkers(pos)
    assert names(mask) == checker_names
    assert setup_check_kind(mask) == expected


# -- checkmate / stalemate ------------------------------------------------------------------------

def status(pos) -> str:
    """chessscan's verdict built from its own primitives."""
    in_check = bool(checkers(pos))
    if has_legal_move(pos):
        return "check" if in_check else "ongoing"
    return "checkmate" if in_check else "stalemate"


def oracle_status(board: chess.Board) -> str:
    if board.is_checkmate():
        return "checkmate"
    if board.is_stalemate():
        return "stalemate"
    return "check" if board.is_check() else "ongoing"


def assert_same_moves(pos, board):
    assert sorted(pos.move_uci(m) for m in legal_moves(pos)) == sorted(m.uci() for m in board.legal_moves)


def test_double_check_mate_where_capturing_one_checker_is_not_enough():
    # Nd6 is a double check (knight d6 + rook e1). Black can capture the knight with the c7
    # pawn or the f8 bishop, but the rook still checks; every king square is covered/blocked.
    fen = "3qkb2/2pp1p2/8/8/4N3/8/8/4RK2 w - - 0 1"
    board = oracle_board(fen)
    board.push_san("Nd6")
    assert board.is_checkmate()
    pseudo_captures = {m.uci() for m in board.generate_pseudo_legal_moves()
                       if m.to_square == chess.D6}
    assert pseudo_captures == {"c7d6", "f8d6"}  # they exist but are not legal

    pos = parse_fen(fen)
    move = resolve_san(pos, "Nd6")
    assert classify_move(pos, move) == MoveCheck(DOUBLE, bb("d6", "e1"), False, False, False)
    assert move_san(pos, move) == "Nd6#"
    pos.play(move)
    assert pos.fen() == board.fen()
    assert names(checkers(pos)) == ["d6", "e1"]
    assert legal_moves(pos) == []
    assert status(pos) == oracle_status(board) == "checkmate"


def test_en_passant_is_the_only_escape_so_not_mate():
    # Black's d7-d5 checks the e4 king with the pawn; the only answer is exd6 e.p., which
    # removes the checker.
    before = "8/3p4/8/4P3/2k1K3/6q1/5r2/8 b - - 0 1"
    board = oracle_board(before)
    board.push_san("d5")
    assert board.is_check() and not board.is_checkmate()
    assert [m.uci() for m in board.legal_moves] == ["e5d6"]
    assert board.is_en_passant(next(iter(board.legal_moves)))

    pos = parse_fen(before)
    move = resolve_san(pos, "d5")
    assert classify_move(pos, move) == MoveCheck(DIRECT, bb("d5"), False, False, False)
    assert move_san(pos, move) == "d5+"
    pos.play(move)
    assert pos.fen() == board.fen() == "8/8/8/3pP3/2k1K3/6q1/5r2/8 w - d6 0 2"
    assert names(checkers(pos)) == ["d5"]
    assert [pos.move_uci(m) for m in legal_moves(pos)] == ["e5d6"]
    assert status(pos) == oracle_status(board) == "check"

    # The same placement without the en-passant right is mate.
    no_ep = "8/8/8/3pP3/2k1K3/6q1/5r2/8 w - - 0 1"
    board = oracle_board(no_ep)
    pos = parse_fen(no_ep)
    assert status(pos) == oracle_status(board) == "checkmate"


def test_single_check_answered_only_by_interposition():
    fen = "k7/8/8/8/8/4B3/6PP/r6K w - - 0 1"
    board = oracle_board(fen)
    assert names(int(board.checkers())) == ["a1"]
    assert sorted(m.uci() for m in board.legal_moves) == ["e3c1", "e3g1"]
    pos = parse_fen(fen)
    assert names(checkers(pos)) == ["a1"]
    assert_same_moves(pos, board)
    assert status(pos) == oracle_status(board) == "check"


def test_pinned_piece_cannot_capture_the_checker_mate():
    # Ng2 could take the e1 rook but is pinned to h1 by the c6 bishop.
    fen = "k7/8/2b5/8/8/8/6NP/4r2K w - - 0 1"
    board = oracle_board(fen)
    assert chess.Move.from_uci("g2e1") in set(board.generate_pseudo_legal_moves())
    assert board.is_pinned(chess.WHITE, chess.G2)
    pos = parse_fen(fen)
    assert names(slider_blockers(pos, pos.king(pos.turn))) == ["g2"]
    assert names(checkers(pos)) == ["e1"]
    assert legal_moves(pos) == []
    assert status(pos) == oracle_status(board) == "checkmate"


@pytest.mark.parametrize("fen", [
    "k7/8/1Q6/8/8/8/8/7K b - - 0 1",            # classic corner stalemate
    "k7/1nK5/1P6/8/4Q3/8/8/8 b - - 0 1",         # only other piece is a pinned knight
    "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",           # king in the corner, queen f7
])
def test_stalemate(fen):
    board = oracle_board(fen)
    assert board.is_stalemate()
    pos = parse_fen(fen)
    assert checkers(pos) == 0
    assert not has_legal_move(pos)
    assert status(pos) == oracle_status(board) == "stalemate"


def test_pinned_piece_moving_along_the_pin_is_not_stalemate():
    fen = "k7/1bK5/1P6/8/4Q3/8/8/8 b - - 0 1"  # the b7 bishop slides along the a8-e4 pin
    board = oracle_board(fen)
    assert not board.is_stalemate()
    pos = parse_fen(fen)
    assert_same_moves(pos, board)
    assert sorted(pos.move_uci(m) for m in legal_moves(pos)) == ["b7c6", "b7d5", "b7e4"]
    assert status(pos) == oracle_status(board) == "ongoing"


def test_stalemate_where_the_only_pawn_move_is_an_illegal_en_passant():
    # Black's e4 pawn is pinned on the a8-h1 diagonal; exd3 e.p. would leave it, e3 is
    # blocked by the white king and f3 is empty. The only non-king pseudo-legal move is the
    # en-passant capture, and every king step is covered.
    fen = "k1N5/8/8/8/3Pp3/4K3/8/1R5B b - d3 0 1"
    board = oracle_board(fen)
    assert board.is_stalemate()
    pseudo = list(board.generate_pseudo_legal_moves())
    non_king = [m for m in pseudo if board.piece_type_at(m.from_square) != chess.KING]
    assert [m.uci() for m in non_king] == ["e4d3"] and board.is_en_passant(non_king[0])
    assert all(board.is_attacked_by(chess.WHITE, m.to_square) for m in pseudo if m not in non_king)
    assert board.fen() == "k1N5/8/8/8/3Pp3/4K3/8/1R5B b - - 0 1"  # no legal e.p.: not written

    pos = parse_fen(fen)
    assert pos.ep_square == chess.D3  # the right itself is valid (d2-d4 was just played)
    assert pos.fen() == board.fen()
    assert pos.fen(en_passant="fen") == fen
    assert legal_moves(pos) == []
    assert status(pos) == oracle_status(board) == "stalemate"
