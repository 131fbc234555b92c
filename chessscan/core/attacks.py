"""Attack tables, built once at import.

Step pieces (knight, king, pawn) use one bitboard per square. Sliders are computed, not
looked up in large tables: loads from magic bitboards' tables (800 KiB for rooks) missed the
CPU caches (a profile of a run put 8% of its samples on that one load). A slider's attacks along a
file or a diagonal come from hyperbola quintessence (chessprogramming wiki, "Hyperbola
Quintessence"): subtracting the slider's bit from the line's blockers borrows up to the first
blocker above it, and the same on the byte-swapped board (ranks in reverse order) up to the
first blocker below; a rook's rank attacks are read from 4 KiB (``rank_attacks[file * 64 +
the rank's six inner squares]``, the wiki's "First Rank Attacks"). The tests check every
attack set against a ray walk. Bitboards are ints of 64 bits, squares 0..63 with a1 = 0.

Compiled, the tables are C arrays in one :class:`AttackTables` object that every compiled
module reads directly (``tables()``); uncompiled, they are Python lists.
"""

from __future__ import annotations

try:
    import cython
except ImportError:  # uncompiled, without Cython installed
    from chessscan.core import _cython_shim as cython

if not cython.compiled:
    from chessscan.core.bitboard import BB_ALL, bit, bswap64

ROOK_DELTAS = (-8, 8, -1, 1)
BISHOP_DELTAS = (-9, -7, 7, 9)


def _step_attacks(sq: int, deltas: tuple[int, ...]) -> int:
    bb = 0
    f, r = sq & 7, sq >> 3
    for d in deltas:
        to = sq + d
        if 0 <= to < 64 and abs((to & 7) - f) <= 2 and abs((to >> 3) - r) <= 2:
            bb |= bit(to)
    return bb


def _sliding_attacks(sq: int, occupied: int, deltas: tuple[int, ...]) -> int:
    """Squares reached from ``sq`` along ``deltas`` until and including the first blocker."""
    bb = 0
    for d in deltas:
        s = sq
        while True:
            t = s + d
            # Stop at the board edge: a step may change the file by at most one.
            if not 0 <= t < 64 or abs((t & 7) - (s & 7)) > 1:
                break
            bb |= bit(t)
            if occupied >> t & 1:
                break
            s = t
    return bb


class AttackTables:
    """Every attack table of the core, as arrays indexed by square (0..63).

    ``knight[sq]``, ``king[sq]``; ``pawn[color * 64 + sq]`` (squares a pawn of ``color``
    on ``sq`` attacks; color 1 = white); ``file_mask[sq]``, ``diagonal_mask[sq]`` (a1-h8
    direction), ``antidiagonal_mask[sq]`` (a8-h1 direction): the line through ``sq`` without
    ``sq``; ``rank_attacks[file * 64 + inner]`` (the squares, bits 0..7, a rook on ``file``
    of rank 1 attacks along the rank when its squares b..g hold ``inner``, b = bit 0);
    ``between[a * 64 + b]`` (squares strictly between a and b on a line, else 0) and
    ``rays[a * 64 + b]`` (the whole line through a and b, both included, else 0);
    ``bishop_pseudo`` / ``rook_pseudo`` (attacks on an empty board).
    """

    def __init__(self) -> None:
        self.knight = [_step_attacks(sq, (17, 15, 10, 6, -17, -15, -10, -6)) for sq in range(64)]
        self.king = [_step_attacks(sq, (9, 8, 7, 1, -9, -8, -7, -1)) for sq in range(64)]
        self.pawn = ([_step_attacks(sq, (-7, -9)) for sq in range(64)]
                     + [_step_attacks(sq, (7, 9)) for sq in range(64)])
        self.file_mask = [_sliding_attacks(sq, 0, (-8, 8)) for sq in range(64)]
        self.rank_attacks = [_sliding_attacks(f, inner << 1, (-1, 1)) for f in range(8) for inner in range(64)]
        self.diagonal_mask = [_sliding_attacks(sq, 0, (-9, 9)) for sq in range(64)]
        self.antidiagonal_mask = [_sliding_attacks(sq, 0, (-7, 7)) for sq in range(64)]
        bishop_pseudo = [_sliding_attacks(sq, 0, BISHOP_DELTAS) for sq in range(64)]
        rook_pseudo = [_sliding_attacks(sq, 0, ROOK_DELTAS) for sq in range(64)]
        self.bishop_pseudo = bishop_pseudo
        self.rook_pseudo = rook_pseudo
        between = [0] * 4096
        rays = [0] * 4096
        for a in range(64):
            for b in range(64):
                if a == b:
                    continue
                bb_a, bb_b = bit(a), bit(b)
                for pseudo, deltas in ((bishop_pseudo, BISHOP_DELTAS), (rook_pseudo, ROOK_DELTAS)):
                    if pseudo[a] & bb_b:
                        rays[a * 64 + b] = (pseudo[a] & pseudo[b]) | bb_a | bb_b
                        between[a * 64 + b] = _sliding_attacks(a, bb_b, deltas) & _sliding_attacks(b, bb_a, deltas)
        self.between = between
        self.rays = rays


T = AttackTables()


def tables() -> AttackTables:
    """The one :class:`AttackTables` of the process."""
    return T


def knight_attacks(sq: int) -> int:
    """Squares a knight on ``sq`` attacks."""
    return T.knight[sq]


def king_attacks(sq: int) -> int:
    """Squares a king on ``sq`` attacks."""
    return T.king[sq]


def pawn_attacks(color: bool, sq: int) -> int:
    """Squares a pawn of ``color`` (True = white) on ``sq`` attacks."""
    return T.pawn[color * 64 + sq]


def _line_attacks(sq: int, occupied: int, mask: int) -> int:
    """Squares a slider on ``sq`` attacks along one file or diagonal (``mask``: the line
    without ``sq``): hyperbola quintessence (module doc)."""
    blockers = occupied & mask
    r = bit(sq)
    # Each difference flips the bits from the slider's up to the nearest blocker (or the
    # edge) on its side; XOR keeps the flipped bits of both, the mask drops the slider's own.
    up = (blockers - r) & BB_ALL
    down = (bswap64(blockers) - bswap64(r)) & BB_ALL
    return (up ^ bswap64(down)) & mask


def bishop_attacks(sq: int, occupied: int) -> int:
    """Squares a bishop on ``sq`` attacks with ``occupied`` pieces on the board."""
    return _line_attacks(sq, occupied, T.diagonal_mask[sq]) | _line_attacks(sq, occupied, T.antidiagonal_mask[sq])


def rook_attacks(sq: int, occupied: int) -> int:
    """Squares a rook on ``sq`` attacks with ``occupied`` pieces on the board: the file by
    hyperbola quintessence, the rank from a table (module doc)."""
    shift = sq & 56
    return (_line_attacks(sq, occupied, T.file_mask[sq])
            | (T.rank_attacks[(sq & 7) * 64 + ((occupied >> (shift + 1)) & 63)] << shift))


def queen_attacks(sq: int, occupied: int) -> int:
    """Squares a queen on ``sq`` attacks with ``occupied`` pieces on the board."""
    return bishop_attacks(sq, occupied) | rook_attacks(sq, occupied)


def between(a: int, b: int) -> int:
    """Squares strictly between ``a`` and ``b`` on a rank, file or diagonal, else 0."""
    return T.between[a * 64 + b]


def ray(a: int, b: int) -> int:
    """The whole line (edge to edge) through ``a`` and ``b``, else 0."""
    return T.rays[a * 64 + b]


def bishop_pseudo(sq: int) -> int:
    """Squares a bishop on ``sq`` attacks on an empty board."""
    return T.bishop_pseudo[sq]


def rook_pseudo(sq: int) -> int:
    """Squares a rook on ``sq`` attacks on an empty board."""
    return T.rook_pseudo[sq]
