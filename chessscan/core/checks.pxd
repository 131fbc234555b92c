cimport cython
from libc.stdint cimport uint64_t

from chessscan.core._bits cimport bit, lsb
from chessscan.core.movegen cimport attackers
from chessscan.core.position cimport Position

cpdef str check_kind(uint64_t checkers, uint64_t arrived)
cpdef str setup_check_kind(uint64_t checkers)
cpdef str square_list(uint64_t bb)
@cython.locals(castling=bint, en_passant=bint, promotion=bint, frm=int, to=int, after=Position,
               arrived=uint64_t, king=int, checking=uint64_t, given=bint)
cpdef classify_move(Position pos, int move)
