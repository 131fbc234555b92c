"""find_perpetuals (compiled, or its source under CHESSSCAN_PURE=1) gives exactly the runs of
its earlier dict-based implementation, kept here as the reference: on random key sequences
with many repeats, in every input form the analysis and the API pass."""

from __future__ import annotations

import random
from array import array
from itertools import accumulate

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chessscan.analysis.repetition import Perpetual, find_perpetuals

# ---- reference: find_perpetuals before it was compiled ----


def reference_find_perpetuals(keys: list[int], gave_check: list[bool], white_moves_first: bool) -> list[Perpetual]:
    n = len(keys) - 1
    first = bool(white_moves_first)

    def made(side: bool, q: int) -> int:
        return (q + 1) // 2 if side == first else q // 2

    by_first = list(gave_check[:n + 1])
    by_first[0::2] = [False] * len(by_first[0::2])
    by_second = list(gave_check[:n + 1])
    by_second[1::2] = [False] * len(by_second[1::2])
    by_second[0] = False
    checks = {first: list(accumulate(by_first)), not first: list(accumulate(by_second))}
    first_seen: dict[int, int] = {}
    count: dict[int, int] = {}
    active: dict[bool, list[int] | None] = {True: None, False: None}  # [first, last, occurrences]
    runs: list[Perpetual] = []

    def close(side: bool) -> None:
        run = active[side]
        if run is not None:
            first, last, occ = run
            runs.append(Perpetual(side, first, last, checks[side][last] - checks[side][first], occ))
            active[side] = None

    for p in range(n + 1):
        k = keys[p]
        c = count.get(k, 0) + 1
        count[k] = c
        if c == 1:
            first_seen[k] = p
            continue
        f = first_seen[k]
        for side in (True, False):
            moved = made(side, p) - made(side, f)
            if moved and checks[side][p] - checks[side][f] == moved:
                run = active[side]
                if run is not None and f <= run[1]:
                    run[1] = p
                    run[2] = max(run[2], c)
                else:
                    close(side)
                    active[side] = [f, p, c]
    for side in (True, False):
        close(side)
    runs.sort(key=lambda r: (r.last_ply, r.first_ply))
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
