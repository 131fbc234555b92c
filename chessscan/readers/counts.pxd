cimport cython

ctypedef const unsigned char* cbytes

cpdef Py_ssize_t termination_marks(bytes data) except -1
cpdef Py_ssize_t line_ends(bytes data) except -1
@cython.locals(first=bint)
cpdef Py_ssize_t event_lines(bytes data) except -1

@cython.locals(count=Py_ssize_t, i=Py_ssize_t, q=cbytes)
cdef Py_ssize_t _count_byte(cbytes p, Py_ssize_t n, int c) noexcept

@cython.locals(count=Py_ssize_t, half_end=Py_ssize_t, i=Py_ssize_t, q=cbytes, before=cython.uchar, after=cython.uchar)
cdef Py_ssize_t _marks_c(cbytes p, Py_ssize_t n) noexcept

@cython.locals(count=Py_ssize_t, i=Py_ssize_t, q=cbytes)
cdef Py_ssize_t _line_ends_c(cbytes p, Py_ssize_t n) noexcept

@cython.locals(count=Py_ssize_t, i=Py_ssize_t, q=cbytes, c=int)
cdef Py_ssize_t _event_lines_c(cbytes p, Py_ssize_t n) noexcept

cpdef tuple text_counts(data, Py_ssize_t lo=*, Py_ssize_t hi=*)
@cython.locals(p=cbytes, n=Py_ssize_t, lines=Py_ssize_t, events=Py_ssize_t, i=Py_ssize_t, q=cbytes)
cdef tuple _text_counts_c(const unsigned char[:] data, Py_ssize_t lo, Py_ssize_t hi)
cdef bint _event_at(cbytes p, Py_ssize_t n, Py_ssize_t i) noexcept
