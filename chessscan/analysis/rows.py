"""Column buffers of the ``positions`` table, laid out as Arrow lays out its arrays.

The per-ply loop (:mod:`chessscan.analysis.plies`) writes each row's values straight into
typed buffers (NumPy arrays, C-typed memoryviews once compiled), with no Python object per
row: integers as numbers, the dictionary columns (``source``, ``color``, ``check_kind``) as
their int32 codes, the six flag columns as bitmaps (bit ``i % 8`` of byte ``i // 8``), and
the text columns (``san``, ``uci``, ``checkers``) as int32 offsets plus one byte buffer each,
and the nullable annotation columns (``clock_ms``, ``emt_ms``, ``eval_cp``, ``eval_mate``) as
their values plus one validity bitmap each (bits set where a row holds a value; the values
under a null are left unwritten, as Arrow allows).

:meth:`PositionRows.to_arrays` hands those buffers to Arrow without a copy
(``pyarrow.Array.from_buffers`` over the NumPy memory); from then on the buffers are Arrow's,
and the next row written goes to new ones (copying the rows still held, if any), so the
arrays handed over never change. :meth:`PositionRows.to_batch` hands the same buffers over as one
``pyarrow.RecordBatch`` (the writer's way). :mod:`chessscan.reports.schema` declares the columns.

A further column fits the same scheme: a typed buffer grown with the others in
:meth:`PositionRows._allocate`, written by the loop, handed over in :meth:`to_arrays`; a
nullable one adds a validity bitmap like the flags' (bits set where a row holds a value) as
the first buffer of its array.
"""

from __future__ import annotations

try:
    import cython
except ImportError:  # uncompiled, without Cython installed
    from chessscan.core import _cython_shim as cython

import numpy as np
import pyarrow as pa

from chessscan.analysis.arrow import from_list
from chessscan.readers.movetext import LOOSE_KEY, NOTE_NA
from chessscan.reports.schema import schema_for

if cython.compiled:
    from cython.cimports.libc.string import memcpy
    from cython.cimports.cpython.unicode import PyUnicode_AsUTF8AndSize
else:
    from chessscan.core.bitboard import lsb

COLORS = ("black", "white")                            # color: 0 black, 1 white
CHECK_KINDS = ("none", "direct", "discovered", "double")   # check_kind codes 0..3
_FLAGS = ("in_check", "by_en_passant", "by_castling", "by_promotion", "is_checkmate", "is_stalemate")
_NOTES = ("clock_ms", "emt_ms", "eval_cp", "eval_mate")  # nullable: NOTE_NA is no value
_NOTE_NA = NOTE_NA
_MIN_ROWS = 1024
# Bytes a row takes in the text buffers at most: a SAN move of the strict form (its key) 7, a
# UCI move 5; longer SAN text (loose tokens) and checkers grow their buffer as needed.
_SAN_ROW_BYTES = 8
_UCI_ROW_BYTES = 5
_LOOSE = LOOSE_KEY


class PositionRows:
    """The positions rows of one batch. ``len()`` is the row count; :meth:`clear` empties
    the buffers. ``fen``: keep a FEN column (Python strings). ``capacity``: rows the first
    buffers take (None: 1,024; they double as needed)."""

    def __init__(self, fen: bool = False, capacity: int | None = None) -> None:
        self.n = 0
        self.sources = []
        self.source_ids = {}
        self.fens = [] if fen else None
        self.size = max(_MIN_ROWS if capacity is None else capacity, 16)
        self.cap = 0
        self.san_len = self.uci_len = self.checkers_len = 0
        self._allocate(self.size, 0)

    # --- buffers ----------------------------------------------------------------------

    def _allocate(self, rows: int, keep: int) -> None:
        """New buffers for ``rows`` rows holding a copy of the first ``keep`` rows of the
        current ones (the text buffers: their first bytes up to those rows' end)."""
        nbytes = (rows + 63) // 64 * 8  # one bitmap, rounded to 8 bytes
        old = None
        if keep:
            old = (np.asarray(self.game_index), np.asarray(self.source_id), np.asarray(self.ply),
                   np.asarray(self.move_number), np.asarray(self.color), np.asarray(self.check_kind),
                   np.asarray(self.halfmove_clock), np.asarray(self.zobrist), np.asarray(self.repetition),
                   np.asarray(self.san_offsets), np.asarray(self.uci_offsets), np.asarray(self.checkers_offsets),
                   np.asarray(self.flag_bits), self.bitmap_bytes,
                   np.asarray(self.san_data), np.asarray(self.uci_data), np.asarray(self.checkers_data),
                   np.asarray(self.clock_ms), np.asarray(self.emt_ms), np.asarray(self.eval_cp),
                   np.asarray(self.eval_mate), np.asarray(self.note_bits))
        game_index = np.empty(rows, np.int64)
        source_id = np.empty(rows, np.int32)
        ply = np.empty(rows, np.int32)
        move_number = np.empty(rows, np.int32)
        color = np.empty(rows, np.int32)
        check_kind = np.empty(rows, np.int32)
        halfmove_clock = np.empty(rows, np.int32)
        zobrist = np.empty(rows, np.uint64)
        repetition = np.empty(rows, np.int32)
        san_offsets = np.empty(rows + 1, np.int32)
        uci_offsets = np.empty(rows + 1, np.int32)
        checkers_offsets = np.empty(rows + 1, np.int32)
        flag_bits = np.zeros(6 * nbytes, np.uint8)  # bits are only ever set
        san_data = np.empty(max(_SAN_ROW_BYTES * rows, self.san_len + _SAN_ROW_BYTES), np.uint8)
        uci_data = np.empty(_UCI_ROW_BYTES * rows, np.uint8)
        checkers_data = np.empty(max(rows // 4, self.checkers_len + 8, 64), np.uint8)
        clock_ms = np.empty(rows, np.int64)
        emt_ms = np.empty(rows, np.int64)
        eval_cp = np.empty(rows, np.int32)
        eval_mate = np.empty(rows, np.int32)
        note_bits = np.zeros(4 * nbytes, np.uint8)  # bits are only ever set
        san_offsets[0] = uci_offsets[0] = checkers_offsets[0] = 0
        if old is not None:
            for new, column in zip((game_index, source_id, ply, move_number, color, check_kind, halfmove_clock,
                                    zobrist, repetition), old):
                new[:keep] = column[:keep]
            for new, column in zip((san_offsets, uci_offsets, checkers_offsets), old[9:12]):
                new[:keep + 1] = column[:keep + 1]
            old_bits, old_nbytes = old[12], old[13]
            used = (keep + 7) // 8
            for k in range(6):
                flag_bits[k * nbytes:k * nbytes + used] = old_bits[k * old_nbytes:k * old_nbytes + used]
            if keep & 7:  # bits past `keep` in the last byte are another batch's: clear them
                mask = (1 << (keep & 7)) - 1
                for k in range(6):
                    flag_bits[k * nbytes + used - 1] &= mask
            for new, column in zip((clock_ms, emt_ms, eval_cp, eval_mate), old[17:21]):
                new[:keep] = column[:keep]
            old_notes = old[21]
            for k in range(4):
                note_bits[k * nbytes:k * nbytes + used] = old_notes[k * old_nbytes:k * old_nbytes + used]
            if keep & 7:
                for k in range(4):
                    note_bits[k * nbytes + used - 1] &= mask
            san_data[:self.san_len] = old[14][:self.san_len]
            uci_data[:self.uci_len] = old[15][:self.uci_len]
            checkers_data[:self.checkers_len] = old[16][:self.checkers_len]
        self.game_index = game_index
        self.source_id = source_id
        self.ply = ply
        self.move_number = move_number
        self.color = color
        self.check_kind = check_kind
        self.halfmove_clock = halfmove_clock
        self.zobrist = zobrist
        self.repetition = repetition
        self.san_offsets = san_offsets
        self.uci_offsets = uci_offsets
        self.checkers_offsets = checkers_offsets
        self.flag_bits = flag_bits
        self.bitmap_bytes = nbytes
        self.san_data = san_data
        self.uci_data = uci_data
        self.checkers_data = checkers_data
        self.clock_ms = clock_ms
        self.emt_ms = emt_ms
        self.eval_cp = eval_cp
        self.eval_mate = eval_mate
        self.note_bits = note_bits
        self._owners = [game_index, source_id, ply, move_number, color, check_kind, halfmove_clock, zobrist,
                        repetition, san_offsets, uci_offsets, checkers_offsets, flag_bits, san_data, uci_data,
                        checkers_data, clock_ms, emt_ms, eval_cp, eval_mate, note_bits]
        self.cap = rows
        self.size = rows

    def _grow(self) -> None:
        """Room for one more row: new buffers, twice as large when full, the same size when
        the current ones were handed over to Arrow (:meth:`to_arrays`)."""
        self._allocate(2 * self.size if self.n >= self.size else self.size, self.n)

    def _grow_text(self, which: int, need: int) -> None:
        """Room for ``need`` bytes in text buffer ``which`` (0 san, 2 checkers)."""
        old = np.asarray(self.san_data if which == 0 else self.checkers_data)
        new = np.empty(max(need, 2 * len(old)), dtype=np.uint8)
        used = self.san_len if which == 0 else self.checkers_len
        new[:used] = old[:used]
        if which == 0:
            self.san_data = new
        else:
            self.checkers_data = new
        self._owners[13 if which == 0 else 15] = new

    def __len__(self) -> int:
        return self.n

    def clear(self) -> None:
        """Forget every row (the buffers keep their size)."""
        self.n = 0
        self.san_len = self.uci_len = self.checkers_len = 0
        self.sources = []
        self.source_ids = {}
        if self.fens is not None:
            self.fens = []
        if self.cap == 0:  # handed over: the next batch gets its own buffers
            self._allocate(self.size, 0)
        else:
            np.asarray(self.flag_bits)[:] = 0
            np.asarray(self.note_bits)[:] = 0

    def truncate(self, n: int) -> None:
        """Keep the first ``n`` rows (0 <= n <= len), forget the others."""
        if self.cap and n < self.n:
            # Clear the forgotten rows' flag bits (rows are written with bits only set).
            bits = np.asarray(self.flag_bits).reshape(6, self.bitmap_bytes)
            mask = np.zeros(self.bitmap_bytes * 8, dtype=bool)
            mask[:n] = True
            bits &= np.packbits(mask, bitorder="little")
            np.asarray(self.note_bits).reshape(4, self.bitmap_bytes)[:] &= np.packbits(mask, bitorder="little")
        self.n = n
        self.san_len = self.san_offsets[n]
        self.uci_len = self.uci_offsets[n]
        self.checkers_len = self.checkers_offsets[n]
        if self.fens is not None:
            del self.fens[n:]

    def source_number(self, source: str) -> int:
        """The id of ``source`` in this batch (the ``source`` column is built from it)."""
        sid = self.source_ids.get(source)
        if sid is None:
            sid = len(self.sources)
            self.source_ids[source] = sid
            self.sources.append(source)
        return sid

    # --- rows ---------------------------------------------------------------------------

    def add(self, source_id: int, game_index: int, ply: int, move_number: int, white: bool, san: str,
            frm: int, to: int, promotion: int, kind: int, checkers: int, flags: int, clock: int,
            zobrist: int, repetition: int) -> int:
        """Append one row; return its index. ``frm``/``to``/``promotion`` spell the UCI text
        (``frm == to`` writes the null move ``0000``); ``kind`` is a check-kind code (see
        :data:`CHECK_KINDS`); ``checkers`` a bitboard; ``flags`` bits 0..5 are the six flag
        columns in :data:`_FLAGS` order."""
        return self.add_key(source_id, game_index, ply, move_number, white, 0, san, frm, to, promotion, kind,
                            checkers, flags, clock, zobrist, repetition)

    def add_key(self, source_id: int, game_index: int, ply: int, move_number: int, white: bool, san_key: int,
                san: str | None, frm: int, to: int, promotion: int, kind: int, checkers: int, flags: int,
                clock: int, zobrist: int, repetition: int) -> int:
        """:meth:`add` with the SAN given as its key (:mod:`chessscan.readers.movetext`), the
        per-ply loop's way: no text object. ``san``: the text, used when ``san_key`` is 0 or
        a ``LOOSE_KEY`` (a token with no key)."""
        i = self.n
        if i >= self.cap:
            self._grow()
        self.game_index[i] = game_index
        self.source_id[i] = source_id
        self.ply[i] = ply
        self.move_number[i] = move_number
        self.color[i] = white
        self.check_kind[i] = kind
        if flags:
            nbytes = self.bitmap_bytes
            byte = i >> 3
            bit = 1 << (i & 7)
            for k in range(6):
                if flags >> k & 1:
                    self.flag_bits[k * nbytes + byte] |= bit
        self.halfmove_clock[i] = clock
        self.zobrist[i] = zobrist
        self.repetition[i] = repetition
        if 0 < san_key < _LOOSE:
            self._add_key(san_key)
        else:
            self._add_san(san)
        self.san_offsets[i + 1] = self.san_len
        self._add_uci(frm, to, promotion)
        self.uci_offsets[i + 1] = self.uci_len
        if checkers:
            self._add_checkers(checkers)
        self.checkers_offsets[i + 1] = self.checkers_len
        self.n = i + 1
        return i

    def _add_key(self, key: int) -> None:
        """The SAN text of ``key``: its bytes, lowest first, up to the first zero one."""
        if self.san_len + _SAN_ROW_BYTES > len(self.san_data):
            self._grow_text(0, self.san_len + _SAN_ROW_BYTES)
        j = self.san_len
        while key:
            self.san_data[j] = key & 255
            key >>= 8
            j += 1
        self.san_len = j

    def _add_san(self, san: str) -> None:
        if cython.compiled:
            text = PyUnicode_AsUTF8AndSize(san, cython.address(size))
            if self.san_len + size > len(self.san_data):
                self._grow_text(0, self.san_len + size)
            memcpy(cython.address(self.san_data[self.san_len]), text, size)
            self.san_len += size
        else:
            data = san.encode("utf-8")
            if self.san_len + len(data) > len(self.san_data):
                self._grow_text(0, self.san_len + len(data))
            self.san_data[self.san_len:self.san_len + len(data)] = np.frombuffer(data, np.uint8)
            self.san_len += len(data)

    def _add_uci(self, frm: int, to: int, promotion: int) -> None:
        j = self.uci_len
        if frm == to:  # a null move
            for k in range(4):
                self.uci_data[j + k] = 48  # '0'
            self.uci_len = j + 4
            return 0
        self.uci_data[j] = 97 + (frm & 7)
        self.uci_data[j + 1] = 49 + (frm >> 3)
        self.uci_data[j + 2] = 97 + (to & 7)
        self.uci_data[j + 3] = 49 + (to >> 3)
        j += 4
        if promotion:
            # n b r q (k: never promoted to)
            self.uci_data[j] = (110 if promotion == 2 else 98 if promotion == 3 else 114 if promotion == 4
                                else 113 if promotion == 5 else 107)
            j += 1
        self.uci_len = j

    def _add_checkers(self, checkers: int) -> None:
        """The checking squares' names, space-separated, in square order (a1 first)."""
        if self.checkers_len + 3 * 64 > len(self.checkers_data):
            self._grow_text(2, self.checkers_len + 3 * 64)
        j = self.checkers_len
        first = True
        while checkers:
            sq = lsb(checkers)
            checkers &= checkers - 1
            if not first:
                self.checkers_data[j] = 32  # ' '
                j += 1
            self.checkers_data[j] = 97 + (sq & 7)
            self.checkers_data[j + 1] = 49 + (sq >> 3)
            j += 2
            first = False
        self.checkers_len = j

    def set_mate(self, i: int, mate: bool, stalemate: bool) -> None:
        """Set ``is_checkmate`` / ``is_stalemate`` of row ``i`` (flags are only ever set)."""
        if i >= self.cap:  # handed over: a copy of the rows to write in
            self._allocate(self.size, self.n)
        nbytes = self.bitmap_bytes
        if mate:
            self.flag_bits[4 * nbytes + (i >> 3)] |= 1 << (i & 7)
        if stalemate:
            self.flag_bits[5 * nbytes + (i >> 3)] |= 1 << (i & 7)

    def set_notes(self, i: int, clock: int, emt: int, cp: int, mate: int) -> None:
        """Set row ``i``'s annotation columns (``clock_ms``, ``emt_ms``, ``eval_cp``,
        ``eval_mate``) to the values that are not ``NOTE_NA``; the others stay null."""
        if i >= self.cap:  # handed over: a copy of the rows to write in
            self._allocate(self.size, self.n)
        nbytes = self.bitmap_bytes
        byte = i >> 3
        bit = 1 << (i & 7)
        if clock != _NOTE_NA:
            self.clock_ms[i] = clock
            self.note_bits[byte] |= bit
        if emt != _NOTE_NA:
            self.emt_ms[i] = emt
            self.note_bits[nbytes + byte] |= bit
        if cp != _NOTE_NA:
            self.eval_cp[i] = cp
            self.note_bits[2 * nbytes + byte] |= bit
        if mate != _NOTE_NA:
            self.eval_mate[i] = mate
            self.note_bits[3 * nbytes + byte] |= bit

    def add_fen(self, fen: str) -> None:
        self.fens.append(fen)

    def _flag(self, k: int, i: int) -> bool:
        return (self.flag_bits[k * self.bitmap_bytes + (i >> 3)] >> (i & 7)) & 1 == 1

    def row(self, i: int) -> dict:
        """Row ``i``'s compared values as Python objects (for the cross-check)."""
        return {
            "uci": _text(self.uci_data, self.uci_offsets, i), "in_check": self._flag(0, i),
            "check_kind": CHECK_KINDS[self.check_kind[i]],
            "checkers": _text(self.checkers_data, self.checkers_offsets, i),
            "is_checkmate": self._flag(4, i), "is_stalemate": self._flag(5, i),
            "halfmove_clock": int(self.halfmove_clock[i]), "zobrist": int(self.zobrist[i]),
            "repetition": int(self.repetition[i]),
        }

    # --- to Arrow -------------------------------------------------------------------------

    def to_arrays(self) -> dict:
        """The rows as ``{column: pyarrow.Array}`` in the positions schema's order, over this
        object's buffers without a copy; they stay the arrays' (rows written afterwards go
        to new buffers), so the rows may be cleared right after. Each Arrow buffer spans
        exactly its rows' bytes, so that a batch's ``get_total_buffer_size()`` is its
        ``nbytes`` (which walks every buffer's referenced range to find the same)."""
        n = self.n
        if n == 0:
            return _empty_arrays(self.fens is not None)
        self.cap = 0  # handed over: the next write moves to new buffers
        nbytes = self.bitmap_bytes
        used = (n + 7) // 8  # a bitmap's bytes
        bits = np.asarray(self.flag_bits)
        validity = None
        flags = [pa.Array.from_buffers(_BOOL, n, [validity, pa.py_buffer(bits[k * nbytes:k * nbytes + used])])
                 for k in range(6)]
        sources = _SOURCES_MEMO.get(tuple(self.sources))
        if sources is None:
            sources = from_list(self.sources, pa.string())
            if len(_SOURCES_MEMO) > 64:
                _SOURCES_MEMO.clear()
            _SOURCES_MEMO[tuple(self.sources)] = sources
        out = {
            "source": _dictionary(self.source_id, n, sources),
            "game_index": _numbers(pa.int64(), self.game_index, n),
            "ply": _numbers(_INT32, self.ply, n),
            "move_number": _numbers(_INT32, self.move_number, n),
            "color": _dictionary(self.color, n, _constant_dictionary(COLORS)),
            "san": _strings(self.san_offsets, self.san_data, n),
            "uci": _strings(self.uci_offsets, self.uci_data, n),
            "in_check": flags[0],
            "check_kind": _dictionary(self.check_kind, n, _constant_dictionary(CHECK_KINDS)),
            "checkers": _strings(self.checkers_offsets, self.checkers_data, n),
            "by_en_passant": flags[1],
            "by_castling": flags[2],
            "by_promotion": flags[3],
            "is_checkmate": flags[4],
            "is_stalemate": flags[5],
            "halfmove_clock": _numbers(_INT32, self.halfmove_clock, n),
            "zobrist": _numbers(pa.uint64(), self.zobrist, n),
            "repetition": _numbers(_INT32, self.repetition, n),
        }
        notes = np.asarray(self.note_bits)
        for k, (name, arrow_type, values) in enumerate(zip(_NOTES, (_INT64, _INT64, _INT32, _INT32),
                                                           (self.clock_ms, self.emt_ms, self.eval_cp, self.eval_mate))):
            out[name] = pa.Array.from_buffers(arrow_type, n, [pa.py_buffer(notes[k * nbytes:k * nbytes + used]),
                                                              pa.py_buffer(np.asarray(values)[:n])])
        if self.fens is not None:
            out["fen"] = from_list(self.fens, pa.string())
        return out

    def to_batch(self, schema):
        """The rows as a ``pyarrow.RecordBatch`` of ``schema`` (the positions schema, no optional
        column) over this object's buffers, handed over as :meth:`to_arrays` hands them; None
        where :meth:`to_arrays` is the way (uncompiled, a FEN column, no row, another schema).
        Compiled, the batch comes in one import (the Arrow C data interface) instead of an
        array object per column, each of which costs pyarrow a few thousand instructions."""
        n = self.n
        if not cython.compiled or n == 0 or self.fens is not None or not schema.equals(_POSITIONS_SCHEMA):
            return None
        nbytes = self.bitmap_bytes
        owners = self._owners
        dictionary = _SOURCES_BUFFERS.get(tuple(self.sources))
        if dictionary is None:
            dictionary = _string_buffers(self.sources)
            if len(_SOURCES_BUFFERS) > 64:
                _SOURCES_BUFFERS.clear()
            _SOURCES_BUFFERS[tuple(self.sources)] = dictionary
        # A tuple of the owners as they are now: the list is this object's, and changes when
        # a text buffer grows.
        root = cs_batch_new(n, 22, (tuple(owners), dictionary))
        if root == cython.NULL:
            raise MemoryError()
        cs_batch_column(root, 0, 0, 2, cython.NULL, cython.address(self.source_id[0]), cython.NULL,
                        len(self.sources), _pointer(dictionary[2]), _pointer(dictionary[3]))
        cs_batch_values(root, 1, cython.NULL, cython.address(self.game_index[0]))
        cs_batch_values(root, 2, cython.NULL, cython.address(self.ply[0]))
        cs_batch_values(root, 3, cython.NULL, cython.address(self.move_number[0]))
        cs_batch_column(root, 4, 0, 2, cython.NULL, cython.address(self.color[0]), cython.NULL, 2,
                        _pointer(_COLOR_BUFFERS[2]), _pointer(_COLOR_BUFFERS[3]))
        cs_batch_column(root, 5, 0, 3, cython.NULL, cython.address(self.san_offsets[0]),
                        cython.address(self.san_data[0]), -1, cython.NULL, cython.NULL)
        cs_batch_column(root, 6, 0, 3, cython.NULL, cython.address(self.uci_offsets[0]),
                        cython.address(self.uci_data[0]), -1, cython.NULL, cython.NULL)
        cs_batch_column(root, 8, 0, 2, cython.NULL, cython.address(self.check_kind[0]), cython.NULL, 4,
                        _pointer(_CHECK_KIND_BUFFERS[2]), _pointer(_CHECK_KIND_BUFFERS[3]))
        cs_batch_column(root, 9, 0, 3, cython.NULL, cython.address(self.checkers_offsets[0]),
                        cython.address(self.checkers_data[0]), -1, cython.NULL, cython.NULL)
        # The six flags (in_check, then by_en_passant .. is_stalemate): bitmaps, no validity.
        for k in range(6):
            cs_batch_values(root, 7 if k == 0 else 9 + k, cython.NULL, cython.address(self.flag_bits[k * nbytes]))
        cs_batch_values(root, 15, cython.NULL, cython.address(self.halfmove_clock[0]))
        cs_batch_values(root, 16, cython.NULL, cython.address(self.zobrist[0]))
        cs_batch_values(root, 17, cython.NULL, cython.address(self.repetition[0]))
        # The annotations: values under a validity bitmap each (null count: Arrow's to find).
        cs_batch_values(root, 18, cython.address(self.note_bits[0]), cython.address(self.clock_ms[0]))
        cs_batch_values(root, 19, cython.address(self.note_bits[nbytes]), cython.address(self.emt_ms[0]))
        cs_batch_values(root, 20, cython.address(self.note_bits[2 * nbytes]), cython.address(self.eval_cp[0]))
        cs_batch_values(root, 21, cython.address(self.note_bits[3 * nbytes]), cython.address(self.eval_mate[0]))
        self.cap = 0  # handed over: the next write moves to new buffers
        address = cython.cast(Py_ssize_t, root)
        try:
            return pa.RecordBatch._import_from_c(address, schema)
        finally:
            if root.release != cython.NULL:  # not taken by Arrow (an error): released here
                root.release(root)


def _string_buffers(names) -> tuple:
    """The buffers of a string array of ``names``: (int32 offsets, UTF-8 bytes) as NumPy
    arrays, then their addresses."""
    encoded = [name.encode("utf-8") for name in names]
    offsets = np.zeros(len(encoded) + 1, np.int32)
    offsets[1:] = np.cumsum([len(e) for e in encoded])
    data = np.frombuffer(b"".join(encoded) + b"\0", np.uint8)
    return offsets, data, offsets.ctypes.data, data.ctypes.data


def _pointer(address: int):
    return cython.cast(cython.p_void, cython.cast(cython.size_t, address))


def _text(data, offsets, i: int) -> str:
    return bytes(np.asarray(data)[offsets[i]:offsets[i + 1]]).decode("utf-8")


# Arrow building blocks.
_BOOL = pa.bool_()
_INT32 = pa.int32()
_INT64 = pa.int64()
_CONSTANT_DICTIONARIES: dict = {}
_SOURCES_MEMO: dict = {}  # the sources of recent batches -> their dictionary array
_SOURCES_BUFFERS: dict = {}  # the sources of recent batches -> their _string_buffers
_POSITIONS_SCHEMA = schema_for("positions", ())
_COLOR_BUFFERS = _string_buffers(COLORS)
_CHECK_KIND_BUFFERS = _string_buffers(CHECK_KINDS)


def _constant_dictionary(names: tuple):
    array = _CONSTANT_DICTIONARIES.get(names)
    if array is None:
        array = _CONSTANT_DICTIONARIES[names] = from_list(list(names), pa.string())
    return array


def _numbers(arrow_type, values, n: int):
    return pa.Array.from_buffers(arrow_type, n, [None, pa.py_buffer(np.asarray(values)[:n])])


def _strings(offsets, data, n: int):
    offsets = np.asarray(offsets)[:n + 1]
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets),
                                                  pa.py_buffer(np.asarray(data)[:offsets[n]])])


def _dictionary(codes, n: int, dictionary):
    indices = pa.Array.from_buffers(_INT32, n, [None, pa.py_buffer(np.asarray(codes)[:n])])
    return pa.DictionaryArray.from_arrays(indices, dictionary, safe=False)


def _empty_arrays(fen: bool) -> dict:
    schema = schema_for("positions", ("fen",) if fen else ())
    return {f.name: from_list([], f.type) for f in schema}
