"""`chessscan validate`: diagnostics text, JSON and GitHub formats, exit statuses, the issue
code registry (against the code; the documentation's page is generated from it), the pre-commit
hook, and every messy file."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from click.testing import CliRunner

from chessscan.analysis.options import AnalysisOptions
from chessscan.cli import main
from chessscan.engines.local import run
from chessscan.reports.codes import GROUPS, ISSUE_CODES, SEVERITIES
from chessscan.reports.diagnostics import Diagnostic, DiagnosticSink, closing_line, format_github, format_text
from conftest import REPO, SAMPLES, SHARED, shared_path

MESSY = SHARED / "messy"
MESSY_FILES = sorted(str(p.relative_to(MESSY)) for p in MESSY.rglob("*.pgn")) if MESSY.is_dir() else []

GAMES = (
    '[Event "Pinned"]\n[White "Alice"]\n[Black "Bob"]\n[Result "*"]\n\n1. e4 e5 2. Ke3 *\n\n'
    '[Event "Unfinished"]\n[White "Carol"]\n\n1. d4 d5\n\n'
    '[Event "Nameless"]\n\n1. e4 -- 2. Nf3 *\n'
)
SUITE = (
    'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 id "ok";\n'
    "hello have a nice day\n"
    '8/8/8/8/8/8/8/8 w - - id "empty";\n'
)
CLEAN = '[Event "Clean"]\n[White "W"]\n[Black "B"]\n[Result "1-0"]\n\n1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n'

ILLEGAL = ("games.pgn:6:13: error[illegal-move]: 2.Ke3 is illegal: no king can reach e3 [FEN before the "
           "move: rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2] (game_index 0 \"Alice - Bob\", ply 3)")
MISSING_RESULT = ("games.pgn:11: warning[missing-result]: game has no termination marker "
                  "(1-0, 0-1, 1/2-1/2, *) (game_index 1 \"Carol - ?\")")
NULL_MOVE = "games.pgn:15:7: warning[null-move]: null move '--' played as a pass (game_index 2, ply 2)"


@pytest.fixture
def files(tmp_path, monkeypatch):
    """Write the inputs into a temporary folder and run from there (paths stay short)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "games.pgn").write_text(GAMES)
    (tmp_path / "suite.epd").write_text(SUITE)
    (tmp_path / "clean.pgn").write_text(CLEAN)
    return tmp_path


def validate(*args, input=None):
    return CliRunner().invoke(main, ["validate", *args], input=input)


# --------------------------------------------------------------------------- text format


def test_text_diagnostics_pinned(files):
    res = validate("games.pgn", "suite.epd")
    assert res.exit_code == 1
    assert res.stdout.splitlines() == [
        ILLEGAL,
        MISSING_RESULT,
        NULL_MOVE,
        "suite.epd:2:1: error[invalid-epd]: piece placement 'hello' has characters 'ehlo'",
        "suite.epd:3: error[missing-king]: white has no king",
        "suite.epd:3: error[missing-king]: black has no king",
    ]
    assert res.stderr == ("3 games: 2 ok, 1 with errors; 3 EPD positions: 1 valid, 2 invalid; 2 warnings\n"
                          "issues by code (occurrences):\n"
                          "  2  error    missing-king\n"
                          "  1  error    illegal-move\n"
                          "  1  error    invalid-epd\n"
                          "  1  warning  missing-result\n"
                          "  1  warning  null-move\n")


def test_closing_line_games_only_and_epd_only(files):
    res = validate("games.pgn")
    assert res.stderr.splitlines()[0] == "3 games: 2 ok, 1 with errors, 2 warnings"
    res = validate("suite.epd")
    assert res.stderr.splitlines()[0] == "3 EPD positions: 1 valid, 2 invalid, 0 warnings"
    res = validate("clean.pgn")
    assert (res.exit_code, res.stdout, res.stderr) == (0, "", "1 game: 1 ok, 0 with errors, 0 warnings\n")


def test_diagnostics_follow_input_order_across_files(files):
    res = validate("suite.epd", "games.pgn", "clean.pgn", "suite.epd")
    paths = [line.split(":", 1)[0] for line in res.stdout.splitlines()]
    assert paths == ["suite.epd"] * 3 + ["games.pgn"] * 3 + ["suite.epd"] * 3
    lines = [int(line.split(":")[1]) for line in res.stdout.splitlines()]
    assert lines == [2, 3, 3, 6, 11, 15, 2, 3, 3]


def test_stdin_is_named_stdin(files):
    res = validate("-", input=GAMES)
    assert res.exit_code == 1
    assert res.stdout.splitlines()[0] == ILLEGAL.replace("games.pgn", "<stdin>")


def test_format_text_without_line_or_game():
    d = Diagnostic("a.pgn", None, None, "error", "truncated-input", "zstd stream ends early")
    assert format_text(d) == "a.pgn: error[truncated-input]: zstd stream ends early"
    d = Diagnostic("a.pgn", 3, None, "warning", "x", "two\nlines", game_index=1, ply=0)
    assert format_text(d) == "a.pgn:3: warning[x]: two lines (game_index 1, ply 0)"


# --------------------------------------------------------------------------- JSON format


def test_json_document_shape(files):
    res = validate("--format", "json", "games.pgn", "suite.epd")
    assert res.exit_code == 1
    assert res.stderr == ""  # the closing line is part of the document
    doc = json.loads(res.stdout)
    assert set(doc) == {"diagnostics", "summary"}
    diags = doc["diagnostics"]
    assert len(diags) == 6
    for d in diags:
        assert list(d) == ["path", "line", "column", "severity", "code", "message", "game_index", "ply", "san"]
    assert diags[0] == {
        "path": "games.pgn", "line": 6, "column": 13, "severity": "error", "code": "illegal-move",
        "message": "2.Ke3 is illegal: no king can reach e3 [FEN before the move: "
                   "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2]",
        "game_index": 0, "ply": 3, "san": "Ke3",
    }
    assert diags[1]["column"] is None and diags[1]["ply"] is None and diags[1]["game_index"] == 1
    assert diags[3]["game_index"] is None and diags[3]["path"] == "suite.epd"
    s = doc["summary"]
    assert (s["games_read"], s["games_ok"], s["games_with_errors"]) == (3, 2, 1)
    assert s["games_read"] == s["games_ok"] + s["games_with_errors"]
    assert (s["epd_positions"], s["epd_invalid"]) == (3, 2)
    assert (s["errors"], s["warnings"], s["fail_on"], s["exit_status"]) == (4, 2, "error", 1)
    assert s["sources"] == ["games.pgn", "suite.epd"]
    assert sum(s["issues_by_code"].values()) == len(diags)


def test_json_when_clean(files):
    res = validate("--format", "json", "clean.pgn")
    assert res.exit_code == 0
    doc = json.loads(res.stdout)
    assert doc["diagnostics"] == []
    assert doc["summary"]["exit_status"] == 0


def test_comments_holding_tags_pass_the_gate(files):
    """Valid PGN (§5: comments may hold blank lines and tag lines, and stand between tag
    pairs) is one game per game: exit 0, no diagnostic. Both used to split a game in two,
    the first with errors and a validate exit of 1, or silently."""
    (files / "valid.pgn").write_text(
        '[Event "Quoting"]\n[Result "1-0"]\n\n1. e4 {as in\n\n[Event "Linares 1994"]\n[Site "Linares"]\n\n'
        '1. e4 c5 1-0\n\nwhere White won} e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n\n'
        '[Event "Notes"] ; a note\n[White "W"] {who}\n; a line of its own\n[Result "1-0"]\n\n'
        '1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n')
    res = validate("--format", "json", "--fail-on", "warning", "valid.pgn")
    doc = json.loads(res.stdout)
    assert (res.exit_code, doc["diagnostics"]) == (0, [])
    assert (doc["summary"]["games_read"], doc["summary"]["games_ok"], doc["summary"]["positions"]) == (2, 2, 14)


def test_unexpected_token_diagnostic_names_its_ply(files):
    (files / "token.pgn").write_text('[Event "x"]\n[White "A"]\n[Black "B"]\n\n1. e4 e5 2. Sf3 Nc6 *\n')
    res = validate("token.pgn")
    assert res.exit_code == 1
    assert res.stdout.splitlines() == [
        "token.pgn:5:13: error[unexpected-token]: 'Sf3' is not a move; later moves of this game are ignored "
        '(game_index 0 "A - B", ply 3)']


def test_cross_check_full_compares_games(files):
    res = validate("--format", "json", "--cross-check", "full", "clean.pgn")
    assert res.exit_code == 0
    assert json.loads(res.stdout)["summary"]["cross_check"] == {"mode": "full", "replays": "every game", "games": 1,
                                                                "positions": 7, "disagreements": 0}


# --------------------------------------------------------------------------- GitHub format


def test_github_workflow_commands(files):
    res = validate("--format", "github", "games.pgn", "suite.epd")
    assert res.exit_code == 1
    out = res.stdout.splitlines()
    assert out[0] == ("::error file=games.pgn,line=6,col=13,title=illegal-move::2.Ke3 is illegal: no king can "
                      "reach e3 [FEN before the move: rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2] "
                      "(game_index 0 \"Alice - Bob\", ply 3)")
    assert out[1] == ("::warning file=games.pgn,line=11,title=missing-result::game has no termination marker "
                      "(1-0, 0-1, 1/2-1/2, *) (game_index 1 \"Carol - ?\")")
    assert out[3] == "::error file=suite.epd,line=2,col=1,title=invalid-epd::piece placement 'hello' has characters 'ehlo'"
    assert len(out) == 6
    assert res.stderr.startswith("3 games: 2 ok, 1 with errors;")


def test_github_escaping():
    d = Diagnostic("dir,x/a:b.pgn", 4, 2, "warning", "bad-tag", "100% bad\r\nreally", game_index=0)
    assert format_github(d) == "::warning file=dir%2Cx/a%3Ab.pgn,line=4,col=2,title=bad-tag::100%25 bad%0D%0Areally (game_index 0)"
    d = Diagnostic("a.pgn", None, None, "error", "truncated-input", "cut")
    assert format_github(d) == "::error file=a.pgn,title=truncated-input::cut"


# --------------------------------------------------------------------------- exit statuses


def test_exit_0_when_only_warnings_below_fail_level(files):
    (files / "warn.pgn").write_text('[Event "W"]\n\n1. e4 -- 2. Nf3 *\n')
    res = validate("warn.pgn")
    assert res.exit_code == 0
    assert res.stdout.count("warning[null-move]") == 1


def test_exit_1_on_warning_with_fail_on_warning(files):
    (files / "warn.pgn").write_text('[Event "W"]\n\n1. e4 -- 2. Nf3 *\n')
    assert validate("--fail-on", "warning", "warn.pgn").exit_code == 1
    assert validate("--fail-on", "warning", "clean.pgn").exit_code == 0


def test_exit_1_on_error(files):
    assert validate("games.pgn").exit_code == 1
    assert validate("suite.epd").exit_code == 1


@pytest.mark.parametrize("args, message", [
    (["missing.pgn"], "no such file or folder: missing.pgn"),
    (["missing.pgn", "gone.epd"], "no such file or folder: gone.epd"),
    (["--format", "xml", "clean.pgn"], "'xml' is not one of"),
    (["--fail-on", "info", "clean.pgn"], "'info' is not one of"),
    ([], "Missing argument"),
])
def test_exit_2_on_usage_errors(files, args, message):
    res = validate(*args)
    assert res.exit_code == 2
    assert message in res.stderr
    assert res.stdout == ""  # nothing printed before the error


@pytest.mark.skipif(not hasattr(__import__("os"), "geteuid") or __import__("os").geteuid() == 0,
                    reason="root reads any file")
def test_exit_2_on_permission_denied(files):
    path = files / "secret.pgn"
    path.write_text(CLEAN)
    path.chmod(0)
    res = validate("clean.pgn", "secret.pgn")
    assert res.exit_code == 2
    assert "cannot read input" in res.stderr and res.stdout == ""


def test_an_archive_is_an_issue_and_the_run_goes_on(files):
    import zipfile

    with zipfile.ZipFile(files / "games.zip", "w") as archive:
        archive.writestr("games.pgn", CLEAN)
    res = validate("games.zip", "clean.pgn")
    assert res.exit_code == 2  # an input that could not be analyzed
    assert res.stdout.splitlines() == [
        "games.zip: error[unsupported-input]: games.zip is a zip archive: unpack it, then give its files"]
    # The archive is no game: only clean.pgn's one game is counted.
    assert res.stderr.splitlines()[0] == "1 game: 1 ok, 0 with errors, 0 warnings"


def test_exit_2_on_oserror_while_reading(files, monkeypatch):
    def failing_run(paths, sink, options, **kw):
        raise PermissionError(13, "Permission denied", paths[0])

    monkeypatch.setattr("chessscan.engines.local.run", failing_run)
    res = validate("clean.pgn")
    assert res.exit_code == 2
    assert "cannot read input: [Errno 13] Permission denied: 'clean.pgn'" in res.stderr


def test_exit_3_when_a_worker_dies(files, monkeypatch):
    from concurrent.futures.process import BrokenProcessPool

    def dying_run(paths, sink, options, **kw):
        raise BrokenProcessPool("A process in the process pool was terminated abruptly")

    monkeypatch.setattr("chessscan.engines.local.run", dying_run)
    res = validate("--jobs", "2", "clean.pgn")
    assert res.exit_code == 3  # the run could not finish (chessscan/exits.py)
    assert "a worker process died while reading clean.pgn" in res.stderr and "Traceback" not in res.stderr


def test_exit_3_on_internal_error(files, monkeypatch):
    def crashing_run(paths, sink, options, **kw):
        raise RuntimeError("boom")

    monkeypatch.setattr("chessscan.engines.local.run", crashing_run)
    res = validate("clean.pgn")
    assert res.exit_code == 3
    assert "internal error while reading clean.pgn: RuntimeError: boom" in res.stderr


def test_help_documents_exit_statuses():
    res = CliRunner().invoke(main, ["validate", "-h"])
    assert res.exit_code == 0
    assert "--fail-on" in res.stdout and "--cross-check" in res.stdout and "Exit status" in res.stdout


# --------------------------------------------------------------------------- the sink


def _columns(rows: list[dict]) -> dict[str, list]:
    return {k: [r[k] for r in rows] for k in rows[0]}


def _issue(gi, line, col, code="illegal-move", severity="error", ply=None):
    return {"source": "a.pgn", "game_index": gi, "line": line, "column": col, "ply": ply,
            "severity": severity, "code": code, "message": code, "san": None}


def _game(gi, line, white=None, black=None):
    return {"source": "a.pgn", "game_index": gi, "line": line, "white": white, "black": black}


def test_sink_orders_by_game_then_line_and_names_games():
    got = []
    sink = DiagnosticSink(got.append)
    sink.write("games", _columns([_game(0, 1, "A", "B"), _game(1, 9)]))
    sink.write("issues", _columns([_issue(0, 7, 3, ply=5), _issue(0, 2, None, "missing-tags", "warning"),
                                   _issue(1, 9, None)]))
    sink.write("disagreements", _columns([{"source": "a.pgn", "game_index": 0, "ply": 4, "field": "in_check",
                                           "chessscan": "True", "python_chess": "False", "fen": "8/8 w", "note": None}]))
    sink.write("positions", {"ply": [1]})  # ignored
    sink.finish()
    assert [(d.game_index, d.line, d.code) for d in got] == [
        (0, 2, "missing-tags"), (0, 7, "illegal-move"), (0, 1, "disagreement"), (1, 9, "illegal-move")]
    assert got[0].players == "A - B" and got[3].players is None
    assert format_text(got[2]) == ('a.pgn:1: warning[disagreement]: in_check: chessscan says True, python-chess '
                                   'says False [FEN before the move: 8/8 w] (game_index 0 "A - B", ply 4)')
    assert sink.counts == {"error": 2, "warning": 2}


def test_sink_waits_for_the_games_row():
    got = []
    sink = DiagnosticSink(got.append)
    sink.write("issues", _columns([_issue(0, 3, 1)]))
    assert got == []  # the game's names are not known yet
    sink.write("games", _columns([_game(0, 1, "A", None)]))
    assert [d.players for d in got] == ["A - ?"]


def test_sink_streams_batch_by_batch():
    got = []
    sink = DiagnosticSink(got.append)
    sink.write("games", _columns([_game(0, 1, "A", "B")]))
    sink.write("issues", _columns([_issue(0, 3, 1)]))
    sink.write("games", _columns([_game(1, 5, "C", "D")]))  # the next batch: the first one is complete
    assert [d.players for d in got] == ["A - B"]
    sink.write("issues", _columns([_issue(1, 6, 1)]))
    sink.finish()
    assert [d.players for d in got] == ["A - B", "C - D"]


def test_closing_line_plural():
    s = {"games_read": 1, "games_ok": 0, "games_with_errors": 1, "warnings": 1}
    assert closing_line(s) == "1 game: 0 ok, 1 with errors, 1 warning"


# --------------------------------------------------------------------------- issue codes


def test_registry_entries_are_well_formed():
    for code, entry in ISSUE_CODES.items():
        assert entry.code == code
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", code)
        assert entry.severity in SEVERITIES
        assert entry.group in GROUPS
        assert entry.title and "\n" not in entry.title


def test_registry_covers_every_module_table():
    from chessscan.core import san
    from chessscan.core.fen import FAULTS, fault_severity
    from chessscan.readers.epd import EPD_ERROR_SEVERITY
    from chessscan.readers.pgn import ISSUE_CODES as PGN_CODES

    expected = dict(PGN_CODES)
    expected.update(EPD_ERROR_SEVERITY)
    expected.update({code: fault_severity(code) for code in FAULTS})
    for cls in (san.SanError, san.InvalidSan, san.IllegalMove, san.AmbiguousMove):
        expected[cls.code] = "error"
    expected.update({"null-move": "warning", "uci-move": "warning", "unsupported-variant": "warning"})
    wrong = {c: (s, ISSUE_CODES[c].severity if c in ISSUE_CODES else None)
             for c, s in expected.items() if c not in ISSUE_CODES or ISSUE_CODES[c].severity != s}
    assert not wrong, f"code: (emitted severity, registry severity): {wrong}"


# Code literals: `add_issue(..., "warning", "code", ...)`, `_issue("code", ...)`, and tuples
# that start with a code, `("code", message, ...)` (EPD reader errors, FEN faults).
_LITERAL_CODES = re.compile(r'"(?:error|warning)",\s*"([a-z0-9]+(?:-[a-z0-9]+)+)"'
                            r'|\(\s*"([a-z0-9]+(?:-[a-z0-9]+)+)",')
_NOT_CODES = {"utf-8"}  # codec names written the same way


def test_registry_covers_every_code_literal_in_the_source():
    found = set()
    for path in (REPO / "chessscan").rglob("*.py"):
        for m in _LITERAL_CODES.finditer(path.read_text()):
            found.add(m.group(1) or m.group(2))
    assert {"null-move", "unsupported-variant", "missing-result", "invalid-epd", "missing-king"} <= found
    assert found - _NOT_CODES - set(ISSUE_CODES) == set()


def _emitted_codes(paths) -> Counter:
    class Rows:
        def __init__(self):
            self.seen = Counter()

        def write(self, table, columns):
            if table == "issues":
                self.seen.update(zip(columns["code"], columns["severity"]))

    sink = Rows()
    for p in paths:  # one run per file: a crash names its file
        run([str(p)], sink, AnalysisOptions(positions="none"))
    return sink.seen


def test_every_code_emitted_on_samples_and_messy_is_registered():
    paths = [p for p in sorted(SAMPLES.iterdir()) if p.suffix in (".pgn", ".epd")]
    if MESSY.is_dir():
        paths += sorted(MESSY.rglob("*.pgn"))
    seen = _emitted_codes(paths)
    assert seen, "the run found no issue at all"
    unknown = {(c, s) for c, s in seen if c not in ISSUE_CODES or ISSUE_CODES[c].severity != s}
    assert not unknown, f"(code, severity) not in the registry: {unknown}"


def test_docs_document_validate_and_ci():
    readme = (REPO / "README.md").read_text()
    ci = (REPO / "docs" / "guides" / "ci.md").read_text()
    assert "docs/guides/ci.md" in readme and "chessscan validate" in readme
    assert "--format github" in ci and "--format sarif" in ci and "chessscan-validate" in ci


# --------------------------------------------------------------------------- pre-commit hook


def test_pre_commit_hook():
    yaml = pytest.importorskip("yaml")
    hooks = yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())
    (hook,) = [h for h in hooks if h["id"] == "chessscan-validate"]
    assert hook["language"] == "python"
    assert hook["entry"].split()[:2] == ["chessscan", "validate"]
    files = re.compile(hook["files"])
    for name in ("a.pgn", "data/b.epd", "c.PGN", "d.pgn.zst", "e.epd.gz", "f.pgn.bz2", "g.pgn.zstd"):
        assert files.search(name), name
    for name in ("a.txt", "a.pgn.txt", "pgn", "a.pgnx", "a.zst"):
        assert not files.search(name), name
    # Every file a folder input contributes, in any case, the hook checks too.
    from chessscan.readers.inputs import COMPRESSION_SUFFIXES, INPUT_SUFFIXES
    for kind in INPUT_SUFFIXES:
        for comp in ("",) + COMPRESSION_SUFFIXES:
            for name in ("x" + kind + comp, ("X" + kind + comp).upper()):
                assert files.search(name), name


# --------------------------------------------------------------------------- messy files


@pytest.mark.parametrize("name", MESSY_FILES or ["<absent>"])
def test_messy_file_validates_to_the_end(name):
    path = shared_path("messy", name)
    res = validate("--format", "json", str(path))
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert res.exit_code in (0, 1), res.stderr
    doc = json.loads(res.stdout)
    s = doc["summary"]
    assert s["games_read"] == s["games_ok"] + s["games_with_errors"]
    # Every issue is reported, a per-game fact (uci-move) once per game and a per-file fact
    # (decode-fallback) once per file.
    shown = Counter(d["code"] for d in doc["diagnostics"])
    games_with = Counter((d["code"], d["game_index"]) for d in doc["diagnostics"])
    for code, n in s["issues_by_code"].items():
        if code == "uci-move":
            assert shown[code] == len([k for k in games_with if k[0] == code]) <= n
        elif code == "decode-fallback":
            assert shown[code] == 1
        else:
            assert shown[code] == n, code
    # Every game in the file is counted (a file may hold games without an Event tag).
    assert s["games_read"] >= len(re.findall(rb"^\[Event ", path.read_bytes(), re.M))
    assert (s["exit_status"] == 1) == any(d["severity"] == "error" for d in doc["diagnostics"])


def test_all_messy_files_in_one_run_text():
    shared_path("messy")
    paths = [str(MESSY / n) for n in MESSY_FILES]
    res = validate(*paths)
    assert res.exit_code == 1  # the edge cases hold illegal moves
    m = re.fullmatch(r"(\d+) games: (\d+) ok, (\d+) with errors, (\d+) warnings", res.stderr.splitlines()[0])
    assert m, res.stderr
    games, ok, bad, warnings = map(int, m.groups())
    assert games == ok + bad
    lines = res.stdout.splitlines()
    assert warnings == sum("] warning[" in f"] {line.split(': ', 1)[1]}" for line in lines)
    assert all(re.match(r"[^:]+:\d+(:\d+)?: (error|warning)\[[a-z0-9-]+\]: ", line) for line in lines
               if "[empty-input]" not in line)  # an empty file has no line to point at
    assert sum("kokopu-edgecases/empty.pgn: warning[empty-input]: " in line for line in lines) == 1
    # Input order: files in argument order, lines ascending within a game.
    order = [paths.index(line.split(":", 1)[0]) for line in lines]
    assert order == sorted(order)


def test_sink_accepts_arrow_columns():
    pa = pytest.importorskip("pyarrow")
    got = []
    sink = DiagnosticSink(got.append)
    sink.write("games", {k: pa.array(v) for k, v in _columns([_game(0, 1, "A", "B")]).items()})
    sink.write("issues", {k: pa.array(v) for k, v in _columns([_issue(0, 3, 1, ply=2)]).items()})
    sink.finish()
    assert format_text(got[0]) == 'a.pgn:3:1: error[illegal-move]: illegal-move (game_index 0 "A - B", ply 2)'


# --------------------------------------------------------------------------- --jobs

@pytest.fixture(scope="module")
def mutated_corpus(tmp_path_factory):
    """The magnus sample (1.2 MB: more than one chunk of the parallel engine) with seeded
    mutations all through it, then the variants sample: issues in every chunk."""
    import random

    from test_robustness import mutate_seeded

    folder = tmp_path_factory.mktemp("jobs")
    rng = random.Random(15)
    (folder / "mutated.pgn").write_bytes(mutate_seeded((SAMPLES / "lichess-magnus-300.pgn").read_bytes(), rng, 60))
    return [str(folder / "mutated.pgn"), str(SAMPLES / "lichess-jishanshaikh4-variants.pgn")]


@pytest.mark.parametrize("fmt, cross_check", [("text", "off"), ("json", "sample")])
def test_jobs_2_prints_what_jobs_1_prints(mutated_corpus, fmt, cross_check):
    """The parallel engine (worker processes, chunks) gives the same diagnostics in the same
    order, the same counts and the same exit status as one process."""
    out = {}
    for jobs in ("1", "2"):
        res = CliRunner().invoke(main, ["validate", "--format", fmt, "--cross-check", cross_check,
                                        "--jobs", jobs, "--silent", *mutated_corpus])
        assert res.exit_code == 1, res.output
        out[jobs] = res
    assert out["2"].stdout == out["1"].stdout
    assert out["2"].stderr == out["1"].stderr
    if fmt == "text":
        lines = out["1"].stdout.splitlines()
        games = [int(m.group(1)) for m in map(re.compile(r".*\(game_index (\d+)").match, lines) if m]
        assert len(lines) > 40 and min(games) < 30 and max(games) > 270  # both chunks
    else:
        summary = json.loads(out["1"].stdout)["summary"]
        assert summary["cross_check"]["mode"] == "sample" and summary["cross_check"]["games"] > 5
        assert summary["games_read"] > 390


def test_validate_jobs_option_is_documented():
    help_text = CliRunner().invoke(main, ["validate", "--help"]).output
    assert "--jobs" in help_text and "--silent" in help_text  # and so in the generated reference (test_docs.py)


def test_diagnostics_about_a_tag_stand_at_that_tag(tmp_path) -> None:
    """A FEN, Result or Variant diagnostic points at its tag's line and column (where an
    editor or a CI annotation should land), not at the game's first line; with --jobs too."""
    game = ('[Event "A"]\n[Site "?"]\n[White "W"]\n[Black "B"]\n[Result "*"]\n'
            '[SetUp "1"]\n[FEN "4k3/8/8/8/8/8/8/4K2P w - - 0 1"]\n\n1. Kd2 *\n\n'
            '[Event "B"]\n[White "W"]\n[Black "B"]\n  [Result "0-1"]\n\n'
            '1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# *\n\n'
            '[Event "C"]\n[Variant "Atomic"]\n[Result "*"]\n\n1. e4 *\n\n')
    path = tmp_path / "tags.pgn"
    path.write_text(game * 3)
    for jobs in ("1", "2"):
        result = CliRunner().invoke(main, ["validate", str(path), "--jobs", jobs])
        found = re.findall(r"tags\.pgn:(\d+):(\d+): \w+\[([a-z0-9-]+)\]", result.output)
        per_copy = game.count("\n")
        want = []
        for k in range(3):
            want += [(str(7 + k * per_copy), "1", "pawns-on-backrank"),
                     (str(14 + k * per_copy), "3", "result-token-mismatch"),
                     (str(14 + k * per_copy), "3", "result-mismatch"),
                     (str(19 + k * per_copy), "1", "unsupported-variant")]
        assert sorted(found, key=lambda t: int(t[0])) == sorted(want, key=lambda t: int(t[0])), result.output


def test_tag_diagnostics_in_chunks_read_by_workers(tmp_path) -> None:
    """The same lines and columns when workers read the games in chunks (RawGame.rebase)."""
    from chessscan.engines.local import MemorySink
    from chessscan.engines.parallel import run_parallel

    game = ('[Event "A"]\n[White "W"]\n[Black "B"]\n [Result "*"]\n[SetUp "1"]\n'
            '[FEN "4k3/8/8/8/8/8/8/4K2P w - - 0 1"]\n\n1. Kd2 *\n\n'
            '[Event "B"]\n[White "W"]\n[Black "B"]\n  [Result "0-1"]\n\n'
            '1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# *\n\n')
    path = tmp_path / "tags.pgn"
    path.write_text(game * 40)
    options = AnalysisOptions(cross_check="off", positions="none")
    ref, got = MemorySink(), MemorySink()
    run([str(path)], ref, options)
    run_parallel([str(path)], got, options, jobs=2, batch_bytes=600, in_flight=3)

    def issues(sink):
        return [(r["line"], r["column"], r["code"]) for b in sink.batches["issues"]
                for r in (dict(zip(b, row)) for row in zip(*b.values()))]

    assert issues(got) == issues(ref)
    assert issues(ref)[:3] == [(6, 1, "pawns-on-backrank"), (13, 3, "result-token-mismatch"),
                               (13, 3, "result-mismatch")]
    assert len(issues(ref)) == 120


def test_raw_game_tag_line_follows_rebase() -> None:
    import io

    from chessscan.readers.pgn import read_games

    text = b'\n[Event "A"]\r\n[FEN "8/8/8/8/8/8/8/8 w - - 0 1"]\r\n\r\n*\r\n'
    (game,) = read_games(io.BytesIO(text), source="t")
    assert game.tag_line("FEN") == (3, 1)
    assert game.tag_line("Event") == (2, 1)
    assert game.tag_line("Result") == (2, None)  # no such tag: the game's first line
    assert game.rebase(0, 0, 100).tag_line("FEN") == (103, 1)


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_control_characters_of_the_input_are_escaped(tmp_path, fmt):
    """A tag value or a junk token holding terminal escapes (ESC [2J clears the screen, an
    OSC sequence sets its title) or NUL bytes prints them as escapes, on one line each."""
    path = tmp_path / "esc.pgn"
    path.write_bytes(b'[Event "x"]\n[White "\x1b]0;t\x07\x1b[31mRED"]\n\n1. e4 e5 2. \x1b[2JQxe5 1-0\n'
                     b"\x00\x01junk \xe2\x80\xaeabc\n")
    result = validate("--format", fmt, str(path))
    assert result.exit_code == 1
    out = result.stdout
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]", out)
    assert r"'\x1b[2JQxe5' is not a move" in out and r'"\x1b]0;t\x07\x1b[31mRED - ?"' in out
    assert r"'\x00\x01junk' is not a move" in out
    assert len(out.splitlines()) == 4


def test_line_separators_and_a_line_end_in_a_file_name_are_escaped():
    d = Diagnostic("new\nline.pgn", 3, None, "warning", "missing-result", "x",
                   game_index=0, players="Uni\u2028Line\u2029Para - ?")
    assert format_text(d) == (r'new\x0aline.pgn:3: warning[missing-result]: x (game_index 0 "Uni\u2028Line\u2029Para - ?")')
    assert "\u2028" not in format_github(d) and "file=new%0Aline.pgn" in format_github(d)
