cimport cython
from libc.stdint cimport uint8_t, uint64_t


@cython.final
cdef class _Table:
    cdef public Py_ssize_t size
    cdef public Py_ssize_t plies
    cdef public int gen
    cdef public int[::1] run
    cdef public uint64_t[::1] keys
    cdef public int[::1] first
    cdef public int[::1] counts
    cdef public int[::1] stamps
    cdef public int[::1] checks

    @cython.locals(size=Py_ssize_t)
    cpdef prepare(self, Py_ssize_t plies)


cdef object _BY_END
cdef object _LOCAL
cdef _Table _table()

@cython.locals(n1=Py_ssize_t, gen=int, mask=uint64_t, slot_keys=uint64_t[::1], slot_first=int[::1],
               counts=int[::1], stamps=int[::1], run=int[::1], checks=int[::1], a=int, b=int,
               q=Py_ssize_t, s=int, p=Py_ssize_t, k=uint64_t, i=Py_ssize_t, c=int, f=Py_ssize_t,
               side=bint, o=int, mine=int, moved=Py_ssize_t, runs=list, j=Py_ssize_t)
cdef list _runs(_Table t, const uint64_t[::1] keys, const uint8_t[::1] gave_check, bint first)
