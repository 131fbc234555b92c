"""Colors, piece types and squares as plain ints.

Square numbering follows the little-endian rank-file mapping of the chessprogramming
wiki ("Square Mapping Considerations"): a1 = 0, b1 = 1, ..., h1 = 7, a2 = 8, ..., h8 = 63.
Colors are bools (``WHITE = True``), so ``not color`` is the other side and a color indexes
a two-element list as ``[BLACK, WHITE]``.
"""

from __future__ import annotations

Color = bool
WHITE: Color = True
BLACK: Color = False
COLOR_NAMES = ("black", "white")  # indexed by color

PieceType = int  # the compiled core has C twins of these (_bits.pxd)
PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING = range(1, 7)
PIECE_SYMBOLS = (None, "p", "n", "b", "r", "q", "k")  # indexed by piece type
PIECE_TYPE_BY_SYMBOL = {"p": PAWN, "n": KNIGHT, "b": BISHOP, "r": ROOK, "q": QUEEN, "k": KING}

Square = int
FILE_NAMES = "abcdefgh"
RANK_NAMES = "12345678"
SQUARES = range(64)
SQUARE_NAMES = tuple(f + r for r in RANK_NAMES for f in FILE_NAMES)  # SQUARE_NAMES[0] == "a1"
SQUARE_BY_NAME = {name: sq for sq, name in enumerate(SQUARE_NAMES)}

A1, B1, C1, D1, E1, F1, G1, H1 = range(8)
A8, B8, C8, D8, E8, F8, G8, H8 = range(56, 64)


def square(file: int, rank: int) -> Square:
    """Square index (0..63) of ``file`` 0..7 (a..h) and ``rank`` 0..7 (1..8)."""
    return rank * 8 + file


def square_file(sq: Square) -> int:
    """File 0..7 (a..h) of square ``sq`` (0..63)."""
    return sq & 7


def square_rank(sq: Square) -> int:
    """Rank 0..7 (1..8) of square ``sq`` (0..63)."""
    return sq >> 3


def parse_square(name: str) -> Square:
    """Square index of a name such as ``"e4"``; raises ``ValueError`` for anything else."""
    try:
        return SQUARE_BY_NAME[name]
    except KeyError:
        raise ValueError(f"not a square name: {name!r}") from None


def mirror(sq: Square) -> Square:
    """The square with its rank flipped (a1 <-> a8)."""
    return sq ^ 56
