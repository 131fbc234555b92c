"""The hot loop (chessscan/analysis/plies.py) against the plain core API.

The loop keeps the position in local variables, makes moves inline and takes shortcuts
(module doc of ``plies``). Here every positions column it writes is recomputed with the
core API alone — ``Position.play``, ``resolve_san``, ``classify_move``, ``has_legal_move``,
``zobrist_hash``, ``repetition_key`` — and the shortcut tests for "a legal move exists" are
checked to be sound on real positions.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from chessscan.analysis.plies import _has_quiet_move, _king_can_step
from chessscan.api import scan
from chessscan.core.checks import classify_move, square_list
from chessscan.core.fen import InvalidFen, parse_fen
from chessscan.core.movegen import checkers, has_legal_en_passant, has_legal_move, legal_moves
from chessscan.core.san import resolve_san
from chessscan.core.squares import PAWN
from chessscan.core.zobrist import repetition_key, zobrist_hash
from chessscan.readers.epd import read_epd
from chessscan.readers.pgn import read_games

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"
STANDARD_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


def reference_rows(path: Path) -> dict[int, list[tuple]]:
    """Positions rows of every analyzable game of ``path``, computed with the core API only."""
    out = {}
    for raw in read_games(str(path)):
        variant = raw.tags.get("Variant", "Standard").lower()
        if variant not in ("standard", "chess960", "from position"):
            continue
        pos = parse_fen(raw.tags.get("FEN", STANDARD_FEN), chess960=variant == "chess960")
        seen: dict[int, int] = {}
        key = repetition_key(pos, has_legal_en_passant(pos))
        seen[key] = 1
        rows = []
        for ply, san in enumerate(raw.sans, 1):
            move_number, color = pos.fullmove_number, "white" if pos.turn else "black"
            move = resolve_san(pos, san)
            uci = pos.move_uci(move)
            check = classify_move(pos, move)
            pos.play(move)
            if pos.halfmove_clock == 0:
                seen.clear()
            key = repetition_key(pos, has_legal_en_passant(pos))
            seen[key] = seen.get(key, 0) + 1
            mate = bool(checkers(pos)) and not has_legal_move(pos)
            stale = not checkers(pos) and not has_legal_move(pos)
            rows.append((ply, move_number, color, san, uci, bool(check.checkers), check.kind,
                         square_list(check.checkers), check.by_en_passant, check.by_castling,
                         check.by_promotion, mate, stale, pos.halfmove_clock, zobrist_hash(pos), seen[key]))
            if mate or stale:
                break
        out[raw.index] = rows
    return out


COLUMNS = ["ply", "move_number", "color", "san", "uci", "in_check", "check_kind", "checkers", "by_en_passant",
           "by_castling", "by_promotion", "is_checkmate", "is_stalemate", "halfmove_clock", "zobrist",
           "repetition"]


@pytest.mark.parametrize("name", ["lichess-magnus-300.pgn", "lichess-jishanshaikh4-variants.pgn"])
def test_every_column_equals_the_core_api(name):
    path = SAMPLES / name
    positions = scan(str(path))["positions"]
    expected = reference_rows(path)
    assert sum(map(len, expected.values())) == len(positions) > 1_000
    got: dict[int, list[tuple]] = {}
    for record in positions[["game_index"] + COLUMNS].itertuples(index=False):
        got.setdefault(record[0], []).append(tuple(record[1:]))
    assert got.keys() == {gi for gi, rows in expected.items() if rows}
    for gi, rows in got.items():
        assert [tuple(r) for r in rows] == expected[gi], f"game {gi}"


def test_bulk_columns_for_setups_and_long_games(tmp_path):
    # Black moves first from move 30; then a game of 1,100 plies (knights shuffling: the
    # fivefold repetition ends it automatically, play goes on with a warning).
    shuffle = " ".join(["Nf3 Nf6 Ng1 Ng8"] * 275)
    pgn = ('[FEN "4k3/8/8/8/8/8/4P3/4K3 b - - 3 30"]\n[Result "*"]\n\n30... Kd7 31. e4 Kc6 32. e5 *\n\n'
           f'[Result "*"]\n\n{shuffle} *\n')
    path = tmp_path / "g.pgn"
    path.write_text(pgn)
    positions = scan(str(path))["positions"]
    first = positions[positions.game_index == 0]
    assert first.ply.tolist() == [1, 2, 3, 4]
    assert first.move_number.tolist() == [30, 31, 31, 32]
    assert first.color.tolist() == ["black", "white", "black", "white"]
    assert first.halfmove_clock.tolist() == [4, 0, 1, 0]
    second = positions[positions.game_index == 1]
    assert len(second) == 1100
    assert second.move_number.tolist() == [1 + k // 2 for k in range(1100)]
    assert second.color.tolist() == ["white", "black"] * 550
    assert second.repetition.tolist()[:9] == [1, 1, 1, 2, 2, 2, 2, 3, 3]
    assert second.repetition.max() == 276  # the start position, after the last move


def sample_positions():
    for name in ("sf-books-stalemates-500.epd", "perft-marcel-sample.epd", "perft-cw-special.epd",
                 "arasan-wacnew.epd"):
        for record in read_epd(str(SAMPLES / name)):
            if record.fen and not record.errors:
                try:
                    yield parse_fen(record.fen)
                except InvalidFen:  # unreachable setups (e.g. impossible checks) are skipped
                    continue


def test_legal_move_shortcuts_are_sound():
    """Each shortcut may say "undecided" but never claims a legal move that does not exist, so
    every stalemate and mate reaches the full test."""
    rng = random.Random(7)
    checked = decided = stalemates = mates = 0
    for start in sample_positions():
        pos = start
        for _ in range(6):  # the suite position and a few random continuations
            king = pos.king(pos.turn)
            has_move = has_legal_move(pos)
            if checkers(pos):
                if _king_can_step(pos, king, pos.turn):
                    assert has_move, pos.fen()
                    decided += 1
                elif not has_move:
                    mates += 1
            else:
                pawns = pos.pieces[PAWN] & pos.occupied_co[pos.turn]
                occ = pos.occupied
                pushers = pawns & ~(occ >> 8) if pos.turn else pawns & ~(occ << 8)
                if _has_quiet_move(pos, king, pos.turn, pushers):
                    assert has_move, pos.fen()
                    decided += 1
                elif not has_move:
                    stalemates += 1
            checked += 1
            moves = legal_moves(pos)
            if not moves:
                break
            pos = pos.copy()
            pos.play(rng.choice(moves))
    assert checked > 5_000 and decided > 0.9 * checked
    assert stalemates > 0 and mates > 0


@pytest.mark.parametrize("fen, san, legal", [
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "O-O", True),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", "O-O-O", True),
    ("1r2k3/8/8/8/8/8/8/R3K3 w Q - 0 1", "O-O-O", True),    # b1 attacked: the king does not cross it
    ("2r1k3/8/8/8/8/8/8/R3K3 w Q - 0 1", "O-O-O", False),   # c1 attacked
    ("4k3/8/8/8/8/8/8/R3K2R w K - 0 1", "O-O-O", False),    # no a-side right
    ("4k3/8/8/8/8/8/8/RN2K2R w KQ - 0 1", "O-O-O", False),  # b1 occupied
    ("4k3/8/8/8/8/8/5r2/4K2R w K - 0 1", "O-O", False),     # f1 attacked by the rook on f2
    ("4k3/8/8/8/8/8/8/4K2R w K - 0 1", "O-O", True),
    ("4k3/8/8/8/8/8/4r3/4K2R w K - 0 1", "O-O", False),     # in check
    ("r3k2r/8/8/8/8/8/8/4K3 b kq - 0 1", "O-O", True),
    ("r3k2r/8/8/8/8/8/6P1/4K3 b kq - 0 1", "O-O", True),
    ("r3k2r/8/8/8/8/8/8/4KR2 b kq - 0 1", "O-O", False),    # f8 attacked
])
def test_castling_from_the_standard_setup(tmp_path, fen, san, legal):
    path = tmp_path / "g.pgn"
    path.write_text(f'[FEN "{fen}"]\n[Result "*"]\n\n{san} *\n')
    tables = scan(str(path))
    issues = tables["issues"]
    errors = issues[issues.severity == "error"].code.tolist()
    assert errors == ([] if legal else ["illegal-move"])
    assert len(tables["positions"]) == (1 if legal else 0)
    if legal:
        row = tables["positions"].iloc[0]
        assert row.uci == {"O-O": "e1g1", "O-O-O": "e1c1"}[san].replace("1", "1" if " w " in fen else "8")
