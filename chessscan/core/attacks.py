"""Attack tables, built once at import.

Step pieces (knight, king, pawn) use one bitboard per square. Sliders use, per square, a
dict keyed by the occupancy masked to the squares that can block ("relevant occupancy"),
filled by enumerating every subset of the mask with the carry-rippler trick
(chessprogramming wiki, "Traversing Subsets of a Set"). A lookup is
``DIAG_ATTACKS[sq][DIAG_MASKS[sq] & occupied]`` — no 64-bit multiplication, which is slow
on Python's big ints. Bitboards are ints of 64 bits, squares 0..63 with a1 = 0.
"""

from __future__ import annotations

from chessscan.core.bitboard import BB_ALL, BB_FILES, BB_RANKS, BB_SQUARES, Bitboard


def _step_attacks(sq: int, deltas: tuple[int, ...]) -> Bitboard:
    bb = 0
    f, r = sq & 7, sq >> 3
    for d in deltas:
        to = sq + d
        if 0 <= to < 64 and abs((to & 7) - f) <= 2 and abs((to >> 3) - r) <= 2:
            bb |= 1 << to
    return bb


def _sliding_attacks(sq: int, occupied: Bitboard, deltas: tuple[int, ...]) -> Bitboard:
    """Squares reached from ``sq`` along ``deltas`` until and including the first blocker."""
    bb = 0
    for d in deltas:
        s = sq
        while True:
            t = s + d
            # Stop at the board edge: a step may change the file by at most one.
            if not 0 <= t < 64 or abs((t & 7) - (s & 7)) > 1:
                break
            bb |= 1 << t
            if occupied & (1 << t):
                break
            s = t
    return bb


def _edges(sq: int) -> Bitboard:
    """Board edges that do not contain ``sq``: a blocker there never shortens a ray."""
    return ((BB_RANKS[0] | BB_RANKS[7]) & ~BB_RANKS[sq >> 3]) | (
        (BB_FILES[0] | BB_FILES[7]) & ~BB_FILES[sq & 7]
    )


def _attack_table(deltas: tuple[int, ...]) -> tuple[list[Bitboard], list[dict[Bitboard, Bitboard]]]:
    masks, tables = [], []
    for sq in range(64):
        mask = _sliding_attacks(sq, 0, deltas) & ~_edges(sq)
        table = {}
        subset = 0
        while True:
            table[subset] = _sliding_attacks(sq, subset, deltas)
            subset = (subset - mask) & mask
            if not subset:
                break
        masks.append(mask)
        tables.append(table)
    return masks, tables


KNIGHT_ATTACKS = tuple(_step_attacks(sq, (17, 15, 10, 6, -17, -15, -10, -6)) for sq in range(64))
KING_ATTACKS = tuple(_step_attacks(sq, (9, 8, 7, 1, -9, -8, -7, -1)) for sq in range(64))
# PAWN_ATTACKS[color][sq]: squares a pawn of ``color`` on ``sq`` attacks (color False = black).
PAWN_ATTACKS = (
    tuple(_step_attacks(sq, (-7, -9)) for sq in range(64)),
    tuple(_step_attacks(sq, (7, 9)) for sq in range(64)),
)

DIAG_MASKS, DIAG_ATTACKS = _attack_table((-9, -7, 7, 9))
FILE_MASKS, FILE_ATTACKS = _attack_table((-8, 8))
RANK_MASKS, RANK_ATTACKS = _attack_table((-1, 1))

# Attacks on an empty board, for finding pinners and snipers.
BISHOP_PSEUDO = tuple(DIAG_ATTACKS[sq][0] for sq in range(64))
ROOK_PSEUDO = tuple(FILE_ATTACKS[sq][0] | RANK_ATTACKS[sq][0] for sq in range(64))


def bishop_attacks(sq: int, occupied: Bitboard) -> Bitboard:
    """Squares a bishop on ``sq`` attacks with ``occupied`` pieces on the board."""
    return DIAG_ATTACKS[sq][DIAG_MASKS[sq] & occupied]


def rook_attacks(sq: int, occupied: Bitboard) -> Bitboard:
    """Squares a rook on ``sq`` attacks with ``occupied`` pieces on the board."""
    return FILE_ATTACKS[sq][FILE_MASKS[sq] & occupied] | RANK_ATTACKS[sq][RANK_MASKS[sq] & occupied]


def queen_attacks(sq: int, occupied: Bitboard) -> Bitboard:
    """Squares a queen on ``sq`` attacks with ``occupied`` pieces on the board."""
    return (
        DIAG_ATTACKS[sq][DIAG_MASKS[sq] & occupied]
        | FILE_ATTACKS[sq][FILE_MASKS[sq] & occupied]
        | RANK_ATTACKS[sq][RANK_MASKS[sq] & occupied]
    )


def _rays() -> tuple[list[list[Bitboard]], list[list[Bitboard]]]:
    rays = [[0] * 64 for _ in range(64)]
    between = [[0] * 64 for _ in range(64)]
    for a in range(64):
        for b in range(64):
            if a == b:
                continue
            bb_b = BB_SQUARES[b]
            for pseudo, attacks in ((BISHOP_PSEUDO, bishop_attacks), (ROOK_PSEUDO, rook_attacks)):
                if pseudo[a] & bb_b:
                    # The whole line through a and b, both included.
                    rays[a][b] = (pseudo[a] & pseudo[b]) | BB_SQUARES[a] | bb_b
                    between[a][b] = attacks(a, bb_b) & attacks(b, BB_SQUARES[a])
    return rays, between


# RAYS[a][b]: the full line (edge to edge) through squares a and b, or 0 if not aligned.
# BETWEEN[a][b]: the squares strictly between a and b on that line, or 0.
RAYS, BETWEEN = _rays()

__all__ = [
    "KNIGHT_ATTACKS", "KING_ATTACKS", "PAWN_ATTACKS", "DIAG_MASKS", "DIAG_ATTACKS",
    "FILE_MASKS", "FILE_ATTACKS", "RANK_MASKS", "RANK_ATTACKS", "BISHOP_PSEUDO", "ROOK_PSEUDO",
    "RAYS", "BETWEEN", "bishop_attacks", "rook_attacks", "queen_attacks", "BB_ALL",
]
