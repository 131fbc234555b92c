# cython: boundscheck=True, wraparound=True
# (checked indexing here, unlike the rest of the compiled core: this module indexes from the end)
"""Streaming PGN reader: split a PGN stream into games and tokenize them.

Follows the PGN standard (Steven J. Edwards, 1994): import format (§3.1),
comments (§5), escape lines (§6), tokens (§7), tag pairs (§8.1), movetext
(§8.2) with recursive annotation variations (§8.2.5), NAGs (§8.2.4, §10) and
game termination markers (§8.2.6). It knows nothing of chess rules: SAN tokens
are kept as written (check ``+``/mate ``#`` suffixes included) for a later
stage to replay; only tokens that cannot be a move at all are rejected.

Comments (§5): ';' runs to the end of the line, '{' to the next '}', whatever
the brace comment holds (blank lines and tag lines too). Comments may stand in
the tag section (after a tag, between tag pairs, on lines of their own): the
tag section goes on through them, unless the tag after them starts a game (an
Event tag, or a tag the section already has).

An unclosed '{' would swallow the rest of the file. So when an open comment
meets a would-be game start (a blank line, then a line beginning with a tag),
the reader keeps the following lines in a look-ahead of at most
``_LOOKAHEAD_BYTES``: if the comment's '}' comes with no '{' from the
would-be start up to it, and before a second would-be start, it was one
comment (valid, no issue). Otherwise (a '{' first: comments do not nest, so
its '}' closes that comment, of the game starting there; a second would-be
start; the end of the input; or the look-ahead exhausted) the comment was
never closed: the game ends before the first would-be start with an
``unclosed-comment`` error, and reading goes on from that line. A text cut
at a would-be start may therefore be read apart only if its first part does
not end inside a comment: :class:`ReadEnd` tells.

Reader errors in the movetext carry the ply at which they stand (the
main-line moves read before them, plus one).

Speed: games are split off line by line with ``bytes`` methods (no
per-character Python loop); comments are blanked with one regex per line.
In the common case the comment-free movetext is then split on whitespace and
every token looked up in a small cache of known move/move-number tokens,
so reading costs a few C calls per game. Games with RAVs, NAGs, glyphs or
anything unusual go through a general regex token loop (``_scan_movetext``),
which is also what :meth:`RawGame.locate` uses. Compiled (Cython pure Python
mode, types in ``pgn.pxd``), the line loop keeps its counters and flags in C
variables, and line ends, tag line ends and termination marker candidates are
found with ``memchr``; uncompiled, the same code uses ``bytes`` methods.
"""

from __future__ import annotations

import os
import re
from typing import BinaryIO, Iterator, NamedTuple, Union

try:
    import cython
except ImportError:  # uncompiled, without Cython installed
    from chessscan.core import _cython_shim as cython

if cython.compiled:
    from cython.cimports.libc.string import memchr, memcmp

from .counts import line_ends
from .movetext import (_COMMENTS_B, _STRIP_B, NOTE_HOURS_DIGITS, NOTE_PAWN_DIGITS, RESULTS as _RESULTS,
                       TAG as _TAG, TAG_NAME as _TAG_NAME, blank_comments, comment_notes, fast_keys, fast_keys_notes, game_line_reader, key_list,
                       key_text, new_note_reader, read_notes, san_keys, tag_pairs)
from .sources import TruncatedInput, open_source, source_name

__all__ = ["RawGame", "ReaderIssue", "ReadEnd", "read_games", "ISSUE_CODES", "MAX_GAME_BYTES", "sure_game_start",
           "last_sure_game_start", "line_at", "count_line_ends"]

#: Issue codes and their severities.
ISSUE_CODES = {
    "unclosed-comment": "error",
    "unbalanced-variation": "error",
    "missing-result": "warning",
    "bad-tag": "error",
    "unexpected-token": "error",
    "duplicate-tag": "warning",
    "missing-tags": "warning",
    "decode-fallback": "warning",
    "truncated-input": "error",
    "unsupported-input": "error",
    "not-text": "error",
    "game-too-long": "error",
    "game-in-comment": "warning",
    "malformed-annotation": "warning",
}


class ReaderIssue(NamedTuple):
    """A problem found while reading a game.

    ``severity`` is ``'error'`` or ``'warning'``; ``line`` is 1-based in the
    decompressed source; ``column`` is 1-based (characters) or None when the
    issue concerns the whole game. ``ply``: for an error in the movetext, the
    1-based ply at which it stands (the main-line moves read before it, plus
    one: the ply the offending token would have been); None for the tag
    section, warnings and whole-game issues.
    """

    code: str
    severity: str
    line: int
    column: int | None
    message: str
    ply: int | None = None


def _quoted(text: str) -> str:
    """``text`` between single quotes, as written: a message is read as text, and Python's
    repr would double every backslash (and every output format escapes once more)."""
    return f"'{text}'"


def _issue(code: str, line: int, column: int | None, message: str, ply: int | None = None) -> ReaderIssue:
    return ReaderIssue(code, ISSUE_CODES[code], line, column, message, ply)


class RawGame:
    """One game as read from the source, before any chess-rule checking.

    Fields:
      source: display name of the source.
      index: 0-based game number in the source.
      byte_offset: offset of the game's first byte in the *decompressed* stream.
      line: 1-based line number of the game's first line.
      tags: tag pairs in file order, values unescaped (§8.1); first of duplicates kept.
      sans: main-line move tokens (move numbers, glyphs, ``e.p.`` removed;
        ``+``/``#`` kept; null moves kept as written).
      keys: the same tokens as 64-bit SAN keys, 8 bytes each
        (:func:`chessscan.readers.movetext.fast_keys`): what the per-ply loop reads. Plain
        movetext is read into keys only, ``sans`` made from them when asked for.
      result: termination marker (``1-0``, ``0-1``, ``1/2-1/2``, ``*``) or None.
      movetext_line: 1-based line where the movetext begins (0 if there is none).
      variations: RAVs skipped (nested ones counted).
      comments: brace and rest-of-line comments (including those inside RAVs).
      nags: NAGs (``$n``) plus move-suffix/standalone glyphs (``!``, ``?!``, ``+-``...).
      issues: list of :class:`ReaderIssue`.
      first_comment: a brace comment before the first move (or before the tag
        section, like the pgn-extract file comment), else None.
      notes: the main-line moves' clock, move time and evaluation annotations
        (:func:`chessscan.readers.movetext.read_notes`: 4 int64 per ply, bytes), or None
        when no comment after a main-line move holds one.
    """

    # Compiled, an extension type (pgn.pxd): its fields are C struct members.
    __slots__ = (
        "source", "index", "byte_offset", "line", "tags", "_sans", "_keys", "result",
        "movetext_line", "variations", "comments", "nags", "issues",
        "first_comment", "_mt", "_codec", "_tags", "_tag_line", "notes",
    )

    def __init__(
        self,
        source: str,
        index: int,
        byte_offset: int,
        line: int,
        tags: dict[str, str],
        sans: list[str] | None,
        result: str | None,
        movetext_line: int,
        variations: int = 0,
        comments: int = 0,
        nags: int = 0,
        issues: list[ReaderIssue] | None = None,
        first_comment: str | None = None,
        _mt: bytes = b"",
        _codec: str = "utf-8",
        _tags: bytes | list[bytes] = b"",
        _tag_line: int = 0,
        _keys: bytes | None = None,
        notes: bytes | None = None,
    ) -> None:
        self._fill(source, index, byte_offset, line, tags, sans, result, movetext_line, variations, comments, nags,
                   issues, first_comment, _mt, _codec, _tags, _tag_line, _keys, notes)

    def _fill(self, source, index, byte_offset, line, tags, sans, result, movetext_line, variations, comments, nags,
              issues, first_comment, _mt, _codec, _tags, _tag_line, _keys, notes) -> None:
        """:meth:`__init__`'s work, every argument given (the reader calls it on a new game:
        compiled, a C call storing into C fields, without ``__init__``'s argument passing)."""
        self.source = source
        self.index = index
        self.byte_offset = byte_offset
        self.line = line
        self.tags = tags
        self._sans = sans if sans is not None or _keys is not None else []
        self._keys = _keys
        self.result = result
        self.movetext_line = movetext_line
        self.variations = variations
        self.comments = comments
        self.nags = nags
        self.issues = issues if issues is not None else []
        self.first_comment = first_comment
        self._mt = _mt
        self._codec = _codec
        self._tags = _tags          # the tag section's text or its lines, for tag_line()
        self._tag_line = _tag_line  # its first line (0: none)
        self.notes = notes

    @property
    def sans(self) -> list[str]:
        """The main-line move tokens as str (made from :attr:`keys` on first use; equal moves
        share one str)."""
        if self._sans is None:
            texts: dict[int, str] = {}
            self._sans = [texts.get(k) or texts.setdefault(k, key_text(k)) for k in key_list(self._keys)]
        return self._sans

    @sans.setter
    def sans(self, value: list[str]) -> None:
        self._sans = value
        self._keys = None

    @property
    def keys(self) -> bytes:
        """The main-line move tokens as SAN keys, 8 bytes each (a token of no key: its
        ``LOOSE_KEY | index``; :mod:`chessscan.readers.movetext`)."""
        if self._keys is None:
            self._keys = san_keys(self._sans)
        return self._keys

    @property
    def plies(self) -> int:
        """The number of main-line move tokens."""
        return len(self._keys) // 8 if self._sans is None else len(self._sans)

    def __repr__(self) -> str:
        return (
            f"RawGame(source={self.source!r}, index={self.index}, line={self.line}, "
            f"byte_offset={self.byte_offset}, tags={len(self.tags)}, plies={self.plies}, "
            f"result={self.result!r}, issues={[i.code for i in self.issues]})"
        )

    def locate(self, ply_index: int) -> tuple[int, int | None]:
        """(line, column), both 1-based, of ``sans[ply_index]`` in the source.

        Re-scans the kept movetext with the tokenizer that read it, so it
        costs about as much as reading the game again; meant for error
        reports only. Raises IndexError only if ``ply_index`` is not a valid
        index of ``sans``. Should the scan not find the ply (reading and
        locating disagreeing: a bug), it returns the movetext's first line
        and column None rather than raising.
        """
        n = self.plies
        if ply_index < 0:
            ply_index += n
        if not 0 <= ply_index < n:
            raise IndexError(f"ply {ply_index} out of range (game has {n} plies)")
        text = _movetext_str(self._mt, self._codec)
        pos = _scan_movetext(text, self.movetext_line, ply_index)[-1]
        if pos < 0:  # cannot happen while reading and locating agree
            return (self.movetext_line or self.line), None
        return _line_col(text, pos, self.movetext_line)

    def tag_line(self, name: str) -> tuple[int, int | None]:
        """(line, column), both 1-based, of the first tag pair named ``name`` (its ``[``);
        the game's first line and column None when the game has no such tag. For reports
        only: it searches the kept tag section text. Raises nothing."""
        if self._tags:
            text = b"".join(self._tags) if type(self._tags) is list else self._tags
            m = re.compile(r"\[\s*" + re.escape(name) + r'\s*"').search(_movetext_str(text, self._codec))
            if m is not None:
                return _line_col(m.string, m.start(), self._tag_line)
        return self.line, None

    def rebase(self, index0: int, offset0: int, line0: int) -> "RawGame":
        """Shift a game read from the middle of a source to its place in the whole source:
        ``index0`` games, ``offset0`` decompressed bytes and ``line0`` lines came before the
        part it was read from (which must start at a line start). Returns ``self``."""
        self.index += index0
        self.byte_offset += offset0
        self.line += line0
        if self.movetext_line:
            self.movetext_line += line0
        if self._tag_line:
            self._tag_line += line0
        if self.issues:
            self.issues = [i._replace(line=i.line + line0) for i in self.issues]
        return self


# --------------------------------------------------------------------------
# Regexes. Line-level ones work on bytes (every PGN delimiter is ASCII, so
# this is valid for UTF-8, cp1252 and latin-1 alike); per-game ones on str.

_BOM = b"\xef\xbb\xbf"
_JUNK = bytes(range(33)) + b"\x7f"  # whitespace and control characters
_TAG_END = (b"]\n", b"]\r\n", b"]\r", b"]")
#: Bytes of text read at once. Each read is a new bytes object: at 1 MiB, glibc's allocator
#: gave the heap's top back to the kernel as chunks were freed, and later chunks were faulted
#: in afresh (10,000 Lichess games: the heap shrank by 10 MiB in 5 steps, 2,830 more page
#: faults, ~3% of `validate`'s CPU); at 256 KiB it shrinks by 0.8 MiB once. (A read above
#: the stream's 128 KiB buffer goes straight into the new object.)
_CHUNK = 1 << 18
#: The most bytes of text one game may hold (tag section and movetext, comments included;
#: one line too). The longest game FIDE's rules allow (75-move rule, art. 9.6.2) is about
#: 17,700 plies, under 1 MiB with a clock and an evaluation comment at every ply. A game
#: over the cap keeps its whole lines up to it and is reported (``game-too-long``); the rest
#: of its text is read past to where the game ends but not kept, and the rest of a line
#: over the cap is dropped. This bounds the memory of reading one game.
MAX_GAME_BYTES = 4 << 20
# How far an open comment's look-ahead reads past a would-be game start for the comment's
# '}' (module doc): a quoted game with its comments fits; a swallowed file does not.
_LOOKAHEAD_BYTES = 1 << 16

_TAGS_PREFIX_B = re.compile((r"(?:[ \t]*" + _TAG + r")+").encode())
_TAG_START_B = re.compile((r'[ \t]*\[[ \t]*(' + _TAG_NAME + r')[ \t]+"').encode())
# A line holding only an Event tag (the first tag of a game, §8.1.1) inside an unclosed
# comment: a game the comment may have swallowed.
_EVENT_LINE_RE = re.compile(r'(?m)^[ \t]*\[[ \t]*Event[ \t]+"[^"\\\r\n]*"[ \t]*\][ \t]*\r?$')
_TAG_NAME_B = re.compile((r"[ \t]*\[[ \t]*(" + _TAG_NAME + r")").encode())
_TAG_AT_RE = re.compile(r"\s*" + _TAG)
# A line ending inside a tag pair (§7: its tokens may stand on several lines): after any
# whole pairs, '[', maybe the name and the value, but not the ']'.
_TAG_OPEN_RE = re.compile(r'(?:\s*' + _TAG + r')*\s*\[\s*(?:' + _TAG_NAME
                          + r'(?:\s*"[^"\\\r\n]*(?:\\.[^"\\\r\n]*)*")?)?\s*')
_TAGS_RE = re.compile(r'(?:\s*' + _TAG + r')+')
_TAG_LENIENT_RE = re.compile(r"\s*\[\s*(" + _TAG_NAME + r')\s*"(.*)"\s*\]\s*')
_UNESCAPE_RE = re.compile(r'\\(["\\])')

# §8.2.6 termination markers. A marker must start a token: preceded by
# whitespace, a delimiter or a move number's period (comments are replaced
# by a space before this is applied at the line level).
_RES = r"(?<![^\s(){}.])(?:1-0|0-1|1/2-1/2)(?![A-Za-z0-9_/.-])|\*"
_RESULT_B = re.compile(_RES.encode())
_RESULT_BY_LAST = {t[-1]: t for t in _RESULTS}  # the markers differ in their last byte
_PAREN_RES_B = re.compile(rb"[()]|" + _RES.encode())
# (_STRIP_B, _COMMENTS_B: comments, §5 and §8.2.5, as chessscan.readers.movetext reads them.)
_NOT_LINE_END_B = re.compile(rb"[^\r\n]")
_STRUCT_B = re.compile(rb"\{[^}]*\}?|;[^\r\n]*|[()]|" + _RES.encode())
# An escape line (§6) is a '%' in column 0 outside a brace comment: inside
# one, the reader keeps the line as comment text. Brace and ';' comments are
# matched too, so that a '%' line is only seen where the reader sees it.
_ESCAPE_LINE_B = re.compile(rb"(?m)\{[^}]*\}?|;[^\n]*|^%[^\n]*")
_FIRST_COMMENT_B = re.compile(rb"\s*\{([^}]*)\}")
# For sure_game_start: a termination marker as the last token of a line (the reader's rule:
# a number marker is preceded by whitespace, a delimiter or a period; '*' anywhere).
_ENDS_WITH_RESULT_B = re.compile(rb"(?:(?<![^\s(){}.])(?:1-0|0-1|1/2-1/2)|\*)\Z")

# Slow path tokenizer; every non-space character belongs to some alternative.
_DELIM = r"(?=[\s(){};$*]|\Z)"
_TOK_RE = re.compile(
    r"(\{[^}]*\}?)"                                      # 1 brace comment (maybe unclosed)
    r"|(;[^\n]*)"                                        # 2 rest-of-line comment
    r"|([()])"                                           # 3 RAV delimiters
    r"|(\$\d*)"                                          # 4 NAG
    r"|((?:1-0|0-1|1/2-1/2)(?![A-Za-z0-9_/.-])|\*)"      # 5 termination marker
    r"|(0000" + _DELIM + r")"                            # 6 UCI null move, not a move number
    r"|(\d+(?:\s*[.\u2026]+|" + _DELIM + r")|[.\u2026]+)"  # 7 move number indication
    r"|([^\s{}();$*]+)"                                  # 8 symbol: move, glyph or junk
    r"|(\})"                                             # 9 stray close brace
)
# Loose move shape: SAN (§8.2.3), long algebraic, UCI, drops, castling with
# O or 0, null moves. Group 1 is kept, group 2 (e.p.) dropped, group 3 is a
# suffix annotation glyph (§8.2.3.8), dropped and counted as a NAG.
_MOVE_RE = re.compile(
    r"((?:P?[a-h]?[1-8]?[-x:]?[a-h][1-8](?:=?[NBRQKnbrqk])?"
    r"|[NBRQK][a-h]?[1-8]?[-x:]?[a-h][1-8]"
    r"|[PNBRQK]?@[a-h][1-8]"
    r"|[O0o]-[O0o](?:-[O0o])?"
    r"|--|Z0|0000|@@@@)"
    r"(?:\+\+?|#)?)"
    r"((?:e\.?p\.?)?)"
    r"([!?]{1,2})?"
)
_EP_MARKS = frozenset({"e.p.", "e.p", "ep", "ep."})
# Standalone annotation symbols (§8.2.3.8 glyphs and their common textual
# NAG equivalents used by ChessBase and others).
_GLYPHS = frozenset(
    "! ? !! ?? !? ?! +- -+ +/- -/+ +/= =/+ += =+ = ~ ~= =~ inf N RR TN D "
    "\u00b1 \u2213 \u2a72 \u2a71 \u221e \u25a1 \u203c \u2047 \u2049 \u2048 \u2206 \u0394 "
    "\u2191 \u2192 \u21c6 \u27f3 \u2295 \u2a01 \u25cb \u2a00 =\u221e \u221e= +\u2212 \u2212+".split()
)


# --------------------------------------------------------------------------


def read_games(
    path_or_stream: Union[str, "os.PathLike[str]", BinaryIO],
    source: str | None = None,
    end: ReadEnd | None = None,
) -> Iterator[RawGame]:
    """Yield the games of a PGN source one by one, streaming.

    ``path_or_stream`` is a path (``'-'`` for stdin; compressed files are
    handled by :func:`~chessscan.readers.sources.open_source`) or an open
    binary stream (a text stream is read and re-encoded as UTF-8). ``source``
    overrides the display name stored in each game. ``end``, if given, is
    filled in once the source is exhausted (see :class:`ReadEnd`).

    Memory stays flat: the source is read in 1 MiB chunks and only the
    current game is held, at most :data:`MAX_GAME_BYTES` of it (the rest is
    reported as ``game-too-long``). Games are split (PGN §8.2.6 and §8.1): a
    game ends at its termination marker outside comments and RAVs, at a new tag
    section, or at end of input; movetext without a tag section starts a game
    (``missing-tags``). Comments (PGN §5) may stand between tag pairs, and a
    brace comment may hold anything but '}' (a tag section included: see the
    module doc for how an unclosed one is told apart). Problems never raise:
    they become :class:`ReaderIssue` entries on the game concerned (codes in
    :data:`ISSUE_CODES`). A truncated or corrupt compressed source ends the
    current game with a ``truncated-input`` error; if the cut falls between
    games, an empty game carrying only that issue is yielded.

    Raises OSError only if ``path_or_stream`` cannot be opened.
    """
    if isinstance(path_or_stream, (str, os.PathLike)):
        name = source if source is not None else source_name(path_or_stream)
        with open_source(path_or_stream) as stream:
            yield from _read_stream(stream, name, end)
    else:
        if source is None:
            nm = getattr(path_or_stream, "name", None)
            source = nm if isinstance(nm, str) else "<stream>"
        yield from _read_stream(path_or_stream, source, end)


def _cut_between_tokens(line: bytes, cap: int) -> int:
    """How much of a line longer than ``cap`` bytes to keep: up to its last space or tab
    within the first ``cap`` bytes, so that no token is cut in two (``O-O-O`` cut after
    ``O-O`` would be another move; ``exd8=Q`` cut to ``exd8`` an illegal one); ``cap`` when
    the cut falls just before a space or tab, or the first ``cap`` bytes hold none."""
    if line[cap] == 32 or line[cap] == 9:
        return cap
    k = max(line.rfind(b" ", 0, cap), line.rfind(b"\t", 0, cap))
    return k + 1 if k >= 0 else cap


class _Span:
    """The complete lines of one chunk read, made one by one as they are read (compiled, a C
    iterator; no list of all of them): ``head`` first unless None (a line begun in earlier
    chunks and ended in this one), then the lines of ``buf[pos:end]``, which begins and ends
    at line starts, split as ``bytes.splitlines(True)`` splits them (\\n, \\r\\n, \\r)."""

    # Compiled, an extension type (pgn.pxd).
    __slots__ = ("head", "buf", "pos", "end", "cr", "gap", "at", "skipped")

    def __init__(self, head, buf: bytes, pos: int, end: int) -> None:
        self.head = head
        self.buf = buf
        self.pos = pos
        self.end = end
        self.cr = -1  # offset of the next '\r' at or after pos (end: none); -1: not looked for yet
        self.gap = False
        self.at = -1  # where the line given last begins (-1: it was the head, or none yet)
        self.skipped = 0

    def __iter__(self):
        return self

    def __next__(self) -> bytes:
        cython.declare(i=cython.Py_ssize_t, e=cython.Py_ssize_t)
        line = self.head
        if line is not None:
            self.head = None
            return line
        i = self.pos
        if i >= self.end:
            raise StopIteration
        e = self._line_end(i)
        self.pos = e
        self.at = i
        if cython.compiled:
            return cython.cast(cbytes, self.buf)[i:e]
        return self.buf[i:e]

    def _line_end(self, i: int) -> int:
        """The offset after the line end of the line starting at ``i`` (< ``end``)."""
        n = self.end
        if cython.compiled:
            p = cython.cast(cbytes, self.buf)
            q = cython.cast(cbytes, memchr(p + i, 10, n - i))
            lf = n if q == cython.NULL else q - p
            if self.cr < i:
                q = cython.cast(cbytes, memchr(p + i, 13, n - i))
                self.cr = n if q == cython.NULL else q - p
            if self.cr < lf:
                e = self.cr + 1
                return e + 1 if e < n and p[e] == 10 else e
            return lf + 1 if lf < n else n
        lf = self.buf.find(b"\n", i, n)
        if lf < 0:
            lf = n
        if self.cr < i:
            self.cr = self.buf.find(b"\r", i, n)
            if self.cr < 0:
                self.cr = n
        if self.cr < lf:
            e = self.cr + 1
            return e + 1 if e < n and self.buf[e] == 10 else e
        return lf + 1 if lf < n else n

    def take_tag_lines(self, lines: list, line: bytes) -> int:
        """Append to ``lines`` the tag line ``line`` (beginning with '[' after any whitespace,
        ending with ']' before its line end) that the line loop of :func:`_read_stream` has
        just read, with the lines that come next while each is one that loop in a tag section
        would only append: a line beginning with '[' and ending with ']' before its line end
        (a tag line; only while no blank line came), or a blank one (ASCII whitespace only).
        Returns how many lines came after ``line``; ``self.gap`` tells whether a blank line
        came. When ``line`` is the line this span gave last, it and those after it are one
        bytes object (whole lines: :func:`_tag_line_list` gives them back one by one), so a
        tag section is one object, not one per line; else ``line``, then the others as one."""
        taken = 0
        gap = False
        buf = self.buf
        start = self.pos
        if cython.compiled:
            p = cython.cast(cbytes, buf)
            while self.pos < self.end:
                i = self.pos
                c = p[i]
                if c == 91 and not gap:
                    e = self._line_end(i)
                    if not _ends_tag_c(p + i, e - i):
                        break
                elif c <= 32:
                    e = self._line_end(i)
                    j = i
                    while j < e and (p[j] == 32 or 9 <= p[j] <= 13):
                        j += 1
                    if j < e:
                        break
                    gap = True
                else:
                    break  # (most often the movetext: its end is not looked for twice)
                self.pos = e
                taken += 1
            # The line given last, unchanged (not a head, not one the loop made anew).
            n = len(line)
            if self.at >= 0 and start - self.at == n and memcmp(p + self.at, cython.cast(cbytes, line), n) == 0:
                if taken:
                    lines.append(p[self.at:self.pos])
                else:
                    lines.append(line)
            else:
                lines.append(line)
                if taken:
                    lines.append(p[start:self.pos])
            self.gap = gap
            return taken
        while self.pos < self.end:
            i = self.pos
            e = self._line_end(i)
            kind = _tag_line_kind(buf, i, e)
            if kind == 0 or (kind == 1 and gap):
                break
            if kind == 2:
                gap = True
            self.pos = e
            taken += 1
        if self.at >= 0 and buf[self.at:start] == line:
            lines.append(buf[self.at:self.pos] if taken else line)
        else:
            lines.append(line)
            if taken:
                lines.append(buf[start:self.pos])
        self.gap = gap
        return taken


    def skip_blank_lines(self) -> int:
        """Move past the lines that come next while each is one the line loop of
        :func:`_read_stream` passes between games: its first byte whitespace or a control
        character, and no byte but those (:func:`_has_text`). Returns how many lines;
        ``self.skipped`` is their length in bytes (none while the head is still to come)."""
        taken = 0
        start = self.pos
        if self.head is None:
            if cython.compiled:
                p = cython.cast(cbytes, self.buf)
                while self.pos < self.end:
                    i = self.pos
                    if p[i] > 32:
                        break
                    e = self._line_end(i)
                    if _has_text_c(p, e, i):
                        break
                    self.pos = e
                    taken += 1
            else:
                while self.pos < self.end:
                    i = self.pos
                    if self.buf[i] > 32:
                        break
                    e = self._line_end(i)
                    if _has_text(self.buf[i:e], 0):
                        break
                    self.pos = e
                    taken += 1
        self.skipped = self.pos - start
        return taken


def _tag_line_kind(buf: bytes, i: int, e: int) -> int:
    """What the line ``buf[i:e]`` (line end included) is to a tag section: 1 a line beginning
    with '[' and ending with ']' (:func:`_ends_tag`), 2 a blank line (ASCII whitespace only),
    0 anything else."""
    line = buf[i:e]
    if line[:1] == b"[":
        return 1 if line.endswith(_TAG_END) else 0
    return 0 if line.strip() else 2


def _line_batches(stream, where: list[int] | None = None) -> Iterator[list[bytes] | int]:
    """Lists of physical lines (line ends kept), for LF, CRLF and CR-only text.

    ``bytes.splitlines`` recognises exactly \\n, \\r\\n and \\r. A line longer
    than a chunk is gathered piecewise (no quadratic re-copying). A line longer than
    ``MAX_GAME_BYTES`` is cut, so that memory stays bounded however long a line is: its
    first ``MAX_GAME_BYTES`` bytes or fewer (:func:`_cut_between_tokens`) come as a batch of
    their own, then an ``int``, the count of bytes dropped (the rest of the line with its
    line end). ``where[0]``, if given, is
    kept at or just after the stream offset of the end of the last batch. On
    TruncatedInput the pending partial line is delivered first, then the exception
    propagates.
    """
    cython.declare(span=_Span)
    read = stream.read
    cap = MAX_GAME_BYTES
    if where is None:
        where = [0]
    parts: list[bytes] = []  # pieces of a line whose end is not yet known
    held = 0  # bytes in parts
    consumed = 0  # bytes read from the stream
    dropping = -1  # >= 0: bytes of an over-long line dropped so far, its line end not yet seen
    cr = -1  # >= 0: bytes dropped up to a '\r' that ended a chunk: a '\n' next belongs to them
    while True:
        try:
            chunk = read(_CHUNK)
        except TruncatedInput:
            where[0] = consumed
            if dropping >= 0 or cr >= 0:
                yield max(dropping, cr)
            elif parts:
                yield [b"".join(parts)]
            raise
        if not chunk:
            break
        if isinstance(chunk, str):
            chunk = chunk.encode("utf-8")
        consumed += len(chunk)
        if cr >= 0:
            if chunk[:1] == b"\n":
                cr += 1
                chunk = chunk[1:]
            where[0] = consumed
            yield cr
            cr = -1
        if dropping >= 0:
            n = chunk.find(b"\n")
            r = chunk.find(b"\r", 0, None if n < 0 else n)
            if r >= 0:
                n = r
            if n < 0:
                dropping += len(chunk)
                continue
            end = n + 1
            if chunk[n] == 13 and end == len(chunk):
                cr = dropping + end  # maybe half of '\r\n': the next chunk tells
                dropping = -1
                continue
            if chunk[n] == 13:
                end += chunk[end] == 10
            where[0] = consumed
            yield dropping + end
            dropping = -1
            chunk = chunk[end:]
        if not chunk:
            continue
        if cython.compiled and type(chunk) is bytes and len(chunk) <= cap:
            # The common case, compiled: the lines are made as they are read (_Span).
            span = _chunk_span(chunk, parts)
            if span is not None:
                held = len(chunk) - span.end
                parts = [chunk[span.end:]] if held else []
                where[0] = consumed - held
                if span.head is not None or span.pos < span.end:
                    yield span
                continue
        lines = _split_lines(chunk)
        if parts and parts[-1].endswith(b"\r"):
            line = b"".join(parts)
            parts, held = [], 0
            if chunk[:1] == b"\n":  # the \r\n pair was split between chunks
                lines[0] = line + lines[0]
            else:
                lines.insert(0, line)
        elif len(lines) == 1 and not chunk.endswith((b"\n", b"\r")):
            parts.append(chunk)  # no line end in this chunk at all
            held += len(chunk)
            if held > cap:
                line = b"".join(parts)
                parts, held = [], 0
                where[0] = consumed
                keep = _cut_between_tokens(line, cap)
                yield [line[:keep]]
                dropping = len(line) - keep
            continue
        elif parts:
            lines[0] = b"".join(parts) + lines[0]
            parts, held = [], 0
        if not lines[-1].endswith(b"\n"):
            # Unterminated, or ends with \r that may be half of a \r\n.
            parts.append(lines.pop())
            held = len(parts[0])
        where[0] = consumed - held
        if lines and (len(lines[0]) > cap or len(chunk) > cap):
            # Long lines whose end is in this chunk: only the first can be one, unless the
            # cap is smaller than a chunk.
            start = 0
            for i, line in enumerate(lines):
                if len(line) > cap:
                    if i > start:
                        yield lines[start:i]
                    keep = _cut_between_tokens(line, cap)
                    yield [line[:keep]]
                    yield len(line) - keep
                    start = i + 1
            lines = lines[start:]
        if lines:
            yield lines
    where[0] = consumed
    if dropping >= 0 or cr >= 0:
        yield max(dropping, cr)
    elif parts:
        line = b"".join(parts)
        if len(line) > cap:
            yield [line[:cap]]
            yield len(line) - cap
        else:
            yield [line]


def _chunk_span(chunk: bytes, parts: list) -> _Span | None:
    """The batch of :func:`_line_batches` from ``chunk`` (at most ``MAX_GAME_BYTES``), ``parts``
    the pieces of a line begun before it, as a :class:`_Span` whose ``end`` is where the
    pieces of the next unfinished line begin; None when the list path must make it: no line
    end in ``chunk``, a '\\r' ending ``parts`` (maybe half of a '\\r\\n'), a first line
    ended by a '\\r' that ends ``chunk``, or a first line over the cap."""
    n = len(chunk)
    head = None
    start = 0
    if cython.compiled:
        p = cython.cast(cbytes, chunk)
        q = cython.cast(cbytes, memchr(p, 10, n))
        lf = n if q == cython.NULL else q - p
        q = cython.cast(cbytes, memchr(p, 13, lf))
        first = lf if q == cython.NULL else q - p  # the first line end (n: none)
    else:
        first = min([k for k in (chunk.find(b"\n"), chunk.find(b"\r")) if k >= 0], default=n)
    if first == n:
        return None
    if parts:
        if parts[-1].endswith(b"\r"):
            return None
        start = first + 1
        if chunk[first] == 13:
            if start == n:
                return None
            if chunk[start] == 10:
                start += 1
        head = b"".join(parts) + chunk[:start]
        if len(head) > MAX_GAME_BYTES:
            return None
    # Where the last line begins unless it ends with '\n' (then the chunk's end).
    end = n
    if chunk[n - 1] != 10:
        end -= 1
        if cython.compiled:
            while end > start and p[end - 1] != 10 and p[end - 1] != 13:
                end -= 1
        else:
            end = max(chunk.rfind(b"\n", 0, end), chunk.rfind(b"\r", 0, end), start - 1) + 1
    return _Span(head, chunk, start, end)


class ReadEnd:
    """How a read ended, filled in by :func:`read_games` once the source is exhausted.

    ``open``: the text ended inside a brace comment (or during the look-ahead that decides
    whether a tag section inside one starts a game), or after a game with only comments
    and no tags (they would be the preamble of a game after them): text following it could
    still belong to its last game. False means that a sure game start
    (:func:`sure_game_start`) after the text is read exactly as if the text after it were
    read apart: the check an engine makes before it joins the games of two parts of a
    source.

    Where the reader stood at the end, for whoever appends text to the text read (the
    split of ``validate``): ``between`` (True: between games, after a termination marker
    or before any game, where any text starts a new game; False: the last game had not
    ended, and text after it could go on with it), ``in_comment`` (inside a brace comment),
    ``depth`` (variations left open, outside comments) and ``lookahead`` (the text ended
    while the reader looked ahead for the '}' of an open comment, which the end of the text
    decided: text after it could have decided otherwise, and so changed the games before).
    """

    __slots__ = ("open", "between", "in_comment", "depth", "lookahead")

    def __init__(self) -> None:
        self.open = False
        self.between = True
        self.in_comment = False
        self.depth = 0
        self.lookahead = False


class _Reread(Exception):
    """Raised inside the line loop of :func:`_read_stream`: the look-ahead of an open comment
    decided that the comment was never closed; the lines from the candidate game start on
    are read again."""


def _read_stream(stream, source: str, read_end: ReadEnd | None = None) -> Iterator[RawGame]:
    # States: 0 between games, 1 in a tag section, 2 in movetext. Bytes are
    # compared as ints (line[0]); 91 is '[', 37 is '%', <= 32 whitespace or control.
    # Compiled, the line loop's counters and flags are C variables (not adj, clean and over,
    # which trim() and finish() rebind: Cython types no nonlocal).
    cython.declare(index=cython.Py_ssize_t, lineno=cython.Py_ssize_t, off=cython.Py_ssize_t, state=cython.Py_ssize_t,
                   refeed=cython.Py_ssize_t, g_off=cython.Py_ssize_t, g_line=cython.Py_ssize_t,
                   tag_line0=cython.Py_ssize_t, mt_line0=cython.Py_ssize_t, ncom=cython.Py_ssize_t,
                   pre_comments=cython.Py_ssize_t, depth=cython.Py_ssize_t,
                   split_at=cython.Py_ssize_t, has_tags=cython.bint, in_comment=cython.bint,
                   prev_blank=cython.bint, tags_gap=cython.bint, cand=cython.Py_ssize_t,
                   cand_line=cython.Py_ssize_t, held=cython.Py_ssize_t, lookahead=cython.Py_ssize_t,
                   cut_short=cython.bint, cap=cython.Py_ssize_t, from_line=cython.Py_ssize_t, c=cython.Py_ssize_t,
                   j=cython.Py_ssize_t, started_in_comment=cython.bint, n_line=cython.Py_ssize_t,
                   d0=cython.Py_ssize_t, end=cython.Py_ssize_t, p=cython.Py_ssize_t, q=cython.Py_ssize_t,
                   tail_at=cython.Py_ssize_t, e=cython.Py_ssize_t, r=cython.Py_ssize_t, taken=cython.Py_ssize_t,
                   batch_end=cython.Py_ssize_t, line=bytes, rest=bytes, t=bytes)
    index = 0
    lineno = 0
    off = 0  # decompressed offset of the next line not owned by a game
    state = 0
    refeed = 0  # >0: the current line is the rest of a line whose first `refeed` bytes ended a game
    # Per-game state (reset when a game starts).
    g_off = g_line = tag_line0 = mt_line0 = 0
    pre_lines: list[bytes] = []
    tag_lines: list[bytes] = []
    mt_lines: list[bytes] = []
    clean: list[bytes] | None = None  # movetext with comments blanked; None while equal to mt_lines
    ncom = pre_comments = depth = adj = 0
    split_at = 0  # >0: the movetext began on the last tag line, after its first `split_at` bytes
    has_tags = in_comment = prev_blank = tags_gap = False
    # Look-ahead of an open comment (see the module doc): cand >= 0 is the index in mt_lines
    # of the would-be game start, on line cand_line; held counts the bytes from it on.
    cand = -1
    cand_line = held = 0
    lookahead = _LOOKAHEAD_BYTES
    cut_short = False  # the input ended during a look-ahead
    truncated: TruncatedInput | None = None
    cap = MAX_GAME_BYTES
    where = [0]  # stream offset at (or just after) the end of the last batch of lines
    batch_end = 0  # where[0] as a C integer (it changes only when the next batch is read)
    over: ReaderIssue | None = None  # the game-too-long issue of the current game

    def trim() -> bool:
        """Drop the current game's lines past MAX_GAME_BYTES (the first time, note the issue).
        Returns whether the movetext's first line was dropped: the line whose tags a
        ``split_at`` kept in ``tag_lines``, which are gone too."""
        nonlocal adj, clean, over
        tag_lines[:] = _tag_line_list(tag_lines)  # (it counts lines by index)
        found = _trim_game(pre_lines, tag_lines, mt_lines, cap)
        if found is None:
            return False
        dropped, which, k = found
        adj += dropped
        if clean is not None:
            clean = _blank_comments(mt_lines)
        if over is None:
            line = (g_line, tag_line0, mt_line0)[which] + k
            over = _issue("game-too-long", line, None,
                          f"game longer than {_size(cap)}: its text from here to its end is not read")
        return which < 2 or k == 0

    def finish(unclosed: bool, extra: ReaderIssue | None, whole=None) -> RawGame:
        """The current game as a RawGame (see :func:`_finish`; then :func:`_end_offset` is the
        offset after it)."""
        nonlocal over
        if batch_end - g_off > cap:
            trim()
        cut, over = over, None
        return _finish(source, index, g_off, g_line, pre_lines, pre_comments, tag_lines, tag_line0,
                       mt_lines, mt_line0, clean, ncom, unclosed, has_tags, adj, extra, cut, whole)

    batches = _line_batches(stream, where)
    src = own = None  # the lines being read: a batch's own iterator, or lines read again first
    from_line = 1
    while True:
        if src is None:
            if state and cand < 0 and batch_end - g_off > cap and trim():  # memory stays bounded
                split_at = 0  # the tags before the movetext on its first line are dropped
            try:
                batch = next(batches, None)
            except TruncatedInput as exc:
                truncated, batch = exc, None
            batch_end = where[0]
            if batch.__class__ is int:
                # The rest of the last line (over the cap) was dropped: the game that line
                # is in is over the cap; between games, an empty game tells of it.
                message = (f"line longer than {_size(cap)}: the rest of the line and of its "
                           f"game is not read")
                if state:
                    adj += batch
                    if over is None:
                        over = _issue("game-too-long", lineno, None, message)
                    if cand < 0 and trim():
                        split_at = 0
                elif line[:1] == b"%":
                    off += batch  # an escape line (PGN §6): dropped whole anyway
                else:
                    yield RawGame(source, index, off - len(line), lineno, {}, [], None, 0,
                                  issues=[_issue("game-too-long", lineno, None, message)])
                    index += 1
                    off += batch
                continue
            if batch is not None:
                src = own = iter(batch)
                from_line = lineno + 1
            elif cand < 0:
                break
            else:
                # The input ended during a look-ahead: the comment was never closed. The
                # game ends before the candidate, whose lines are read again.
                again = mt_lines[cand:]
                del mt_lines[cand:]
                from_line, cand = cand_line, -1
                cut_short = True
                game = finish(True, None)
                off = _end_offset(g_off, adj, pre_lines, tag_lines, mt_lines)
                yield game
                index += 1
                state = 0
                in_comment = False
                src = own = iter(again)
        try:
            for line in src:
                lineno = from_line
                from_line += 1
                while True:  # loops only when a line is processed again in a new state
                    if state == 2:
                        if in_comment:
                            j = line.find(b"}")
                            if j < 0:
                                if line[0] == 37:
                                    if cand >= 0:
                                        held += len(line)
                                        if held > lookahead:
                                            raise _Reread
                                    mt_lines.append(line)
                                    break
                                if prev_blank and _TAG_START_B.match(line):
                                    # A tag section after a blank line inside an open
                                    # comment: a game start, if the comment was never
                                    # closed. Look ahead for its '}' (module doc).
                                    if cand >= 0:
                                        raise _Reread  # a second candidate
                                    cand = len(mt_lines)
                                    cand_line = lineno
                                    held = 0
                                if cand >= 0:
                                    held += len(line)
                                    if held > lookahead or b"{" in line:
                                        raise _Reread
                                prev_blank = line.isspace()
                                mt_lines.append(line)
                                break
                            if cand >= 0:
                                if b"{" in line[:j] or (prev_blank and _TAG_START_B.match(line)):
                                    raise _Reread  # a '{' first, or a second game start ('[Event "a}b"]')
                                cand = -1  # the '}' closes one comment holding the tag lines
                            in_comment = False
                            started_in_comment = True
                            rest = line[j + 1 :]
                            mt_lines.append(line)
                        else:
                            c = line[0]
                            if c <= 32:
                                c = _lead(line)
                                if c < 0:
                                    mt_lines.append(line)
                                    break
                            if c == 91:
                                # (no comment so far, with tags: there is movetext)
                                if (not has_tags or clean is not None) and not b"".join(
                                        mt_lines if clean is None else clean).strip():
                                    if not has_tags:
                                        # Only comments so far (e.g. a file comment):
                                        # they are a preamble to this tag section.
                                        pre_lines.extend(mt_lines)
                                        mt_lines = []
                                        clean = None
                                        pre_comments = ncom
                                        has_tags = True
                                        tags_gap = False
                                        state = 1
                                        tag_line0 = lineno
                                        continue
                                    if not _starts_game(line, tag_lines):
                                        # Comments between tag pairs (PGN standard §5:
                                        # comment text may appear in PGN data): the tag
                                        # section goes on, comments and all.
                                        blanked = _blank_comments(mt_lines)
                                        if split_at:
                                            tag_lines[-1] += blanked[0][split_at:]
                                            adj += split_at
                                            tag_lines.extend(blanked[1:])
                                        else:
                                            tag_lines.extend(blanked)
                                        mt_lines = []
                                        clean = None
                                        pre_comments = ncom
                                        split_at = depth = 0
                                        tags_gap = False
                                        state = 1
                                        continue
                                game = finish(False, None)
                                off = _end_offset(g_off, adj, pre_lines, tag_lines, mt_lines)
                                yield game
                                index += 1
                                state = 0
                                continue
                            if line[0] == 37:
                                mt_lines.append(line)
                                if clean is None:
                                    clean = mt_lines[:-1]
                                break
                            started_in_comment = False
                            rest = line
                            mt_lines.append(line)
                            if len(mt_lines) == 1 and not depth and batch_end - g_off <= cap:
                                # A whole game's plain movetext on one line, ended by its
                                # marker (as Lichess writes it): its moves and annotations
                                # read in one pass, with no blanked copy to find the marker.
                                whole = game_line_reader(line)
                                if whole is not None:
                                    ncom += whole.comments
                                    # finish(False, None, whole) with no closure call (the game is
                                    # within the cap: nothing to trim).
                                    cut, over = over, None
                                    game = _finish(source, index, g_off, g_line, pre_lines, pre_comments, tag_lines,
                                                   tag_line0, mt_lines, mt_line0, clean, ncom, False, has_tags, adj,
                                                   None, cut, whole)
                                    off = _end_offset(g_off, adj, pre_lines, tag_lines, mt_lines)
                                    yield game
                                    index += 1
                                    state = 0
                                    in_comment = False
                                    break
                        # Blank out comments; note a comment left open at line end.
                        n_line = 0
                        if b"{" in rest or b";" in rest:
                            if clean is None:
                                clean = mt_lines[:-1]
                            stripped, n, left_open = blank_comments(rest)
                            if left_open:
                                in_comment = True
                                prev_blank = False
                            ncom += n
                            n_line = n
                            rest = stripped
                        if clean is not None:
                            clean.append(rest)
                        # Termination marker outside RAVs? (A stray ')' changes nothing.)
                        d0 = depth
                        if depth or b"(" in rest:
                            end, depth = _scan_parens(rest, depth)
                        else:
                            # A cheap candidate test first; the marker search only runs from
                            # the first candidate (usually the end of the movetext).
                            end = -1
                            p = _marker_candidate(rest)
                            if p >= 0:
                                end = _result_end(rest, p - 5 if p > 5 else 0)
                        if end < 0:
                            break
                        # The game ends on this line. Anything after the marker
                        # (rare) starts the next game: find where in the raw line.
                        # Control characters there (NULs, DOS ^Z) are ignored.
                        tail_at = 0
                        tok = _RESULT_BY_LAST[rest[end - 1]]
                        # rest[end:] too: the line's last marker may be a later game's.
                        if (in_comment or _has_text(rest, end)
                                or _has_text(line, line.rfind(tok) + len(tok))):
                            # Something follows the marker's last occurrence: locate
                            # the real marker in the raw line. Comments closed on the
                            # line after it (`0-1 ; a note`) stay on their game's line;
                            # anything else starts the next game there.
                            r = _raw_result_end(line, started_in_comment, d0)
                            if r >= 0:
                                if n_line:  # (those after the marker are not the game's)
                                    start = line.find(b"}") + 1 if started_in_comment else 0
                                    ncom += len(_COMMENTS_B.findall(line, start, r)) - n_line
                                if line[r:].strip(_JUNK):
                                    after, _, left_open = blank_comments(line[r:])
                                    if left_open or after.strip(_JUNK):
                                        tail_at = len(line) - len(line[r:].lstrip())
                        game = finish(False, None)
                        off = _end_offset(g_off, adj, pre_lines, tag_lines, mt_lines)
                        yield game
                        index += 1
                        state = 0
                        in_comment = False
                        depth = 0
                        if tail_at:
                            # Keep columns: pad the rest of the line with one space
                            # per character (not byte) before it.
                            off -= len(line) - tail_at
                            head = line[:tail_at]
                            if not head.isascii():
                                try:
                                    tail_at = len(head.decode("utf-8"))
                                except UnicodeDecodeError:
                                    pass  # a one-byte codec: one character per byte
                            refeed = tail_at
                            line = b" " * tail_at + line[len(head):]
                            continue
                        break

                    elif state == 1:
                        c = line[0]
                        if c <= 32:
                            c = _lead(line)
                        if c == 91:
                            if tags_gap:
                                tags_gap = False
                                if _starts_game(line, tag_lines):
                                    # An Event tag, or one repeating a tag name, after a
                                    # blank line: a new game (the previous one has no
                                    # movetext).
                                    game = finish(False, None)
                                    off = _end_offset(g_off, adj, pre_lines, tag_lines, mt_lines)
                                    yield game
                                    index += 1
                                    state = 0
                                    continue
                            if not _ends_tag(line):
                                m = _TAGS_PREFIX_B.match(line)
                                if m is not None:
                                    e = m.end()
                                    t = line[e:].lstrip()
                                    if t and t[0] != 91 and not (
                                            t[0] in b"{;" and _TAGS_PREFIX_B.fullmatch(_STRIP_B.sub(b" ", t).strip())):
                                        # Movetext after the tags on the same line.
                                        tag_lines.append(line[:e])
                                        adj -= e
                                        line = b" " * e + line[e:]
                                        split_at = e
                                        state = 2
                                        mt_line0 = lineno
                                        continue
                            if src is own and type(own) is _Span:
                                # The tag line and the tag and blank lines after it, taken in
                                # one go (the same lines and state as this loop's), most
                                # often as one bytes object.
                                taken = cython.cast(_Span, own).take_tag_lines(tag_lines, line)
                                if taken:
                                    tags_gap = cython.cast(_Span, own).gap
                                    from_line += taken
                                    lineno = from_line - 1
                            else:
                                tag_lines.append(line)
                            break
                        if c < 0 or line[0] == 37:
                            tag_lines.append(line)
                            if c < 0:
                                tags_gap = True
                            break
                        if (c == 123 and not tags_gap and line.rstrip().endswith(b"]")
                                and _STRIP_B.sub(b" ", line).lstrip()[:1] == b"["):
                            # A comment, then a tag on the same line (PGN §5).
                            tag_lines.append(line)
                            break
                        if (not tags_gap and line.rstrip().endswith(b'"]') and tag_lines
                                and not tag_lines[-1].rstrip().endswith(b"]")):
                            # Second half of a tag value broken over two lines:
                            # only right after a tag line left open, never once
                            # a blank line has ended the tag section (nor once the
                            # tag lines were dropped past MAX_GAME_BYTES).
                            tag_lines.append(line)
                            break
                        split_at = 0
                        state = 2
                        mt_line0 = lineno
                        continue

                    else:  # between games
                        c = line[0]
                        if c <= 32:
                            if not _has_text(line, 0):
                                off += len(line)  # blank, or only control characters
                                break
                            c = _lead(line)
                        if c == 37 and line[0] == 37:
                            off += len(line)
                            break
                        if c == 0xEF and line.startswith(_BOM):
                            off += 3
                            line = line[3:]
                            if not line:  # a last line that is only a BOM
                                break
                            continue
                        g_off = off
                        g_line = lineno
                        adj = -refeed
                        refeed = 0
                        if pre_lines:  # (most often empty: kept, not made anew)
                            pre_lines = []
                        tag_lines = []
                        mt_lines = []
                        clean = None
                        ncom = pre_comments = depth = split_at = 0
                        in_comment = tags_gap = False
                        if c == 91:
                            has_tags = True
                            state = 1
                            tag_line0 = lineno
                        else:
                            has_tags = False
                            state = 2
                            mt_line0 = lineno
                        continue
                if state == 0 and src is own and type(own) is _Span:
                    # Between games, the blank lines that come next (most often the one after
                    # a game's movetext) are passed in the chunk, with no line object: the
                    # loop would only add their bytes to `off`.
                    taken = cython.cast(_Span, own).skip_blank_lines()
                    if taken:
                        off += cython.cast(_Span, own).skipped
                        from_line += taken
                        lineno = from_line - 1
        except _Reread:
            # The look-ahead found the comment never closed (a '{' before its '}', a second
            # candidate, or the cap): the game ends before the candidate; its lines, this
            # one and what is left of an earlier re-read are read again.
            again = mt_lines[cand:]
            again.append(line)
            if src is not own:
                again.extend(src)
            del mt_lines[cand:]
            from_line, cand = cand_line, -1
            game = finish(True, None)
            off = _end_offset(g_off, adj, pre_lines, tag_lines, mt_lines)
            yield game
            index += 1
            state = 0
            in_comment = False
            src = iter(again)
            continue
        if src is own:
            src = None
        else:
            src, from_line = own, lineno + 1

    extra = None
    if truncated is not None:
        extra = _issue(truncated.code, max(lineno, 1), None, str(truncated))
    only_comments = state == 2 and not has_tags and not in_comment and not b"".join(
        mt_lines if clean is None else clean).strip(_JUNK)
    if read_end is not None:
        read_end.open = in_comment or only_comments or cut_short
        read_end.between = state == 0 and not cut_short
        read_end.in_comment = in_comment
        read_end.depth = depth if state == 2 else 0
        read_end.lookahead = cut_short
    if only_comments:
        state = 0  # only comments after the last game: not a game
    if state:
        game = finish(in_comment, extra)
        yield game
    elif extra is not None:
        yield RawGame(source, index, off, max(lineno, 1), {}, [], None, 0, issues=[extra])


def sure_game_start(before: bytes, line: bytes, line_start: bool) -> bool:
    """Whether ``line`` (without its line end), beginning ``[Event "`` and preceded by
    ``before``, starts a game unless a brace comment opened before ``before`` is still open
    there, so that a source may be cut there and its parts read apart.

    ``before``: the bytes just before the line, ending with its line end; ``line_start``:
    whether ``before`` itself begins at a line start (else its first line is partial and not
    looked at). True when one or more blank lines come first and the last non-blank line is
    neither a tag nor an escape line and ends with a termination marker (PGN §8.2.6) that no
    comment on that line holds, and with no comment opened after it (a comment after the
    marker would open the next game).

    Text this rule cannot see decides the rest: a comment opened on an earlier line may hold
    the marker, the blank line and the tag section (PGN §5: a brace comment holds anything
    but '}'). A part's reader says so (:class:`ReadEnd`); the engines then read the two parts
    as one.
    """
    if b"}" in line:
        return False
    lines = before.splitlines(True)
    i = len(lines) - 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    if i == len(lines) - 1 or i < 0 or (i == 0 and not line_start):
        return False  # no blank line before the tag, or the last movetext line is not in view
    last = lines[i]
    if last.lstrip()[:1] in (b"[", b"%"):
        return False  # a tag or escape line: the reader may still be in the tag section
    text = _STRIP_B.sub(b" ", last).rstrip()
    # The marker ends the line, and is not inside a comment (one left open ends with the line).
    return (b"{" not in text and _ENDS_WITH_RESULT_B.search(last.rstrip()) is not None
            and _ENDS_WITH_RESULT_B.search(text) is not None)


def line_at(buf: bytes, start: int) -> bytes | None:
    """The line of ``buf`` beginning at ``start``, without its line end (None: no line end
    in ``buf``, the line may go on)."""
    ends = [e for e in (buf.find(b"\n", start), buf.find(b"\r", start)) if e >= 0]
    return buf[start:min(ends)] if ends else None


def count_line_ends(data: bytes) -> int:
    """Line ends in ``data`` as the reader counts lines (``bytes.splitlines``: \\n, \\r\\n
    and a lone \\r); a \\r\\n split between two parts counts in both."""
    return line_ends(data if type(data) is bytes else bytes(data))


def last_sure_game_start(buf, lo: int = 0, hi: int | None = None, lookback: int = 1 << 16) -> int:
    """Offset in ``buf`` of the last line starting after ``lo`` and before ``hi`` (default:
    the end) that is a sure game start (see :func:`sure_game_start`; ``buf`` must begin at a
    line start, and the line's own end must be in ``buf``), or -1. ``lookback``: bytes looked
    at before a candidate. ``buf``: ``bytes`` or any buffer (a ``memoryview`` of shared
    memory, read in place when compiled).

    Compiled, the candidates (``[Event "`` after a line end) and the blank lines before
    each are found by a C scan from ``hi`` back, and :func:`sure_game_start` is asked only
    about the last non-blank line before a candidate: the same answer, for a few bytes
    looked at instead of ``lookback``."""
    end = len(buf) if hi is None else min(hi, len(buf))
    if cython.compiled:
        if end - lo < 9 or len(buf) == 0:
            return -1
        return _last_sure_start_c(buf, max(lo, 0), end, lookback)
    if type(buf) is not bytes:
        buf = bytes(buf)
    while True:
        i = max(buf.rfind(b'\n[Event "', lo, end), buf.rfind(b'\r[Event "', lo, end))
        if i < 0:
            return -1
        start = i + 1
        line = line_at(buf, start)
        back = max(0, start - lookback)
        if line is not None and sure_game_start(buf[back:start], line, back == 0):
            return start
        end = i


def _last_sure_start_c(buf, lo, end, lookback):
    # (see last_sure_game_start) p[i] is the line end before a candidate's '[Event "'.
    p = cython.cast(cbytes, cython.address(buf[0]))
    n = len(buf)
    i = end - 9
    while i >= lo:
        c = p[i]
        if (c == 10 or c == 13) and p[i + 1] == 91 and memcmp(p + i + 1, b'[Event "', 8) == 0:
            start = i + 1
            e = start  # the candidate's line end (its line must end within buf)
            while e < n and p[e] != 10 and p[e] != 13:
                e += 1
            if e < n and memchr(p + start, 125, e - start) == cython.NULL:  # no '}' on it
                back = start - lookback if start > lookback else 0
                q = start - 1  # the last byte that is not white space (bytes.strip's)
                while q >= back and (p[q] == 32 or (9 <= p[q] <= 13)):
                    q -= 1
                if q >= back:
                    b = q  # where q's line begins
                    while b > 0 and p[b - 1] != 10 and p[b - 1] != 13:
                        b -= 1
                    # In view whole (sure_game_start sees a line cut by the look-back as partial).
                    if (back == 0 or b > back) and sure_game_start(p[b:start], p[start:e], True):
                        return start
        i -= 1
    return -1


def _split_lines(data: bytes) -> list[bytes]:
    """``data.splitlines(True)``: the lines of ``data``, line ends (\\n, \\r\\n, \\r) kept."""
    if cython.compiled and type(data) is bytes:
        return _split_lines_c(data, len(data))
    return data.splitlines(True)


def _split_lines_c(p, n):
    # memchr hops from line end to line end (bytes.splitlines looks at every byte).
    lines = []
    i = 0
    cr = -1  # offset of the next '\r' at or after i (n: none); -1: not looked for yet
    while i < n:
        q = cython.cast(cbytes, memchr(p + i, 10, n - i))
        lf = n if q == cython.NULL else q - p
        if cr < i:
            q = cython.cast(cbytes, memchr(p + i, 13, n - i))
            cr = n if q == cython.NULL else q - p
        if cr < lf:
            e = cr + 1
            if e < n and p[e] == 10:
                e += 1
        else:
            e = lf + 1 if lf < n else n
        lines.append(p[i:e])
        i = e
    return lines


def _ends_tag(line: bytes) -> bool:
    """Whether ``line`` ends with ']' and its line end (if any): a tag line's usual end."""
    if cython.compiled:
        return _ends_tag_c(line, len(line))
    return line.endswith(_TAG_END)


def _ends_tag_c(p, n):
    if n and p[n - 1] == 10:  # '\n', maybe of '\r\n'
        n -= 1
        if n and p[n - 1] == 13:
            n -= 1
    elif n and p[n - 1] == 13:
        n -= 1
    return n > 0 and p[n - 1] == 93  # ']'


def _marker_candidate(rest: bytes) -> int:
    """Offset of the first ``*``, ``-0`` or ``-1`` in ``rest`` (where a termination marker
    may stand, §8.2.6), or -1."""
    if cython.compiled:
        return _marker_candidate_c(rest, len(rest))
    p = rest.find(b"*")
    q = rest.find(b"-0")
    if q >= 0 and (p < 0 or q < p):
        p = q
    q = rest.find(b"-1")
    if q >= 0 and (p < 0 or q < p):
        p = q
    return p


def _marker_candidate_c(p, n):
    # memchr hops: to the first '*', then from '-' to '-' before it.
    star = cython.cast(cbytes, memchr(p, 42, n))
    end = n if star == cython.NULL else star - p
    i = 0
    while i < end:
        q = cython.cast(cbytes, memchr(p + i, 45, end - i))
        if q == cython.NULL:
            break
        i = q - p
        if i + 1 < n and (p[i + 1] == 48 or p[i + 1] == 49):  # '-0', '-1'
            return i
        i += 1
    return -1 if star == cython.NULL else end


def _result_end(rest: bytes, start: int) -> int:
    """``_RESULT_B.search(rest, start)``'s end (-1: no match): the end of the first
    termination marker in ``rest`` from ``start`` on (§8.2.6; a number marker preceded by
    whitespace, a delimiter or a period, even before ``start``, and not followed by a
    symbol character; ``*`` anywhere)."""
    if cython.compiled:
        return _result_end_c(rest, len(rest), start)
    m = _RESULT_B.search(rest, start)
    return -1 if m is None else m.end()


def _result_end_c(p, n, i):
    # (see _result_end) The regex tried at each offset in turn, its alternatives in order.
    while i < n:
        c = p[i]
        if c == 42:  # '*'
            return i + 1
        if (c == 48 or c == 49) and (i == 0 or _after_marker_gap(p[i - 1])):
            if i + 3 <= n and p[i + 1] == 45 and (
                    (c == 49 and p[i + 2] == 48) or (c == 48 and p[i + 2] == 49)) and (
                    i + 3 == n or not _in_symbol(p[i + 3])):  # 1-0, 0-1
                return i + 3
            if (i + 7 <= n and memcmp(p + i, b"1/2-1/2", 7) == 0
                    and (i + 7 == n or not _in_symbol(p[i + 7]))):
                return i + 7
        i += 1
    return -1


def _after_marker_gap(c: int) -> bool:
    """Whether a number marker may follow the byte ``c``: whitespace (``\\s``), '(', ')',
    '{', '}' or '.'."""
    return c == 32 or 9 <= c <= 13 or c == 40 or c == 41 or c == 123 or c == 125 or c == 46


def _in_symbol(c: int) -> bool:
    """Whether a byte ``c`` after a number marker makes it part of a longer token:
    ``[A-Za-z0-9_/.-]``."""
    return (48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122 or c == 95 or c == 47 or c == 46
            or c == 45)


def _has_text(b: bytes, start: int) -> bool:
    """Whether ``b[start:]`` holds a byte that is neither whitespace nor a control character
    (``b[start:].strip(_JUNK)`` is not empty)."""
    if cython.compiled:
        return _has_text_c(b, len(b), start)
    return bool(b[start:].strip(_JUNK))


def _has_text_c(p, n, i):
    if i < 0:
        i = n + i if n + i > 0 else 0
    while i < n:
        if p[i] > 32 and p[i] != 127:
            return True
        i += 1
    return False


def _lead(line: bytes) -> int:
    """The first byte of ``line`` that is not ASCII whitespace (where ``line.lstrip()``
    begins), or -1."""
    if cython.compiled:
        p = cython.cast(cbytes, line)
        n = len(line)
        i = 0
        while i < n and (p[i] == 32 or 9 <= p[i] <= 13):
            i += 1
        return p[i] if i < n else -1
    t = line.lstrip()
    return t[0] if t else -1


def _starts_game(line: bytes, tag_lines: list[bytes]) -> bool:
    """Whether the tag starting ``line``, after a blank line in a tag section, starts a new
    game: an Event tag (the first of the Seven Tag Roster, §8.1.1), or a tag already in
    ``tag_lines``."""
    m = _TAG_NAME_B.match(line)
    if m is None:
        return False
    if m.group(1) == b"Event":
        return True
    pat = rb"(?m)^[ \t]*\[[ \t]*" + re.escape(m.group(1)) + rb'[ \t"]'
    return re.search(pat, b"".join(tag_lines)) is not None


def _scan_parens(rest: bytes, depth: int) -> tuple[int, int]:
    """(end of the first termination marker at RAV depth 0 or -1, depth after)."""
    for m in _PAREN_RES_B.finditer(rest):
        t = m.group()
        if t == b"(":
            depth += 1
        elif t == b")":
            if depth:
                depth -= 1
        elif not depth:
            return m.end(), 0
    return -1, depth


def _raw_result_end(line: bytes, in_comment: bool, depth: int) -> int:
    """End offset in the raw line of the marker that ends the game, or -1."""
    pos = line.find(b"}") + 1 if in_comment else 0
    for m in _STRUCT_B.finditer(line, pos):
        t = m.group()
        c = t[:1]
        if c == b"{" or c == b";":
            continue
        if t == b"(":
            depth += 1
        elif t == b")":
            if depth:
                depth -= 1
        elif not depth:
            return m.end()
    return -1


def _pick_codec(blobs: tuple[bytes, ...]) -> str:
    for codec in ("utf-8", "cp1252"):
        try:
            for b in blobs:
                b.decode(codec)
            return codec
        except UnicodeDecodeError:
            pass
    return "latin-1"


def _drop_escape_line(m: re.Match) -> bytes:
    t = m.group()
    return b"" if t[:1] == b"%" else t


def _movetext_str(mt: bytes, codec: str) -> str:
    """Movetext as str with \\n line ends and escape lines (§6) blanked.

    As when reading (``_read_stream``), a '%' line inside a brace comment is
    comment text, not an escape line: reading, the general tokenizer and
    :meth:`RawGame.locate` must all see the same tokens.
    """
    if b"\r" in mt:
        mt = mt.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if mt[:1] == b"%" or b"\n%" in mt:
        mt = _ESCAPE_LINE_B.sub(_drop_escape_line, mt)
    return mt.decode(codec, "replace")


def _line_col(text: str, pos: int, line0: int) -> tuple[int, int]:
    return line0 + text.count("\n", 0, pos), pos - text.rfind("\n", 0, pos)


def _tag_line_list(tag_lines: list[bytes]) -> list[bytes]:
    """The lines of a tag section one by one (line ends kept): ``tag_lines`` with each run of
    whole lines that :meth:`_Span.take_tag_lines` kept as one bytes object split. For what
    counts lines by index (line numbers, the cap)."""
    out = []
    for text in tag_lines:
        lines = _split_lines(text)
        if len(lines) > 1:
            out.extend(lines)
        else:
            out.append(text)
    return out


def _end_offset(g_off: int, adj: int, pre_lines: list[bytes], tag_lines: list[bytes], mt_lines: list[bytes]) -> int:
    """The stream offset after the game whose text begins at ``g_off`` and is made of the
    lines (bytes) in the three lists, ``adj`` the bytes it spans besides them (dropped past
    the cap, or the first ones of a line another game ended on: negative)."""
    n = g_off + adj
    for text in pre_lines:
        n += len(text)
    for text in tag_lines:
        n += len(text)
    for text in mt_lines:
        n += len(text)
    return n


def _last_content_line(lines: list[bytes], line0: int) -> int:
    for i in range(len(lines) - 1, -1, -1):
        if not lines[i].isspace() and lines[i]:
            return line0 + i
    return line0


def _finish(
    source, index, g_off, g_line, pre_lines, pre_comments, tag_lines, tag_line0,
    mt_lines, mt_line0, clean, ncom, unclosed, has_tags, adj, extra, cut=None, whole=None,
) -> RawGame:
    """Build the RawGame from the collected lines (:func:`_end_offset`: the offset after it).
    ``whole``: :func:`~chessscan.readers.movetext.game_line_reader` of the movetext, its one
    line (ASCII), when the line loop read it."""
    issues: list[ReaderIssue] = []
    pre_b = b"".join(pre_lines) if pre_lines else b""
    mt_b = b"".join(mt_lines)
    mt_ascii = whole is not None or mt_b.isascii()
    # Tag section (§8.1). Most are ASCII pairs, whole on their lines: read piece by piece (a
    # line, or most often one run of whole lines: _Span.take_tag_lines), which tells they are
    # ASCII too, with no joined copy (the RawGame keeps the pieces).
    tags = None
    tag_n = 0
    if cython.compiled and mt_ascii and tag_lines and (not pre_b or pre_b.isascii()):
        tags = ascii_tag_pairs(tag_lines, cython.address(tag_n))
    if tags is not None:
        codec = "utf-8"
    else:
        tag_b = b"".join(tag_lines)
        tag_n = len(tag_b)
        if mt_ascii and tag_b.isascii() and pre_b.isascii():
            codec = "utf-8"
        else:
            codec = _pick_codec((pre_b, tag_b, mt_b))
            if codec != "utf-8":
                issues.append(_issue("decode-fallback", g_line, None, f"game is not valid UTF-8; decoded as {codec}"))
    if not has_tags:
        issues.append(_issue("missing-tags", g_line, None, "movetext without a tag section"))

    if tags is None:
        tags = {}
        if tag_b:
            tags = tag_pairs(tag_b, codec)
            if tags is None:
                tags = _parse_tags_slow(_tag_line_list(tag_lines), tag_line0, codec, issues)

    # Movetext (§8.2).
    sans = keys = notes = None
    first_comment = None
    if mt_lines and not unclosed:
        # Plain SAN movetext (most of it): a subset of what _scan_movetext reads, same result,
        # the moves as keys. One pass reads both the moves and the annotations (when it can;
        # without annotations, the notes are None and there are no problems).
        both = fast_keys_notes(mt_b, mt_ascii) if whole is None else whole
        if whole is not None:
            keys, result, notes, problems = whole.keys, whole.result, whole.notes, whole.problems
        elif both is not None:
            keys, result, notes, problems = both
        else:
            # (the blanked text of an ASCII movetext is ASCII)
            keys, result = fast_keys(mt_b if clean is None else b"".join(clean), is_ascii=mt_ascii)
        if keys is not None:
            variations = nags = 0
            comments = ncom
            if ncom > pre_comments and _first_is_brace(mt_b):
                fc = _FIRST_COMMENT_B.match(mt_b)
                if fc is not None:
                    first_comment = fc.group(1).decode(codec, "replace").strip()
            if both is not None:
                if problems:
                    issues.extend(note_issues(mt_b, codec, mt_line0, problems))
            elif b"[%" in mt_b:
                notes, problems, plies = read_notes(mt_b)
                if plies == len(keys) // 8:  # (always: both read the same moves)
                    issues.extend(note_issues(mt_b, codec, mt_line0, problems))
                else:
                    notes = None
    if sans is None and keys is None:
        if mt_lines:
            text = _movetext_str(mt_b, codec)
            reader = new_note_reader() if b"[%" in mt_b else None
            sans, result, variations, comments, nags, first_comment, mt_issues, _ = _scan_movetext(
                text, mt_line0, notes=reader)
            issues.extend(mt_issues)
            if reader is not None:
                notes = reader.finish()[0]
        else:
            sans, result, variations, comments, nags = [], None, 0, 0, 0
        comments += pre_comments
    if pre_b:
        fc = _FIRST_COMMENT_B.match(pre_b)
        if fc is not None:
            first_comment = fc.group(1).decode(codec, "replace").strip()

    if pre_b and _may_hold_game(pre_b):
        issues.extend(_games_in_comments(pre_b, g_line))
    # (a movetext of one line has no line end before its last byte: _may_hold_game is false)
    if len(mt_lines) > 1 and _may_hold_game(mt_b):
        issues.extend(_games_in_comments(mt_b, mt_line0))

    if result is None and cut is None:  # (a game cut short: its end was not read)
        if mt_lines:
            ln = _last_content_line(mt_lines, mt_line0)
        else:
            ln = _last_content_line(_tag_line_list(tag_lines), tag_line0) if tag_lines else g_line
        issues.append(_issue("missing-result", ln, None, "game has no termination marker (1-0, 0-1, 1/2-1/2, *)"))
    if cut is not None or extra is not None:
        for extra in (cut, extra):
            if extra is not None:
                if mt_lines or (extra is cut and 0 < mt_line0 <= cut.line):
                    # the movetext was cut: where
                    extra = extra._replace(ply=(len(sans) if keys is None else len(keys) // 8) + 1)
                issues.append(extra)

    game = RawGame.__new__(RawGame)
    game._fill(source, index, g_off, g_line, tags, sans, result, mt_line0 if mt_lines else 0, variations, comments,
               nags, issues, first_comment, mt_b, codec, tag_lines, tag_line0 if tag_n else 0, keys, notes)
    return game


_NOTE_KINDS = ((b"[%clk", "clock (H:MM:SS, minutes and seconds below 60)"),
               (b"[%emt", "move time (H:MM:SS, minutes and seconds below 60)"),
               (b"[%eval", "evaluation (pawns like 0.17, or moves to mate like #-3)"))


# Values written as the reader reads them but with more digits than it takes (see
# chessscan.readers.movetext): hours of a time, integer digits of an evaluation or a mate.
_LONG_TIME = re.compile(rb"\[%(?:clk|emt)\s+(\d+):[0-5]\d:[0-5]\d(?:\.\d+)?\s*\]")
_LONG_EVAL = re.compile(rb"\[%eval\s+(?:#[+-]?(\d+)|[+-]?(\d+)(?:\.\d*)?)(?:,\d+)?\s*\]")


def _note_issue(line: int, column: int | None, ply: int, command: bytes, codec: str) -> ReaderIssue:
    """The ``malformed-annotation`` warning of ``command`` (its text, from "[%"), standing after
    ply ``ply``: a value too long for its column's range is said to be so, not misread."""
    what = next(d for prefix, d in _NOTE_KINDS if command.startswith(prefix))
    text = _quoted(command.decode(codec, "replace")[:60])
    m = _LONG_TIME.match(command)
    if m and len(m.group(1)) > NOTE_HOURS_DIGITS:
        why = f"{text} is out of range (a time has at most {NOTE_HOURS_DIGITS} digits of hours)"
    elif (m := _LONG_EVAL.match(command)) and len(m.group(1) or m.group(2)) > NOTE_PAWN_DIGITS:
        why = f"{text} is out of range (an evaluation has at most {NOTE_PAWN_DIGITS} integer digits)"
    else:
        why = f"{text} is not a valid {what}"
    return _issue("malformed-annotation", line, column, f"{why}: the move counts, without it", ply)


def note_issues(mt: bytes, codec: str, line0: int, problems: list) -> list[ReaderIssue]:
    """``malformed-annotation`` warnings of :func:`~chessscan.readers.movetext.read_notes`'
    problems (byte offsets in the movetext ``mt``, which starts on line ``line0``)."""
    found = []
    for offset, ply, command in problems:
        before = mt[:offset]
        start = max(before.rfind(b"\n"), before.rfind(b"\r")) + 1
        column = len(before[start:].decode(codec, "replace")) + 1
        found.append(_note_issue(line0 + count_line_ends(before), column, ply, command, codec))
    return found


def _first_is_brace(text: bytes) -> bool:
    """Whether the first byte of ``text`` that is not whitespace (``\\s``) is '{': where
    ``_FIRST_COMMENT_B`` may match."""
    return _lead(text) == 123  # '{'


def _may_hold_game(text: bytes) -> bool:
    """Whether :func:`_games_in_comments` may find anything in ``text``: a closed comment that
    runs over an Event tag line needs a line end before its '}', so before the last byte (a
    movetext on one line, as Lichess writes it, is not searched for "Event")."""
    n = len(text) - 1
    if n <= 0:
        return False
    if cython.compiled:
        p = cython.cast(cbytes, text)
        if memchr(p, 10, n) == cython.NULL and memchr(p, 13, n) == cython.NULL:
            return False
    elif text.find(b"\n", 0, n) < 0 and text.find(b"\r", 0, n) < 0:
        return False
    return b"Event" in text


def _games_in_comments(text: bytes, line0: int) -> list[ReaderIssue]:
    """``game-in-comment`` warnings of the text of a game (its preamble or movetext, on line
    ``line0`` on): each brace comment closed in it that holds a line beginning with an Event
    tag, the first tag of a game (§8.1.1), with no blank line before it. Such a line is no
    would-be game start (module doc), so no look-ahead decided that the comment holds it: a
    '{' left open by mistake swallows the games up to the next '}', which nothing else
    reports."""
    found = []
    for m in _ESCAPE_LINE_B.finditer(text):
        comment = m.group()
        if comment[:1] != b"{" or comment[-1:] != b"}" or b"Event" not in comment:
            continue
        lines = comment.splitlines()
        for k in range(1, len(lines)):
            tag = _TAG_START_B.match(lines[k])
            if tag is None or tag.group(1) != b"Event" or not lines[k - 1].strip():
                continue
            # (distances, not line numbers: a Dask shard's lines are shifted later)
            up, down = k, len(lines) - 1 - k
            found.append(_issue("game-in-comment", line0 + count_line_ends(text[:m.start()]) + k,
                                len(lines[k]) - len(lines[k].lstrip()) + 1,
                                f"a '{{' comment {_lines(up)} up runs over this [Event] tag line, with no "
                                f"blank line before it, to its '}}' {_lines(down) + ' down' if down else 'on it'}"
                                ": a game may be inside it"))
            break
    return found


def _lines(n: int) -> str:
    return f"{n} line{'' if n == 1 else 's'}"


def _size(n: int) -> str:
    return f"{n >> 20} MiB" if n >= 1 << 20 and not n & ((1 << 20) - 1) else f"{n} bytes"


def _trim_game(pre_lines: list[bytes], tag_lines: list[bytes], mt_lines: list[bytes],
               cap: int) -> tuple[int, int, int] | None:
    """Keep the longest run of a game's first lines (preamble, tag section, movetext, in
    that order) that holds at most ``cap`` bytes; delete the others in place.

    Returns None if nothing was deleted, else (bytes deleted, which list the first deleted
    line was in: 0 preamble, 1 tags, 2 movetext, its index there).
    """
    budget = cap
    found = None
    dropped = 0
    for which, lines in enumerate((pre_lines, tag_lines, mt_lines)):
        if found is not None:
            dropped += sum(map(len, lines))
            del lines[:]
            continue
        for k, line in enumerate(lines):
            budget -= len(line)
            if budget < 0:
                found = which, k
                dropped += sum(map(len, lines[k:]))
                del lines[k:]
                break
    if found is None:
        return None
    return dropped, found[0], found[1]


def _blank_spaces(m: re.Match) -> bytes:
    return _NOT_LINE_END_B.sub(b" ", m.group())


def _blank_comments(lines: list[bytes]) -> list[bytes]:
    """Movetext lines that hold only comments (and blank or escape lines), with every comment
    replaced by as many spaces (line ends kept), as the reader reads them: a comment open at
    the end of a line goes on to the next '}', a '%' line outside one is an escape line."""
    out = []
    open_ = False
    for line in lines:
        head = b""
        if open_:
            j = line.find(b"}") + 1
            if not j:
                out.append(_NOT_LINE_END_B.sub(b" ", line))
                continue
            head, line, open_ = b" " * j, line[j:], False
        elif line[:1] == b"%":
            out.append(line)
            continue
        m = None
        for m in _COMMENTS_B.finditer(line):
            pass
        open_ = m is not None and m.group()[:1] == b"{" and not m.group().endswith(b"}")
        out.append(head + _COMMENTS_B.sub(_blank_spaces, line))
    return out


def _parse_tags_slow(tag_lines: list[bytes], line0: int, codec: str, issues: list[ReaderIssue]) -> dict[str, str]:
    """Tag pairs line by line, reporting bad-tag and duplicate-tag issues (§8.1).

    Comments between tag pairs on a tag line (PGN §5: ';' to the end of the line, '{' to
    the next '}') are skipped; comment lines of their own come blanked
    (:func:`_blank_comments`).
    """
    tags: dict[str, str] = {}

    def add(name: str, value: str, ln: int, col: int) -> None:
        if "\\" in value:
            value = _UNESCAPE_RE.sub(r"\1", value)
        if name in tags:
            issues.append(_issue("duplicate-tag", ln, col, f"duplicate tag {name!r} ignored (first value kept)"))
        else:
            tags[name] = value

    i = 0
    while i < len(tag_lines):
        ln = line0 + i
        s = tag_lines[i].decode(codec).rstrip("\r\n")
        i += 1
        if s[:1] == "%":
            continue
        # A tag pair split over lines is read as one line, as the fast path reads it; issues
        # on the lines joined to it stand at its first line.
        while i < len(tag_lines) and _TAG_OPEN_RE.fullmatch(s):
            joined = s + " " + tag_lines[i].decode(codec).rstrip("\r\n")
            whole = _TAGS_RE.match(joined)
            if (whole is None or whole.end() <= len(s)) and not _TAG_OPEN_RE.fullmatch(joined):
                break  # the next line does not go on with the pair
            s = joined
            i += 1
        pos = 0
        first = True
        while True:
            m = _TAG_AT_RE.match(s, pos)
            if m is not None:
                add(m.group(1), m.group(2), ln, s.rfind("[", 0, m.start(1)) + 1)
                pos = m.end()
                first = False
                continue
            rest = s[pos:]
            t = rest.lstrip()
            if not t or t[0] == ";":
                break
            if t[0] == "{" and "}" in t:
                pos = s.find("}", len(s) - len(t)) + 1
                continue
            col = pos + len(rest) - len(t) + 1
            lm = _TAG_LENIENT_RE.fullmatch(s, pos)
            if lm is not None:
                add(lm.group(1), lm.group(2), ln, col)
                issues.append(_issue("bad-tag", ln, col, f"malformed tag value (unescaped quote?): {_quoted(rest.strip()[:60])}"))
            elif first and not t.startswith("["):
                issues.append(_issue("bad-tag", ln, col, f"line inside the tag section is not a tag: {_quoted(rest.strip()[:60])}"))
            else:
                issues.append(_issue("bad-tag", ln, col, f"malformed tag pair: {_quoted(rest.strip()[:60])}"))
            break
    return tags


def _scan_movetext(text: str, line0: int, stop_ply: int = -1, notes=None):
    """Tokenize movetext (§8.2); the general path, also used by locate().

    Returns (sans, result, variations, comments, nags, first_comment, issues,
    pos) where pos is the offset in ``text`` of ``sans[stop_ply]`` (-1 if not
    asked or not reached). Stops at the first termination marker outside RAVs.
    ``notes``: a :func:`~chessscan.readers.movetext.new_note_reader` that the brace
    comments after main-line moves are read into (their malformed commands are issues).
    """
    sans: list[str] = []
    issues: list[ReaderIssue] = []
    result = None
    first_comment = None
    depth = variations = comments = nags = 0
    opens: list[tuple[int, int]] = []  # (offset, ply) of each '(' still open
    seen = stopped = False
    for m in _TOK_RE.finditer(text):
        k = m.lastindex
        if k == 8 or k == 6:
            seen = True
            if depth or stopped:
                continue
            w = m.group(k)
            mv = _MOVE_RE.fullmatch(w)
            if mv is not None:
                if len(sans) == stop_ply:
                    return sans, result, variations, comments, nags, first_comment, issues, m.start()
                sans.append(mv.group(1))
                if mv.group(3):
                    nags += 1
            elif w in _GLYPHS:
                nags += 1
            elif w in _EP_MARKS and sans:
                pass
            else:
                ln, col = _line_col(text, m.start(), line0)
                issues.append(_issue(
                    "unexpected-token", ln, col,
                    f"{_quoted(w[:40])} is not a move; later moves of this game are ignored", len(sans) + 1))
                stopped = True
        elif k == 7:
            seen = True
        elif k == 1:
            comments += 1
            c = m.group(1)
            if len(c) < 2 or c[-1] != "}":
                ln, col = _line_col(text, m.start(), line0)
                message = "'{' comment is never closed"
                swallowed = _EVENT_LINE_RE.search(c)
                if swallowed is not None:
                    # (a distance, not a line number: a Dask shard's lines are shifted later)
                    down = c.count("\n", 0, swallowed.start())
                    message += (f"; it runs over an [Event] tag line {down} line{'s' if down > 1 else ''} "
                                f"down: a game may be inside it")
                issues.append(_issue("unclosed-comment", ln, col, message, len(sans) + 1))
                body = c[1:]
            else:
                body = c[1:-1]
            if not seen and first_comment is None:
                first_comment = body.strip()
            if notes is not None and sans and not depth and not stopped and "[%" in body:
                raw = body.encode("utf-8", "replace")
                comment_notes(notes, raw, len(sans))
                for offset, ply, command in notes.take_problems():
                    ln, col = _line_col(text, m.start() + 1 + len(raw[:offset].decode("utf-8", "replace")), line0)
                    issues.append(_note_issue(ln, col, ply, command, "utf-8"))
        elif k == 3:
            seen = True
            if m.group(3) == "(":
                depth += 1
                variations += 1
                opens.append((m.start(), len(sans) + 1))
            elif depth:
                depth -= 1
                opens.pop()
            else:
                ln, col = _line_col(text, m.start(), line0)
                issues.append(_issue("unbalanced-variation", ln, col, "')' without a matching '('", len(sans) + 1))
        elif k == 5:
            if not depth:
                result = m.group(5)
                break
        elif k == 4:
            seen = True
            nags += 1
            if len(m.group(4)) == 1 and not depth and not stopped:
                ln, col = _line_col(text, m.start(), line0)
                issues.append(_issue("unexpected-token", ln, col,
                                     "'$' without a NAG number; later moves of this game are ignored", len(sans) + 1))
                stopped = True
        elif k == 2:
            comments += 1
        else:  # 9: '}' outside a comment
            seen = True
            if not depth and not stopped:
                ln, col = _line_col(text, m.start(), line0)
                issues.append(_issue("unexpected-token", ln, col,
                                     "'}' outside a comment; later moves of this game are ignored", len(sans) + 1))
                stopped = True
    if depth:
        pos, ply = opens[0]
        ln, col = _line_col(text, pos, line0)
        issues.append(_issue("unbalanced-variation", ln, col, f"'(' never closed ({depth} open)", ply))
    return sans, result, variations, comments, nags, first_comment, issues, -1
