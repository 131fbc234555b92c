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
A rejected record with no text (a compressed input cut between games: a game with only its
``truncated-input`` error, which the run counts) is counted as rejected and its rows are
listed with no game_index, line or game_line (it has no place in the rejects file; its source
columns say where it is); nothing is copied.
What already stands at ``FILE.issues.csv`` is replaced only when a split wrote it
(:func:`sidecar_refusal`).
Output compression follows the suffix (``.gz``, ``.bz2``, ``.xz``, ``.zst``/``.zstd``);
``-`` is stdout. Each file is written as a new file ``NAME.<random hex>.partial``
(:mod:`chessscan.reports.files`) and renamed when the split ends whole: a stopped or failed
run leaves only ``.partial`` files (:attr:`SplitWriter.kept` names them).

Game tables (Parquet, Arrow IPC, Feather inputs) are split by row instead
(:class:`TableSplitWriter`): each row, as it stands in its input, goes to a clean or a
rejects table of the inputs' schema, by the same rule.
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

__all__ = ["SIDECAR_COLUMNS", "SplitWriter", "TableSplitWriter", "open_output", "partial_path", "sidecar_path",
           "sidecar_refusal", "table_output_format"]

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


def sidecar_refusal(rejects: str, through: bool = True) -> str | None:
    """Why the rejects' ``FILE.issues.csv`` (:func:`sidecar_path`) may not be written, in
    words, or None when it may. The split writes that name without the user naming it, so
    what stands there is replaced only when a split wrote it: a regular file whose first
    line is the header the split writes (:data:`SIDECAR_COLUMNS`). Anything else (another
    file, a folder, a device) is refused, and so is a link when the split would write
    through it (``through``: the text split, :func:`_open_sidecar`); the table split
    replaces a link, never writing through it."""
    side = sidecar_path(rejects)
    if side is None or not os.path.lexists(side):
        return None
    if os.path.islink(side):
        return "a link, which the split would write through" if through else None
    if not os.path.isfile(side):
        return "a folder" if os.path.isdir(side) else "not a regular file"
    header = ",".join(SIDECAR_COLUMNS).encode()
    try:
        with open(side, "rb") as f:
            first = f.read(len(header) + 2)
    except OSError as exc:
        return f"it cannot be read: {exc.strerror or exc}"
    rest = first[len(header):]  # (the line end: CRLF as the csv module writes it, or LF)
    if not first.startswith(header) or not (rest in (b"", b"\r\n") or rest.startswith(b"\n")):
        return "its first line is not the issues header"
    return None


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
        if not data:  # no text (an input cut between games): nothing to write, its place noted
            self._add(_Item(rec, b"", [], None, written))
            return
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
            last = next((i for i in reversed(held) if i.data), before)
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
        if not item.data:  # no place in the rejects file: its rows have none
            if item.written is not None:
                item.written(None, None)
            return
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
    file is not asked for; a rejected record with no text counts, nothing written);
    ``closed``: games the split closed (see the module doc).
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
            if rejects:
                self._side, self._sidecar_file, self._sidecar = _open_sidecar(rejects, through=True)
        except BaseException:
            _abandon(self)
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
        if rec.kind == "source" or (not rec.data and not self.rejected(rec)):
            return  # an archive given as an input, issues of no game: nothing to copy
        # (A game with no text and an error, an input cut between games, is a rejected game
        # of the run's count: counted, its issues in the sidecar, no text to copy.)
        if not self.rejected(rec):
            self.clean_count += 1
            if self._clean is not None:
                self._clean.put(rec)
            return
        self.reject_count += 1
        if self._rejects is not None:
            self._rejects.put(rec, None if self._sidecar is None else lambda n, line: self._sidecar_rows(rec, n, line))

    def _sidecar_rows(self, rec: Record, number: int | None, start_line: int | None) -> None:
        """The sidecar's rows of a rejected record, written as number ``number`` from line
        ``start_line`` of the rejects file (None, None: a record with no text, not written;
        its rows' game_index, line and game_line are left empty)."""
        game_line = start_line + (rec.line - rec.first_line) if start_line is not None else None
        for d in rec.diagnostics + rec.per_file:
            if start_line is None:
                line = column = None
            else:
                line = start_line + (d.line - rec.first_line) if d.line is not None else game_line
                column = d.column
                if column is not None and d.line == rec.first_line:
                    column -= rec.column - 1  # the game starts its line in the rejects file
            self._sidecar.writerow((None if number is None else number - 1, line, column, game_line,
                                    d.severity, d.code, d.ply, d.san,
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


# ---------------------------------------------------------------------------
# Game tables
# ---------------------------------------------------------------------------
#: Rows a table output holds before writing them out as one row group (or record batch),
#: and the bytes that write them out sooner: the memory of a table split is bounded by
#: these per output, plus the input batch being read.
TABLE_GROUP_ROWS = 65_536
TABLE_GROUP_BYTES = 32 << 20
_TABLE_FORMATS = {".parquet": "parquet", ".pq": "parquet", ".arrow": "arrow", ".feather": "arrow", ".ipc": "arrow"}
_COMPRESSED = (".gz", ".bz2", ".xz", ".zst", ".zstd")


def table_output_format(path: str, input_kind: str) -> str:
    """The format a table split writes ``path`` in: ``'parquet'`` or ``'arrow'`` (an Arrow
    IPC file, i.e. Feather v2), by its suffix (``.parquet``/``.pq``; ``.arrow``,
    ``.feather``, ``.ipc``), else that of the inputs (``input_kind`` as
    :func:`~chessscan.readers.tables.table_kind` gives it; Feather v1 is written as Arrow IPC).
    Raises ValueError for ``-`` and for a compression suffix (the formats compress inside)."""
    lower = path.lower()
    if path == "-":
        raise ValueError("the rows of game tables are written to files: give a file name, not '-'")
    if lower.endswith(_COMPRESSED):
        raise ValueError(f"{path}: the rows of game tables are written as Parquet or Arrow, which compress "
                         "inside: drop the compression suffix")
    for suffix, kind in _TABLE_FORMATS.items():
        if lower.endswith(suffix):
            return kind
    return "parquet" if input_kind == "parquet" else "arrow"


class _TableOut:
    """One table output: a new file under a temporary name (:mod:`chessscan.reports.files`),
    its rows held until :data:`TABLE_GROUP_ROWS` or :data:`TABLE_GROUP_BYTES` and then
    written as one row group (record batch)."""

    def __init__(self, path: str, fmt: str, schema, compression: str | None = None) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        self.path = path
        self.fmt = fmt
        self.schema = schema
        self.rows = 0
        self._held: list = []
        self._held_rows = self._held_bytes = 0
        self.partial, self.file = files.create_temporary(path)
        try:
            self.writer = (pq.ParquetWriter(self.file, schema, compression=compression or "snappy")
                           if fmt == "parquet" else pa.ipc.new_file(self.file, schema))
        except BaseException:
            self.file.close()
            files.discard(self.partial)
            raise

    def put(self, batch) -> None:
        """Add the rows of ``batch`` (a record batch of the output's schema, metadata aside)."""
        if not batch.num_rows:
            return
        self._held.append(batch)
        self._held_rows += batch.num_rows
        self._held_bytes += batch.nbytes
        self.rows += batch.num_rows
        if self._held_rows >= TABLE_GROUP_ROWS or self._held_bytes >= TABLE_GROUP_BYTES:
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa

        if not self._held:
            return
        table = pa.Table.from_batches(self._held, schema=self.schema)
        if self.fmt != "parquet":  # one record batch, not one per input batch (Parquet: one row group)
            table = table.combine_chunks()
        self._held, self._held_rows, self._held_bytes = [], 0, 0
        try:
            self.writer.write_table(table)
        except OSError as exc:  # disk full: the output's fault, named
            raise OutputError(self.path, exc) from None

    def close(self) -> None:
        """Write the rows held and the footer, and close the file. Raises OutputError."""
        failed = None
        try:
            self.flush()
        except OutputError as exc:
            failed = exc
        try:
            self.writer.close()
        except OSError as exc:
            failed = failed or OutputError(self.path, exc)
        try:
            self.file.close()
        except OSError as exc:
            failed = failed or OutputError(self.path, exc)
        if failed is not None:
            raise failed


class TableSplitWriter:
    """The split of game tables (Parquet, Arrow IPC, Feather inputs: one row a game): every
    row goes, as it stands in its input (each column's value, type and the schema's
    metadata), to the ``clean`` or the ``rejects`` table, once, in input order, by the
    rule of :class:`SplitWriter` (a diagnostic at or above ``fail_on``).

    Takes the records of a :class:`~chessscan.reports.records.RecordSink` that reads no
    bytes (:attr:`needs_bytes` False): a game record's number is its row's index in its
    source plus one. The rows are read again from the source, a batch of ``batch_rows`` at
    a time (:func:`~chessscan.readers.tables.row_batches`, every column), and each batch is
    cut in two with pyarrow's ``take``; each output holds at most a row group's worth
    (:data:`TABLE_GROUP_ROWS`, :data:`TABLE_GROUP_BYTES`) before writing it. So memory is
    bounded by the batch and the row groups, not by the tables.

    ``schema``: the inputs' schema (every input has it; :meth:`~pyarrow.Schema.equals`
    without metadata); ``formats``: ``(clean format, rejects format)`` as
    :func:`table_output_format` gives them; ``compression``: the Parquet outputs' codec
    (:func:`~chessscan.readers.tables.parquet_codec`; None: snappy, pyarrow's default);
    ``sources``: display name -> path of every input whose rows the analysis reads (records
    of other sources, a table it could not open, are not copied: no row was read);
    ``batch_rows``: rows read at a time (default :data:`~chessscan.readers.tables.BATCH_ROWS`).
    ``FILE.issues.csv`` beside the rejects lists each rejected row's diagnostics
    (:data:`SIDECAR_COLUMNS`: ``game_index`` and ``line`` are the row's index and number in
    the rejects table, ``column`` as in its input). The files are written under temporary
    names and renamed when closed whole, as :class:`SplitWriter`'s (a link standing at a
    name is replaced, never written through); ``kept`` then names what a split that did not
    end whole left.

    The row of a record that carries ``truncated-input`` (the reader's mark where a
    corrupt table ends: no row of it from there was analyzed) is in neither file, and nor
    are the rows after it; that record, a game of the run's count, is counted as rejected,
    its issues listed with no game_index, line or game_line (it has no row there). A row that the
    split cannot read again though the analysis read it (the file changed, or a column the
    analysis does not read is corrupt) raises OSError.
    """

    needs_bytes = False
    closed = 0  # (no game text to close)

    def __init__(self, clean: str | None, rejects: str | None, fail_on: str, schema, formats: tuple[str, str],
                 sources: dict[str, str], compression: str | None = None, batch_rows: int | None = None) -> None:
        from chessscan.readers.tables import BATCH_ROWS

        self._limit = _SEVERITY_RANK[fail_on]
        self._schema = schema
        self._sources = sources
        self._batch_rows = batch_rows or BATCH_ROWS
        self._clean = self._rejects = None
        self._sidecar = self._sidecar_file = self._side = None
        self.kept: list[str] = []
        self.clean_count = 0
        self.reject_count = 0
        self._reject_rows = 0  # rows written to the rejects table (a rejected game may have none)
        # The source being copied: its name, its batches, the batch in hand, the verdicts of
        # its rows so far (1: rejected), the next row expected, where its reading failed.
        self._name: str | None = None
        self._batches = None
        self._batch = None
        self._index0 = 0
        self._verdicts = bytearray()
        self._next = 0
        self._broken: tuple[int, str] | None = None
        self._done = True  # the source's rows are all accounted for
        try:
            self._clean = _TableOut(clean, formats[0], schema, compression) if clean else None
            self._rejects = _TableOut(rejects, formats[1], schema, compression) if rejects else None
            if rejects:
                self._side, self._sidecar_file, self._sidecar = _open_sidecar(rejects, through=False)
        except BaseException:
            _abandon(self)
            raise

    def __enter__(self) -> "TableSplitWriter":
        return self

    def __exit__(self, exc_type, *exc) -> None:
        self.close(complete=exc_type is None)

    def rejected(self, rec: Record) -> bool:
        """As :meth:`SplitWriter.rejected`."""
        return any(_SEVERITY_RANK.get(d.severity, 9) <= self._limit for d in rec.diagnostics + rec.per_file)

    def __call__(self, rec: Record) -> None:
        if rec.kind != "game" or rec.path not in self._sources:
            return  # issues of no row (an input that could not be read): nothing to copy
        row = rec.number - 1
        if rec.path != self._name or (row == 0 and self._next > 0):  # (a file given twice: read twice)
            self._end_source()
            self._start(rec.path)
        if row != self._next:
            raise RuntimeError(f"{rec.path}: row {row + 1} came before row {self._next + 1}")
        self._next = row + 1
        if any(d.code == "truncated-input" for d in rec.diagnostics):
            # The reader's mark where the table turned out corrupt: the analysis read no row
            # from here on, so none is copied (whatever this reading would find).
            self._cut(decided_only=True)
            self._batches = self._batch = None
            self._broken = (row, "the table is corrupt there")
            # A rejected game of the run's count with no row to copy: its issues have no
            # place in the rejects table.
            if self.rejected(rec):
                self.reject_count += 1
                self._sidecar_rows(rec, None, row)
            return
        while self._batch is None or row >= self._index0 + self._batch.num_rows:
            if not self._load():
                break
        if self._batch is None:
            why = self._broken[1] if self._broken is not None else "the file ends before it"
            raise OSError(f"{rec.path}: row {row + 1} cannot be read again to copy it ({why})")
        rejected = self.rejected(rec)
        self._verdicts.append(rejected)
        if not rejected:
            self.clean_count += 1
            return
        self.reject_count += 1
        self._reject_rows += 1
        self._sidecar_rows(rec, self._reject_rows, row)

    def _sidecar_rows(self, rec: Record, number: int | None, row: int) -> None:
        """The sidecar's rows of a rejected record: ``number`` its row's number in the rejects
        table (None: it has no row there; game_index, line and game_line left empty),
        ``row`` its index in its input."""
        if self._sidecar is None:
            return
        index = None if number is None else number - 1
        for d in rec.diagnostics + rec.per_file:
            self._sidecar.writerow((index, number, d.column, number, d.severity, d.code, d.ply, d.san,
                                    d.message, d.path, row, d.line if d.line is not None else rec.line))

    # -- reading the source again ------------------------------------------------------

    def _start(self, name: str) -> None:
        from chessscan.readers.tables import is_url, row_batches, table_schema

        self._name, self._next, self._broken, self._done = name, 0, None, False
        path = self._sources[name]
        try:
            kind, _, rows = table_schema(path, name)
            # Page by page from a local file: its row groups are not held whole (from an object
            # store, whole: one request per column chunk, not one per page).
            self._batches = row_batches(path, kind, rows, None, None, self._batch_rows, pre_buffer=is_url(path))
        except Exception as exc:  # (TableError, pyarrow's): the rows are checked against it
            self._batches = None
            self._broken = (0, str(exc))

    def _load(self) -> bool:
        """The next batch of the source in hand (the one before written out); False at its
        end or where it cannot be read (``_broken``)."""
        import pyarrow as pa

        self._cut()
        if self._batches is None:
            return False
        try:
            got = next(self._batches, None)
        except (pa.ArrowException, OSError, ValueError) as exc:
            self._broken = (self._index0 + (self._batch.num_rows if self._batch is not None else 0),
                            str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
            self._batches = self._batch = None
            return False
        if got is None:
            self._batches = self._batch = None
            return False
        self._index0, _, self._batch = got
        if not self._batch.schema.equals(self._schema, check_metadata=False):
            raise OSError(f"{self._name} changed while it was read: its schema is not the one read before")
        return True

    def _cut(self, decided_only: bool = False) -> None:
        """Write the batch in hand out: its clean rows to one table, its rejected to the other
        (``decided_only``: those of its rows that have a verdict yet, for a split stopped)."""
        import pyarrow as pa

        batch, verdicts = self._batch, self._verdicts
        if batch is None:
            return
        if decided_only:
            batch = batch.slice(0, len(verdicts))
        if len(verdicts) != batch.num_rows:  # rows of it with no game: not read by the analysis
            raise OSError(f"{self._name} changed while it was read: row {self._index0 + len(verdicts) + 1} "
                          "was not read by the analysis")
        self._batch, self._verdicts = None, bytearray()
        for out, mark in ((self._clean, 0), (self._rejects, 1)):
            if out is None:
                continue
            if verdicts.count(mark) == len(verdicts):
                out.put(batch)
            elif mark in verdicts:
                out.put(batch.take(pa.array([i for i, v in enumerate(verdicts) if v == mark], pa.int32())))

    def _end_source(self) -> None:
        """The source in hand is done: its last batch written out, and nothing left in it
        (every row was a game of the analysis)."""
        if self._done:
            return
        self._done = True
        self._cut()  # (raises when rows of it had no game)
        if self._batches is not None and self._broken is None:
            left = next(self._batches, None)
            self._batches = None
            if left is not None and left[2].num_rows:
                raise OSError(f"{self._name} changed while it was read: it has rows after row {self._next}")

    # -- the end ---------------------------------------------------------------------

    def close(self, complete: bool = True) -> None:
        """Write out what is held, close the files and, when ``complete`` and every file
        closed well, give them their names; else they stay ``.partial`` (:attr:`kept`).
        Raises OSError (the source could not be read to its end) or OutputError."""
        outs = [o for o in (self._clean, self._rejects) if o is not None]
        if not outs and self._sidecar_file is None:
            return  # closed already
        failed = None
        try:
            if complete:
                self._end_source()
            else:  # what was decided before the stop is kept (.partial)
                self._cut(decided_only=True)
        except OSError as exc:
            failed = exc
        self._batches = self._batch = None
        renames = [(o.partial, o.path) for o in outs]
        if self._side is not None:
            renames.append(self._side)
        for out in outs:
            try:
                out.close()
            except OSError as exc:  # every file closed, the first failure reported
                failed = failed or exc
        if self._sidecar_file is not None:
            try:
                self._sidecar_file.close()
            except OSError as exc:
                failed = failed or OutputError(self._side[1], exc)
        self._clean = self._rejects = self._sidecar_file = self._sidecar = self._side = None
        if complete and failed is None:
            for partial, final in renames:
                try:
                    files.commit(partial, final)
                except OSError as exc:
                    failed = failed or OutputError(final, exc)
                    continue
                for stale in files.temporaries_of(final):  # (as SplitWriter.close)
                    if os.path.isfile(stale) and not os.path.islink(stale):
                        files.discard(stale)
        self.kept = [partial for partial, _ in renames if os.path.lexists(partial)]
        if failed is not None:
            raise failed


def _open_sidecar(rejects: str, through: bool):
    """The rejects' ``FILE.issues.csv``, opened with its header written: returns ((partial or
    None, final name), the file, its guarded CSV writer), or three Nones where no sidecar can
    stand (:func:`sidecar_path`). With ``through`` (the PGN split), a
    link or a device (:func:`is_special`) is written through in place; any other name, and
    every name of the table split, through a temporary renamed when whole (files.py)."""
    side = sidecar_path(rejects)
    if side is None:  # stdout or a device: nothing stands beside it
        return None, None, None
    if through and is_special(side):
        partial, handle = None, open(side, "w", newline="", encoding="utf-8")
    else:
        partial, handle = files.create_temporary(side, "w", newline="", encoding="utf-8")
    rows = _GuardedRows(csv.writer(handle))
    rows.writerow(SIDECAR_COLUMNS)
    return (partial, side), handle, rows


def _abandon(writer) -> None:
    """A split writer whose outputs could not all be opened: close what was, and remove the
    temporary files it made (nothing is in them yet)."""
    try:
        writer.close(complete=False)
    except OSError:
        pass
    for partial in writer.kept:
        files.discard(partial)
    writer.kept = []
