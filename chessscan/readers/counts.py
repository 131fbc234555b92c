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
