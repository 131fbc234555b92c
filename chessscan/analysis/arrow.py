"""Arrow arrays built from their buffers, not through ``pyarrow.array``.

The first ``pyarrow.array`` call in a process imports pandas (pyarrow checks whether its
input is a pandas object), which costs ~0.7 s of CPU: a third of analyzing 10,000 games
with ``--positions none``. chessscan never needs pandas to write its tables, so the column
buffers become arrays here, from NumPy arrays (one copy at most) and from Python lists of
``str`` / ``int`` / ``float`` / ``bool`` / ``None``, via ``pyarrow.Array.from_buffers`` (Arrow columnar
format: validity bitmap, offsets, data).

Anything else — a value of another Python type, an int that does not fit, a string over
2 GiB in one batch — goes to ``pyarrow.array``, which converts it or raises the error the
caller reports; so the result is the array ``pyarrow.array(values, type)`` gives.

Compiled, a list is read in C, in one pass (two for text: sizes, then bytes) that checks each
value's type and writes it to the array's buffers; uncompiled, the same arrays come from NumPy
passes over the list (a few per column, each in C, but each with a Python object per value).
"""

from __future__ import annotations

try:
    import cython
except ImportError:  # uncompiled, without Cython installed
    from chessscan.core import _cython_shim as cython

import builtins
import operator
from functools import partial

import numpy as np
import pyarrow as pa

if cython.compiled:
    from cython.cimports.cpython.unicode import PyUnicode_1BYTE_DATA, PyUnicode_AsUTF8AndSize, PyUnicode_GET_LENGTH
    from cython.cimports.libc.string import memcpy

# Arrow integer types and their NumPy dtypes (the schema's columns use these).
_INTEGERS = {pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
             pa.uint8(): np.uint8, pa.uint16(): np.uint16, pa.uint32(): np.uint32,
             pa.uint64(): np.uint64}
_FLOAT64 = pa.float64()
_MAX_OFFSET = 2**31 - 1   # a string array's offsets are int32
_STRING = pa.string()
_BOOL = pa.bool_()
_INT32 = pa.int32()
_NONE = type(None)
_NOT_NONE = partial(operator.is_not, None)   # v -> v is not None, in C
_IS_TRUE = partial(operator.is_, True)        # v -> v is True, in C
# The integer types read in C, and their values' range (uint64's does not fit a C long long).
_RANGES = {t: (int(np.iinfo(d).min), int(np.iinfo(d).max)) for t, d in _INTEGERS.items() if d is not np.uint64}


def _buffer(values: np.ndarray) -> pa.Buffer:
    return pa.py_buffer(np.ascontiguousarray(values))


def _bits(mask: np.ndarray) -> pa.Buffer:
    """A bitmap in Arrow's bit order (bit ``i % 8`` of byte ``i // 8``) of a bool array."""
    return pa.py_buffer(np.packbits(mask, bitorder="little"))


def _types(values: list) -> set:
    """The set of the values' Python types (one C-level pass)."""
    return set(map(type, values))


def _validity(values: list, types: set) -> tuple[pa.Buffer | None, int]:
    """(bitmap or None when there is no null, null count) of ``values``, whose
    :func:`_types` are ``types`` (no None among them: no pass over the values)."""
    if _NONE not in types:
        return None, 0
    nulls = values.count(None)
    if not nulls:
        return None, 0
    valid = np.fromiter(map(_NOT_NONE, values), dtype=bool, count=len(values))
    return _bits(valid), nulls


def from_numpy(values: np.ndarray, type: pa.DataType) -> pa.Array:
    """The Arrow array of type ``type`` (an integer type or bool) holding the 1-d array
    ``values``: no nulls; for bool, a non-zero value is true. Copied only when ``values`` is
    not contiguous (or, for bool, packed to bits); a ``values`` of another dtype than
    ``type``'s, and other types, go through ``pyarrow.array``."""
    n = len(values)
    if type == _BOOL:
        return pa.Array.from_buffers(type, n, [None, _bits(values.astype(bool, copy=False))])
    dtype = _INTEGERS.get(type)
    if dtype is None or values.dtype != dtype:
        return pa.array(values, type=type)
    return pa.Array.from_buffers(type, n, [None, _buffer(values)])


def from_list(values: list, type: pa.DataType) -> pa.Array:
    """The Arrow array of type ``type`` holding ``values`` (``None`` is null), equal to
    ``pyarrow.array(values, type=type)``: string, bool, integer, float64 and
    dictionary-of-string types from ``str`` / ``bool`` / ``int`` / ``float`` values (float64:
    ``float`` only) are built here, anything else by
    ``pyarrow.array`` (which raises ``pyarrow.ArrowException`` / ``TypeError`` /
    ``OverflowError`` on a value that does not fit)."""
    try:
        if cython.compiled and builtins.type(values) is list:
            if type == _STRING:
                array = _read_strings(values)
            elif pa.types.is_dictionary(type) and type.value_type == _STRING and type.index_type == pa.int32():
                array = _read_dictionary(values)
            elif type == _BOOL:
                array = _read_bools(values)
            elif type in _RANGES:
                low, high = _RANGES[type]
                array = _read_integers(values, type, low, high)
            elif type in _INTEGERS:
                array = _integers(values, type)
            elif type == _FLOAT64:
                array = _read_floats(values)
            else:
                array = None
        elif type == _STRING:
            array = _strings(values)
        elif pa.types.is_dictionary(type) and type.value_type == _STRING and type.index_type == pa.int32():
            array = _dictionary(values)
        elif type == _BOOL:
            array = _bools(values)
        elif type in _INTEGERS:
            array = _integers(values, type)
        elif type == _FLOAT64:
            array = _floats(values)
        else:
            array = None
    except (OverflowError, UnicodeEncodeError, ValueError):
        array = None  # pyarrow.array says what does not fit
    return pa.array(values, type=type) if array is None else array


def _strings(values: list) -> pa.Array | None:
    n = len(values)
    types = _types(values)
    if not types <= {str, _NONE}:
        return None
    validity, nulls = _validity(values, types)
    texts = values if not nulls else ["" if v is None else v for v in values]
    if n > 1:
        # The values joined by NULs, which no other character's UTF-8 holds: where they stand
        # gives the offsets, with no Python call per value (unless a value holds a NUL).
        joined = "\0".join(texts).encode("utf-8")
        if joined.count(0) == n - 1:
            data = joined.replace(b"\0", b"")
            if len(data) > _MAX_OFFSET:
                return None
            offsets = np.empty(n + 1, dtype=np.int32)
            offsets[0] = 0
            offsets[1:n] = np.flatnonzero(np.frombuffer(joined, dtype=np.uint8) == 0) - np.arange(n - 1)
            offsets[n] = len(data)
            return pa.Array.from_buffers(_STRING, n, [validity, _buffer(offsets), pa.py_buffer(data)],
                                         null_count=nulls)
    joined = "".join(texts)
    data = joined.encode("utf-8")
    if len(data) == len(joined):  # ASCII: a value's byte length is its length
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    else:
        lengths = np.fromiter(map(len, map(str.encode, texts)), dtype=np.int64, count=n)  # UTF-8
    if len(data) > _MAX_OFFSET:
        return None
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    return pa.Array.from_buffers(_STRING, n, [validity, _buffer(offsets), pa.py_buffer(data)],
                                 null_count=nulls)


def _dictionary(values: list) -> pa.Array | None:
    """Dictionary codes in order of first appearance, as ``pyarrow.array`` numbers them."""
    types = _types(values)
    if not types <= {str, _NONE}:
        return None
    distinct = dict.fromkeys(values)  # first appearance order
    distinct.pop(None, None)
    index = {v: i for i, v in enumerate(distinct)}
    nulls = values.count(None) if _NONE in types else 0
    if nulls:
        index[None] = -1
    codes = np.fromiter(map(index.__getitem__, values), dtype=np.int32, count=len(values))
    validity = _bits(codes >= 0) if nulls else None
    if nulls:
        codes[codes < 0] = 0
    indices = pa.Array.from_buffers(pa.int32(), len(values), [validity, _buffer(codes)], null_count=nulls)
    dictionary = _strings(list(distinct))
    if dictionary is None:
        return None
    return pa.DictionaryArray.from_arrays(indices, dictionary)


def _bools(values: list) -> pa.Array | None:
    types = _types(values)
    if not types <= {bool, _NONE}:
        return None
    validity, nulls = _validity(values, types)
    if nulls:
        bits = np.fromiter(map(_IS_TRUE, values), dtype=bool, count=len(values))
    else:
        bits = np.array(values, dtype=bool)  # (bools only: no pass per value in Python)
    return pa.Array.from_buffers(_BOOL, len(values), [validity, _bits(bits)], null_count=nulls)


def _integers(values: list, arrow_type: pa.DataType) -> pa.Array | None:
    types = _types(values)
    if not types <= {int, _NONE}:
        return None
    validity, nulls = _validity(values, types)
    dtype = _INTEGERS[arrow_type]
    # np.fromiter raises OverflowError for an int outside the dtype's range.
    data = np.fromiter(values if not nulls else [0 if v is None else v for v in values], dtype=dtype,
                       count=len(values))  # (np.array discovers a dtype and shape first)
    return pa.Array.from_buffers(arrow_type, len(values), [validity, _buffer(data)], null_count=nulls)


def _floats(values: list) -> pa.Array | None:
    types = _types(values)
    if not types <= {float, _NONE}:
        return None
    validity, nulls = _validity(values, types)
    data = np.fromiter(values if not nulls else [0.0 if v is None else v for v in values], dtype=np.float64,
                       count=len(values))
    return pa.Array.from_buffers(_FLOAT64, len(values), [validity, _buffer(data)], null_count=nulls)


# --- compiled: one pass in C over the list ---------------------------------------------------
# Each returns None for a value of another type (pyarrow.array then converts or refuses the
# list), and raises OverflowError (an int past 64 bits) or UnicodeEncodeError (a lone
# surrogate) as the NumPy passes do. A null's slot holds 0 (text: no bytes).


def _read_strings(values: list) -> pa.Array | None:
    n = len(values)
    offsets = np.empty(n + 1, np.int32)
    valid = np.zeros((n + 7) // 8, np.uint8)
    offs = cython.declare(cython.int[::1], offsets)
    bits = cython.declare(cython.uchar[::1], valid)
    total = cython.declare(cython.Py_ssize_t, 0)
    limit = cython.declare(cython.Py_ssize_t, _MAX_OFFSET)
    nulls = cython.declare(cython.Py_ssize_t, 0)
    size = cython.declare(cython.Py_ssize_t)
    i = cython.declare(cython.Py_ssize_t)
    offs[0] = 0
    for i in range(n):
        v = values[i]
        if v is None:
            nulls += 1
        elif type(v) is str:
            if PyUnicode_IS_ASCII(v):  # (its characters are its UTF-8 bytes)
                size = PyUnicode_GET_LENGTH(v)
            else:
                PyUnicode_AsUTF8AndSize(v, cython.address(size))
            total += size
            if total > limit:
                return None
            bits[i >> 3] |= 1 << (i & 7)
        else:
            return None
        offs[i + 1] = total
    data = np.empty(total, np.uint8)
    if total:
        out = cython.declare(cython.uchar[::1], data)
        for i in range(n):
            v = values[i]
            if v is not None:
                if PyUnicode_IS_ASCII(v):
                    text = cython.cast(cython.p_const_char, PyUnicode_1BYTE_DATA(v))
                    size = PyUnicode_GET_LENGTH(v)
                else:
                    text = PyUnicode_AsUTF8AndSize(v, cython.address(size))
                if offs[i] + size != offs[i + 1]:  # (the list changed under us)
                    return None
                memcpy(cython.address(out[offs[i]]), text, size)
    return pa.Array.from_buffers(_STRING, n, [pa.py_buffer(valid) if nulls else None, pa.py_buffer(offsets),
                                              pa.py_buffer(data)], null_count=nulls)


def _read_dictionary(values: list) -> pa.Array | None:
    """Dictionary codes in order of first appearance, as ``pyarrow.array`` numbers them."""
    n = len(values)
    codes = np.zeros(n, np.int32)
    valid = np.zeros((n + 7) // 8, np.uint8)
    out = cython.declare(cython.int[::1], codes)
    bits = cython.declare(cython.uchar[::1], valid)
    index = cython.declare(dict, {})
    distinct = cython.declare(list, [])
    nulls = cython.declare(cython.Py_ssize_t, 0)
    i = cython.declare(cython.Py_ssize_t)
    code = cython.declare(cython.int, 0)
    last = None  # the last value read and its code: a value repeats row after row as one str
    for i in range(n):
        v = values[i]
        if v is None:
            nulls += 1
            continue
        if v is not last:
            if type(v) is not str:
                return None
            found = index.get(v)
            if found is None:
                code = len(distinct)
                index[v] = code
                distinct.append(v)
            else:
                code = found
            last = v
        out[i] = code
        bits[i >> 3] |= 1 << (i & 7)
    dictionary = _read_strings(distinct)
    if dictionary is None:
        return None
    indices = pa.Array.from_buffers(_INT32, n, [pa.py_buffer(valid) if nulls else None, pa.py_buffer(codes)],
                                    null_count=nulls)
    return pa.DictionaryArray.from_arrays(indices, dictionary, safe=False)


def _read_bools(values: list) -> pa.Array | None:
    n = len(values)
    data = np.zeros((n + 7) // 8, np.uint8)
    valid = np.zeros((n + 7) // 8, np.uint8)
    out = cython.declare(cython.uchar[::1], data)
    bits = cython.declare(cython.uchar[::1], valid)
    nulls = cython.declare(cython.Py_ssize_t, 0)
    i = cython.declare(cython.Py_ssize_t)
    for i in range(n):
        v = values[i]
        if v is True:
            out[i >> 3] |= 1 << (i & 7)
        elif v is None:
            nulls += 1
            continue
        elif v is not False:
            return None
        bits[i >> 3] |= 1 << (i & 7)
    return pa.Array.from_buffers(_BOOL, n, [pa.py_buffer(valid) if nulls else None, pa.py_buffer(data)],
                                 null_count=nulls)


def _read_integers(values: list, arrow_type: pa.DataType, low: int, high: int) -> pa.Array | None:
    """``values`` of an integer type whose values lie in ``low..high`` (a C long long's range)."""
    n = len(values)
    data = np.zeros(n, np.int64)
    valid = np.zeros((n + 7) // 8, np.uint8)
    out = cython.declare(cython.longlong[::1], data)
    bits = cython.declare(cython.uchar[::1], valid)
    lo = cython.declare(cython.longlong, low)
    hi = cython.declare(cython.longlong, high)
    x = cython.declare(cython.longlong)
    nulls = cython.declare(cython.Py_ssize_t, 0)
    i = cython.declare(cython.Py_ssize_t)
    for i in range(n):
        v = values[i]
        if v is None:
            nulls += 1
            continue
        if type(v) is not int:
            return None
        x = v  # (OverflowError past 64 bits)
        if x < lo or x > hi:
            return None
        out[i] = x
        bits[i >> 3] |= 1 << (i & 7)
    dtype = _INTEGERS[arrow_type]
    if dtype is not np.int64:
        data = data.astype(dtype)
    return pa.Array.from_buffers(arrow_type, n, [pa.py_buffer(valid) if nulls else None, pa.py_buffer(data)],
                                 null_count=nulls)


def _read_floats(values: list) -> pa.Array | None:
    n = len(values)
    data = np.zeros(n, np.float64)
    valid = np.zeros((n + 7) // 8, np.uint8)
    out = cython.declare(cython.double[::1], data)
    bits = cython.declare(cython.uchar[::1], valid)
    nulls = cython.declare(cython.Py_ssize_t, 0)
    i = cython.declare(cython.Py_ssize_t)
    for i in range(n):
        v = values[i]
        if v is None:
            nulls += 1
            continue
        if type(v) is not float:
            return None
        out[i] = v
        bits[i >> 3] |= 1 << (i & 7)
    return pa.Array.from_buffers(_FLOAT64, n, [pa.py_buffer(valid) if nulls else None, pa.py_buffer(data)],
                                 null_count=nulls)
