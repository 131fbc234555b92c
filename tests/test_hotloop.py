"""The hot loop (chessscan/analysis/plies.py) against the plain core API.

The loop keeps the position in local variables, makes moves inline and takes shortcuts
(module doc of ``plies``). Here every positions column it writes is recomputed with the
core API alone — ``Position.play``, ``resolve_san``, ``classify_move``, ``has_legal_move``,
``zobrist_hash``, ``repetition_key`` — and the cases where mate and stalemate are decided
late (after the next token) are pinned down.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from chessscan.api import scan
from chessscan.core.checks import classify_move, square_list
from chessscan.core.fen import parse_fen
from chessscan.core.movegen import checkers, has_legal_en_passant, has_legal_move
from chessscan.core.san import resolve_san
from chessscan.core.zobrist import repetition_key, zobrist_hash
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


def test_moves_hash_of_a_game_longer_than_the_hash_buffer(tmp_path):
    # 16,000 plies of UCI text (80,000 bytes and the start FEN): the loop hands its 64 KiB
    # buffer to the hash once mid-game and the rest at the end; the digest is the one of
    # the whole text at once.
    shuffle = " ".join(["Nf3 Nf6 Ng1 Ng8"] * 4000)
    path = tmp_path / "g.pgn"
    path.write_text(f'[Result "*"]\n\n{shuffle} *\n')
    games = scan(str(path))["games"]
    text = " ".join([STANDARD_FEN] + ["g1f3 g8f6 f3g1 f6g8"] * 4000)
    assert len(text) > 65536 + 5
    assert games.moves_hash.tolist() == [hashlib.blake2b(text.encode(), digest_size=16).hexdigest()]


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


def analyze_text(tmp_path, pgn: str, *args: str):
    path = tmp_path / "g.pgn"
    path.write_text(pgn)
    return scan(str(path), positions=args[0] if args else "all")


def warnings_of(tables) -> list[tuple[int, str, str]]:
    issues = tables["issues"]
    return [(int(p), c, m) for p, c, m in zip(issues.ply, issues.code, issues.message)]


def test_mate_then_more_moves(tmp_path):
    tables = analyze_text(tmp_path, '[Result "0-1"]\n\n1. f3 e5 2. g4 Qh4# 3. Kf2 Qxf2 0-1\n')
    assert warnings_of(tables) == [(5, "moves-after-end", "2 move(s) after the checkmate: Kf2 ... not played")]
    game = tables["games"].iloc[0]
    assert (game.plies, game.outcome, game.winner) == (4, "checkmate", "black")
    assert tables["positions"].is_checkmate.tolist() == [False, False, False, True]


def test_stalemate_with_dead_material_then_a_null_move(tmp_path):
    # Bxb8 leaves king and bishop against king (insufficient material) and stalemates black:
    # stalemate is the outcome, and the pass after it is a move after the end.
    tables = analyze_text(tmp_path, '[FEN "kn6/B1K5/8/8/8/8/8/8 w - - 0 1"]\n[Result "1/2-1/2"]\n\n'
                                    '1. Bxb8 -- 1/2-1/2\n')
    assert warnings_of(tables) == [(2, "moves-after-end", "1 move(s) after the stalemate: -- ... not played")]
    assert tables["games"].outcome.tolist() == ["stalemate"]
    assert tables["positions"].is_stalemate.tolist() == [True]


@pytest.mark.parametrize("movetext, expected", [
    ("1. e4 f5 2. Qh5# g6 *", [(3, "suffix-mismatch", "2.Qh5#: it is written as mate but is only check")]),
    ("1. f3 e5 2. g4 Qh4+ 0-1", [(4, "suffix-mismatch", "2...Qh4+: it mates but is written without '#'")]),
    ("1. f3 e5 2. g4 Qh4# 0-1", []),
    ("1. e4+ e5 *", [(1, "suffix-mismatch", "1.e4+: it is written as check but does not give check")]),
])
def test_check_and_mate_suffixes(tmp_path, movetext, expected):
    result = movetext.split()[-1]
    assert warnings_of(analyze_text(tmp_path, f'[Result "{result}"]\n\n{movetext}\n')) == expected


def test_mate_flag_in_checks_only_rows(tmp_path):
    tables = analyze_text(tmp_path, '[Result "1-0"]\n\n[FEN "7k/5Q2/6K1/8/8/8/8/8 w - - 0 1"]\n\n'
                                    '1. Qf8# 1-0\n', "checks")
    rows = tables["positions"]
    assert rows.san.tolist() == ["Qf8#"] and rows.is_checkmate.tolist() == [True]


def test_games_analyzed_on_several_threads_at_once_equal_one_thread():
    # Dask runs tasks on threads. The per-ply loop's scratch (repetition table, ply history)
    # and the perpetual search's are per thread: shared, a game with issues (Python code
    # mid-game) or the uncompiled core let another thread's game overwrite them.
    import sys
    import threading

    from chessscan.analysis.game import Tally, analyze_game
    from chessscan.analysis.options import AnalysisOptions
    from chessscan.engines.local import new_tables, tables_for

    path = SAMPLES / "lichess-jishanshaikh4-variants.pgn"
    games = list(read_games(path)) + list(read_games(SAMPLES / "lichess-magnus-300.pgn"))[:120]
    options = AnalysisOptions(cross_check="off")

    def analyze(out: list) -> None:
        tables = new_tables(tables_for([str(path)], options), options)
        tally = Tally()
        for raw in games:
            analyze_game(raw, tables, options, tally)
        out.append(({k: v.to_pylist() for k, v in tables["positions"].to_arrays().items()},
                    tables["games"], tables["perpetuals"], tally.as_dict()))

    alone: list = []
    analyze(alone)
    assert sum(p or 0 for p in alone[0][1]["perpetuals"]) > 0 and len(alone[0][0]["ply"]) > 10_000
    together: list = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        threads = [threading.Thread(target=analyze, args=(together,)) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert len(together) == 3
    for result in together:
        assert result == alone[0]


def _strict_sans() -> list[str]:
    """Every strict SAN shape (the reader's plain-movetext grammar) over a spread of squares:
    castling, pawn pushes, captures and promotions, piece moves with each disambiguation,
    each with no suffix, '+' and '#'."""
    files, ranks = "abcdefgh", "12345678"
    squares = [f + r for f in files for r in ranks]
    bodies = ["O-O", "O-O-O"]
    for sq in squares:
        bodies.append(sq)
        if sq[0] != "a":
            bodies.append(f"{chr(ord(sq[0]) - 1)}x{sq}")
        if sq[1] in "18":
            bodies += [f"{sq}={p}" for p in "NBRQ"] + [f"hx{sq}=N", f"bx{sq}=Q"]
    for piece in "NBRQK":
        for sq in squares[::3]:
            for origin in ("", "a", "h", "1", "8", "c3", "h8"):
                for x in ("", "x"):
                    bodies.append(f"{piece}{origin}{x}{sq}")
    return [b + s for b in bodies for s in ("", "+", "#")]


# Tokens outside the strict grammar (the general reader's): the loop reads them from their text.
_LOOSE_SANS = ["0-0", "0-0-0", "O-O-O-O", "e8Q", "e8q", "exd8q+", "Ng1-f3", "Ng1f3", "e2e4", "e2-e4", "exd6ep",
               "Nf3!", "e4?!", "Qh4:e1", "e4+#", "Kx", "ex", "e", "N", "Nf", "Ne8=Q", "e9", "i4", "O-O-", "Pe4"]


def test_strict_san_tokens_read_from_the_key_equal_the_parsed_text():
    # The loop reads a strict SAN token from its key's bytes; every other one through
    # parse_san. Both give the same packed token, or the same error.
    from chessscan.analysis.plies import _key_token, _token
    from chessscan.core.san import InvalidSan
    from chessscan.readers.movetext import san_key

    sans = _strict_sans()
    assert len(sans) > 5000
    for san in sans + _LOOSE_SANS:
        key = san_key(san)
        assert key, san
        try:
            expected = _token(san)
        except InvalidSan:
            with pytest.raises(InvalidSan):
                _key_token(key)
            continue
        assert _key_token(key) == expected, san
    # (a few packed tokens spelled out: piece + 3 | file << 4 | rank << 8 | to << 12 | promotion << 19 | suffix << 22)
    assert _key_token(san_key("O-O+")) == 2 | 8 << 4 | 8 << 8 | 64 << 12 | 1 << 22
    assert _key_token(san_key("exd8=Q#")) == 4 | 4 << 4 | 8 << 8 | 59 << 12 | 5 << 19 | 2 << 22
    assert _key_token(san_key("Nbd7")) == 5 | 1 << 4 | 8 << 8 | 51 << 12


def test_games_analyzed_on_one_game_state_equal_a_new_state_each(tmp_path):
    # analyze_games plays a source's games on one GameState, reset before each game: no field
    # of a game (an error, a mate, perpetual runs, check counts) may reach the next one.
    from chessscan.analysis.game import Tally, analyze_game
    from chessscan.analysis.options import AnalysisOptions
    from chessscan.analysis.plies import GameState
    from chessscan.engines.local import new_tables, tables_for

    path = SAMPLES / "lichess-jishanshaikh4-variants.pgn"
    odd = tmp_path / "odd.pgn"  # an illegal move, a mate, a setup at move 600: each before a game
    odd.write_text('[Result "*"]\n\n1. e4 e5 2. Ke3 Qh4 3. Kd3 *\n\n'
                   '[Result "1-0"]\n\n1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n\n'
                   '[SetUp "1"]\n[FEN "4k3/8/8/8/8/8/8/R3K3 w Q - 0 600"]\n[Result "*"]\n\n'
                   '600. Ra8+ Kd7 601. O-O-O+ Ke6 *\n\n')
    magnus = list(read_games(SAMPLES / "lichess-magnus-300.pgn"))[:120]
    games = list(read_games(path)) + [g for odd_game in read_games(odd) for g in (odd_game, magnus.pop())] + magnus
    options = AnalysisOptions(cross_check="off")

    def analyze(state) -> tuple:
        tables = new_tables(tables_for([str(path)], options), options)
        tally = Tally()
        for raw in games:
            analyze_game(raw, tables, options, tally, state)
        return ({k: v.to_pylist() for k, v in tables["positions"].to_arrays().items()},
                tables["games"], tables["perpetuals"], tables["issues"], tally.as_dict())

    fresh = analyze(None)
    assert sum(p or 0 for p in fresh[1]["perpetuals"]) > 0 and any(fresh[1]["error_code"])
    assert analyze(GameState()) == fresh
