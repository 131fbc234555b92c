cimport cython
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t

from chessscan.core._bits cimport lsb


cdef Py_ssize_t _MIN_ROWS, _SAN_ROW_BYTES, _UCI_ROW_BYTES
cdef uint64_t _LOOSE
cdef int64_t _NOTE_NA


@cython.final
cdef class PositionRows:
    cdef public Py_ssize_t n
    cdef public list sources
    cdef public dict source_ids
    cdef public object fens
    cdef public Py_ssize_t size          # rows the buffers hold
    cdef public Py_ssize_t cap           # rows that may be written before new buffers (0: handed over)
    cdef public Py_ssize_t san_len, uci_len, checkers_len
    cdef public Py_ssize_t bitmap_bytes
    cdef public int64_t[::1] game_index
    cdef public int32_t[::1] source_id
    cdef public int32_t[::1] ply
    cdef public int32_t[::1] move_number
    cdef public int32_t[::1] color
    cdef public int32_t[::1] check_kind
    cdef public int32_t[::1] halfmove_clock
    cdef public uint64_t[::1] zobrist
    cdef public int32_t[::1] repetition
    cdef public int32_t[::1] san_offsets
    cdef public int32_t[::1] uci_offsets
    cdef public int32_t[::1] checkers_offsets
    cdef public uint8_t[::1] flag_bits
    cdef public uint8_t[::1] san_data
    cdef public uint8_t[::1] uci_data
    cdef public uint8_t[::1] checkers_data
    cdef public int64_t[::1] clock_ms
    cdef public int64_t[::1] emt_ms
    cdef public int32_t[::1] eval_cp
    cdef public int32_t[::1] eval_mate
    cdef public uint8_t[::1] note_bits

    cpdef truncate(self, Py_ssize_t n)
    cpdef int source_number(self, str source) except -1
    cpdef Py_ssize_t add(self, int source_id, int64_t game_index, int ply, int move_number, bint white, str san,
                         int frm, int to, int promotion, int kind, uint64_t checkers, int flags, int clock,
                         uint64_t zobrist, int repetition) except -1
    @cython.locals(i=Py_ssize_t, k=int, nbytes=Py_ssize_t, byte=Py_ssize_t, bit=uint8_t)
    cpdef Py_ssize_t add_key(self, int source_id, int64_t game_index, int ply, int move_number, bint white,
                             uint64_t san_key, str san, int frm, int to, int promotion, int kind, uint64_t checkers,
                             int flags, int clock, uint64_t zobrist, int repetition) except -1
    @cython.locals(j=Py_ssize_t)
    cdef inline int _add_key(self, uint64_t key) except -1
    @cython.locals(size=Py_ssize_t)
    cdef int _add_san(self, str san) except -1
    @cython.locals(j=Py_ssize_t, k=int)
    cdef inline int _add_uci(self, int frm, int to, int promotion) except -1
    @cython.locals(nbytes=Py_ssize_t, byte=Py_ssize_t, bit=uint8_t)
    cpdef int set_notes(self, Py_ssize_t i, int64_t clock, int64_t emt, int64_t cp, int64_t mate) except -1
    @cython.locals(j=Py_ssize_t, first=bint, sq=int)
    cdef int _add_checkers(self, uint64_t checkers) except -1
