cimport cython
from libc.stdint cimport uint64_t

from chessscan.core._bits cimport BB_DARK_SQUARES, BB_LIGHT_SQUARES, BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK, popcount
from chessscan.core.position cimport Position

@cython.locals(own=uint64_t, bishops=uint64_t, one_color=bint)
cpdef bint side_cannot_mate(Position pos, bint color)
cpdef bint is_insufficient_material(Position pos)
