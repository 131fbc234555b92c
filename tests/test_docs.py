"""The documentation site (mkdocs.yml, docs/): it builds with ``mkdocs build --strict`` (no
broken link, anchor or page), its reference matches the code (every command option, table
column, issue code and exit status is shown, with its text), the code gives every option,
column and code the text the reference shows, every exit of the command line is in the
exit-status table, and the example commands of the getting-started page and the reading
guide run on the shipped samples."""

from __future__ import annotations

import ast
import html
import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest

from chessscan.cli import main
from chessscan.exits import EXIT_SIGNAL_BASE, EXIT_STATUSES
from chessscan.reports.codes import GROUP_DESCRIPTIONS, GROUPS, ISSUE_CODES, SEVERITIES
from chessscan.reports.schema import TABLE_NAMES, TABLE_SPECS
from conftest import REPO

DOCS = REPO / "docs"
DOC_TOOLS = ("mkdocs", "material", "mkdocs_click", "mkdocstrings", "mkdocstrings_handlers.python")


def _commands() -> dict[str, click.Command]:
    return {"chessscan": main, **{f"chessscan {name}": cmd for name, cmd in main.commands.items()}}


# --------------------------------------------------------------------------- the code's own text


def test_every_option_has_help_text():
    """An option without help would show in the reference as a name and nothing else."""
    missing = [f"{path} {'/'.join(p.opts)}" for path, cmd in _commands().items() for p in cmd.params
               if isinstance(p, click.Option) and not p.hidden and not (p.help or "").strip()]
    assert not missing, f"options without help text: {missing}"
    for path, cmd in _commands().items():
        assert (cmd.help or "").strip(), f"{path} has no help text"


def test_every_column_has_a_description():
    missing = [f"{t}.{c.name}" for t, cols in TABLE_SPECS.items() for c in cols if not c.doc.strip()]
    assert not missing, f"columns without a description (schema.py doc=): {missing}"


def test_every_issue_code_has_a_meaning_a_group_and_a_severity():
    for code, entry in ISSUE_CODES.items():
        assert entry.code == code and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", code), code
        assert entry.title.strip(), f"{code} has no meaning"
        assert entry.group in GROUPS and entry.severity in SEVERITIES, code
    assert set(GROUP_DESCRIPTIONS) == set(GROUPS) and all(GROUP_DESCRIPTIONS.values())


def _cli_exit_statuses() -> set[int]:
    """Every exit status cli.py can give by its own hand: the values of ``sys.exit(...)``,
    ``exit_code = ...`` and of the status expressions they use, read from its source
    (names resolved through chessscan.exits; ``128 + N`` stands for the signal statuses)."""
    import chessscan.exits as exits

    tree = ast.parse((REPO / "chessscan" / "cli.py").read_text())
    found: set[int] = set()

    def value(node) -> None:
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            found.add(node.value)
        elif isinstance(node, ast.Name) and node.id.startswith("EXIT_"):
            found.add(getattr(exits, node.id))
        elif isinstance(node, ast.IfExp):
            value(node.body)
            value(node.orelse)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and \
                isinstance(node.left, ast.Constant) and node.left.value == EXIT_SIGNAL_BASE:
            found.add(EXIT_SIGNAL_BASE)
        elif isinstance(node, ast.Name) and node.id == "status":
            pass  # assigned from the expressions collected below
        elif isinstance(node, ast.Call):
            pass  # a function returning a status: its returns are collected below

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "exit" and node.args:
            value(node.args[0])
        elif isinstance(node, ast.Assign) and any(getattr(t, "id", getattr(t, "attr", None)) in
                                                  ("exit_code", "status") for t in node.targets):
            value(node.value)
        elif isinstance(node, ast.FunctionDef) and node.name in ("_stop_status", "_perft_suite"):
            for ret in ast.walk(node):
                if isinstance(ret, ast.Return) and ret.value is not None:
                    value(ret.value)
    return found


def test_every_exit_of_the_command_line_is_in_the_exit_status_table():
    table = {row.status for row in EXIT_STATUSES}
    found = _cli_exit_statuses()
    assert {0, 1, 2, 3, 4, EXIT_SIGNAL_BASE} <= found  # the scan sees the exits it should
    shown = {str(s) if s != EXIT_SIGNAL_BASE else f"{EXIT_SIGNAL_BASE}+N" for s in found}
    assert shown <= table, f"exit statuses missing from chessscan/exits.py: {sorted(shown - table)}"
    assert [row.status for row in EXIT_STATUSES] == ["0", "1", "2", "3", "4", "128+N"]
    assert all(row.meaning.strip() for row in EXIT_STATUSES)


# --------------------------------------------------------------------------- the built site


def _missing_doc_tools() -> list[str]:
    return [m for m in DOC_TOOLS if importlib.util.find_spec(m.split(".")[0]) is None
            or (m == "mkdocstrings_handlers.python" and importlib.util.find_spec(m) is None)]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built with ``mkdocs build --strict`` (a few seconds)."""
    missing = _missing_doc_tools()
    if missing:
        pytest.skip(f"the documentation toolchain is not installed ({', '.join(missing)}): "
                    "pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
               NO_MKDOCS_2_WARNING="1")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(REPO / "mkdocs.yml"),
                           "-d", str(out)], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    return out


def _page(site: Path, path: str) -> str:
    return (site / path / "index.html").read_text(encoding="utf-8")


def _text(fragment: str) -> str:
    """The text of an HTML fragment, white space collapsed."""
    inline = re.sub(r"</?(code|a|span|em|strong)\b[^>]*>", "", fragment)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", inline))).strip()


def _unquoted(text: str) -> str:
    """Text from the code as HTML the page would show it in: escaped, code spans' backticks
    gone (the page shows them as code)."""
    return re.sub(r"`([^`]*)`", r"\1", html.escape(text))


def _sections(page: str, ids: list[str]) -> dict[str, str]:
    """The HTML from each heading ``id`` to the next of them (in page order)."""
    starts = sorted((page.index(f'id="{i}"'), i) for i in ids)
    return {i: page[pos:(starts[k + 1][0] if k + 1 < len(starts) else len(page))] for k, (pos, i) in enumerate(starts)}


def test_the_site_builds_with_every_page(site):
    """Every page of the navigation is built (--strict already failed on a broken link)."""
    import yaml

    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    assert config["theme"]["name"] == "material" and config["strict"] is True
    pages = sorted(str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md"))
    for page in pages:
        built = site / (page[:-3] + "/index.html" if page != "index.md" else "index.html")
        assert built.is_file(), f"{page} was not built"
    in_nav = set(re.findall(r":\s*([\w/.-]+\.md)$", yaml.safe_dump(config["nav"]), re.M))
    assert in_nav == set(pages), f"pages not in the nav of mkdocs.yml: {set(pages) ^ in_nav}"


def test_the_commands_page_shows_every_option_with_its_help(site):
    page = _page(site, "reference/cli")
    commands = _commands()
    ids = {path: path.replace(" ", "-") for path in commands}
    sections = _sections(page, list(ids.values()))
    for path, cmd in commands.items():
        section = sections[ids[path]]
        text = _text(section)
        assert _text(_unquoted(cmd.help.split("\n\n")[0])) in text, path
        for param in cmd.params:
            if not isinstance(param, click.Option) or param.hidden:
                continue
            for opt in param.opts + param.secondary_opts:
                assert f"<code>{html.escape(opt)}</code>" in section, f"{path} {opt} is not in the reference"
            # its help, as click shows it (without a trailing [default: ...])
            assert param.help, f"{path} {param.opts[0]} has no help text"
            help_text = re.sub(r"\s*\[default: [^\]]*\]\s*$", "", param.help)
            assert _text(_unquoted(help_text)) in text, f"{path} {param.opts[0]}: its help is not shown"
    assert "Sentinel" not in page


def test_the_tables_page_shows_every_column_with_its_meaning(site):
    from docs_hooks import arrow_type_name, pandas_type_name

    sections = _sections(_page(site, "reference/tables"), list(TABLE_NAMES))
    for table, cols in TABLE_SPECS.items():
        rows = re.findall(r"<tr>\s*<td><code>([a-z_0-9]+)</code></td>(.*?)</tr>", sections[table], re.S)
        assert [name for name, _ in rows] == [c.name for c in cols], table
        for col, (_, rest) in zip(cols, rows):
            cells = [_text(c) for c in re.findall(r"<td>(.*?)</td>", rest, re.S)]
            assert cells[0] == arrow_type_name(col.type) and cells[1] == pandas_type_name(col.type), (table, col.name)
            assert cells[2] == ("yes" if col.nullable else "no") and cells[3].startswith(_text(col.doc)), (table, col.name)


def test_the_pandas_types_shown_are_those_the_python_api_gives(site):
    """The tables page's pandas column names the dtype read_report and scan give each column
    (float64, not the Arrow name ``double``)."""
    import pyarrow as pa

    from docs_hooks import pandas_type_name

    from chessscan.reports.reader import to_dataframe
    from chessscan.reports.schema import schema_for

    for table, specs in TABLE_SPECS.items():
        frame = to_dataframe(pa.Table.from_pylist([], schema=schema_for(table, [c.name for c in specs if c.optional])), table)
        for col in specs:
            assert pandas_type_name(col.type) == str(frame[col.name].dtype), (table, col.name)


def test_the_issue_codes_page_shows_every_code_with_severity_group_and_meaning(site):
    page = _page(site, "reference/issue-codes")
    sections = _sections(page, list(GROUPS))
    for code, entry in ISSUE_CODES.items():
        row = re.search(rf'<span id="{code}"></span><code>{code}</code></td>\s*<td>(\w+)</td>\s*<td>(.*?)</td>',
                        sections[entry.group], re.S)
        assert row, f"{code} is not in the {entry.group} section"
        assert row.group(1) == entry.severity and _text(row.group(2)) == _text(html.escape(entry.title)), code
    for group in GROUPS:
        assert _text(GROUP_DESCRIPTIONS[group]).replace("`", "") in _text(sections[group])


def test_the_exit_status_page_shows_every_status(site):
    rows = re.findall(r"<tr>\s*<td>([0-9+N]+)</td>\s*<td>(.*?)</td>", _page(site, "reference/exit-status"), re.S)
    assert [(s, _text(m)) for s, m in rows] == \
           [(r.status, _text(_unquoted(r.meaning))) for r in EXIT_STATUSES]


def test_the_python_api_page_documents_the_public_functions(site):
    text = _text(_page(site, "reference/python-api"))
    for name in ("scan", "read_report", "Report", "build_report", "parse_fen", "legal_moves", "perft",
                 "resolve_san", "classify_move", "core_mode"):
        assert re.search(rf"\b{name}\b", text), name
    assert "FileNotFoundError" in text  # scan's and read_report's docstrings, rendered
    assert not re.search(r":(func|class|meth|mod):", text)  # Sphinx roles shown as the code they name


@pytest.fixture(scope="module", autouse=True)
def _hooks_module():
    """docs/hooks.py importable as ``docs_hooks`` (the tests compare with its functions)."""
    if importlib.util.find_spec("mkdocs") is None:
        yield
        return
    spec = importlib.util.spec_from_file_location("docs_hooks", DOCS / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules["docs_hooks"] = module
    yield
    sys.modules.pop("docs_hooks", None)


# --------------------------------------------------------------------------- the examples run


def _blocks(page: Path, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", page.read_text(), re.S | re.M)


def _commands_of(page: Path) -> list[tuple[str, int]]:
    """The ``chessscan ...`` lines of a page's sh blocks, each with the exit status its
    comment names (``# exit status 1``; 0 when it names none)."""
    out = []
    for block in _blocks(page, "sh"):
        for line in block.splitlines():
            if line.startswith("chessscan "):
                status = re.search(r"#.*\bexit status (\d+)", line)
                out.append((line.split("  #")[0].strip(), int(status.group(1)) if status else 0))
    return out


@pytest.fixture
def workdir(tmp_path) -> Path:
    """A folder where ``data/samples/...`` names the shipped samples, as in a checkout."""
    (tmp_path / "data").symlink_to(REPO / "data", target_is_directory=True)
    return tmp_path


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_getting_started_examples_run_on_the_samples(workdir):
    """Every ``chessscan`` command of the getting-started page, then its Python, in page order
    (the Python reads the report the commands wrote)."""
    pytest.importorskip("matplotlib", reason="`chessscan report` needs the report extra (matplotlib)")
    page = DOCS / "getting-started.md"
    commands = _commands_of(page)
    assert "chessscan analyze data/samples/lichess-magnus-300.pgn.zst -o report" in [c for c, _ in commands]
    assert {c.split()[1] for c, _ in commands} >= {"analyze", "report", "validate", "perft"}
    for command, status in commands:
        done = _run([sys.executable, "-m", "chessscan", *shlex.split(command)[1:]], workdir)
        assert done.returncode == status, f"{command}: exit {done.returncode}\n{done.stderr[-2000:]}"
        if command.startswith("chessscan analyze") and " -o report " in f"{command} ":
            assert "tables written to report/" in done.stderr
        if "validate data/samples/perft-cw-special.epd" in command:
            assert "perft-cw-special.epd:133: error[impossible-check]" in done.stdout
        if command == "chessscan perft startpos 4":
            assert done.stdout.strip() == "197281"
    assert (workdir / "report" / "report.html").is_file()
    for block in _blocks(page, "python"):
        done = _run([sys.executable, "-c", block], workdir)
        assert done.returncode == 0, f"{block}\n{done.stderr[-2000:]}"
        for line in block.splitlines():  # a value shown in a comment is the value printed
            shown = re.match(r"print\((.*)\)\s+# (\d+)$", line)
            if shown:
                assert shown.group(2) in done.stdout.split(), line


def test_the_reading_guide_examples_run_on_the_samples(workdir):
    """The pandas, Polars and DuckDB examples of the reading guide, on the report of its own
    command (Polars and DuckDB examples skipped where the library is missing)."""
    page = DOCS / "guides" / "reading-reports.md"
    (command, status), = _commands_of(page)
    assert _run([sys.executable, "-m", "chessscan", *shlex.split(command)[1:], "--silent"], workdir).returncode == status
    ran = 0
    for block in _blocks(page, "python"):
        module = re.search(r"^import (polars|duckdb)", block, re.M)
        if module and importlib.util.find_spec(module.group(1)) is None:
            continue
        done = _run([sys.executable, "-c", block], workdir)
        assert done.returncode == 0, f"{block}\n{done.stderr[-2000:]}"
        ran += 1
    assert ran >= 2


def test_the_python_guide_script_runs_on_games_and_on_positions_only(workdir):
    """The guide's "In a script" example, on PGN and on EPD input (no games table: None)."""
    page = DOCS / "guides" / "python-api.md"
    script = next(b for b in _blocks(page, "python") if "sys.argv[1:]" in b)
    for sample, shown in (("lichess-magnus-300.pgn.zst", "games end in mate"), ("arasan-wacnew.epd", "")):
        done = _run([sys.executable, "-c", script, str(REPO / "data" / "samples" / sample)], workdir)
        assert done.returncode == 0, f"{sample}\n{done.stderr[-2000:]}"
        assert shown in done.stdout


def test_the_python_api_docs_name_what_import_chessscan_gives():
    """The reference's names under "Analyzing and reading reports" and "The chess core" are
    ``chessscan.NAME``; the others are named by their modules. The guide's signature of scan
    is its own (options keyword-only)."""
    import inspect

    import chessscan

    text = (DOCS / "reference" / "python-api.md").read_text()
    top, rest = text.split("## From their modules")
    for path in re.findall(r"^::: ([\w.]+)$", top, re.M):
        assert hasattr(chessscan, path.rsplit(".", 1)[1]), path
    for path in re.findall(r"^::: ([\w.]+)$", rest, re.M):
        module, name = path.rsplit(".", 1)
        assert f"from {module} import" in rest and name in rest, path
    guide = (DOCS / "guides" / "python-api.md").read_text()
    shown = re.sub(r"\s+", " ", re.search(r"`chessscan\.scan\((paths.*?)\)`", guide, re.S).group(1))
    params = list(inspect.signature(chessscan.scan).parameters.values())
    assert params[0].kind == params[0].POSITIONAL_OR_KEYWORD and {p.kind for p in params[1:]} == {params[1].KEYWORD_ONLY}
    assert shown == ", ".join([params[0].name, "*"] + [f"{p.name}={p.default!r}".replace("'", '"') for p in params[1:]])

def test_every_extra_is_in_the_extras_table_and_the_readme():
    import tomllib

    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    page = (DOCS / "getting-started.md").read_text()
    rows = " ".join(re.findall(r"^\| (`.*?) \|", page, re.M))
    readme = re.search(r"also: ([\w, ]+)", (REPO / "README.md").read_text()).group(1).split(", ")
    for extra in extras:
        assert f"`{extra}`" in rows, extra
        assert extra == "report" or extra == "test" or extra in readme, extra
