"""Compiler-style diagnostics for ``chessscan validate``: one line per issue.

:class:`DiagnosticSink` is a sink for :func:`chessscan.engines.local.run` that writes no
table: it turns ``issues`` rows (and ``disagreements`` rows, with ``--cross-check``) into
:class:`Diagnostic` objects, adds the players' names from the ``games`` rows, and hands
them to a callback in input order. The ``format_*`` functions render one diagnostic as
text (``path:line:column: error[code]: message (game_index 6 "White - Black", ply 24)``) or as a
GitHub Actions workflow command; :func:`closing_line` renders the counts.

Pure rendering: nothing here prints.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

__all__ = ["Diagnostic", "DiagnosticSink", "format_text", "format_github", "closing_line", "counts_by_code",
           "printable"]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem, located.

    ``path``: the source as given (``<stdin>`` for ``-``); ``line``/``column``: 1-based in
    the decompressed text, or None when unknown; ``severity``: ``error``/``warning``;
    ``code``: a code of :data:`chessscan.reports.codes.ISSUE_CODES`; ``message``: the issue
    text without location; ``game_index``: the game's 0-based index in its file, as the
    tables hold it, None for EPD lines; ``ply``: 1-based ply (0: the start position),
    or None; ``san``: the move as written, or None; ``players``: ``"White - Black"`` from
    the tags (``?`` for a missing name), None when the game has neither tag.
    """

    path: str
    line: int | None
    column: int | None
    severity: str
    code: str
    message: str
    game_index: int | None = None
    ply: int | None = None
    san: str | None = None
    players: str | None = None

    def as_json(self) -> dict:
        """The JSON object of ``--format json``: path, line, column, severity, code,
        message, game_index, ply, san (None values kept as null)."""
        return {"path": self.path, "line": self.line, "column": self.column,
                "severity": self.severity, "code": self.code, "message": self.message,
                "game_index": self.game_index, "ply": self.ply, "san": self.san}


# Control characters (C0 but tab, DEL, C1) and the bidirectional overrides, written as
# escapes: a tag value or a junk line holding ESC [2J or an OSC sequence would otherwise
# clear or retitle the terminal reading the diagnostics, and a NUL makes grep call the log
# binary. Line ends are handled apart (_one_line).
_UNPRINTABLE = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x09), *range(0x0b, 0x0d), *range(0x0e, 0x20),
                                          *range(0x7f, 0xa0))}
_UNPRINTABLE.update({c: f"\\u{c:04x}" for c in (0x2028, 0x2029, *range(0x202a, 0x202f), *range(0x2066, 0x206a))})
# A file name's line ends too: as a space, "new<LF>line.pgn" would read as "new line.pgn".
_UNPRINTABLE_NAME = {**_UNPRINTABLE, 0x0a: "\\x0a", 0x0d: "\\x0d"}


def printable(text: str) -> str:
    """``text`` (a file name, a tag value, a baseline's field: anything read) made safe to
    print on a terminal or in a CI log, on one line: the bytes of a name that is not UTF-8
    as ``\\xNN`` (as in the tables), control characters, line ends included, and
    bidirectional overrides as escapes (``\\x1b``, ``\\x0a``, ``\\u202e``), and a leading
    ``::`` as ``\\x3a:``, so that no GitHub Actions workflow command (``::error::``,
    ``::add-mask::``) can start a line."""
    text = str(text)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raw = text.encode("utf-8", "backslashreplace")
        text = raw.decode("utf-8", "backslashreplace")
    text = text.translate(_UNPRINTABLE_NAME)
    return "\\x3a" + text[1:] if text.startswith("::") else text


def _one_line(text: str) -> str:
    # A diagnostic is one line whatever the input held (tag values, comments), and prints
    # no control character.
    return text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ").translate(_UNPRINTABLE)


def _context(d: Diagnostic) -> str:
    parts = []
    if d.game_index is not None:
        parts.append(f"game_index {d.game_index}" + (f' "{d.players}"' if d.players else ""))
    if d.ply is not None:
        parts.append(f"ply {d.ply}")
    return f" ({', '.join(parts)})" if parts else ""


def format_text(d: Diagnostic) -> str:
    """``path:line:column: severity[code]: message (game_index N "White - Black", ply P)``;
    ``:column`` (or ``:line:column``) left out when unknown, the parenthesis too."""
    loc = printable(d.path)
    if d.line is not None:
        loc += f":{d.line}"
        if d.column is not None:
            loc += f":{d.column}"
    return _one_line(f"{loc}: {d.severity}[{d.code}]: {d.message}{_context(d)}")


def _escape_data(text: str) -> str:
    # GitHub workflow command escaping (actions/toolkit, command.ts); other control
    # characters as in the text format.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A").translate(_UNPRINTABLE)


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def format_github(d: Diagnostic) -> str:
    """A GitHub Actions workflow command: ``::error file=P,line=L,col=C,title=CODE::MESSAGE``
    (``::warning`` for warnings; ``line``/``col`` left out when unknown), which the Actions
    runner shows as an annotation on the file."""
    command = "error" if d.severity == "error" else "warning" if d.severity == "warning" else "notice"
    props = [f"file={_escape_property(d.path)}"]
    if d.line is not None:
        props.append(f"line={d.line}")
        if d.column is not None:
            props.append(f"col={d.column}")
    props.append(f"title={_escape_property(d.code)}")
    return f"::{command} {','.join(props)}::{_escape_data(d.message + _context(d))}"


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def closing_line(summary: dict, pgn: bool = True, epd: bool = False, baseline: bool = False) -> str:
    """The closing count line, from a :meth:`Tally.as_dict` summary plus ``warnings`` (the
    number of warning diagnostics): ``N games: N ok, N with errors, N warnings`` for PGN
    input; with ``epd``, ``N EPD positions: N valid, N invalid`` as a second group
    (``"; "``-separated, warnings last); with ``pgn`` False the games group is left out.
    With ``baseline`` (a run against one), the games counts cover every issue but the
    diagnostics shown are the new ones, so the tail says so and counts the new errors
    (``errors``) too: ``...; not in the baseline: N errors, N warnings``."""
    groups = []
    if pgn:
        groups.append(f"{_plural(summary['games_read'], 'game')}: {summary['games_ok']} ok, "
                      f"{summary['games_with_errors']} with errors")
    if epd:
        n = summary.get("epd_positions", 0)
        invalid = summary.get("epd_invalid", 0)
        groups.append(f"{_plural(n, 'EPD position')}: {n - invalid} valid, {invalid} invalid")
    tail = _plural(summary.get("warnings", 0), "warning")
    if baseline:
        return "; ".join(groups + [f"not in the baseline: {_plural(summary.get('errors', 0), 'error')}, {tail}"])
    if len(groups) == 1:
        return f"{groups[0]}, {tail}"
    return "; ".join(groups + [tail])


def counts_by_code(summary: dict, codes: dict, hidden: dict | None = None,
                   reported: dict | None = None) -> str:
    """The issues of a run by code, largest count first, one line each (``  14  error
    illegal-move``), under ``issues by code (occurrences):``. The counts are the summary's,
    every occurrence; a code reported once a game or once a file says how many diagnostics
    stand for its occurrences (``reported``: code -> rows reported,
    :attr:`~chessscan.reports.filters.IssueFilter.reported`): ``113  warning  uci-move  (1
    diagnostic: once a game)``, so that the diagnostics' count of the closing line adds up.
    Codes left out by ``--select``/``--ignore`` (``hidden``: code -> rows not reported) are
    marked ``(not reported)``. ``codes`` is the registry
    (:data:`chessscan.reports.codes.ISSUE_CODES`). Empty when there is no issue."""
    from chessscan.reports.filters import PER_FILE_CODES, PER_GAME_CODES

    by_code = summary.get("issues_by_code") or {}
    if not by_code:
        return ""
    hidden = hidden or {}
    width = len(f"{max(by_code.values()):,}")
    lines = ["issues by code (occurrences):"]
    for code, n in sorted(by_code.items(), key=lambda kv: (-kv[1], kv[0])):
        severity = codes[code].severity if code in codes else "?"
        note = ""
        if hidden.get(code):
            note = "  (not reported)"
        elif reported is not None and code in PER_GAME_CODES | PER_FILE_CODES and reported.get(code, 0) < n:
            once = "once a game" if code in PER_GAME_CODES else "once a file"
            note = f"  ({_plural(reported.get(code, 0), 'diagnostic')}: {once})"
        lines.append(f"  {n:>{width},}  {severity:<7}  {code}{note}")
    return "\n".join(lines)


class DiagnosticSink:
    """A :func:`~chessscan.engines.local.run` sink that collects ``issues`` and
    ``disagreements`` rows as :class:`Diagnostic` objects and writes no table.

    ``emit`` is called once per diagnostic, in input order: by game (within a game by line
    and column, cross-check disagreements last), and by line for EPD files. Rows are held
    until their game's ``games`` row has been seen (for the players' names), so output
    follows the engine's batches; call :meth:`finish` after each ``run`` to emit the rest.
    Feed one source per ``run`` call: game numbers restart with each file.
    ``counts`` maps severity -> diagnostics emitted so far.
    """

    #: Takes Arrow arrays as column buffers (the parallel engine then sends its record
    #: batches as they come from the workers).
    accepts_arrow = True
    #: Reads no games column but those naming a game (source, game_index, line, white, black):
    #: :func:`~chessscan.engines.local.run` then fills no other.
    reads_game_names = True
    #: Reads no perpetuals rows: :func:`~chessscan.engines.local.run` then makes none.
    reads_perpetuals = False

    def __init__(self, emit: Callable[[Diagnostic], None]) -> None:
        self._emit = emit
        # The games batches kept for naming the diagnostics of their games, oldest first.
        self._games: list[_GameBatch] = []
        self._pending: list[tuple[tuple, dict]] = []
        self._seq = 0
        self.counts: dict[str, int] = {"error": 0, "warning": 0}

    def write(self, table_name: str, columns: dict[str, list]) -> None:
        """Take one batch of a report table (``{column: values}``); other tables than
        ``games``, ``issues`` and ``disagreements`` are ignored. Columns may be lists or
        Arrow arrays (as the parallel engine sends)."""
        if table_name not in ("games", "issues", "disagreements"):
            return
        if table_name == "games":  # only the columns that name a game
            columns = {k: columns[k] for k in ("source", "game_index", "line", "white", "black")}
        columns = {k: v.to_pylist() if hasattr(v, "to_pylist") else v for k, v in columns.items()}
        if table_name == "games":
            self._games.append(_GameBatch(columns))
            self._drain(keep=True)
        elif table_name == "issues":
            self._hold(columns, 0)
        elif table_name == "disagreements":
            self._hold(columns, 1)

    def finish(self) -> None:
        """Emit every held diagnostic (end of a source)."""
        self._drain(keep=False, force=True)
        self._games.clear()

    def _hold(self, columns: dict[str, list], kind: int) -> None:
        names = list(columns)
        for values in zip(*columns.values()):
            row = dict(zip(names, values))
            gi = row["game_index"]
            # Sort key inside a source: game, then issues by position, then disagreements.
            line, col = row.get("line"), row.get("column")
            key = (-1 if gi is None else gi, kind, line or 0, col or 0, self._seq)
            self._seq += 1
            row["_kind"] = kind
            self._pending.append((key, row))

    def _drain(self, keep: bool, force: bool = False) -> None:
        """Emit the held rows whose game row has come (all with ``force``); with ``keep``
        (a games batch just came) and every row out, keep only the last games batch."""
        if self._pending:
            self._pending.sort(key=lambda kr: kr[0])
            out = 0
            for _, row in self._pending:
                gi = row["game_index"]
                if gi is not None and not force and self._game(row["source"], gi) is None:
                    break  # its game row has not come yet: keep order, wait for it
                self._emit_row(row)
                out += 1
            del self._pending[:out]
        if not self._pending and keep:
            # Every held row is out; later rows can only concern games of this batch or later.
            del self._games[:-1]

    def _game(self, source: str, game_index: int) -> tuple[int, str | None] | None:
        """(line of the game's first line, players or None) of a game of the kept batches
        (the latest batch's row when several hold it), or None."""
        key = (source, game_index)
        for batch in reversed(self._games):
            found = batch.game(key)
            if found is not None:
                return found
        return None

    def _emit_row(self, row: dict) -> None:
        gi = row["game_index"]
        game_line, players = (self._game(row["source"], gi) or (None, None)) if gi is not None else (None, None)
        if row["_kind"] == 0:
            d = Diagnostic(row["source"], row["line"], row["column"], row["severity"], row["code"],
                           row["message"], gi, row["ply"], row["san"], players)
        else:
            note = f" ({row['note']})" if row.get("note") else ""
            fen = f" [FEN before the move: {row['fen']}]" if row.get("fen") else ""
            d = Diagnostic(row["source"], game_line, None, "warning", "disagreement",
                           f"{row['field']}: chessscan says {row['chessscan']}, python-chess says "
                           f"{row['python_chess']}{note}{fen}", gi, row["ply"], None, players)
        self.counts[d.severity] = self.counts.get(d.severity, 0) + 1
        self._emit(d)


class _GameBatch:
    """The columns of one ``games`` batch that name a game (source, game_index, line, white,
    black), indexed by (source, game_index) only when a diagnostic asks: a batch whose games
    have no diagnostic costs no object a game."""

    __slots__ = ("source", "game_index", "line", "white", "black", "_rows")

    def __init__(self, columns: dict[str, list]) -> None:
        # Copies: the engine empties its buffers in place once they are written.
        self.source = list(columns["source"])
        self.game_index = list(columns["game_index"])
        self.line = list(columns["line"])
        self.white = list(columns["white"])
        self.black = list(columns["black"])
        self._rows: dict[tuple[str, int], int] | None = None

    def game(self, key: tuple[str, int]) -> tuple[int, str | None] | None:
        """(line, players) of the game ``key`` (source, game_index), its last row when the
        batch holds several; None when the batch does not hold it."""
        if self._rows is None:
            self._rows = dict(zip(zip(self.source, self.game_index), range(len(self.source))))
        i = self._rows.get(key)
        if i is None:
            return None
        white, black = self.white[i], self.black[i]
        players = None if white is None and black is None else f"{white or '?'} - {black or '?'}"
        return self.line[i], players
