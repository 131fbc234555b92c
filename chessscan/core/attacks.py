"""Attack tables, built once at import.

Step pieces (knight, king, pawn) use one bitboard per square. Bishops use magic bitboards
(chessprogramming wiki, "Magic Bitboards", the "fancy" layout): per square, the occupancy
masked to the squares that can block ("relevant occupancy") is multiplied by a magic number
and the top bits of the product index that square's slice of one shared table, filled by
enumerating every subset of the mask (carry-rippler, "Traversing Subsets of a Set"). A lookup
is a multiply, a shift and a load from 41 KiB.

Rooks do not: their magic table is 800 KiB, and its loads missed the CPU caches (one rook
lookup cost as much as a dozen other steps of a ply). A rook's file attacks are computed by
hyperbola quintessence (chessprogramming wiki, "Hyperbola Quintessence"): subtracting the
rook's bit from the file's blockers borrows up to the first blocker above it, and the same on
the byte-swapped board up to the first blocker below; its rank attacks are read from 4 KiB
(``rank_attacks[file * 64 + the rank's six inner squares]``, "First Rank Attacks"). Bitboards
are ints of 64 bits, squares 0..63 with a1 = 0.

The magic numbers below were found by :func:`find_magics` (``python -m
chessscan.core.attacks`` prints them again); the tests check every slider attack set against
a ray walk.

Compiled, the tables are C arrays in one :class:`AttackTables` object that every compiled
module reads directly (``tables()``); uncompiled, they are Python lists.
"""

from __future__ import annotations

try:
    import cython
except ImportError:  # uncompiled, without Cython installed
    from chessscan.core import _cython_shim as cython

if not cython.compiled:
    from chessscan.core.bitboard import BB_ALL, BB_FILE_A, bit, bswap64

ROOK_DELTAS = (-8, 8, -1, 1)
BISHOP_DELTAS = (-9, -7, 7, 9)

BISHOP_MAGICS = (
    0x4140421084010140, 0x0020821081011004, 0x22900501D1128046, 0x1208084100200406,
    0x04011041800A0000, 0x0032080208180000, 0x01020090080A0420, 0x4000154804042040,
    0x0420400244440091, 0x0204101002004051, 0x2B000800A1020044, 0x0000880861040400,
    0x0000011041606002, 0x0082082838080442, 0x0040140088041020, 0x0010020602014498,
    0x1426441084080820, 0x0010002001220080, 0x1402004044004080, 0x008080C802084000,
    0x00C2000402A20280, 0x2006402608200422, 0x40040404A6011002, 0xC082210884980804,
    0x0420200404091208, 0x1010284E24080080, 0x8804100002082142, 0x1004010020200880,
    0x000100108D004008, 0x8000920005012081, 0x04010521144C1000, 0xA016052040809800,
    0x0004300400410494, 0x00040108002022C0, 0x8101024121080800, 0x400B020080480080,
    0x0040004100081100, 0x8201010200040A00, 0x4004808200140100, 0x0801020082002420,
    0x0211100804202000, 0x40004208C4006000, 0x0002001048020420, 0x0010802011021808,
    0x0800020202008410, 0x411010300C409020, 0x082008010050C108, 0x060208A122000301,
    0x4202080208041000, 0x4800290808041000, 0xA800004208040422, 0x0000200020880040,
    0xE090001202020A00, 0x000010602101080C, 0x4808B04448044000, 0x00901220C1020880,
    0x4011018804210C80, 0x001C01040201050A, 0x180800004044106C, 0x202E001001048800,
    0x0048080071020220, 0x0800608590041840, 0x0000089004008400, 0xA004300A00640080,
)
BISHOP_TABLE_SIZE = 5248  # sum over squares of 2 ** (relevant bits)


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


def _relevant_mask(sq: int, deltas: tuple[int, ...]) -> int:
    """Squares whose occupancy can shorten a ray from ``sq``: the rays without their last
    square on the board edge."""
    bb = 0
    for d in deltas:
        s = sq
        while True:
            t = s + d
            if not 0 <= t < 64 or abs((t & 7) - (s & 7)) > 1:
                break
            u = t + d
            if not 0 <= u < 64 or abs((u & 7) - (t & 7)) > 1:
                break  # t is the last square of the ray
            bb |= 1 << t
            s = t
    return bb


def _subsets(mask: int) -> list[int]:
    """Every subset of ``mask``, the empty one first (carry-rippler)."""
    out = [0]
    subset = (0 - mask) & mask
    while subset:
        out.append(subset)
        subset = (subset - mask) & mask
    return out


def _magic_layout(deltas: tuple[int, ...], magics: tuple[int, ...], size: int):
    """(masks, shifts, offsets, table) of one slider kind."""
    masks, shifts, offsets = [], [], []
    table = [0] * size
    offset = 0
    for sq in range(64):
        mask = _relevant_mask(sq, deltas)
        bits = bin(mask).count("1")
        masks.append(mask)
        shifts.append(64 - bits)
        offsets.append(offset)
        for occ in _subsets(mask):
            index = ((occ * magics[sq]) & ((1 << 64) - 1)) >> (64 - bits)
            table[offset + index] = _sliding_attacks(sq, occ, deltas)
        offset += 1 << bits
    if offset != size:
        raise AssertionError(f"magic table size {offset}, expected {size}")
    return masks, shifts, offsets, table


def find_magics(deltas: tuple[int, ...], seed: int = 1) -> list[int]:
    """A magic number per square for a slider with these ``deltas``: one that maps every
    relevant occupancy to a table slot without a harmful collision (two occupancies with
    different attacks). Sparse random candidates, a fixed seed: the result is repeatable.
    Slow uncompiled; the numbers are stored above."""
    import random

    rng = random.Random(seed)
    magics = []
    for sq in range(64):
        mask = _relevant_mask(sq, deltas)
        bits = bin(mask).count("1")
        occs = _subsets(mask)
        attacks = [_sliding_attacks(sq, occ, deltas) for occ in occs]
        while True:
            magic = rng.getrandbits(64) & rng.getrandbits(64) & rng.getrandbits(64)
            if bin((mask * magic) & 0xFF00_0000_0000_0000).count("1") < 6:
                continue
            used: dict[int, int] = {}
            for occ, att in zip(occs, attacks):
                index = ((occ * magic) & ((1 << 64) - 1)) >> (64 - bits)
                if used.setdefault(index, att) != att:
                    break
            else:
                magics.append(magic)
                break
    return magics


class AttackTables:
    """Every attack table of the core, as arrays indexed by square (0..63).

    ``knight[sq]``, ``king[sq]``; ``pawn[color * 64 + sq]`` (squares a pawn of ``color``
    on ``sq`` attacks; color 1 = white); bishop magics (``bishop_mask``, ``bishop_magic``,
    ``bishop_shift``, ``bishop_offset``, ``bishop_table``); for rooks ``file_mask[sq]`` (the
    file of ``sq`` without ``sq``) and ``rank_attacks[file * 64 + inner]`` (the squares, bits
    0..7, a rook on ``file`` of rank 1 attacks along the rank when its squares b..g hold
    ``inner``, b = bit 0);
    ``between[a * 64 + b]`` (squares strictly between a and b on a line, else 0) and
    ``rays[a * 64 + b]`` (the whole line through a and b, both included, else 0);
    ``bishop_pseudo`` / ``rook_pseudo`` (attacks on an empty board).
    """

    def __init__(self) -> None:
        self.knight = [_step_attacks(sq, (17, 15, 10, 6, -17, -15, -10, -6)) for sq in range(64)]
        self.king = [_step_attacks(sq, (9, 8, 7, 1, -9, -8, -7, -1)) for sq in range(64)]
        self.pawn = ([_step_attacks(sq, (-7, -9)) for sq in range(64)]
                     + [_step_attacks(sq, (7, 9)) for sq in range(64)])
        self.file_mask = [(BB_FILE_A << (sq & 7)) ^ bit(sq) for sq in range(64)]
        self.rank_attacks = [_sliding_attacks(f, inner << 1, (-1, 1)) for f in range(8) for inner in range(64)]
        masks, shifts, offsets, table = _magic_layout(BISHOP_DELTAS, BISHOP_MAGICS, BISHOP_TABLE_SIZE)
        self.bishop_mask, self.bishop_shift, self.bishop_offset = masks, shifts, offsets
        self.bishop_magic = list(BISHOP_MAGICS)
        self.bishop_table = table
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


def bishop_attacks(sq: int, occupied: int) -> int:
    """Squares a bishop on ``sq`` attacks with ``occupied`` pieces on the board."""
    return T.bishop_table[T.bishop_offset[sq]
                          + ((((occupied & T.bishop_mask[sq]) * T.bishop_magic[sq]) & BB_ALL) >> T.bishop_shift[sq])]


def rook_attacks(sq: int, occupied: int) -> int:
    """Squares a rook on ``sq`` attacks with ``occupied`` pieces on the board (module doc:
    the file by hyperbola quintessence, the rank from a table)."""
    mask = T.file_mask[sq]
    blockers = occupied & mask
    r = bit(sq)
    # Each difference flips the bits from the rook's up to the nearest blocker (or the edge)
    # on its side; XOR keeps the flipped bits of both, the mask drops the rook's own.
    up = (blockers - r) & BB_ALL
    down = (bswap64(blockers) - bswap64(r)) & BB_ALL
    shift = sq & 56
    return ((up ^ bswap64(down)) & mask) | (T.rank_attacks[(sq & 7) * 64 + ((occupied >> (shift + 1)) & 63)]
                                            << shift)


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


if __name__ == "__main__":
    found = find_magics(BISHOP_DELTAS)
    print("BISHOP_MAGICS = (")
    for i in range(0, 64, 4):
        print("    " + " ".join(f"0x{m:016X}," for m in found[i:i + 4]))
    print(")")
