"""Check kinds: how the last move gave check.

chessscan's taxonomy (docs: explanation/check-kinds.md); after a move, ``checkers`` is the bitboard of
the mover's pieces attacking the enemy king:

========== ==========================================================================
none       no checkers
direct     one checker, standing on a square a piece arrived on this ply: the moved piece,
           the promoted piece, or the castling rook
discovered one checker that did not move this ply: the mover opened its line by leaving
           its square (a king move too), or an en-passant capture removed the blocking pawn
double     two checkers (chessprogramming wiki, "Double Check")
single     for a position with no known last move (EPD, FEN setups): one checker
========== ==========================================================================

Route flags beside the kind say which special move gave the check: ``by_en_passant``,
``by_castling``, ``by_promotion`` (FIDE Laws art. 3.7.3, 3.8.2, 3.7.5).
"""

from __future__ import annotations

from typing import NamedTuple

try:
    import cython
except ImportError:  # uncompiled, without Cython installed
    from chessscan.core import _cython_shim as cython

from chessscan.core.position import Position
from chessscan.core.squares import SQUARE_NAMES

if not cython.compiled:
    from chessscan.core.bitboard import bit, lsb
    from chessscan.core.movegen import attackers

Bitboard = int
Move = int

NONE, DIRECT, DISCOVERED, DOUBLE, SINGLE = "none", "direct", "discovered", "double", "single"
CHECK_KINDS = (NONE, DIRECT, DISCOVERED, DOUBLE)


def check_kind(checkers: Bitboard, arrived: Bitboard) -> str:
    """Kind of check given ``checkers`` after a move whose pieces landed on ``arrived``
    (bitboard: the to-square, plus the rook's square for castling)."""
    if not checkers:
        return NONE
    if checkers & (checkers - 1):
        return DOUBLE
    return DIRECT if checkers & arrived else DISCOVERED


def setup_check_kind(checkers: Bitboard) -> str:
    """Kind of check with no last move known: ``none``, ``single`` or ``double``."""
    if not checkers:
        return NONE
    return DOUBLE if checkers & (checkers - 1) else SINGLE


def square_list(bb: Bitboard) -> str:
    """Space-separated square names of ``bb`` in increasing order (``"e1 h4"``)."""
    names = []
    while bb:
        names.append(SQUARE_NAMES[lsb(bb)])
        bb &= bb - 1
    return " ".join(names)


class MoveCheck(NamedTuple):
    """How ``move`` checks: ``kind`` (see module doc), ``checkers`` (bitboard) and routes."""

    kind: str
    checkers: Bitboard
    by_en_passant: bool
    by_castling: bool
    by_promotion: bool


def classify_move(pos: Position, move: Move) -> MoveCheck:
    """Play legal ``move`` on a copy of ``pos`` and classify the check it gives."""
    castling = pos.is_castling(move)
    en_passant = pos.is_en_passant(move)
    promotion = bool(move >> 12)
    frm = move & 63
    to = (move >> 6) & 63
    after = pos.copy()
    after.play(move)
    if castling:
        arrived = bit((frm & 56) + (3 if to < frm else 5))
    else:
        arrived = bit(to)
    king = after.king(after.turn)
    checking = attackers(after, not after.turn, king, after.occupied) if king >= 0 else 0
    given = bool(checking)
    return MoveCheck(check_kind(checking, arrived), checking,
                     given and en_passant, given and castling, given and promotion)
