"""Each game (or EPD line) of a ``validate`` run with its original bytes and its diagnostics.

``chessscan validate --clean-output/--rejects-output`` copies every game exactly as it stands
in the input, and ``--baseline`` keys each issue on the game's content; both need, per game,
its bytes and every diagnostic about it. :class:`RecordSink` provides that without a second
analysis: it wraps the :class:`~chessscan.reports.diagnostics.DiagnosticSink` of the run,
follows the ``games`` (or ``epd_positions``) rows as the engine writes them, in input order,
gathers the diagnostics of each game, and reads the game's bytes from a second stream over
the same source (:func:`~chessscan.readers.sources.open_source`: decompressed, and UTF-16
transcoded to UTF-8, the bytes whose offsets the ``games`` table records).

A game's bytes (a **record**) run from its ``byte_offset`` to the next game's, so the blank
lines, comments and ``%`` lines after a game belong to it; the first game of a source starts
at the start of the input (what stands before it is kept), the last ends at its end. An EPD
record is its line and the skipped lines (blank, ``#``) after it; the first starts at line 1.
Line ends are LF, CRLF or CR, as the readers count them.

A record is handed on (to the ``on_record`` callback) once its diagnostics are complete. The
engines write each batch's ``games`` rows before its ``issues`` rows, and a batch's issues
before the next batch's games (the order :class:`DiagnosticSink` relies on too): so when a
new ``games`` batch arrives, every earlier game is complete; likewise EPD records when a new
``epd_positions`` batch arrives (this sink then has the DiagnosticSink emit what it holds).
This holds for the single-process and the ``--jobs`` engines alike.
"""

from __future__ import annotations

import bisect
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Callable

from chessscan.readers.sources import TruncatedInput, open_source
from chessscan.reports.diagnostics import Diagnostic

__all__ = ["Record", "RecordSink", "count_lines", "own_text"]

_BOM = b"\xef\xbb\xbf"


@dataclass(slots=True)
class Record:
    """One game or EPD line of a source, or the issues of a source that concern no game.

    ``path``: the source's display name; ``kind``: ``"game"``, ``"epd"`` or ``"source"``
    (no bytes: an unreadable archive, say); ``number``: 1-based game number in the source
    (EPD: the record's ordinal); ``line``: 1-based line of the game's first line (EPD: of
    the position); ``first_line``: the line on which ``data`` starts (1 for a source's first
    record, else ``line``); ``own``: offset in ``data`` where the game itself starts (after
    what stood before the first game); ``data``: the record's bytes (None for ``"source"``);
    ``diagnostics``: in input order; ``per_file``: the game's issues that are reported once
    per file (``decode-fallback``: :class:`~chessscan.reports.filters.IssueFilter`), which
    the split rejects on as on the others, but which are not printed or counted with it.
    """

    path: str
    kind: str
    number: int
    line: int
    start: int  # byte offset (PGN) or line (EPD) where the record's data starts
    first_line: int = 1
    column: int = 1  # 1-based column (characters) on first_line where data starts
    own: int = 0
    data: bytes | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    per_file: list[Diagnostic] = field(default_factory=list)


def own_text(record: Record) -> bytes:
    """The game's own text, for content keys: from its first line (what stands before a
    source's first game left out) to its end, line ends made LF, blank space around it
    stripped. For EPD, the position's line alone. ``b""`` for a record without data."""
    if record.data is None:
        return b""
    text = record.data[record.own:].replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if record.kind == "epd":
        text = text.split(b"\n", 1)[0]
    return text.strip()


def count_lines(data: bytes) -> int:
    """Line ends in ``data`` (LF, CRLF, CR)."""
    return data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")


class _Bytes:
    """A second read of one source: byte ranges (PGN) or line ranges (EPD), in order."""

    def __init__(self, path: str) -> None:
        self._path = path
        self._stream = None
        self._pos = 0  # bytes (PGN) or lines (EPD, 0-based) consumed
        self._broken = False
        self._carry = b""  # EPD: read past the last line handed out

    def _open(self):
        if self._stream is None:
            self._stream = open_source(self._path)
        return self._stream

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None

    def _read(self, size: int) -> bytes:
        if self._broken:
            return b""
        try:
            return self._open().read(size)
        except TruncatedInput:
            self._broken = True  # the reader reported it (truncated-input): keep what was read
            return b""

    def span(self, start: int, end: int | None) -> tuple[bytes, int]:
        """Bytes ``[start, end)`` (``end`` None: to the end); also how many bytes before
        ``start`` were skipped unread (0 when records are read one after another)."""
        skipped = 0
        while self._pos < start:
            got = self._read(min(start - self._pos, 1 << 20))
            if not got:
                break
            skipped += len(got)
            self._pos += len(got)
        parts = []
        while end is None or self._pos < end:
            got = self._read(1 << 20 if end is None else min(end - self._pos, 1 << 20))
            if not got:
                break
            parts.append(got)
            self._pos += len(got)
        return b"".join(parts), skipped

    def lines(self, start: int, end: int | None) -> bytes:
        """Lines ``[start, end)``, 1-based (``end`` None: to the end), with their line ends."""
        out = []
        while end is None or self._pos < end - 1:
            line = self._line()
            if not line:
                break
            if self._pos >= start - 1:
                out.append(line)
            self._pos += 1
        return b"".join(out)

    def _line(self) -> bytes:
        # One line with its end; a bare CR ends a line too (as readers.epd counts lines).
        while True:
            buf = self._carry
            cr = buf.find(b"\r")
            lf = buf.find(b"\n")
            if cr >= 0 and (lf < 0 or cr < lf):
                if cr + 1 < len(buf):
                    cut = cr + 2 if buf[cr + 1:cr + 2] == b"\n" else cr + 1
                    self._carry = buf[cut:]
                    return buf[:cut]
            elif lf >= 0:
                self._carry = buf[lf + 1:]
                return buf[:lf + 1]
            more = self._read(1 << 16)
            if not more:
                self._carry = b""
                return buf
            self._carry = buf + more


class RecordSink:
    """A sink for :func:`chessscan.engines.local.run` that wraps a
    :class:`~chessscan.reports.diagnostics.DiagnosticSink` (``inner``, created with
    :meth:`add` as its ``emit`` callback) and hands every record of the input, with its bytes
    and diagnostics, to ``on_record``, in input order.

    ``paths`` maps the ``source`` name the rows carry to ``(path to read again, display
    name)``; a source not in it is read again under its own name. ``want_bytes``: False
    skips the second read (records then have ``data`` None). Call :meth:`finish` after each
    source (as for the DiagnosticSink). ``counts`` is ``inner.counts`` unless ``counts`` is
    given (a dict the caller keeps up to date, e.g. of issues not in a baseline).
    """

    def __init__(self, on_record: Callable[[Record], None], paths: dict[str, tuple[str, str]] | None = None,
                 want_bytes: bool = True) -> None:
        self.inner = None
        self._on_record = on_record
        self._paths = paths or {}
        self._want_bytes = want_bytes
        self._queue: deque[Record] = deque()
        self._by_number: dict[int, Record] = {}
        self._epd_lines: list[int] = []
        self._epd_records: list[Record] = []
        self._source: str | None = None
        self._bytes: _Bytes | None = None
        self._count = 0
        self._released_any = False
        self._tail_chars = 0  # characters after the last line end of the data released
        self._counts: dict[str, int] | None = None

    # -- wiring ------------------------------------------------------------------------

    def wrap(self, inner, counts: dict[str, int] | None = None) -> "RecordSink":
        """Set the DiagnosticSink this sink forwards to; returns self."""
        self.inner = inner
        self._counts = counts
        return self

    @property
    def counts(self) -> dict[str, int]:
        return self._counts if self._counts is not None else self.inner.counts

    def _display(self, source: str) -> str:
        return self._paths.get(source, (source, source))[1]

    # -- the engine's side -------------------------------------------------------------

    def write(self, table_name: str, columns) -> None:
        """Forward a batch to the DiagnosticSink, then follow its ``games`` or
        ``epd_positions`` rows."""
        self.inner.write(table_name, columns)
        if table_name not in ("games", "epd_positions"):
            return
        columns = {k: v.to_pylist() if hasattr(v, "to_pylist") else v for k, v in columns.items()}
        if table_name == "games":
            old = len(self._queue)
            for src, gi, off, line in zip(columns["source"], columns["game_index"],
                                          columns["byte_offset"], columns["line"]):
                self._enter(src)
                rec = Record(self._display(src), "game", gi + 1, line, off)
                self._queue.append(rec)
                self._by_number[rec.number] = rec
            # Every game before this batch has all its diagnostics (module doc).
            self._release(old)
        else:
            # This batch's issues follow it; the batches before have all theirs: have the
            # DiagnosticSink emit them (it holds EPD issues until finish) and hand those on.
            old = len(self._queue)
            self.inner.finish()
            for src, line in zip(columns["source"], columns["line"]):
                self._enter(src)
                self._count += 1
                rec = Record(self._display(src), "epd", self._count, line, line)
                self._queue.append(rec)
                self._epd_records.append(rec)  # EPD diagnostics come at the end: find them by line
                self._epd_lines.append(line)
            self._release(old)
            del self._epd_records[:old]
            del self._epd_lines[:old]

    def add(self, d: Diagnostic) -> None:
        """The DiagnosticSink's ``emit``: file ``d`` with its record."""
        display = self._display(d.path)
        if display != d.path:
            d = replace(d, path=display)
        rec = None
        if d.game_index is not None:
            rec = self._by_number.get(d.game_index + 1)
        elif d.line is not None and self._epd_lines:
            i = bisect.bisect_right(self._epd_lines, d.line) - 1
            if i >= 0:
                rec = self._epd_records[i]
        elif d.line is not None and self._queue:
            # A PGN issue with a line but no game: the game whose lines hold it.
            for r in self._queue:
                if r.line <= d.line:
                    rec = r
        if rec is None:
            self._on_record(Record(display, "source", 0, d.line or 0, 0, diagnostics=[d]))
            return
        rec.diagnostics.append(d)

    def per_file_issue(self, row: dict) -> None:
        """An ``issues`` row (a dict of column values) that the IssueFilter reports once per
        file, for the whole file, when it ends: kept with its game's record (``per_file``)."""
        gi = row.get("game_index")
        rec = self._by_number.get(gi + 1) if gi is not None and row.get("source") == self._source else None
        if rec is not None:
            rec.per_file.append(Diagnostic(self._display(row["source"]), row["line"], row["column"], row["severity"],
                                           row["code"], row["message"], gi + 1, row["ply"], row["san"]))

    def finish(self) -> None:
        """End of a source: the DiagnosticSink emits what it holds, every record is handed on."""
        self.inner.finish()
        self._release(len(self._queue))
        self._reset()

    # -- internals -----------------------------------------------------------------------

    def _enter(self, source: str) -> None:
        if source != self._source:
            if self._source is not None:  # a run of several sources: close the last one
                self._release(len(self._queue))
                self._reset()
            self._source = source
            if self._want_bytes:
                self._bytes = _Bytes(self._paths.get(source, (source, source))[0])

    def _reset(self) -> None:
        if self._bytes is not None:
            self._bytes.close()
        self._bytes = None
        self._source = None
        self._queue.clear()
        self._by_number.clear()
        self._epd_lines = []
        self._epd_records = []
        self._count = 0
        self._released_any = False
        self._tail_chars = 0

    def _release(self, n: int) -> None:
        for _ in range(n):
            rec = self._queue.popleft()
            nxt = self._queue[0] if self._queue else None
            first = not self._released_any
            self._released_any = True
            if rec.kind == "game":
                self._by_number.pop(rec.number, None)
                if first:  # the first game keeps what stands before it
                    rec.first_line, rec.own, start = 1, rec.start, 0
                else:
                    rec.first_line, start = rec.line, rec.start
                if self._bytes is not None:
                    rec.data, skipped = self._bytes.span(start, nxt.start if nxt else None)
                    if skipped:  # cannot happen while games follow one another
                        raise RuntimeError(f"{rec.path}: {skipped} bytes before game {rec.number} "
                                           "belong to no game")
                    # A game after another's termination marker starts inside that line.
                    rec.column = 1 if first else self._tail_chars + 1
                    end = max(rec.data.rfind(b"\n"), rec.data.rfind(b"\r"))
                    tail = len(rec.data[end + 1:].decode("utf-8", "replace"))
                    self._tail_chars = tail if end >= 0 else rec.column - 1 + tail
            else:
                if first:
                    lines_before = rec.line - 1
                    rec.first_line, start = 1, 1
                else:
                    lines_before = 0
                    rec.first_line, start = rec.line, rec.line
                if self._bytes is not None:
                    rec.data = self._bytes.lines(start, nxt.start if nxt else None)
                    if lines_before:
                        rec.own = len(b"".join(rec.data.splitlines(keepends=True)[:lines_before]))
            self._on_record(rec)
