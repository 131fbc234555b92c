"""The PGN reader's per-line and per-game hot spots: comment blanking, tag pairs and plain-SAN
movetext.

Compiled (Cython pure Python mode, types in ``movetext.pxd``), both run as one pass over the
bytes with C pointers; uncompiled, they use bytes methods and regexes (the same results, and
faster than a byte loop in Python).

They follow the PGN standard (Steven J. Edwards, 1994): comments §5 and §8.2.5, tag pairs
§8.1, move number indications §8.2.2, SAN §8.2.3, termination markers §8.2.6.
"""

from __future__ import annotations

import re
import sys

try:
    import cython
except ImportError:  # uncompiled, without Cython installed
    from chessscan.core import _cython_shim as cython

if cython.compiled:
    from cython.cimports.cpython.bytes import PyBytes_FromStringAndSize
    from cython.cimports.cpython.dict import PyDict_SetDefault
    from cython.cimports.cpython.list import PyList_GET_ITEM, PyList_SET_ITEM
    from cython.cimports.cpython.ref import Py_INCREF, Py_XDECREF, PyObject
    from cython.cimports.cpython.unicode import (PyUnicode_1BYTE_DATA, PyUnicode_DecodeUTF8, PyUnicode_GET_LENGTH,
                                                 PyUnicode_InternFromString, PyUnicode_New)
    from cython.cimports.libc.stdint import int64_t, uint64_t
    from cython.cimports.libc.stdlib import free, malloc, realloc
    from cython.cimports.libc.string import memchr, memcmp, memcpy
else:
    from chessscan.core.bitboard import lsb

# §8.1.1: tag names are symbol tokens; §7: strings with \" and \\ escapes. A tag pair may
# span lines (whitespace between its tokens).
TAG_NAME = r"[A-Za-z0-9][A-Za-z0-9_+#=:-]*"
TAG = r'\[\s*(' + TAG_NAME + r')\s*"([^"\\\r\n]*(?:\\.[^"\\\r\n]*)*)"\s*\]'
TAG_RE = re.compile(TAG)

# §8.2.6 termination markers, as the last token of the movetext.
RESULTS = {b"1-0": "1-0", b"0-1": "0-1", b"1/2-1/2": "1/2-1/2", b"*": "*"}
# §8.2.5 / §5: brace comments end at the first '}'; ';' runs to end of line. _COMMENTS_B
# also matches an unclosed brace comment (to the end of the text) for counting.
_STRIP_B = re.compile(rb"\{[^}]*\}|;[^\r\n]*")
_COMMENTS_B = re.compile(rb"\{[^}]*\}?|;[^\r\n]*")

# Strict SAN (§8.2.3), as written by lichess, pgnmentor, TCEC; a token is either a move
# number indication (digits and one period, after "..." became ".") or such a SAN move.
SAN_FAST = r"(?:[NBRQK][a-h]?[1-8]?x?[a-h][1-8]|[a-h](?:x[a-h])?[1-8](?:=[NBRQ])?|O-O(?:-O)?)[+#]?"
_FAST_TOKEN_B = re.compile((r"(\d*\.)|(" + SAN_FAST + ")").encode())

FAST_PIECE = 1 << 18  # bytes of movetext tokenized at once

# Token cache: token -> kept SAN str ('' for a move number). Tokens repeat massively across
# games, so most tokens need no regex and no new str: equal SAN moves share one str object.
# Uncompiled it is a dict keyed by the token's bytes; compiled, a _SanTable. Bounded to keep
# memory flat.
_TOKEN_CACHE: dict = {}
_TOKEN_CACHE_MAX = 1 << 16

_SAN_SLOTS = 1 << 15  # _SanTable slots (a power of two); at most 3/4 of them are filled
_SAN_SLOT_BITS = 15
_GOLDEN = 0x9E3779B97F4A7C15  # 2^64 / golden ratio, odd: Fibonacci hashing


class _SanTable:
    """SAN str by the SAN's bytes packed into a 64-bit key (first byte lowest; a SAN move has
    at most 7 bytes, none zero, so key 0 marks an empty slot): open addressing with linear
    probing over a C array of (key, str) slots, so a lookup makes no Python object and reads
    one cache line of the table (compiled only). ``vals`` owns the strs the slots point to."""

    def __init__(self):
        self.vals = [None] * _SAN_SLOTS  # slots: a C array, zeroed at allocation
        self.used = 0

    def get(self, p, n):
        """The kept str for the ``n`` (1..7) bytes at ``p``, made and kept on first sight."""
        key = _packed_key(p, n)
        # Fibonacci hashing: the top bits of key * 2^64/phi (mod 2^64) pick the first slot.
        h = (key * _GOLDEN) >> (64 - _SAN_SLOT_BITS)
        while True:
            kh = self.slots[h].key
            if kh == key:
                return cython.cast(object, self.slots[h].san)
            if kh == 0:
                return self._add(p, n, key, h)
            h = (h + 1) & (_SAN_SLOTS - 1)

    def _add(self, p, n, key, h):
        """:meth:`get` on a miss, ``h`` the empty slot for ``key``; kept apart so the hit path
        stays small enough to inline."""
        san = p[:n].decode("ascii")
        if self.used < _SAN_SLOTS // 4 * 3:
            self.vals[h] = san
            self.slots[h].key = key
            self.slots[h].san = cython.cast(cython.pointer(PyObject), san)
            self.used += 1
        return san


_SAN_TABLE = _SanTable() if cython.compiled else None


def blank_comments(rest: bytes) -> tuple[bytes, int, bool]:
    """Blank out one line's comments: (stripped, comments, left_open).

    ``rest`` is a movetext line (or what follows a comment closed on it), bytes. Each
    ``{...}`` (§8.2.5, ends at the first '}') and ``;...`` comment (§5, to the end of the
    line, not taking a '\\r' or '\\n') becomes one space. A '{' with no '}' after it opens a
    comment left open at the line end: the line is cut at that '{', and ``comments`` counts
    it as one comment (a ';' after it is comment text, not a comment). Raises nothing.
    """
    if cython.compiled:
        return _blank_comments_c(rest, len(rest))
    stripped, n = _STRIP_B.subn(b" ", rest)
    k = stripped.find(b"{")  # only an unclosed comment's '{' is left
    if k >= 0:
        # Recount: a ';' after that '{' was taken for a comment.
        return stripped[:k], len(_COMMENTS_B.findall(rest)), True
    return stripped, n, False


def _blank_comments_c(p, n):
    """Compiled :func:`blank_comments` over ``n`` bytes at ``p``."""
    # Each comment (at least one byte) becomes one space: the output is never longer. The
    # text between comments is copied a run at a time, from memchr hop to memchr hop.
    buf = cython.cast(cython.p_char, malloc(n + 1))
    if buf == cython.NULL:
        raise MemoryError()
    o = 0
    i = 0
    count = 0
    left_open = False
    brace = semi = -1  # offsets of the next '{' and ';' at or after i (n: none; -1: not looked for)
    while i < n:
        if brace < i:
            q = cython.cast(cbytes, memchr(p + i, 123, n - i))
            brace = n if q == cython.NULL else q - p
        if semi < i:
            q = cython.cast(cbytes, memchr(p + i, 59, n - i))
            semi = n if q == cython.NULL else q - p
        k = brace if brace < semi else semi
        if k > i:
            memcpy(buf + o, p + i, k - i)
            o += k - i
            i = k
            if i == n:
                break
        if k == brace:  # '{'
            q = cython.cast(cbytes, memchr(p + i + 1, 125, n - i - 1))  # '}'
            count += 1
            if q == cython.NULL:
                left_open = True  # no '}' after it: the line ends in the comment
                break
            buf[o] = 32
            o += 1
            i = (q - p) + 1
        else:  # ';': to the line end
            k = i + 1
            while k < n and p[k] != 10 and p[k] != 13:
                k += 1
            count += 1
            buf[o] = 32
            o += 1
            i = k
    try:
        stripped = buf[:o]
    finally:
        free(buf)
    return stripped, count, left_open


def tag_pairs(tag_b: bytes, codec: str) -> dict[str, str] | None:
    """``{name: value}`` of a tag section made only of well-formed tag pairs (§8.1), or None.

    ``tag_b`` is the tag section's bytes (its lines, line ends included), decoded with
    ``codec``. Accepted: tag pairs ``[Name "value"]`` separated by whitespace, with no
    escape (no backslash anywhere), no duplicate name, and no other text. None when the
    section needs the line-by-line reading that reports what is wrong (bad or duplicate
    tags, comments, escapes). Values are as written. Raises ``UnicodeDecodeError`` when
    ``tag_b`` is not in ``codec``.

    Compiled, a UTF-8 section is scanned once in C; otherwise (and when the scan finds
    anything unusual) one regex split decides, with the same result.
    """
    if cython.compiled and codec == "utf-8":
        tags = _scan_tags(tag_b)
        if tags is not None:
            return tags
    tag_s = tag_b.decode(codec)
    # split() gives [gap, name, value, gap, name, value, ..., gap].
    parts = TAG_RE.split(tag_s)
    names = parts[1::3]
    tags = dict(zip(names, parts[2::3]))
    if "".join(parts[0::3]).strip() or len(tags) != len(names) or "\\" in tag_s:
        return None
    return tags


# Compiled: the tag names of the last section, by position (names repeat from game to game
# in the same order): an equal name is taken from here, not decoded again. Names are ASCII.
_TAG_NAMES = [None] * 32
# Likewise the ASCII values of the last section, by position (an event, a variant, a time
# control, a termination repeat from game to game): None where the value was not ASCII.
_TAG_VALUES = [None] * 32
# The values of the section being scanned, by position (the dict is made once all are read).
_TAG_FOUND = [None] * 32
# The dict of the last section (a private one, never handed out), its names and values in
# order: a section with the same names (all distinct) is this dict with the values that differ
# replaced (no insertion, no resizing; a repeated value is the same str), then copied.
_TAG_DICT: dict = {}
_TAG_DICT_NAMES: list = []
_TAG_DICT_VALUES = [None] * 32
# Likewise the dict of the section of other names before it, its names and values.
_TAG_DICT_BEFORE: dict = {}
_TAG_DICT_NAMES_BEFORE: list = []
_TAG_DICT_VALUES_BEFORE = [None] * 32


def _is_tag_space(c):
    # Only the usual whitespace: any other byte sends the section to the regex, whose \s
    # and str.strip() also take \v, \f, \x1c..\x1f and Unicode spaces.
    return c == 32 or c == 9 or c == 10 or c == 13


def _is_alnum(c):
    return (48 <= c <= 57) or (65 <= c <= 90) or (97 <= c <= 122)


def _is_name_char(c):
    return _is_alnum(c) or c == 95 or c == 43 or c == 35 or c == 61 or c == 58 or c == 45  # _+#=:-


# _scan_tags' byte classes, by byte: 1 tag space, 2 name character, 4 a byte that stops a
# value's loop (the closing '"', an escape, a line end, NUL: the one after the bytes' end,
# or a byte not ASCII).
_TAG_CLASSES = bytes((1 if _is_tag_space(c) else 0) | (2 if _is_name_char(c) else 0)
                     | (4 if c in (34, 92, 10, 13, 0) or c >= 128 else 0) for c in range(256))


_intern = sys.intern


def _set_slot(items, k, value):
    """``items[k] = value`` for a ``k`` known to be in range: compiled, with no bounds check,
    no index object and no call (the tag caches' slots, set a dozen times a game)."""
    if cython.compiled:
        old = PyList_GET_ITEM(items, k)
        Py_INCREF(value)
        PyList_SET_ITEM(items, k, value)
        Py_XDECREF(old)
    else:
        items[k] = value


def ascii_tag_pairs(lines, nbytes):
    """Compiled only: :func:`tag_pairs` of the tag section made of ``lines`` (a list of bytes,
    each one line or a run of whole lines, line ends included) joined, decoded as UTF-8, when
    each bytes holds only whole tag pairs (and whitespace) and every byte is ASCII; else None, and the caller joins the lines and
    asks :func:`tag_pairs`. A pair split over lines, a byte not ASCII, anything
    :func:`tag_pairs` would read by its regex: None. Where it gives a dict, the section is
    known to be ASCII (no pass of its own over the bytes), no joined copy of it is made, and
    ``nbytes[0]`` is set to its length in bytes."""
    k = _scan_tag_lines(lines, True, nbytes)
    return None if k < 0 else _tag_dict(k, _TAG_VALUES)  # (ASCII values: all kept there)


def _scan_tags(tag_b):
    """Compiled scan behind :func:`tag_pairs` over the UTF-8 bytes ``tag_b``: the pairs,
    or None for anything but whitespace-separated pairs without escapes or duplicates (and
    for more than 32 pairs: the regex reads those)."""
    total = 0
    k = _scan_tag_lines([tag_b], False, cython.address(total))
    return None if k < 0 else _tag_dict(k, _TAG_FOUND)


def _scan_tag_lines(lines, ascii_only, nbytes):
    """The pairs in each bytes of ``lines`` in turn, their values stored in ``_TAG_FOUND``
    in order (with ``ascii_only``, they are those kept in ``_TAG_VALUES``), their names in
    ``_TAG_NAMES``: their count, or -1 for anything but whitespace-separated pairs without
    escapes (a pair cut by the end of a bytes too), for more than 32 pairs, and with
    ``ascii_only``, a byte not ASCII. ``nbytes[0]``: the bytes' total length (when not -1)."""
    names = _TAG_NAMES
    values = _TAG_VALUES
    found = _TAG_FOUND
    cls = _TAG_CLASSES
    k = 0
    total = 0
    for line in lines:
        p = line
        n = len(line)
        total += n
        # The loops stop at the NUL a bytes object has after its last byte (p[n]): no class
        # has it but the value's.
        i = 0
        while True:
            while cls[p[i]] & 1:
                i += 1
            if i == n:
                break
            if p[i] != 91 or k == 32:  # '['
                return -1
            i += 1
            while cls[p[i]] & 1:
                i += 1
            s = i
            # The name (then the value) of the last section at this position, when the bytes
            # here repeat it whole, is taken with no byte loop: it was checked when first read
            # (a name of name characters, an ASCII value without '"', escape or line end).
            name = names[k]
            e = -1 if name is None else s + PyUnicode_GET_LENGTH(name)
            if e < 0 or e > n or memcmp(PyUnicode_1BYTE_DATA(name), p + s, e - s) or cls[p[e]] & 2:
                if not _is_alnum(p[i]):  # a name starts with a letter or digit
                    return -1
                while cls[p[i]] & 2:
                    i += 1
                e = i
                # Interned, like the names a program writes: a lookup of "Event" in the dict
                # finds its key by identity, with no comparison of the characters. (Most
                # with no Python call: sys.intern's work from a NUL-terminated copy.)
                if e - s < 64:
                    memcpy(cython.address(text[0]), p + s, e - s)
                    text[e - s] = 0
                    _set_slot(names, k, PyUnicode_InternFromString(text))
                else:
                    _set_slot(names, k, _intern(PyUnicode_DecodeUTF8(cython.cast(cython.p_char, p + s), e - s, cython.NULL)))
            i = e
            while cls[p[i]] & 1:
                i += 1
            if p[i] != 34:  # '"'
                return -1
            i += 1
            vs = i
            value = values[k]
            ve = -1 if value is None else vs + PyUnicode_GET_LENGTH(value)
            if ve < 0 or ve >= n or p[ve] != 34 or memcmp(PyUnicode_1BYTE_DATA(value), p + vs, ve - vs):
                ascii = True
                q = p + i  # (a pointer of its own: the value loop, where most bytes are, steps it alone)
                while True:
                    while not cls[q[0]] & 4:
                        q += 1
                    c = q[0]
                    if c == 34:
                        break
                    if c >= 128:
                        ascii = False
                    elif c != 0 or q == p + n:  # an escape, a value cut by a line end, or the end
                        return -1
                    q += 1  # a NUL or a byte not ASCII in the value
                if ascii_only and not ascii:
                    return -1
                ve = q - p
                if ascii:  # the bytes are the characters: no decoding
                    value = PyUnicode_New(ve - vs, 127)
                    memcpy(PyUnicode_1BYTE_DATA(value), p + vs, ve - vs)
                    _set_slot(values, k, value)
                else:
                    value = PyUnicode_DecodeUTF8(cython.cast(cython.p_char, p + vs), ve - vs, cython.NULL)
                    _set_slot(values, k, None)
            i = ve + 1
            while cls[p[i]] & 1:
                i += 1
            if p[i] != 93:  # ']'
                return -1
            i += 1
            if not ascii_only:  # (ASCII values are the ones kept in _TAG_VALUES)
                _set_slot(found, k, value)
            k += 1
    nbytes[0] = total
    return k


def _same_names(names, template, k):
    """Whether the first ``k`` of ``names`` are the ``template`` list's names, each the same
    (interned) object in the same place."""
    if k != len(template):
        return False
    j = 0
    while j < k:
        if names[j] is not template[j]:
            return False
        j += 1
    return True


def _tag_dict(k, found):
    """The dict of the ``k`` pairs :func:`_scan_tag_lines` stored, in order (names in
    ``_TAG_NAMES``, values in ``found``); None when a name repeats."""
    global _TAG_DICT, _TAG_DICT_NAMES, _TAG_DICT_VALUES, _TAG_DICT_BEFORE, _TAG_DICT_NAMES_BEFORE, _TAG_DICT_VALUES_BEFORE
    names = _TAG_NAMES
    same = _same_names(names, _TAG_DICT_NAMES, k)
    if not same:
        # The names of the section before it (sections of two kinds alternate, with and
        # without a player's title): that dict, theirs and its values change places with these.
        same = _same_names(names, _TAG_DICT_NAMES_BEFORE, k)
        if same:
            _TAG_DICT, _TAG_DICT_BEFORE = _TAG_DICT_BEFORE, _TAG_DICT
            _TAG_DICT_NAMES, _TAG_DICT_NAMES_BEFORE = _TAG_DICT_NAMES_BEFORE, _TAG_DICT_NAMES
            _TAG_DICT_VALUES, _TAG_DICT_VALUES_BEFORE = _TAG_DICT_VALUES_BEFORE, _TAG_DICT_VALUES
    values = _TAG_DICT_VALUES
    if same:
        tags = _TAG_DICT
        j = 0
        while j < k:
            v = found[j]
            if v is not values[j]:
                tags[names[j]] = v
                _set_slot(values, j, v)
            j += 1
        return tags.copy()
    tags = {}
    j = 0
    while j < k:
        # One lookup: a duplicate name leaves the dict as it was (values may be one shared object: '').
        PyDict_SetDefault(tags, names[j], found[j])
        j += 1
        if len(tags) != j:
            return None
    _TAG_DICT_BEFORE, _TAG_DICT_NAMES_BEFORE, _TAG_DICT_VALUES_BEFORE = _TAG_DICT, _TAG_DICT_NAMES, values
    _TAG_DICT = tags
    _TAG_DICT_NAMES = names[:k]
    _TAG_DICT_VALUES = found[:k] + [None] * (32 - k)
    return tags.copy()


def fast_movetext(cb: bytes, piece: int = FAST_PIECE) -> tuple[list[str] | None, str | None]:
    """(sans, result) for plain movetext, or (None, None) if the general tokenizer is needed.

    ``cb`` is the movetext (bytes) with comments blanked. Accepted: whitespace-separated move
    number indications (``12.``, ``12...``, §8.2.2; also glued to the move as ``12.Nf3``) and
    strict SAN moves (§8.2.3), optionally ending with one termination marker (§8.2.6).
    ``sans`` lists the SAN moves as str (equal moves share one str object), ``result`` is the
    marker or None. Movetext longer than ``piece`` bytes is tokenized in pieces cut at
    whitespace. Non-ASCII input and any other token give (None, None). Raises nothing.
    """
    if not cb.isascii():
        return None, None
    if len(cb) > piece:
        # A very long movetext in pieces cut at whitespace: one bytes object per token is
        # held for a piece at a time (the SAN str objects are shared through the cache).
        sans: list[str] = []
        result = None
        i = 0
        while i < len(cb):
            j = i + piece
            if j < len(cb):
                j = max(cb.rfind(b" ", i, j), cb.rfind(b"\n", i, j), cb.rfind(b"\r", i, j), cb.rfind(b"\t", i, j))
                if j <= i:
                    return None, None  # no whitespace in a whole piece: not plain SAN
            part, result = fast_movetext(cb[i:j], piece)
            if part is None or (result is not None and cb[j:].strip()):
                return None, None
            sans += part
            i = j
        return sans, result
    if cython.compiled:
        return _scan_movetext(cb, len(cb))
    return _split_movetext(cb)


def _split_movetext(cb):
    """:func:`fast_movetext` of one piece with bytes methods and a regex (uncompiled)."""
    if b"." in cb:
        # "12.Nf3" -> "12. Nf3", "12...Nf6" -> "12. Nf6": few distinct tokens.
        cb = cb.replace(b"...", b".").replace(b".", b". ")
    toks = cb.split()
    result = None
    if toks:
        result = RESULTS.get(toks[len(toks) - 1])  # (no negative index: compiled unchecked)
        if result is not None:
            toks.pop()
    cache = _TOKEN_CACHE
    vals = list(map(cache.get, toks))
    if None in vals:
        full = len(cache) >= _TOKEN_CACHE_MAX
        for i, v in enumerate(vals):
            if v is None:
                t = toks[i]
                m = _FAST_TOKEN_B.fullmatch(t)
                if m is None:
                    return None, None
                v = vals[i] = "" if m.lastindex == 1 else t.decode("ascii")
                if not full:
                    cache[t] = v
    return list(filter(None, vals)), result


def _is_space(c):
    """Whitespace as ``bytes.split()`` sees it: space, \\t, \\n, \\v, \\f, \\r."""
    return c == 32 or 9 <= c <= 13


def _after_move_number(p, s, e):
    """The offset in ``p[s:e]`` (one whitespace-delimited token) after its move number
    indication (digits, then a run of periods, PGN standard §8.2.2.2), repeated as in
    ``12...`` or ``1.e4``; ``s`` when it has none, ``e`` when it is nothing else."""
    j = s
    k = s
    while k < e:
        c = p[k]
        if c == 46:  # '.'
            k += 1
            while k < e and p[k] == 46:
                k += 1
            j = k
        elif 48 <= c <= 57:
            k += 1
        else:
            break
    return j


def _packed_key(p, n):
    """The ``n`` (1..7) bytes at ``p`` packed into a 64-bit SAN key, first byte lowest
    (:func:`san_key`)."""
    key = 0
    k = n
    while k > 0:
        k -= 1
        key = (key << 8) | p[k]
    return key


def _is_san(p, n):
    """Whether the ``n`` bytes at ``p`` are one strict SAN move (:data:`SAN_FAST`)."""
    if n < 2:
        return False
    c = p[n - 1]
    if c == 43 or c == 35:  # '+' or '#'
        n -= 1
        if n < 2:
            return False
    c = p[0]
    if c == 78 or c == 66 or c == 82 or c == 81 or c == 75:  # N B R Q K
        # [a-h]?[1-8]?x? then the target square [a-h][1-8] ending the move.
        if n < 3 or not (97 <= p[n - 2] <= 104 and 49 <= p[n - 1] <= 56):
            return False
        i = 1
        if i < n - 2 and 97 <= p[i] <= 104:
            i += 1
        if i < n - 2 and 49 <= p[i] <= 56:
            i += 1
        if i < n - 2 and p[i] == 120:  # 'x'
            i += 1
        return i == n - 2
    if 97 <= c <= 104:  # a pawn move: [a-h](x[a-h])?[1-8](=[NBRQ])?
        i = 1
        if p[i] == 120:
            if n < 4 or not 97 <= p[2] <= 104:
                return False
            i = 3
        if i >= n or not 49 <= p[i] <= 56:
            return False
        i += 1
        if i < n:
            if i + 2 != n or p[i] != 61:  # '='
                return False
            c = p[i + 1]
            return c == 78 or c == 66 or c == 82 or c == 81
        return True
    if c == 79:  # O-O or O-O-O
        if n != 3 and n != 5:
            return False
        i = 1
        while i < n:
            if p[i] != 45 or p[i + 1] != 79:  # "-O"
                return False
            i += 2
        return True
    return False


def _scan_movetext(p, n):
    """Compiled :func:`fast_movetext` of one piece: ``n`` bytes at ``p``, one pass.

    A whitespace-separated token splits after each period ("..." counting as one): every
    part ending in a period must be digits and the period (a move number indication), the
    last part (if any) a SAN move or, ending the movetext, a termination marker.
    """
    sans = []
    table = _SAN_TABLE
    i = 0
    while True:
        while i < n and _is_space(p[i]):
            i += 1
        if i >= n:
            return sans, None
        s = i
        while i < n and not _is_space(p[i]):
            i += 1
        e = i
        j = _after_move_number(p, s, e)
        if j == e:
            continue
        # The rest p[j:e] holds no period: a SAN move or the termination marker.
        length = e - j
        if length <= 7 and _is_san(p + j, length):
            sans.append(table.get(p + j, length))
            continue
        # Anything else fails unless it is a marker with only whitespace after it.
        result = _marker_text(p, j, length)
        if result is None:
            return None, None
        while i < n and _is_space(p[i]):
            i += 1
        if i < n:
            return None, None
        return sans, result


# --- SAN keys: the moves of plain movetext as 64-bit numbers, no Python object per move ------
#
# A SAN move of the strict form (SAN_FAST) has at most 7 bytes, none of them zero: its *key* is
# those bytes as a little-endian number (the first byte lowest), so the key gives the text
# back. A game's moves are handed on as their keys, 8 bytes each (``bytes``, in the machine's
# byte order: little-endian on every platform the wheels are built for), which the per-ply
# loop reads in place. A token of a loose form, from the general tokenizer (long algebraic,
# drops, more than 7 bytes), has no key: it stands as ``LOOSE_KEY | its index`` in the list of
# the game's tokens.

LOOSE_KEY = 0xFF << 56


def san_key(san: str) -> int:
    """The key of the SAN text ``san`` (ASCII, 1 to 7 bytes, none zero), else 0."""
    data = san.encode("utf-8")
    if not 0 < len(data) <= 7 or not data.isascii() or 0 in data:
        return 0
    return int.from_bytes(data, "little")


def key_text(key: int) -> str:
    """The SAN text of ``key`` (not a loose token's)."""
    return key.to_bytes(8, "little").rstrip(b"\0").decode("ascii")


def san_keys(sans: list) -> bytes:
    """The keys of ``sans`` (str), 8 bytes each; a token without one is ``LOOSE_KEY | i``."""
    import array

    keys = array.array("Q", [san_key(s) or LOOSE_KEY | i for i, s in enumerate(sans)])
    return keys.tobytes()


def key_list(keys: bytes) -> list:
    """The keys in ``keys`` (8 bytes each) as ints."""
    import array

    out = array.array("Q")
    out.frombytes(keys)
    return out.tolist()


def fast_keys(cb: bytes, piece: int = FAST_PIECE, is_ascii: bool = False) -> tuple[bytes | None, str | None]:
    """:func:`fast_movetext` with the moves as their keys (8 bytes each), and no Python object
    per move (compiled): (keys, result), or (None, None) where the general tokenizer is
    needed. ``cb``: the movetext with comments blanked. Raises nothing.

    Compiled, a movetext of any length is read in one pass (``piece`` bounds the per-move
    objects of :func:`fast_movetext`, which this pass does not make); the result is the
    same. ``is_ascii``: ``cb`` is known to be ASCII (not checked again)."""
    if cython.compiled:
        if not (is_ascii or cb.isascii()):
            return None, None
        return _fast_keys_c(cb, len(cb))
    sans, result = fast_movetext(cb, piece)
    if sans is None:
        return None, None
    return san_keys(sans), result


def _fast_keys_c(p, n):
    """Compiled :func:`fast_keys` of one piece: :func:`_scan_movetext`'s pass, the moves
    written as keys."""
    cap = 256
    keys = cython.cast(cython.pointer(uint64_t), malloc(cap * 8))
    if keys == cython.NULL:
        raise MemoryError()
    count = 0
    result = None
    try:
        i = 0
        while True:
            while i < n and _is_space(p[i]):
                i += 1
            if i >= n:
                break
            s = i
            while i < n and not _is_space(p[i]):
                i += 1
            e = i
            j = _after_move_number(p, s, e)
            if j == e:
                continue
            length = e - j
            if length <= 7 and _is_san(p + j, length):
                if count == cap:
                    cap *= 2
                    grown = cython.cast(cython.pointer(uint64_t), realloc(keys, cap * 8))
                    if grown == cython.NULL:
                        raise MemoryError()
                    keys = grown
                keys[count] = _packed_key(p + j, e - j)
                count += 1
                continue
            # Anything else fails unless it is a marker with only whitespace after it.
            result = _marker_text(p, j, length)
            if result is None:
                return None, None
            while i < n and _is_space(p[i]):
                i += 1
            if i < n:
                return None, None
            break
        return PyBytes_FromStringAndSize(cython.cast(cython.p_char, keys), count * 8), result
    finally:
        free(keys)


# --- Annotations in comments: clocks, move times, evaluations ------------------------------
#
# Embedded commands (the PGN specification supplement's ``[%command value]`` inside a brace
# comment, as Lichess, ChessBase, Arena and Scid write them): ``[%clk H:MM:SS]`` the clock of
# the side that just moved, after its move; ``[%emt H:MM:SS]`` the time it spent on the move
# (both with an optional fraction of a second, ``.f`` to ``.fff``: milliseconds, further
# digits dropped); ``[%eval 0.17]`` an evaluation in pawns from White's point of view
# (optional sign, up to 7 integer digits, any decimals, rounded to the centipawn half away
# from zero; an optional ``,depth`` is ignored) and ``[%eval #-3]`` a signed count of moves
# to mate. A command belongs to the main-line move whose comments hold it (every brace
# comment between that move and the next); the first value of each kind there counts.
# Other commands (``[%cal]``, ``[%csl]``...) and rest-of-line comments are not read.
#
# A game's annotations are handed on as 4 signed 64-bit numbers per ply (clock ms, emt ms,
# eval cp, eval mate; NOTE_NA where there is none), in the machine's byte order, for the
# plies up to the last annotated one.

NOTE_NA = -(1 << 63)
_NA = NOTE_NA  # (compiled: a C constant)
NOTE_NAMES = ("clk", "emt", "eval")  # the commands read, by kind
NOTE_HOURS_DIGITS = 9   # more: not a clock (and no overflow)
NOTE_PAWN_DIGITS = 7    # more: not an evaluation (centipawns fit 32 bits)
_NOTE_HOURS_DIGITS = NOTE_HOURS_DIGITS  # (compiled: C constants)
_NOTE_PAWN_DIGITS = NOTE_PAWN_DIGITS


# The constants of _fast_keys_notes_c's fixed reading of a Lichess comment: 8 bytes as one
# number, the first byte lowest (_load8_le), and per-byte masks for "H:MM:SS]" less '0' per
# byte (':' 0x0a, ']' 0x6d; a digit 0-9, so adding 0x76 sets no high bit, adding 0x7a none for
# 0-5, and no byte carries into the next). (Compiled: C variables, not constants: an x86
# instruction takes one as an operand, where it takes no 64-bit constant.)
_CLK_HEAD = int.from_bytes(b"{ [%clk ", "little")
_EVAL_HEAD = int.from_bytes(b"{ [%eval", "little")
_CLK_AFTER_EVAL = int.from_bytes(b"] [%clk ", "little")
_CLK_ZEROS = int.from_bytes(b"00000000", "little")
_CLK_FIXED_MASK = int.from_bytes(b"\x00\xff\x00\x00\xff\x00\x00\xff", "little")
_CLK_FIXED = int.from_bytes(b"\x00\x0a\x00\x00\x0a\x00\x00\x6d", "little")
_CLK_ADD_10 = int.from_bytes(b"\x76" * 8, "little")
_CLK_DIGIT_BITS = int.from_bytes(b"\x80\x00\x80\x80\x00\x80\x80\x00", "little")
_CLK_ADD_6 = int.from_bytes(b"\x7a" * 8, "little")
_CLK_TENS_BITS = int.from_bytes(b"\x00\x00\x80\x00\x00\x80\x00\x00", "little")


def _load8(p, i):
    """The 8 bytes at ``p[i:i + 8]`` as one number in the machine's byte order."""
    if cython.compiled:
        memcpy(cython.address(x), p + i, 8)
        return x
    return int.from_bytes(p[i:i + 8], sys.byteorder)


if not cython.compiled:  # (compiled: a C function, movetext.pxd)
    def _load8_le(p, i):
        """The 8 bytes at ``p[i:i + 8]`` as one number, the first byte lowest."""
        return int.from_bytes(p[i:i + 8], "little")


class _NoteReader:
    """Reads the annotations of one game's comments, ply by ply (:func:`read_notes`, and the
    general tokenizer comment by comment through :meth:`read`), then :meth:`finish`."""

    def __init__(self):
        self.ply = 0        # the ply whose comments are being read (0: none yet)
        self.clock = self.emt = self.cp = self.mate = _NA
        self.count = 0      # plies stored
        self.cap = 0
        self.problems = []  # (offset, ply, command text) of each malformed command
        self.comments = 0   # brace comments passed by _fast_keys_notes_c
        self.tail = False   # _fast_keys_notes_c: a brace comment after the termination marker
        self.borrowed = False  # buf is this thread's (_NOTE_BUF, compiled): not freed here
        self.keys = self.result = self.notes = None  # game_line_reader's reading (compiled)
        if not cython.compiled:
            self.buf = []

    def __dealloc__(self):
        if cython.compiled and not self.borrowed:
            free(self.buf)

    def read(self, p, s, e, ply):
        """Read the commands in the comment text ``p[s:e]`` (its braces excluded), standing
        after ply ``ply`` (1-based)."""
        if ply != self.ply:
            self._flush()
            self.ply = ply
        i = s
        while i < e:
            while i < e and p[i] != 91:  # '[' (a byte loop: it is usually a byte or two away)
                i += 1
            i += 1
            if i >= e or p[i] != 37:  # '%'
                continue
            if (i + 12 < e and p[i + 12] == 93 and p[i + 1] == 99 and p[i + 2] == 108 and p[i + 3] == 107
                    and p[i + 4] == 32 and p[i + 6] == 58 and p[i + 9] == 58 and 48 <= p[i + 5] <= 57
                    and 48 <= p[i + 7] <= 53 and 48 <= p[i + 8] <= 57 and 48 <= p[i + 10] <= 53
                    and 48 <= p[i + 11] <= 57):
                # "[%clk H:MM:SS]", as Lichess writes every clock: what the general reading
                # below gives, without its data-dependent loops.
                if self.clock == _NA:
                    self.clock = ((((p[i + 5] - 48) * 60 + (p[i + 7] - 48) * 10 + (p[i + 8] - 48)) * 60
                                   + (p[i + 10] - 48) * 10 + (p[i + 11] - 48)) * 1000)
                i += 13
                continue
            start = i - 1
            j = i + 1
            while j < e and (97 <= p[j] <= 122 or 65 <= p[j] <= 90):
                j += 1
            kind = -1
            if j - i == 4 and p[i + 1] == 99 and p[i + 2] == 108 and p[i + 3] == 107:  # clk
                kind = 0
            elif j - i == 4 and p[i + 1] == 101 and p[i + 2] == 109 and p[i + 3] == 116:  # emt
                kind = 1
            elif j - i == 5 and p[i + 1] == 101 and p[i + 2] == 118 and p[i + 3] == 97 and p[i + 4] == 108:  # eval
                kind = 2
            close = j
            while close < e and p[close] != 93:  # ']' (a value is short: no memchr call)
                close += 1
            i = close + 1
            if kind < 0 or (j < e and p[j] != 93 and not _is_space(p[j])):
                continue  # another command
            vs = j
            while vs < close and _is_space(p[vs]):
                vs += 1
            ve = close
            while ve > vs and _is_space(p[ve - 1]):
                ve -= 1
            ok = close < e
            if ok and kind < 2:
                ok = self._time(p, vs, ve, kind)
            elif ok:
                ok = self._eval(p, vs, ve)
            if not ok:
                self.problems.append((start, ply, p[start:close + 1 if close < e else e]))

    def add_fixed(self, ply, clock, cp, mate):
        """Store the values :func:`_fast_keys_notes_c` read from a Lichess comment (clock ms,
        eval cp, eval mate; NA for the eval it has not) after ply ``ply``, as :meth:`read` stores
        them. Compiled only."""
        if ply != self.ply:  # the ply's first comment (as usual)
            last = self.ply
            n = 4 * last
            if cython.compiled and self.clock != _NA and self.count == last - 1 and n <= self.cap:
                # _flush's usual case, written out (the plies before are stored; there is room).
                self.buf[n - 4] = self.clock
                self.buf[n - 3] = self.emt
                self.buf[n - 2] = self.cp
                self.buf[n - 1] = self.mate
                self.count = last
            else:
                self._flush()
            self.ply = ply
            self.clock = clock
            self.emt = _NA
            self.cp = cp
            self.mate = mate
            return 0
        if self.cp == _NA and self.mate == _NA:
            self.cp = cp
            self.mate = mate
        if self.clock == _NA:
            self.clock = clock
        return 0

    def _time(self, p, i, e, kind):
        """``H:MM:SS(.f)`` in ``p[i:e]`` as milliseconds into the clock (kind 0) or emt (1),
        unless one is already set; False when malformed."""
        h = 0
        k = i
        while k < e and 48 <= p[k] <= 57:
            h = h * 10 + (p[k] - 48)
            k += 1
        if k == i or k - i > _NOTE_HOURS_DIGITS or e - k < 6 or p[k] != 58 or p[k + 3] != 58:  # ':'
            return False
        m1, m2, s1, s2 = p[k + 1] - 48, p[k + 2] - 48, p[k + 4] - 48, p[k + 5] - 48
        if not (0 <= m1 <= 5 and 0 <= m2 <= 9 and 0 <= s1 <= 5 and 0 <= s2 <= 9):
            return False
        ms = ((h * 60 + m1 * 10 + m2) * 60 + s1 * 10 + s2) * 1000
        k += 6
        if k < e:
            if p[k] != 46 or k + 1 == e:  # '.' and at least one digit
                return False
            scale = 100
            k += 1
            while k < e:
                if not 48 <= p[k] <= 57:
                    return False
                ms += (p[k] - 48) * scale
                scale //= 10
                k += 1
        if kind == 0:
            if self.clock == _NA:
                self.clock = ms
        elif self.emt == _NA:
            self.emt = ms
        return True

    def _eval(self, p, i, e):
        """``[+-]pawns`` or ``#[+-]moves`` (optionally ``,depth``) in ``p[i:e]`` into the eval,
        unless one is already set; False when malformed."""
        mate = i < e and p[i] == 35  # '#'
        if mate:
            i += 1
        negative = False
        if i < e and (p[i] == 45 or p[i] == 43):  # '-' '+'
            negative = p[i] == 45
            i += 1
        value = 0
        k = i
        while k < e and 48 <= p[k] <= 57:
            value = value * 10 + (p[k] - 48)
            k += 1
        digits = k - i
        if digits > _NOTE_PAWN_DIGITS:
            return False
        if mate:
            if digits == 0:
                return False
        else:
            value *= 100
            if k < e and p[k] == 46:  # '.'
                k += 1
                d = 0  # decimals read: two make the centipawns, the third rounds (half away from zero)
                while k < e and 48 <= p[k] <= 57:
                    if d < 2:
                        value += (p[k] - 48) * (10 if d == 0 else 1)
                    elif d == 2 and p[k] >= 53:
                        value += 1
                    d += 1
                    k += 1
                if digits == 0 and d == 0:
                    return False
            elif digits == 0:
                return False
        if k < e:  # only a depth may follow: ",digits"
            if p[k] != 44 or k + 1 == e:  # ','
                return False
            k += 1
            while k < e:
                if not 48 <= p[k] <= 57:
                    return False
                k += 1
        if self.cp == _NA and self.mate == _NA:
            if mate:
                self.mate = -value if negative else value
            else:
                self.cp = -value if negative else value
        return True

    def _flush(self):
        """Store the values read for ``self.ply`` (if any), the plies before it NA."""
        if self.clock == _NA and self.emt == _NA and self.cp == _NA and self.mate == _NA:
            return 0
        n = 4 * self.ply
        if cython.compiled:
            if n > self.cap:
                self._grow(n)
            k = 4 * self.count
            while k < n - 4:
                self.buf[k] = _NA
                k += 1
            self.buf[n - 4] = self.clock
            self.buf[n - 3] = self.emt
            self.buf[n - 2] = self.cp
            self.buf[n - 1] = self.mate
        else:
            self.buf.extend([_NA] * (n - 4 - len(self.buf)))
            self.buf.extend((self.clock, self.emt, self.cp, self.mate))
        self.count = self.ply
        self.clock = self.emt = self.cp = self.mate = _NA

    def _grow(self, n):
        """Make room for ``n`` values in ``buf`` (compiled); kept apart from :meth:`_flush`,
        which runs once a ply and is inlined."""
        cap = max(n, 2 * self.cap, 4 * 64)
        grown = cython.cast(cython.pointer(int64_t), realloc(self.buf, cap * 8))
        if grown == cython.NULL:
            raise MemoryError()
        self.buf = grown
        if self.borrowed:
            global _NOTE_BUF, _NOTE_CAP
            _NOTE_BUF = grown
            _NOTE_CAP = cap
        self.cap = cap

    def take_problems(self):
        """The malformed commands read since the last call (see :meth:`finish`)."""
        problems = self.problems
        self.problems = []
        return problems

    def finish(self):
        """(notes, problems): the values per ply (bytes, 32 per ply up to the last annotated
        one; None when none is), and the malformed commands (offset, ply, text)."""
        return self.take_notes(), self.problems

    def take_notes(self):
        """:meth:`finish`'s notes alone."""
        self._flush()
        if self.count == 0:
            return None
        if cython.compiled:
            return PyBytes_FromStringAndSize(cython.cast(cython.p_char, self.buf), self.count * 32)
        import array

        return array.array("q", self.buf).tobytes()


def read_notes(mt: bytes) -> tuple[bytes | None, list, int]:
    """The annotations of plain movetext ``mt`` (comments not blanked; what
    :func:`fast_keys` read as moves): (notes, problems, plies), ``notes`` and ``problems`` as
    :meth:`_NoteReader.finish` gives them, ``plies`` the moves counted (to check against the
    keys). Move number indications, rest-of-line comments and escape lines (a '%' starting
    a line) are passed over; the termination marker ends the reading. Raises nothing."""
    reader = _NoteReader()
    plies = _scan_notes(reader, mt, len(mt))
    notes, problems = reader.finish()
    return notes, problems, plies


def note_values(notes: bytes | None) -> list:
    """``notes`` (see :func:`read_notes`) as a flat list of ints (4 per ply)."""
    import array

    out = array.array("q")
    if notes:
        out.frombytes(notes)
    return out.tolist()


def comment_notes(reader, comment: bytes, ply: int) -> None:
    """Read one brace comment's commands (``comment``: its text without the braces) into
    ``reader`` (a :class:`_NoteReader`), standing after ply ``ply``."""
    reader.read(comment, 0, len(comment), ply)


def new_note_reader():
    """A fresh :class:`_NoteReader`."""
    return _NoteReader()


def _scan_notes(reader, p, n):
    """:func:`read_notes`' pass over the ``n`` bytes at ``p``: the plies counted."""
    ply = 0
    i = 0
    while i < n:
        c = p[i]
        if c == 123:  # '{'
            e = _find(p, i + 1, n, 125)  # '}'
            if ply:
                reader.read(p, i + 1, e, ply)
            i = e + 1
            continue
        if c == 59 or (c == 37 and (i == 0 or p[i - 1] == 10 or p[i - 1] == 13)):  # ';' or an escape line
            while i < n and p[i] != 10 and p[i] != 13:
                i += 1
            continue
        if _is_space(c):
            i += 1
            continue
        s = i
        while i < n and not _is_space(p[i]) and p[i] != 123 and p[i] != 59:
            i += 1
        j = _after_move_number(p, s, i)
        if j == i:
            continue
        if _is_marker(p, j, i - j):
            break
        ply += 1
    return ply


def fast_keys_notes(mt: bytes, is_ascii: bool = False):
    """:func:`fast_keys` and :func:`read_notes` in one pass over plain movetext ``mt``
    (comments not blanked): (keys, result, notes, problems), ``keys`` and ``result`` as
    :func:`fast_keys` gives them for ``mt`` with its comments blanked ((None, None, None, [])
    where the general tokenizer is needed), ``notes`` and ``problems`` as :func:`read_notes`
    gives them. None where this pass does not apply: uncompiled, non-ASCII text (``is_ascii``:
    ``mt`` is known to be ASCII), a rest-of-line comment, an escape line or a '{' left open;
    the caller then reads the moves and the annotations in two passes. Raises nothing."""
    if not cython.compiled or not (is_ascii or mt.isascii()):
        return None
    reader = _borrowing_reader()
    got = _fast_keys_notes_c(mt, len(mt), reader)
    if got < 0:
        return None
    if got == 0:
        return None, None, None, []
    notes, problems = reader.finish()
    return reader.keys, reader.result, notes, problems


def game_line_keys_notes(line: bytes):
    """:func:`fast_keys_notes` of a movetext line that holds a whole game's plain movetext:
    (keys, result, notes, problems, comments), ``comments`` the brace comments in ``line``;
    None unless the line ends with the termination marker and whitespace (no comment after
    the marker) and is ASCII (the pass checks it: a byte above 0x7F makes it return None, or
    no keys), and uncompiled. Such a line ends its game, and its comments need no
    blanking to find the marker. Raises nothing."""
    reader = game_line_reader(line)
    if reader is None:
        return None
    return reader.keys, reader.result, reader.notes, reader.problems, reader.comments


def game_line_reader(line):
    """:func:`game_line_keys_notes`' reading, as the reader that holds it (``keys``,
    ``result``, ``notes``, ``problems``, ``comments``), finished: no tuple is made (once a
    game). None where :func:`game_line_keys_notes` gives None."""
    if not cython.compiled:
        return None
    reader = _borrowing_reader()
    if _fast_keys_notes_c(line, len(line), reader) <= 0 or reader.result is None or reader.tail:
        return None
    reader.notes = reader.take_notes()
    return reader


# The values buffer of the readers of fast_keys_notes and game_line_keys_notes, kept from game
# to game (grown, never freed; finish() copies what it holds): no allocation per game.
_NOTE_CAP = 0  # _NOTE_BUF's size in values (compiled: both C variables of each thread's own, movetext.pxd)


def _borrowing_reader():
    """A fresh :class:`_NoteReader` with this thread's values buffer (to be read and finished
    before any other reading on this thread). Compiled only: made as ``__init__`` makes one,
    with no call through the type (once a game)."""
    reader = _NoteReader.__new__(_NoteReader)
    reader.clock = reader.emt = reader.cp = reader.mate = _NA
    reader.problems = []
    reader.buf = _NOTE_BUF
    reader.cap = _NOTE_CAP
    reader.borrowed = True
    return reader


# 1 for a byte that continues a movetext token: not whitespace (_is_space), '{', ';' or
# above 0x7F (which ends _fast_keys_notes_c's pass).
_TOKEN_BYTES = bytes(0 if _is_space(c) or c == 123 or c == 59 or c > 127 else 1 for c in range(256))


# The SAN moves seen by _fast_keys_notes_c, a slot each (compiled: a C array, movetext.pxd): a
# token whose key and length fill its slot is one, with no check of its bytes. Slot h of a key
# holds its key | length << 56 (never 0: the slots start empty), the last seen of those of h.
# (Written with the GIL held; threads share it, any value there being a SAN move's.)
if not cython.compiled:  # (compiled: a C constant, movetext.pxd)
    _SAN_SEEN_BITS = 12
_KEY_CAP = 0  # _KEY_BUF's size in keys (compiled: both C variables of each thread's own, movetext.pxd)


def _known_san(p, length, key):
    """Whether the ``length`` bytes at ``p``, packed into ``key`` (:func:`_packed_key`), are a
    SAN move: a token seen to be one before is one (its key and length fill its slot of
    ``_SAN_SEEN``), else :func:`_is_san` tells, and a move takes the slot."""
    seen = key | (length << 56)
    h = (key * _GOLDEN) >> (64 - _SAN_SEEN_BITS)
    if _SAN_SEEN[h] == seen or _is_san(p, length):
        _SAN_SEEN[h] = seen
        return True
    return False


def _grow_keys():
    """This thread's keys buffer (``_KEY_BUF``) made twice as large, its keys kept: the new
    buffer. Raises MemoryError when there is no memory for it."""
    global _KEY_BUF, _KEY_CAP
    grown = cython.cast(cython.pointer(uint64_t), realloc(_KEY_BUF, _KEY_CAP * 2 * 8))
    if grown == cython.NULL:
        raise MemoryError()
    _KEY_BUF = grown
    _KEY_CAP *= 2
    return grown


def _fast_keys_notes_c(p, n, reader):
    """:func:`fast_keys_notes`' pass: :func:`_fast_keys_c` over the text with its brace
    comments, which separate tokens as the blank that replaces them does, and whose commands
    are read into ``reader`` (after the first move, up to the termination marker). Returns -1
    on a ';' or escape line outside a comment, a '{' with no '}', or a byte above 0x7F (in a
    token or comment; after the termination marker it gives no keys): text it reads to the
    end is ASCII. Returns 0 for a token that is neither a SAN move nor a marker
    followed only by whitespace and comments, and 1 with the keys and the result in
    ``reader.keys`` and ``reader.result`` (no tuple made). Compiled only."""
    # The keys go to this thread's buffer, kept from game to game (grown, never freed): no
    # allocation per game, and no try/finally (a smaller function: the compiler inlines the helpers).
    global _KEY_BUF, _KEY_CAP
    if _KEY_CAP == 0:
        _KEY_BUF = cython.cast(cython.pointer(uint64_t), malloc(256 * 8))
        if _KEY_BUF == cython.NULL:
            raise MemoryError()
        _KEY_CAP = 256
    cap = _KEY_CAP
    keys = _KEY_BUF
    count = 0
    result = None
    cls = _TOKEN_BYTES
    comments = 0  # brace comments passed
    i = 0
    while True:
        # Whitespace and brace comments. (p[n] is 0, as a bytes object's is: no loop here
        # runs past the end.)
        while True:
            c = p[i]
            if c == 32:
                i += 1
            elif c == 123:  # '{'
                # "{ [%clk H:MM:SS] }" or "{ [%eval E] [%clk H:MM:SS] }" (E: [-]pawns with one
                # or two decimals, or #[-]moves; up to 7 digits), as Lichess writes every
                # annotated ply, is read here, its values as read() reads them, fixed text
                # compared 8 bytes at a time: e its '}', else -1. (Here in the loop: a call
                # would cost about what the reading does.)
                e = -1
                while count and i + 17 < n:  # (once: a break leaves e at -1)
                    cp = mate = _NA
                    head = _load8_le(p, i)
                    k = i + 8  # the clock's "H:MM:SS] }"
                    if head != _CLK_HEAD:
                        if head != _EVAL_HEAD or p[k] != 32:
                            break
                        k += 1
                        is_mate = p[k] == 35  # '#'
                        if is_mate:
                            k += 1
                        negative = p[k] == 45  # '-'
                        if negative:
                            k += 1
                        if not 48 <= p[k] <= 57:
                            break
                        d = k
                        value = p[k] - 48
                        k += 1
                        while 48 <= p[k] <= 57:
                            value = value * 10 + (p[k] - 48)
                            k += 1
                        if k - d > _NOTE_PAWN_DIGITS or k + 20 >= n:
                            break
                        if is_mate:
                            mate = -value if negative else value
                        else:
                            if p[k] != 46 or not 48 <= p[k + 1] <= 57:  # '.' and a digit
                                break
                            value = value * 100 + (p[k + 1] - 48) * 10
                            k += 2
                            if 48 <= p[k] <= 57:
                                value += p[k] - 48
                                k += 1
                            cp = -value if negative else value
                        if _load8_le(p, k) != _CLK_AFTER_EVAL:
                            break
                        k += 8
                    # "H:MM:SS]" as 8 bytes less '0' each: the colons and ']' in place, digits
                    # 0-9, tens 0-5.
                    clock = _load8_le(p, k) ^ _CLK_ZEROS
                    if ((((clock & _CLK_FIXED_MASK) ^ _CLK_FIXED) | (((clock + _CLK_ADD_10) | clock) & _CLK_DIGIT_BITS)
                            | ((clock + _CLK_ADD_6) & _CLK_TENS_BITS)) or p[k + 8] != 32 or p[k + 9] != 125):
                        break
                    # Each byte times 10 plus the next: the minutes in byte 2, the seconds in
                    # byte 5 (no byte over 255 up to byte 6: no carry).
                    pairs = clock * 10 + (clock >> 8)
                    ms = ((clock & 0xFF) * 3600000 + ((pairs >> 16) & 0xFF) * 60000 + ((pairs >> 40) & 0xFF) * 1000)
                    reader.add_fixed(count, ms, cp, mate)
                    e = k + 9
                    break
                if e < 0:
                    e = _find(p, i + 1, n, 125)  # '}'
                    if e == n or not _is_ascii(p, i + 1, e):
                        return -1
                    if count:
                        reader.read(p, i + 1, e, count)
                comments += 1
                i = e + 1
                if p[i] == 32 and 48 <= p[i + 1] <= 57:  # " 12." next, as Lichess writes: to the token
                    i += 1
                    break
            elif 9 <= c <= 13:
                i += 1
            else:
                break
        if i >= n:
            break
        c = p[i]
        s = i
        if 48 <= c <= 57:
            # A move number indication then a space ("12. " or "12... ", as most are):
            # passed over as the token it is, and a move right after it read on.
            k = i + 1
            while 48 <= p[k] <= 57:
                k += 1
            if p[k] == 46:
                k += 1
                while p[k] == 46:
                    k += 1
                if p[k] == 32:
                    i = k + 1
                    c = p[i]
                    if not 65 <= c <= 122:  # ('A' to 'z': a token the loop would read next)
                        continue
                    s = i
        elif c == 59 or (c == 37 and (i == 0 or p[i - 1] == 10 or p[i - 1] == 13)):  # ';' or an escape line
            return -1
        if c > 57 and s + 8 <= n:
            # A move then whitespace, as most are: the first byte below '!' of the 8 bytes from
            # s, found in them as one number (first byte lowest). Where it is whitespace, the
            # token ends there unless a byte before it ends it (then the token is no SAN move,
            # and is read below byte by byte).
            word = _load8_le(p, s)
            spaces = (word - _BANGS) & ~word & _HIGH_BITS
            if spaces:
                e = s + (lsb(spaces) >> 3)
                if _is_space(p[e]):
                    length = e - s
                    key = word & ((spaces ^ (spaces - 1)) >> 8)  # (its bytes: those below that high bit's)
                    if _known_san(p + s, length, key):
                        if count == cap:
                            keys = _grow_keys()
                            cap = _KEY_CAP
                        keys[count] = key
                        count += 1
                        i = e + 1  # (past the whitespace)
                        continue
        while i < n and cls[p[i]]:  # to whitespace, a '{', a ';' or a non-ASCII byte
            i += 1
        if i < n and (p[i] == 59 or p[i] > 127):
            return -1
        e = i
        # (A token starting with a letter has no move number indication.)
        j = _after_move_number(p, s, e) if c <= 57 else s
        if j == e:
            continue
        length = e - j
        if length <= 7:
            key = _packed_key(p + j, length)
            if _known_san(p + j, length, key):
                if count == cap:
                    keys = _grow_keys()
                    cap = _KEY_CAP
                keys[count] = key
                count += 1
                continue
        # Anything else fails unless it is a marker with only whitespace (or comments) after it.
        result = _marker_text(p, j, length)
        if result is None:
            return 0
        while i < n:
            c = p[i]
            if _is_space(c):
                i += 1
            elif c == 123:  # '{'
                e = _find(p, i + 1, n, 125)
                if e == n or not _is_ascii(p, i + 1, e):
                    return -1
                comments += 1
                reader.tail = True
                i = e + 1
            elif c == 59 or (c == 37 and (p[i - 1] == 10 or p[i - 1] == 13)):
                return -1
            else:
                return 0
        break
    reader.comments += comments
    reader.keys = PyBytes_FromStringAndSize(cython.cast(cython.p_char, keys), count * 8)
    reader.result = result
    return 1


_HIGH_BITS = int.from_bytes(b"\x80" * 8, sys.byteorder)
_BANGS = int.from_bytes(b"!" * 8, sys.byteorder)


def _is_ascii(p, i, e):
    """Whether ``p[i:e]`` is ASCII (8 bytes at a time)."""
    while i + 8 <= e:
        if _load8(p, i) & _HIGH_BITS:
            return False
        i += 8
    while i < e:
        if p[i] > 127:
            return False
        i += 1
    return True


def _find(p, i, e, c):
    """The offset of the first byte ``c`` in ``p[i:e]``, else ``e``."""
    if cython.compiled:
        q = cython.cast(cbytes, memchr(p + i, c, e - i))
        return e if q == cython.NULL else q - p
    k = p.find(c, i, e)
    return e if k < 0 else k


def _marker_text(p, j, length):
    """The termination marker ``p[j:j + length]`` as its text (§8.2.6), or None when it is not
    one (a token with a period, say: no marker holds one)."""
    if not _is_marker(p, j, length):
        return None
    if length == 1:
        return "*"
    if length == 7:
        return "1/2-1/2"
    return "1-0" if p[j] == 49 else "0-1"


def _is_marker(p, j, length):
    """Whether ``p[j:j + length]`` is a termination marker (§8.2.6)."""
    if length == 1:
        return p[j] == 42  # '*'
    if length == 3:
        return p[j + 1] == 45 and ((p[j] == 49 and p[j + 2] == 48) or (p[j] == 48 and p[j + 2] == 49))
    return (length == 7 and p[j] == 49 and p[j + 1] == 47 and p[j + 2] == 50 and p[j + 3] == 45
            and p[j + 4] == 49 and p[j + 5] == 47 and p[j + 6] == 50)
