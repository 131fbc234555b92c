"""Perpetual check: one side giving an unbroken run of checks while positions repeat.

chessscan's definition: a perpetual check by side S is found at ply p when the position after
p has occurred before (FIDE repetition identity, art. 9.2.2) and every move S made between
the first occurrence of that position and p gave check (at least one move). Overlapping
cycles of the same side merge into one run, from the earliest first occurrence to the latest
repetition, whatever order the cycles are found in (they end in order, but a longer one can
start earlier). A run whose positions reached a third occurrence is a perpetual check in the
usual sense; one that reached only a second occurrence is reported too, with
``occurrences = 2`` (players often agree the draw then). A repetition with a quiet move by S
inside the cycle is not a perpetual check.
"""

from __future__ import annotations

import threading
from array import array
from typing import NamedTuple

try:
    import cython
except ImportError:  # uncompiled, without Cython installed
    from chessscan.core import _cython_shim as cython

import numpy as np


class Perpetual(NamedTuple):
    """One run of checks: ``side`` (True = white) gives every check from ``first_ply``
    (the ply after which the run's earliest repeated position first stood; 0 = the start
    position) to ``last_ply`` (the ply after which its last repeated position stood again,
    which may be the other side's reply); ``checks`` moves of S, all checks; ``occurrences``
    the highest repetition count reached inside the run."""

    side: bool
    first_ply: int
    last_ply: int
    checks: int
    occurrences: int


def _by_end(run) -> tuple:
    """A run's place: by last_ply, then first_ply, white's first on a tie (the order runs
    are closed in puts either first: a side's run closes when its next one opens)."""
    return (run[2], run[1], not run[0])


_BY_END = _by_end


class _Table:
    """Scratch space reused from game to game: an open-addressing hash table from repetition
    key to (first ply seen, occurrences), whose slots are stamped with a generation so a new
    game costs no clearing; the prefix counts of checks per side; the two open runs."""

    def __init__(self) -> None:
        self.size = 0
        self.plies = 0
        self.gen = 0
        self.run = array("i", bytes(4 * 8))  # per side: open, first, last, occurrences
        self.prepare(128)

    def prepare(self, plies: int) -> None:
        """Room for ``plies`` positions, and a fresh generation."""
        if 2 * plies > self.size:
            size = 256
            while size < 2 * plies:  # load at most 1/2
                size *= 2
            self.size = size
            self.keys = array("Q", bytes(8 * size))
            self.first = array("i", bytes(4 * size))
            self.counts = array("i", bytes(4 * size))
            self.stamps = array("i", bytes(4 * size))
            self.gen = 0
        if plies > self.plies:
            self.plies = plies
            self.checks = array("i", bytes(8 * plies))
        self.gen += 1
        if self.gen > 2_000_000_000:
            self.stamps = array("i", bytes(4 * self.size))
            self.gen = 1


# Scratch space kept from game to game, one per thread (Dask runs tasks on threads).
_LOCAL = threading.local()


def _table() -> _Table:
    """This thread's _Table."""
    try:
        return _LOCAL.table
    except AttributeError:
        _LOCAL.table = _Table()
        return _LOCAL.table


def find_perpetuals(keys, gave_check, white_moves_first: bool) -> list[Perpetual]:
    """Perpetual-check runs of a game.

    ``keys[i]``: repetition key of the position after ply ``i`` (``keys[0]`` is the start
    position); ``gave_check[i]``: whether ply ``i`` gave check (``gave_check[0]`` unused);
    ``white_moves_first``: who made ply 1. Runs in order of their end.

    ``keys`` holds unsigned 64-bit ints, ``gave_check`` truth values, at least as many as
    ``keys``: lists, or 1-D arrays (a contiguous uint64 / uint8 numpy array is used as is).
    """
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    checks = np.ascontiguousarray(gave_check, dtype=np.uint8)
    if checks.shape[0] < keys.shape[0]:
        raise IndexError(f"gave_check has {checks.shape[0]} entries for {keys.shape[0]} keys")
    if not cython.compiled:
        # Python ints: numpy scalars are slow one at a time and refuse mixing with int.
        keys, checks = keys.tolist(), checks.tolist()
    return _runs(_table(), keys, checks, bool(white_moves_first))


def _runs(t: _Table, keys, gave_check, first: bool) -> list:
    n1 = len(keys)
    t.prepare(n1)
    gen = t.gen
    mask = t.size - 1
    slot_keys = t.keys
    slot_first = t.first
    counts = t.counts
    stamps = t.stamps
    run = t.run
    # checks[2q] (first mover) and checks[2q + 1] (second mover): the checks each side gave
    # among plies 1..q. Plies 1, 3, 5... are the first mover's; gave_check[0] is no move.
    checks = t.checks
    a = 0
    b = 0
    if n1:
        checks[0] = 0
        checks[1] = 0
    for q in range(1, n1):
        if gave_check[q]:
            if q & 1:
                a += 1
            else:
                b += 1
        checks[2 * q] = a
        checks[2 * q + 1] = b
    for s in range(8):
        run[s] = 0
    runs: list = []

    for p in range(n1):
        k = keys[p]
        i = k & mask
        while stamps[i] == gen and slot_keys[i] != k:
            i = (i + 1) & mask
        if stamps[i] != gen:
            stamps[i] = gen
            slot_keys[i] = k
            slot_first[i] = p
            counts[i] = 1
            continue
        counts[i] += 1
        c = counts[i]
        f = slot_first[i]
        for s in range(2):  # white, then black: the order runs are closed in
            side = s == 0
            o = 4 * s
            if side == first:
                mine = 0
                moved = (p + 1) // 2 - (f + 1) // 2
            else:
                mine = 1
                moved = p // 2 - f // 2
            if moved and checks[2 * p + mine] - checks[2 * f + mine] == moved:
                if run[o] and f <= run[o + 2]:
                    run[o + 2] = p
                    if c > run[o + 3]:
                        run[o + 3] = c
                    if f < run[o + 1]:
                        # A longer cycle found after a shorter one (cycles come in order of
                        # their end, not their start): the run starts where it does, and
                        # takes in this side's closed runs it now overlaps.
                        run[o + 1] = f
                        j = len(runs) - 1
                        while j >= 0:
                            r = runs[j]
                            if r[0] == side:
                                if r[2] < run[o + 1]:
                                    break  # this side's runs are apart and in order
                                if r[1] < run[o + 1]:
                                    run[o + 1] = r[1]
                                if r[4] > run[o + 3]:
                                    run[o + 3] = r[4]
                                del runs[j]
                            j -= 1
                else:
                    if run[o]:
                        runs.append(Perpetual(side, run[o + 1], run[o + 2],
                                              checks[2 * run[o + 2] + mine] - checks[2 * run[o + 1] + mine],
                                              run[o + 3]))
                    run[o] = 1
                    run[o + 1] = f
                    run[o + 2] = p
                    run[o + 3] = c
    for s in range(2):
        o = 4 * s
        if run[o]:
            side = s == 0
            mine = 0 if side == first else 1
            runs.append(Perpetual(side, run[o + 1], run[o + 2],
                                  checks[2 * run[o + 2] + mine] - checks[2 * run[o + 1] + mine], run[o + 3]))
    runs.sort(key=_BY_END)
    return runs
