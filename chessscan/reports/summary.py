"""Human-readable rendering of the run summary (for stderr).

Pure functions only: nothing here prints. The summary is whatever dict the
caller built (also written as ``summary.json``); well-known keys get nicer
labels and a fixed order, everything else is rendered generically.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any, Mapping

__all__ = ["render_summary", "percent", "sources_line", "LABELS", "ORDER"]

#: key -> display label; keys not listed get ``key.replace("_", " ")``.
LABELS: dict[str, str] = {
    "games_read": "games read",
    "games_ok": "games ok",
    "games_with_errors": "games with errors",
    "games_with_warnings": "games with warnings",
    "positions": "positions",
    "checks": "checks",
    "checks_by_kind": "checks by kind",
    "checkmates": "checkmates",
    "stalemates": "stalemates",
    "perpetuals": "perpetuals",
    "issues": "issues",
    "issues_by_code": "issues by code",
    "epd_positions": "EPD positions",
    "disagreements": "disagreements",
    "elapsed_seconds": "elapsed (s)",
    "positions_per_second": "positions / s",
    "games_per_second": "games / s",
}

#: top-level keys shown first, in this order (when present).
ORDER: tuple[str, ...] = (
    "sources", "games_read", "games_ok", "games_with_errors", "games_with_warnings",
    "games_unsupported_variant", "positions", "checks", "checks_by_kind", "checkmates", "stalemates",
    "outcomes", "perpetuals", "perpetual_checks", "twofold_check_cycles", "epd_positions",
    "issues", "issues_by_severity", "issues_by_code", "disagreements",
    "elapsed_seconds", "games_per_second", "positions_per_second",
)

#: Sources listed by name in the summary; more are counted, with the first few named.
MAX_SOURCES_NAMED = 3

# Counts that read better as a share of games_read.
_SHARE_OF_GAMES = ("games_ok", "games_with_errors", "games_with_warnings")
# Nested count dicts that read better sorted by count, largest first.
_SORT_BY_COUNT = ("issues", "issues_by_code", "errors_by_code", "warnings_by_code")

_INDENT = "  "
# Keys left to summary.json: chart data for ``chessscan report``.
_HIDDEN = ("check_routes", "checkmate_kinds", "checkmate_routes", "results", "issues_by_source", "histograms")


def render_summary(summary: Mapping[str, Any], *, title: str | None = "chessscan summary") -> str:
    """Render ``summary`` as an aligned two-column text table (no trailing newline).

    * Chart data (``check_routes``, ``checkmate_kinds``, ``checkmate_routes``, ``results``,
      ``issues_by_source``, ``histograms``) is left out: it is in summary.json, for
      ``chessscan report``.
    * Known keys (``LABELS``/``ORDER``) come first, in a fixed order; other
      keys follow in insertion order with underscores turned into spaces.
    * Nested dicts become an indented block under their key (e.g. checks by
      kind, issues by code; count-valued issue dicts are sorted largest
      first). Lists of dicts become blocks labelled ``[0]``, ``[1]``...;
      lists of scalars are comma-joined.
    * ints get thousands separators, floats 2 decimals, bools yes/no, None
      ``-``; games_ok / games_with_errors get a percentage of games_read.
    * Text (source names, above all) is made printable, on one line
      (:func:`~chessscan.reports.diagnostics.printable`): a file name cannot clear the
      terminal or start a line of its own in a CI log.

    Example::

        chessscan summary
        games read           1,000
        games ok               990  (99.0%)
        checks by kind
          direct               812
    """
    from chessscan.reports.diagnostics import printable

    rows: list[tuple[int, str, str | None, bool]] = []  # depth, label, value, numeric
    _collect(summary, 0, rows, top=True)
    rows = [(d, printable(lbl), v if v is None or num else printable(v), num) for d, lbl, v, num in rows]
    if not rows:
        return title + "\n(empty)" if title else "(empty)"

    label_w = max(len(_INDENT) * d + len(lbl) for d, lbl, _, _ in rows)
    num_w = max((len(_num_part(v)) for _, _, v, num in rows if num and v is not None), default=0)
    lines = [title] if title else []
    for depth, label, value, numeric in rows:
        left = (_INDENT * depth + label).ljust(label_w)
        if value is None:  # block header
            lines.append(left.rstrip())
        elif numeric:
            num, rest = _num_part(value), value[len(_num_part(value)):]
            lines.append(f"{left}  {num.rjust(num_w)}{rest}".rstrip())
        else:
            lines.append(f"{left}  {value}".rstrip())
    return "\n".join(lines)


def _num_part(value: str) -> str:
    # The number is everything before the first double space (the % suffix).
    return value.split("  ", 1)[0]


def _label(key: Any) -> str:
    k = str(key)
    return LABELS.get(k, k.replace("_", " "))


def _ordered_items(d: Mapping[Any, Any], key: Any, top: bool) -> list[tuple[Any, Any]]:
    items = list(d.items())
    if top:
        rank = {k: i for i, k in enumerate(ORDER)}
        # Stable: known keys by ORDER, then unknown ones in insertion order.
        items.sort(key=lambda kv: rank.get(kv[0], len(ORDER)) if isinstance(kv[0], str) else len(ORDER))
    elif key in _SORT_BY_COUNT and items and all(_is_number(v) for _, v in items):
        items.sort(key=lambda kv: (-kv[1], str(kv[0])))
    elif key == "issues_by_severity":
        from chessscan.reports.codes import SEVERITIES

        items.sort(key=lambda kv: SEVERITIES.index(kv[0]) if kv[0] in SEVERITIES else len(SEVERITIES))
    return items


def _collect(d: Mapping[Any, Any], depth: int, rows: list, *, top: bool = False,
             parent: Any = None) -> None:
    games_read = d.get("games_read") if top else None
    for key, value in _ordered_items(d, parent, top):
        if top and key in _HIDDEN:
            continue
        # Issue codes are identifiers people grep for: show them verbatim.
        label = str(key) if parent in _SORT_BY_COUNT else _label(key)
        if parent == "issues_by_code":
            label = f"{key} ({_severity(key)})"
        if top and key == "sources" and isinstance(value, (list, tuple)) and len(value) > MAX_SOURCES_NAMED:
            rows.append((depth, label, sources_line(value), False))
            continue
        if isinstance(value, Mapping):
            if not value:
                rows.append((depth, label, "(none)", False))
            else:
                rows.append((depth, label, None, False))
                _collect(value, depth + 1, rows, parent=key)
        elif isinstance(value, (list, tuple, set, frozenset)):
            seq = list(value)
            if seq and all(isinstance(x, Mapping) for x in seq):
                rows.append((depth, label, None, False))
                for i, item in enumerate(seq):
                    rows.append((depth + 1, f"[{i}]", None, False))
                    _collect(item, depth + 2, rows, parent=key)
            else:
                rows.append((depth, label, ", ".join(_fmt(x) for x in seq) or "(none)", False))
        else:
            text = _fmt(value)
            numeric = _is_number(value)
            if (numeric and key in _SHARE_OF_GAMES and _is_number(games_read)
                    and games_read > 0):
                text += f"  ({percent(value, games_read)})"
            rows.append((depth, label, text, numeric))


def sources_line(sources) -> str:
    """The sources of a run in one line: their names, comma-separated, up to
    :data:`MAX_SOURCES_NAMED`; more as ``59 files: a.pgn, b.pgn, c.pgn, ...``."""
    names = [str(v) for v in sources]
    if len(names) > MAX_SOURCES_NAMED:
        return f"{len(names)} files: {', '.join(names[:MAX_SOURCES_NAMED])}, ..."
    return ", ".join(names)


def percent(part: float, whole: float) -> str:
    """``part`` as a share of ``whole``, readable at any size: one decimal (``12.5%``), two
    significant digits under 1% (``0.42%``, ``0.0042%``), and never ``0.0%`` or ``100.0%``
    for a share that is not exactly that (``<0.001%``, ``>99.9%``)."""
    if whole <= 0:
        return "-"
    share = 100.0 * part / whole
    if share == 0 or share == 100:
        return f"{share:.1f}%"
    if share < 0.001:
        return "<0.001%"
    if share < 1:
        return f"{share:.2g}%"
    if share > 99.9:
        return ">99.9%"
    return f"{share:.1f}%"


def _severity(code: Any) -> str:
    from chessscan.reports.codes import ISSUE_CODES

    entry = ISSUE_CODES.get(str(code))
    return entry.severity if entry else "?"


def _is_number(v: Any) -> bool:
    return isinstance(v, Real) and not isinstance(v, bool)


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, Integral):
        return f"{int(v):,}"
    if isinstance(v, Real):
        f = float(v)
        if math.isnan(f) or math.isinf(f):
            return str(f)
        # Rates in the thousands read better without their hundredths.
        return f"{f:,.0f}" if abs(f) >= 100 else f"{f:,.2f}"
    return str(v)
