"""Baselines for ``chessscan validate``: accept the issues already known, fail on new ones.

A baseline file (``--write-baseline FILE``) is JSON, written sorted with one entry per line so
that it diffs well under version control::

    {
      "format": "chessscan-baseline",
      "version": 1,
      "entries": [
        {"code": "illegal-move", "count": 1, "game": "3f1c...", "message": "...", "players": "A - B", "ply": 3, "severity": "error"},
        ...
      ]
    }

An entry is keyed on ``game``, ``code`` and ``ply`` only (``ply`` null for an issue with no
ply): ``game`` is the first 20 hex digits of the SHA-256 of the game's own text (its tag
section and movetext as they stand in the file, line ends made LF, blank space around it
stripped; an EPD position's line; ``source:PATH`` for an issue of a whole source, or of a
game with no text, as an archive given as an input), so an
entry follows its game when games are added, removed or reordered around it, or moved to
another file. ``count`` is how many issues have that key (identical games in a file each
count). ``severity``, ``message`` and ``players`` are there for the reader and are not
compared. Entries are sorted by ``game``, ``code``, ``ply``.

With ``--baseline FILE``, each issue whose key still has a count left in the baseline is
known (not shown, not failing); the others are new. Entries whose count is not used up are
*fixed*: reported so that the file can shrink (write it again).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Iterable

from chessscan.reports.diagnostics import Diagnostic
from chessscan.reports.records import Record, own_text

__all__ = ["FORMAT", "VERSION", "MAX_BASELINE_BYTES", "FIXED_SHOWN", "Baseline", "BaselineError",
           "BaselineRecorder", "game_key", "issue_key"]

FORMAT = "chessscan-baseline"
VERSION = 1
#: The largest baseline file read: about 200,000 entries, which take about 300 MiB once read
#: (a JSON object costs about five times its text). A larger file, or an endless one
#: (``/dev/zero``), is refused once this much of it is read.
MAX_BASELINE_BYTES = 64 << 20
#: How many fixed entries ``validate`` prints one line each; the others are counted in one
#: line (``--format json`` lists them all).
FIXED_SHOWN = 20

Key = tuple[str, str, "int | None"]


class BaselineError(ValueError):
    """A baseline file that cannot be read: not JSON, or not of this format."""


def game_key(record: Record) -> str:
    """The content key of a record (see the module doc)."""
    text = own_text(record)
    if not text:  # an issue of a whole source (an archive given as an input)
        return f"source:{record.path}"
    return hashlib.sha256(text).hexdigest()[:20]


def issue_key(game: str, d: Diagnostic) -> Key:
    """(game key, code, ply): what an entry is matched on."""
    return (game, d.code, d.ply)


def _sort_key(key: Key) -> tuple:
    game, code, ply = key
    return (game, code, -1 if ply is None else ply)


class BaselineRecorder:
    """Collects the issues of a run, for ``--write-baseline``."""

    def __init__(self) -> None:
        self._counts: Counter = Counter()
        self._info: dict[Key, tuple[str, str, str | None]] = {}

    def add(self, game: str, d: Diagnostic) -> None:
        key = issue_key(game, d)
        self._counts[key] += 1
        info = (d.severity, d.message, d.players)
        # Several issues under one key: keep the smallest message, so the file is deterministic.
        if key not in self._info or info < self._info[key]:
            self._info[key] = info

    def entries(self) -> list[dict]:
        """The entries, sorted (module doc)."""
        out = []
        for key in sorted(self._counts, key=_sort_key):
            severity, message, players = self._info[key]
            out.append({"game": key[0], "code": key[1], "ply": key[2], "count": self._counts[key],
                        "severity": severity, "message": message, "players": players})
        return out

    def write(self, path: str) -> int:
        """Write the baseline file (replacing it atomically); return the number of entries.
        Raises OSError."""
        entries = self.entries()
        lines = [json.dumps(e, sort_keys=True, ensure_ascii=False) for e in entries]
        body = ",\n    ".join(lines)
        text = (f'{{\n  "format": "{FORMAT}",\n  "version": {VERSION},\n  "entries": ['
                + (f"\n    {body}\n  " if lines else "") + "]\n}\n")
        from chessscan.reports.writers import replace_file

        replace_file(path, text.encode("utf-8"))
        return len(entries)


class Baseline:
    """A baseline read from a file (:meth:`load`). :meth:`known` consumes one count of a key;
    :meth:`fixed` lists what was not consumed."""

    def __init__(self, entries: Iterable[dict]) -> None:
        self._left: Counter = Counter()
        self._entries: dict[Key, dict] = {}
        for e in entries:
            key = (e["game"], e["code"], e.get("ply"))
            self._left[key] += int(e.get("count", 1))
            self._entries.setdefault(key, e)
        self.size = sum(self._left.values())

    @classmethod
    def load(cls, path: str) -> "Baseline":
        """Read a baseline file. Raises OSError, or :class:`BaselineError` for a file that is
        not a chessscan baseline or holds more than :data:`MAX_BASELINE_BYTES` bytes (read no
        further)."""
        with open(path, "rb") as f:
            data = f.read(MAX_BASELINE_BYTES + 1)
        if len(data) > MAX_BASELINE_BYTES:
            raise BaselineError(f"{path} holds more than {MAX_BASELINE_BYTES >> 20} MiB: not a baseline this "
                                f"chessscan reads (it reads at most {MAX_BASELINE_BYTES >> 20} MiB, "
                                "about 200,000 entries)")
        try:
            text = data.decode("utf-8")
            del data  # (not held while the text is parsed)
            doc = json.loads(text)
        # JSONDecodeError and UnicodeDecodeError are ValueErrors, as is int()'s refusal of
        # a number of 4300+ digits; arrays nested thousands deep are a RecursionError.
        except (ValueError, RecursionError) as exc:
            raise BaselineError(f"{path} is not JSON: {exc}") from exc
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise BaselineError(f"{path} is not a chessscan baseline (no \"format\": \"{FORMAT}\")")
        if doc.get("version") != VERSION:
            raise BaselineError(f"{path} is a baseline of version {doc.get('version')!r}; "
                                f"this chessscan reads version {VERSION}")
        entries = doc.get("entries")
        if not isinstance(entries, list) or not all(
                isinstance(e, dict) and isinstance(e.get("game"), str) and isinstance(e.get("code"), str)
                and (e.get("ply") is None or isinstance(e.get("ply"), int))
                and isinstance(e.get("count", 1), int) and e.get("count", 1) >= 1 for e in entries):
            raise BaselineError(f"{path}: \"entries\" must be a list of {{game, code, ply, count}} objects")
        return cls(entries)

    def known(self, game: str, d: Diagnostic) -> bool:
        """Whether ``d`` (of the game with key ``game``) is in the baseline; uses up one count."""
        key = issue_key(game, d)
        if self._left[key] > 0:
            self._left[key] -= 1
            return True
        return False

    def fixed(self) -> list[dict]:
        """Entries not (fully) used: each with ``count`` the number of issues no longer found."""
        out = []
        for key in sorted((k for k, n in self._left.items() if n > 0), key=_sort_key):
            e = dict(self._entries[key])
            e["count"] = self._left[key]
            out.append(e)
        return out
