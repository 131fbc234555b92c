"""`chessscan validate --write-baseline/--baseline` (known issues accepted, new ones fail,
fixed ones reported) and `--format sarif` (a SARIF 2.1.0 log)."""

from __future__ import annotations

import json
import os
import random
from urllib.parse import quote

import pytest
from click.testing import CliRunner

from chessscan.cli import main
from chessscan.reports.codes import ISSUE_CODES

GAMES = [
    '[Event "Illegal"]\n[White "Alice"]\n[Black "Bob"]\n[Result "*"]\n\n1. e4 e5 2. Ke3 *\n\n',
    '[Event "No result"]\n[White "Carol"]\n[Black "Dan"]\n\n1. d4 d5\n\n',
    '[Event "Null"]\n[White "Eve"]\n[Black "Fay"]\n[Result "*"]\n\n1. e4 -- 2. Nf3 *\n\n',
    '[Event "Clean"]\n[White "Gus"]\n[Black "Hal"]\n[Result "1-0"]\n\n'
    '1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n\n',
    '[Event "Wrong suffix"]\n[White "Ivy"]\n[Black "Jon"]\n[Result "*"]\n\n1. e4+ e5 *\n\n',
    # The same illegal game twice: two issues under one key.
    '[Event "Illegal"]\n[White "Alice"]\n[Black "Bob"]\n[Result "*"]\n\n1. e4 e5 2. Ke3 *\n\n',
]
NEW_BAD = '[Event "New"]\n[White "Kim"]\n[Black "Lee"]\n[Result "*"]\n\n1. e4 e5 2. Qh6 *\n\n'
NEW_CLEAN = '[Event "New clean"]\n[White "Max"]\n[Black "Ned"]\n[Result "*"]\n\n1. c4 e5 *\n\n'


def validate(*args):
    return CliRunner().invoke(main, ["validate", *args])


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "games.pgn").write_text("".join(GAMES))
    return tmp_path


def test_write_baseline_format_is_sorted_and_stable(here):
    res = validate("games.pgn", "--write-baseline", "base.json")
    assert res.exit_code == 0  # every issue found is now known
    assert "baseline written to base.json: 4 entries" in res.stderr
    text = (here / "base.json").read_text()
    doc = json.loads(text)
    assert (doc["format"], doc["version"]) == ("chessscan-baseline", 1)
    entries = doc["entries"]
    assert sorted((e["code"], e["ply"], e["count"]) for e in entries) == [
        ("illegal-move", 3, 2), ("missing-result", None, 1), ("null-move", 2, 1), ("suffix-mismatch", 1, 1)]
    keys = [(e["game"], e["code"], -1 if e["ply"] is None else e["ply"]) for e in entries]
    assert keys == sorted(keys)
    assert text.count("\n") == len(entries) + 6  # one line per entry
    # The same games in another order, in another file, give the same bytes.
    shuffled = GAMES[:]
    random.Random(7).shuffle(shuffled)
    (here / "other.pgn").write_text("".join(shuffled))
    assert validate("other.pgn", "--write-baseline", "base2.json").exit_code == 0
    assert (here / "base2.json").read_text() == text


def test_baseline_survives_shuffling_and_inserting(here):
    validate("games.pgn", "--write-baseline", "base.json")
    assert validate("games.pgn").exit_code == 1
    shuffled = GAMES[:]
    random.Random(3).shuffle(shuffled)
    shuffled.insert(2, NEW_CLEAN)
    shuffled.insert(0, NEW_CLEAN)
    (here / "games.pgn").write_text("".join(shuffled))
    res = validate("games.pgn", "--baseline", "base.json", "--fail-on", "warning")
    assert (res.exit_code, res.stdout) == (0, "")
    assert "baseline base.json: 5 known issues not shown, 0 fixed" in res.stderr


def test_new_issue_fails_and_only_it_is_shown(here):
    validate("games.pgn", "--write-baseline", "base.json")
    (here / "games.pgn").write_text(NEW_BAD + "".join(GAMES) + GAMES[0])
    res = validate("games.pgn", "--baseline", "base.json")
    assert res.exit_code == 1
    lines = res.stdout.splitlines()
    # The new game, and a third copy of the illegal game (the baseline knows two).
    assert [ln.split(": ")[1] for ln in lines] == ["error[illegal-move]", "error[illegal-move]"]
    assert "2.Qh6 is illegal" in lines[0] and "(game_index 0 " in lines[0]
    assert '(game_index 7 "Alice - Bob", ply 3)' in lines[1]
    assert "5 known issues not shown, 0 fixed" in res.stderr
    # The games counts cover every issue, the diagnostics only the new ones: the line says which.
    assert "8 games: 4 ok, 4 with errors; not in the baseline: 2 errors, 0 warnings" in res.stderr


def test_fixed_issue_is_reported_and_passes(here):
    validate("games.pgn", "--write-baseline", "base.json")
    fixed = [g for g in GAMES if "Null" not in g and "Wrong suffix" not in g]
    fixed[0] = fixed[0].replace("2. Ke3", "2. Ke2")  # one of the two illegal games is fixed
    (here / "games.pgn").write_text("".join(fixed))
    res = validate("games.pgn", "--baseline", "base.json", "--fail-on", "warning")
    assert (res.exit_code, res.stdout) == (0, "")
    fixed_lines = [ln for ln in res.stderr.splitlines() if ln.startswith("fixed: ")]
    assert len(fixed_lines) == 3
    assert any('error[illegal-move] in game ' in ln and '"Alice - Bob", ply 3' in ln for ln in fixed_lines)
    assert any("warning[null-move]" in ln for ln in fixed_lines)
    assert "2 known issues not shown, 3 fixed" in res.stderr
    doc = json.loads(validate("games.pgn", "--baseline", "base.json", "--format", "json").stdout)
    assert doc["summary"]["exit_status"] == 0
    assert sorted((e["code"], e["count"]) for e in doc["summary"]["baseline"]["fixed"]) == [
        ("illegal-move", 1), ("null-move", 1), ("suffix-mismatch", 1)]
    # Written again, the baseline shrinks to what is left.
    validate("games.pgn", "--baseline", "base.json", "--write-baseline", "base.json")
    assert len(json.loads((here / "base.json").read_text())["entries"]) == 2


@pytest.mark.parametrize("content, message", [
    ("not json", "is not JSON"),
    ('{"entries": []}', "is not a chessscan baseline"),
    ('{"format": "chessscan-baseline", "version": 9, "entries": []}', "version 9"),
    ('{"format": "chessscan-baseline", "version": 1, "entries": [{"code": "x"}]}', "must be a list"),
    # json.load raised these past the usage-error handling (a traceback, exit 1)
    ('{"format": "chessscan-baseline", "version": 1, "entries": [{"game": "x", "code": "y", "count": '
     + "9" * 5000 + "}]}", "Exceeds the limit (4300 digits)"),
    ("[" * 100_000 + "]" * 100_000, "maximum recursion depth exceeded"),
], ids=["not-json", "no-format", "version", "entries", "5000-digit-count", "nested"])
def test_bad_baseline_is_a_usage_error(here, content, message):
    (here / "base.json").write_text(content)
    res = validate("games.pgn", "--baseline", "base.json")
    assert res.exit_code == 2
    assert message in res.stderr and "Traceback" not in res.output
    assert validate("games.pgn", "--baseline", "missing.json").exit_code == 2
    res = validate("games.pgn", "--write-baseline", "no/such/folder/base.json")
    assert res.exit_code == 2 and "no such folder" in res.stderr


def test_write_baseline_refuses_a_folder_before_the_run(here):
    (here / "adir").mkdir()
    res = validate("games.pgn", "--write-baseline", "adir")
    assert res.exit_code == 2
    assert "Invalid value for --write-baseline: cannot write there: adir is a folder" in res.stderr
    assert "games:" not in res.stderr  # refused before the games were read
    assert list((here / "adir").iterdir()) == []


def test_an_unreadable_input_is_an_input_error_with_or_without_a_baseline(here):
    """An input that cannot be read is exit 2 and named in both runs: it is not an issue a
    baseline can accept (not recorded, and an entry for it accepts nothing)."""
    (here / "garbage.pgn").write_bytes(bytes(range(256)) * 12)
    named = "garbage.pgn: error[not-text]: garbage.pgn is not text but binary data"
    res = validate("games.pgn", "garbage.pgn", "--write-baseline", "base.json")
    assert res.exit_code == 2 and named in res.stdout
    assert "baseline written to base.json: 4 entries" in res.stderr
    assert not any(e["game"].startswith("source:") for e in json.loads((here / "base.json").read_text())["entries"])
    res = validate("games.pgn", "garbage.pgn", "--baseline", "base.json")
    assert res.exit_code == 2 and named in res.stdout
    assert "not in the baseline: 1 error, 0 warnings" in res.stderr
    # A baseline that has an entry for it (as one written before could): still exit 2, named.
    doc = json.loads((here / "base.json").read_text())
    doc["entries"].append({"code": "not-text", "count": 1, "game": "source:garbage.pgn", "message": "",
                           "players": None, "ply": None, "severity": "error"})
    (here / "old.json").write_text(json.dumps(doc))
    res = validate("games.pgn", "garbage.pgn", "--baseline", "old.json")
    assert res.exit_code == 2 and named in res.stdout
    assert "not in the baseline: 1 error, 0 warnings" in res.stderr and "fixed:" not in res.stderr


def test_write_baseline_refuses_an_input(here):
    # It replaced the games by the baseline's JSON, exit 0.
    before = (here / "games.pgn").read_bytes()
    for name in ("games.pgn", "./games.pgn"):
        res = validate("games.pgn", "--write-baseline", name)
        assert res.exit_code == 2 and "games.pgn is an input: the baseline would be written over it" in res.stderr
    assert (here / "games.pgn").read_bytes() == before


# --------------------------------------------------------------------------- SARIF

# The parts of the SARIF 2.1.0 schema (OASIS, sarif-schema-2.1.0.json) that a log of
# chessscan uses, transcribed with their required properties, types and enums; no copy of
# the full schema is available here, so the structure is checked field by field.
_MESSAGE = {"type": "object", "anyOf": [{"required": ["text"]}, {"required": ["id"]}],
            "properties": {"text": {"type": "string"}}}
_LEVEL = {"enum": ["none", "note", "warning", "error"]}
SARIF_SUBSET = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "$schema": {"type": "string", "format": "uri"},
        "version": {"enum": ["2.1.0"]},
        "runs": {"type": "array", "items": {
            "type": "object",
            "required": ["tool"],
            "properties": {
                "tool": {"type": "object", "required": ["driver"], "properties": {"driver": {
                    "type": "object", "required": ["name"],
                    "properties": {
                        "name": {"type": "string"},
                        "version": {"type": "string"},
                        "rules": {"type": "array", "uniqueItems": True, "items": {
                            "type": "object", "required": ["id"],
                            "properties": {
                                "id": {"type": "string"}, "name": {"type": "string"},
                                "shortDescription": {"type": "object", "required": ["text"]},
                                "fullDescription": {"type": "object", "required": ["text"]},
                                "help": {"type": "object", "required": ["text"]},
                                "defaultConfiguration": {"type": "object", "properties": {"level": _LEVEL}},
                                "properties": {"type": "object", "properties": {
                                    "tags": {"type": "array", "uniqueItems": True, "items": {"type": "string"}}}},
                            }}},
                    }}}},
                "originalUriBaseIds": {"type": "object", "additionalProperties": {"type": "object"}},
                "columnKind": {"enum": ["utf16CodeUnits", "unicodeCodePoints"]},
                "results": {"type": "array", "items": {
                    "type": "object",
                    "required": ["message"],
                    "properties": {
                        "ruleId": {"type": "string"},
                        "ruleIndex": {"type": "integer", "minimum": -1},
                        "level": _LEVEL,
                        "message": _MESSAGE,
                        "locations": {"type": "array", "items": {"type": "object", "properties": {
                            "physicalLocation": {
                                "type": "object",
                                "anyOf": [{"required": ["address"]}, {"required": ["artifactLocation"]}],
                                "properties": {
                                    "artifactLocation": {"type": "object", "properties": {
                                        "uri": {"type": "string", "format": "uri-reference"},
                                        "uriBaseId": {"type": "string"}}},
                                    "region": {"type": "object", "properties": {
                                        "startLine": {"type": "integer", "minimum": 1},
                                        "startColumn": {"type": "integer", "minimum": 1}}},
                                }}}}},
                        "properties": {"type": "object"},
                    }}},
            }}},
    },
}


def test_sarif_log(here):
    jsonschema = pytest.importorskip("jsonschema")
    (here / "suite.epd").write_text('hello have a nice day\n8/8/8/8/8/8/8/8 w - - id "empty";\n')
    res = validate("games.pgn", "suite.epd", "--format", "sarif")
    assert res.exit_code == 1
    log = json.loads(res.stdout)
    jsonschema.validate(log, SARIF_SUBSET, format_checker=jsonschema.FormatChecker())
    run = log["runs"][0]
    # Columns count code points, not SARIF's default UTF-16 code units (§3.14.17).
    assert run["columnKind"] == "unicodeCodePoints"
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(ISSUE_CODES)
    for rule in rules:
        entry = ISSUE_CODES[rule["id"]]
        assert rule["defaultConfiguration"]["level"] == entry.severity
        assert rule["shortDescription"]["text"] == entry.title
        assert entry.title in rule["help"]["text"]
    results = run["results"]
    for r in results:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
    # Each result sits on the file and line of the text diagnostic.
    text = validate("games.pgn", "suite.epd").stdout.splitlines()
    assert len(results) == len(text) == 8
    for r, line in zip(results, text):
        loc = r["locations"][0]["physicalLocation"]
        where = f'{loc["artifactLocation"]["uri"]}:{loc["region"]["startLine"]}'
        if "startColumn" in loc["region"]:
            where += f':{loc["region"]["startColumn"]}'
        assert line.startswith(f"{where}: {r['level']}[{r['ruleId']}]: ")
        assert loc["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
    assert results[0]["message"]["text"].endswith('(game_index 0 "Alice - Bob", ply 3)')
    assert results[0]["properties"] == {"game_index": 0, "ply": 3, "san": "Ke3"}


def test_sarif_clean_input_and_baseline(here):
    (here / "clean.pgn").write_text(GAMES[3])
    res = validate("clean.pgn", "--format", "sarif")
    assert res.exit_code == 0
    log = json.loads(res.stdout)
    assert log["runs"][0]["results"] == []
    validate("games.pgn", "--write-baseline", "base.json")
    log = json.loads(validate("games.pgn", "--format", "sarif", "--baseline", "base.json").stdout)
    assert log["runs"][0]["results"] == []


def test_baseline_epd_lines_follow_their_text(here):
    lines = ['rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 id "ok";',
             "hello have a nice day", '8/8/8/8/8/8/8/8 w - - id "empty";']
    (here / "suite.epd").write_text("\n".join(lines) + "\n")
    validate("suite.epd", "--write-baseline", "base.json")
    (here / "suite.epd").write_text("# moved around\n" + "\n".join([lines[2], lines[0], lines[1]]) + "\n")
    res = validate("suite.epd", "--baseline", "base.json")
    assert (res.exit_code, res.stdout) == (0, "")
    (here / "suite.epd").write_text("\n".join([lines[2], lines[0], "hello again"]) + "\n")
    res = validate("suite.epd", "--baseline", "base.json")
    assert res.exit_code == 1
    assert res.stdout == "suite.epd:3:12: error[invalid-epd]: expected 4 position fields, found 2\n"
    assert "fixed: error[invalid-epd]" in res.stderr


@pytest.mark.skipif(os.name != "posix", reason="file names are bytes on POSIX only")
def test_sarif_uri_of_a_name_that_is_not_utf8(here):
    # The URI names the file's bytes (%E9), not the \xe9 text that messages show.
    (here / "sub").mkdir()
    for name in (b"Caf\xe9.pgn", b"sub/Caf\xe9 2.pgn", "Café.pgn".encode(), b"back\\x41slash.pgn"):
        with open(os.path.join(os.fsencode(here), name), "w") as f:
            f.write(GAMES[0])
    res = validate("Caf\udce9.pgn", "sub/Caf\udce9 2.pgn", "Café.pgn", "back\\x41slash.pgn", "--format", "sarif")
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in json.loads(res.stdout)["runs"][0]["results"]]
    assert uris == ["Caf%E9.pgn", "sub/Caf%E9%202.pgn", "Caf%C3%A9.pgn", "back%5Cx41slash.pgn"]
    absolute = os.path.join(os.fsencode(here), b"Caf\xe9.pgn")
    res = validate(os.fsdecode(absolute), "--format", "sarif")
    uri = json.loads(res.stdout)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "file://" + quote(os.fsencode(here)) + "/Caf%E9.pgn"


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero on this system")
def test_an_endless_or_huge_baseline_is_refused_once_the_cap_is_read(here):
    """/dev/zero as a baseline grew to 15 GB before the kernel killed it: now MAX_BASELINE_BYTES
    are read, then a usage error (exit 2) names the file and the cap."""
    from chessscan.reports.baseline import MAX_BASELINE_BYTES

    res = validate("games.pgn", "--baseline", "/dev/zero")
    assert res.exit_code == 2 and "Traceback" not in res.output
    error = [ln for ln in res.stderr.splitlines() if "/dev/zero" in ln]
    assert len(error) == 1 and f"/dev/zero holds more than {MAX_BASELINE_BYTES >> 20} MiB" in error[0]
    # A regular file one byte over the cap (sparse: no disk used), and one at the cap, which is
    # read (and is no JSON).
    big = here / "big.json"
    with open(big, "wb") as f:
        f.truncate(MAX_BASELINE_BYTES + 1)
    assert "holds more than" in validate("games.pgn", "--baseline", "big.json").stderr
    with open(big, "r+b") as f:
        f.truncate(MAX_BASELINE_BYTES)
    res = validate("games.pgn", "--baseline", "big.json")
    assert res.exit_code == 2 and "big.json is not JSON" in res.stderr


def test_a_long_fixed_list_is_summarised(here):
    """2M fixed entries printed 2M lines: FIXED_SHOWN lines, then one counting the rest;
    --format json still lists every one."""
    from chessscan.reports.baseline import FIXED_SHOWN

    entries = [{"game": f"{i:020x}", "code": "illegal-move", "ply": 3, "count": 1 + i % 2,
                "severity": "error", "message": "gone", "players": "A - B"} for i in range(FIXED_SHOWN + 5)]
    (here / "base.json").write_text(json.dumps({"format": "chessscan-baseline", "version": 1, "entries": entries}))
    res = validate("games.pgn", "--baseline", "base.json")
    fixed_lines = [ln for ln in res.stderr.splitlines() if ln.startswith("fixed: ")]
    assert len(fixed_lines) == FIXED_SHOWN + 1
    more = entries[FIXED_SHOWN:]
    assert fixed_lines[-1] == (f"fixed: 5 more entries ({sum(e['count'] for e in more)} issues) not shown: "
                               "--format json lists every one (summary.baseline.fixed)")
    total = sum(e["count"] for e in entries)
    assert f"0 known issues not shown, {total} fixed" in res.stderr
    doc = json.loads(validate("games.pgn", "--baseline", "base.json", "--format", "json").stdout)
    assert len(doc["summary"]["baseline"]["fixed"]) == FIXED_SHOWN + 5
