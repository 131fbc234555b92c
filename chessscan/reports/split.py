"""``chessscan validate --clean-output FILE --rejects-output FILE``: the input split in two.

Every record (a game, or an EPD line: see :mod:`chessscan.reports.records`) with no
diagnostic at or above the ``--fail-on`` severity goes to the clean file, every other one to
the rejects file, each copied byte for byte, once, in input order; the games of several
inputs go to the same two files. Each game reads back from its file as itself (its tags and
moves), whatever followed it in its input, with these additions only: a record that does not
end with a line end (the last game of an input, a game whose marker the next game follows on
its line) gets an LF, so that the next one starts on a line of its own; a game that the
reader ended other than by its own termination marker (at the next tag section, at the end
of its input, before a would-be game start its unclosed comment ran into) gets a line that
closes it as it ended (:func:`_closing`: ``}``, ``)``, a marker) when the games written after
it would otherwise run on into it or change it; and a UTF-8 byte order mark at the start of
an input is kept only at the start of an output file.

Beside the rejects file, ``FILE.issues.csv`` lists each rejected record's diagnostics with
the record's game_index and the diagnostic's line *in the rejects file*, and where it came from
(text that a spreadsheet would run as a formula gets a leading ``'``, as in the tables' CSV).
Output compression follows the suffix (``.gz``, ``.bz2``, ``.xz``, ``.zst``/``.zstd``);
``-`` is stdout. Each file is written as a new file ``NAME.<random hex>.partial``
(:mod:`chessscan.reports.files`) and renamed when the split ends whole: a stopped or failed
run leaves only ``.partial`` files (:attr:`SplitWriter.kept` names them).
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import lzma
import os
import re
import sys
from typing import BinaryIO

import zstandard

from chessscan.readers.movetext import _STRIP_B, RESULTS
from chessscan.readers.pgn import _ENDS_WITH_RESULT_B, RawGame, ReadEnd, read_games
from chessscan.reports import files
from chessscan.reports.records import Record, count_lines
from chessscan.reports.writers import OutputError, guard_formula

__all__ = ["SIDECAR_COLUMNS", "SplitWriter", "open_output", "partial_path", "sidecar_path"]

#: Columns of ``FILE.issues.csv``: ``game_index`` (0-based, as the tables count games) and
#: ``line`` (1-based) in the rejects file (``game_index``: the record's index there, EPD lines
#: counted as records; ``line``: the diagnostic's line, or the record's first line when the
#: diagnostic has none); ``game_line`` the game's first line there; ``source``,
#: ``source_game_index``, ``source_line`` where it came from.
SIDECAR_COLUMNS = ("game_index", "line", "column", "game_line", "severity", "code", "ply", "san", "message",
                   "source", "source_game_index", "source_line")

_BOM = b"\xef\xbb\xbf"
_MARKERS = frozenset(RESULTS.values())  # the termination markers (PGN §8.2.6)
_PAREN_B = re.compile(rb"[()]")
_SPACE = b" \t\r\n\x0b\x0c"  # what bytes.rstrip() strips
_SEVERITY_RANK = {"error": 0, "warning": 1}


def is_special(path: str) -> bool:
    """Whether the output ``path`` is written through rather than replaced: stdout (``-``),
    a symlink, or a file that is not a regular one (``/dev/stdout``, a FIFO, ``/dev/full``):
    renaming over them would replace the link or the device."""
    return path == "-" or os.path.islink(path) or (os.path.exists(path) and not os.path.isfile(path))


def sidecar_path(rejects: str) -> str | None:
    """The sidecar of a rejects file: ``FILE.issues.csv``; None for stdout (``-``) and for a
    rejects file that is not a regular one (``/dev/full``, a FIFO: no file can stand beside
    a device)."""
    if rejects == "-":
        return None
    try:
        if not os.path.isfile(rejects) and os.path.exists(rejects):
            return None
    except (OSError, ValueError):
        pass
    return rejects + ".issues.csv"


def open_output(path: str, write_to: str | BinaryIO | None = None) -> BinaryIO:
    """A binary file for writing ``path``, compressed by its suffix (``.gz``, ``.bz2``,
    ``.xz``, ``.zst``/``.zstd``); ``-`` is stdout (left open on close). With ``write_to``, the
    data goes there instead: a file opened for writing (closed with the result), or a path,
    created new (:func:`chessscan.reports.files.create`: an existing file or link there is
    an error); without it, ``path`` is opened as it is (written through). Raises OSError."""
    if path == "-":
        return _Unclosed(sys.stdout.buffer)
    if write_to is None:
        raw = open(path, "wb")
    else:
        raw = files.create(write_to) if isinstance(write_to, (str, os.PathLike)) else write_to
    lower = path.lower()
    try:
        if lower.endswith(".gz"):
            return _Layered(gzip.GzipFile(fileobj=raw, mode="wb"), raw)
        if lower.endswith(".bz2"):
            return _Layered(bz2.BZ2File(raw, "wb"), raw)
        if lower.endswith(".xz"):
            return _Layered(lzma.LZMAFile(raw, "wb"), raw)
        if lower.endswith((".zst", ".zstd")):
            return _Layered(zstandard.ZstdCompressor().stream_writer(raw, closefd=False), raw)
    except BaseException:
        raw.close()
        raise
    return raw


def partial_path(path: str) -> str | None:
    """A new name under which ``path`` is written until the split ends whole
    (``path.<random hex>.partial``: :func:`chessscan.reports.files.temporary_path`), or None
    for an output written through (:func:`is_special`)."""
    return None if is_special(path) else files.temporary_path(path)


class _Layered:
    """A compressing writer over a file it does not close itself: closing closes both."""

    def __init__(self, writer, raw: BinaryIO) -> None:
        self._writer, self._raw = writer, raw

    def write(self, data: bytes) -> int:
        return self._writer.write(data)

    def close(self) -> None:
        try:
            self._writer.close()
        finally:
            self._raw.close()


class _GuardedRows:
    """A csv writer whose text fields get the tables' formula guard
    (:func:`~chessscan.reports.writers.guard_formula`)."""

    def __init__(self, writer) -> None:
        self._writer = writer

    def writerow(self, row) -> None:
        self._writer.writerow([guard_formula(v) if isinstance(v, str) else v for v in row])


class _Unclosed:
    """stdout's buffer, flushed but not closed on close."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw

    def write(self, data: bytes) -> int:
        return self._raw.write(data)

    def close(self) -> None:
        self._raw.flush()


class _Item:
    """A record on its way to an output: its text as written, its games as read alone and
    where the reader stood at its end (None when a quick look saw it end between games),
    what ends its last game (:func:`_closing`; None: nothing to close), and what to call
    once it is written (with its number and first line in the file)."""

    __slots__ = ("rec", "data", "games", "end", "closing", "written")

    def __init__(self, rec: Record, data: bytes, games, end, written) -> None:
        self.rec = rec
        self.data = data
        self.games = games
        self.end = end
        self.written = written
        self.closing = None
        if end is not None and not end.between and games and games[-1].result is None:
            self.closing = _closing(end, games[-1])

    @property
    def open(self) -> bool:
        """Whether text after it could go on with its last game or change how it reads: the
        reader does not stand between games at its end (no termination marker of its own,
        or comments after it that wait for a game to come)."""
        return self.end is not None and not self.end.between


def _read(data: bytes) -> tuple[list[RawGame], ReadEnd]:
    """The games of ``data`` as the PGN reader reads them, and where it stood at the end."""
    end = ReadEnd()
    return list(read_games(io.BytesIO(data), source="", end=end)), end


def _ends_between(data: bytes) -> bool:
    """A quick test that the reader ends the game of ``data`` (the text of one record) at its
    termination marker, so that no text after it can go on with it: its last token outside
    comments is a termination marker, with no comment left open, no escape line in the text,
    and its parentheses (variations, or in tag values) closed in order, so none is open at
    the marker. (Closed comments on lines after the marker, which would be the preamble of
    a game after them, change no game.) False when unsure: the reader then decides."""
    if b";" not in data and b"(" not in data and b")" not in data:
        # Brace comments only (Lichess's clocks, their '%' included): the marker is outside
        # them when no '{' follows the last '}', and that '}' is not on an escape line (§6).
        j = data.rfind(b"}")
        if data.find(b"{", j + 1) >= 0 or data.find(b"%", j + 1) >= 0:
            return False
        if j >= 0:
            k = max(data.rfind(b"\n", 0, j), data.rfind(b"\r", 0, j)) + 1
            if data[k:k + 1] == b"%":
                return False
        n = len(data)
        while n > j + 1 and data[n - 1] in _SPACE:
            n -= 1
        # (from 10 bytes before the end, the marker's length and more: from the start, the
        # regex would try every offset)
        return _ENDS_WITH_RESULT_B.search(data, max(j + 1, n - 10), n) is not None
    if data[:1] == b"%" or b"\n%" in data or b"\r%" in data:
        return False  # (a '%' line: an escape line, or comment text)
    text = _STRIP_B.sub(b" ", data) if b"{" in data or b";" in data else data
    if b"{" in text or b"}" in text:
        return False
    if b"(" in text or b")" in text:
        depth = 0
        for m in _PAREN_B.finditer(text):
            depth += 1 if m.group() == b"(" else -1
            if depth < 0:
                return False
        if depth:
            return False
    # (the last 10 bytes: a marker and the byte before it; the regex would try every offset)
    return _ENDS_WITH_RESULT_B.search(text.rstrip()[-10:]) is not None


def _same(a: list[RawGame], b: list[RawGame]) -> bool:
    """Whether two lists of games hold the same games: tags and moves, in order."""
    return len(a) == len(b) and all(x.tags == y.tags and x.sans == y.sans for x, y in zip(a, b))


def _closing(end: ReadEnd, last: RawGame) -> bytes:
    """What ends a game that the reader had not ended (``end``: where it stood), as it ended
    in its input: ``}`` for a comment left open, ``)`` for each variation left open, and a
    termination marker, its Result tag if that is one, else ``*``; on a line of its own."""
    result = last.tags.get("Result")
    marker = result if result in _MARKERS else "*"
    head = ("}" if end.in_comment else "") + ")" * end.depth
    return ((head + " ") if head else "").encode() + marker.encode() + b"\n"


class _Out:
    """One output file and where it stands: bytes and lines written, records written."""

    def __init__(self, path: str) -> None:
        self.path = path
        if is_special(path):
            self.partial, self.file = None, open_output(path)
        else:
            self.partial, raw = files.create_temporary(path)
            try:
                self.file = open_output(path, raw)
            except BaseException:
                files.discard(self.partial)
                raise
        self.written = 0
        self.lines = 0
        self.records = 0
        self.closings = 0  # games closed by the split (see put)
        self._open: _Item | None = None  # the record written last, if it is open (_Item.open)
        self._held: list[_Item] = []  # records after it, held while the reader looks ahead

    def put(self, rec: Record, written=None) -> None:
        """Write ``rec``, and then call ``written(number, line)`` (its number and the line its
        data starts on in this file), if given.

        A game that the reader had not ended at the end of its text (no termination marker
        of its own) is followed by its closing (:func:`_closing`) when the games written
        after it would otherwise run on into it or change it: each game reads back as itself
        (its tags and moves), whatever followed it in its input. While a comment it left open
        is being looked ahead (PGN reader, module doc), the records after it are held, so
        that the text after them decides as in the input."""
        data = rec.data or b""
        if self.written and data.startswith(_BOM):
            data = data[3:]
        if data and data[-1:] not in (b"\n", b"\r"):
            data += b"\n"
        games = end = None
        if rec.kind == "game" and (self._open is not None or not _ends_between(data)):
            games, end = _read(data)
        self._add(_Item(rec, data, games, end, written))

    def finish(self) -> None:
        """The end of the output: the records held are written (the end of the text decides
        the look-ahead, as it did in the input when it ended there)."""
        if self._open is not None:
            self._settle(final=True)

    def _add(self, item: _Item) -> None:
        if self._open is None:
            self._emit(item)
            return
        self._held.append(item)
        self._settle(final=False)

    def _settle(self, final: bool) -> None:
        """Decide whether the open record needs its closing before the records held after
        it, and write them; wait instead while its comment's look-ahead is undecided."""
        before, held = self._open, self._held
        text = b"".join([before.data] + [i.data for i in held])
        expected = before.games + [g for i in held for g in (i.games if i.games is not None else _read(i.data)[0])]
        both, end = _read(text)
        if end.lookahead and not final:
            return
        self._open, self._held = None, []
        if _same(both, expected):
            for item in held:
                self._emit(item, check=False)
            last = held[-1] if held else before
            self._open = last if last.open else None
            return
        # Closed, it reads as itself with the reader between games after it: the records
        # held start afresh (each with its own look at what follows it).
        closed, end = _read(before.data + before.closing) if before.closing else (None, None)
        if closed is None or not end.between or not _same(closed, before.games):
            game = held[0].rec if held else before.rec
            raise RuntimeError(f"{self.path}: game {game.number} of {game.path} and the game before it would "
                               "not read back as themselves")
        self._write(before.closing)
        self.closings += 1
        for item in held:
            self._add(item)

    def _emit(self, item: _Item, check: bool = True) -> None:
        start_line = self.lines + 1
        self._write(item.data)
        self.records += 1
        if item.written is not None:
            item.written(self.records, start_line)
        if check:
            self._open = item if item.open else None

    def _write(self, data: bytes) -> None:
        try:
            self.file.write(data)
        except OSError as exc:  # disk full, closed pipe: the output's fault, named
            raise OutputError(self.path, exc) from None
        self.written += len(data)
        self.lines += count_lines(data)


class SplitWriter:
    """Takes records (the ``on_record`` of a :class:`~chessscan.reports.records.RecordSink`)
    and writes them to ``clean`` or ``rejects`` (paths, ``-`` for stdout, or None for no
    such file). A record is rejected when a diagnostic of it has a severity at or above
    ``fail_on`` (``"error"`` or ``"warning"``). Raises OSError when a file cannot be opened
    or written. Use as a context manager, or call :meth:`close`: the files get their names
    only when closed whole (``close(complete=True)``, or no exception in the ``with`` block).

    ``clean_count`` and ``reject_count``: records written to each (counted even when that
    file is not asked for); ``closed``: games the split closed (see the module doc).
    ``kept``: once closed, the ``.partial`` files left (a split that did not end whole), in
    the order clean, rejects, sidecar.
    """

    def __init__(self, clean: str | None, rejects: str | None, fail_on: str = "error") -> None:
        self._limit = _SEVERITY_RANK[fail_on]
        self._clean = self._rejects = None
        self._sidecar = self._sidecar_file = None
        self._side: tuple[str | None, str] | None = None  # (partial, final) of the sidecar
        self.kept: list[str] = []
        self._outs: list[_Out] = []
        try:
            self._clean = _Out(clean) if clean else None
            self._rejects = _Out(rejects) if rejects else None
            self._outs = [o for o in (self._clean, self._rejects) if o is not None]
            side = sidecar_path(rejects) if rejects else None
            if side:
                if is_special(side):
                    self._side = (None, side)
                    self._sidecar_file = open(side, "w", newline="", encoding="utf-8")
                else:
                    side_partial, self._sidecar_file = files.create_temporary(side, "w", newline="",
                                                                               encoding="utf-8")
                    self._side = (side_partial, side)
                self._sidecar = _GuardedRows(csv.writer(self._sidecar_file))
                self._sidecar.writerow(SIDECAR_COLUMNS)
        except BaseException:
            try:
                self.close(complete=False)
            except OSError:
                pass
            for partial in self.kept:  # nothing in them yet
                files.discard(partial)
            self.kept = []
            raise
        self.clean_count = 0
        self.reject_count = 0

    @property
    def closed(self) -> int:
        return sum(o.closings for o in self._outs)

    def __enter__(self) -> "SplitWriter":
        return self

    def __exit__(self, exc_type, *exc) -> None:
        self.close(complete=exc_type is None)

    def rejected(self, rec: Record) -> bool:
        """Whether ``rec`` has a diagnostic at or above the ``fail_on`` severity (those
        reported once per file included: ``Record.per_file``)."""
        return any(_SEVERITY_RANK.get(d.severity, 9) <= self._limit for d in rec.diagnostics + rec.per_file)

    def __call__(self, rec: Record) -> None:
        if not rec.data:
            return  # an archive given as an input, issues of no game: nothing to copy
        if not self.rejected(rec):
            self.clean_count += 1
            if self._clean is not None:
                self._clean.put(rec)
            return
        self.reject_count += 1
        if self._rejects is not None:
            self._rejects.put(rec, None if self._sidecar is None else lambda n, line: self._sidecar_rows(rec, n, line))

    def _sidecar_rows(self, rec: Record, number: int, start_line: int) -> None:
        """The sidecar's rows of a rejected record, written as number ``number`` from line
        ``start_line`` of the rejects file."""
        game_line = start_line + (rec.line - rec.first_line)
        for d in rec.diagnostics + rec.per_file:
            line = start_line + (d.line - rec.first_line) if d.line is not None else game_line
            column = d.column
            if column is not None and d.line == rec.first_line:
                column -= rec.column - 1  # the game starts its line in the rejects file
            self._sidecar.writerow((number - 1, line, column, game_line, d.severity, d.code, d.ply, d.san,
                                    d.message, d.path, rec.number - 1 if rec.kind == "game" else "",
                                    d.line if d.line is not None else rec.line))

    def close(self, complete: bool = True) -> None:
        """Close the files (stdout is flushed, not closed) and, when ``complete`` and every
        file closed well, give them their names; else they stay ``.partial`` (:attr:`kept`)."""
        if self._clean is None and self._rejects is None and self._sidecar_file is None:
            return  # closed already
        failed = None
        for out in (self._clean, self._rejects):  # the records held are written first
            if out is not None:
                try:
                    out.finish()
                except OutputError as exc:
                    failed = failed or exc
        renames = [(o.partial, o.path) for o in (self._clean, self._rejects) if o is not None and o.partial]
        if self._side is not None and self._side[0]:
            renames.append(self._side)
        closing = [(o.file, o.path) for o in (self._clean, self._rejects) if o is not None]
        if self._sidecar_file is not None:
            closing.append((self._sidecar_file, self._side[1]))
        for file, name in closing:
            try:
                file.close()
            except OSError as exc:  # every file closed, the first failure reported
                failed = failed or OutputError(name, exc)
        self._clean = self._rejects = self._sidecar_file = self._sidecar = self._side = None
        if complete and failed is None:
            for partial, final in renames:
                try:
                    files.commit(partial, final)
                except OSError as exc:
                    failed = failed or OutputError(final, exc)
                    continue
                # What a stopped run kept of this output is superseded (the lock held
                # meanwhile: no other run is writing it).
                for stale in files.temporaries_of(final):
                    if os.path.isfile(stale) and not os.path.islink(stale):
                        files.discard(stale)
        self.kept = [partial for partial, _ in renames if os.path.lexists(partial)]
        if failed is not None:
            raise failed
