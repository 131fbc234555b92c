"""FEN parsing, validation and writing (chessscan.core.fen).

Every validity code in ``FAULTS`` gets a crafted FEN that triggers it (and only it), several
faults at once must all be reported, ``parse_fen(x).fen() == x`` on many real FENs
(python-chess random walks, the shipped perft samples, lichess puzzles when ../shared is
present), X-FEN / Shredder-FEN castling for Chess960, and the ``strict=False`` behaviour.
python-chess is the oracle for what a valid position and its FEN look like.
"""

from __future__ import annotations

import csv
import io
import random
from pathlib import Path

import chess
import pytest

from chessscan.core.fen import (
    FAULTS, STRUCTURAL_FAULTS, WARNING_FAULTS, InvalidFen, fault_severity, parse_fen, validate_fen,
)
from chessscan.core.movegen import legal_moves
from chessscan.core.position import STARTING_FEN, Position
from conftest import shared_skip_reason

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "data" / "samples"
SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def faults_of(fen: str, **kwargs) -> list[tuple[str, str]]:
    with pytest.raises(InvalidFen) as info:
        parse_fen(fen, **kwargs)
    return info.value.faults


def codes_of(fen: str, **kwargs) -> set[str]:
    return {code for code, _ in faults_of(fen, **kwargs)}


# ================================================================================================
# One crafted FEN per fault code, triggering only that code
# ================================================================================================

FAULT_CASES = [
    # (code, FEN, parse_fen keyword arguments, python-chess status flag or None)
    ("invalid-fen", "4k3/8/8/8/8/8/8/4K3 w - - 0 1 extra", {}, None),
    ("invalid-fen", "4k3/8/8/8/8/8/8/4K3 w -", {}, None),                # python-chess pads this
    ("invalid-fen", "4k3/8/8/8/8/8/4K3 w - - 0 1", {}, None),           # 7 ranks
    ("invalid-fen", "4k3/8/8/8/8/8/8/4K3/8 w - - 0 1", {}, None),       # 9 ranks
    ("invalid-fen", "4k3/8/8/8/8/8/8/4K4 w - - 0 1", {}, None),         # 9 squares
    ("invalid-fen", "4k3/8/8/8/8/8/8/4K2 w - - 0 1", {}, None),         # 7 squares
    ("invalid-fen", "4k3/8/8/8/8/8/8/44K3 w - - 0 1", {}, None),        # two digits in a row
    ("invalid-fen", "4k3/8/8/8/8/8/8/4X3 w - - 0 1", {}, None),         # unknown letter
    ("invalid-fen", "4k3/8/8/8/8/8/8/4K3 W - - 0 1", {}, None),         # side to move
    ("invalid-fen", "4k3/8/8/8/8/8/8/4K3 w X - 0 1", {}, None),         # castling letter
    ("invalid-fen", "4k3/8/8/8/8/8/8/4K3 w - e9 0 1", {}, None),        # en-passant square
    ("invalid-fen", "4k3/8/8/8/8/8/8/4K3 w - - x 1", {}, None),         # halfmove clock
    ("invalid-fen", "4k3/8/8/8/8/8/8/4K3 w - - 0 1.5", {}, None),       # fullmove number
    ("invalid-fen", "4k3/8/8/8/8/8/8/4K3 w - - -1 1", {}, None),        # negative clock
    ("invalid-fen", "4k3/8/8/8/8/8/8/4K3 w - - 0 1", {"counters": False}, None),  # EPD wants 4
    ("missing-king", "4k3/8/8/8/8/8/8/8 w - - 0 1", {}, chess.STATUS_NO_WHITE_KING),
    ("missing-king", "8/8/8/8/8/8/8/4K3 b - - 0 1", {}, chess.STATUS_NO_BLACK_KING),
    ("too-many-kings", "4k3/8/8/8/8/8/8/3KK3 w - - 0 1", {}, chess.STATUS_TOO_MANY_KINGS),
    ("pawns-on-backrank", "4k3/8/8/8/8/8/8/4K2P w - - 0 1", {}, chess.STATUS_PAWNS_ON_BACKRANK),
    ("pawns-on-backrank", "p3k3/8/8/8/8/8/8/4K3 w - - 0 1", {}, chess.STATUS_PAWNS_ON_BACKRANK),
    # 4 queens and 6 pawns: 3 promoted queens but only 2 missing pawns (a warning).
    ("impossible-material", "4k3/8/8/8/8/QQQQ4/PPPPPP2/4K3 w - - 0 1", {}, None),
    ("impossible-material", "4k3/8/8/8/8/8/PPPPPPPP/BBBBKBBB w - - 0 1", {}, None),
    # 17 white pieces.
    ("too-many-pieces", "4k3/8/8/8/8/Q7/PPPPPPPP/RNBQKBNR w - - 0 1", {}, chess.STATUS_TOO_MANY_WHITE_PIECES),
    ("bad-castling-rights", "4k3/8/8/8/8/8/8/4K3 w K - 0 1", {}, chess.STATUS_BAD_CASTLING_RIGHTS),
    ("bad-castling-rights", "4k3/8/8/8/8/8/8/5K1R w K - 0 1", {}, chess.STATUS_BAD_CASTLING_RIGHTS),
    ("bad-castling-rights", "r3k2r/8/8/8/8/8/8/R3K3 w KQkq - 0 1", {}, chess.STATUS_BAD_CASTLING_RIGHTS),
    ("bad-castling-rights", "4k3/8/8/8/8/8/8/4KR1R w FH - 0 1", {"chess960": True},
     chess.STATUS_BAD_CASTLING_RIGHTS),
    ("bad-en-passant", "4k3/8/8/8/8/8/8/4K3 w - e3 0 1", {}, chess.STATUS_INVALID_EP_SQUARE),   # wrong rank
    ("bad-en-passant", "4k3/8/8/8/8/8/8/4K3 w - e6 0 1", {}, chess.STATUS_INVALID_EP_SQUARE),   # no pawn e5
    ("bad-en-passant", "4k3/4n3/8/4p3/8/8/8/4K3 w - e6 0 1", {}, chess.STATUS_INVALID_EP_SQUARE),  # e7 full
    ("opposite-check", "4k3/4R3/8/8/8/8/8/4K3 w - - 0 1", {}, chess.STATUS_OPPOSITE_CHECK),
    ("too-many-checkers", "4r2k/8/8/8/1b6/5n2/8/4K3 w - - 0 1", {}, chess.STATUS_TOO_MANY_CHECKERS),
    ("impossible-check", "7k/8/8/8/8/3n1n2/8/4K3 w - - 0 1", {}, None),          # two knights
    ("impossible-check", "7k/8/8/8/8/3n4/5p2/4K3 w - - 0 1", {}, None),          # pawn + knight
    ("impossible-check", "4r2k/8/8/8/4K3/8/8/4r3 w - - 0 1", {}, chess.STATUS_IMPOSSIBLE_CHECK),  # one line
    # Real: cw-perft-special line 133, bishops a8 and h1 on the long diagonal around f3.
    ("impossible-check", "B6b/8/8/8/2K5/5k2/8/b6B b - - 0 1", {}, chess.STATUS_IMPOSSIBLE_CHECK),
]


# invalid-fen texts python-chess accepts: it pads missing fields, and reads 6 fields as EPD.
ORACLE_ACCEPTS = {"4k3/8/8/8/8/8/8/4K3 w -"}


@pytest.mark.parametrize("code, fen, kwargs, oracle_flag", FAULT_CASES)
def test_fault_code_alone(code, fen, kwargs, oracle_flag):
    assert code in FAULTS
    pos, faults = validate_fen(fen, **kwargs)
    assert {c for c, _ in faults} == {code}, faults
    assert all(isinstance(message, str) and message for _, message in faults)
    if fault_severity(code) == "error":
        assert pos is None
        assert codes_of(fen, **kwargs) == {code}
    else:  # a warning: the position is still parsed and analyzed
        assert pos is not None
        assert parse_fen(fen, **kwargs).fen() == fen
        assert chess.Board(fen).is_valid()
    if oracle_flag is not None:
        status = chess.Board(fen, chess960=kwargs.get("chess960", False)).status()
        assert status & oracle_flag
    if code == "invalid-fen" and "counters" not in kwargs and fen not in ORACLE_ACCEPTS:
        with pytest.raises(ValueError):
            chess.Board(fen)


def test_every_fault_code_has_a_case():
    # chess960-inferred comes from validate_setup, tested below.
    assert {case[0] for case in FAULT_CASES} | {"too-many-pawns", "chess960-inferred"} == set(FAULTS)


def test_chess960_inferred_by_validate_setup():
    from chessscan.core.fen import validate_setup

    pos, faults, inferred = validate_setup("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9")
    assert inferred and pos.chess960 and faults == []
    pos, faults, inferred = validate_setup("4k3/8/8/8/8/8/8/4K2R w K - 0 1")
    assert not inferred and not pos.chess960
    pos, faults, inferred = validate_setup("4k3/8/8/8/8/8/8/4K3 w K - 0 1")  # no rook at all
    assert pos is None and not inferred and [c for c, _ in faults] == ["bad-castling-rights"]


def test_valid_double_check_is_accepted():
    # Rook e8 + knight f3 on a white king e1: a discovered + direct check, which one move gives.
    fen = "4r2k/8/8/8/8/5n2/8/4K3 w - - 0 1"
    assert chess.Board(fen).is_valid()
    assert parse_fen(fen).fen() == fen


def test_too_many_pawns_is_reported():
    assert "too-many-pawns" in codes_of("4k3/8/8/8/8/P7/PPPPPPPP/4K3 w - - 0 1")
    assert chess.Board("4k3/8/8/8/8/P7/PPPPPPPP/4K3 w - - 0 1").status() == chess.STATUS_TOO_MANY_WHITE_PAWNS


def test_too_many_pawns_alone():
    assert codes_of("4k3/8/8/8/8/P7/PPPPPPPP/4K3 w - - 0 1") == {"too-many-pawns"}


@pytest.mark.parametrize("fen, squares", [
    ("4k3/8/8/8/8/8/8/4K2P w - - 0 1", "h1"),
    ("4k3/8/8/8/8/8/8/P3K3 w - - 0 1", "a1"),
    ("2p1k3/8/8/8/8/8/8/4K2P w - - 0 1", "h1 c8"),
])
def test_pawns_on_backrank_message_names_the_pawns(fen, squares):
    (code, message), = faults_of(fen)
    assert code == "pawns-on-backrank"
    assert message.endswith(": " + squares)


EP_CHECK_FEN = "4k3/8/8/3pP3/8/8/8/4K2r w - d6 0 1"
NEGATIVE_FULLMOVE_FEN = "4k3/8/8/8/8/8/8/4K3 w - - 0 -3"


def test_oracle_on_the_cases_below():
    """The expectations of the tests below, confirmed by python-chess."""
    assert chess.Board(EP_CHECK_FEN).status() == chess.STATUS_IMPOSSIBLE_CHECK
    assert chess.Board(EP_CHECK_FEN.replace(" d6 ", " - ")).is_valid()  # only the e.p. square
    with pytest.raises(ValueError, match="negative"):
        chess.Board(NEGATIVE_FULLMOVE_FEN)
    assert chess.Board("4k3/8/8/8/8/8/8/4KR1R w FH - 0 1", chess960=True).fen() == \
        "4k3/8/8/8/8/8/8/4KR1R w K - 0 1"  # python-chess keeps one right (the outer rook)


def test_check_not_explained_by_the_en_passant_double_push():
    assert codes_of(EP_CHECK_FEN) & {"impossible-check", "bad-en-passant"}


def test_negative_fullmove_number_is_invalid():
    assert codes_of(NEGATIVE_FULLMOVE_FEN) == {"invalid-fen"}


@pytest.mark.parametrize("counters", ["1000000000 1", "0 1000000000", "99999999999999999999 1",
                                      "3000000000 5000000000"])
def test_counters_over_the_tables_range_are_invalid_not_a_crash(counters):
    # The tables hold clocks and move numbers as int32; the compiled Position as a C int.
    with pytest.raises(InvalidFen) as err:
        parse_fen(f"4k3/8/8/8/8/8/8/4K3 w - - {counters}")
    assert err.value.codes == ["invalid-fen"] and "over 999,999,999" in str(err.value)
    pos = parse_fen("4k3/8/8/8/8/8/8/4K3 w - - 999999999 999999999")
    assert (pos.halfmove_clock, pos.fullmove_number) == (999_999_999, 999_999_999)



@pytest.mark.parametrize("counters, why", [
    ("+1 1", "must be integers"), ("0 1_0", "must be integers"), ("\u0663 1", "must be integers"),
    ("0 \uff11", "must be integers"), ("1- 1", "must be integers"),
    ("0 " + "9" * 5000, "over 999,999,999"), ("-" + "9" * 5000 + " 1", "negative")],
    ids=["plus", "underscore", "arabic-indic", "fullwidth", "trailing-minus", "5000-digits",
         "minus-5000-digits"])
def test_counters_are_ascii_digits(counters, why):
    # int() took '+1', '1_0' and other scripts' digits as counters, and refused 4300+ digits.
    with pytest.raises(InvalidFen) as err:
        parse_fen(f"4k3/8/8/8/8/8/8/4K3 w - - {counters}")
    assert err.value.codes == ["invalid-fen"] and why in str(err.value)
    pos = parse_fen("4k3/8/8/8/8/8/8/4K3 w - - 007 -0")
    assert (pos.halfmove_clock, pos.fullmove_number) == (7, 1)

# ================================================================================================
# Several faults at once: all of them are reported
# ================================================================================================

@pytest.mark.parametrize("fen, kwargs, expected", [
    # pawn on a1, castling rights without rooks, e3 on the wrong rank for White to move
    ("4k3/8/8/8/8/8/8/P3K3 w kq e3 0 1", {},
     {"pawns-on-backrank", "bad-castling-rights", "bad-en-passant"}),
    # no kings at all
    ("8/8/8/8/8/8/8/8 w - - 0 1", {}, {"missing-king"}),
    # a missing black king stops the king-dependent rules but not the counting ones
    ("8/8/8/8/8/QQQQ4/PPPPPP2/4K3 w - - 0 1", {}, {"missing-king", "impossible-material"}),
    # black in check with White to move, and an impossible castling right
    ("4k3/4R3/8/8/8/8/8/4K3 w k - 0 1", {}, {"opposite-check", "bad-castling-rights"}),
    # White to move in check from three pieces while Black is in check too
    ("4r2k/8/8/8/1b5R/5n2/8/4K3 w - - 0 1", {}, {"too-many-checkers", "opposite-check"}),
    # two knights give check; the e6 square has no pawn in front of it
    ("7k/8/8/8/8/3n1n2/8/4K3 w - e6 0 1", {}, {"impossible-check", "bad-en-passant"}),
    # two kings each, and a pawn on h8
    ("kk5P/8/8/8/8/8/8/KK6 w - - 0 1", {}, {"too-many-kings", "pawns-on-backrank"}),
])
def test_several_faults_reported(fen, kwargs, expected):
    error = pytest.raises(InvalidFen, parse_fen, fen, **kwargs).value
    assert set(error.codes) == expected
    assert error.codes == [code for code, _ in error.faults]
    assert len(error.faults) == len(set(error.faults))  # no duplicate (code, message)
    assert error.fen == fen
    assert fen in str(error)
    assert isinstance(error, ValueError)


def test_every_message_mentions_its_subject():
    error = pytest.raises(InvalidFen, parse_fen, "4k3/8/8/8/8/8/8/P3K3 w kq e3 0 1").value
    messages = dict(error.faults)
    assert "e3" in messages["bad-en-passant"]
    assert len([c for c in error.codes if c == "bad-castling-rights"]) == 2  # 'k' and 'q'


# ================================================================================================
# Round trips on real FENs
# ================================================================================================

def walk_fens(seed: int, chess960: bool, plies: int = 120) -> list[str]:
    rng = random.Random(seed)
    board = chess.Board.from_chess960_pos(rng.randrange(960)) if chess960 else chess.Board()
    fens = []
    for _ in range(plies):
        fens.append(board.fen())
        moves = list(board.legal_moves)
        if not moves:
            break
        # Favour pawn double pushes so en-passant squares show up.
        pushes = [m for m in moves if board.piece_type_at(m.from_square) == chess.PAWN
                  and abs(m.to_square - m.from_square) == 16]
        board.push(rng.choice(pushes if pushes and rng.random() < 0.3 else moves))
    return fens


@pytest.mark.parametrize("chess960", [False, True], ids=["standard", "chess960"])
def test_round_trip_random_walks(chess960):
    fens = [fen for seed in range(40) for fen in walk_fens(seed, chess960)]
    assert len(fens) > 3000
    with_ep = with_castling = 0
    for fen in fens:
        pos = parse_fen(fen, chess960=chess960)
        assert pos.fen() == fen
        assert pos.chess960 == chess960
        with_ep += fen.split()[3] != "-"
        with_castling += fen.split()[2] != "-"
    assert with_ep >= 20 and with_castling >= 1000


@pytest.mark.parametrize("name", ["perft-marcel-sample.epd", "perft-cw-special.epd"])
def test_round_trip_shipped_perft_positions(name):
    text = (SAMPLES / name).read_text()
    fens = [line.split(";")[0].strip() for line in text.splitlines()
            if line.strip() and not line.startswith("#")]
    assert len(fens) in (300, 174)
    checked = 0
    for fen in fens:
        if not chess.Board(fen).is_valid():
            assert fen == "B6b/8/8/8/2K5/5k2/8/b6B b - - 0 1"  # the one impossible check
            continue
        assert parse_fen(fen).fen() == fen == chess.Board(fen).fen()
        checked += 1
    assert checked == len(fens) - (name == "perft-cw-special.epd")


def test_round_trip_lichess_puzzles():
    path = SHARED / "data" / "puzzles" / "lichess-puzzles-sample-5k.csv"
    if not path.exists():
        pytest.skip(shared_skip_reason(path))
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    assert len(rows) == 5000
    for row in rows:
        fen = row["FEN"]
        board = chess.Board(fen)
        pos = parse_fen(fen)
        assert pos.fen() == board.fen(), fen
        # And after the opponent's first move of the puzzle line.
        first = row["Moves"].split()[0]
        board.push_uci(first)
        move, = [m for m in legal_moves(pos) if pos.move_uci(m) == first]
        pos.play(move)
        assert pos.fen() == board.fen(), (fen, first)


def test_four_and_five_field_fens_and_epd():
    assert parse_fen("4k3/8/8/8/8/8/8/4K3 w - -").fen() == "4k3/8/8/8/8/8/8/4K3 w - - 0 1"
    assert parse_fen("4k3/8/8/8/8/8/8/4K3 w - - 7").fen() == "4k3/8/8/8/8/8/8/4K3 w - - 7 1"
    pos = parse_fen("4k3/8/8/8/8/8/8/4K3 b - -", counters=False)
    assert (pos.halfmove_clock, pos.fullmove_number) == (0, 1)
    assert parse_fen("4k3/8/8/8/8/8/8/4K3 w - - 0 0").fullmove_number == 1  # as python-chess
    assert chess.Board("4k3/8/8/8/8/8/8/4K3 w - - 0 0").fullmove_number == 1
    assert parse_fen("  4k3/8/8/8/8/8/8/4K3   w  -  -  3  9 \n").fen() == "4k3/8/8/8/8/8/8/4K3 w - - 3 9"
    assert Position.initial().fen() == STARTING_FEN
    assert Position.from_fen(STARTING_FEN) == parse_fen(STARTING_FEN)


def test_en_passant_written_only_when_legal():
    pos = parse_fen(STARTING_FEN)
    pos.play(chess.E2 | chess.E4 << 6)
    board = chess.Board()
    board.push_san("e4")
    assert pos.ep_square == chess.E3
    assert pos.fen() == board.fen() == "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
    assert pos.fen(en_passant="fen") == board.fen(en_passant="fen")
    assert pos.fen(en_passant="fen").split()[3] == "e3"
    # A legal capture exists: written.
    fen = "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1"
    assert parse_fen(fen).fen() == fen == chess.Board(fen).fen()
    # Explainable but not capturable (exd6 would open the fifth rank to the white king):
    # kept in the position, dropped from the FEN, as python-chess does.
    fen = "8/8/8/K2pP2r/8/8/8/4k3 w - d6 0 1"
    pos = parse_fen(fen)
    assert pos.ep_square == chess.D6
    assert pos.fen() == chess.Board(fen).fen() == "8/8/8/K2pP2r/8/8/8/4k3 w - - 0 1"
    assert pos.fen(en_passant="fen") == fen


# ================================================================================================
# Chess960 castling: X-FEN and Shredder-FEN
# ================================================================================================

@pytest.mark.parametrize("fen, written, rights", [
    # Shredder file letters are written back as X-FEN KQkq when the rook is the outermost.
    ("rk5r/8/8/8/8/8/8/RK5R w HAha - 0 1", "rk5r/8/8/8/8/8/8/RK5R w KQkq - 0 1", ["a1", "h1", "a8", "h8"]),
    ("1r2k1r1/8/8/8/8/8/8/1R2K1R1 w GBgb - 0 1", "1r2k1r1/8/8/8/8/8/8/1R2K1R1 w KQkq - 0 1",
     ["b1", "g1", "b8", "g8"]),
    ("1r2k1r1/8/8/8/8/8/8/1R2K1R1 w KQkq - 0 1", "1r2k1r1/8/8/8/8/8/8/1R2K1R1 w KQkq - 0 1",
     ["b1", "g1", "b8", "g8"]),
    # An inner rook keeps its file letter; K/Q name the outermost rook.
    ("4k3/8/8/8/8/8/8/4KR1R w F - 0 1", "4k3/8/8/8/8/8/8/4KR1R w F - 0 1", ["f1"]),
    ("4k3/8/8/8/8/8/8/4KR1R w K - 0 1", "4k3/8/8/8/8/8/8/4KR1R w K - 0 1", ["h1"]),
    ("4k3/8/8/8/8/8/8/4KR1R w H - 0 1", "4k3/8/8/8/8/8/8/4KR1R w K - 0 1", ["h1"]),
    ("4k3/8/8/8/8/8/8/RR2K3 w B - 0 1", "4k3/8/8/8/8/8/8/RR2K3 w B - 0 1", ["b1"]),
    ("r1r1k3/8/8/8/8/8/8/4K3 w c - 0 1", "r1r1k3/8/8/8/8/8/8/4K3 w c - 0 1", ["c8"]),
    ("r1r1k3/8/8/8/8/8/8/4K3 w q - 0 1", "r1r1k3/8/8/8/8/8/8/4K3 w q - 0 1", ["a8"]),
    ("bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w GEge - 0 1",
     "bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w KQkq - 0 1", ["e1", "g1", "e8", "g8"]),
])
def test_chess960_castling_fields(fen, written, rights):
    pos = parse_fen(fen, chess960=True)
    assert sorted(chess.square_name(s) for s in range(64) if pos.castling_rights >> s & 1) == sorted(rights)
    assert pos.fen() == written
    board = chess.Board(fen, chess960=True)
    assert board.is_valid()
    assert pos.fen() == board.fen()
    assert int(board.castling_rights) == pos.castling_rights


def test_standard_chess_accepts_shredder_letters_but_needs_e_and_corner_files():
    assert parse_fen("r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1").fen() == "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"
    # Without chess960=True a right needs the rook on the a- or h-file.
    assert codes_of("4k3/8/8/8/8/8/8/4KR1R w F - 0 1") == {"bad-castling-rights"}
    assert codes_of("1r2k1r1/8/8/8/8/8/8/1R2K1R1 w KQkq - 0 1") == {"bad-castling-rights"}
    assert parse_fen("1r2k1r1/8/8/8/8/8/8/1R2K1R1 w KQkq - 0 1", chess960=True).castling_rights


# ================================================================================================
# strict=False
# ================================================================================================

def test_strict_false_drops_bad_castling_and_bad_en_passant():
    pos = parse_fen("4k3/8/8/8/8/8/8/4K2R w KQkq e6 0 1", strict=False)
    assert pos.castling_rights == 1 << chess.H1  # only the right with king and rook in place
    assert pos.ep_square is None
    assert pos.fen() == "4k3/8/8/8/8/8/8/4K2R w K - 0 1"
    # A valid but uncapturable e.p. square is kept (only an unexplainable one is cleared).
    assert parse_fen("8/8/8/K2pP2r/8/8/8/4k3 w - d6 0 1", strict=False).ep_square == chess.D6


@pytest.mark.parametrize("fen, code", [
    ("4k3/8/8/8/8/P7/PPPPPPPP/4K3 w - - 0 1", "too-many-pawns"),
    ("4k3/8/8/8/8/Q7/PPPPPPPP/RNBQKBNR w - - 0 1", "too-many-pieces"),
    ("4r2k/8/8/8/1b6/5n2/8/4K3 w - - 0 1", "too-many-checkers"),
    ("B6b/8/8/8/2K5/5k2/8/b6B b - - 0 1", "impossible-check"),
    ("4k3/8/8/8/8/8/8/4K3 w K - 0 1", "bad-castling-rights"),
    ("4k3/8/8/8/8/8/8/4K3 w - e6 0 1", "bad-en-passant"),
])
def test_strict_false_accepts_non_structural_faults(fen, code):
    assert code not in STRUCTURAL_FAULTS
    assert code in codes_of(fen)
    pos = parse_fen(fen, strict=False)
    assert pos.fen().split()[0] == fen.split()[0]


@pytest.mark.parametrize("fen, code", [
    ("4k3/8/8/8/8/8/8/4K3 w - - 0 1 extra", "invalid-fen"),
    ("4k3/8/8/8/8/8/8/8 w - - 0 1", "missing-king"),
    ("4k3/8/8/8/8/8/8/3KK3 w - - 0 1", "too-many-kings"),
    ("4k3/8/8/8/8/8/8/4K2P w - - 0 1", "pawns-on-backrank"),
    ("4k3/4R3/8/8/8/8/8/4K3 w - - 0 1", "opposite-check"),
])
def test_strict_false_still_raises_structural_faults(fen, code):
    assert code in STRUCTURAL_FAULTS
    error = pytest.raises(InvalidFen, parse_fen, fen, strict=False).value
    assert set(error.codes) == {code}


def test_structural_faults_are_fault_codes():
    assert STRUCTURAL_FAULTS <= set(FAULTS)
    assert WARNING_FAULTS <= set(FAULTS)
    assert not STRUCTURAL_FAULTS & WARNING_FAULTS


def test_warnings_alone_do_not_raise_but_join_errors():
    fen = "4k3/8/8/8/8/QQQQ4/PPPPPP2/4K3 w - - 0 1"
    pos, faults = validate_fen(fen)
    assert pos is not None and [c for c, _ in faults] == ["impossible-material"]
    assert "3 promoted pieces but only 2 missing pawns" in faults[0][1]
    assert parse_fen(fen, strict=False).fen() == fen
    # With an error beside it, the warning is reported too.
    pos, faults = validate_fen("4k3/8/8/8/8/QQQQ4/PPPPPP2/4K3 w K - 0 1")
    assert pos is None and {c for c, _ in faults} == {"impossible-material", "bad-castling-rights"}
    pos, faults = validate_fen(STARTING_FEN)
    assert pos == parse_fen(STARTING_FEN) and faults == []


def test_strict_false_keeps_at_most_one_right_per_side():
    pos = parse_fen("4k3/8/8/8/8/8/8/4KR1R w FH - 0 1", chess960=True, strict=False)
    assert bin(pos.castling_rights).count("1") <= 1
    parse_fen(pos.fen(), chess960=True)  # what we write must parse again
