cimport cython
from libc.stdint cimport uint64_t


@cython.final
cdef class ZobristKeys:
    cdef readonly uint64_t piece[896]
    cdef readonly uint64_t castling[4]
    cdef readonly uint64_t ep[8]
    cdef readonly uint64_t turn


cdef ZobristKeys K

cpdef ZobristKeys keys()
@cython.locals(key=uint64_t, white=uint64_t, black=uint64_t)
cpdef uint64_t castling_key(uint64_t castling_rights, int white_king, int black_king) noexcept
