cimport cython
from cpython.ref cimport PyObject
from libc.stdint cimport uint64_t

ctypedef const unsigned char* cbytes
ctypedef unsigned char uchar
ctypedef char* charp
ctypedef uint64_t* u64p


cdef dict _TOKEN_CACHE
cdef Py_ssize_t _TOKEN_CACHE_MAX
cdef Py_ssize_t _SAN_SLOTS
cdef int _SAN_SLOT_BITS
cdef uint64_t _GOLDEN


cdef struct _SanSlot:
    uint64_t key
    PyObject* san  # borrowed: _SanTable.vals holds the reference


@cython.final
cdef class _SanTable:
    cdef _SanSlot slots[32768]  # _SAN_SLOTS
    cdef list vals
    cdef Py_ssize_t used

    @cython.locals(key=uint64_t, k=Py_ssize_t, h=uint64_t, kh=uint64_t)
    cdef inline str get(self, cbytes p, Py_ssize_t n)
    @cython.locals(san=str)
    cdef str _add(self, cbytes p, Py_ssize_t n, uint64_t key, uint64_t h)


cdef _SanTable _SAN_TABLE

@cython.locals(o=Py_ssize_t, i=Py_ssize_t, k=Py_ssize_t, count=Py_ssize_t, left_open=bint,
               c=uchar, buf=charp, q=cbytes)
cdef tuple _blank_comments_c(cbytes p, Py_ssize_t n)

cpdef tuple blank_comments(bytes rest)

@cython.locals(i=Py_ssize_t, j=Py_ssize_t)
cpdef tuple fast_movetext(bytes cb, Py_ssize_t piece=*)

cdef bint _is_space(unsigned char c) noexcept

@cython.locals(i=Py_ssize_t, c=uchar)
cdef bint _is_san(cbytes p, Py_ssize_t n) noexcept

@cython.locals(i=Py_ssize_t, s=Py_ssize_t, e=Py_ssize_t, j=Py_ssize_t, k=Py_ssize_t,
               length=Py_ssize_t, c=uchar, sans=list, table=_SanTable)
cdef tuple _scan_movetext(cbytes p, Py_ssize_t n)

cpdef dict tag_pairs(bytes tag_b, str codec)

cdef bint _is_tag_space(uchar c) noexcept
cdef bint _is_alnum(uchar c) noexcept
cdef bint _is_name_char(uchar c) noexcept

cdef list _TAG_NAMES
@cython.locals(i=Py_ssize_t, s=Py_ssize_t, e=Py_ssize_t, vs=Py_ssize_t, ve=Py_ssize_t, c=uchar, tags=dict,
               names=list, k=Py_ssize_t, name=str)
cdef dict _scan_tags(cbytes p, Py_ssize_t n)

@cython.locals(cap=Py_ssize_t, count=Py_ssize_t, keys=u64p, grown=u64p, i=Py_ssize_t, s=Py_ssize_t,
               e=Py_ssize_t, j=Py_ssize_t, k=Py_ssize_t, length=Py_ssize_t, c=uchar, key=uint64_t)
cdef tuple _fast_keys_c(cbytes p, Py_ssize_t n)
