"""Draw rules that depend on the position alone (FIDE Laws of Chess, art. 9 and 5.2.2).

Insufficient material is chessscan's approximation of the dead position (art. 5.2.2: no
sequence of legal moves can lead to mate): it is *sound* — when it says so, no mate is
possible for either side — but not complete (blocked pawn chains are not recognised). A side
cannot mate when it has no pawns, rooks or queens and either
- only its king, or
- a king and a single knight, while the opponent has nothing but a king and queens (any other
  enemy piece could block its own king and allow a self-mate), or
- a king and bishops all on squares of one color, while no pawn or knight stands on the board
  and no enemy bishop stands on the other color.
The position is insufficient material when neither side can mate.
"""

from __future__ import annotations

try:
    import cython
except ImportError:  # uncompiled, without Cython installed
    from chessscan.core import _cython_shim as cython

from chessscan.core.position import Position

if not cython.compiled:
    from chessscan.core.bitboard import BB_DARK_SQUARES, BB_LIGHT_SQUARES, popcount
    from chessscan.core.squares import BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK

FIFTY_MOVES_PLIES = 100           # art. 9.3: claimable
SEVENTYFIVE_MOVES_PLIES = 150     # art. 9.6.2: automatic, unless the last move mates


def side_cannot_mate(pos: Position, color: bool) -> bool:
    """True if ``color`` (True = white) cannot possibly mate (see the module rule)."""
    own = pos.occupied_co[color]
    if own & (pos.pieces[PAWN] | pos.pieces[ROOK] | pos.pieces[QUEEN]):
        return False
    if own & pos.pieces[KNIGHT]:
        return popcount(own) <= 2 and not (pos.occupied_co[not color] & ~pos.pieces[KING] & ~pos.pieces[QUEEN])
    if own & pos.pieces[BISHOP]:
        bishops = pos.pieces[BISHOP]
        one_color = not bishops & BB_DARK_SQUARES or not bishops & BB_LIGHT_SQUARES
        return one_color and not pos.pieces[PAWN] and not pos.pieces[KNIGHT]
    return True


def is_insufficient_material(pos: Position) -> bool:
    """True if neither side can mate (the dead-position approximation of the module doc)."""
    return side_cannot_mate(pos, True) and side_cannot_mate(pos, False)
