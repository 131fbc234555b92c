"""Zobrist keys, Polyglot-compatible, and the FIDE repetition key.

Polyglot layout (chessprogramming wiki, "PolyGlot" / "Zobrist Hashing"): piece kind
``2 * (piece_type - 1) + (1 if white)`` times 64 plus the square (a1 = 0); castling keys 768..771
for white's h-side and a-side rights and black's; en-passant keys 772..779 by file, used only when a pawn of the
side to move stands beside the pawn that just made a double push (whether or not the capture
is legal); 780 when white is to move. Keys are ints of 64 bits.

:class:`~chessscan.core.position.Position` keeps ``key``, the Polyglot key without its
en-passant part, up to date in :meth:`~chessscan.core.position.Position.play`; the
en-passant part depends on neighbouring pawns and is added on demand.
"""

from __future__ import annotations

from chessscan.core._polyglot import POLYGLOT_RANDOM_ARRAY as _R
from chessscan.core.squares import BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK

MASK64 = (1 << 64) - 1

# PIECE_KEYS[color][piece_type][square]; color False = black, piece type 1..6 (0 unused).
PIECE_KEYS = tuple(
    tuple(
        tuple(_R[64 * (2 * (pt - 1) + (1 if color else 0)) + sq] for sq in range(64)) if pt else (0,) * 64
        for pt in range(7)
    )
    for color in (False, True)
)
EP_KEYS = tuple(_R[772 + f] for f in range(8))
TURN_KEY = _R[780]
_CASTLE_H1, _CASTLE_A1, _CASTLE_H8, _CASTLE_A8 = _R[768], _R[769], _R[770], _R[771]
_RANK_1, _RANK_8 = 0xFF, 0xFF << 56


def castling_key(castling_rights: int, white_king: int, black_king: int) -> int:
    """Castling part of the key: per color, one key for a right on the king's h-side and one
    for the a-side (Polyglot's four castling keys; in Chess960 the side is taken relative to
    the king, as python-chess does). Kings are squares 0..63 (-1 if absent)."""
    key = 0
    white = castling_rights & _RANK_1
    if white and white_king >= 0:
        if white >> (white_king + 1):
            key ^= _CASTLE_H1
        if white & ((1 << white_king) - 1):
            key ^= _CASTLE_A1
    black = castling_rights & _RANK_8
    if black and black_king >= 0:
        if black >> (black_king + 1):
            key ^= _CASTLE_H8
        if black & ((1 << black_king) - 1):
            key ^= _CASTLE_A8
    return key


def base_key(pos) -> int:
    """Polyglot key of ``pos`` without the en-passant part, computed from scratch."""
    key = castling_key(pos.castling_rights, pos.king(True), pos.king(False)) ^ (TURN_KEY if pos.turn else 0)
    for color in (False, True):
        keys = PIECE_KEYS[color]
        own = pos.occupied_co[color]
        for pt in (PAWN, KNIGHT, BISHOP, ROOK, QUEEN, KING):
            bb = pos.pieces[pt] & own
            while bb:
                low = bb & -bb
                key ^= keys[pt][low.bit_length() - 1]
                bb ^= low
    return key


def ep_key(pos) -> int:
    """En-passant part of the Polyglot key: the file key when a pawn of the side to move
    stands beside the pawn that just made a double push, else 0."""
    ep = pos.ep_square
    if ep is None:
        return 0
    pushed = ep - 8 if pos.turn else ep + 8
    beside = ((1 << (pushed - 1)) if pushed & 7 else 0) | ((1 << (pushed + 1)) if pushed & 7 != 7 else 0)
    if beside & pos.pieces[PAWN] & pos.occupied_co[pos.turn]:
        return EP_KEYS[ep & 7]
    return 0


def zobrist_hash(pos) -> int:
    """Polyglot Zobrist key of ``pos`` (int of 64 bits), equal to the key an opening book
    stores for the position."""
    return pos.key ^ ep_key(pos)


def repetition_key(pos, legal_ep: bool) -> int:
    """Key of the FIDE repetition identity (Laws of Chess art. 9.2.2): placement, side to move,
    castling rights (all of them, Chess960 inner rooks too) and the en-passant file only when
    ``legal_ep`` (an en-passant capture is actually legal)."""
    key = pos.key
    if legal_ep:
        key ^= EP_KEYS[pos.ep_square & 7]
    # Odd multiplier: a bijection on 64-bit ints, so distinct rights give distinct parts.
    return key ^ ((pos.castling_rights * 0x9E3779B97F4A7C15) & MASK64)
