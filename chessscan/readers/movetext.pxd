cimport cython
from libc.stdint cimport uint64_t

ctypedef const unsigned char* cbytes
ctypedef unsigned char uchar
ctypedef char* charp


cdef dict _TOKEN_CACHE
cdef dict _SAN_CACHE
cdef Py_ssize_t _TOKEN_CACHE_MAX

@cython.locals(o=Py_ssize_t, i=Py_ssize_t, k=Py_ssize_t, count=Py_ssize_t, left_open=bint,
               c=uchar, buf=charp)
cdef tuple _blank_comments_c(cbytes p, Py_ssize_t n)

cpdef tuple blank_comments(bytes rest)

@cython.locals(i=Py_ssize_t, j=Py_ssize_t)
cpdef tuple fast_movetext(bytes cb, Py_ssize_t piece=*)

cdef bint _is_space(unsigned char c) noexcept

@cython.locals(i=Py_ssize_t, c=uchar)
cdef bint _is_san(cbytes p, Py_ssize_t n) noexcept

@cython.locals(i=Py_ssize_t, s=Py_ssize_t, e=Py_ssize_t, j=Py_ssize_t, k=Py_ssize_t,
               length=Py_ssize_t, c=uchar, key=uint64_t, sans=list, cache=dict)
cdef tuple _scan_movetext(cbytes p, Py_ssize_t n)
