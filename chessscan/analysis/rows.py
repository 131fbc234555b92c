"""Column buffers of the ``positions`` table: typed arrays, no Python object per row.

The per-ply loop (:mod:`chessscan.analysis.plies`) writes each row's values into growable
NumPy arrays (C-typed memoryviews once compiled): integers and flags as numbers, the text
columns (``san``, ``uci``, ``checkers``) as one byte buffer plus int32 offsets, as Arrow
lays out a string array. :meth:`PositionRows.to_arrays` hands them to Arrow as buffers
(:mod:`chessscan.reports.schema` declares the columns).
"""

from __future__ import annotations

try:
    import cython
except ImportError:  # uncompiled, without Cython installed
    from chessscan.core import _cython_shim as cython

import numpy as np

from chessscan.core.squares import SQUARE_NAMES

if cython.compiled:
    from cython.cimports.libc.string import memcpy
    from cython.cimports.cpython.unicode import PyUnicode_AsUTF8AndSize

COLORS = ("black", "white")                            # color: 0 black, 1 white
CHECK_KINDS = ("none", "direct", "discovered", "double")   # check_kind codes 0..3
_FLAGS = ("in_check", "by_en_passant", "by_castling", "by_promotion", "is_checkmate", "is_stalemate")
_SQUARE_BYTES = tuple(name.encode() for name in SQUARE_NAMES)


class PositionRows:
    """The positions rows of one batch. ``len()`` is the row count; :meth:`clear` empties
    the buffers (keeping their memory). ``fen``: keep a FEN column (Python strings)."""

    def __init__(self, fen: bool = False, capacity: int = 1024) -> None:
        self.n = 0
        self.sources = []
        self.source_ids = {}
        self.fens = [] if fen else None
        self.cap = 0
        self._grow_rows(capacity)
        self.san_len = self.uci_len = self.checkers_len = 0
        self.san_data = np.zeros(capacity * 8, dtype=np.uint8)
        self.uci_data = np.zeros(capacity * 5, dtype=np.uint8)
        self.checkers_data = np.zeros(capacity, dtype=np.uint8)

    def _grow_rows(self, cap: int) -> None:
        def grown(old, dtype, size):
            new = np.zeros(size, dtype=dtype)
            if old is not None:
                new[:len(old)] = old
            return new

        first = self.cap == 0
        self.game_index = grown(None if first else np.asarray(self.game_index), np.int64, cap)
        self.source_id = grown(None if first else np.asarray(self.source_id), np.int32, cap)
        self.ply = grown(None if first else np.asarray(self.ply), np.int32, cap)
        self.move_number = grown(None if first else np.asarray(self.move_number), np.int32, cap)
        self.color = grown(None if first else np.asarray(self.color), np.uint8, cap)
        self.check_kind = grown(None if first else np.asarray(self.check_kind), np.uint8, cap)
        self.flags = grown(None if first else np.asarray(self.flags), np.uint8, cap * 6)
        self.halfmove_clock = grown(None if first else np.asarray(self.halfmove_clock), np.int32, cap)
        self.zobrist = grown(None if first else np.asarray(self.zobrist), np.uint64, cap)
        self.repetition = grown(None if first else np.asarray(self.repetition), np.int32, cap)
        self.san_end = grown(None if first else np.asarray(self.san_end), np.int32, cap)
        self.uci_end = grown(None if first else np.asarray(self.uci_end), np.int32, cap)
        self.checkers_end = grown(None if first else np.asarray(self.checkers_end), np.int32, cap)
        self.cap = cap

    def _grow_text(self, which: int, need: int) -> None:
        """Make room for ``need`` bytes in text buffer ``which`` (0 san, 1 uci, 2 checkers)."""
        if which == 0:
            old = np.asarray(self.san_data)
        elif which == 1:
            old = np.asarray(self.uci_data)
        else:
            old = np.asarray(self.checkers_data)
        new = np.zeros(max(need, 2 * len(old)), dtype=np.uint8)
        new[:len(old)] = old
        if which == 0:
            self.san_data = new
        elif which == 1:
            self.uci_data = new
        else:
            self.checkers_data = new

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

    def truncate(self, n: int) -> None:
        """Keep the first ``n`` rows (0 <= n <= len), forget the others."""
        self.n = n
        self.san_len = self.san_end[n - 1] if n else 0
        self.uci_len = self.uci_end[n - 1] if n else 0
        self.checkers_len = self.checkers_end[n - 1] if n else 0
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

    def add(self, source_id: int, game_index: int, ply: int, move_number: int, white: bool, san: str,
            frm: int, to: int, promotion: int, kind: int, checkers: int, flags: int, clock: int,
            zobrist: int, repetition: int) -> int:
        """Append one row; return its index. ``frm``/``to``/``promotion`` spell the UCI text
        (``frm == to`` writes the null move ``0000``); ``kind`` is a check-kind code (see
        :data:`CHECK_KINDS`); ``checkers`` a bitboard; ``flags`` bits 0..5 are the six flag
        columns in :data:`_FLAGS` order."""
        i = self.n
        if i == self.cap:
            self._grow_rows(2 * self.cap)
        self.game_index[i] = game_index
        self.source_id[i] = source_id
        self.ply[i] = ply
        self.move_number[i] = move_number
        self.color[i] = white
        self.check_kind[i] = kind
        for k in range(6):
            self.flags[i * 6 + k] = (flags >> k) & 1
        self.halfmove_clock[i] = clock
        self.zobrist[i] = zobrist
        self.repetition[i] = repetition
        self._add_san(san)
        self.san_end[i] = self.san_len
        self._add_uci(frm, to, promotion)
        self.uci_end[i] = self.uci_len
        self._add_checkers(checkers)
        self.checkers_end[i] = self.checkers_len
        self.n = i + 1
        return i

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
        if self.uci_len + 5 > len(self.uci_data):
            self._grow_text(1, self.uci_len + 5)
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
            self.uci_data[j] = (0, 0, 110, 98, 114, 113, 107)[promotion]  # n b r q (k unused)
            j += 1
        self.uci_len = j

    def _add_checkers(self, checkers: int) -> None:
        if not checkers:
            return 0
        if self.checkers_len + 6 > len(self.checkers_data):
            self._grow_text(2, self.checkers_len + 6)
        j = self.checkers_len
        first = True
        for sq in range(64):
            if checkers >> sq & 1:
                if not first:
                    self.checkers_data[j] = 32  # ' '
                    j += 1
                self.checkers_data[j] = 97 + (sq & 7)
                self.checkers_data[j + 1] = 49 + (sq >> 3)
                j += 2
                first = False
        self.checkers_len = j

    def set_mate(self, i: int, mate: bool, stalemate: bool) -> None:
        """Set ``is_checkmate`` / ``is_stalemate`` of row ``i``."""
        self.flags[i * 6 + 4] = mate
        self.flags[i * 6 + 5] = stalemate

    def add_fen(self, fen: str) -> None:
        self.fens.append(fen)

    def row(self, i: int) -> dict:
        """Row ``i``'s compared values as Python objects (for the cross-check)."""
        return {
            "uci": _text(self.uci_data, self.uci_end, i), "in_check": bool(self.flags[i * 6]),
            "check_kind": CHECK_KINDS[self.check_kind[i]], "checkers": _text(self.checkers_data, self.checkers_end, i),
            "is_checkmate": bool(self.flags[i * 6 + 4]), "is_stalemate": bool(self.flags[i * 6 + 5]),
            "halfmove_clock": int(self.halfmove_clock[i]), "zobrist": int(self.zobrist[i]),
            "repetition": int(self.repetition[i]),
        }

    def to_arrays(self) -> dict:
        """The rows as ``{column: pyarrow.Array}`` in the positions schema's order (copies:
        the buffers may be cleared right after)."""
        import pyarrow as pa

        from chessscan.analysis.arrow import from_list, from_numpy

        n = self.n
        flags = np.asarray(self.flags)[: n * 6].reshape(n, 6).astype(bool)
        out = {
            "source": pa.DictionaryArray.from_arrays(
                from_numpy(np.asarray(self.source_id)[:n].copy(), pa.int32()),
                from_list(self.sources, pa.string())),
            "game_index": from_numpy(np.asarray(self.game_index)[:n].copy(), pa.int64()),
            "ply": from_numpy(np.asarray(self.ply)[:n].copy(), pa.int32()),
            "move_number": from_numpy(np.asarray(self.move_number)[:n].copy(), pa.int32()),
            "color": _decode(np.asarray(self.color)[:n], COLORS),
            "san": _strings(self.san_data, self.san_end, n),
            "uci": _strings(self.uci_data, self.uci_end, n),
            "in_check": from_numpy(flags[:, 0], pa.bool_()),
            "check_kind": _decode(np.asarray(self.check_kind)[:n], CHECK_KINDS),
            "checkers": _strings(self.checkers_data, self.checkers_end, n),
            "by_en_passant": from_numpy(flags[:, 1], pa.bool_()),
            "by_castling": from_numpy(flags[:, 2], pa.bool_()),
            "by_promotion": from_numpy(flags[:, 3], pa.bool_()),
            "is_checkmate": from_numpy(flags[:, 4], pa.bool_()),
            "is_stalemate": from_numpy(flags[:, 5], pa.bool_()),
            "halfmove_clock": from_numpy(np.asarray(self.halfmove_clock)[:n].copy(), pa.int32()),
            "zobrist": from_numpy(np.asarray(self.zobrist)[:n].copy(), pa.uint64()),
            "repetition": from_numpy(np.asarray(self.repetition)[:n].copy(), pa.int32()),
        }
        if self.fens is not None:
            out["fen"] = from_list(self.fens, pa.string())
        return out


def _text(data, ends, i: int) -> str:
    start = ends[i - 1] if i else 0
    return bytes(np.asarray(data)[start:ends[i]]).decode("utf-8")


def _strings(data, ends, n: int):
    import pyarrow as pa

    offsets = np.zeros(n + 1, dtype=np.int32)
    offsets[1:] = np.asarray(ends)[:n]
    size = int(offsets[n])
    return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets), pa.py_buffer(
        np.asarray(data)[:size].copy())])


def _decode(codes, names: tuple):
    import pyarrow as pa

    from chessscan.analysis.arrow import from_list, from_numpy

    return pa.DictionaryArray.from_arrays(from_numpy(codes.astype(np.int32), pa.int32()),
                                          from_list(list(names), pa.string()))
