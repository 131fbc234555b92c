"""Counts over raw PGN text that let the ``--jobs`` main process cut its input into chunks.

The main process counts, for every byte it reads, the game termination markers, the line
ends and the ``[Event "`` lines (see :mod:`chessscan.engines.parallel`). As ``bytes.count``
calls that is nine passes over the text, a fifth of the main process's time; compiled
(Cython pure Python mode, types in ``counts.pxd``), each count is one C pass. Uncompiled,
the ``bytes.count`` expressions are the definition and the code.

Markers: PGN standard §8.2.6. Line ends: as ``bytes.splitlines`` counts them (``\\n``,
``\\r\\n``, a lone ``\\r``).
"""

from __future__ import annotations

try:
    import cython
except ImportError:  # uncompiled, without Cython installed
    from chessscan.core import _cython_shim as cython

if cython.compiled:
    from cython.cimports.libc.string import memchr


def termination_marks(data: bytes) -> int:
    """``1-0``, ``0-1``, ``1/2-1/2`` and ``*`` in ``data``, each counted as ``bytes.count``
    does (non-overlapping, from the left), Result tags included."""
    if cython.compiled:
        return _marks_c(data, len(data))
    return data.count(b"1-0") + data.count(b"0-1") + data.count(b"1/2-1/2") + data.count(b"*")


def line_ends(data: bytes) -> int:
    """Line ends in ``data`` (``\\n``, ``\\r\\n``, a lone ``\\r``)."""
    if cython.compiled:
        return _line_ends_c(data, len(data))
    return data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")


def event_lines(data: bytes) -> int:
    """Lines of ``data`` that start with ``[Event "`` (the first line too, after a UTF-8
    byte order mark if any)."""
    first = data.startswith(b'[Event "') or data.startswith(b'\xef\xbb\xbf[Event "')
    if cython.compiled:
        return first + _event_lines_c(data, len(data))
    return first + data.count(b'\n[Event "') + data.count(b'\r[Event "')


def text_counts(data, lo: int = 0, hi: int = -1) -> tuple[int, int]:
    """``(line ends, [Event " lines)`` in ``data[lo:hi]`` (``hi`` -1: to the end) as
    :func:`line_ends` and :func:`event_lines` of that slice count them, in one pass and
    without copying: ``data`` is any buffer (``bytes``, a ``memoryview`` of shared memory).
    What the ``--jobs`` main process counts of every byte it cuts into chunks."""
    if hi < 0:
        hi = len(data)
    if cython.compiled:
        if hi <= lo:
            return 0, 0
        return _text_counts_c(data, lo, hi)
    part = bytes(data[lo:hi])
    return line_ends(part), event_lines(part)


def _text_counts_c(data, lo, hi):
    p = cython.cast(cython.p_uchar, cython.address(data[lo]))
    n = hi - lo
    lines = 0
    events = 0
    if n >= 8 and _event_at(p, n, 0):
        events = 1
    elif n >= 11 and p[0] == 0xEF and p[1] == 0xBB and p[2] == 0xBF and _event_at(p, n, 3):
        events = 1  # after a UTF-8 byte order mark
    i = 0
    while i < n:  # '\n': a line end, and maybe an [Event " line after it
        q = cython.cast(cython.p_uchar, memchr(p + i, 10, n - i))
        if q == cython.NULL:
            break
        i = q - p
        lines += 1
        if i + 8 < n and _event_at(p, n, i + 1):
            events += 1
        i += 1
    i = 0
    while i < n:  # '\r': a line end unless a '\n' (counted) follows it
        q = cython.cast(cython.p_uchar, memchr(p + i, 13, n - i))
        if q == cython.NULL:
            break
        i = q - p
        if i + 1 >= n or p[i + 1] != 10:
            lines += 1
        if i + 8 < n and _event_at(p, n, i + 1):
            events += 1
        i += 1
    return lines, events


def _event_at(p, n, i):
    """Whether the 8 bytes at ``i`` (within ``n``) are ``[Event "``."""
    return (i + 8 <= n and p[i] == 91 and p[i + 1] == 69 and p[i + 2] == 118 and p[i + 3] == 101
            and p[i + 4] == 110 and p[i + 5] == 116 and p[i + 6] == 32 and p[i + 7] == 34)


def _count_byte(p, n, c):
    """Occurrences of byte ``c`` in the ``n`` bytes at ``p`` (memchr hops: SIMD in libc)."""
    count = 0
    i = 0
    while i < n:
        q = cython.cast(cython.p_uchar, memchr(p + i, c, n - i))
        if q == cython.NULL:
            break
        count += 1
        i = (q - p) + 1
    return count


def _marks_c(p, n):
    # Each marker but '*' has a '-' in it at a fixed place: hop from '-' to '-'.
    count = _count_byte(p, n, 42)  # '*'
    half_end = 0  # where the last 1/2-1/2 counted ends: bytes.count does not overlap matches
    i = 0
    while i < n:
        q = cython.cast(cython.p_uchar, memchr(p + i, 45, n - i))
        if q == cython.NULL:
            break
        i = q - p
        if 1 <= i < n - 1:
            before = p[i - 1]
            after = p[i + 1]
            if (before == 49 and after == 48) or (before == 48 and after == 49):  # 1-0, 0-1
                count += 1
            elif (before == 50 and 3 <= i < n - 3 and i - 3 >= half_end and p[i - 3] == 49
                  and p[i - 2] == 47 and after == 49 and p[i + 2] == 47 and p[i + 3] == 50):  # 1/2-1/2
                count += 1
                half_end = i + 4
        i += 1
    return count


def _line_ends_c(p, n):
    count = _count_byte(p, n, 10)  # '\n'
    i = 0
    while i < n:  # a '\r' is one more line end unless a '\n' (counted) follows it
        q = cython.cast(cython.p_uchar, memchr(p + i, 13, n - i))
        if q == cython.NULL:
            break
        i = q - p
        if i + 1 >= n or p[i + 1] != 10:
            count += 1
        i += 1
    return count


def _event_lines_c(p, n):
    count = 0
    for c in (10, 13):  # '\n[Event "', then '\r[Event "'
        i = 0
        while i + 8 < n:
            q = cython.cast(cython.p_uchar, memchr(p + i, c, n - 8 - i))
            if q == cython.NULL:
                break
            i = q - p
            if (p[i + 1] == 91 and p[i + 2] == 69 and p[i + 3] == 118 and p[i + 4] == 101
                    and p[i + 5] == 110 and p[i + 6] == 116 and p[i + 7] == 32 and p[i + 8] == 34):
                count += 1
            i += 1
    return count
