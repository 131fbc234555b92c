"""``chessscan validate --clean-output FILE --rejects-output FILE``: the input split in two.

Every record (a game, or an EPD line: see :mod:`chessscan.reports.records`) with no
diagnostic at or above the ``--fail-on`` severity goes to the clean file, every other one to
the rejects file, each copied byte for byte, in input order; the games of several inputs go
to the same two files. Two adjustments keep the outputs readable, and only these: a record
that does not end with a line end (the last game of an input, say) gets an LF, so that the
next one starts on a line of its own; a UTF-8 byte order mark at the start of an input is
kept only at the start of an output file.

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
import lzma
import os
import sys
from typing import BinaryIO

import zstandard

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

    def put(self, rec: Record) -> tuple[int, int]:
        """Write ``rec``; return (its number, the line its data starts on) in this file."""
        data = rec.data or b""
        if self.written and data.startswith(_BOM):
            data = data[3:]
        if data and data[-1:] not in (b"\n", b"\r"):
            data += b"\n"
        start_line = self.lines + 1
        try:
            self.file.write(data)
        except OSError as exc:  # disk full, closed pipe: the output's fault, named
            raise OutputError(self.path, exc) from None
        self.written += len(data)
        self.lines += count_lines(data)
        self.records += 1
        return self.records, start_line


class SplitWriter:
    """Takes records (the ``on_record`` of a :class:`~chessscan.reports.records.RecordSink`)
    and writes them to ``clean`` or ``rejects`` (paths, ``-`` for stdout, or None for no
    such file). A record is rejected when a diagnostic of it has a severity at or above
    ``fail_on`` (``"error"`` or ``"warning"``). Raises OSError when a file cannot be opened
    or written. Use as a context manager, or call :meth:`close`: the files get their names
    only when closed whole (``close(complete=True)``, or no exception in the ``with`` block).

    ``clean_count`` and ``reject_count``: records written to each (counted even when that
    file is not asked for). ``kept``: once closed, the ``.partial`` files left (a split that
    did not end whole), in the order clean, rejects, sidecar.
    """

    def __init__(self, clean: str | None, rejects: str | None, fail_on: str = "error") -> None:
        self._limit = _SEVERITY_RANK[fail_on]
        self._clean = self._rejects = None
        self._sidecar = self._sidecar_file = None
        self._side: tuple[str | None, str] | None = None  # (partial, final) of the sidecar
        self.kept: list[str] = []
        try:
            self._clean = _Out(clean) if clean else None
            self._rejects = _Out(rejects) if rejects else None
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

    def __enter__(self) -> "SplitWriter":
        return self

    def __exit__(self, exc_type, *exc) -> None:
        self.close(complete=exc_type is None)

    def rejected(self, rec: Record) -> bool:
        """Whether ``rec`` has a diagnostic at or above the ``fail_on`` severity."""
        return any(_SEVERITY_RANK.get(d.severity, 9) <= self._limit for d in rec.diagnostics)

    def __call__(self, rec: Record) -> None:
        if not rec.data:
            return  # an archive given as an input, issues of no game: nothing to copy
        if not self.rejected(rec):
            self.clean_count += 1
            if self._clean is not None:
                self._clean.put(rec)
            return
        self.reject_count += 1
        if self._rejects is None:
            return
        number, start_line = self._rejects.put(rec)
        if self._sidecar is None:
            return
        game_line = start_line + (rec.line - rec.first_line)
        for d in rec.diagnostics:
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
