"""The cross-check against python-chess: it agrees on real games, it can fail, and its sample
is deterministic."""

from __future__ import annotations

import pandas as pd
import pytest

import chessscan.analysis.crosscheck as crosscheck
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
    real = crosscheck.cross_check_game
    monkeypatch.setattr(crosscheck, "cross_check_game", lambda raw, dis, rows=None, start=0: real(
        raw, dis, WrongRows(rows, change) if rows is not None else None, start))


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


def test_sample_rule_is_deterministic_and_takes_every_rare_game():
    a = scan(MAGNUS, cross_check="sample")
    b = scan(MAGNUS, cross_check="sample")
    for name in ("positions", "games", "issues", "disagreements"):
        pd.testing.assert_frame_equal(a[name], b[name])
    assert a["summary"]["cross_check"] == b["summary"]["cross_check"]
    games = a["games"]
    rare = games[(games.outcome.isin(["checkmate", "stalemate"])) | (games.double_checks > 0)
                 | (games.perpetuals > 0)]
    expected = set(rare.game_index) | set(range(0, 300, crosscheck.SAMPLE_EVERY))
    positions = a["positions"]
    special = positions[positions.in_check & (positions.by_en_passant | positions.by_promotion)]
    expected |= set(special.game_index)
    assert a["summary"]["cross_check"]["games"] == len(expected)
    assert a["summary"]["cross_check"]["positions"] == games.set_index("game_index").plies[sorted(expected)].sum()


def test_start_fen_disagreement_is_reported_with_a_note(tmp_path):
    # Two kings on adjacent squares: python-chess's is_valid() rejects it too, so no row...
    rows = faults(tmp_path, '[Event "x"]\n[FEN "8/8/8/8/8/8/8/Kk6 w - - 0 1"]\n[SetUp "1"]\n\n1. Ka2 *\n\n')
    assert rows.empty or rows.field.tolist() == ["start_fen"]


@pytest.mark.parametrize("mode", ["off", "sample", "full"])
def test_cost_is_visible_in_the_summary(mode):
    summary = scan(MAGNUS, cross_check=mode, positions="none")["summary"]["cross_check"]
    if mode == "off":
        assert summary == {"games": 0, "positions": 0, "disagreements": 0}
    else:
        assert summary["games"] > 0 and summary["positions"] > 0 and summary["disagreements"] == 0
