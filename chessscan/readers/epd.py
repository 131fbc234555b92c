"""Streaming readers for EPD files and perft suites.

EPD (Extended Position Description) is defined in the PGN standard, §16.2:
a line holds the first four FEN fields (piece placement, side to move,
castling availability, en-passant target square) followed by zero or more
*operations*, each ``opcode operand ... ;``. An opcode starts with a letter
and has at most 15 letters/digits/underscores (§16.2.4); a string operand is
quoted with ``"`` and may contain ``;`` and escaped ``\\"`` / ``\\\\``.

Real files bend the standard, and this module accepts the bends seen in
published test suites: full six-field FENs (``... w - - 0 1; D1 20``), leading
``;`` after the fields (``;D1 20 ;D2 400``), missing final ``;``, runs of
spaces, CRLF or CR-only line ends, trailing NUL bytes, latin-1 bytes.

This layer knows no chess rules: it checks only the *shape* of the four
fields (so that obvious garbage such as ``hello have a nice day`` is flagged)
and leaves legality to the analysis layer. Bad content never raises; it is
reported per record in ``errors`` as ``(code, message, column)`` tuples,
``column`` being 1-based in :attr:`EpdRecord.raw` (or ``None``). The
severity of every code is in :data:`EPD_ERROR_SEVERITY`.

Two entry points:

* :func:`read_epd` -- one :class:`EpdRecord` per non-empty, non-``#`` line.
* :func:`read_perft_suite` -- one :class:`PerftCase` per position of a
  perft suite, in either EPD ``D<depth> <nodes>`` layout or the python-chess
  ``id`` / ``epd`` / ``perft`` block layout.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from os import PathLike
from typing import BinaryIO, Iterator, TextIO, Union

from .sources import TruncatedInput, open_source, source_name

__all__ = [
    "EPD_ERROR_SEVERITY",
    "EpdRecord",
    "PerftCase",
    "ErrorTuple",
    "read_epd",
    "read_perft_suite",
    "parse_epd_line",
    "error_severity",
    "MAX_LINE_BYTES",
]

#: ``(code, message, column)``; column is 1-based in the record's raw line, or None.
ErrorTuple = tuple[str, str, Union[int, None]]

#: Every error code this module emits -> ``"error"`` (the record's position or
#: the named operation is unusable) or ``"warning"`` (data was kept/repaired).
#: Values match the ``severity`` column of the ``issues`` report table.
EPD_ERROR_SEVERITY: dict[str, str] = {
    # --- EPD lines -----------------------------------------------------
    "invalid-epd": "error",           # < 4 fields, or a field of impossible shape
    "line-too-long": "error",         # line longer than MAX_LINE_BYTES, truncated
    "bad-operation": "error",         # D<n>/hmvc/fmvn operand not a non-negative int
    "unterminated-string": "warning",  # '"' without closing quote; rest of line taken
    "bad-opcode": "warning",          # opcode not letter + up to 14 [A-Za-z0-9_]
    "duplicate-opcode": "warning",    # opcode repeated on one line; first one kept
    "missing-semicolon": "warning",   # op without its ';' split at a known opcode
    "counter-conflict": "warning",    # hmvc/fmvn op disagrees with FEN counters
    "glued-counter": "warning",       # "- -0 1": ep '-' glued to the halfmove clock
    "decode-fallback": "warning",     # line is not UTF-8; decoded as latin-1
    "control-character": "warning",   # C0 control char inside the line (read as space)
    # --- perft suites ---------------------------------------------------
    "bad-perft-line": "error",        # 'perft DEPTH NODES' not two integers
    "orphan-line": "error",           # 'perft'/'id' line with no position to attach to
    "duplicate-depth": "warning",     # same depth given twice; first value kept
    "no-depths": "warning",           # perft position without any node count
    # --- both ------------------------------------------------------------
    "truncated-input": "error",       # compressed stream cut or corrupt; the rest is lost
    "unsupported-input": "error",     # an archive (zip, 7z, rar, tar), not a text
    "not-text": "error",              # binary data (Parquet, an image, random bytes)
}

#: Longest line kept in memory; longer lines are truncated (``line-too-long``)
#: so one missing newline in a huge file cannot exhaust memory.
MAX_LINE_BYTES = 1 << 20

_CHUNK = 1 << 16

# Shape checks only (no chess rules): which characters may appear at all.
_PLACEMENT_RE = re.compile(r"[pnbrqkPNBRQK1-8/]+")
_SIDE_RE = re.compile(r"[wb]")
_CASTLING_RE = re.compile(r"-|[KQkqA-Ha-h]+")  # also Shredder/X-FEN files (HFhf)
_EP_RE = re.compile(r"-|[a-h][1-8]")
_GLUED_EP_RE = re.compile(r"-([0-9]+)")
_UINT_RE = re.compile(r"[0-9]+")
_OPCODE_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,14}")
_DEPTH_OPCODE_RE = re.compile(r"D([0-9]+)")
# A node count or counter is a uint64 at most (perft counts in one), so 20 digits: longer
# ones are not converted (int() refuses past 4300 digits).
_MAX_UINT_DIGITS = 20
#: Deepest perft depth a suite may ask for: the count recurses once per ply (a C stack frame
#: compiled, a Python one uncompiled), and past ~40 plies no count fits a uint64 anyway.
MAX_PERFT_DEPTH = 64

# One lexical token of an EPD line: ';', a quoted string (group 1 is the
# closing quote, empty if unterminated) or a bare word.
_TOKEN_RE = re.compile(r'"((?:[^"\\]|\\.?)*)("?)|;|[^\s;]+')
_UNESCAPE_RE = re.compile(r'\\(["\\])')
# C0 controls other than TAB; read as spaces. Trailing ones (NUL padding in the
# ChrisWhittington files) are stripped silently because they are harmless.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_TRAILING_JUNK = " \t\r\n\x00\x0b\x0c"

# Standard opcodes (§16.2.5) that cannot be SAN moves or squares; used only to
# split an operation whose ';' was forgotten ("bm Rc8+ dm 26"). c1..c8 are left
# out because they are also pawn moves.
_SPLIT_OPCODES = frozenset(
    "acd acn acs am bm c0 c9 ce dm draw_accept draw_claim draw_offer "
    "draw_reject eco fmvn hmvc id nic noop pm pv rc resign sm tcgs tcri tcsi "
    "v0 v1 v2 v3 v4 v5 v6 v7 v8 v9".split()
)

_PERFT_KEYWORD_RE = re.compile(r"\s*(id|epd|perft)(?:\s|$)")

PathOrStream = Union[str, "PathLike[str]", BinaryIO, TextIO]


def error_severity(code: str) -> str:
    """Severity (``"error"`` / ``"warning"``) of an error code; unknown -> ``"error"``."""
    return EPD_ERROR_SEVERITY.get(code, "error")


# ---------------------------------------------------------------------------
# records
# ---------------------------------------------------------------------------


@dataclass(slots=True)
class EpdRecord:
    """One EPD line (PGN standard §16.2).

    Attributes:
        source: file name / URL the line came from.
        line: 1-based line number in the (decompressed) source.
        fields: the four position fields joined by single spaces
            (``"<placement> <side> <castling> <ep>"``); ``""`` when the line
            has an ``invalid-epd`` error.
        fen: six-field FEN: ``fields`` + halfmove clock + fullmove number,
            taken from the ``hmvc`` / ``fmvn`` operations, else from the
            line's own FEN counters, else ``0 1``; ``""`` when invalid.
        operations: opcode -> operands (strings, in order, quotes removed and
            ``\\"`` unescaped). Insertion order is line order.
        errors: ``(code, message, column)`` tuples; see ``EPD_ERROR_SEVERITY``.
        raw: the decoded line without its line terminator.
    """

    source: str
    line: int
    fields: str
    fen: str
    operations: dict[str, list[str]] = field(default_factory=dict)
    errors: list[ErrorTuple] = field(default_factory=list)
    raw: str = ""

    @property
    def ok(self) -> bool:
        """True unless some entry of ``errors`` has severity ``"error"``."""
        return not any(EPD_ERROR_SEVERITY.get(e[0], "error") == "error" for e in self.errors)

    @property
    def id(self) -> str | None:
        """First operand of the ``id`` operation, or None."""
        ops = self.operations.get("id")
        return ops[0] if ops else None

    @property
    def bm(self) -> list[str]:
        """Operands of ``bm`` (best moves, SAN as written); ``[]`` if absent."""
        return list(self.operations.get("bm", ()))

    @property
    def am(self) -> list[str]:
        """Operands of ``am`` (avoid moves, SAN as written); ``[]`` if absent."""
        return list(self.operations.get("am", ()))

    @property
    def hmvc(self) -> int | None:
        """``hmvc`` operation (halfmove clock, plies) as int; None if absent or bad."""
        return _uint_operand(self.operations.get("hmvc"))

    @property
    def fmvn(self) -> int | None:
        """``fmvn`` operation (fullmove number) as int; None if absent or bad."""
        return _uint_operand(self.operations.get("fmvn"))

    def perft_depths(self) -> dict[int, int]:
        """Perft node counts from ``D1`` .. ``Dn`` operations: ``{depth: nodes}``.

        Ordered by depth. Operations whose operand is not a single
        non-negative integer are skipped (they carry a ``bad-operation``
        error in ``errors``).
        """
        out: dict[int, int] = {}
        for opcode, operands in self.operations.items():
            depth = _perft_depth(opcode)
            if depth is not None:
                nodes = _uint_operand(operands)
                if nodes is not None and depth not in out:  # D1 then D01: the first is kept
                    out[depth] = nodes
        return dict(sorted(out.items()))


@dataclass(slots=True)
class PerftCase:
    """One perft position with its known node counts.

    Attributes:
        source: file name / URL.
        line: 1-based line of the position (the EPD line, or the ``epd``
            line of a python-chess block).
        id: the ``id`` (EPD ``id`` operation or ``id NAME`` line), or None.
        fen: six-field FEN (counters default to ``0 1``); ``""`` if the
            position line was invalid or missing (see ``errors``).
        depths: ``{depth (plies): leaf nodes}``, ordered by depth.
        errors: ``(code, message, column)``; see ``EPD_ERROR_SEVERITY``.
            Columns refer to the line named in the message when it is not
            ``line``.
    """

    source: str
    line: int
    id: str | None
    fen: str
    depths: dict[int, int] = field(default_factory=dict)
    errors: list[ErrorTuple] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True unless some entry of ``errors`` has severity ``"error"``."""
        return not any(EPD_ERROR_SEVERITY.get(e[0], "error") == "error" for e in self.errors)


def _uint(text: str) -> int | None:
    """``text`` as a non-negative integer if it is ASCII digits of at most 20 significant
    digits, else None."""
    if not _UINT_RE.fullmatch(text):
        return None
    digits = text.lstrip("0") or "0"
    return int(digits) if len(digits) <= _MAX_UINT_DIGITS else None


def _uint_operand(operands: list[str] | None) -> int | None:
    if operands and len(operands) == 1:
        return _uint(operands[0])
    return None


def _perft_depth(opcode: str) -> int | None:
    """The depth of a ``D<n>`` opcode, None if it is not one or deeper than MAX_PERFT_DEPTH."""
    m = _DEPTH_OPCODE_RE.fullmatch(opcode)
    depth = _uint(m.group(1)) if m else None
    return depth if depth is not None and depth <= MAX_PERFT_DEPTH else None


# ---------------------------------------------------------------------------
# line splitting / decoding
# ---------------------------------------------------------------------------


def _source_name(path_or_stream: PathOrStream, source: str | None) -> str:
    if source is not None:
        return source
    if isinstance(path_or_stream, (str, PathLike)):
        return source_name(path_or_stream)  # '-' -> '<stdin>', same as other readers
    name = getattr(path_or_stream, "name", None)
    return name if isinstance(name, str) else "<stream>"


def _raw_lines(stream) -> Iterator[tuple[bytes | str | None, bool | TruncatedInput]]:
    """Yield ``(line, truncated)`` without terminators, splitting on LF, CRLF and CR.

    Reads fixed-size chunks so memory stays flat whatever the line lengths.
    Works on binary or text streams (lines are then bytes or str).
    ``truncated`` is True for a line cut at MAX_LINE_BYTES. If the stream
    raises :class:`TruncatedInput`, the whole lines read before are yielded,
    then a last ``(cut, exc)`` item: ``cut`` is what was read of the line the
    stream broke off in (possibly empty), or None when that is an over-long
    line already yielded; nothing is raised.
    """
    try:
        chunk = stream.read(_CHUNK)
    except TruncatedInput as exc:
        yield b"", exc
        return
    if not chunk:
        return
    binary = isinstance(chunk, (bytes, bytearray))
    nl, cr, empty = (b"\n", b"\r", b"") if binary else ("\n", "\r", "")
    pending = empty  # start of a line not yet terminated
    skipping = False  # inside an over-long line, discarding until LF
    while chunk:
        parts = chunk.split(nl)
        parts[0] = pending + parts[0]
        pending = parts.pop()
        for part in parts:
            if skipping:
                skipping = False
                continue
            # CRLF -> strip CR; a bare CR is an old-Mac line end of its own.
            yield from ((p, False) for p in part.rstrip(cr).split(cr))
        if len(pending) > MAX_LINE_BYTES and not skipping:
            yield pending[:MAX_LINE_BYTES], True
            skipping = True
        if skipping:
            pending = empty
        try:
            chunk = stream.read(_CHUNK)
        except TruncatedInput as exc:
            if skipping:
                yield None, exc
                return
            *whole, cut = pending.split(cr)  # the lines ended by a bare CR are whole
            yield from ((p, False) for p in whole)
            yield cut, exc
            return
    if pending and not skipping:
        yield from ((p, False) for p in pending.rstrip(cr).split(cr))


def _decoded_lines(stream) -> Iterator[tuple[int, str, list[ErrorTuple], bool]]:
    """Yield ``(lineno, text, errors, cut)`` for every physical line (1-based).

    ``cut`` is True only for a last item ending a truncated or corrupt
    compressed stream: ``text`` is what was read of that line (possibly
    empty) and ``errors`` holds one ``truncated-input`` error.
    """
    lineno = 0
    for data, truncated in _raw_lines(stream):
        if not isinstance(truncated, bool):  # the stream broke off (TruncatedInput)
            if data is None:  # inside an over-long line, already yielded
                text = ""
            else:
                lineno += 1
                if isinstance(data, str):
                    text = data
                else:
                    # Cut anywhere, maybe inside a UTF-8 sequence: no decode warning.
                    try:
                        text = data.decode("utf-8")
                    except UnicodeDecodeError:
                        text = data.decode("latin-1")
                if lineno == 1 and text.startswith("\ufeff"):
                    text = text[1:]
            message = str(truncated)
            if text.strip(_TRAILING_JUNK):
                message += "; this line is cut off and not used"
            yield lineno, text, [(truncated.code, message, None)], True
            return
        lineno += 1
        errors: list[ErrorTuple] = []
        if isinstance(data, str):
            text = data
        else:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as e:
                # latin-1 maps every byte, so a legacy-encoded comment never
                # costs the position; the column is the first bad byte.
                text = data.decode("latin-1")
                errors.append(("decode-fallback",
                               f"line is not valid UTF-8 (byte 0x{data[e.start]:02x}); "
                               "decoded as latin-1", e.start + 1))
        if lineno == 1 and text.startswith("\ufeff"):
            text = text[1:]  # UTF-8 byte-order mark
        if truncated:
            errors.append(("line-too-long",
                           f"line longer than {MAX_LINE_BYTES} bytes; truncated",
                           MAX_LINE_BYTES))
        yield lineno, text, errors, False


def _open(path_or_stream: PathOrStream):
    """Return ``(stream, must_close)``: streams given by the caller stay open."""
    if hasattr(path_or_stream, "read"):
        return path_or_stream, False
    return open_source(path_or_stream), True


def _skippable(text: str) -> bool:
    s = text.strip(_TRAILING_JUNK)
    return not s or s.startswith("#")


# ---------------------------------------------------------------------------
# EPD line parsing
# ---------------------------------------------------------------------------


def _field_problem(tokens: list[str]) -> tuple[str, int] | None:
    """Why the four tokens cannot be FEN fields: ``(message, token index)``."""
    placement, side, castling, ep = tokens
    if not _PLACEMENT_RE.fullmatch(placement) or "/" not in placement:
        bad = sorted({c for c in placement if not _PLACEMENT_RE.fullmatch(c)})
        why = f"characters {''.join(bad)!r}" if bad else "no '/'"
        return f"piece placement {placement!r} has {why}", 0
    if not _SIDE_RE.fullmatch(side):
        return f"side to move {side!r} is not 'w' or 'b'", 1
    if not _CASTLING_RE.fullmatch(castling):
        return f"castling field {castling!r} is not '-' or castling letters", 2
    if not _EP_RE.fullmatch(ep):
        hint = ""
        if ep.startswith("-") and ep[1:].isdigit():
            hint = " (missing space before the halfmove clock?)"
        return f"en-passant field {ep!r} is not '-' or a square{hint}", 3
    return None


def parse_epd_line(text: str, source: str = "<string>", line: int = 1,
                   errors: list[ErrorTuple] | None = None,
                   raw: str | None = None, column_offset: int = 0) -> EpdRecord:
    """Parse one EPD line (PGN standard §16.2) into an :class:`EpdRecord`.

    ``text`` is the line without its terminator. ``errors`` (copied, not
    mutated) are prepended, e.g. decode warnings. ``raw`` defaults to
    ``text``; ``column_offset`` is added to reported columns (used when
    ``text`` is a slice of ``raw``). Never raises for bad content: an
    unusable line gives ``fields == fen == ""`` and an ``invalid-epd`` error.
    """
    errs: list[ErrorTuple] = list(errors or ())
    if raw is None:
        raw = text
    body = text.rstrip(_TRAILING_JUNK)
    m = _CONTROL_RE.search(body)
    if m:
        errs.append(("control-character",
                     f"control character 0x{ord(m.group()):02x} read as a space",
                     column_offset + m.start() + 1))
        body = _CONTROL_RE.sub(" ", body)

    tokens = list(_TOKEN_RE.finditer(body))

    def col(i: int) -> int:
        return column_offset + (tokens[i].start() if i < len(tokens) else len(body)) + 1

    # --- the four position fields: bare words before any ';' or string ---
    n_fields = 0
    while n_fields < min(4, len(tokens)) and tokens[n_fields].group(1) is None \
            and tokens[n_fields].group() != ";":
        n_fields += 1
    if n_fields < 4:
        errs.append(("invalid-epd",
                     f"expected 4 position fields, found {n_fields}", col(n_fields)))
        return EpdRecord(source, line, "", "", {}, errs, raw)
    four = [t.group() for t in tokens[:4]]

    def bare_uint(i: int) -> bool:
        return i < len(tokens) and tokens[i].group(1) is None \
            and _UINT_RE.fullmatch(tokens[i].group()) is not None

    pos = 4
    fen_counters: tuple[str, str] | None = None
    counter_cols = (col(4), col(5))
    glued_err: ErrorTuple | None = None
    glued = _GLUED_EP_RE.fullmatch(four[3])
    if glued and bare_uint(4):
        # "w - -0 1" (kaufman, lct, destruction-test ...): the space between
        # the '-' en-passant field and the halfmove clock is missing. No
        # other reading is possible, so repair it and say so.
        glued_err = ("glued-counter", f"en-passant field {four[3]!r} read as "
                     f"'- {glued.group(1)}' (missing space)", col(3))
        four[3] = "-"
        fen_counters = (_counter(glued.group(1)), _counter(tokens[4].group()))
        counter_cols = (col(3) + 1, col(4))
        pos = 5
    problem = _field_problem(four)
    if problem:
        errs.append(("invalid-epd", problem[0], col(problem[1])))
        return EpdRecord(source, line, "", "", {}, errs, raw)
    if glued_err is not None:  # reported only once the line is known to be usable
        errs.append(glued_err)

    # --- optional FEN counters: two bare integers right after the fields ---
    if fen_counters is None and bare_uint(4) and bare_uint(5):
        fen_counters = (_counter(tokens[4].group()), _counter(tokens[5].group()))
        pos = 6

    # --- operations: opcode operand* ';' ---
    ops: dict[str, list[str]] = {}
    op_cols: dict[str, int] = {}

    def close(opcode_i: int, operands: list[tuple[str, bool, int]]) -> None:
        opcode_tok = tokens[opcode_i]
        opcode = _unquote(opcode_tok)
        # Split whether or not a ';' ends the group: a final ';' ends only the last operation.
        for name, c, operands_ in _split_unterminated((opcode, col(opcode_i), operands), errs):
            if not _OPCODE_RE.fullmatch(name):
                errs.append(("bad-opcode", f"opcode {name!r} is not a letter followed "
                             "by up to 14 letters, digits or '_'", c))
            if name in ops:
                errs.append(("duplicate-opcode",
                             f"opcode {name!r} repeated; first occurrence kept", c))
                continue
            ops[name] = [v for v, _, _ in operands_]
            op_cols[name] = c

    opcode_i: int | None = None
    operands: list[tuple[str, bool, int]] = []  # (value, quoted, column)
    for i in range(pos, len(tokens)):
        tok = tokens[i]
        if tok.group(1) is not None and tok.group(2) == "":
            errs.append(("unterminated-string",
                         "string operand has no closing '\"'; rest of line taken", col(i)))
        if tok.group() == ";":
            if opcode_i is not None:
                close(opcode_i, operands)
            opcode_i, operands = None, []  # a lone ';' (";D1 20", "; ;") is just empty
        elif opcode_i is None:
            opcode_i = i
        else:
            operands.append((_unquote(tok), tok.group(1) is not None, col(i)))
    if opcode_i is not None:
        close(opcode_i, operands)

    # --- operand checks for the opcodes this layer interprets ---
    depth_names: dict[int, str] = {}  # depth -> its first opcode ("D1" and "D01" are one depth)
    for name, operands_ in ops.items():
        if name in ("hmvc", "fmvn") or _DEPTH_OPCODE_RE.fullmatch(name):
            if _uint_operand(operands_) is None:
                errs.append(("bad-operation",
                             f"{name} needs one non-negative integer of at most "
                             f"{_MAX_UINT_DIGITS} digits, got {operands_!r}",
                             op_cols[name]))
            elif name not in ("hmvc", "fmvn"):
                depth = _perft_depth(name)
                if depth is None:
                    errs.append(("bad-operation",
                                 f"{name}: a perft depth over {MAX_PERFT_DEPTH}", op_cols[name]))
                elif depth in depth_names:
                    errs.append(("duplicate-depth", f"{name} is depth {depth} again (as "
                                 f"{depth_names[depth]}); the first count is kept", op_cols[name]))
                else:
                    depth_names[depth] = name

    fields = " ".join(four)
    half = ops.get("hmvc")
    full = ops.get("fmvn")
    h = _uint_operand(half)
    f = _uint_operand(full)
    fc_h, fc_f = fen_counters or ("0", "1")
    if fen_counters is not None:
        for name, v, fc, c in (("hmvc", h, fc_h, counter_cols[0]),
                               ("fmvn", f, fc_f, counter_cols[1])):
            if v is not None and str(v) != fc:
                errs.append(("counter-conflict",
                             f"{name} {v} disagrees with FEN counter {fc}; {name} used", c))
    fen = f"{fields} {h if h is not None else fc_h} {f if f is not None else fc_f}"
    return EpdRecord(source, line, fields, fen, ops, errs, raw)


def _counter(digits: str) -> str:
    """A FEN counter's digits without leading zeros (not through int(): any length)."""
    return digits.lstrip("0") or "0"


def _unquote(tok: re.Match) -> str:
    if tok.group(1) is None:
        return tok.group()
    return _UNESCAPE_RE.sub(r"\1", tok.group(1))


def _split_unterminated(group, errs: list[ErrorTuple]):
    """Split ``opcode a b op2 c`` at known standard opcodes (its ';'s forgotten).

    Each operation ends with a ';' (§16.2.4), so an operation's group runs to
    the next ';' or the line's end, and a missing ';' would make everything up
    to there operands of the first opcode: ``bm Rc8+ dm 26`` (with or without a
    final ';') four best moves. Only bare operands that are standard opcodes
    (and never SAN) start a new group.
    """
    name, c, operands = group
    out = [(name, c, [])]
    for value, quoted, vcol in operands:
        if not quoted and (value in _SPLIT_OPCODES or _DEPTH_OPCODE_RE.fullmatch(value)):
            errs.append(("missing-semicolon",
                         f"';' missing before opcode {value!r}; read as a new operation",
                         vcol))
            out.append((value, vcol, []))
        else:
            out[-1][2].append((value, quoted, vcol))
    return out


# ---------------------------------------------------------------------------
# public readers
# ---------------------------------------------------------------------------


_FEN_PLACEMENT_B = re.compile(rb"[pnbrqkPNBRQK1-8]+(?:/[pnbrqkPNBRQK1-8]+){7}")


def looks_like_epd(head: bytes) -> bool:
    """Whether text starting with ``head`` (bytes) is EPD rather than PGN: its first line
    that is not blank or a ``#`` comment starts with a FEN piece placement (eight ranks),
    which no PGN game can start with; or ``head`` holds ``#`` comment lines and nothing else
    (PGN has no ``#`` comments: an EPD suite with no position left). Used to tell what stdin
    holds."""
    comments = False
    for line in head.removeprefix(b"\xef\xbb\xbf").splitlines():
        fields = line.split(None, 1)
        if not fields or fields[0].startswith(b"#"):
            comments = comments or bool(fields)
            continue
        return _FEN_PLACEMENT_B.fullmatch(fields[0]) is not None
    return comments


def read_epd(path_or_stream: PathOrStream, source: str | None = None) -> Iterator[EpdRecord]:
    """Stream the EPD records (PGN standard §16.2) of a file, one per line.

    Args:
        path_or_stream: a path (``'-'`` = stdin; ``.gz`` / ``.bz2`` / ``.xz`` / ``.zst``
            decompressed by :func:`chessscan.readers.sources.open_source`), or
            an open binary (preferred) or text stream, which is not closed.
        source: name stored in each record; default: the path, or the
            stream's ``name``, or ``"<stream>"``.

    Yields:
        :class:`EpdRecord` for every line that is not empty (after stripping
        whitespace, CR and NUL) and does not start with ``#``, in file order.
        Bad content is reported in ``record.errors``; it never raises.
        A truncated or corrupt compressed file ends with one more record,
        carrying a ``truncated-input`` error, at the line where the stream
        broke off: its ``fields`` and ``fen`` are ``""`` (a cut line may look
        valid but is not), ``raw`` is the part of the line that was read.

    Raises:
        OSError (e.g. FileNotFoundError) when iteration starts and the file
        cannot be opened, or while reading.
        Memory use does not grow with file size.
    """
    name = _source_name(path_or_stream, source)
    stream, must_close = _open(path_or_stream)
    try:
        for lineno, text, errs, cut in _decoded_lines(stream):
            if cut:
                yield EpdRecord(name, lineno, "", "", {}, errs, text)
                break
            if _skippable(text):
                continue
            yield parse_epd_line(text, name, lineno, errs)
    finally:
        if must_close:
            stream.close()


def read_perft_suite(path_or_stream: PathOrStream,
                     source: str | None = None) -> Iterator[PerftCase]:
    """Stream the positions of a perft suite with their known node counts.

    Both layouts are accepted, and detected per line:

    1. EPD lines (PGN standard §16.2) with ``D<depth> <nodes>`` operations,
       e.g. ``<fen> ;D1 20 ;D2 400`` or ``<fen> 0 1; D1 20; D2 400``;
    2. python-chess ``.perft`` blocks: ``id NAME``, ``epd <EPD>``, then
       ``perft <depth> <nodes>`` lines; ``#`` comments and blank lines
       anywhere. A line starting with ``id ``, ``epd `` or ``perft `` is
       layout 2.

    Args: as :func:`read_epd`.

    Yields:
        :class:`PerftCase` per position (one per EPD line / ``epd`` line), in
        file order; depths are plies, nodes are leaf counts. ``perft`` or
        ``id`` lines that belong to no position yield a case with
        ``fen == ""`` and an ``orphan-line`` error. Never raises for content.
        A truncated or corrupt compressed file ends with one more case,
        ``fen == ""`` with a ``truncated-input`` error, at the line where the
        stream broke off (the cases before it keep what was read).

    Raises:
        OSError as :func:`read_epd`.
    """
    name = _source_name(path_or_stream, source)
    stream, must_close = _open(path_or_stream)
    current: PerftCase | None = None  # kept open: later 'perft' lines extend it
    pending_id: tuple[int, str] | None = None  # (line, id) of an 'id' awaiting 'epd'

    def finish(case: PerftCase) -> PerftCase:
        if not case.depths and case.fen:
            case.errors.append(("no-depths", "position has no perft node counts", None))
        case.depths = dict(sorted(case.depths.items()))
        return case

    def orphan_id(ln: int, ident: str) -> PerftCase:
        return PerftCase(name, ln, ident, "", {}, [(
            "orphan-line", f"'id {ident}' is not followed by an 'epd' line", 1)])

    cut_case: PerftCase | None = None
    try:
        for lineno, text, errs, cut in _decoded_lines(stream):
            if cut:
                # Whatever the cut line was, it is unusable; the case in
                # progress keeps the node counts read before it.
                cut_case = PerftCase(name, lineno, None, "", {}, errs)
                break
            if _skippable(text):
                continue
            m = _PERFT_KEYWORD_RE.match(text)
            kw = m.group(1) if m else None
            if kw == "perft":
                rest = text[m.end():]
                parts = rest.split()
                col = m.end() + 1
                line_errs = list(errs)
                values = [_uint(p) for p in parts]
                good = len(parts) == 2 and None not in values
                if not good:
                    line_errs.append((
                        "bad-perft-line",
                        f"line {lineno}: expected 'perft DEPTH NODES', got {text.strip()!r}",
                        col))
                elif values[0] > MAX_PERFT_DEPTH:
                    good = False
                    line_errs.append((
                        "bad-perft-line",
                        f"line {lineno}: perft depth {values[0]} over {MAX_PERFT_DEPTH}", col))
                if current is None:
                    # Nothing to attach to: report it rather than drop it.
                    yield PerftCase(name, lineno, None, "", {}, [(
                        "orphan-line", f"line {lineno}: 'perft' line before any position",
                        1)] + line_errs)
                    continue
                current.errors.extend(line_errs)
                if good:
                    _add_depth(current, values[0], values[1], lineno, col)
                continue

            # Any other line starts a new position (or names the next one).
            if current is not None:
                yield finish(current)
                current = None
            if kw == "id":
                if pending_id is not None:
                    yield orphan_id(*pending_id)
                pending_id = (lineno, text[m.end():].strip())
                continue
            if kw == "epd":
                rec = parse_epd_line(text[m.end():], name, lineno, errs, text, m.end())
                ident = rec.id
                if pending_id is not None:
                    ident = pending_id[1]
                    pending_id = None
            else:
                if pending_id is not None:
                    yield orphan_id(*pending_id)
                    pending_id = None
                rec = parse_epd_line(text, name, lineno, errs)
                ident = rec.id
            current = PerftCase(name, lineno, ident, rec.fen, {}, rec.errors)
            for depth, nodes in rec.perft_depths().items():
                current.depths[depth] = nodes
        if current is not None:
            yield finish(current)
        if pending_id is not None:
            yield orphan_id(*pending_id)
        if cut_case is not None:
            yield cut_case
    finally:
        if must_close:
            stream.close()


def _add_depth(case: PerftCase, depth: int, nodes: int, lineno: int, col: int) -> None:
    old = case.depths.get(depth)
    if old is None:
        case.depths[depth] = nodes
    elif old != nodes:
        case.errors.append(("duplicate-depth",
                            f"line {lineno}: depth {depth} given again ({nodes}); "
                            f"first value {old} kept", col))
