"""``report.html``: one self-contained page about a report folder (``chessscan report``).

The page is built from ``summary.json`` (and ``run.json``, the run's timing and options) plus
bounded, streamed reads of the tables (:mod:`chessscan.reports.readback`): the games with
errors, their error rows, a few examples of each rare event and the moves of those games, so
that a Lichess month's report renders in the memory of a small one. It holds no script and
loads nothing: charts are SVG drawn here by matplotlib (Agg/SVG backends, text kept as text
so it prints sharp), boards are SVG drawn by python-chess's ``chess.svg`` (rendering only:
the positions are chessscan's, replayed by its own core), styles are inline.

Sections: headline; charts (outcomes, check kinds and routes, game lengths, checks and
checkmates by move number, issues by code/severity and by source, results against the board,
perpetual checks against twofold cycles); "where it is wrong" (the first games with errors by
source and line, each with the position before the failing move and the move as an arrow;
examples of rare events); the data dictionary, generated from
:data:`chessscan.reports.schema.TABLE_SPECS` and :data:`chessscan.reports.codes.ISSUE_CODES`.
"""

from __future__ import annotations

import datetime as _dt
import html
import io
import os
import re
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from chessscan.analysis.game import CHECK_ROUTES, RESULT_VERDICTS, variant_kind
from chessscan.core.fen import InvalidFen, parse_fen
from chessscan.core.movegen import attackers
from chessscan.core.position import STARTING_FEN, Position
from chessscan.core.san import CASTLE_A_SIDE, CASTLE_H_SIDE, SanError, candidates, parse_san, resolve_san

from .codes import ISSUE_CODES
from .filters import PER_FILE_CODES, PER_GAME_CODES
from .readback import ReportError, ReportTables
from .schema import OPTIONAL_COLUMNS, TABLE_SPECS
from .summary import MAX_SOURCES_NAMED, percent, sources_line

__all__ = ["build_report", "render_report", "ReportError", "ERRORS_SHOWN", "EXAMPLES_SHOWN", "PAGE_GENERATOR",
           "is_report_page"]

#: Games with errors shown with a board (the first, by source and line).
ERRORS_SHOWN = 50
#: Examples shown of each rare event.
EXAMPLES_SHOWN = 3

# Colours: one palette for every chart (readable in grey when printed: distinct lightness).
_BLUE, _ORANGE, _GREEN, _RED, _GREY, _PURPLE = "#3b6fb6", "#e08a2c", "#4c9a56", "#c0392b", "#9aa0a6", "#7d5ba6"
_SEVERITY_COLOUR = {"error": _RED, "warning": _ORANGE}
_FEN_IN_MESSAGE = re.compile(r"\[FEN before the move: ([^\]]+)\]")

# Rare events: label, positions-table filter, explanation.
_RARE_EVENTS = (
    ("double-check mates", (pc.field("check_kind") == "double") & pc.field("is_checkmate"),
     "checkmate given by two pieces at once: only a king move could have answered it"),
    ("en-passant checks", pc.field("by_en_passant"),
     "check given by an en-passant capture (the capturing pawn, or a line the captured pawn opened)"),
    ("castling checks", pc.field("by_castling"), "check given by the castling rook"),
    ("promotion mates", pc.field("by_promotion") & pc.field("is_checkmate"),
     "checkmate given by a promotion"),
)


#: What every page starts with after its ``<meta charset>``: how ``report -o`` knows a file
#: is a page of chessscan's (to be replaced) and not someone's file (refused).
PAGE_GENERATOR = '<meta name="generator" content="chessscan">'
# Pages written before the generator tag: their title within the same first bytes.
_PAGE_MARKS = (PAGE_GENERATOR.encode(), b"<title>chessscan report: ")
_PAGE_HEAD_BYTES = 1024


def is_report_page(path: str | os.PathLike) -> bool:
    """Whether the regular file at ``path`` (after links) is a page chessscan wrote: one of
    :data:`_PAGE_MARKS` in its first bytes. Raises ``OSError`` when it cannot be read."""
    with open(path, "rb") as f:
        head = f.read(_PAGE_HEAD_BYTES)
    return head.startswith(b"<!DOCTYPE html>") and any(m in head for m in _PAGE_MARKS)


def build_report(folder: str | os.PathLike, out: str | os.PathLike | None = None, *,
                 errors_shown: int = ERRORS_SHOWN, examples: int = EXAMPLES_SHOWN) -> Path:
    """Render the report folder ``folder`` to ``out`` (default ``folder/report.html``).

    Returns the path written. Raises :class:`ReportError` when ``folder`` is not a finished
    chessscan report or a table cannot be read, ``OSError`` when ``out`` cannot be written.
    The file is written as a new temporary file, then renamed: a reader never sees half a
    page, and a link standing at ``folder/report.html`` is replaced, never written through;
    an ``out`` that is a device or symlink, such as ``/dev/stdout``, is written through
    (``replace_file``; ``chessscan report -o`` first refuses an ``out`` that is not a page,
    :func:`is_report_page`).
    """
    tables = ReportTables(folder)
    try:
        target = Path(out) if out is not None else tables.folder / "report.html"
        text = render_report(tables, errors_shown=errors_shown, examples=examples)
    finally:
        tables.close()
    from chessscan.reports.writers import replace_file

    # (backslashreplace: no text read from the folder can make the page invalid UTF-8)
    replace_file(target, text.encode("utf-8", "backslashreplace"), through=out is not None)
    return target


def render_report(tables: ReportTables, *, errors_shown: int = ERRORS_SHOWN,
                  examples: int = EXAMPLES_SHOWN) -> str:
    """The page of ``tables`` as one HTML string."""
    parts = [_head(tables), _headline(tables), _charts(tables),
             _where_wrong(tables, errors_shown, examples), _dictionary(tables), "</main></body></html>\n"]
    return _scope_svg_ids("".join(parts))


_SVG = re.compile(r"<svg\b.*?</svg>", re.S)
_SVG_ID = re.compile(r"""(\bid=["']|\bhref=["']#|url\(#)([^"')]+)""")


def _scope_svg_ids(page: str) -> str:
    """Each inline SVG's ids (and the references to them: ``href="#..."``, ``url(#...)``)
    prefixed with the SVG's number on the page: matplotlib numbers its elements per figure
    (``figure_1``, ``patch_1``...) and python-chess names its pieces (``white-pawn``), so
    every chart and board repeated the same ids, and the page was not valid HTML."""
    count = iter(range(1, 1 << 30))

    def scope(match: re.Match) -> str:
        prefix = f"svg{next(count)}-"
        return _SVG_ID.sub(lambda m: m.group(1) + prefix + m.group(2), match.group(0))

    return _SVG.sub(scope, page)


# ---------------------------------------------------------------------------
# Formatting helpers
# ---------------------------------------------------------------------------
def _e(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _n(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "-" if value is None else ("yes" if value else "no")
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.1f}"
    return _e(value)


def _num(key: str, value: Any) -> str:
    """A figure the tests (and scripts) can find: ``<span data-key="KEY">1,234</span>``."""
    return f'<span class="num" data-key="{_e(key)}">{_n(value)}</span>'


def _pct(part: int, whole: int) -> str:
    # The share as stderr's summary writes it (0.0045%, never a misleading 0.0%).
    return f" ({percent(part, whole)})" if whole else ""


def _plural(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def _table(header: Iterable[str], rows: Iterable[Iterable[Any]], cls: str = "") -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


_CSS = """
:root{--ink:#1f2328;--mute:#59636e;--line:#d0d7de;--bg:#f6f8fa}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--ink)}
header{background:#24292f;color:#fff;padding:18px 32px}
header h1{margin:0;font-size:24px;overflow-wrap:anywhere}header p{margin:4px 0 0;color:#c9d1d9;overflow-wrap:anywhere}
main{max-width:1180px;margin:0 auto;padding:8px 32px 48px}
h2{border-bottom:2px solid var(--line);padding-bottom:4px;margin-top:36px}
h3{margin:24px 0 6px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,160px),1fr));gap:10px;margin:16px 0}
.card{background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:10px 12px;min-width:0}
.card .num{display:block;font-size:22px;font-weight:600}.card small{color:var(--mute)}
.card.bad .num{color:#c0392b}
table{border-collapse:collapse;margin:8px 0 12px;font-size:13px;max-width:100%}
th,td{border:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top;overflow-wrap:break-word}
td .num{white-space:nowrap}
@media (min-width:641px){table.dict td:first-child code,code.table-at{white-space:nowrap}}
th{background:var(--bg)}td.r,th.r{text-align:right}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,540px),1fr));gap:18px}
figure{margin:0;border:1px solid var(--line);border-radius:6px;padding:10px;break-inside:avoid;min-width:0}
figure svg{width:100%;height:auto;display:block}figcaption{font-size:13px;color:var(--mute)}
.note{color:var(--mute);font-size:13px}
.game{display:grid;grid-template-columns:250px minmax(0,1fr);gap:16px;border-top:1px solid var(--line);
 padding:12px 0;break-inside:avoid}
.game svg{width:240px;height:240px}
.where{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px;overflow-wrap:anywhere}
.game .msg{margin:6px 0;white-space:pre-wrap;overflow-wrap:anywhere}
code{background:var(--bg);padding:0 3px;border-radius:3px;overflow-wrap:anywhere}
.examples{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,260px),1fr));gap:14px}
.example{border:1px solid var(--line);border-radius:6px;padding:8px;font-size:13px;break-inside:avoid;min-width:0}
.example svg{width:240px;height:240px;max-width:100%;display:block}
dl.run{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:2px 14px;font-size:14px}dl.run dt{color:var(--mute)}
dl.run dd{margin:0;min-width:0;overflow-wrap:anywhere}
summary{cursor:pointer}.gi{white-space:nowrap}
@media (max-width:640px){header{padding:14px 14px}main{padding:8px 14px 32px}table{font-size:12px}
 th,td{padding:2px 4px}figure{padding:8px}
 .game{grid-template-columns:minmax(0,1fr)}dl.run{grid-template-columns:minmax(0,1fr)}dl.run dt{margin-top:6px}}
@media print{header{background:none;color:#000}header p{color:#333}.charts{grid-template-columns:1fr}}
"""


def _head(tables: ReportTables) -> str:
    from chessscan.readers.sources import display_path

    name = display_path(tables.folder.resolve().name)  # (a name that is not UTF-8: \xNN, as elsewhere)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f'{PAGE_GENERATOR}<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>chessscan report: {_e(name)}</title><style>{_CSS}</style></head><body>'
            f'<header><h1>chessscan report: {_e(name)}</h1>'
            f'<p>{_e(sources_line(tables.summary.get("sources", [])) or "no source recorded")}</p>'
            f'</header><main>')


# ---------------------------------------------------------------------------
# Headline
# ---------------------------------------------------------------------------
def _headline(tables: ReportTables) -> str:
    s, run = tables.summary, tables.run
    read = s.get("games_read", 0)
    checks = s.get("checks", {})
    issues = s.get("issues_by_severity", {})
    cards = [
        ("games_read", read, "games read", ""),
        ("games_ok", s.get("games_ok", 0), "games ok" + _pct(s.get("games_ok", 0), read), ""),
        ("games_with_errors", s.get("games_with_errors", 0),
         "games with errors" + _pct(s.get("games_with_errors", 0), read), "bad" if s.get("games_with_errors") else ""),
        ("positions", s.get("positions", 0), "positions (plies replayed)", ""),
        ("checks", sum(checks.values()), "checks", ""),
        ("checkmates", s.get("checkmates", 0), "checkmates", ""),
        ("stalemates", s.get("stalemates", 0), "stalemates", ""),
        ("errors", issues.get("error", 0), "errors found", "bad" if issues.get("error") else ""),
        ("warnings", issues.get("warning", 0), "warnings found", ""),
    ]
    if s.get("games_unsupported_variant"):
        cards.append(("games_unsupported_variant", s["games_unsupported_variant"],
                      "games of an unsupported variant (counted, not analyzed)", ""))
    if s.get("epd_positions"):
        cards.append(("epd_positions", s["epd_positions"], "EPD positions", ""))
        cards.append(("epd_invalid", s.get("epd_invalid", 0), "invalid EPD positions",
                      "bad" if s.get("epd_invalid") else ""))
    cross = s.get("cross_check", {})
    cards.append(("cross_check.disagreements", cross.get("disagreements", 0),
                  f"disagreements with python-chess on {cross.get('games', 0):,} games cross-checked",
                  "bad" if cross.get("disagreements") else ""))
    out = ['<h2 id="headline">Headline</h2><div class="cards">']
    for key, value, label, cls in cards:
        out.append(f'<div class="card {cls}">{_num(key, value)}<small>{_e(label)}</small></div>')
    out.append("</div>")
    rows = _issue_rows(tables)
    if rows is not None and sum(rows.values()) != sum(issues.values()):
        out.append(f'<p class="note">Issues found count every occurrence, as summary.json; the '
                   f'<code>issues</code> table holds {_plural(sum(rows.values()), "row")}: '
                   + _once_note(s.get("issues_by_code", {}), rows) + ' (see "Issues by code").</p>')

    sources = s.get("sources", [])
    listed = "<br>".join(f"<code>{_e(p)}</code>" for p in sources) or "-"
    if len(sources) > MAX_SOURCES_NAMED:
        listed = f"<details><summary>{len(sources):,} files</summary>{listed}</details>"
    facts = [("sources", listed)]
    if run:
        elapsed = run.get("elapsed_seconds")
        if elapsed is not None:
            facts.append(("elapsed", f"{_num('elapsed_seconds', round(float(elapsed), 1))} s"))
            per_second = int(run.get("positions_per_second", 0))
            facts.append(("throughput", f"{_n(int(run.get('games_per_second', 0)))} games/s, "
                                        f"{_num('positions_per_second', per_second)} positions/s"))
        facts.append(("analyzed", _e(run.get("date", "-"))))
        facts.append(("by", f"chessscan {_e(run.get('chessscan', '?'))} (core: {_e(run.get('core', '?'))})"))
        options = run.get("options", {})
        facts.append(("options", " ".join(f"<code>{_e(k)}={_e(v)}</code>" for k, v in options.items()) or "-"))
    else:
        facts.append(("run", '<span class="note">no run.json in this folder (timing and options not recorded)</span>'))
    facts.append(("tables", " ".join(f'<code class="table-at">{_e(tables.describe(t))}</code>'
                                     for t in tables.paths) or "none"))
    facts.append(("page", f"built {_e(_now())} by chessscan {_e(_version())}"))
    out.append('<dl class="run">' + "".join(f"<dt>{_e(k)}</dt><dd>{v}</dd>" for k, v in facts) + "</dl>")
    return "".join(out)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("chessscan")
    except Exception:  # running from a checkout that was never installed
        return "unknown"


# ---------------------------------------------------------------------------
# Charts
# ---------------------------------------------------------------------------
def _figure(width: float = 5.6, height: float = 3.0):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _svg(fig) -> str:
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "chessscan"}):
        fig.savefig(buf, format="svg")
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _style(ax) -> None:
    from matplotlib.ticker import MaxNLocator, ScalarFormatter, StrMethodFormatter

    for axis in (ax.xaxis, ax.yaxis):  # counts: 1,341,541 rather than 1.3 and an offset "1e6"
        if isinstance(axis.get_major_formatter(), ScalarFormatter):
            axis.set_major_locator(MaxNLocator(nbins=5, integer=True))
            axis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    ax.spines[["top", "right"]].set_visible(False)
    ax.tick_params(labelsize=8)
    ax.grid(axis="x" if ax.get_xlabel() == "" else "y", color="#e5e7eb", linewidth=0.6)
    ax.set_axisbelow(True)


def _figure_block(title: str, svg: str | None, caption: str, numbers: str = "", anchor: str = "") -> str:
    body = svg if svg is not None else '<p class="note">nothing to draw</p>'
    ident = f' id="{_e(anchor)}"' if anchor else ""
    return (f'<figure{ident}><h3>{_e(title)}</h3>{body}<figcaption>{caption}</figcaption>'
            f'{numbers}</figure>')


def _hbar(labels: list[str], values: list[int], colours, xlabel: str, height: float | None = None) -> str:
    fig = _figure(5.6, height or max(1.4, 0.32 * len(labels) + 0.7))
    ax = fig.add_subplot()
    y = list(range(len(labels)))[::-1]
    bars = ax.barh(y, values, color=colours, height=0.7)
    ax.set_yticks(y, labels, fontsize=8)
    ax.bar_label(bars, labels=[f"{v:,}" for v in values], padding=3, fontsize=7)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.margins(x=0.15)
    _style(ax)
    return _svg(fig)


def _charts(tables: ReportTables) -> str:
    s = tables.summary
    blocks = [_outcomes_chart(s), _checks_chart(s), _lengths_chart(s), _by_move_chart(s),
              _issues_chart(s, _issue_rows(tables)), _sources_chart(s), _results_chart(s), _perpetuals_chart(tables)]
    return '<h2 id="charts">Charts</h2><div class="charts">' + "".join(blocks) + "</div>"


def _missing(key: str) -> str:
    return (f'<p class="note">summary.json has no <code>{_e(key)}</code>: the report was written by an '
            "older chessscan; analyze again to draw this chart</p>")


def _outcomes_chart(s: dict) -> str:
    outcomes = s.get("outcomes", {})
    items = sorted(outcomes.items(), key=lambda kv: -kv[1])
    svg = _hbar([k.replace("_", " ") for k, _ in items], [v for _, v in items],
                [_GREY if k == "none" else _BLUE for k, _ in items], "games") if items else None
    nums = _table(["outcome", "games"], [[_e(k), _num(f"outcomes.{k}", v)] for k, v in items], "nums")
    return _figure_block("Outcomes", svg, "How each game ended on the board: the first automatic end "
                         "(checkmate, stalemate, dead position, 75 moves, fivefold repetition), else what "
                         "the final position lets a player claim, else <em>none</em> (resigned, agreed, "
                         "on time, cut short, or a variant not played).", nums, "chart-outcomes")


def _checks_chart(s: dict) -> str:
    checks = s.get("checks", {})
    routes = s.get("check_routes")
    kinds = ["direct", "discovered", "double"]
    fig = _figure(5.6, 3.0)
    ax, bx = fig.subplots(1, 2, width_ratios=[1, 1.25])
    counts = [checks.get(k, 0) for k in kinds]
    bars = ax.bar(kinds, counts, color=[_BLUE, _GREEN, _RED])
    ax.bar_label(bars, labels=[f"{v:,}" for v in counts], fontsize=7)
    ax.set_title("checks by kind", fontsize=9)
    ax.set_ylim(top=max(max(counts), 1) * 1.2)
    _style(ax)
    rows = [[k, _num(f"checks.{k}", checks.get(k, 0))] + [""] * len(CHECK_ROUTES) for k in kinds]
    if routes is not None:
        bottom = [0] * len(CHECK_ROUTES)
        for kind, colour in zip(kinds, (_BLUE, _GREEN, _RED)):
            vals = [routes.get(r, {}).get(kind, 0) for r in CHECK_ROUTES]
            bx.bar([r.replace("_", " ") for r in CHECK_ROUTES], vals, bottom=bottom, color=colour, label=kind)
            bottom = [b + v for b, v in zip(bottom, vals)]
        for i, total in enumerate(bottom):
            bx.annotate(f"{total:,}", (i, total), ha="center", va="bottom", fontsize=7)
        bx.set_ylim(top=max(max(bottom), 1) * 1.25)  # the totals' labels below the title
        bx.legend(fontsize=7, frameon=False, loc="upper left")
        for row, kind in zip(rows, kinds):
            row[2:] = [_num(f"check_routes.{r}.{kind}", routes.get(r, {}).get(kind, 0)) for r in CHECK_ROUTES]
    bx.set_title("checks by route (stacked by kind)", fontsize=9)
    bx.margins(y=0.15)
    _style(bx)
    nums = _table(["kind", "checks", *(f"by {r.replace('_', ' ')}" for r in CHECK_ROUTES)], rows, "nums")
    mates, mate_routes = s.get("checkmate_kinds"), s.get("checkmate_routes")
    if mates is not None and mate_routes is not None:
        nums += ('<p class="note">Checkmates by the mating check: '
                 + ", ".join(f"{_num(f'checkmate_kinds.{k}', mates.get(k, 0))} {k}" for k in kinds) + "; "
                 + ", ".join(f"{_num(f'checkmate_routes.{r}', mate_routes.get(r, 0))} by {r.replace('_', ' ')}"
                             for r in CHECK_ROUTES) + ".</p>")
    caption = ("<em>direct</em>: the piece that arrived gives check; <em>discovered</em>: a piece that "
               "did not move does; <em>double</em>: two pieces. Routes: the checking move was an "
               "en-passant capture, castling or a promotion.")
    return _figure_block("Check kinds", _svg(fig), caption + ("" if routes is not None else _missing("check_routes")),
                         nums, "chart-checks")


def _int_hist(d: dict) -> list[tuple[int, int]]:
    return sorted((int(k), int(v)) for k, v in d.items())



def _lengths_chart(s: dict) -> str:
    hist = s.get("histograms", {}).get("game_length_plies")
    if hist is None:
        return _figure_block("Game length", None, _missing("histograms"), anchor="chart-lengths")
    items = _int_hist(hist)
    if not items:
        return _figure_block("Game length", None, "no games", anchor="chart-lengths")
    cap = max(_quantile(items, 0.995), 10)  # the tail beyond is drawn as one bar
    width = max(2, -(-cap // 60) * 2)  # about 30-60 bars
    bins: dict[int, int] = {}
    tail = 0
    for plies, games in items:
        if plies > cap:
            tail += games
        else:
            bins[plies // width * width] = bins.get(plies // width * width, 0) + games
    fig = _figure(5.6, 2.8)
    ax = fig.add_subplot()
    ax.bar(list(bins), list(bins.values()), width=width, align="edge", color=_BLUE)
    if tail:
        x = (cap // width + 1) * width
        ax.bar([x], [tail], width=width, align="edge", color=_GREY)
        ax.annotate(f"> {cap}", (x + width / 2, tail), ha="center", va="bottom", fontsize=7)
    ax.set_xlabel(f"plies replayed ({width}-ply bins)", fontsize=8)
    ax.set_ylabel("games", fontsize=8)
    _style(ax)
    total = sum(v for _, v in items)
    mean = sum(k * v for k, v in items) / total
    median = _median(items)
    plies = lambda n: "ply" if n == 1 else "plies"  # noqa: E731
    nums = (f'<p class="note">{_num("games_by_length", total)} {"game" if total == 1 else "games"}; mean '
            f'{mean:.1f} plies, median {median:g} {plies(median)}, longest '
            f'{_num("longest_game_plies", items[-1][0])} {plies(items[-1][0])}; '
            f'{_num("games_zero_plies", hist.get("0", 0))} with no ply replayed.</p>')
    return _figure_block("Game length", _svg(fig), "Plies replayed per game (an error stops the replay, so "
                         "games with errors count the plies before it).", nums, "chart-lengths")


def _median(items: list[tuple[int, int]]) -> float:
    """The median of a histogram ``items`` ((value, weight) pairs, values ascending): the
    middle value, or the mean of the two middle ones for an even total weight (0 for none)."""
    total = sum(v for _, v in items)
    if not total:
        return 0
    lo, hi, run = None, None, 0
    for x, v in items:
        run += v
        if lo is None and run > (total - 1) // 2:
            lo = x
        if run > total // 2:
            hi = x
            break
    return (lo + hi) / 2


def _quantile(items: list[tuple[int, int]], q: float) -> int:
    """The smallest x below which the share ``q`` of the weight lies (0 for no items)."""
    total = sum(v for _, v in items)
    run = 0
    for x, v in items:
        run += v
        if run >= q * total:
            return x
    return items[-1][0] if items else 0


def _by_move_chart(s: dict) -> str:
    h = s.get("histograms", {})
    checks, mates = h.get("checks_by_move_number"), h.get("checkmates_by_move_number")
    if checks is None or mates is None:
        return _figure_block("Checks and checkmates by move number", None, _missing("histograms"),
                             anchor="chart-by-move")
    ci, mi = _int_hist(checks), _int_hist(mates)
    if not ci and not mi:
        return _figure_block("Checks and checkmates by move number", None, "no check was given",
                             anchor="chart-by-move")
    cap = max(_quantile(ci, 0.995), _quantile(mi, 0.995), 10)
    fig = _figure(5.6, 3.3)
    ax, bx = fig.subplots(2, 1, sharex=True, height_ratios=[1.4, 1])
    ax.bar([x for x, _ in ci if x <= cap], [v for x, v in ci if x <= cap], width=1, color=_BLUE)
    ax.set_ylabel("checks", fontsize=8)
    bx.bar([x for x, _ in mi if x <= cap], [v for x, v in mi if x <= cap], width=1, color=_RED)
    bx.set_ylabel("checkmates", fontsize=8)
    bx.set_xlabel("move number (PGN full-move number of the checking move)", fontsize=8)
    for a in (ax, bx):
        _style(a)
    over_c = sum(v for x, v in ci if x > cap)
    over_m = sum(v for x, v in mi if x > cap)
    nums = (f'<p class="note">{_num("checks_by_move_total", sum(v for _, v in ci))} checks, '
            f'{_num("checkmates_by_move_total", sum(v for _, v in mi))} checkmates; after move {cap} '
            f'(not drawn): {over_c:,} checks, {over_m:,} checkmates. Busiest move: '
            f'{max(ci, key=lambda kv: kv[1])[0] if ci else "-"} (checks), '
            f'{max(mi, key=lambda kv: kv[1])[0] if mi else "-"} (mates).</p>')
    return _figure_block("Checks and checkmates by move number", _svg(fig),
                         "When in the game checks are given and games are mated (a game set up from a "
                         "[FEN] counts from its own move number).", nums, "chart-by-move")


def _severity(code: str) -> str:
    entry = ISSUE_CODES.get(code)
    return entry.severity if entry is not None else "warning"


def _issue_rows(tables: ReportTables) -> dict[str, int] | None:
    """Rows of the issues table by code (one streamed scan of its code column), or None
    when the report has no issues table."""
    if not tables.has("issues"):
        return None
    rows: dict[str, int] = {}
    for batch in tables.scan("issues", ["code"]):
        for item in pc.value_counts(batch.column(0)).to_pylist():
            if item["values"] is not None:
                rows[str(item["values"])] = rows.get(str(item["values"]), 0) + item["counts"]
    return rows


def _once_note(found: dict[str, int], rows: dict[str, int]) -> str:
    """Which codes the issues table holds fewer rows of than were found, and why."""
    parts = []
    for code, n in sorted(found.items(), key=lambda kv: (-kv[1], kv[0])):
        r = rows.get(code, 0)
        if r < n:
            why = ("once a game" if code in PER_GAME_CODES else "once a file" if code in PER_FILE_CODES
                   else "not reported: --select/--ignore")
            parts.append(f"<code>{_e(code)}</code> {n:,} found, {_plural(r, 'row')} ({why})")
    return "; ".join(parts)


def _issues_chart(s: dict, table_rows: dict[str, int] | None = None) -> str:
    codes = s.get("issues_by_code", {})
    items = sorted(codes.items(), key=lambda kv: (-kv[1], kv[0]))
    if not items:
        return _figure_block("Issues by code", None, "No issue was found.", anchor="chart-issues")
    svg = _hbar([k for k, _ in items], [v for _, v in items], [_SEVERITY_COLOUR[_severity(k)] for k, _ in items],
                "issues found (red: error, orange: warning)")
    header = ["code", "severity", "found"]
    rows = [[f"<code>{_e(k)}</code>", _severity(k), _num(f"issues_by_code.{k}", v)] for k, v in items]
    if table_rows is not None:
        header.append("issues rows")
        for row, (k, _) in zip(rows, items):
            row.append(_num(f"issue_rows.{k}", table_rows.get(k, 0)))
    caption = ("Every issue found, by code, as summary.json counts them: every occurrence (see the issue "
               "codes in the data dictionary).")
    if table_rows is not None:
        caption += (" <em>issues rows</em>: the rows of the issues table, where <code>uci-move</code> is "
                    "written once a game and <code>decode-fallback</code> once a file (and a code left out "
                    "by <code>--select</code>/<code>--ignore</code> not at all).")
    return _figure_block("Issues by code and severity", svg, caption, _table(header, rows, "nums"), "chart-issues")


def _sources_chart(s: dict) -> str:
    by_source = s.get("issues_by_source")
    if by_source is None:
        return _figure_block("Issues by source", None, _missing("issues_by_source"), anchor="chart-sources")
    items = sorted(by_source.items(), key=lambda kv: -sum(kv[1].values()))
    if not items:
        return _figure_block("Issues by source", None, "No issue was found.", anchor="chart-sources")
    shown = items[:20]
    fig = _figure(5.6, max(1.4, 0.34 * len(shown) + 0.8))
    ax = fig.add_subplot()
    y = list(range(len(shown)))[::-1]
    errors = [v.get("error", 0) for _, v in shown]
    warnings = [v.get("warning", 0) for _, v in shown]
    ax.barh(y, errors, color=_RED, label="errors", height=0.7)
    ax.barh(y, warnings, left=errors, color=_ORANGE, label="warnings", height=0.7)
    ax.set_yticks(y, [_short(k) for k, _ in shown], fontsize=8)
    fig.legend(fontsize=7, frameon=False, loc="outside upper right", ncols=2)
    ax.set_xlabel("issues", fontsize=8)
    _style(ax)
    nums = _table(["source", "errors", "warnings"],
                  [[f"<code>{_e(k)}</code>", _num(f"issues_by_source.{k}.error", v.get("error", 0)),
                    _num(f"issues_by_source.{k}.warning", v.get("warning", 0))] for k, v in items], "nums")
    more = f" The 20 sources with most issues are drawn, of {len(items)}." if len(items) > 20 else ""
    return _figure_block("Issues by source", _svg(fig), "Errors and warnings found per input file (every "
                         "occurrence, as by code)." + more, nums, "chart-sources")


def _short(path: str, width: int = 34) -> str:
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name if len(name) <= width else name[:width - 1] + "…"


def _results_chart(s: dict) -> str:
    results = s.get("results")
    if results is None:
        return _figure_block("Results and the board", None, _missing("results"), anchor="chart-results")
    tags = list(results)
    if not tags:
        return _figure_block("Results and the board", None, "No game was read.", anchor="chart-results")
    fig = _figure(5.6, max(1.6, 0.4 * len(tags) + 0.9))
    ax = fig.add_subplot()
    y = list(range(len(tags)))[::-1]
    left = [0] * len(tags)
    colours = {"consistent": _GREEN, "inconsistent": _RED, "not_checked": _GREY}
    for verdict in RESULT_VERDICTS:
        vals = [results[t].get(verdict, 0) for t in tags]
        ax.barh(y, vals, left=left, color=colours[verdict], label=verdict.replace("_", " "), height=0.7)
        left = [a + b for a, b in zip(left, vals)]
    ax.set_yticks(y, [f"Result {t}" for t in tags], fontsize=8)
    fig.legend(fontsize=7, frameon=False, ncols=3, loc="outside upper right")
    ax.set_xlabel("games", fontsize=8)
    _style(ax)
    nums = _table(["Result tag", *(v.replace("_", " ") for v in RESULT_VERDICTS)],
                  [[_e(t), *(_num(f"results.{t}.{v}", results[t].get(v, 0)) for v in RESULT_VERDICTS)]
                   for t in tags], "nums")
    mismatch = s.get("issues_by_code", {}).get("result-mismatch", 0)
    caption = ("Each game's Result tag, and whether the tag, the movetext's result token and the final "
               "position agree (<em>not checked</em>: a game not replayed, such as an unsupported variant). "
               "Results that contradict a checkmate, stalemate or dead position on the board "
               f"(<code>result-mismatch</code>): {_num('issues_by_code.result-mismatch.caption', mismatch)}.")
    return _figure_block("Results and the board", _svg(fig), caption, nums, "chart-results")


def _perpetuals_chart(tables: ReportTables) -> str:
    s = tables.summary
    perpetual, twofold = s.get("perpetual_checks", 0), s.get("twofold_check_cycles", 0)
    # How the runs ended: a streamed group-by of the (small) perpetuals table.
    split = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}
    for batch in tables.scan("perpetuals", ["occurrences", "game_ended"]):
        occ = batch.column(0).to_numpy(zero_copy_only=False)
        ended = batch.column(1).to_numpy(zero_copy_only=False)
        for three in (True, False):
            sel = (occ >= 3) if three else (occ < 3)
            split[three, True] += int((sel & ended).sum())
            split[three, False] += int((sel & ~ended).sum())
    fig = _figure(5.6, 2.0)
    ax = fig.add_subplot()
    labels = ["perpetual checks\n(3+ occurrences)", "twofold check cycles\n(2 occurrences)"]
    have_table = tables.has("perpetuals")
    if not perpetual and not twofold:
        return _figure_block("Perpetual checks and twofold cycles", None, "No run of checks repeated a position.",
                             anchor="chart-perpetuals")
    if have_table:
        ended = [split[True, True], split[False, True]]
        rest = [split[True, False], split[False, False]]
        ax.barh([1, 0], ended, color=_PURPLE, label="lasts to the game's end", height=0.6)
        ax.barh([1, 0], rest, left=ended, color=_GREY, label="play went on", height=0.6)
        fig.legend(fontsize=7, frameon=False, loc="outside upper right", ncols=2)
    else:
        ax.barh([1, 0], [perpetual, twofold], color=_PURPLE, height=0.6)
    for yv, total in zip([1, 0], [perpetual, twofold]):
        ax.annotate(f" {total:,}", (total, yv), va="center", fontsize=7)
    ax.set_yticks([1, 0], labels, fontsize=8)
    ax.set_xlabel("runs of checks", fontsize=8)
    ax.margins(x=0.15)
    _style(ax)
    nums = _table(["", "runs", "lasting to the game's end"],
                  [["perpetual checks", _num("perpetual_checks", perpetual),
                    _n(split[True, True]) if have_table else "-"],
                   ["twofold check cycles", _num("twofold_check_cycles", twofold),
                    _n(split[False, True]) if have_table else "-"]], "nums")
    return _figure_block("Perpetual checks and twofold cycles", _svg(fig),
                         "Runs where one side checks on every move while a position repeats: three "
                         "occurrences or more is a perpetual check, two a cycle the players often agree "
                         "a draw on.", nums, "chart-perpetuals")


# ---------------------------------------------------------------------------
# Where it is wrong
# ---------------------------------------------------------------------------
_GAME_COLUMNS = ["source", "game_index", "line", "white", "black", "result", "variant", "start_fen",
                 "plies", "error_code", "error_ply"]


def _first_error_games(tables: ReportTables, limit: int) -> list[dict]:
    """The first ``limit`` games with an error in input order (the sources as given, then by
    line): the games table's own order, so the scan stops at the last one shown."""
    return tables.head("games", _GAME_COLUMNS, pc.field("error_code").is_valid(), limit)


def _isin(games: list[dict]) -> ds.Expression:
    return (pc.field("source").isin(sorted({g["source"] for g in games}))
            & pc.field("game_index").isin(sorted({g["game_index"] for g in games})))


def _error_rows(tables: ReportTables, games: list[dict]) -> dict[tuple, dict]:
    """The issue row of each game's first error (same code and ply), else its first error row."""
    want = {(g["source"], g["game_index"]): g for g in games}
    found: dict[tuple, dict] = {}
    if not games:
        return found
    columns = ["source", "game_index", "line", "column", "ply", "code", "message", "san"]
    for batch in tables.scan("issues", columns, _isin(games) & (pc.field("severity") == "error")):
        for row in batch.to_pylist():
            key = (row["source"], row["game_index"])
            g = want.get(key)
            if g is None:
                continue
            exact = row["code"] == g["error_code"] and row["ply"] == g["error_ply"]
            if key not in found or (exact and not found[key]["_exact"]):
                found[key] = {**row, "_exact": exact}
    return found


def _moves(tables: ReportTables, wanted: dict[tuple, int]) -> dict[tuple, dict[int, str]]:
    """SAN of plies 1..N of each game ``(source, game_index) -> N``, from the positions table
    (one streamed scan, restricted to those games)."""
    out: dict[tuple, dict[int, str]] = {k: {} for k in wanted}
    if not wanted or not tables.has("positions"):
        return out
    games = [{"source": s, "game_index": g} for s, g in wanted]
    flt = _isin(games) & (pc.field("ply") <= max(wanted.values()))
    for batch in tables.scan("positions", ["source", "game_index", "ply", "san"], flt):
        cols = batch.to_pydict()
        for source, gi, ply, san in zip(cols["source"], cols["game_index"], cols["ply"], cols["san"]):
            sans = out.get((source, gi))
            if sans is not None and ply <= wanted[source, gi]:
                sans[ply] = san
    return out


def _start(game: dict) -> Position | None:
    chess960 = variant_kind({"Variant": game.get("variant") or ""}) == "chess960"
    try:
        return parse_fen((game.get("start_fen") or STARTING_FEN).strip(), chess960=chess960, strict=False)
    except (InvalidFen, ValueError):
        return None


def _replay(game: dict, sans: dict[int, str], before_ply: int) -> Position | None:
    """The position before ply ``before_ply``, replayed by chessscan's core from the game's
    start; None when a ply is missing from the table or does not replay."""
    pos = _start(game)
    if pos is None:
        return None
    for ply in range(1, before_ply):
        san = sans.get(ply)
        if san is None:
            return None
        try:
            move = resolve_san(pos, san)
        except SanError:
            return None
        if move:
            pos.play(move)
        else:
            pos.play_null()
    return pos


def _arrow(pos: Position, san: str | None) -> tuple[int, int] | None:
    """From and to squares of ``san`` in ``pos``: the move it names if legal, else the most
    likely intended one (an illegal move still has a target and, often, one candidate piece)."""
    if not san:
        return None
    try:
        move = resolve_san(pos, san)
        if not move:
            return None
        frm, to = move & 63, (move >> 6) & 63
        if not pos.chess960 and pos.is_castling(move):
            to = (frm & 56) + (2 if to < frm else 6)
        return frm, to
    except SanError:
        pass
    try:
        piece, from_mask, to, _, _ = parse_san(san)
    except SanError:
        return None
    if piece <= 0:  # castling or a null move that is not legal here
        king = pos.king(pos.turn)
        if piece in (CASTLE_H_SIDE, CASTLE_A_SIDE) and king >= 0:
            return king, (king & 56) + (6 if piece == CASTLE_H_SIDE else 2)
        return None
    found = candidates(pos, piece, to) & from_mask
    if not found:
        return None
    frm = (found & -found).bit_length() - 1
    return frm, to


def _board(fen: str, arrow: tuple[int, int] | None, colour: str, marks: Iterable[int] = (),
           check: int | None = None) -> str:
    """An SVG board of ``fen``'s placement (drawn by ``chess.svg``), with ``arrow`` (from, to),
    ``marks`` (squares filled) and ``check`` (the king in check, if any)."""
    import chess
    import chess.svg

    board = chess.BaseBoard((fen.split() or [""])[0])  # a blank [FEN] is a ValueError too
    arrows = [chess.svg.Arrow(arrow[0], arrow[1], color=colour)] if arrow else []
    fill = {sq: "#e0606080" for sq in marks}
    svg = chess.svg.board(board, arrows=arrows, fill=fill, size=240, check=check, coordinates=True)
    return re.sub(r"<desc>.*?</desc>", "", svg, flags=re.S)


def _king_in_check(pos: Position | None) -> int | None:
    if pos is None:
        return None
    king = pos.king(pos.turn)
    if king < 0 or not attackers(pos, not pos.turn, king, pos.occupied):
        return None
    return king


def _squares(text: str | None) -> list[int]:
    names = "abcdefgh"
    out = []
    for name in (text or "").split():
        if len(name) == 2 and name[0] in names and name[1] in "12345678":
            out.append(names.index(name[0]) + 8 * (int(name[1]) - 1))
    return out


def _where_wrong(tables: ReportTables, limit: int, examples: int) -> str:
    s = tables.summary
    out = ['<h2 id="errors">Where it is wrong</h2>']
    total = s.get("games_with_errors", 0)
    games = _first_error_games(tables, limit)
    rows = _error_rows(tables, games)
    moves_needed: dict[tuple, int] = {}
    for g in games:
        key = (g["source"], g["game_index"])
        row = rows.get(key)
        if row is None or not _FEN_IN_MESSAGE.search(row.get("message") or ""):
            moves_needed[key] = max(g["error_ply"] or 0, 1)
    example_rows = _rare_examples(tables, examples)
    for rows_ in example_rows.values():
        for r in rows_:
            key = (r["source"], r["game_index"])
            moves_needed[key] = max(moves_needed.get(key, 0), r["ply"])
    example_games = _games_of(tables, [r for rs in example_rows.values() for r in rs])
    sans = _moves(tables, moves_needed)

    if not total:
        out.append('<p>No game has an error.</p>')
    else:
        out.append(f'<h3>Games with errors: the first {min(limit, total):,} of '
                   f'{_num("games_with_errors.list", total)}, in input order</h3>'
                   '<p class="note">Each board is the position before the failing move, '
                   f'the move drawn as a red arrow (the piece that could have meant it, for an illegal move), '
                   f'the king in check marked.</p>')
        for g in games:
            out.append(_error_game(g, rows.get((g["source"], g["game_index"])),
                                   sans.get((g["source"], g["game_index"]), {})))
        if total > len(games):
            out.append(f'<p class="note">{total - len(games):,} more: <code>games</code> rows with an '
                       '<code>error_code</code>, and the <code>issues</code> table.</p>')
    out.append(_examples_section(tables, example_rows, example_games, sans, examples))
    return "".join(out)


def _error_game(g: dict, row: dict | None, sans: dict[int, str]) -> str:
    ply = g["error_ply"]
    message = (row or {}).get("message") or g["error_code"]
    san = (row or {}).get("san")
    line = (row or {}).get("line") or g["line"]
    column = (row or {}).get("column")
    where = f"{g['source']}:{line}" + (f":{column}" if column else "")
    fen = None
    m = _FEN_IN_MESSAGE.search(message)
    pos = None
    if m:
        fen = m.group(1).strip()
        try:
            pos = parse_fen(fen, chess960=variant_kind({"Variant": g.get("variant") or ""}) == "chess960",
                            strict=False)
        except (InvalidFen, ValueError):
            pos = None
    elif ply is not None and ply >= 1:
        pos = _replay(g, sans, ply)
        san = san or sans.get(ply)
        fen = pos.fen() if pos is not None else None
    elif ply == 0 and g.get("start_fen"):
        fen = g["start_fen"].strip()
        pos = _start(g)
    if ply is None:
        board = '<p class="note">no board: the error is in the tag section, before any position</p>'
    else:
        board = ('<p class="note">no board: the position could not be rebuilt (the positions table does '
                 'not hold every ply of this game)</p>')
    if fen is not None:
        arrow = _arrow(pos, san) if pos is not None else None
        try:
            board = _board(fen, arrow, "#c0392bcc", check=_king_in_check(pos))
        except ValueError:
            board = f'<p class="note">no board: {_e(fen)} is not a placement python-chess can draw</p>'
    players = f"{g.get('white') or '?'} – {g.get('black') or '?'}"
    move = ""
    if ply is not None and ply >= 1:
        number = (ply + 1) // 2
        move = (f"ply {ply}" + (f", move <code>{_e(san)}</code>" if san else "")
                + (f" (move {number})" if not g.get("start_fen") else ""))
    return (f'<div class="game"><div>{board}</div><div><div class="where">{_e(where)} · <span class="gi">'
            f'game_index {g["game_index"]}</span></div><div><b>{_e(players)}</b> {_e(g.get("result") or "")}</div>'
            f'<div><code>{_e(g["error_code"])}</code> {move}</div><div class="msg">{_e(message)}</div>'
            f'<div class="note">{_plural(g["plies"], "ply", "plies")} replayed</div></div></div>')


def _rare_examples(tables: ReportTables, k: int) -> dict[str, list[dict]]:
    """The first ``k`` positions rows of each rare event (one streamed scan of positions,
    stopped once every event has its examples) and the first ``k`` perpetual checks."""
    out: dict[str, list[dict]] = {label: [] for label, _, _ in _RARE_EVENTS}
    if k > 0 and tables.has("positions"):
        s = tables.summary
        # How many of each the table holds (older summaries lack the counts: look for all).
        routes, mates, mate_routes = (s.get(k) for k in ("check_routes", "checkmate_kinds", "checkmate_routes"))
        present = {
            "double-check mates": mates.get("double", 0) if mates is not None else k,
            "en-passant checks": sum(routes["en_passant"].values()) if routes is not None else k,
            "castling checks": sum(routes["castling"].values()) if routes is not None else k,
            "promotion mates": mate_routes.get("promotion", 0) if mate_routes is not None else k,
        }
        # The scan stops once every event has its examples (all of them when fewer).
        wanted = {label: min(k, present[label]) for label, _, _ in _RARE_EVENTS}
        events = [(label, flt) for label, flt, _ in _RARE_EVENTS if wanted[label] > 0]
        if events:
            either = events[0][1]
            for _, flt in events[1:]:
                either = either | flt
            columns = ["source", "game_index", "ply", "san", "check_kind", "checkers", "by_en_passant",
                       "by_castling", "by_promotion", "is_checkmate"]
            for batch in tables.scan("positions", columns, either):
                table = pa.Table.from_batches([batch])
                for label, flt in events:
                    need = k - len(out[label])
                    if need > 0:
                        out[label].extend(ds.dataset(table).to_table(filter=flt).slice(0, need).to_pylist())
                if all(len(out[label]) >= wanted[label] for label, _ in events):
                    break
    perpetual = []
    for row in tables.head("perpetuals", ["source", "game_index", "side", "first_ply", "last_ply",
                                          "checks_given", "occurrences", "game_result"], pc.field("occurrences") >= 3, k):
        perpetual.append({**row, "ply": row["last_ply"]})
    out["perpetual checks"] = perpetual
    return out


def _last_check_ply(game: dict, side: str, last_ply: int) -> int:
    """The ply of the last check of a perpetual-check run by ``side`` that ends at
    ``last_ply`` (the position that repeats stands after ``last_ply``, which may be the
    checked side's reply): the last ply up to ``last_ply`` that ``side`` played."""
    start = _start(game)
    white_first = True if start is None else bool(start.turn)
    white_moves = (last_ply % 2 == 1) == white_first
    return last_ply if white_moves == (side == "white") else last_ply - 1


def _games_of(tables: ReportTables, rows: list[dict]) -> dict[tuple, dict]:
    if not rows:
        return {}
    found = {}
    for batch in tables.scan("games", _GAME_COLUMNS, _isin(rows)):
        for g in batch.to_pylist():
            found[g["source"], g["game_index"]] = g
    return found


def _examples_section(tables: ReportTables, examples: dict[str, list[dict]], games: dict[tuple, dict],
                      sans: dict[tuple, dict[int, str]], k: int) -> str:
    out = [f"<h3>Rare events: the first {k} of each</h3>"]
    notes = {label: note for label, _, note in _RARE_EVENTS}
    notes["perpetual checks"] = ("the last check of a run of checks that repeats a position three times or "
                                 "more, drawn on the position before it")
    no_rows = not tables.has("positions") or tables.run.get("options", {}).get("positions") == "none"
    if no_rows:
        out.append('<p class="note">this report holds no position rows (no PGN games, or analyzed with '
                   '<code>--positions none</code>): only perpetual checks can be shown</p>')
    for label, rows in examples.items():
        out.append(f"<h3>{_e(label)}</h3><p class=\"note\">{_e(notes[label])}</p>")
        if not rows:
            out.append('<p class="note">' + ("not recorded" if no_rows and label != "perpetual checks"
                                             else "none in this report") + "</p>")
            continue
        out.append('<div class="examples">')
        for r in rows:
            key = (r["source"], r["game_index"])
            g = games.get(key)
            board = '<p class="note">no board: the positions table does not hold every ply of this game</p>'
            ply = r["ply"]
            if "side" in r and g is not None:
                ply = _last_check_ply(g, r["side"], r["last_ply"])
            san = r.get("san") or sans.get(key, {}).get(ply)
            if g is not None:
                pos = _replay(g, sans.get(key, {}), ply)
                if pos is not None:
                    board = _board(pos.fen(), _arrow(pos, san), "#1f6ebfcc", marks=_squares(r.get("checkers")))
            players = f"{(g or {}).get('white') or '?'} – {(g or {}).get('black') or '?'}"
            line = (g or {}).get("line")
            detail = (f"{r['side']} checks {r['checks_given']} times, plies {r['first_ply']}–{r['last_ply']}, "
                      f"{r['occurrences']} occurrences, result {r.get('game_result') or '?'}; the last check: "
                      f"ply {ply}" + (f" <code>{_e(san)}</code>" if san else "")) if "side" in r else \
                (f"ply {r['ply']} <code>{_e(san)}</code>, {_e(r.get('check_kind'))} check"
                 + (f" from {_e(r.get('checkers'))}" if r.get("checkers") else "")
                 + (", mate" if r.get("is_checkmate") else ""))
            out.append(f'<div class="example">{board}<div class="where">{_e(r["source"])}'
                       f'{":" + str(line) if line else ""} · <span class="gi">game_index {r["game_index"]}</span></div>'
                       f'<div><b>{_e(players)}</b></div><div>{detail}</div></div>')
        out.append("</div>")
    return "".join(out)


# ---------------------------------------------------------------------------
# Data dictionary
# ---------------------------------------------------------------------------
def _dictionary(tables: ReportTables) -> str:
    out = ['<h2 id="dictionary">Data dictionary</h2><p>Every table chessscan writes, with its columns '
           "(from the declared schemas: <code>chessscan/reports/schema.py</code>). Row counts are this "
           "report's.</p>"]
    for name, columns in TABLE_SPECS.items():
        if tables.has(name):
            where = f"<code>{_e(tables.describe(name))}</code>, {_num(f'rows.{name}', tables.count(name))} rows"
        else:
            where = "not in this report"
        rows = []
        for c in columns:
            flags = []
            if c.nullable:
                flags.append("nullable")
            if c.name in OPTIONAL_COLUMNS.get(name, ()):
                flags.append("optional")
            rows.append([f"<code>{_e(c.name)}</code>", f"<code>{_e(str(c.type))}</code>", _e(", ".join(flags)),
                         _e(c.doc)])
        out.append(f'<h3 id="table-{_e(name)}">{_e(name)}</h3><p class="note">{where}</p>')
        out.append(_table(["column", "type", "flags", "meaning"], rows, "dict"))
    out.append('<h3 id="issue-codes">Issue codes</h3>')
    out.append(_table(["code", "severity", "group", "meaning"],
                      [[f"<code>{_e(c.code)}</code>", _e(c.severity), _e(c.group), _e(c.title)]
                       for c in ISSUE_CODES.values()], "dict"))
    return "".join(out)
