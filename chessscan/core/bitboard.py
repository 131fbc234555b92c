"""Bitboards: a set of squares as an int of 64 bits, bit ``sq`` set for square ``sq``.

See the chessprogramming wiki, "Bitboards" and "General Setwise Operations".

These are the Python forms. The compiled core uses C twins of the constants and of
:func:`lsb`, :func:`msb`, :func:`popcount` and :func:`bit` (``chessscan/core/_bits.pxd``);
its sources import these names only when they run uncompiled.
"""

from __future__ import annotations

from typing import Iterator

Bitboard = int

BB_EMPTY: Bitboard = 0
BB_ALL: Bitboard = (1 << 64) - 1
BB_SQUARES = tuple(1 << sq for sq in range(64))
BB_FILES = tuple(0x0101_0101_0101_0101 << f for f in range(8))
BB_RANKS = tuple(0xFF << (8 * r) for r in range(8))
BB_FILE_A, BB_FILE_H = BB_FILES[0], BB_FILES[7]
BB_RANK_1, BB_RANK_2, BB_RANK_4 = BB_RANKS[0], BB_RANKS[1], BB_RANKS[3]
BB_RANK_5, BB_RANK_7, BB_RANK_8 = BB_RANKS[4], BB_RANKS[6], BB_RANKS[7]
BB_BACKRANKS = BB_RANK_1 | BB_RANK_8
BB_LIGHT_SQUARES: Bitboard = 0x55AA_55AA_55AA_55AA
BB_DARK_SQUARES: Bitboard = 0xAA55_AA55_AA55_AA55


def bit(sq: int) -> Bitboard:
    """The bitboard of square ``sq`` (0..63) alone."""
    return 1 << sq


def lsb(bb: Bitboard) -> int:
    """Index of the least significant set bit; -1 for an empty bitboard."""
    return (bb & -bb).bit_length() - 1


def msb(bb: Bitboard) -> int:
    """Index of the most significant set bit; -1 for an empty bitboard."""
    return bb.bit_length() - 1


def bswap64(bb: Bitboard) -> Bitboard:
    """``bb`` with its 8 bytes in reverse order: the board mirrored top to bottom (rank 1
    becomes rank 8); a file's squares come in reverse order."""
    return int.from_bytes(bb.to_bytes(8, "little"), "big")


def popcount(bb: Bitboard) -> int:
    """Number of squares in ``bb``."""
    return bb.bit_count()


def scan_forward(bb: Bitboard) -> Iterator[int]:
    """Squares of ``bb`` in increasing order."""
    while bb:
        low = bb & -bb
        yield low.bit_length() - 1
        bb ^= low


def shift_up(bb: Bitboard) -> Bitboard:
    return (bb << 8) & BB_ALL


def shift_down(bb: Bitboard) -> Bitboard:
    return bb >> 8


def shift_left(bb: Bitboard) -> Bitboard:
    """Towards the a-file."""
    return (bb >> 1) & ~BB_FILE_H & BB_ALL


def shift_right(bb: Bitboard) -> Bitboard:
    """Towards the h-file."""
    return (bb << 1) & ~BB_FILE_A & BB_ALL
