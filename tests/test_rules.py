"""Repetition, draw rules, perpetual checks and what the game text claims (crafted games),
and the Zobrist key against python-chess."""

from __future__ import annotations

import random

import chess
import chess.polyglot
import pandas as pd

from chessscan import scan
from chessscan.analysis.repetition import Perpetual, find_perpetuals
from chessscan.core.fen import parse_fen
from chessscan.core.position import Position
from chessscan.core.rules import is_insufficient_material, side_cannot_mate
from chessscan.core.san import resolve_san
from chessscan.core.zobrist import base_key, zobrist_hash
from conftest import SAMPLES


def game(moves: str, result: str = "*", fen: str | None = None, tag_result: str | None = None) -> str:
    tags = ['[Event "crafted"]', f'[Result "{tag_result or result}"]']
    if fen:
        tags += [f'[FEN "{fen}"]', '[SetUp "1"]']
    return "\n".join(tags) + f"\n\n{moves} {result}\n\n"


def run(tmp_path, *games: str):
    path = tmp_path / "g.pgn"
    path.write_text("".join(games))
    return scan(path)


PERPETUAL_FEN = "7k/6p1/8/8/8/8/6PP/3Q2K1 w - - 0 1"
PERPETUAL = "1. Qd8+ Kh7 2. Qd3+ Kh8 3. Qd8+ Kh7 4. Qd3+ Kh8 5. Qd8+ Kh7"


def test_perpetual_check_threefold(tmp_path):
    t = run(tmp_path, game(PERPETUAL, "1/2-1/2", PERPETUAL_FEN))
    per, g, pos = t["perpetuals"], t["games"].iloc[0], t["positions"]
    assert len(per) == 1
    row = per.iloc[0]
    assert (row.side, row.first_ply, row.last_ply, row.checks_given, row.occurrences, row.game_ended, row.game_result) == \
        ("white", 1, 10, 4, 3, True, "1/2-1/2")
    assert g.perpetuals == 1 and g.outcome == "threefold_repetition" and g.result_consistent
    assert list(pos.repetition) == [1, 1, 1, 1, 2, 2, 2, 2, 3, 3]
    # python-chess agrees on every repetition count.
    board = chess.Board(PERPETUAL_FEN)
    for san, rep in zip(pos.san, pos.repetition):
        board.push_san(san)
        assert board.is_repetition(rep) and not board.is_repetition(rep + 1)


def test_twofold_cycle_of_checks_is_reported(tmp_path):
    t = run(tmp_path, game("1. Qd8+ Kh7 2. Qd3+ Kh8 3. Qd8+", "1/2-1/2", PERPETUAL_FEN))
    row = t["perpetuals"].iloc[0]
    assert (row.side, row.first_ply, row.last_ply, row.checks_given, row.occurrences) == ("white", 1, 5, 2, 2)
    assert t["games"].outcome[0] == "none"


def test_quiet_repetition_is_not_perpetual(tmp_path):
    t = run(tmp_path, game("1. Nf3 Nf6 2. Ng1 Ng8 3. Nf3 Nf6 4. Ng1 Ng8", "1/2-1/2"))
    g = t["games"].iloc[0]
    assert g.outcome == "threefold_repetition" and g.perpetuals == 0
    assert t["perpetuals"].empty
    assert list(t["positions"].repetition) == [1, 1, 1, 2, 2, 2, 2, 3]


def test_fivefold_reached_non_consecutively(tmp_path):
    cycle_g = "Nf3 Nf6 Ng1 Ng8"
    cycle_b = "Nc3 Nc6 Nb1 Nb8"
    plies = " ".join([cycle_g, cycle_b, cycle_g, cycle_b, "e4"]).split()
    moves = " ".join(f"{i // 2 + 1}. {m}" if i % 2 == 0 else m for i, m in enumerate(plies))
    t = run(tmp_path, game(moves, "1/2-1/2"))
    g, issues, pos = t["games"].iloc[0], t["issues"], t["positions"]
    assert g.outcome == "fivefold_repetition" and g.plies == 17
    assert pos.repetition[15] == 5  # the start position, for the fifth time after ply 16
    after = issues[issues.code == "moves-after-end"]
    assert list(after.ply) == [17] and list(after.severity) == ["warning"]


def test_seventyfive_and_fifty_moves(tmp_path):
    fen = "4k3/8/8/8/8/8/R7/4K3 w - - 148 80"
    t = run(tmp_path, game("80. Ra3 Kd7 81. Ra4", "1/2-1/2", fen),
            game("80. Ra3", "*", "4k3/8/8/8/8/8/R7/4K3 w - - 99 80"))
    games, issues = t["games"], t["issues"]
    assert list(games.outcome) == ["seventyfive_moves", "fifty_moves"]
    assert list(t["positions"].halfmove_clock) == [149, 150, 151, 100]
    assert issues[issues.game_index == 0].code.tolist() == ["moves-after-end"]
    assert issues[issues.game_index == 1].empty  # fifty moves is claimable, "*" is fine


def test_seventyfive_moves_mate_counts(tmp_path):
    fen = "7k/8/6K1/8/8/8/8/R7 w - - 149 80"
    t = run(tmp_path, game("80. Ra8#", "1-0", fen))
    assert t["games"].outcome[0] == "checkmate" and t["games"].winner[0] == "white"


def test_insufficient_material(tmp_path):
    t = run(tmp_path, game("1. Kxd2", "1/2-1/2", "4k3/8/8/8/8/8/3r4/3BK3 w - - 0 1"))
    assert t["games"].outcome[0] == "insufficient_material"
    cases = {  # FEN -> insufficient (python-chess agrees on each)
        "4k3/8/8/8/8/8/8/4K3 w - - 0 1": True,
        "4k3/8/8/8/8/8/8/3NK3 w - - 0 1": True,
        "4k3/8/8/8/8/8/8/2NNK3 w - - 0 1": False,
        "4k3/8/8/8/8/8/8/2B1KB2 w - - 0 1": False,
        "4kb2/8/8/8/8/8/8/2B1K3 w - - 0 1": True,
        "3bk3/8/8/8/8/8/8/2B1K3 w - - 0 1": True,   # both bishops on dark squares
        "2b1k3/8/8/8/8/8/8/2B1K3 w - - 0 1": False,  # opposite colors: a self-block mate exists
        "4k1r1/8/8/8/8/8/8/3NK3 w - - 0 1": False,
    }
    for fen, expected in cases.items():
        assert chess.Board(fen).is_insufficient_material() == expected, fen
        assert is_insufficient_material(parse_fen(fen, strict=False)) == expected, fen
    # A lone knight cannot mate a king that has only queens beside it, but the queens can.
    with_queen = parse_fen("4k3/8/8/8/8/8/8/3NK2q w - - 0 1")
    assert side_cannot_mate(with_queen, chess.WHITE) and not side_cannot_mate(with_queen, chess.BLACK)


def test_result_tag_contradicts_mate(tmp_path):
    t = run(tmp_path, game("1. f3 e5 2. g4 Qh4#", "1-0"),
            game("1. f3 e5 2. g4 Qh4#", "0-1"),
            game("1. f3 e5 2. g4 Qh4#", "*"),
            game("1. f3 e5 2. g4 Qh4#", "0-1", tag_result="1/2-1/2"))
    games, issues = t["games"], t["issues"]
    assert list(games.result_consistent) == [False, True, False, False]
    assert list(games.winner) == ["black"] * 4
    codes = [sorted(issues[issues.game_index == i].code) for i in range(4)]
    assert codes == [["result-mismatch"], [], ["result-unfinished"], ["result-mismatch", "result-token-mismatch"]]
    row = issues[issues.code == "result-mismatch"].iloc[0]
    assert row.severity == "error" and "checkmate by black, so 0-1" in row.message


def test_setup_already_mated_has_its_winner(tmp_path):
    """A [FEN] whose side to move is mated: the other side has won; the Result is checked
    against that."""
    black_mated, white_mated = "R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 30", "6k1/8/8/8/8/8/5PPP/r5K1 w - - 0 30"
    t = run(tmp_path, game("", "1-0", black_mated), game("", "0-1", white_mated), game("", "1-0", white_mated))
    games, issues = t["games"], t["issues"]
    assert list(games.outcome) == ["checkmate"] * 3
    assert list(games.winner) == ["white", "black", "black"]
    assert list(games.result_consistent) == [True, True, False]
    assert list(issues.code) == ["result-mismatch"] and list(issues.game_index) == [2]


def test_result_tag_that_is_no_result(tmp_path):
    """'?' (and any value other than the four of §8.1.1.7) is reported once; the movetext's
    token then stands for the claim, checked against the board as usual."""
    t = run(tmp_path, game("1. f3 e5 2. g4 Qh4#", "0-1", tag_result="?"),
            game("1. f3 e5 2. g4 Qh4#", "1-0", tag_result="?"),
            game("1. e4 e5", "*", tag_result="unknown"),
            game("1. e4 e5", "*"))
    games, issues = t["games"], t["issues"]
    codes = [sorted(issues[issues.game_index == i].code) for i in range(4)]
    assert codes == [["result-tag-invalid"], ["result-mismatch", "result-tag-invalid"], ["result-tag-invalid"], []]
    assert list(games.result_consistent) == [False, False, False, True]
    row = issues[issues.code == "result-tag-invalid"].iloc[0]
    assert row.severity == "warning" and row.message.startswith("Result tag '?' is not one of")


def test_dead_position_with_decisive_result(tmp_path):
    """FIDE art. 5.2.2: a dead position ends the game drawn, as a stalemate does, so a decisive
    Result contradicts it (an error); '1/2-1/2' is consistent, '*' is unfinished. Moves after
    the capture do not revive the game."""
    fen = "4k3/8/8/8/8/8/3r4/3BK3 w - - 0 1"  # 1. Kxd2 leaves king and bishop against king
    t = run(tmp_path, game("1. Kxd2", "1-0", fen), game("1. Kxd2 Ke7", "0-1", fen),
            game("1. Kxd2", "1/2-1/2", fen), game("1. Kxd2", "*", fen))
    games, issues = t["games"], t["issues"]
    assert list(games.outcome) == ["insufficient_material"] * 4
    assert list(games.result_consistent) == [False, False, True, False]
    assert games.error_code.astype("string").fillna("").tolist() == ["result-mismatch", "result-mismatch", "", ""]
    assert games.error_ply.fillna(-1).tolist() == [1, 2, -1, -1]
    codes = [sorted(issues[issues.game_index == i].code) for i in range(4)]
    assert codes == [["result-mismatch"], ["moves-after-end", "result-mismatch"], [], ["result-unfinished"]]
    row = issues[issues.code == "result-mismatch"].iloc[0]
    assert (row.severity, row.ply) == ("error", 1)
    assert row.message == ("Result '1-0' contradicts the final position: a dead position (insufficient "
                           "material, FIDE art. 5.2.2), so 1/2-1/2")


def test_other_automatic_draws_leave_a_decisive_result_alone(tmp_path):
    """The 75-move and fivefold rules (art. 9.6) entered the Laws in 2014: an older game with
    a decisive Result after such an end is not an error (the moves after it are reported)."""
    t = run(tmp_path, game("80. Ra3 Kd8", "1-0", "4k3/8/8/8/8/8/R7/4K3 w - - 149 80"))
    assert t["games"].outcome[0] == "seventyfive_moves"
    assert pd.isna(t["games"].error_code[0]) and t["games"].result_consistent[0]
    assert t["issues"].code.tolist() == ["moves-after-end"]


def test_stalemate_with_decisive_result(tmp_path):
    t = run(tmp_path, game("1. Qf7", "1-0", "7k/8/6K1/8/8/8/8/5Q2 w - - 0 1"))
    assert t["games"].outcome[0] == "stalemate"
    assert t["issues"].code.tolist() == ["result-mismatch"]


def test_suffixes_against_the_position(tmp_path):
    t = run(tmp_path, game("1. e4 e5 2. Qh5# Nc6 3. Bc4+ Nf6", "*"),
            game("1. f3 e5 2. g4 Qh4", "0-1"),
            game("1. f3 e5 2. g4 Qh4+", "0-1"))
    issues = t["issues"]
    mismatches = issues[issues.code == "suffix-mismatch"]
    assert mismatches[["game_index", "ply", "san"]].values.tolist() == [
        [0, 3, "Qh5#"], [0, 5, "Bc4+"], [1, 4, "Qh4"], [2, 4, "Qh4+"]]
    assert mismatches.message.tolist() == [
        "2.Qh5#: it is written as mate but is not check",
        "3.Bc4+: it is written as check but does not give check",
        "2...Qh4: it mates but is written without '#'",
        "2...Qh4+: it mates but is written without '#'",
    ]
    assert (mismatches.severity == "warning").all()
    assert list(mismatches.line) == [4, 4, 9, 14]


def test_find_perpetuals_merges_overlapping_cycles():
    keys = [1, 2, 3, 4, 1, 2, 3, 4, 1]
    checks = [False, True, False, True, False, True, False, True, False]
    assert find_perpetuals(keys, checks, True) == [Perpetual(True, 0, 8, 4, 3)]
    # A quiet white move at ply 3 breaks the threefold run; only the twofold cycle that
    # starts after it (plies 3..7, white checking at 5 and 7) is left.
    checks[3] = False
    assert find_perpetuals(keys, checks, True) == [Perpetual(True, 3, 7, 2, 2)]


def test_incremental_key_equals_recomputed_and_polyglot():
    rng = random.Random(7)
    played = 0
    for n in range(120):
        chess960 = n % 2 == 1
        board = chess.Board.from_chess960_pos(rng.randrange(960)) if chess960 else chess.Board()
        board.chess960 = chess960
        pos = Position.from_fen(board.fen(), chess960=chess960)
        for _ in range(rng.randrange(20, 160)):
            moves = list(board.legal_moves)
            if not moves:
                break
            move = rng.choice(moves)
            pos.play(resolve_san(pos, board.san(move)))
            board.push(move)
            played += 1
            assert pos.key == base_key(pos)
            assert zobrist_hash(pos) == chess.polyglot.zobrist_hash(board), board.fen()
    assert played > 5000


def test_zobrist_column_matches_polyglot_on_sample():
    t = scan(SAMPLES / "lichess-magnus-300.pgn.zst")
    pos, games = t["positions"], t["games"]
    board = None
    current = None
    for row in pos.itertuples():
        if row.game_index != current:
            current = row.game_index
            board = chess.Board()
        board.push_san(row.san)
        assert int(row.zobrist) == chess.polyglot.zobrist_hash(board)
    assert len(pos) == games.plies.sum()


def test_repetition_ignores_en_passant_square_without_legal_capture(tmp_path):
    # After 1. e4 the en-passant square e3 is set but no black pawn can take: the position
    # after 3. Ng1 repeats the one after 1. e4 because an unusable en-passant square does not
    # make positions differ (FIDE art. 9.2.2).
    t = run(tmp_path, game("1. e4 Nf6 2. Nf3 Ng8 3. Ng1 Nf6", "*"))
    assert list(t["positions"].repetition) == [1, 1, 1, 1, 2, 2]
    board = chess.Board()
    for san in "e4 Nf6 Nf3 Ng8 Ng1 Nf6".split():
        board.push_san(san)
    assert board.is_repetition(2)


def test_games_perpetuals_sum_to_the_summarys_perpetual_checks():
    """One definition: games.perpetuals counts the runs with a third occurrence, as the
    summary's perpetual_checks does; twofold cycles are perpetuals rows with occurrences 2."""
    from chessscan import scan

    report = scan(str(SAMPLES / "lichess-magnus-300.pgn"), cross_check="off", jobs=1)
    per = report.perpetuals
    assert int(report.games.perpetuals.sum()) == report.summary["perpetual_checks"] == int((per.occurrences >= 3).sum())
    assert int((per.occurrences == 2).sum()) == report.summary["twofold_check_cycles"] > 0
