"""The cross-check against python-chess: it agrees on real games, it can fail, and its sample
is deterministic."""

from __future__ import annotations

import zlib
from pathlib import Path

import pandas as pd
import pytest

import chessscan.analysis.crosscheck as crosscheck
import chessscan.analysis.sampling as sampling
from chessscan import scan
from conftest import SAMPLES

MAGNUS = SAMPLES / "lichess-magnus-300.pgn.zst"

STALEMATE = '[Event "s"]\n[FEN "7k/8/6K1/8/8/8/8/5Q2 w - - 0 1"]\n[SetUp "1"]\n[Result "1/2-1/2"]\n\n1. Qf7 1/2-1/2\n\n'
DISCOVERED = '[Event "d"]\n[FEN "4k3/8/8/8/8/8/4B3/4R1K1 w - - 0 1"]\n[SetUp "1"]\n[Result "*"]\n\n1. Bd3+ Kf7 *\n\n'


def test_full_cross_check_agrees_on_the_samples():
    tables = scan([MAGNUS, SAMPLES / "lichess-jishanshaikh4-variants.pgn"], cross_check="full")
    assert tables["disagreements"].empty
    summary = tables["summary"]["cross_check"]
    assert summary["games"] == 300 + 100  # the 8 unsupported-variant games are skipped
    assert summary["positions"] == tables["summary"]["positions"]


def faults(tmp_path, text=STALEMATE + DISCOVERED):
    path = tmp_path / "f.pgn"
    path.write_text(text)
    return scan(path, cross_check="full")["disagreements"]


class WrongRows:
    """The positions rows as the cross-check reads them, with one field of every row
    changed by ``change(row)``: a detector bug, injected where the compiled loop hands over
    its rows."""

    def __init__(self, rows, change):
        self.rows, self.change = rows, change

    def __len__(self):
        return len(self.rows)

    def row(self, i):
        return self.change(self.rows.row(i))


def inject(monkeypatch, change):
    monkeypatch.setattr(sampling, "SAMPLE_EVERY", 1)  # the one game is in the sample's base rate
    real = crosscheck.cross_check_game
    monkeypatch.setattr(crosscheck, "cross_check_game", lambda raw, dis, rows=None, start=0, **kw: real(
        raw, dis, WrongRows(rows, change) if rows is not None else None, start, **kw))


def test_a_wrong_check_kind_is_reported(tmp_path, monkeypatch):
    assert faults(tmp_path).empty
    inject(monkeypatch, lambda row: {**row, "check_kind": "direct" if row["check_kind"] == "discovered"
                                     else row["check_kind"]})
    rows = faults(tmp_path)
    assert rows[["game_index", "ply", "field", "chessscan", "python_chess"]].values.tolist() == [
        [1, 1, "check_kind", "direct", "discovered"]]
    assert rows.fen[0] == "4k3/8/8/8/8/8/4B3/4R1K1 w - - 0 1"


def test_a_missed_stalemate_is_reported(tmp_path, monkeypatch):
    inject(monkeypatch, lambda row: {**row, "is_stalemate": False})
    rows = faults(tmp_path)
    assert rows[["game_index", "ply", "field", "chessscan", "python_chess"]].values.tolist() == [
        [0, 1, "is_stalemate", "False", "True"]]


def test_a_wrong_legal_move_count_is_reported(tmp_path, monkeypatch):
    real = crosscheck.legal_moves
    monkeypatch.setattr(crosscheck, "legal_moves", lambda pos: real(pos)[1:])
    rows = faults(tmp_path, DISCOVERED)
    assert set(rows.field) == {"legal_moves"} and len(rows) == 2
    assert rows.chessscan.astype(int).tolist() == [int(x) - 1 for x in rows.python_chess]


def test_a_wrong_zobrist_key_is_found_by_the_sample_within_8_plies(tmp_path, monkeypatch):
    """``full`` compares the Zobrist key after every ply; the sample every 8th ply, where an
    en-passant capture is legal, where the position repeats and after the last move. A key
    that goes wrong at ply 3 and stays wrong (as a wrong incremental update does) is found by
    the sample at the next of those plies, by ``full`` at ply 3."""

    class WrongFromPly3(WrongRows):  # one game: row i is ply i + 1
        def row(self, i):
            row = self.rows.row(i)
            return {**row, "zobrist": row["zobrist"] + 1} if i >= 2 else row

    monkeypatch.setattr(sampling, "SAMPLE_EVERY", 1)  # the one game is in the sample's base rate
    real = crosscheck.cross_check_game
    monkeypatch.setattr(crosscheck, "cross_check_game", lambda raw, dis, rows=None, start=0, **kw: real(
        raw, dis, WrongFromPly3(rows, None), start, **kw))
    moves = "1. Nf3 Nf6 2. Ng1 Ng8 3. Nf3 Nf6 4. Ng1 Ng8 5. e4 d5 6. e5 f5 7. Nf3 Nc6 *"
    path = tmp_path / "z.pgn"
    path.write_text(f'[Event "z"]\n[Result "*"]\n\n{moves}\n\n')
    plies = {}
    for mode in ("full", "sample"):
        rows = scan(path, cross_check=mode)["disagreements"]
        assert set(rows.field) == {"zobrist"}
        plies[mode] = rows.ply.tolist()
    assert plies["full"] == list(range(3, 15))
    # Plies 4-8 repeat positions (the knights went out and back), 8 is the 8th, after 12
    # (...f5) exf6 e.p. is legal, 14 is the last.
    assert plies["sample"] == [4, 5, 6, 7, 8, 12, 14]

    # A replay stopped by an illegal move: its last ply played is compared as the last one,
    # the number of legal moves too.
    path.write_text(f'[Event "z"]\n[Result "*"]\n\n{moves[:-2]} 8. Qxh7 *\n\n')
    real_legal = crosscheck.legal_moves
    monkeypatch.setattr(crosscheck, "legal_moves", lambda pos: real_legal(pos)[1:])
    rows = scan(path, cross_check="sample")["disagreements"]
    assert rows[rows.field == "zobrist"].ply.tolist() == [4, 5, 6, 7, 8, 12, 14]
    assert rows[rows.field == "legal_moves"].ply.tolist() == [14]


def test_the_sample_compares_the_key_where_a_pawn_stands_ready_to_take_en_passant(tmp_path, monkeypatch):
    """After 1... d5 the white pawn on e5 could take en passant but for the pin along the
    5th rank: the Polyglot key holds the en-passant file all the same, so the sample compares
    the key there (ply 1), as at the last move (ply 3), not at ply 2."""
    inject(monkeypatch, lambda row: {**row, "zobrist": row["zobrist"] + 1})
    monkeypatch.setattr(sampling, "SAMPLE_EVERY", 1)
    path = tmp_path / "ep.pgn"
    path.write_text('[Event "p"]\n[FEN "4k3/3p4/8/K3P2r/8/8/8/8 b - - 0 1"]\n[SetUp "1"]\n[Result "*"]\n\n'
                    '1... d5 2. Kb4 Kd8 *\n\n')
    assert scan(path, cross_check="full")["disagreements"].ply.tolist() == [1, 2, 3]
    assert scan(path, cross_check="sample")["disagreements"].ply.tolist() == [1, 3]


def rare_kinds_by_game(tables) -> dict[str, dict[int, set]]:
    """For each source, each game's rare kinds as the tables show them (sampling.RARE_KINDS):
    what the sample rule must draw on, computed apart from the detector's own bits."""
    games, positions, perpetuals = tables["games"], tables["positions"], tables["perpetuals"]
    checks = positions[positions.in_check]
    found = {}

    def add(frame, kind):
        for source, gi in zip(frame.source, frame.game_index):
            found.setdefault(source, {}).setdefault(int(gi), set()).add(kind)

    add(games[games.double_checks > 0], "double_check")
    add(checks[checks.by_en_passant], "en_passant_check")
    add(checks[checks.by_promotion], "promotion_check")
    add(checks[checks.by_castling], "castling_check")
    add(games[games.outcome == "checkmate"], "checkmate")
    add(games[games.outcome == "stalemate"], "stalemate")
    add(perpetuals[perpetuals.occurrences >= 3], "perpetual_check")
    return found


SAMPLE_INPUTS = [MAGNUS, SAMPLES / "lichess-jishanshaikh4-variants.pgn"]


def test_sample_takes_the_first_games_of_each_rare_kind():
    """On real games holding every rare kind: the games replayed are the base rate's and the
    first SAMPLE_PER_KIND of the run holding each kind, counted per reason; two runs give
    the same tables."""
    a = scan(SAMPLE_INPUTS, cross_check="sample")
    b = scan(SAMPLE_INPUTS, cross_check="sample")
    for name in ("positions", "games", "issues", "disagreements"):
        pd.testing.assert_frame_equal(a[name], b[name])
    assert a["summary"]["cross_check"] == b["summary"]["cross_check"]
    kinds = rare_kinds_by_game(a)
    # Every kind occurs in these real games, in some kind in both files.
    assert {k for games in kinds.values() for ks in games.values() for k in ks} == set(sampling.RARE_KINDS)
    games = a["games"]
    plies = {(s, int(g)): int(p) for s, g, p in zip(games.source, games.game_index, games.plies)}
    issues = a["issues"][a["issues"].code == "unsupported-variant"]
    unplayed = {(s, int(g)) for s, g in zip(issues.source, issues.game_index)}  # never replayed
    reasons = dict.fromkeys(sampling.REASONS, 0)
    expected = set()
    holding = dict.fromkeys(sampling.RARE_KINDS, 0)
    first = {}  # per run
    for source in games.source.unique():
        offset = zlib.crc32(Path(source).name.encode()) % sampling.SAMPLE_EVERY
        for gi in sorted(int(g) for g in games.game_index[games.source == source]):
            why = {sampling.BASE_RATE} if (gi + offset) % sampling.SAMPLE_EVERY == 0 else set()
            for kind in kinds.get(source, {}).get(gi, ()):
                holding[kind] += 1
                first[kind] = first.get(kind, 0) + 1
                if first[kind] <= sampling.SAMPLE_PER_KIND:
                    why.add(kind)
            if why and (source, gi) not in unplayed:
                expected.add((source, gi))
                for r in why:
                    reasons[r] += 1
    summary = a["summary"]["cross_check"]
    assert summary["mode"] == "sample"
    assert summary["games_holding"] == holding
    assert summary["games_sampled_by"] == reasons
    assert all(reasons[k] >= 1 for k in sampling.RARE_KINDS)  # every kind confirmed
    assert summary["games"] == len(expected)
    assert summary["positions"] == sum(plies[k] for k in expected)
    assert summary["games"] < len(games) / 10  # bounded: a small part of the games


def test_a_folder_of_one_game_files_is_sampled_at_the_run_rate(tmp_path):
    """The rule is per run: a folder of 120 one-game files, each game a checkmate, replays the
    first mate of the run and the base rate's games (each file's game 0 where its name's
    offset is 0), not one game per file."""
    fools_mate = '[Event "f"]\n[Result "0-1"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n\n'
    names = [f"game-{i:03d}.pgn" for i in range(120)]
    for name in names:
        (tmp_path / name).write_text(fools_mate)
    base = [n for n in names if zlib.crc32(n.encode()) % sampling.SAMPLE_EVERY == 0]
    summary = scan(tmp_path, cross_check="sample", positions="none")["summary"]["cross_check"]
    assert summary["games_holding"]["checkmate"] == 120
    assert summary["games_sampled_by"]["checkmate"] == sampling.SAMPLE_PER_KIND
    assert summary["games_sampled_by"]["base_rate"] == len(base)
    assert summary["games"] == len(set(base) | set(names[:sampling.SAMPLE_PER_KIND]))
    assert summary["positions"] == 4 * summary["games"]


def test_start_fen_disagreement_is_reported_with_a_note(tmp_path):
    # Two kings on adjacent squares: python-chess's is_valid() rejects it too, so no row...
    rows = faults(tmp_path, '[Event "x"]\n[FEN "8/8/8/8/8/8/8/Kk6 w - - 0 1"]\n[SetUp "1"]\n\n1. Ka2 *\n\n')
    assert rows.empty or rows.field.tolist() == ["start_fen"]


# "full" replays every game (python-chess and, uncompiled, chessscan's own core: 2 + 4 s of CPU):
# test_full_cross_check_agrees_on_the_samples checks that summary on the same games and more.
@pytest.mark.parametrize("mode", ["off", "sample", pytest.param("full", marks=pytest.mark.slow)])
def test_cost_is_visible_in_the_summary(mode):
    summary = scan(MAGNUS, cross_check=mode, positions="none")["summary"]["cross_check"]
    assert summary["mode"] == mode
    if mode == "off":
        assert summary == {"mode": "off", "replays": "none", "games": 0, "positions": 0, "disagreements": 0}
    else:
        assert summary["games"] > 0 and summary["positions"] > 0 and summary["disagreements"] == 0
