cimport cython
from libc.stdint cimport uint64_t

from chessscan.core._bits cimport BB_ALL, bit, bswap64


@cython.final
cdef class AttackTables:
    cdef readonly uint64_t knight[64]
    cdef readonly uint64_t king[64]
    cdef readonly uint64_t pawn[128]
    cdef readonly uint64_t file_mask[64]
    cdef uint64_t rank_attacks[512]
    cdef readonly uint64_t diagonal_mask[64]
    cdef readonly uint64_t antidiagonal_mask[64]
    cdef readonly uint64_t bishop_pseudo[64]
    cdef readonly uint64_t rook_pseudo[64]
    cdef uint64_t between[4096]
    cdef uint64_t rays[4096]


cdef AttackTables T

@cython.locals(bb=uint64_t, f=int, r=int, to=int, d=int)
cpdef uint64_t _step_attacks(int sq, tuple deltas)
@cython.locals(bb=uint64_t, s=int, t=int, d=int)
cpdef uint64_t _sliding_attacks(int sq, uint64_t occupied, tuple deltas)

cpdef AttackTables tables()
cpdef uint64_t knight_attacks(int sq) noexcept
cpdef uint64_t king_attacks(int sq) noexcept
cpdef uint64_t pawn_attacks(bint color, int sq) noexcept
@cython.locals(blockers=uint64_t, r=uint64_t, up=uint64_t, down=uint64_t)
cdef uint64_t _line_attacks(int sq, uint64_t occupied, uint64_t mask) noexcept
cpdef uint64_t bishop_attacks(int sq, uint64_t occupied) noexcept
@cython.locals(shift=int)
cpdef uint64_t rook_attacks(int sq, uint64_t occupied) noexcept
cpdef uint64_t queen_attacks(int sq, uint64_t occupied) noexcept
cpdef uint64_t between(int a, int b) noexcept
cpdef uint64_t ray(int a, int b) noexcept
cpdef uint64_t bishop_pseudo(int sq) noexcept
cpdef uint64_t rook_pseudo(int sq) noexcept
