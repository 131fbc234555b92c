"""find_perpetuals (compiled, or its source under CHESSSCAN_PURE=1) gives exactly the runs of
the documented rule (docs/explanation/draw-rules.md, "Perpetual check"), written here the plain
way: on random key sequences with many repeats, in every input form the analysis and the API
pass, and on real games replayed by python-chess against the perpetuals table."""

from __future__ import annotations

import random
import re
from array import array

import chess
import chess.pgn
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chessscan import scan
from chessscan.analysis.repetition import Perpetual, find_perpetuals
from conftest import SAMPLES, shared_path

# ---- reference: the documented rule, cycle by cycle ----


def reference_find_perpetuals(keys: list[int], gave_check: list[bool], white_moves_first: bool) -> list[Perpetual]:
    """Every cycle (f, p): the position after p stood first after f, and each move side S made
    in plies f+1..p gave check (at least one). A side's cycles that overlap (or touch) merge
    into one run, whatever order they are found in."""
    def mover(q: int) -> bool:  # who made ply q
        return white_moves_first if q % 2 else not white_moves_first

    # moves[side][q], quiet[side][q]: side's moves, and those giving no check, in plies 1..q.
    moves: dict[bool, list[int]] = {True: [0], False: [0]}
    quiet: dict[bool, list[int]] = {True: [0], False: [0]}
    for q in range(1, len(keys)):
        for side in (True, False):
            mine = mover(q) == side
            moves[side].append(moves[side][-1] + mine)
            quiet[side].append(quiet[side][-1] + (mine and not gave_check[q]))
    first_seen: dict[int, int] = {}
    count: dict[int, int] = {}
    cycles: dict[bool, list[tuple[int, int, int]]] = {True: [], False: []}
    for p, k in enumerate(keys):
        count[k] = count.get(k, 0) + 1
        f = first_seen.setdefault(k, p)
        for side in (True, False):
            if moves[side][p] > moves[side][f] and quiet[side][p] == quiet[side][f]:
                cycles[side].append((f, p, count[k]))
    runs: list[Perpetual] = []
    for side in (True, False):
        merged: list[list[int]] = []
        for f, p, c in sorted(cycles[side]):
            if merged and f <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], p)
                merged[-1][2] = max(merged[-1][2], c)
            else:
                merged.append([f, p, c])
        runs += [Perpetual(side, f, p, moves[side][p] - moves[side][f], c) for f, p, c in merged]
    runs.sort(key=lambda r: (r.last_ply, r.first_ply, not r.side))
    return runs


# ---- random games ----

# Keys at the ends of the 64-bit range, and keys equal in their low bits (long probe chains).
SPECIAL_KEYS = [0, 1, 2**63, 2**64 - 1, 1 << 40, 2 << 40, 3 << 40, 0x9E3779B97F4A7C15]


def random_game(rnd: random.Random, plies: int, alphabet: int, check_rate: float, cyclic: bool):
    """Keys (plies + 1) drawn from ``alphabet`` values, and check flags: uniformly, or as
    cycles replayed a few times while one side (or both) checks, between random stretches."""
    pool = [rnd.choice(SPECIAL_KEYS) if rnd.random() < 0.5 else rnd.getrandbits(64) for _ in range(alphabet)]
    keys = [rnd.choice(pool)]
    checks = [rnd.random() < 0.5]  # unused: must not matter
    while len(keys) <= plies:
        if cyclic and rnd.random() < 0.5:
            cycle = [rnd.choice(pool) for _ in range(rnd.randint(1, 8))]
            checker = rnd.randint(0, 2)  # parity of the checking side's plies, 2: both
            for _ in range(rnd.randint(1, 4)):
                for k in cycle:
                    keys.append(k)
                    p = len(keys) - 1
                    checks.append(rnd.random() < 0.03 if checker not in (p & 1, 2) else rnd.random() < 0.97)
        else:
            for _ in range(rnd.randint(1, 10)):
                keys.append(rnd.choice(pool))
                checks.append(rnd.random() < check_rate)
    return keys[:plies + 1], checks[:plies + 1]


def assert_same(keys: list[int], checks: list[bool], white_first: bool) -> list[Perpetual]:
    expected = reference_find_perpetuals(keys, checks, white_first)
    assert find_perpetuals(keys, checks, white_first) == expected
    # The arrays play_plies hands over, and other buffers and sequences.
    np_keys = np.array(keys, dtype=np.uint64)
    assert find_perpetuals(np_keys, np.array(checks, dtype=np.uint8), white_first) == expected
    assert find_perpetuals(np_keys, np.array(checks, dtype=bool), white_first) == expected
    assert find_perpetuals(array("Q", keys), tuple(checks), white_first) == expected
    for run in find_perpetuals(np_keys, np.array(checks, dtype=np.uint8), white_first):
        assert type(run.side) is bool and all(type(v) is int for v in run[1:])
    return expected


# A seed rather than st.randoms(): hypothesis records every draw of those, which is slow here.
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(plies=st.integers(0, 300), alphabet=st.integers(1, 10), check_rate=st.sampled_from([0.2, 0.5, 0.8, 1.0]),
       cyclic=st.booleans(), white_first=st.booleans(), seed=st.integers(0, 2**32))
def test_same_runs_as_reference(plies, alphabet, check_rate, cyclic, white_first, seed):
    keys, checks = random_game(random.Random(seed), plies, alphabet, check_rate, cyclic)
    assert_same(keys, checks, white_first)


def test_same_runs_as_reference_seeded():
    """A fixed sample that also shows the random games find runs: most of them, of both
    sides, several per game, some reaching a third occurrence."""
    rnd = random.Random(20240907)
    found = sides = threefold = several = 0
    for case in range(3000):
        keys, checks = random_game(rnd, rnd.randint(0, 300), rnd.randint(1, 12), rnd.choice([0.3, 0.7, 1.0]),
                                   case % 4 != 0)
        runs = assert_same(keys, checks, case % 3 != 0)
        found += bool(runs)
        sides += len({r.side for r in runs}) == 2
        threefold += any(r.occurrences >= 3 for r in runs)
        several += len(runs) >= 3
    assert found > 2000 and sides > 300 and threefold > 1000 and several > 500


@pytest.mark.parametrize("plies", [600, 2000, 9000])
def test_long_games(plies):
    """Past the scratch table's first size: it grows, and later short games still agree."""
    rnd = random.Random(plies)
    for alphabet in (3, 40, plies):
        keys, checks = random_game(rnd, plies, alphabet, 0.9, True)
        assert_same(keys, checks, alphabet % 2 == 1)
    keys, checks = random_game(rnd, 50, 4, 0.9, True)
    assert_same(keys, checks, True)


def test_ties_keep_the_reference_order():
    """Both sides check on every move of the same cycle: two runs with the same plies,
    white's first."""
    keys = [1, 2, 3, 4, 1, 2, 3, 4, 1]
    checks = [False] + [True] * 8
    for white_first in (True, False):
        runs = assert_same(keys, checks, white_first)
        assert [r.side for r in runs] == [True, False] and runs[0][1:] == runs[1][1:]


def test_no_plies_and_no_positions():
    assert_same([7], [False], True)
    assert_same([7, 7], [False, True], False)
    # No position at all: no run (the earlier implementation raised IndexError here).
    assert find_perpetuals([], [], True) == []
    assert find_perpetuals(np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.uint8), False) == []


def test_check_flags_past_the_keys_are_ignored_and_too_few_refused():
    keys = [1, 2, 1, 2, 1]
    checks = [False, True, False, True, False]
    expected = reference_find_perpetuals(keys, checks, True)
    assert expected and find_perpetuals(keys, checks + [True, False], True) == expected
    with pytest.raises(IndexError):
        find_perpetuals(keys, checks[:-1], True)


def test_a_longer_cycle_found_later_moves_the_start_back():
    """Cycles come in order of their end: one that starts earlier, found after a shorter one,
    moves the run's start back (and adds its checks), and takes in the side's earlier run it
    now overlaps. White checks on every move; black never does."""
    x, y, z, w, v, u = 10, 11, 12, 13, 14, 15
    keys = [x, y, z, y, w, v, u, v, x]  # cycles of white: 1-3, 5-7, then 0-8 over both
    checks = [False, True, False, True, False, True, False, True, False]
    assert assert_same(keys, checks, True) == [Perpetual(True, 0, 8, 4, 2)]
    keys = [x, y, z, w, z, y]  # 2-4, then 1-5
    checks = [False] + [True] * 5
    assert assert_same(keys, checks, True) == [Perpetual(True, 1, 5, 2, 2), Perpetual(False, 1, 5, 2, 2)]


# ---- real games: the perpetuals table against python-chess ----


def python_chess_perpetuals(path) -> tuple[dict[int, list[tuple]], dict[int, int]]:
    """Per game index, the runs of the documented rule over python-chess's replay (FIDE
    repetition identity: python-chess's transposition key, an en-passant square only when the
    capture is legal), as (side, first_ply, last_ply, checks_given, occurrences, game_ended);
    and each game's plies. Games python-chess cannot set up (other variants) are left out."""
    runs: dict[int, list[tuple]] = {}
    plies: dict[int, int] = {}
    with open(path, encoding="utf-8-sig") as f:
        index = -1
        while (game := chess.pgn.read_game(f)) is not None:
            index += 1
            try:
                board = game.board()
            except ValueError:
                continue
            if type(board) is not chess.Board:  # a variant board: chessscan does not replay it
                continue
            keys, checks = [board._transposition_key()], [False]
            for move in game.mainline_moves():
                board.push(move)
                keys.append(board._transposition_key())
                checks.append(board.is_check())
            n = len(keys) - 1
            plies[index] = n
            runs[index] = [("white" if r.side else "black", r.first_ply, r.last_ply, r.checks, r.occurrences,
                            r.last_ply == n)
                           for r in reference_find_perpetuals(keys, checks, game.board().turn)]
    return runs, plies


def assert_perpetuals_agree(path) -> int:
    tables = scan(path, cross_check="off", jobs=1)
    games, table = tables["games"], tables["perpetuals"]
    expected, plies = python_chess_perpetuals(path)
    compared = [i for i, n in plies.items() if games.plies[i] == n]  # (a game cut short by an error: left out)
    assert len(compared) >= 0.9 * len(plies)
    got: dict[int, list[tuple]] = {i: [] for i in compared}
    for row in table.itertuples():
        if row.game_index in got:
            got[row.game_index].append((row.side, row.first_ply, row.last_ply, row.checks_given, row.occurrences,
                                        bool(row.game_ended)))
    wrong = {i: (got[i], expected[i]) for i in compared if sorted(got[i]) != sorted(expected[i])}
    assert not wrong, f"(perpetuals rows, python-chess) by game_index: {dict(list(wrong.items())[:5])}"
    return sum(len(expected[i]) for i in compared)


@pytest.mark.parametrize("name", ["lichess-magnus-300.pgn", "lichess-jishanshaikh4-variants.pgn",
                                  "perpetual-check-merges.pgn"])
def test_perpetuals_table_follows_the_rule_on_the_samples(name):
    assert assert_perpetuals_agree(SAMPLES / name) > (0 if "variants" in name else 1)


def test_merged_runs_start_at_their_earliest_cycle():
    """Fischer-Spassky 1992 (23): black's cycle from ply 129 to 147 is found after shorter ones
    from 130 and 131; a TCEC game: white's from 76 to 84 after the one from 77."""
    table = scan(SAMPLES / "perpetual-check-merges.pgn", cross_check="off", jobs=1)["perpetuals"]
    assert [tuple(r) for r in table[["game_index", "side", "first_ply", "last_ply", "checks_given",
                                     "occurrences", "game_ended"]].itertuples(index=False)] == [
        (0, "black", 129, 153, 12, 3, False), (1, "white", 76, 85, 5, 3, True)]


# 1,800 games, about 6 s: not slow (the whole corpora are the slow tests' part).
@pytest.mark.parametrize("name", ["pgnmentor-Fischer.pgn", "tcec-nocomments-first1000.pgn"])
def test_perpetuals_table_follows_the_rule_on_shared_samples(name):
    path = shared_path("games", "samples", name)
    assert assert_perpetuals_agree(path) > 30
