"""MkDocs hook: the reference tables, generated from the code at every build.

A page asks for a generated block with a marker line of its own:

* ``<!-- chessscan:table NAME -->``: the columns of report table NAME, from
  ``chessscan/reports/schema.py`` (name, Arrow type, pandas dtype, null, meaning);
* ``<!-- chessscan:issue-codes -->``: every issue code by group, with its severity and
  meaning, from the registry ``chessscan/reports/codes.py``;
* ``<!-- chessscan:exit-statuses -->``: the exit statuses, from ``chessscan/exits.py``.

An unknown marker, a table asked for twice, or a declared table or code the pages never show
fails the build (``mkdocs build --strict`` turns the hook's errors into a failed build too).
The functions below are plain: the tests call them to compare the built site with the code.
"""

from __future__ import annotations

import re

from mkdocs.exceptions import PluginError

MARKER = re.compile(r"^<!-- chessscan:([a-z-]+)(?: ([a-z_]+))? -->$", re.M)


def escape(text: str) -> str:
    """Text from the code as the content of a Markdown table cell: ``|`` would end the cell,
    ``<`` open an HTML tag (``D<n>``), ``*`` start emphasis; spans in backticks stay code, as
    written."""
    parts = re.split(r"(`[^`]*`)", text)
    out = []
    for i, part in enumerate(parts):
        if i % 2:  # a code span: as it is (Python-Markdown's tables split no cell inside one)
            out.append(part)
        else:
            out.append(part.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace("*", "\\*"))
    return "".join(out)


def arrow_type_name(arrow_type) -> str:
    """``int32``, ``uint64``, ``bool``, ``string``, or ``dictionary<string>`` for the
    low-cardinality text columns."""
    import pyarrow as pa

    if pa.types.is_dictionary(arrow_type):
        return f"dictionary<{arrow_type.value_type}>"
    return str(arrow_type)


def pandas_type_name(arrow_type) -> str:
    """The pandas dtype :func:`chessscan.read_report` and :func:`chessscan.scan` give."""
    import pyarrow as pa

    from chessscan.reports.reader import pandas_dtype

    if pa.types.is_dictionary(arrow_type):
        return "category"
    dtype = pandas_dtype(arrow_type)
    # A type left to pyarrow's default (float64): the NumPy dtype pyarrow gives it.
    return str(dtype) if dtype is not None else arrow_type.to_pandas_dtype().__name__


def table_markdown(table: str) -> str:
    """The column table of report ``table``, in on-disk order."""
    from chessscan.reports.schema import TABLE_SPECS

    if table not in TABLE_SPECS:
        raise PluginError(f"no report table {table!r} (tables: {', '.join(TABLE_SPECS)})")
    rows = ["| column | type | pandas | null | meaning |", "|---|---|---|---|---|"]
    for col in TABLE_SPECS[table]:
        if not col.doc.strip():
            raise PluginError(f"column {table}.{col.name} has no description: give it one in "
                              "chessscan/reports/schema.py")
        note = " (optional: written only when asked for)" if col.optional else ""
        rows.append(f"| `{col.name}` | `{arrow_type_name(col.type)}` | `{pandas_type_name(col.type)}` | "
                    f"{'yes' if col.nullable else 'no'} | {escape(col.doc)}{note} |")
    return "\n".join(rows)


def issue_codes_markdown() -> str:
    """Every registered code, a section per group: heading, what the group's codes share, and
    a table of code (with an anchor of its name: ``issue-codes.md#illegal-move``), severity
    and meaning."""
    from chessscan.reports.codes import GROUP_DESCRIPTIONS, GROUPS, ISSUE_CODES

    out = []
    for group in GROUPS:
        out += [f"## {group.capitalize()} {{#{group}}}", "", escape(GROUP_DESCRIPTIONS[group]), "",
                "| code | severity | meaning |", "|---|---|---|"]
        for entry in ISSUE_CODES.values():
            if entry.group == group:
                if not entry.title.strip():
                    raise PluginError(f"issue code {entry.code} has no meaning in chessscan/reports/codes.py")
                out.append(f'| <span id="{entry.code}"></span>`{entry.code}` | {entry.severity} | '
                           f"{escape(entry.title)} |")
        out.append("")
    return "\n".join(out)


def exit_statuses_markdown() -> str:
    """The exit status table of every command."""
    from chessscan.exits import EXIT_STATUSES

    rows = ["| status | meaning |", "|---|---|"]
    rows += [f"| {row.status} | {escape(row.meaning)} |" for row in EXIT_STATUSES]
    return "\n".join(rows)


def help_markdown(text: str) -> list[str]:
    """A command's help text (written for a terminal) as Markdown lines: each paragraph one
    escaped line (so a line that starts with ``-`` starts no list, ``<table>`` opens no tag),
    and each block click keeps as written (a paragraph that starts with ``\\b``: examples, the
    exit statuses) a code block."""
    import inspect

    out: list[str] = []
    for para in re.split(r"\n\s*\n", inspect.cleandoc(text)):
        lines = para.splitlines()
        if lines and lines[0].strip() == "\b":
            out += ["```text", *lines[1:], "```", ""]
        elif para.strip():
            out += [escape(" ".join(line.strip() for line in lines)), ""]
    return out


def _escaped_click_docs() -> None:
    """mkdocs-click writes the commands' and options' help into its Markdown as it is, where
    a ``<table>`` in a help text opens an HTML table and a ``\\b`` block runs together: its
    description and option rows are made to go through :func:`help_markdown` and
    :func:`escape` first."""
    import copy

    try:
        from mkdocs_click import _docs
        make_description, format_row = _docs._make_description, _docs._format_table_option_row
    except (ImportError, AttributeError) as exc:  # a mkdocs-click whose internals moved
        raise PluginError(f"docs/hooks.py cannot adapt this mkdocs-click: {exc}") from exc
    if getattr(make_description, "chessscan", False):
        return

    def description(ctx, remove_ascii_art: bool = False):
        text = ctx.command.help or ctx.command.short_help
        if text:
            yield from help_markdown(text)

    def option_row(option):
        if not (option.help or "").strip():  # an option the reference would show as a name alone
            raise PluginError(f"option {'/'.join(option.opts)} of chessscan has no help text: "
                              "give it help= in chessscan/cli.py")
        option = copy.copy(option)
        option.help = escape(" ".join(option.help.split()))
        return format_row(option)

    description.chessscan = True
    _docs._make_description, _docs._format_table_option_row = description, option_row


def on_config(config):
    _escaped_click_docs()
    return config


_shown: dict[str, str] = {}  # what was generated, and on which page (to catch a second or missing one)


def on_pre_build(config) -> None:
    _shown.clear()


def on_page_markdown(markdown: str, page, config, files) -> str:
    def generate(match: re.Match) -> str:
        kind, arg = match.group(1), match.group(2)
        if kind == "table" and arg:
            key, text = f"table {arg}", table_markdown(arg)
        elif kind == "issue-codes" and not arg:
            key, text = kind, issue_codes_markdown()
        elif kind == "exit-statuses" and not arg:
            key, text = kind, exit_statuses_markdown()
        else:
            raise PluginError(f"{page.file.src_uri}: unknown marker {match.group(0)}")
        if key in _shown:
            raise PluginError(f"{page.file.src_uri}: {key} is generated on {_shown[key]} already")
        _shown[key] = page.file.src_uri
        return text

    return MARKER.sub(generate, markdown)


_SPHINX_ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|exc):<code>(~?)([\w.]+)</code>")


def on_page_content(html: str, page, config, files) -> str:
    """The docstrings' Sphinx roles (``:class:`~chessscan.Report` ``) shown as the code they
    name (``~``: its last part), as Sphinx would; and on the commands page, an option with
    no default, which mkdocs-click shows as ``None`` or as click's internal ``Sentinel.UNSET``
    (a ``multiple`` option, click 8.3 and later), shown as a dash."""
    html = _SPHINX_ROLE.sub(lambda m: f"<code>{m.group(2).rsplit('.', 1)[-1] if m.group(1) else m.group(2)}</code>", html)
    if page.file.src_uri == "reference/cli.md":
        html = html.replace("<td><code>Sentinel.UNSET</code></td>", "<td>—</td>").replace("<td>None</td>", "<td>—</td>")
    return html


def on_post_build(config) -> None:
    """Every table, the codes and the exit statuses are on some page."""
    from chessscan.reports.schema import TABLE_NAMES

    wanted = [f"table {t}" for t in TABLE_NAMES] + ["issue-codes", "exit-statuses"]
    missing = [key for key in wanted if key not in _shown]
    if missing:
        raise PluginError(f"the reference does not show: {', '.join(missing)}")
