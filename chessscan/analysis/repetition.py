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
    # Prefix counts per side: moves made and checks given among plies 1..q.
    moves = {True: [0] * (n + 1), False: [0] * (n + 1)}
    checks = {True: [0] * (n + 1), False: [0] * (n + 1)}
    for q in range(1, n + 1):
        mover = white_moves_first if q % 2 else not white_moves_first
        for side in (True, False):
            moves[side][q] = moves[side][q - 1] + (side == mover)
            checks[side][q] = checks[side][q - 1] + (side == mover and gave_check[q])
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
            made = moves[side][p] - moves[side][f]
            if made and checks[side][p] - checks[side][f] == made:
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
