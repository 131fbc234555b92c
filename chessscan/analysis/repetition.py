"""Perpetual check: one side giving an unbroken run of checks while positions repeat.

chessscan's definition: a perpetual check by side S is found at ply p when the position after
p has occurred before (FIDE repetition identity, art. 9.2.2) and every move S made between
the first occurrence of that position and p gave check (at least one move). Overlapping
cycles of the same side merge into one run. A run whose positions reached a third
occurrence is a perpetual check in the usual sense; one that reached only a second
occurrence is reported too, with ``occurrences = 2`` (players often agree the draw then).
A repetition with a quiet move by S inside the cycle is not a perpetual check.
"""

from __future__ import annotations

from itertools import accumulate
from typing import NamedTuple


class Perpetual(NamedTuple):
    """One run of checks: ``side`` (True = white) gives every check from ``first_ply``
    (the ply after which the repeated position first stood; 0 = the start position) to
    ``last_ply``; ``checks`` moves of S, all checks; ``occurrences`` the highest repetition
    count reached inside the run."""

    side: bool
    first_ply: int
    last_ply: int
    checks: int
    occurrences: int


def find_perpetuals(keys: list[int], gave_check: list[bool], white_moves_first: bool) -> list[Perpetual]:
    """Perpetual-check runs of a game.

    ``keys[i]``: repetition key of the position after ply ``i`` (``keys[0]`` is the start
    position); ``gave_check[i]``: whether ply ``i`` gave check (``gave_check[0]`` unused);
    ``white_moves_first``: who made ply 1. Runs in order of their end.
    """
    n = len(keys) - 1
    # Plies 1, 3, 5... are the first mover's. Moves made by a side among plies 1..q, and
    # prefix counts of the checks it gave (accumulate runs in C: this runs on long games).
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
