cimport cython

from chessscan.readers.movetext cimport _NoteReader, ascii_tag_pairs, game_line_reader

ctypedef const unsigned char* cbytes


cdef class RawGame:
    # The counts and places as C integers: the reader makes no int object for them (read from
    # Python, each is one).
    cdef public Py_ssize_t index, byte_offset, line, movetext_line, variations, comments, nags, _tag_line
    cdef public object source, tags, _sans, _keys, result, issues, first_comment, _mt, _codec, _tags, notes
    cdef _fill(self, source, Py_ssize_t index, Py_ssize_t byte_offset, Py_ssize_t line, tags, sans, result,
               Py_ssize_t movetext_line, Py_ssize_t variations, Py_ssize_t comments, Py_ssize_t nags, issues,
               first_comment, _mt, _codec, _tags, Py_ssize_t _tag_line, _keys, notes)


@cython.final
cdef class _Span:
    cdef object head
    cdef bytes buf
    cdef Py_ssize_t pos, cr, at
    cdef readonly Py_ssize_t end
    cdef readonly bint gap
    cdef readonly Py_ssize_t skipped
    @cython.locals(n=Py_ssize_t, p=cbytes, q=cbytes, lf=Py_ssize_t, e=Py_ssize_t)
    cdef inline Py_ssize_t _line_end(self, Py_ssize_t i) noexcept
    @cython.locals(taken=Py_ssize_t, gap=bint, buf=bytes, p=cbytes, i=Py_ssize_t, e=Py_ssize_t, j=Py_ssize_t,
                   kind=int, c=cython.uchar, start=Py_ssize_t, n=Py_ssize_t)
    cpdef Py_ssize_t take_tag_lines(self, list lines, bytes line) except -1
    @cython.locals(taken=Py_ssize_t, start=Py_ssize_t, p=cbytes, i=Py_ssize_t, e=Py_ssize_t)
    cpdef Py_ssize_t skip_blank_lines(self) except -1

@cython.locals(n=Py_ssize_t, p=cbytes, q=cbytes, lf=Py_ssize_t, first=Py_ssize_t, start=Py_ssize_t, end=Py_ssize_t)
cpdef _Span _chunk_span(bytes chunk, list parts)

cdef list _split_lines(data)
@cython.locals(lines=list, i=Py_ssize_t, cr=Py_ssize_t, lf=Py_ssize_t, e=Py_ssize_t, q=cbytes)
cdef list _split_lines_c(cbytes p, Py_ssize_t n)

cdef inline bint _ends_tag(bytes line) except -1
cdef inline bint _ends_tag_c(cbytes p, Py_ssize_t n) noexcept

cdef Py_ssize_t _marker_candidate(bytes rest) except -2
@cython.locals(star=cbytes, q=cbytes, end=Py_ssize_t, i=Py_ssize_t)
cdef Py_ssize_t _marker_candidate_c(cbytes p, Py_ssize_t n) noexcept
@cython.locals(n=Py_ssize_t, p=cbytes)
cdef bint _may_hold_game(bytes text) except -1

@cython.locals(p=cbytes, n=Py_ssize_t, i=Py_ssize_t, c=cython.uchar, start=Py_ssize_t, e=Py_ssize_t,
               back=Py_ssize_t, q=Py_ssize_t, b=Py_ssize_t)
cdef Py_ssize_t _last_sure_start_c(const unsigned char[:] buf, Py_ssize_t lo, Py_ssize_t end,
                                   Py_ssize_t lookback) except -2

cpdef Py_ssize_t _result_end(bytes rest, Py_ssize_t start) except -2
@cython.locals(c=cython.uchar)
cdef Py_ssize_t _result_end_c(cbytes p, Py_ssize_t n, Py_ssize_t i) noexcept
cdef inline bint _after_marker_gap(cython.uchar c) noexcept
cdef inline bint _in_symbol(cython.uchar c) noexcept
cpdef bint _has_text(bytes b, Py_ssize_t start) except -1
cdef bint _has_text_c(cbytes p, Py_ssize_t n, Py_ssize_t i) noexcept
@cython.locals(p=cbytes, n=Py_ssize_t, i=Py_ssize_t)
cdef Py_ssize_t _lead(bytes line) except -2
cpdef bint _first_is_brace(bytes text) except -1

@cython.locals(n=Py_ssize_t, text=bytes)
cdef Py_ssize_t _end_offset(Py_ssize_t g_off, Py_ssize_t adj, list pre_lines, list tag_lines, list mt_lines) except? -1

@cython.locals(issues=list, pre_b=bytes, tag_b=bytes, mt_b=bytes, mt_ascii=bint, game=RawGame,
               tag_n=Py_ssize_t, tags=dict)
cdef RawGame _finish(source, Py_ssize_t index, Py_ssize_t g_off, Py_ssize_t g_line, list pre_lines,
                   Py_ssize_t pre_comments, list tag_lines, Py_ssize_t tag_line0, list mt_lines,
                   Py_ssize_t mt_line0, list clean, Py_ssize_t ncom, bint unclosed, bint has_tags,
                   Py_ssize_t adj, extra, cut=*, _NoteReader whole=*)
