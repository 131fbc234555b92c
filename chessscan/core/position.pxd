cimport cython
from libc.stdint cimport uint64_t

from chessscan.core._bits cimport BB_ALL, CASTLE_MIX, BB_RANK_1, BB_RANK_8, BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK, bit, lsb, msb
from chessscan.core.zobrist cimport ZobristKeys, castling_key

cdef ZobristKeys K


@cython.final
cdef class Position:
    cdef readonly uint64_t pieces[7]
    cdef readonly uint64_t occupied_co[2]
    cdef readonly int mailbox[64]
    cdef public uint64_t occupied
    cdef public bint turn
    cdef public uint64_t castling_rights
    cdef public int ep
    cdef public int halfmove_clock
    cdef public int fullmove_number
    cdef public bint chess960
    cdef public uint64_t key

    @cython.locals(p=Position)
    cpdef Position copy(self)
    @cython.locals(b=uint64_t)
    cpdef set_piece(self, int sq, int piece_type, bint color)
    cpdef int king(self, bint color) noexcept
    @cython.locals(key=uint64_t, own=uint64_t, bb=uint64_t, color=int, pt=int)
    cpdef uint64_t base_key(self)
    @cython.locals(ep=int, pushed=int, beside=uint64_t)
    cpdef uint64_t ep_key(self) noexcept
    @cython.locals(key=uint64_t)
    cpdef uint64_t repetition_key(self, bint legal_ep) noexcept
    @cython.locals(frm=int)
    cpdef bint is_castling(self, int move) noexcept
    @cython.locals(frm=int, to=int)
    cpdef bint is_en_passant(self, int move) noexcept
    @cython.locals(frm=int, to=int, us=bint, them=bint, pt=int, from_bb=uint64_t, to_bb=uint64_t, ep=int,
                   rights=uint64_t, key=uint64_t, ours=int, theirs=int, rank=int, k_to=int, r_to=int,
                   captured=int, cap_sq=int, promotion=int, wk=int, bk=int, old=uint64_t, kept=uint64_t)
    cpdef void play(self, int move) noexcept
    cpdef void play_null(self) noexcept
