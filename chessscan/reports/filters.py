"""Which issues are reported, and how often: ``--select`` / ``--ignore``, and repeated facts once.

:class:`IssueFilter` sits between an engine and a sink (a report writer, the diagnostics of
``chessscan validate``). It passes every table on unchanged except ``issues``, where:

* a code left out by ``--select`` or named by ``--ignore`` is not reported (the summary,
  built from the engine's tally, still counts it);
* ``uci-move`` is one fact per game: the game's first row is kept, its message ending with
  the number of moves of that game written in UCI;
* ``decode-fallback`` is one fact per file: its rows are held back and one row per source is
  written when the rows of the next source come (or at :meth:`IssueFilter.finish`), at the
  first such game, with the number of games decoded so. An inner sink with a
  ``per_file_issue(row)`` method (``validate``'s records) is handed each game's row as it
  comes, as a dict of column values.

Codes may be given by name or by group (``syntax``, ``moves``, ``positions``,
``consistency``, ``input``: :data:`chessscan.reports.codes.GROUPS`).
"""

from __future__ import annotations

from typing import Iterable

from chessscan.reports.codes import GROUPS, ISSUE_CODES

__all__ = ["parse_codes", "IssueFilter", "PER_GAME_CODES", "PER_FILE_CODES", "held_row"]

#: Codes reported once per game and once per source (with a count in the message).
PER_GAME_CODES = frozenset({"uci-move"})
PER_FILE_CODES = frozenset({"decode-fallback"})


def parse_codes(texts: Iterable[str]) -> frozenset[str]:
    """The codes named by ``texts`` (each ``CODE[,CODE...]``; a group name stands for its
    codes). Raises ``ValueError`` naming an unknown code."""
    out = set()
    for text in texts:
        for item in text.split(","):
            item = item.strip().lower()
            if not item:
                continue
            if item in GROUPS:
                out.update(c.code for c in ISSUE_CODES.values() if c.group == item)
            elif item in ISSUE_CODES:
                out.add(item)
            else:
                raise ValueError(f"unknown issue code {item!r} (codes are listed in the documentation, "
                                 f"\"Issue codes\"; groups: {', '.join(GROUPS)})")
    return frozenset(out)


def _first(column):
    """The first value of a column buffer (a list or an Arrow array), or None if empty."""
    if column is None or len(column) == 0:
        return None
    value = column[0]
    return value.as_py() if hasattr(value, "as_py") else value


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _counted(message: str, count: int) -> str:
    """A per-file row's message with the number of games it stands for."""
    return message + (f"; {_plural(count, 'game')} of this file are decoded so (reported once)" if count > 1 else "")


def held_row(row: dict, count: int) -> dict:
    """A row of :meth:`IssueFilter.take_held` completed with ``count``, the occurrences in
    every part of its file (the one row written for them)."""
    return {**row, "message": _counted(row["message"], count)}


class IssueFilter:
    """A sink wrapper (see the module docstring). ``select``: the codes to report (None:
    all); ``ignore``: codes not to report. Call :meth:`finish` at the end of each source
    or run, before the inner sink is closed. ``reported`` counts the issue rows passed on
    per code, ``hidden`` the rows left out by ``select``/``ignore``."""

    accepts_arrow = True

    def __init__(self, inner, select: Iterable[str] | None = None, ignore: Iterable[str] = ()) -> None:
        self.inner = inner
        self.select = None if select is None else frozenset(select)
        self.ignore = frozenset(ignore)
        self._held: dict[str, list] = {}  # source -> [first row, count]
        self._names: list[str] = []
        self.reported: dict[str, int] = {}
        self.hidden: dict[str, int] = {}

    @property
    def reads_game_names(self) -> bool:
        """Whether the wrapped sink reads no games column but those naming a game (the games
        rows are passed on unchanged; this filter reads their sources only)."""
        return bool(getattr(self.inner, "reads_game_names", False))

    @property
    def reads_perpetuals(self) -> bool:
        """Whether the wrapped sink reads the perpetuals rows (passed on unchanged)."""
        return getattr(self.inner, "reads_perpetuals", True)

    def wanted(self, code: str) -> bool:
        """Whether rows of ``code`` are reported."""
        return (self.select is None or code in self.select) and code not in self.ignore

    def write(self, table_name: str, columns) -> None:
        if self._held:
            # Rows of another source: the sources before it are done, their held rows go first.
            first = _first(columns.get("source") if isinstance(columns, dict) else None)
            if first is not None and any(src != first for src in self._held):
                self._release(lambda src: src != first)
        if table_name != "issues":
            if table_name != "disagreements" or self.wanted("disagreement"):
                self.inner.write(table_name, columns)
            return
        names = list(columns)
        self._names = names
        at = {n: i for i, n in enumerate(names)}
        code_i, source_i, game_i, message_i = at["code"], at["source"], at["game_index"], at["message"]
        cols = [c.to_pylist() if hasattr(c, "to_pylist") else list(c) for c in columns.values()]
        rows: list[list] = []
        per_game: dict[tuple, list] = {}  # this game's (source, game_index, code) -> [kept row, count]
        kept: list[list] = []  # per_game's entries, also of the games before (see below)
        game = None  # (source, game_index) of the row before
        for row in zip(*cols):
            if (row[source_i], row[game_i]) != game:
                # Another game: a game's rows are contiguous, and a source given twice
                # repeats its game indexes, so the once-a-game rule looks at this game only.
                game = (row[source_i], row[game_i])
                per_game = {}
            if self._held and any(src != row[source_i] for src in self._held):
                rows.extend(self._take(lambda src, now=row[source_i]: src != now))
            code = row[code_i]
            if not self.wanted(code):
                self.hidden[code] = self.hidden.get(code, 0) + 1
                continue
            if code in PER_FILE_CODES:
                self._held.setdefault(row[source_i], [list(row), 0])[1] += 1
                per_file = getattr(self.inner, "per_file_issue", None)
                if per_file is not None:  # (validate's records: the split rejects on it)
                    per_file(dict(zip(names, row)))
                continue
            if code in PER_GAME_CODES and row[game_i] is not None:
                key = (row[source_i], row[game_i], code)
                if key in per_game:
                    per_game[key][1] += 1
                    continue
                per_game[key] = [list(row), 1]
                kept.append(per_game[key])
                rows.append(per_game[key][0])
                continue
            rows.append(list(row))
        # A game's rows come in one batch (engines flush between games), so counts are whole.
        for row, count in kept:
            if count > 1:
                row[message_i] += f" ({count} moves of this game are written so; reported once)"
        self._pass(names, rows)

    def finish(self) -> None:
        """Write the held per-source rows: one per source, at its first occurrence's place
        (game, line), with the count in the message."""
        self._release(lambda src: True)

    def take_held(self) -> dict[str, tuple[dict, int]]:
        """The held per-source rows, not written: ``{source: (row, count)}``, ``row`` a dict
        of column values, its message without the count (a Dask shard holds part of a file:
        :func:`held_row` completes the row once the counts of every part are added)."""
        held = {src: (dict(zip(self._names, row)), count) for src, (row, count) in self._held.items()}
        self._held = {}
        return held

    def hold(self, held: dict[str, tuple[dict, int]]) -> None:
        """Take over once-a-file rows another filter held (:meth:`take_held` of a filter over
        a part of a source, in a worker): their counts add to those held here for the same
        source, and they are written as this filter's own (:meth:`finish`, :meth:`next_source`)."""
        for source, (row, count) in held.items():
            if not self._names:
                self._names = list(row)
            self._held.setdefault(source, [[row[n] for n in self._names], 0])[1] += count

    def holding(self, source: str) -> bool:
        """Whether once-a-file rows of a source other than ``source`` are held."""
        return any(src != source for src in self._held)

    def next_source(self, source: str) -> None:
        """The rows that come next are of ``source`` and written past this filter (a part
        of the report another process wrote): the held rows of the other sources are
        written first, as when such rows come through :meth:`write`."""
        if self._held and any(src != source for src in self._held):
            self._release(lambda src: src != source)

    def _release(self, which) -> None:
        self._pass(self._names, self._take(which))

    def _take(self, which) -> list[list]:
        """The held rows of the sources ``which(source)`` accepts, completed with their
        counts, and no longer held."""
        held = {src: v for src, v in self._held.items() if which(src)}
        if not held:
            return []
        self._held = {src: v for src, v in self._held.items() if src not in held}
        message_i = self._names.index("message")
        rows = []
        for row, count in held.values():
            row[message_i] = _counted(row[message_i], count)
            rows.append(row)
        return rows

    def _pass(self, names: list[str], rows: list[list]) -> None:
        if not rows:
            return
        code_i = names.index("code")
        for row in rows:
            code = row[code_i]
            self.reported[code] = self.reported.get(code, 0) + 1
        self.inner.write("issues", {n: [r[i] for r in rows] for i, n in enumerate(names)})
