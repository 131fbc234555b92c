"""What the paths given on a command line are: files to read, folders to walk, problems to report.

:func:`resolve_inputs` turns ``chessscan analyze PATH...`` arguments into the sources to read
and the :class:`InputProblem` s of the others, so that one bad path among many is reported
(an ``issues`` row with its own code) while the good ones are analyzed:

* a folder stands for the PGN and EPD files under it (``.pgn``/``.epd``, plain or compressed)
  and its game tables (``.parquet``, ``.arrow``, ``.feather``: :mod:`chessscan.readers.tables`),
  recursively, in sorted order of their paths; hidden files and folders, and report folders
  (holding a chessscan manifest), are left out;
* a URL (``s3://``, ``hf://``, ``https://``...: :mod:`chessscan.readers.urls`) is an object,
  a folder or a glob, listed through its file system;
* a game table is checked whole at once: one with a corrupt footer or no moves column is one
  problem (``truncated-input``, ``unsupported-input``);
* a path that does not exist or cannot be opened is an ``unreadable-input`` error;
* an archive (``unsupported-input``) or data that is not text (``not-text``) is refused
  whole, with one error;
* an input with no bytes, or only white space (a folder with no PGN/EPD file or table), is an
  ``empty-input`` warning (the engines add the same warning for a source that, read whole,
  gave no game or EPD record).

:func:`is_epd_source` tells EPD from PGN: by the ``.epd``/``.pgn`` suffix, else by content
(the first record starts with a FEN piece placement), as for stdin.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Iterable

from .epd import looks_like_epd
from .sources import STDIN, TruncatedInput, is_pipe, open_source, peek_once, peek_pipe, peek_stdin, source_name
from .tables import TABLE_SUFFIXES, TableError, inspect_table, table_kind
from .urls import MissingFileSystem, is_url, list_url

__all__ = ["InputProblem", "resolve_each", "resolve_inputs", "is_epd_source", "INPUT_SUFFIXES", "COMPRESSION_SUFFIXES",
           "REPORT_MANIFEST"]

#: Suffixes of the files a folder contributes (before a compression suffix).
INPUT_SUFFIXES = (".pgn", ".epd")
COMPRESSION_SUFFIXES = (".gz", ".bz2", ".zst", ".zstd", ".xz")
# Bytes looked at to tell EPD from PGN (the first record is one line).
_SNIFF_BYTES = 1 << 16
# A folder holding this file is a report an `analyze` run wrote (reports.writers.MANIFEST_NAME;
# readers import nothing from reports): its tables are not inputs.
REPORT_MANIFEST = ".chessscan-manifest.json"


@dataclass(frozen=True)
class InputProblem:
    """A path that gives no games: ``path`` as given, ``code`` (``unreadable-input``,
    ``not-text``, ``unsupported-input`` or ``empty-input``), ``severity`` and ``message``."""

    path: str
    code: str
    severity: str
    message: str

    @property
    def source(self) -> str:
        """The source name the tables use (``<stdin>`` for ``-``)."""
        return source_name(self.path)


def _base_name(path: str) -> str:
    name = os.path.basename(path).lower()
    for suffix in COMPRESSION_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _wanted(name: str) -> bool:
    """Whether a folder's file ``name`` is an input: PGN or EPD (plain or compressed), or a
    game table."""
    return not name.startswith(".") and (_base_name(name).endswith(INPUT_SUFFIXES)
                                         or name.lower().endswith(TABLE_SUFFIXES))


def _walk(folder: str) -> list[str]:
    found = []
    walked = set()  # real paths: a link to an ancestor, or to a folder read already, is not read again
    for root, dirs, files in os.walk(folder, followlinks=True):  # a linked folder is read, as `find -L`
        real = os.path.realpath(root)
        if real in walked:
            dirs[:] = []
            continue
        walked.add(real)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        if REPORT_MANIFEST in files:  # a report folder: its tables are no input
            dirs[:] = []
            continue
        for f in sorted(files):
            if _wanted(f):
                found.append(os.path.join(root, f))
    return found


def _not_a_file(path: str) -> InputProblem | None:
    """The problem of a folder entry that is there but no regular file (a FIFO: opening it
    waited forever for a writer; a socket, a device); None otherwise. Given by name, such a
    path is read (``<(zcat games.pgn.gz)``)."""
    try:
        st = os.stat(path)
    except OSError:
        return None  # a broken link: _check reports it
    if stat.S_ISREG(st.st_mode):
        return None
    return InputProblem(path, "unreadable-input", "error",
                        "not a regular file (a FIFO, socket or device) in a folder: give it by name to read it")


_BLANK_START = frozenset(b" \t\r\n\x0b\x0c\xef")  # white space, or a UTF-8 byte order mark
_BLANK_READ = 1 << 16


def _only_blank(stream) -> bool:
    """Whether what is left of ``stream`` (an input that starts with white space or a byte
    order mark) is white space only, as empty as a file of no bytes: looks at its first
    64 KiB only, so a long input costs nothing."""
    try:
        head = stream.read(_BLANK_READ)
        if head.startswith(b"\xef\xbb\xbf"):
            head = head[3:]
        return not head.strip() and stream.read(1) == b""
    except TruncatedInput:
        return False  # the reader reports it


def _check(path: str, moves_column: str | None = None) -> InputProblem | None:
    """The problem of one file, URL or of stdin, or None when it can be read."""
    if table_kind(path) is not None:
        try:
            inspect_table(path, moves_column)
        except TableError as exc:
            return InputProblem(path, exc.code, "error", str(exc))
        return None
    try:
        if path == STDIN or is_pipe(path):
            head, stream = peek_once(path)  # read once: the stream looked at is handed on unread
            refusal = stream.refusal if stream is not None else None
            if not head and refusal is None and getattr(getattr(stream, "raw", None), "error", None) is not None:
                return None  # a corrupt compressed stream: the reader reports it
        else:
            with open_source(path) as stream:
                refusal = stream.refusal
                try:
                    head = b"" if refusal else stream.peek(1)
                except TruncatedInput:
                    # Corrupt before its first byte (a bz2 block, say): the stream reported
                    # the error as an end, and raises it on this second look.
                    return None  # the reader reports it
                if not head and refusal is None and getattr(stream.raw, "error", None) is not None:
                    return None  # a corrupt compressed stream: the reader reports it
                if head and refusal is None and head[0] in _BLANK_START and _only_blank(stream):
                    return InputProblem(path, "empty-input", "warning", "blank: nothing but white space in it")
    except OSError as exc:
        reason = exc.strerror or str(exc)
        return InputProblem(path, "unreadable-input", "error", f"cannot be read: {reason}")
    if refusal is not None:
        return InputProblem(path, refusal.code, "error", str(refusal))
    if not head:
        return InputProblem(path, "empty-input", "warning", "empty: no game or position in it")
    return None


def _url_items(url: str, moves_column: str | None) -> list[str | InputProblem]:
    """:func:`resolve_each` for a URL: the object, or the files of a folder or a glob."""
    try:
        files = list_url(url, _wanted, lambda names: REPORT_MANIFEST in [n.rsplit("/", 1)[-1] for n in names])
    except MissingFileSystem as exc:
        return [InputProblem(url, "unreadable-input", "error", str(exc))]
    except Exception as exc:  # (any file system's error: network, credentials, a bad bucket name)
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return [InputProblem(url, "unreadable-input", "error", f"cannot be read: {reason}")]
    if files is None:
        return [InputProblem(url, "unreadable-input", "error", "no such object, folder or match")]
    if not files:
        return [InputProblem(url, "empty-input", "warning",
                             "a folder with no .pgn or .epd file (plain or compressed) or game table in it")]
    out: list[str | InputProblem] = []
    for f in files:
        try:
            out.append(_check(f, moves_column) or f)
        except Exception as exc:  # (as above)
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            out.append(InputProblem(f, "unreadable-input", "error", f"cannot be read: {reason}"))
    return out


def resolve_each(paths: Iterable[str], moves_column: str | None = None) -> list[str | InputProblem]:
    """For ``paths`` (files, folders, URLs, ``'-'`` for stdin), in order: each source to read
    (a path) or the :class:`InputProblem` of a path that gives none (see the module
    docstring). A file given by name is read whatever its suffix; a folder contributes its
    ``.pgn``/``.epd`` files and its game tables. ``moves_column``: the moves column of the
    tables (``--moves-column``). Never raises for a bad path."""
    out: list[str | InputProblem] = []
    for p in paths:
        p = os.fspath(p)
        if is_url(p):
            out.extend(_url_items(p, moves_column))
        elif p != STDIN and os.path.isdir(p):
            files = _walk(p)
            if not files:
                out.append(InputProblem(p, "empty-input", "warning",
                                        "a folder with no .pgn or .epd file (plain or compressed) or game "
                                        "table in it"))
            out.extend(_not_a_file(f) or _check(f, moves_column) or f for f in files)
        elif p != STDIN and not os.path.lexists(p):
            out.append(InputProblem(p, "unreadable-input", "error", "no such file or folder"))
        else:
            out.append(_check(p, moves_column) or p)
    return out


def resolve_inputs(paths: Iterable[str], moves_column: str | None = None) -> tuple[list[str], list[InputProblem]]:
    """:func:`resolve_each`, split: the sources to read, and the problems."""
    items = resolve_each(paths, moves_column)
    return ([i for i in items if not isinstance(i, InputProblem)],
            [i for i in items if isinstance(i, InputProblem)])


_KIND_CACHE: dict[tuple, bool] = {}


def is_epd_source(path: str) -> bool:
    """True if ``path`` holds EPD: ``.epd`` (optionally compressed) means EPD and ``.pgn``
    PGN; any other name, and stdin (``'-'``), is EPD when its first record starts with a FEN
    piece placement (:func:`~chessscan.readers.epd.looks_like_epd`), PGN otherwise. A file
    that cannot be opened counts as PGN (opening it again reports the error)."""
    if path == STDIN:
        try:
            return looks_like_epd(peek_stdin())
        except OSError:
            return False
    name = _base_name(os.fspath(path))
    if name.endswith(".epd"):
        return True
    if name.endswith(".pgn") or table_kind(path) is not None:
        return False
    if is_url(path):
        if path not in _KIND_CACHE:
            try:
                with open_source(path) as stream:
                    head = b"" if stream.refusal else stream.peek(_SNIFF_BYTES)[:_SNIFF_BYTES]
            except (OSError, TruncatedInput):
                head = b""
            _KIND_CACHE[path] = looks_like_epd(head)
        return _KIND_CACHE[path]
    if is_pipe(path):
        try:
            return looks_like_epd(peek_pipe(path))
        except OSError:
            return False
    try:
        st = os.stat(path)
        key = (os.path.realpath(path), st.st_size, st.st_mtime_ns)
    except OSError:
        return False
    if key not in _KIND_CACHE:
        try:
            with open_source(path) as stream:
                head = b"" if stream.refusal else stream.peek(_SNIFF_BYTES)[:_SNIFF_BYTES]
        except OSError:
            return False
        except TruncatedInput:  # corrupt before its first byte: either reader reports it
            head = b""
        _KIND_CACHE[key] = looks_like_epd(head)
    return _KIND_CACHE[key]
