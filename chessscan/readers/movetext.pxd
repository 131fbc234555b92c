cimport cython
from cpython.ref cimport PyObject
from libc.stdint cimport uint64_t

from chessscan.core._bits cimport lsb

ctypedef const unsigned char* cbytes
ctypedef unsigned char uchar
ctypedef char* charp
ctypedef uint64_t* u64p
ctypedef PyObject* PyObject_ptr


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
               buf=charp, q=cbytes, brace=Py_ssize_t, semi=Py_ssize_t)
cdef tuple _blank_comments_c(cbytes p, Py_ssize_t n)

cpdef tuple blank_comments(bytes rest)

@cython.locals(i=Py_ssize_t, j=Py_ssize_t)
cpdef tuple fast_movetext(bytes cb, Py_ssize_t piece=*)

cdef bint _is_space(unsigned char c) noexcept

@cython.locals(j=Py_ssize_t, k=Py_ssize_t, c=uchar)
cdef inline Py_ssize_t _after_move_number(cbytes p, Py_ssize_t s, Py_ssize_t e) noexcept
@cython.locals(key=uint64_t, k=Py_ssize_t)
cdef inline uint64_t _packed_key(cbytes p, Py_ssize_t n) noexcept
@cython.locals(i=Py_ssize_t, c=uchar)
cdef inline bint _is_san(cbytes p, Py_ssize_t n) noexcept

@cython.locals(i=Py_ssize_t, s=Py_ssize_t, e=Py_ssize_t, j=Py_ssize_t, k=Py_ssize_t,
               length=Py_ssize_t, c=uchar, sans=list, table=_SanTable)
cdef tuple _scan_movetext(cbytes p, Py_ssize_t n)

cpdef dict tag_pairs(bytes tag_b, str codec)

cdef bint _is_tag_space(uchar c) noexcept
cdef bint _is_alnum(uchar c) noexcept
cdef bint _is_name_char(uchar c) noexcept

cdef list _TAG_NAMES, _TAG_VALUES, _TAG_FOUND, _TAG_DICT_NAMES, _TAG_DICT_VALUES
cdef bytes _TAG_CLASSES
cdef dict _TAG_DICT, _TAG_DICT_BEFORE
cdef list _TAG_DICT_NAMES_BEFORE, _TAG_DICT_VALUES_BEFORE
cdef object _intern
@cython.locals(old=PyObject_ptr)
cdef inline void _set_slot(list items, Py_ssize_t k, object value) noexcept
@cython.locals(k=Py_ssize_t)
cdef dict ascii_tag_pairs(list lines, Py_ssize_t* nbytes)
@cython.locals(k=Py_ssize_t, total=Py_ssize_t)
cdef dict _scan_tags(bytes tag_b)
@cython.locals(i=Py_ssize_t, s=Py_ssize_t, e=Py_ssize_t, vs=Py_ssize_t, ve=Py_ssize_t, c=uchar, k=Py_ssize_t,
               n=Py_ssize_t, total=Py_ssize_t, line=bytes, p=cbytes, q=cbytes, names=list, values=list, found=list,
               name=str, value=str, cls=cbytes, ascii=bint, text=cython.char[64])
cdef Py_ssize_t _scan_tag_lines(list lines, bint ascii_only, Py_ssize_t* nbytes) except -2
@cython.locals(j=Py_ssize_t)
cdef inline bint _same_names(list names, list template, Py_ssize_t k)
@cython.locals(tags=dict, names=list, values=list, v=object, j=Py_ssize_t, same=bint)
cdef dict _tag_dict(Py_ssize_t k, list found)

@cython.locals(cap=Py_ssize_t, count=Py_ssize_t, keys=u64p, grown=u64p, i=Py_ssize_t, s=Py_ssize_t,
               e=Py_ssize_t, j=Py_ssize_t, k=Py_ssize_t, length=Py_ssize_t, c=uchar, key=uint64_t)
cdef tuple _fast_keys_c(cbytes p, Py_ssize_t n)


from libc.stdint cimport int64_t

ctypedef int64_t* int64_p

cdef int64_t _NA
cdef Py_ssize_t _NOTE_HOURS_DIGITS, _NOTE_PAWN_DIGITS


cdef uint64_t _CLK_HEAD, _EVAL_HEAD, _CLK_AFTER_EVAL, _CLK_ZEROS, _CLK_FIXED_MASK, _CLK_FIXED, _CLK_ADD_10
cdef uint64_t _CLK_DIGIT_BITS, _CLK_ADD_6, _CLK_TENS_BITS

@cython.locals(x=uint64_t)
cdef inline uint64_t _load8(cbytes p, Py_ssize_t i) noexcept


@cython.final
cdef class _NoteReader:
    cdef Py_ssize_t ply, count, cap
    cdef int64_t clock, emt, cp, mate
    cdef list problems
    cdef Py_ssize_t comments
    cdef bint tail, borrowed
    cdef object keys, result, notes
    cdef int64_t* buf

    @cython.locals(i=Py_ssize_t, c=uchar, start=Py_ssize_t, j=Py_ssize_t, kind=int, close=Py_ssize_t,
                   vs=Py_ssize_t, ve=Py_ssize_t, ok=bint)
    cdef int read(self, cbytes p, Py_ssize_t s, Py_ssize_t e, Py_ssize_t ply) except -1
    @cython.locals(n=Py_ssize_t, last=Py_ssize_t)
    cdef inline int add_fixed(self, Py_ssize_t ply, int64_t clock, int64_t cp, int64_t mate) except -1
    @cython.locals(h=int64_t, k=Py_ssize_t, m1=int, m2=int, s1=int, s2=int, ms=int64_t, scale=int64_t)
    cdef inline bint _time(self, cbytes p, Py_ssize_t i, Py_ssize_t e, int kind) noexcept
    @cython.locals(k=Py_ssize_t, d=Py_ssize_t, mate=bint, negative=bint, value=int64_t, digits=Py_ssize_t)
    cdef inline bint _eval(self, cbytes p, Py_ssize_t i, Py_ssize_t e) noexcept
    @cython.locals(n=Py_ssize_t, k=Py_ssize_t)
    cdef inline int _flush(self) except -1
    @cython.locals(cap=Py_ssize_t, grown=int64_p)
    cdef int _grow(self, Py_ssize_t n) except -1
    cpdef list take_problems(self)
    cpdef tuple finish(self)
    cpdef take_notes(self)


@cython.locals(reader=_NoteReader)
cpdef tuple read_notes(bytes mt)
cpdef comment_notes(_NoteReader reader, bytes comment, Py_ssize_t ply)
@cython.locals(reader=_NoteReader)
cpdef tuple game_line_keys_notes(bytes line)
@cython.locals(reader=_NoteReader)
cpdef _NoteReader game_line_reader(bytes line)
@cython.locals(ply=Py_ssize_t, i=Py_ssize_t, c=uchar, e=Py_ssize_t, s=Py_ssize_t, j=Py_ssize_t, k=Py_ssize_t)
cdef Py_ssize_t _scan_notes(_NoteReader reader, cbytes p, Py_ssize_t n) except -1
cdef str _marker_text(cbytes p, Py_ssize_t j, Py_ssize_t length)
cdef bint _is_marker(cbytes p, Py_ssize_t j, Py_ssize_t length) noexcept
@cython.locals(q=cbytes)
cdef inline Py_ssize_t _find(cbytes p, Py_ssize_t i, Py_ssize_t e, uchar c) noexcept
cdef uint64_t _HIGH_BITS, _BANGS
cdef bint _is_ascii(cbytes p, Py_ssize_t i, Py_ssize_t e) noexcept
cdef bytes _TOKEN_BYTES
@cython.locals(reader=_NoteReader)
cdef _NoteReader _borrowing_reader()
cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* _fast_keys_notes_c's keys buffer and its size in keys, and its readers' values buffer
       (_borrowing_reader) and its size in values, one per thread: Dask runs tasks
       on threads, and a game's reading may run Python code (a garbage collection's
       finalizers) while another thread reads a game. */
    #if defined(_MSC_VER)
    static __declspec(thread) uint64_t *cs_key_buf = NULL;
    static __declspec(thread) Py_ssize_t cs_key_cap = 0;
    static __declspec(thread) int64_t *cs_note_buf = NULL;
    static __declspec(thread) Py_ssize_t cs_note_cap = 0;
    #else
    static __thread uint64_t *cs_key_buf = NULL;
    static __thread Py_ssize_t cs_key_cap = 0;
    static __thread int64_t *cs_note_buf = NULL;
    static __thread Py_ssize_t cs_note_cap = 0;
    #endif
    /* The 8 bytes at p + i as one number, the first byte lowest (on any machine). */
    static inline uint64_t cs_load8_le(const unsigned char *p, Py_ssize_t i) {
        uint64_t x;
        memcpy(&x, p + i, 8);
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        x = __builtin_bswap64(x);
    #endif
        return x;
    }
    """
    u64p _KEY_BUF "cs_key_buf"
    Py_ssize_t _KEY_CAP "cs_key_cap"
    int64_p _NOTE_BUF "cs_note_buf"
    Py_ssize_t _NOTE_CAP "cs_note_cap"
    uint64_t _load8_le "cs_load8_le"(cbytes p, Py_ssize_t i) nogil
cdef enum:
    _SAN_SEEN_BITS = 12
cdef uint64_t _SAN_SEEN[1 << _SAN_SEEN_BITS]
@cython.locals(seen=uint64_t, h=uint64_t)
cdef inline bint _known_san(cbytes p, Py_ssize_t length, uint64_t key) noexcept
@cython.locals(grown=u64p)
cdef u64p _grow_keys() except NULL
@cython.locals(cap=Py_ssize_t, count=Py_ssize_t, keys=u64p, i=Py_ssize_t, s=Py_ssize_t,
               e=Py_ssize_t, j=Py_ssize_t, k=Py_ssize_t, length=Py_ssize_t, c=uchar, key=uint64_t, cls=cbytes,
               d=Py_ssize_t, cp=int64_t, mate=int64_t, is_mate=bint, negative=bint, value=int64_t, head=uint64_t,
               clock=uint64_t, ms=int64_t, word=uint64_t, spaces=uint64_t,
               comments=Py_ssize_t, pairs=uint64_t, keys_b=bytes)
cdef int _fast_keys_notes_c(cbytes p, Py_ssize_t n, _NoteReader reader) except -2
