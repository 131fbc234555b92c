"""Zobrist keys, Polyglot-compatible, and the FIDE repetition identity.

Polyglot layout (chessprogramming wiki, "PolyGlot" / "Zobrist Hashing"): piece kind
``2 * (piece_type - 1) + (1 if white)`` times 64 plus the square (a1 = 0); castling keys
768..771 for white's h-side and a-side rights and black's; en-passant keys 772..779 by file,
used only when a pawn of the side to move stands beside the pawn that just made a double push
(whether or not the capture is legal); 780 when white is to move. Keys are ints of 64 bits.

:class:`~chessscan.core.position.Position` keeps ``key``, the Polyglot key without its
en-passant part, up to date in :meth:`~chessscan.core.position.Position.play`; the
en-passant part depends on neighbouring pawns and is added on demand. The functions here
taking a position call its methods (:meth:`~chessscan.core.position.Position.base_key`, ...).
"""

from __future__ import annotations

try:
    import cython
except ImportError:  # uncompiled, without Cython installed
    from chessscan.core import _cython_shim as cython

from chessscan.core._polyglot import POLYGLOT_RANDOM_ARRAY

MASK64 = (1 << 64) - 1
#: Odd multiplier of the castling rights in the repetition key: a bijection on 64-bit ints,
#: so distinct rights give distinct parts.
CASTLE_MIX = 0x9E3779B97F4A7C15


class ZobristKeys:
    """The Polyglot keys as arrays: ``piece[(color * 7 + piece_type) * 64 + square]`` (color
    1 = white, piece type 1..6; index 0 of each color unused), ``castling`` (white h-side,
    white a-side, black h-side, black a-side), ``ep[file]`` and ``turn``."""

    def __init__(self) -> None:
        r = POLYGLOT_RANDOM_ARRAY
        piece = [0] * 896
        for color in (0, 1):
            for pt in range(1, 7):
                for sq in range(64):
                    piece[(color * 7 + pt) * 64 + sq] = r[64 * (2 * (pt - 1) + color) + sq]
        self.piece = piece
        self.castling = [r[768], r[769], r[770], r[771]]
        self.ep = [r[772 + f] for f in range(8)]
        self.turn = r[780]


K = ZobristKeys()


def keys() -> ZobristKeys:
    """The one :class:`ZobristKeys` of the process."""
    return K


def castling_key(castling_rights: int, white_king: int, black_king: int) -> int:
    """Castling part of the key: per color, one key for a right on the king's h-side and one
    for the a-side (Polyglot's four castling keys; in Chess960 the side is taken relative to
    the king, as python-chess does). ``castling_rights`` is the bitboard of rook squares that
    may castle; kings are squares 0..63 (-1 if absent)."""
    key = 0
    # (A right needs its king on its back rank: the shifts stay within one rank.)
    white = castling_rights & 0xFF
    if white and 0 <= white_king < 8:
        if white >> (white_king + 1):
            key ^= K.castling[0]
        if white & ((1 << white_king) - 1):
            key ^= K.castling[1]
    black = castling_rights >> 56
    if black and 56 <= black_king < 64:
        if black >> (black_king - 55):
            key ^= K.castling[2]
        if black & ((1 << (black_king - 56)) - 1):
            key ^= K.castling[3]
    return key


def base_key(pos) -> int:
    """Polyglot key of ``pos`` without the en-passant part, computed from scratch."""
    return pos.base_key()


def ep_key(pos) -> int:
    """En-passant part of the Polyglot key: the file key when a pawn of the side to move
    stands beside the pawn that just made a double push, else 0."""
    return pos.ep_key()


def zobrist_hash(pos) -> int:
    """Polyglot Zobrist key of ``pos`` (int of 64 bits), equal to the key an opening book
    stores for the position."""
    return pos.key ^ pos.ep_key()


def repetition_key(pos, legal_ep: bool) -> int:
    """Key of the FIDE repetition identity (Laws of Chess art. 9.2.2): placement, side to move,
    castling rights (all of them, Chess960 inner rooks too) and the en-passant file only when
    ``legal_ep`` (an en-passant capture is actually legal)."""
    return pos.repetition_key(legal_ep)
