"""Open game sources: plain files, gzip, bzip2, zstandard, xz, or stdin.

:func:`open_source` returns a buffered binary stream of *decompressed* bytes.
Compression is recognised by magic bytes first (so a compressed file with the
wrong suffix, or compressed stdin, still works) and by suffix second.
:class:`CountingReader` counts the bytes read from the *underlying* file, so a
progress bar over compressed input can use ``stream.bytes_read`` against
:func:`source_size`.

A truncated or corrupt compressed stream raises :class:`TruncatedInput` from
``read()``; the PGN reader turns it into a ``truncated-input`` issue.

UTF-16 text (what Windows tools such as PowerShell 5's ``>`` write) is recognised by its
byte order mark, or without one by the NULs of its ASCII characters, and handed on
transcoded to UTF-8: the readers parse 8-bit text (PGN standard §4.1).
"""

from __future__ import annotations

import bz2
import codecs
import errno
import gzip
import io
import lzma
import os
import re
import stat
import sys
import zlib
from typing import BinaryIO, Union

import zstandard

try:  # libzstd's own streaming API, through the cffi binding zstandard ships (see _ZstdDirect)
    from zstandard.backend_cffi import ffi as _zstd_ffi, lib as _zstd_lib
except ImportError:  # zstandard built without it, or cffi missing: _ZstdReader does the work
    _zstd_ffi = _zstd_lib = None

from .urls import is_url, open_url, url_size

__all__ = [
    "CountingReader",
    "SourceStream",
    "TruncatedInput",
    "NotText",
    "UnsupportedInput",
    "binary_kind",
    "detect_compression",
    "detect_utf16",
    "open_source",
    "peek_once",
    "peek_stdin",
    "source_name",
    "source_size",
]

PathArg = Union[str, "os.PathLike[str]"]

STDIN = "-"

# Magic numbers: gzip (RFC 1952), bzip2 ("BZh" + block size digit),
# zstd frame (RFC 8878 section 3.1.1), zstd skippable frame (0x184D2A5?, LE).
_GZIP_MAGIC = b"\x1f\x8b"
_BZ2_MAGIC = b"BZh"
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

_SUFFIXES = {".gz": "gzip", ".gzip": "gzip", ".bz2": "bz2", ".zst": "zstd", ".zstd": "zstd", ".xz": "xz"}
_XZ_MAGIC = b"\xfd7zXZ\x00"
# Archives hold files, not a stream of text: they are refused with a clear message.
_ARCHIVES = ((b"PK\x03\x04", "zip"), (b"PK\x05\x06", "zip"), (b"7z\xbc\xaf\x27\x1c", "7z"),
             (b"Rar!\x1a\x07", "rar"))
# A tar member header's magic field, at offset 257 (POSIX.1-1988 ustar; GNU tar).
_TAR_MAGIC = (b"ustar\x00", b"ustar ")


def _is_tar(head: bytes) -> bool:
    """Whether ``head`` starts with a tar member header: the ustar magic at offset 257 and a
    header checksum (octal, bytes 148..155) equal to the sum of the header's 512 bytes with
    the checksum field read as spaces, so that text holding "ustar " there is not taken for one."""
    if len(head) < 512 or head[257:263] not in _TAR_MAGIC:
        return False
    try:
        stored = int(head[148:156].strip(b"\x00 ") or b"-1", 8)
    except ValueError:
        return False
    return stored == sum(head[:148]) + 8 * 32 + sum(head[156:512])


# The shared corpora use `zstd --long=27`; allow any window the format permits.
_ZSTD_MAX_WINDOW = 2**31
_ZSTD_INPUT_CHUNK = 1 << 16
#: Compressed bytes fed to the zstd decoder per call. A call's output is handed on before the
#: next call, so it bounds the memory of decompressing: a zstd block (at most 128 KiB of
#: output) takes at least 4 bytes (an RLE block), so 1 KiB gives at most 32 MiB, whatever
#: the compression ratio (a 100 KB bomb of 1 GiB took 1.4 GiB with 8 KiB fed per call and
#: the output of 64 KiB kept at once). An error loses only the output of its own call. (256
#: bytes, 8 MiB at most, cost 0.12 s more CPU per 390 MB of PGN in Python calls: a fifth of
#: the decoding of a Lichess dump, on the one thread that reads it for every worker.)
ZSTD_INPUT_SLICE = 1024
#: Bytes of output asked of libzstd per call (_ZstdDirect): what an error loses at most.
_ZSTD_OUTPUT_STEP = 1 << 14
_STREAMS_INPUT_CHUNK = 1 << 16
_OUTPUT_BUFFER = 1 << 17


class TruncatedInput(Exception):
    """A compressed stream ended early or is corrupt.

    Raised by ``read()`` on streams returned by :func:`open_source`; the
    message names the source, the compression format and what went wrong.
    Data decompressed before the error has already been returned. ``code``
    is the issue code the readers report it under.
    """

    code = "truncated-input"


class UnsupportedInput(TruncatedInput):
    """An archive (zip, 7z, rar, tar) given as a source: it holds files, not a PGN or EPD text.
    Raised by the first ``read()``, so that a run reports it and goes on with the next
    source."""

    code = "unsupported-input"


class NotText(UnsupportedInput):
    """An input that is not text (a Parquet file, an image, an executable, random bytes):
    refused at open, as an archive is, so that it gives one issue instead of a diagnostic
    for every line of noise."""

    code = "not-text"


def source_name(path: PathArg) -> str:
    """Display name of a source for reports: the path as given, ``'<stdin>'`` for ``'-'``.

    File names are bytes on POSIX; one that is not valid UTF-8 (Latin-1 ``Caf\\xe9.pgn``) comes
    to Python with surrogate escapes, which no text output accepts. Those bytes are written
    as ``\\xNN`` (``'Caf\\\\xe9.pgn'``), so the name is valid text in every table, message and JSON
    document; the file itself is opened by its exact bytes."""
    if isinstance(path, str) and path == STDIN:
        return "<stdin>"
    return display_path(path)


def display_path(path: PathArg) -> str:
    """``path`` as valid text: bytes that are not UTF-8 become ``\\xNN`` escapes."""
    if isinstance(path, bytes):
        return path.decode("utf-8", "backslashreplace")
    text = os.fspath(path)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return os.fsencode(text).decode("utf-8", "backslashreplace")


def source_size(path: PathArg) -> int | None:
    """Size in bytes of the underlying (possibly compressed) file.

    Returns None for stdin (``'-'``) and for anything that is not a regular
    file (pipes, devices), whose size is unknown in advance.
    """
    if isinstance(path, str) and path == STDIN:
        return None
    if is_url(path):
        return url_size(path)
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def detect_compression(head: bytes) -> str | None:
    """Compression format from the first bytes of a stream (6 are enough).

    Returns ``'gzip'``, ``'bz2'``, ``'zstd'``, ``'xz'`` or None (not recognised: plain text).
    """
    if head.startswith(_GZIP_MAGIC):
        return "gzip"
    if head.startswith(_ZSTD_MAGIC):
        return "zstd"
    if len(head) >= 4 and head[1:4] == b"\x2a\x4d\x18" and head[0] & 0xF0 == 0x50:
        return "zstd"  # skippable frame
    if head.startswith(_BZ2_MAGIC) and len(head) >= 4 and head[3:4].isdigit():
        return "bz2"
    if head.startswith(_XZ_MAGIC):
        return "xz"
    return None


_TEXT_B = re.compile(rb"[\t\n\r\x20-\x7e]+")

# Binary formats a curator may give by mistake, by their magic bytes.
_BINARY_MAGIC = ((b"PAR1", "a Parquet file"), (b"ARROW1", "an Arrow IPC file"),
                 (b"SQLite format 3\0", "an SQLite database"), (b"\x89PNG", "a PNG image"),
                 (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"), (b"%PDF", "a PDF document"),
                 (b"\x7fELF", "an executable"), (b"\x93NUMPY", "a NumPy array"))
# Control bytes that no text holds (tab, line ends, form feed, SUB and ESC left out).
_CONTROL_B = re.compile(rb"[\x00-\x08\x0e-\x19\x1c-\x1f]")
_HIGH_B = re.compile(rb"[\x80-\xff]")
#: Bytes looked at to tell text from binary data.
BINARY_SNIFF_BYTES = 4096


def binary_kind(head: bytes) -> str | None:
    """What the (decompressed, not UTF-16) bytes ``head`` are if they are not text: ``'a
    Parquet file'`` and the like for a known magic number, ``'binary data'`` when more than
    5% of the first :data:`BINARY_SNIFF_BYTES` bytes are control characters, or more than 0.5%
    with a quarter of bytes above 0x7f (random or compressed data); None for text. Text
    files in the wild hold a few control characters (EPD suites ending lines with NUL: up
    to 2% of their bytes), and CP1252 or UTF-8 text a few high bytes, never both many."""
    for magic, kind in _BINARY_MAGIC:
        if head.startswith(magic):
            return kind
    sample = head[:BINARY_SNIFF_BYTES]
    if not sample:
        return None
    control = len(_CONTROL_B.findall(sample)) / len(sample)
    high = len(_HIGH_B.findall(sample)) / len(sample)
    if control > 0.05 or (control > 0.005 and high > 0.25):
        return "binary data"
    return None


# What only chess text holds: a tag pair, an EPD/FEN piece placement or a perft-suite keyword
# at a line start, or a SAN move after its number ("12. Nxe5", "3... O-O").
_CHESS_TEXT_B = re.compile(
    rb'(?m)^[ \t]*\[[A-Za-z0-9_]+[ \t]+"'
    rb"|^[ \t]*[pnbrqkPNBRQK1-8]{1,8}(?:/[pnbrqkPNBRQK1-8]{1,8}){7}[ \t]+[wb]\b"
    rb"|^(?:epd|id|perft)[ \t]"
    rb"|(?:^|\s)[1-9][0-9]{0,2}\.(?:\.\.)?[ \t]*(?:[NBRQK]?[a-h]?[1-8]?x?[a-h][1-8](?:=[NBRQ])?|O-O(?:-O)?)"
    rb"[+#]?[ \t\r\n]")
#: Bytes looked at, at the start (and for a plain file the end), for chess text among noise.
CHESS_TEXT_SNIFF_BYTES = 1 << 16


def has_chess_text(sample: bytes) -> bool:
    """Whether ``sample`` holds what only chess text holds (a tag pair, a FEN piece
    placement, a perft-suite line, or a numbered SAN move such as ``12. Nxe5``): noise with
    games after it is read, not refused, so that the games are not lost."""
    return _CHESS_TEXT_B.search(sample) is not None


def detect_utf16(head: bytes) -> str | None:
    """Codec name for the first bytes of (decompressed) text (32 are enough) if it is
    UTF-16: ``'utf-16'`` with a byte order mark (the codec reads it and drops it),
    ``'utf-16-le'`` or ``'utf-16-be'`` without one when every character of the first 16
    (at least 4) is a NUL byte and a printable Latin-1 one (ASCII, or U+00A0..U+00FF as in
    "Café", "Müller"), at least half of them ASCII — as no 8-bit text, however broken,
    plausibly starts. UTF-32 with a byte order mark gives ``'utf-32'``, the same way. Else
    None."""
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "utf-32"  # first: its little-endian mark starts as UTF-16's
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    units = min(len(head), 32) // 2
    if units >= 4:
        even, odd = head[: 2 * units : 2], head[1 : 2 * units : 2]
        if not odd.strip(b"\0") and _latin1_text(even):
            return "utf-16-le"
        if not even.strip(b"\0") and _latin1_text(odd):
            return "utf-16-be"
    return None


_LATIN1_TEXT_B = re.compile(rb"[\t\n\r\x20-\x7e\xa0-\xff]+")


def _latin1_text(low: bytes) -> bool:
    """Whether UTF-16 code units with these low bytes (and NUL high bytes) are printable
    Latin-1 characters, at least half of them ASCII."""
    return _LATIN1_TEXT_B.fullmatch(low) is not None and 2 * len(_TEXT_B.sub(b"", low)) <= len(low)


class CountingReader(io.RawIOBase):
    """Raw binary reader that counts the bytes read from the wrapped file.

    ``bytes_read`` is the number of bytes pulled from the underlying file so
    far (compressed bytes for compressed input). It runs ahead of what the
    consumer has parsed by at most the buffer sizes of the layers above.

    ``expected``: the file's size when it was opened (a regular file). Reaching its end
    with fewer bytes read means the file shrank while it was read (truncated by another
    program): the read after the last data raises :class:`TruncatedInput` naming
    ``name``, instead of ending quietly with games missing.
    """

    def __init__(self, raw: BinaryIO, close_underlying: bool = True, expected: int | None = None,
                 name: str = "input") -> None:
        super().__init__()
        self._raw = raw
        self._close_underlying = close_underlying
        self.bytes_read = 0
        self._first = True
        self._expected = expected
        self._name = name
        self._shrunk = False

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[override]
        if self._shrunk:
            self._shrunk = False
            self._expected = None
            raise TruncatedInput(f"{self._name} shrank while it was read: {self.bytes_read:,} bytes "
                                 f"read of the {self._expected_at_open:,} it held when opened")
        n = self._raw.readinto(b) or 0
        if not n and self._expected is not None and self.bytes_read < self._expected and len(b):
            # End of file before the size seen at open. Raised on the next call, so that
            # the data returned with this end is handed on first.
            self._shrunk = True
            self._expected_at_open = self._expected
            return 0
        if self._first and n:
            # A pipe may deliver a few bytes at a time; fill at least the
            # 8 bytes needed to sniff the magic number.
            self._first = False
            mv = memoryview(b)
            while n < min(8, len(mv)):
                m = self._raw.readinto(mv[n:]) or 0
                if not m:
                    break
                n += m
        self.bytes_read += n
        return n

    def close(self) -> None:
        if not self.closed:
            try:
                if self._close_underlying:
                    self._raw.close()
            finally:
                super().close()


class SourceStream(io.BufferedReader):
    """Buffered binary stream returned by :func:`open_source`.

    Extra attributes: ``compression`` (``'gzip'``, ``'bz2'``, ``'zstd'`` or
    None), ``text_encoding`` (the codec of UTF-16 text handed on as UTF-8, or
    None), ``source`` (display name) and ``bytes_read`` (bytes read so far
    from the underlying file, for progress).

    ``read``/``read1``/``readline`` first return every byte decoded before a
    decompression error, then raise :class:`TruncatedInput` on the next call.
    """

    counter: CountingReader
    compression: str | None
    text_encoding: str | None
    source: str

    @property
    def bytes_read(self) -> int:
        return self.counter.bytes_read

    def _checked(self, data: bytes) -> bytes:
        if not data:
            err = getattr(self.raw, "error", None)
            if err is not None:
                raise err
        return data

    @property
    def refusal(self) -> "UnsupportedInput | None":
        """The error of an input refused at open (an archive, data that is not text),
        raised by the first read; None for a readable stream."""
        return self.raw.error if isinstance(self.raw, _Refused) else None

    def read(self, size: int | None = -1) -> bytes:
        return self._checked(super().read(size))

    def read1(self, size: int = -1) -> bytes:
        return self._checked(super().read1(size))

    def readline(self, size: int | None = -1) -> bytes:
        return self._checked(super().readline(size))


class _DecompressingRaw(io.RawIOBase):
    """Raw reader over a decompressor that maps its errors to TruncatedInput."""

    def __init__(self, inner, fmt: str, source: str, below: io.IOBase) -> None:
        super().__init__()
        self._inner = inner
        self.error: TruncatedInput | None = None
        self._fmt = fmt
        self._source = source
        self._below = below

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[override]
        # On error, first report EOF so the buffered layer above hands out the
        # data it already holds (it would drop it on an exception), then raise.
        if self.error is not None:
            raise self.error
        try:
            if type(self._inner) in (_ZstdDirect, _ZstdReader):  # straight into ``b``, a buffer at a time
                n = self._inner.readinto(b)
                return n
            data = self._inner.read1(len(b))
        except TruncatedInput as exc:
            self.error = exc
            return 0
        except (EOFError, OSError, zlib.error, zstandard.ZstdError, lzma.LZMAError, ValueError) as exc:
            self.error = TruncatedInput(
                f"{self._source}: {self._fmt} stream is truncated or corrupt "
                f"({type(exc).__name__}: {exc}); data after this point is lost"
            )
            self.error.__cause__ = exc
            return 0
        n = len(data)
        b[:n] = data
        return n

    def close(self) -> None:
        if not self.closed:
            try:
                self._inner.close()
                self._below.close()
            finally:
                super().close()


class _Over(io.RawIOBase):
    """A raw reader over another stream (``_below``), closed with it."""

    def __init__(self, below: io.IOBase) -> None:
        super().__init__()
        self._below = below

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        if not self.closed:
            try:
                self._below.close()
            finally:
                super().close()


class _Utf16Raw(_Over):
    """Raw reader of UTF-8 bytes over a stream of UTF-16 text. Bytes that are no UTF-16 (an
    odd last byte, a lone surrogate) become U+FFFD, which the readers then report where it
    stands. A :class:`TruncatedInput` from below is raised after the text before it."""

    def __init__(self, inner: io.BufferedReader, encoding: str) -> None:
        super().__init__(inner)
        self._decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        self._out = memoryview(b"")
        self._done = False
        self._eof_reported = False
        self.error: TruncatedInput | None = None

    def readinto(self, b) -> int:  # type: ignore[override]
        while not self._out and not self._done:
            try:
                data = self._below.read1(_OUTPUT_BUFFER)
            except TruncatedInput as exc:
                self.error = exc
                data = b""
            self._done = not data
            self._out = memoryview(self._decoder.decode(data, self._done).encode("utf-8"))
        if not self._out:
            if self.error is not None and self._eof_reported:
                raise self.error
            # As _DecompressingRaw: EOF first, so that the layer above hands out what it holds
            # (SourceStream then raises the error on the empty read).
            self._eof_reported = True
            return 0
        n = min(len(b), len(self._out))
        b[:n] = self._out[:n]
        self._out = self._out[n:]
        return n


class _Refused(_Over):
    """Raw reader of an input refused at open (``error``): empty, so SourceStream raises
    ``error`` on the first read."""

    def __init__(self, error: TruncatedInput, below: io.IOBase) -> None:
        super().__init__(below)
        self.error = error

    def readinto(self, b) -> int:  # type: ignore[override]
        return 0


class _ZstdReader(io.RawIOBase):
    """Zstandard decoder over any number of concatenated frames.

    Uses one ``decompressobj`` per frame instead of ``stream_reader``:
    ``stream_reader`` silently returns EOF when the input stops in the middle
    of a frame, so a truncated file would go unnoticed. Accepts long windows
    (``max_window_size=2**31``) as written by ``zstd --long=27``.

    A decoding error (a corrupt frame, junk after the last frame) is held
    back until everything decoded before it has been read, then raised.

    Input goes to the decoder :data:`ZSTD_INPUT_SLICE` bytes per call, and each call's output
    is handed on before the next call: at most 32 MiB is held, whatever the compression ratio.
    """

    def __init__(self, src: BinaryIO, source: str) -> None:
        super().__init__()
        self._src = src
        self._source = source
        self._dctx = zstandard.ZstdDecompressor(max_window_size=_ZSTD_MAX_WINDOW)
        self._obj = None  # decompressor of the frame in progress, None between frames
        self._in = memoryview(b"")  # input read; self._in[self._at:] not yet fed to the decoder
        self._at = 0
        self._out = b""
        self._pos = 0
        self._done = False
        self._error: zstandard.ZstdError | None = None  # raised once _out is used up

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:  # type: ignore[override]
        while self._pos >= len(self._out):
            if self._done:
                return b""
            self._fill()
        if size is None or size < 0:
            size = len(self._out) - self._pos
        data = self._out[self._pos : self._pos + size]
        self._pos += len(data)
        return data

    read1 = read

    def readinto(self, b) -> int:  # type: ignore[override]
        # Fills ``b`` from as many decoder calls as it takes: one Python call per buffer, not
        # per slice of input. An error after some output returns that output first; the
        # error comes again on the next call (held in _error, or the same end of input).
        with memoryview(b) as view:
            size, n = len(view), 0
            while n < size:
                if self._pos >= len(self._out):
                    if self._done:
                        break
                    try:
                        self._fill()
                    except Exception:
                        if n:
                            break
                        raise
                    continue
                k = min(size - n, len(self._out) - self._pos)
                view[n:n + k] = memoryview(self._out)[self._pos:self._pos + k]
                self._pos += k
                n += k
            return n

    def _fill(self) -> None:
        # One decoder call per slice of input, until one gives output: what is held at once
        # is one call's output (see ZSTD_INPUT_SLICE). (Most calls give none: a block comes
        # out whole. The loop over slices is kept tight, with locals: it runs ~70,000 times
        # per 390 MB of text.)
        if self._error is not None:
            raise self._error
        step = ZSTD_INPUT_SLICE
        while True:
            if self._at >= len(self._in):
                data = self._src.read(_ZSTD_INPUT_CHUNK)
                if not data:
                    if self._obj is not None:
                        raise TruncatedInput(
                            f"{self._source}: zstd stream ends in the middle of a frame "
                            "(file truncated); data after this point is lost"
                        )
                    self._done = True
                    self._out, self._pos = b"", 0
                    return
                self._in, self._at = memoryview(data), 0
            inp, at, end = self._in, self._at, len(self._in)
            obj = self._obj
            out = []
            try:
                while at < end and not out:
                    piece = inp[at:at + step]
                    at += step
                    while True:
                        if obj is None:
                            obj = self._dctx.decompressobj()
                        got = obj.decompress(piece)
                        if got:
                            out.append(got)
                        if not obj.eof:
                            break
                        piece = obj.unused_data  # the next frame starts here
                        obj = None
                        if not piece:
                            break
            except zstandard.ZstdError as exc:
                self._error = exc
                obj = None
                if not out:
                    self._obj, self._at = obj, at
                    raise
                # Hand out first what the good frames and blocks before it decoded.
            self._obj, self._at = obj, at
            if out:
                self._out = out[0] if len(out) == 1 else b"".join(out)
                self._pos = 0
                return

    def close(self) -> None:
        if not self.closed:
            self._out = b""
            super().close()


class _ZstdDirect(io.RawIOBase):
    """Zstandard decoder over any number of concatenated frames (and skippable frames),
    decoding straight into the caller's buffer with libzstd's ``ZSTD_decompressStream``
    (zstd's manual, "Streaming decompression"), through the cffi binding ``zstandard`` ships.

    What :class:`_ZstdReader` does with Python calls, one per 1 KiB of input, libzstd does
    here in one call per buffer: the output of a call is at most the caller's buffer, so
    the memory of decompressing is bounded by it whatever the compression ratio, and no
    copy is made beyond libzstd's own. (For the ``--jobs`` main process, which reads a dump
    for every worker: 0.05 s of CPU less per 390 MB of text than the Python calls.)

    A stream that ends inside a frame (the last call did not return 0) raises
    :class:`TruncatedInput`; a decoding error (a corrupt block, junk after the last frame)
    raises ``zstandard.ZstdError``. Either is raised on the call after the one that hands
    on what was decoded before it, as :class:`_ZstdReader` does.
    """

    def __init__(self, src: BinaryIO, source: str) -> None:
        super().__init__()
        self._src = src
        self._source = source
        lib = _zstd_lib
        self._dctx = _zstd_ffi.gc(lib.ZSTD_createDCtx(), lib.ZSTD_freeDCtx)
        lib.ZSTD_DCtx_setParameter(self._dctx, lib.ZSTD_d_windowLogMax, _ZSTD_MAX_WINDOW.bit_length() - 1)
        self._in = _zstd_ffi.new("ZSTD_inBuffer *")
        self._out = _zstd_ffi.new("ZSTD_outBuffer *")
        self._held = None  # the cffi view of the input being decoded (kept alive with it)
        self._mid = False  # inside a frame: its end not decoded yet
        self._done = False
        self._error: BaseException | None = None

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:  # type: ignore[override]
        buf = bytearray(_OUTPUT_BUFFER if size is None or size < 0 else size)
        n = self.readinto(buf)
        return bytes(buf[:n])

    read1 = read

    def readinto(self, b) -> int:  # type: ignore[override]
        if self._error is not None:
            raise self._error
        if self._done or not len(b):
            return 0
        lib, inb, out = _zstd_lib, self._in, self._out
        decompress, is_error, dctx, step = lib.ZSTD_decompressStream, lib.ZSTD_isError, self._dctx, _ZSTD_OUTPUT_STEP
        out.dst = _zstd_ffi.from_buffer(b, require_writable=True)
        size, out.pos = len(b), 0
        pos = 0  # out.pos (each read of a cffi field, like each builtin call, costs more than the loop's own steps)
        while pos < size:
            # At most _ZSTD_OUTPUT_STEP bytes a call: libzstd does not say how much a call that
            # fails wrote, so that is what an error loses of the data decoded before it.
            out.size = size if size - pos < step else pos + step
            if inb.pos >= inb.size:
                data = self._src.read(_ZSTD_INPUT_CHUNK)
                if not data:
                    self._done = True
                    if self._mid:
                        self._error = TruncatedInput(
                            f"{self._source}: zstd stream ends in the middle of a frame "
                            "(file truncated); data after this point is lost")
                    break
                self._held = _zstd_ffi.from_buffer(data)
                inb.src, inb.size, inb.pos = self._held, len(data), 0
            ret = decompress(dctx, out, inb)
            if is_error(ret):
                self._error = zstandard.ZstdError(
                    "zstd decompress error: " + _zstd_ffi.string(lib.ZSTD_getErrorName(ret)).decode())
                break
            self._mid = ret != 0
            pos = out.pos
        n = out.pos
        out.dst = _zstd_ffi.NULL  # (``b`` is the caller's: not held past the call)
        if not n and self._error is not None:
            raise self._error
        return n

    def close(self) -> None:
        if not self.closed:
            self._held = None
            super().close()


class _StreamsReader(io.RawIOBase):
    """bzip2 or xz decoder over any number of concatenated streams (as pbzip2 and
    ``xz -T`` write); ``new_decoder`` makes one stream's decoder
    (``bz2.BZ2Decompressor``, ``lzma.LZMADecompressor``).

    ``bz2.BZ2File`` silently stops at a stream that fails to start decoding,
    and ``lzma.LZMAFile`` ignores what follows the last stream, so junk there,
    or a later stream corrupt at its start (and every game in it), would be
    dropped without a word. Here such data raises (OSError or LZMAError,
    mapped to :class:`TruncatedInput` above) once all the data before it has
    been read. NUL padding after a stream is ignored, as :mod:`gzip` does.
    """

    def __init__(self, src: BinaryIO, new_decoder) -> None:
        super().__init__()
        self._src = src
        self._new_decoder = new_decoder
        self._dec = None  # None between streams
        self._in = b""  # input read past the end of the last stream

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:  # type: ignore[override]
        if size is None or size < 0:
            size = _OUTPUT_BUFFER
        while True:
            if self._dec is None:
                data, self._in = self._in, b""
                while True:
                    data = data.lstrip(b"\0")
                    if data:
                        break
                    data = self._src.read(_STREAMS_INPUT_CHUNK)
                    if not data:
                        return b""  # end of input between streams
                self._dec = self._new_decoder()
            elif self._dec.needs_input:
                data = self._src.read(_STREAMS_INPUT_CHUNK)
                if not data:
                    raise EOFError("Compressed file ended before the end-of-stream marker was reached")
            else:
                data = b""
            out = self._dec.decompress(data, size)
            if self._dec.eof:
                self._in = self._dec.unused_data
                self._dec = None
            if out:
                return out

    read1 = read

    def readinto(self, b) -> int:  # type: ignore[override]
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)


# What peek_stdin saw of stdin: [sys.stdin's buffer, the stream it opened (until the next
# open_source('-') takes it), the bytes seen].
_PARKED: list = [None, None, b""]


def peek_stdin() -> bytes:
    """The first bytes of stdin as :func:`open_source` hands them on (decompressed, UTF-16
    transcoded), none of them lost: the stream opened to see them is the one the next
    ``open_source('-')`` returns, and later calls give the same bytes. One block's worth (at
    least a line unless the input is that short); ``b""`` for empty input or when the first
    block is corrupt. Raises OSError if stdin is closed or cannot be read."""
    buffer = getattr(sys.stdin, "buffer", None)
    if _PARKED[0] is not buffer:
        stream = open_source(STDIN)
        try:
            head = stream.peek(1 << 16)
        except TruncatedInput:  # corrupt before its first byte: raised on the second look
            head = b""
        _PARKED[:] = [buffer, stream, head]
    return _PARKED[2]


# What peek_pipe saw of a named pipe (a FIFO, /dev/fd/N of `<(zcat games.pgn.gz)`), which
# gives its bytes once: (path, device, inode) -> [the stream it opened (until the next
# open_source(path) takes it), the bytes seen]. The inode tells a new pipe given the same
# name (/dev/fd/N numbers are reused) from the one looked at.
_PARKED_PIPES: dict = {}


def _pipe_key(path) -> tuple | None:
    """``(path, device, inode)`` of a file that can be read only once: not stdin, a regular
    file or a folder (a FIFO, a character device, a socket); None for any other path."""
    if not isinstance(path, str) or path == STDIN:
        return None
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
        return None
    return (path, st.st_dev, st.st_ino)


def is_pipe(path: str) -> bool:
    """Whether ``path`` names a file that can be read only once (see :func:`peek_pipe`)."""
    return _pipe_key(path) is not None


def peek_pipe(path: str) -> bytes:
    """:func:`peek_stdin` for a named pipe (:func:`is_pipe`): its first bytes, none lost, as
    the next ``open_source(path)`` hands them on. Raises OSError if it cannot be opened."""
    key = _pipe_key(path)
    if key not in _PARKED_PIPES:
        stream = open_source(path)
        try:
            head = stream.peek(1 << 16)
        except TruncatedInput:
            head = b""
        _PARKED_PIPES[key] = [stream, head]
    return _PARKED_PIPES[key][1]


def peek_once(path: str) -> tuple[bytes, "SourceStream | None"]:
    """For stdin (``'-'``) or a named pipe (:func:`is_pipe`), which give their bytes once:
    their first bytes (:func:`peek_stdin`, :func:`peek_pipe`) and the stream that read them,
    which the next ``open_source(path)`` hands on unread (None once it has). Raises OSError
    if the pipe cannot be opened."""
    if path == STDIN:
        return peek_stdin(), _PARKED[1]
    head = peek_pipe(path)
    return head, _PARKED_PIPES[_pipe_key(path)][0]


def open_source(path: PathArg, name: str | None = None) -> SourceStream:
    """Open a game source for reading decompressed bytes.

    ``path`` is a file path (str or PathLike), a URL read through fsspec
    (:mod:`chessscan.readers.urls`), or ``'-'`` for ``sys.stdin.buffer`` (which is not closed
    when the returned stream is). gzip (``.gz``), bzip2
    (``.bz2``, concatenated streams), zstandard (``.zst``, any window size,
    concatenated frames) and xz (``.xz``) are decompressed; the format is taken
    from the magic bytes, else from the suffix, else the data is read as is.

    UTF-16 text (see :func:`detect_utf16`) is transcoded to UTF-8; the stream's
    ``text_encoding`` is then that codec's name, else None. Byte offsets count the bytes handed
    on (decompressed, transcoded), ``bytes_read`` those of the file.

    ``name`` is the source's display name in messages and ``stream.source``
    (default :func:`source_name` of ``path``).

    Returns a :class:`SourceStream` (a ``io.BufferedReader``; use it as a
    context manager). Raises OSError if the file cannot be opened; ``read()``
    raises :class:`TruncatedInput` if compressed data is truncated or corrupt,
    :class:`UnsupportedInput` at once for a zip, 7z, rar or tar archive (tar also compressed).
    """
    name = source_name(path) if name is None else name
    if isinstance(path, str) and path == STDIN:
        buffer = getattr(sys.stdin, "buffer", None)
        if buffer is None:  # started with stdin closed (`<&-`)
            raise OSError(errno.EBADF, "stdin is closed")
        if _PARKED[1] is not None and _PARKED[0] is buffer:
            stream, _PARKED[1] = _PARKED[1], None
            return stream
        counter = CountingReader(buffer, close_underlying=False)
        suffix = ""
    else:
        parked = _PARKED_PIPES.get(_pipe_key(path)) if _PARKED_PIPES else None
        if parked and parked[0] is not None:
            stream, parked[0] = parked[0], None
            return stream
        if is_url(path):  # through its fsspec file system (readers/urls.py)
            raw = open_url(path)
            size = getattr(raw, "size", None)
        else:
            raw = open(path, "rb", buffering=0)
            try:
                st = os.fstat(raw.fileno())
            except OSError:
                st = None
            size = st.st_size if st is not None and stat.S_ISREG(st.st_mode) else None
        counter = CountingReader(raw, expected=size, name=name)
        suffix = os.path.splitext(os.fspath(path))[1].lower()
    head = SourceStream(counter, buffer_size=1 << 16)
    head.counter = counter
    head.source = name
    try:
        magic = head.peek(8)[:8]
        for start, kind in _ARCHIVES:
            if magic.startswith(start):
                refused = SourceStream(_Refused(UnsupportedInput(
                    f"{name} is a {kind} archive: unpack it, then give its files"), head))
                refused.counter, refused.compression, refused.text_encoding = counter, kind, None
                refused.source = name
                return refused
        fmt = detect_compression(magic)
        if fmt is None and magic:
            fmt = _SUFFIXES.get(suffix)
    except BaseException:
        head.close()
        raise
    head.compression = None
    head.text_encoding = None
    if fmt is None:
        return _text(head, head.peek(32)[:32], counter, name)
    if fmt == "gzip":
        inner = gzip.GzipFile(fileobj=head, mode="rb")
    elif fmt == "xz":
        inner = _StreamsReader(head, lzma.LZMADecompressor)
    elif fmt == "bz2":
        inner = _StreamsReader(head, bz2.BZ2Decompressor)
    else:
        inner = (_ZstdDirect if _zstd_lib is not None else _ZstdReader)(head, name)
    out = SourceStream(_DecompressingRaw(inner, fmt, name, head), buffer_size=_OUTPUT_BUFFER)
    out.counter = counter
    out.compression = fmt
    out.source = name
    out.text_encoding = None
    try:
        first = out.peek(32)[:32]
    except BaseException:
        out.close()
        raise
    return _text(out, first, counter, name)


def _tail(stream: SourceStream, counter: CountingReader) -> bytes:
    """The last bytes of a plain regular file (for :func:`has_chess_text`); ``b""`` for a
    compressed stream, stdin or anything that cannot seek."""
    if stream.compression is not None:
        return b""
    name = getattr(getattr(counter, "_raw", None), "name", None)
    if not isinstance(name, (str, bytes)) or not os.path.isfile(name):
        return b""
    try:
        with open(name, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - CHESS_TEXT_SNIFF_BYTES))
            return f.read(CHESS_TEXT_SNIFF_BYTES)
    except OSError:
        return b""


def _text(stream: SourceStream, first: bytes, counter: CountingReader, name: str) -> SourceStream:
    """``stream``, or over it a stream of UTF-8 if it holds UTF-16 text (``first``: its first
    bytes)."""
    encoding = detect_utf16(first)
    if encoding is None:
        try:
            head = stream.peek(CHESS_TEXT_SNIFF_BYTES)
            if _is_tar(head):  # plain or decompressed (.tar.gz, .tgz, .tar.zst)
                refused = SourceStream(_Refused(UnsupportedInput(
                    f"{name} is a tar archive: unpack it, then give its files"), stream))
                refused.counter, refused.compression, refused.text_encoding = counter, stream.compression, None
                refused.source = name
                return refused
            kind = binary_kind(head[:BINARY_SNIFF_BYTES])
            if kind == "binary data" and (has_chess_text(head) or has_chess_text(_tail(stream, counter))):
                kind = None  # noise before (or among) games: the reader reports it and goes on
        except TruncatedInput:
            kind = None  # the reader reports the corrupt stream
        except BaseException:
            stream.close()
            raise
        if kind is None:
            return stream
        refused = SourceStream(_Refused(NotText(
            f"{name} is not text but {kind}: give PGN or EPD files (plain or compressed)"), stream))
        refused.counter, refused.compression, refused.text_encoding = counter, stream.compression, None
        refused.source = name
        return refused
    out = SourceStream(_Utf16Raw(stream, encoding), buffer_size=_OUTPUT_BUFFER)
    out.counter = counter
    out.compression = stream.compression
    out.source = name
    out.text_encoding = encoding
    return out
