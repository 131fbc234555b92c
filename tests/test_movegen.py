"""Move generation (chessscan.core.movegen) and SAN (chessscan.core.san).

- perft against known node counts: the shipped samples in data/samples (always run, with
  a per-count node cap) and, marked ``slow``, the classic suites in ../shared/data/perft at
  every depth whose count is <= 1,000,000;
- a differential test against python-chess (the independent oracle) on seeded random walks,
  standard and Chess960, collecting positions in strata (in check with <= 2 replies, other
  in-check, en passant available, castling available, promotions available, quiet) and
  asserting each stratum got a minimum number of positions;
- SAN: round trips on the same walks, and the error classes on crafted cases.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import chess
import pytest

from chessscan.core.fen import parse_fen
from chessscan.core.movegen import (
    attackers, attackers_mask, checkers, divide, has_legal_move, has_legal_move_known, is_legal,
    iter_legal_moves, legal_moves, perft, pinned, slider_blockers,
)
from chessscan.core.position import STARTING_FEN, Position, make_move
from chessscan.core.squares import BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK
from chessscan.core.san import (
    AmbiguousMove, IllegalMove, InvalidSan, SanError, move_san, parse_san, resolve_quick, resolve_san,
)
from conftest import shared_skip_reason

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "data" / "samples"
SHARED = Path(__file__).resolve().parents[1].parent / "shared"
SHARED_PERFT = SHARED / "data" / "perft"

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


def names(mask: int) -> list[str]:
    return sorted(chess.square_name(s) for s in range(64) if mask >> s & 1)


def sq(name: str) -> int:
    return chess.parse_square(name)


# ================================================================================================
# Perft suites: a tiny parser for the two layouts (to move into chessscan.readers later)
# ================================================================================================

@dataclass(frozen=True)
class PerftCase:
    fen: str
    counts: dict  # depth -> node count
    line: int


def parse_epd_perft(text: str) -> list[PerftCase]:
    """EPD perft lines ``<fen> ;D1 20 ;D2 400`` (also ``; D1 20; D2 400``). Blank and ``#``
    lines are skipped; NUL bytes (marcel/cw files end every line with one) are dropped."""
    cases = []
    for number, raw in enumerate(text.replace("\0", "").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fen, *ops = line.split(";")
        counts = {}
        for op in ops:
            op = op.strip()
            if not op:
                continue
            key, value = op.split()
            assert key[0] == "D", f"line {number}: unexpected opcode {op!r}"
            counts[int(key[1:])] = int(value)
        cases.append(PerftCase(fen.strip(), counts, number))
    return cases


def parse_python_chess_perft(text: str) -> list[PerftCase]:
    """python-chess's ``.perft`` layout: ``id ...`` / ``epd <fen>`` / ``perft <depth> <count>``."""
    cases: list[PerftCase] = []
    fen, counts, start = None, {}, 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("epd "):
            if fen is not None:
                cases.append(PerftCase(fen, counts, start))
            fen, counts, start = line[4:].strip(), {}, number
        elif line.startswith("perft "):
            _, depth, count = line.split()
            counts[int(depth)] = int(count)
    if fen is not None:
        cases.append(PerftCase(fen, counts, start))
    return cases


def read_suite(path: Path) -> list[PerftCase]:
    text = path.read_bytes().decode("ascii")
    return parse_python_chess_perft(text) if path.suffix == ".perft" else parse_epd_perft(text)


def suite_position(fen: str) -> Position:
    return parse_fen(fen, chess960=True, strict=False)


def run_suite(cases: list[PerftCase], cap: int) -> tuple[int, list[tuple]]:
    """Perft every (case, depth) whose expected count is <= ``cap``; returns the number of
    checks made and the mismatches ``(line, fen, depth, expected, got)``."""
    checked, mismatches = 0, []
    for case in cases:
        pos = suite_position(case.fen)
        for depth, expected in sorted(case.counts.items()):
            if expected > cap:
                continue
            got = perft(pos, depth)
            checked += 1
            if got != expected:
                mismatches.append((case.line, case.fen, depth, expected, got))
    return checked, mismatches


def test_parse_epd_perft_layouts():
    text = (
        "# comment\n\n"
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 ;D1 20 ;D2 400\n"
        "4k3/8/8/8/8/8/8/4K2R w K - 0 1; D1 15; D2 66 \0\n"
        "8/8/8/8/8/8/8/K1k5 w - - 0 1         ;D6 1134888\n"
    )
    cases = parse_epd_perft(text)
    assert [(c.fen, c.counts, c.line) for c in cases] == [
        ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", {1: 20, 2: 400}, 3),
        ("4k3/8/8/8/8/8/8/4K2R w K - 0 1", {1: 15, 2: 66}, 4),
        ("8/8/8/8/8/8/8/K1k5 w - - 0 1", {6: 1134888}, 5),
    ]


def test_parse_python_chess_perft_layout():
    text = (
        "# Position 2\nid pos-2\nepd r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq -\n"
        "perft 1 48\nperft 2 2039\n\nid pos-3\nepd 8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - -\nperft 1 14\n"
    )
    cases = parse_python_chess_perft(text)
    assert [(c.fen, c.counts) for c in cases] == [
        ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq -", {1: 48, 2: 2039}),
        ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - -", {1: 14}),
    ]


# ================================================================================================
# Perft on the shipped samples (no ../shared needed)
# ================================================================================================

# Per-count node cap for the always-run suites: the two files together take a few seconds.
NODE_CAP = 30_000

SHIPPED_SUITES = {
    # file: (positions, minimum number of (position, depth) checks under NODE_CAP)
    "perft-marcel-sample.epd": (300, 800),
    "perft-cw-special.epd": (174, 520),
}


@pytest.mark.parametrize("name", sorted(SHIPPED_SUITES))
def test_perft_shipped_samples(name):
    cases = read_suite(SAMPLES / name)
    positions, min_checks = SHIPPED_SUITES[name]
    assert len(cases) == positions
    checked, mismatches = run_suite(cases, NODE_CAP)
    assert mismatches == []
    assert checked >= min_checks


def python_chess_perft(board: chess.Board, depth: int) -> int:
    if depth == 1:
        return board.legal_moves.count()
    total = 0
    for move in list(board.legal_moves):
        board.push(move)
        total += python_chess_perft(board, depth - 1)
        board.pop()
    return total


def test_cw_special_deep_only_positions_against_python_chess():
    """cw-perft-special's "special" lines (illegal e.p., castling into/out of check,
    promotions) give only one deep count, above NODE_CAP: cover them at depth 1..2 with
    python-chess as the oracle, comparing the divide at depth 1 too."""
    cases = [c for c in read_suite(SAMPLES / "perft-cw-special.epd") if min(c.counts.values()) > NODE_CAP]
    assert len(cases) >= 40
    for case in cases:
        pos = suite_position(case.fen)
        board = chess.Board(case.fen, chess960=True)
        assert sorted(divide(pos, 1)) == sorted(m.uci() for m in board.legal_moves), case.fen
        assert perft(pos, 2) == python_chess_perft(board, 2), case.fen


def test_wrong_count_is_detected():
    start = parse_fen(STARTING_FEN)
    assert perft(start, 3) == 8902
    assert perft(start, 3) != 8903
    kiwipete = [PerftCase(KIWIPETE, {1: 48, 2: 2039, 3: 97862}, 1)]
    assert run_suite(kiwipete, 100_000) == (3, [])
    corrupted = [PerftCase(KIWIPETE, {1: 48, 2: 2040}, 7)]
    checked, mismatches = run_suite(corrupted, 100_000)
    assert checked == 2
    assert mismatches == [(7, KIWIPETE, 2, 2040, 2039)]


def test_perft_basics():
    start = parse_fen(STARTING_FEN)
    assert [perft(start, d) for d in range(5)] == [1, 20, 400, 8902, 197281]
    kiwipete = parse_fen(KIWIPETE)
    table = divide(kiwipete, 2)
    assert len(table) == 48 and sum(table.values()) == 2039
    assert table["e1g1"] == 43 and table["e1c1"] == 43  # castling written e1g1/e1c1
    # Chess960 UCI: king onto rook.
    kiwipete960 = parse_fen(KIWIPETE, chess960=True)
    assert {"e1h1", "e1a1"} <= set(divide(kiwipete960, 1))
    # perft does not modify the position.
    assert kiwipete.fen() == KIWIPETE


# ================================================================================================
# Slow: the classic suites in ../shared/data/perft
# ================================================================================================

SLOW_SUITES = [
    "pychess-perftsuite.epd",
    "pychess-perftsuite2-sedlak.epd",
    "ethereal-standard.epd",
    "python-chess-tricky.perft",
    "pychess-frc_perftsuite.epd",
]
SLOW_CAP = 1_000_000


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW_SUITES)
def test_perft_classic_suites(name):
    path = SHARED_PERFT / name
    if not path.exists():
        pytest.skip(shared_skip_reason(path))
    cases = read_suite(path)
    assert cases
    checked, mismatches = run_suite(cases, SLOW_CAP)
    assert mismatches == []
    assert checked == sum(1 for c in cases for n in c.counts.values() if n <= SLOW_CAP) > 0
    # Positions whose every count is above the cap (Sedlak's special cases give only D6):
    # perft 3 against python-chess instead.
    for case in cases:
        if min(case.counts.values()) > SLOW_CAP:
            board = chess.Board(case.fen, chess960=True)
            assert perft(suite_position(case.fen), 3) == python_chess_perft(board, 3), case.fen


# ================================================================================================
# Differential test against python-chess on stratified random walks
# ================================================================================================

STRATA = ("check-few", "check", "en-passant", "castling", "promotion", "quiet")
# Positions compared per (variant, stratum), and the minimum each must reach.
QUOTA = {"check-few": 200, "check": 200, "en-passant": 200, "castling": 200, "promotion": 200, "quiet": 250}
MINIMUM = {"check-few": 150, "check": 150, "en-passant": 60, "castling": 150, "promotion": 150, "quiet": 150}
WALKS_PER_VARIANT = 100
MAX_PLIES = 160


def stratum(board: chess.Board, legal: list[chess.Move]) -> str:
    if board.is_check():
        return "check-few" if len(legal) <= 2 else "check"
    if any(board.is_en_passant(m) for m in legal):
        return "en-passant"
    if any(board.is_castling(m) for m in legal):
        return "castling"
    if any(m.promotion for m in legal):
        return "promotion"
    return "quiet"


def choose(rng: random.Random, board: chess.Board, legal: list[chess.Move]) -> chess.Move:
    """A random legal move, biased towards checks, captures, pawn moves (double pushes and
    promotions) so the rare strata fill up."""
    weights = []
    for move in legal:
        w = 1.0
        if board.gives_check(move):
            w += 4
        if board.is_capture(move):
            w += 2
        if board.piece_type_at(move.from_square) == chess.PAWN:
            w += 2
            if abs(move.to_square - move.from_square) == 16:
                w += 3
            if move.promotion:
                w += 3
        weights.append(w)
    return rng.choices(legal, weights)[0]


@dataclass
class Sample:
    fen: str
    chess960: bool
    stratum: str


def collect_samples() -> list[Sample]:
    samples: list[Sample] = []
    taken: Counter = Counter()
    for chess960 in (False, True):
        for seed in range(WALKS_PER_VARIANT):
            rng = random.Random(1_000 * chess960 + seed)
            board = chess.Board.from_chess960_pos(rng.randrange(960)) if chess960 else chess.Board()
            assert board.chess960 == chess960
            for _ in range(MAX_PLIES):
                legal = list(board.legal_moves)
                kind = stratum(board, legal)
                if taken[chess960, kind] < QUOTA[kind] and rng.random() < (0.15 if kind == "quiet" else 1.0):
                    taken[chess960, kind] += 1
                    samples.append(Sample(board.fen(), chess960, kind))
                if not legal or board.is_insufficient_material():
                    break
                board.push(choose(rng, board, legal))
    return samples


@pytest.fixture(scope="module")
def samples() -> list[Sample]:
    return collect_samples()


def test_strata_minimums(samples):
    counts = Counter((s.chess960, s.stratum) for s in samples)
    short = {key: counts[key] for key in ((v, k) for v in (False, True) for k in STRATA)
             if counts[key] < MINIMUM[key[1]]}
    assert short == {}, f"strata below their minimum: {short} (all: {dict(counts)})"


def test_legal_moves_checkers_and_fen_match_python_chess(samples):
    compared_moves = 0
    for sample in samples:
        board = chess.Board(sample.fen, chess960=sample.chess960)
        pos = parse_fen(sample.fen, chess960=sample.chess960)
        assert pos.chess960 == board.chess960
        assert pos.fen() == sample.fen

        mine = {pos.move_uci(m): m for m in legal_moves(pos)}
        assert len(mine) == len(legal_moves(pos)), "duplicate moves"
        theirs = {m.uci(): m for m in board.legal_moves}
        assert set(mine) == set(theirs), (sample.fen, sample.stratum, set(mine) ^ set(theirs))
        assert names(checkers(pos)) == names(int(board.checkers())), sample.fen
        assert has_legal_move(pos) == bool(theirs), sample.fen
        king = pos.king(pos.turn)
        assert has_legal_move_known(pos, king, attackers(pos, not pos.turn, king, pos.occupied),
                                    pinned(pos, king, pos.turn)) == bool(theirs), sample.fen

        for uci, move in mine.items():
            oracle_move = theirs[uci]
            assert pos.is_castling(move) == board.is_castling(oracle_move), (sample.fen, uci)
            assert pos.is_en_passant(move) == board.is_en_passant(oracle_move), (sample.fen, uci)
            child = pos.copy()
            child.play(move)
            board.push(oracle_move)
            assert child.fen() == board.fen(), (sample.fen, uci)
            board.pop()
            compared_moves += 1
        assert pos.fen() == sample.fen  # generation and copies left it untouched
    assert compared_moves > 30_000


def test_san_round_trip_on_walks(samples):
    for sample in samples:
        board = chess.Board(sample.fen, chess960=sample.chess960)
        pos = parse_fen(sample.fen, chess960=sample.chess960)
        for move in legal_moves(pos):
            oracle_move = chess.Move.from_uci(pos.move_uci(move))
            san = board.san(oracle_move)
            assert move_san(pos, move) == san, (sample.fen, pos.move_uci(move))
            assert move_san(pos, move, suffix=False) == san.rstrip("+#")
            assert resolve_san(pos, san) == move, (sample.fen, san)
            assert resolve_san(pos, parse_san(san)) == move


def test_san_resolution_equals_a_search_of_the_legal_moves(samples):
    # Every (piece, origin hint, target, promotion) a SAN token can name, resolved in each
    # sample position, against the legal moves filtered by hand: one match is the move, none
    # an IllegalMove, several an AmbiguousMove. (resolve takes a shortcut for a lone,
    # unpinned candidate when not in check; this is the search it must agree with.) And
    # resolve_quick gives that move or -1 (never another move, nor one for an error).
    letters = {KNIGHT: "N", BISHOP: "B", ROOK: "R", QUEEN: "Q", KING: "K", PAWN: ""}
    checked = shortcut_cases = quick_moves = 0
    for sample in samples[::10]:
        pos = parse_fen(sample.fen, chess960=sample.chess960)
        king = pos.king(pos.turn)
        checking, blockers = checkers(pos), pinned(pos, king, pos.turn)
        by_target: dict[int, list[int]] = {}
        for m in legal_moves(pos):
            by_target.setdefault((m >> 6) & 63, []).append(m)
        in_check = bool(checkers(pos))
        for piece, letter in letters.items():
            for to in range(64):
                hints = [""] if piece != PAWN else ["", "a", "b", "c", "d", "e", "f", "g", "h"]
                for hint in hints:
                    last = (to >> 3) in (0, 7)
                    for promotion in ((0,) if piece != PAWN or not last else (QUEEN, KNIGHT)):
                        name = chess.square_name(to)
                        text = (hint + ("x" if hint else "") if piece == PAWN else letter) + name
                        if promotion:
                            text += "=" + "..NBRQK"[promotion]
                        origin_files = range(8) if not hint else ["abcdefgh".index(hint)]
                        matching = [m for m in by_target.get(to, ()) if m >> 12 == promotion
                                    and pos.mailbox[m & 63] == piece and not pos.is_castling(m)
                                    and (m & 63) % 8 in origin_files
                                    and (piece != PAWN or ((m & 63) % 8 == to % 8) == (hint in ("", name[0])))]
                        try:
                            got = resolve_san(pos, text)
                        except AmbiguousMove:
                            got = "ambiguous"
                        except IllegalMove:
                            got = "illegal"
                        want = matching[0] if len(matching) == 1 else "illegal" if not matching else "ambiguous"
                        assert got == want, (sample.fen, text)
                        parsed = parse_san(text)
                        quick = resolve_quick(pos, parsed.piece, parsed.from_mask, parsed.to_square,
                                              parsed.promotion, blockers, checking)
                        assert quick in (-1, got), (sample.fen, text, quick)
                        quick_moves += quick != -1
                        checked += 1
                        shortcut_cases += len(matching) == 1 and not in_check
    assert checked > 200_000 and shortcut_cases > 4_000, (checked, shortcut_cases)
    assert quick_moves > 4_000, quick_moves
    # A pawn move naming its origin square (UCI-like: the piece standing there decides) is
    # left to resolve; a piece naming it is taken as named.
    start = parse_fen(STARTING_FEN)
    assert resolve_quick(start, PAWN, 1 << sq("e2"), sq("e4"), 0, 0, 0) == -1
    assert resolve_quick(start, PAWN, 1 << sq("g1"), sq("f3"), 0, 0, 0) == -1
    assert resolve_quick(start, KNIGHT, 1 << sq("g1"), sq("f3"), 0, 0, 0) == make_move(sq("g1"), sq("f3"))
    assert resolve_quick(start, PAWN, -1 & (2**64 - 1), sq("e4"), 0, 0, 0) == make_move(sq("e2"), sq("e4"))
    # The one en-passant capture that is no legal move though its pawn is pinned by nothing:
    # both pawns leave the fifth rank, opening it between the king and the rook.
    with pytest.raises(IllegalMove):
        resolve_san(parse_fen("8/8/8/K2pP2r/8/8/8/7k w - d6 0 1"), "exd6")
    assert resolve_san(parse_fen("8/8/8/K2pP3/8/8/8/7k w - d6 0 1"), "exd6") == make_move(sq("e5"), sq("d6"))


@pytest.mark.parametrize("fen, quick, slow", [
    # Rook e7 checks along the e-file; bishop h4 pins the rook f2. Blocks and captures by one
    # unpinned origin are taken as named; two knights reach e4; the pinned rook, a move off
    # the check line and a pawn push that ignores the check are left to the search.
    ("7k/4r3/5P2/6N1/1B5b/2N4R/5R2/4K3 w - - 0 1",
     {"Ne2": "c3e2", "Ne6": "g5e6", "Re3": "h3e3", "Bxe7": "b4e7", "fxe7": "f6e7", "Nce4": "c3e4",
      "Nge4": "g5e4"},
     {"Ne4": AmbiguousMove, "Re2": IllegalMove, "Nd5": IllegalMove, "f7": IllegalMove,
      "Rh2": IllegalMove}),
    # Bishop a5 checks along the diagonal: a single and a double pawn push block it.
    ("4k3/8/8/b7/8/8/1PP5/4K3 w - - 0 1", {"c3": "c2c3", "b4": "b2b4"}, {"b3": IllegalMove}),
    # Rook a8 checks along the eighth rank: a capture and a push that promote.
    ("r6K/1PP5/8/8/8/8/8/k7 w - - 0 1", {"bxa8=Q": "b7a8q", "c8=N": "c7c8n", "b8=R": "b7b8r"},
     {"c8": IllegalMove, "Kg7": None}),
    # Double check (rook e8, knight f3): only the king moves.
    ("4r2k/8/8/8/8/5n2/3B4/4K3 w - - 0 1", {}, {"Be3": IllegalMove, "Kf2": None}),
])
def test_quick_resolution_in_check(fen, quick, slow):
    # In single check resolve_quick takes a block or a capture of the checker by one unpinned
    # origin as named; every other move in check is left (-1) to resolve's search.
    pos = parse_fen(fen)
    king = pos.king(pos.turn)
    checking, blockers = checkers(pos), pinned(pos, king, pos.turn)
    assert checking
    for text, uci in quick.items():
        parsed = parse_san(text)
        move = resolve_san(pos, text)
        assert pos.move_uci(move) == uci, text
        assert resolve_quick(pos, parsed.piece, parsed.from_mask, parsed.to_square, parsed.promotion,
                             blockers, checking) == move, text
    for text, error in slow.items():
        parsed = parse_san(text)
        quick_move = resolve_quick(pos, parsed.piece, parsed.from_mask, parsed.to_square, parsed.promotion,
                                   blockers, checking)
        if error is None:  # a legal king move: the king's own quick path
            assert quick_move == resolve_san(pos, text), text
            continue
        with pytest.raises(error):
            resolve_san(pos, text)
        assert quick_move == -1, text


# ================================================================================================
# Masks, pins, attacks
# ================================================================================================

def test_masks_select_moves():
    pos = parse_fen(KIWIPETE)
    everything = legal_moves(pos)
    from_e5 = legal_moves(pos, from_mask=1 << sq("e5"))
    assert sorted(pos.move_uci(m) for m in from_e5) == sorted(
        u for u in (pos.move_uci(m) for m in everything) if u.startswith("e5"))
    # Castling is the king moving onto its rook: the h1 to-mask selects it.
    onto_h1 = legal_moves(pos, to_mask=1 << sq("h1"))
    assert [pos.move_uci(m) for m in onto_h1] == ["e1g1"]
    assert onto_h1 == [make_move(sq("e1"), sq("h1"))]
    assert next(iter_legal_moves(pos)) in everything
    assert is_legal(pos, make_move(sq("e1"), sq("h1")))
    assert not is_legal(pos, make_move(sq("e1"), sq("g1")))  # castling is not encoded that way


# The side to move's only pawn push is pinned along a diagonal (so illegal), the king is
# boxed in by knights: stalemate, with a pawn that has an empty square ahead. And the same
# with the pawn free (its single and double push; nothing else moves).
PINNED_PUSH_STALEMATES = ["8/7k/8/8/3b4/8/1P1n4/K1n5 w - - 0 1", "k1N5/1p1N4/8/3B4/8/8/7K/8 b - - 0 1"]
FREE_PUSH_ONLY = ["8/7k/8/8/8/8/1P1n4/K1n5 w - - 0 1", "k1N5/1p1N4/8/8/8/8/7K/8 b - - 0 1"]


@pytest.mark.parametrize("fen, moves", [(f, 0) for f in PINNED_PUSH_STALEMATES] + [(f, 2) for f in FREE_PUSH_ONLY])
def test_has_legal_move_known_with_a_pinned_or_free_pawn_push(fen, moves):
    pos = parse_fen(fen)
    board = chess.Board(fen)
    assert len(legal_moves(pos)) == board.legal_moves.count() == moves
    assert board.is_stalemate() == (moves == 0)
    king = pos.king(pos.turn)
    blockers = pinned(pos, king, pos.turn)
    assert names(blockers) == ([] if moves else ["b2"] if pos.turn else ["b7"])
    assert has_legal_move_known(pos, king, 0, blockers) == (moves > 0)
    assert has_legal_move(pos) == (moves > 0)


def test_slider_blockers_and_attackers():
    # White king e1: the d2 bishop is pinned by the b4 bishop, the e2 knight by the e4 rook.
    fen = "4k3/8/8/8/1b2r3/8/3BN3/4K3 w - - 0 1"
    board = chess.Board(fen)
    pos = parse_fen(fen)
    king = pos.king(chess.WHITE)
    pinned = {chess.square_name(s) for s in chess.SQUARES
              if board.color_at(s) == chess.WHITE and board.is_pinned(chess.WHITE, s)}
    assert names(slider_blockers(pos, king)) == sorted(pinned) == ["d2", "e2"]
    # The b4 bishop attacks d2 (not e1: d2 blocks); seen through the d2 bishop it reaches e1.
    assert names(attackers_mask(pos, chess.BLACK, sq("d2"))) == ["b4"]
    assert attackers_mask(pos, chess.BLACK, king) == 0
    assert names(attackers_mask(pos, chess.BLACK, king, pos.occupied & ~(1 << sq("d2")))) == ["b4"]
    # The pinned bishop may move along the pin only; the pinned knight may not move.
    assert sorted(pos.move_uci(m) for m in legal_moves(pos, from_mask=1 << sq("d2"))) == ["d2b4", "d2c3"]
    assert legal_moves(pos, from_mask=1 << sq("e2")) == []


# ================================================================================================
# SAN error classes on crafted cases
# ================================================================================================

SAN_OK = [
    # (FEN, text, expected UCI, python-chess parses it too)
    (STARTING_FEN, "e4", "e2e4", True),
    (STARTING_FEN, "Nf3", "g1f3", True),
    (STARTING_FEN, "Nf3+", "g1f3", True),    # wrong suffix is tolerated
    (STARTING_FEN, "Nf3!?", "g1f3", False),  # annotation glyphs
    (STARTING_FEN, "Ng1-f3", "g1f3", True),  # long algebraic
    (STARTING_FEN, "Ng1f3", "g1f3", True),
    (STARTING_FEN, "e2e4", "e2e4", True),
    (STARTING_FEN, "e2-e4", "e2e4", True),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "O-O", "e1g1", True),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "0-0", "e1g1", True),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "0-0-0", "e1c1", True),
    ("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1", "O-O-O", "e8c8", True),
    ("7k/4P3/8/8/8/8/8/4K3 w - - 0 1", "e8Q", "e7e8q", True),
    ("7k/4P3/8/8/8/8/8/4K3 w - - 0 1", "e8=q", "e7e8q", True),
    ("7k/4P3/8/8/8/8/8/4K3 w - - 0 1", "e8=N", "e7e8n", True),
    ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "exd6", "e5d6", True),
    ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "exd6e.p.", "e5d6", False),
    ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "ed6", "e5d6", True),
    ("4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1", "Nbd2", "b1d2", True),
    ("4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1", "Nfd2", "f3d2", True),
    ("4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1", "N1d2", "b1d2", True),
    # The f3 knight is pinned by the e4 queen: plain Nd2 is unambiguous.
    ("4k3/8/8/8/4q3/5N2/6K1/1N6 w - - 0 1", "Nd2", "b1d2", True),
    ("1k6/8/8/8/Q6Q/8/8/Q3K3 w - - 0 1", "Qa4d4", "a4d4", True),
]


@pytest.mark.parametrize("fen, text, uci, oracle_accepts", SAN_OK)
def test_resolve_san_accepts(fen, text, uci, oracle_accepts):
    pos = parse_fen(fen)
    move = resolve_san(pos, text)
    assert pos.move_uci(move) == uci
    if oracle_accepts:
        assert chess.Board(fen).parse_san(text).uci() == uci


def test_resolve_san_en_passant_marker_is_one_token():
    # A glued e.p. marker is accepted; the PGN reader drops a separate "e.p." token, so the
    # text with a space is not a SAN token.
    pos = parse_fen("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1")
    assert pos.move_uci(resolve_san(pos, "exd6e.p.")) == "e5d6"
    assert pos.move_uci(resolve_san(pos, "exd6ep")) == "e5d6"
    with pytest.raises(InvalidSan):
        resolve_san(pos, "exd6 e.p.")


SAN_ERRORS = [
    # (FEN, text, error class, code)
    (STARTING_FEN, "hello", InvalidSan, "invalid-san"),
    (STARTING_FEN, "", InvalidSan, "invalid-san"),
    (STARTING_FEN, "e9", InvalidSan, "invalid-san"),
    (STARTING_FEN, "Pe4", InvalidSan, "invalid-san"),
    (STARTING_FEN, "Ne4=Q", InvalidSan, "invalid-san"),
    ("7k/4P3/8/8/8/8/8/4K3 w - - 0 1", "e8=K", InvalidSan, "invalid-san"),
    (STARTING_FEN, "e5", IllegalMove, "illegal-move"),
    (STARTING_FEN, "Ke2", IllegalMove, "illegal-move"),
    (STARTING_FEN, "O-O", IllegalMove, "illegal-move"),
    (STARTING_FEN, "Nd4", IllegalMove, "illegal-move"),
    ("r3k2r/8/8/8/8/8/8/R3K2R w - - 0 1", "O-O", IllegalMove, "illegal-move"),  # no right
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "Kg1", IllegalMove, "illegal-move"),
    ("4k3/8/8/8/8/8/8/R3K2r w Q - 0 1", "O-O-O", IllegalMove, "illegal-move"),  # in check
    ("7k/4P3/8/8/8/8/8/4K3 w - - 0 1", "e8", IllegalMove, "illegal-move"),  # missing promotion
    ("4k3/8/8/8/8/8/P7/4K3 w - - 0 1", "a3=Q", IllegalMove, "illegal-move"),  # not the last rank
    ("4k3/8/8/8/4q3/5N2/6K1/1N6 w - - 0 1", "Nfd2", IllegalMove, "illegal-move"),  # pinned
    ("4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1", "Nd2", AmbiguousMove, "ambiguous-move"),
    ("4k3/8/8/8/R7/8/8/R3K3 w - - 0 1", "Ra2", AmbiguousMove, "ambiguous-move"),
    ("1k6/8/8/8/Q6Q/8/8/Q3K3 w - - 0 1", "Qd4", AmbiguousMove, "ambiguous-move"),
    ("1k6/8/8/8/Q6Q/8/8/Q3K3 w - - 0 1", "Qad4", AmbiguousMove, "ambiguous-move"),
]

PYTHON_CHESS_ERRORS = {
    InvalidSan: chess.InvalidMoveError, IllegalMove: chess.IllegalMoveError,
    AmbiguousMove: chess.AmbiguousMoveError,
}


@pytest.mark.parametrize("fen, text, error, code", SAN_ERRORS)
def test_resolve_san_errors(fen, text, error, code):
    pos = parse_fen(fen)
    with pytest.raises(error) as info:
        resolve_san(pos, text)
    assert isinstance(info.value, SanError)
    assert info.value.code == code
    assert info.value.san == text
    # python-chess draws the same line (it calls "e8=K" and "Pe4" other names; skip those).
    if text not in ("e8=K", "Pe4", "Ne4=Q"):
        with pytest.raises(PYTHON_CHESS_ERRORS[error]):
            chess.Board(fen).parse_san(text)


PAWN_CAPTURE_WITHOUT_FILE = [
    ("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1", "d5"),      # chessscan returns e4d5
    ("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1", "xd5"),     # chessscan returns e4d5
    ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "d6"),      # chessscan returns e5d6 (e.p.)
    ("4k3/8/8/3p4/2P1P3/8/8/4K3 w - - 0 1", "d5"),    # chessscan raises AmbiguousMove
]


@pytest.mark.parametrize("fen, text", PAWN_CAPTURE_WITHOUT_FILE)
def test_oracle_rejects_pawn_capture_without_file(fen, text):
    with pytest.raises(chess.IllegalMoveError):
        chess.Board(fen).parse_san(text)


@pytest.mark.parametrize("fen, text", PAWN_CAPTURE_WITHOUT_FILE)
def test_pawn_capture_needs_origin_file(fen, text):
    with pytest.raises(IllegalMove):
        resolve_san(parse_fen(fen), text)


def test_move_san_disambiguation_and_suffixes():
    pos = parse_fen("4k3/8/8/8/8/5N2/8/1N2K3 w - - 0 1")
    assert move_san(pos, make_move(sq("b1"), sq("d2"))) == "Nbd2"
    pinned = parse_fen("4k3/8/8/8/4q3/5N2/6K1/1N6 w - - 0 1")
    assert move_san(pinned, make_move(sq("b1"), sq("d2"))) == "Nd2"
    queens = parse_fen("1k6/8/8/8/Q6Q/8/8/Q3K3 w - - 0 1")
    assert move_san(queens, make_move(sq("a4"), sq("d4"))) == "Qa4d4"
    assert move_san(queens, make_move(sq("h4"), sq("d4"))) == "Qhd4"
    assert move_san(queens, make_move(sq("a1"), sq("d4"))) == "Q1d4"
    mate = parse_fen("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1")
    assert move_san(mate, make_move(sq("a1"), sq("a8"))) == "Ra8#"
    promo = parse_fen("4k3/P7/8/8/8/8/8/4K3 w - - 0 1")
    assert move_san(promo, make_move(sq("a7"), sq("a8"), chess.QUEEN)) == "a8=Q+"
    ep = parse_fen("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1")
    assert move_san(ep, make_move(sq("e5"), sq("d6"))) == "exd6"
    castle = parse_fen("r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1")
    assert move_san(castle, make_move(sq("e8"), sq("a8"))) == "O-O-O"


def test_parse_san_fields_and_null_move():
    parsed = parse_san("Nbd2+")
    assert (parsed.to_square, parsed.promotion, parsed.suffix) == (sq("d2"), 0, "+")
    assert parsed.from_mask == chess.BB_FILE_B
    assert parse_san("exd8=Q#").promotion == chess.QUEEN and parse_san("exd8=Q#").suffix == "#"
    assert resolve_san(parse_fen(STARTING_FEN), "--") == 0


# --- slider attacks (chessscan.core.attacks) -------------------------------------------------

def _relevant_mask(sq: int, deltas) -> int:
    """Squares whose occupancy can shorten a ray from ``sq``: the rays without their last
    square on the board edge (the squares magic bitboards index by)."""
    from chessscan.core.attacks import _sliding_attacks

    edges = 0
    for d in deltas:
        ray = _sliding_attacks(sq, 0, (d,))
        if ray:
            edges |= 1 << (ray.bit_length() - 1 if d > 0 else (ray & -ray).bit_length() - 1)
    return _sliding_attacks(sq, 0, deltas) & ~edges


def _subsets(mask: int):
    subset = 0
    while True:
        yield subset
        subset = (subset - mask) & mask
        if not subset:
            return


@pytest.mark.parametrize("kind", ["rook", "bishop"])
def test_slider_attacks_equal_a_ray_walk(kind):
    """Every attack set a slider can have: on each square, for every occupancy of the squares
    that can block it (carry-rippler subsets; 102,400 for rooks, 5,248 for bishops) and for
    random full boards (pieces beyond the first blocker, the rook itself present or not), the
    tables' answer equals a walk along the rays."""
    from chessscan.core import attacks

    deltas = attacks.ROOK_DELTAS if kind == "rook" else attacks.BISHOP_DELTAS
    lookup = attacks.rook_attacks if kind == "rook" else attacks.bishop_attacks
    walk = attacks._sliding_attacks
    rng = random.Random(7)
    checked = 0
    for sq in range(64):
        mask = _relevant_mask(sq, deltas)
        for occ in _subsets(mask):
            assert lookup(sq, occ) == walk(sq, occ, deltas), (kind, sq, hex(occ))
            checked += 1
        for _ in range(200):
            occ = rng.getrandbits(64) & rng.getrandbits(64)
            assert lookup(sq, occ) == walk(sq, occ, deltas), (kind, sq, hex(occ))
            assert lookup(sq, occ | 1 << sq) == lookup(sq, occ & ~(1 << sq))
    assert checked == (102_400 if kind == "rook" else 5_248)
    queen = attacks.queen_attacks(27, 0x0042_0000_0810_2400)
    assert queen == attacks.rook_attacks(27, 0x0042_0000_0810_2400) | attacks.bishop_attacks(27, 0x0042_0000_0810_2400)
