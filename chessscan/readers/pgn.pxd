cimport cython

ctypedef const unsigned char* cbytes

cdef bint _ends_tag(bytes line) except -1
cdef bint _ends_tag_c(cbytes p, Py_ssize_t n) noexcept

cdef Py_ssize_t _marker_candidate(bytes rest) except -2
@cython.locals(star=cbytes, q=cbytes, end=Py_ssize_t, i=Py_ssize_t)
cdef Py_ssize_t _marker_candidate_c(cbytes p, Py_ssize_t n) noexcept
