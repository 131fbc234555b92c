"""`chessscan validate --clean-output/--rejects-output`: every game copied byte for byte to
one of two files, the issues sidecar, the re-merge property, the same files with --jobs."""

from __future__ import annotations

import csv
import io
import re
import gzip
import json
import os
import re
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from chessscan.analysis.options import AnalysisOptions
from chessscan.cli import _gate_sink, main
from chessscan.engines.local import MemorySink, run
from chessscan.engines.parallel import run_parallel
from chessscan.readers.pgn import read_games
from chessscan.readers.sources import open_source
from chessscan.reports.gate import Gate
from chessscan.reports.split import SIDECAR_COLUMNS, SplitWriter
from conftest import SAMPLES, shared_path

# A BOM and a '%' escape line before the first game; CRLF line ends in one game; an illegal
# move; a '{' never closed; a game with no result; a comment before a game; a last game with
# no line end.
MIXED = (
    b"\xef\xbb\xbf% exported by hand\n\n"
    b'[Event "Clean one"]\n[White "A"]\n[Black "B"]\n[Result "1-0"]\n\n'
    b"1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n\n"
    b'[Event "Illegal"]\r\n[White "C"]\r\n[Black "D"]\r\n[Result "*"]\r\n\r\n1. e4 e5 2. Ke3 *\r\n\r\n'
    b'[Event "Unclosed"]\n[White "E"]\n[Black "F"]\n[Result "*"]\n\n1. d4 { never closed 2. c4 *\n\n'
    b'[Event "No result"]\n[White "G"]\n[Black "H"]\n\n1. Nf3 d5\n\n'
    b"{ a comment before the game }\n"
    b'[Event "Clean two"]\n[White "I"]\n[Black "J"]\n[Result "1/2-1/2"]\n\n1. c4 c5 1/2-1/2\n\n'
    b'[Event "Null"]\n[White "K"]\n[Black "L"]\n[Result "*"]\n\n1. e4 -- 2. Nf3 *'
)


def validate(*args):
    return CliRunner().invoke(main, ["validate", *args])


def decompressed(path: Path) -> bytes:
    with open_source(str(path)) as f:
        return f.read()


def expected_split(path: Path, fail_on: str = "error") -> tuple[list[bytes], list[bytes]]:
    """The records of ``path``, computed apart from the split code: game starts from the PGN
    reader, verdicts from the issues table of an `analyze`-style run."""
    data = decompressed(path)
    with open_source(str(path)) as f:
        starts = [g.byte_offset for g in read_games(f, source="x")]
    sink = MemorySink()
    run([str(path)], sink, AnalysisOptions(positions="none", cross_check="off"))
    bad = {gi for batch in sink.batches.get("issues", [])
           for gi, sev in zip(batch["game_index"], batch["severity"])
           if sev == "error" or fail_on == "warning"}
    bounds = [0] + starts[1:] + [len(data)]
    records = [data[a:b] for a, b in zip(bounds, bounds[1:])]
    clean = [r for i, r in enumerate(records) if i not in bad]
    rejects = [r for i, r in enumerate(records) if i in bad]
    return clean, rejects


def joined(records: list[bytes]) -> bytes:
    """Records as the split writes them: an LF after one that has no line end, a leading BOM
    only at the start of the file."""
    out = b""
    for r in records:
        if out and r.startswith(b"\xef\xbb\xbf"):
            r = r[3:]
        if r and not r.endswith((b"\n", b"\r")):
            r += b"\n"
        out += r
    return out


@pytest.fixture
def mixed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mixed.pgn").write_bytes(MIXED)
    return tmp_path


@pytest.mark.parametrize("suffix", ["", ".zst"])
def test_split_counts_and_bytes(mixed, suffix):
    res = validate("mixed.pgn", str(SAMPLES / "lichess-magnus-300.pgn.zst"),
                   "--clean-output", f"clean.pgn{suffix}", "--rejects-output", f"rejects.pgn{suffix}")
    assert res.exit_code == 1, res.output
    clean1, rejects1 = expected_split(mixed / "mixed.pgn")
    clean2, rejects2 = expected_split(SAMPLES / "lichess-magnus-300.pgn.zst")
    # Pinned on this input: 2 of the 6 crafted games have errors (the missing results and the
    # null move are warnings); the Lichess sample has none.
    assert (len(clean1), len(rejects1), len(clean2), len(rejects2)) == (4, 2, 300, 0)
    if suffix:
        assert (mixed / f"clean.pgn{suffix}").read_bytes()[:4] == b"\x28\xb5\x2f\xfd"  # a zstd frame
    assert decompressed(mixed / f"clean.pgn{suffix}") == joined(clean1 + clean2)
    assert decompressed(mixed / f"rejects.pgn{suffix}") == joined(rejects1 + rejects2)
    assert "split: 304 clean -> clean.pgn" in res.stderr
    assert f"2 rejected -> rejects.pgn{suffix} (issues: rejects.pgn{suffix}.issues.csv)" in res.stderr
    # Each game's own bytes stand in the output exactly as in the input.
    rejects = decompressed(mixed / f"rejects.pgn{suffix}")
    assert b'[Event "Illegal"]\r\n[White "C"]\r\n[Black "D"]\r\n[Result "*"]\r\n\r\n1. e4 e5 2. Ke3 *\r\n\r\n' in rejects
    assert b"1. d4 { never closed 2. c4 *\n\n" in rejects


def test_split_fail_on_warning_moves_warned_games(mixed):
    res = validate("mixed.pgn", "--fail-on", "warning", "--clean-output", "c.pgn", "--rejects-output", "r.pgn")
    clean, rejects = expected_split(mixed / "mixed.pgn", "warning")
    assert (len(clean), len(rejects)) == (2, 4)
    assert res.exit_code == 1
    assert (mixed / "c.pgn").read_bytes() == joined(clean)
    assert (mixed / "r.pgn").read_bytes() == joined(rejects)
    assert (mixed / "c.pgn").read_bytes().startswith(b"\xef\xbb\xbf% exported by hand\n\n[Event \"Clean one\"]")


def read_sidecar(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows == [] or tuple(rows[0]) == SIDECAR_COLUMNS
    return rows


def test_sidecar_points_into_the_rejects_file(mixed):
    """The sidecar's game indexes and lines are those a validate of the rejects file reports."""
    res = validate("mixed.pgn", "--fail-on", "warning", "--rejects-output", "r.pgn")
    assert res.exit_code == 1
    rows = read_sidecar(mixed / "r.pgn.issues.csv")
    assert [(r["game_index"], r["code"], r["source"], r["source_game_index"]) for r in rows] == [
        ("0", "illegal-move", "mixed.pgn", "1"), ("1", "missing-result", "mixed.pgn", "2"),
        ("1", "unclosed-comment", "mixed.pgn", "2"), ("2", "missing-result", "mixed.pgn", "3"),
        ("3", "null-move", "mixed.pgn", "5")]
    again = validate("r.pgn", "--format", "json", "--fail-on", "warning")
    import json

    diags = json.loads(again.stdout)["diagnostics"]
    assert [(str(d["game_index"]), str(d["line"]), d["code"], d["message"]) for d in diags] == [
        (r["game_index"], r["line"], r["code"], r["message"]) for r in rows]
    lines = (mixed / "r.pgn").read_bytes().replace(b"\r\n", b"\n").split(b"\n")
    for r in rows:  # game_line is where the game's tag section starts
        assert lines[int(r["game_line"]) - 1].startswith(b"[Event ")


def test_sidecar_columns_of_games_that_start_inside_a_line(tmp_path, monkeypatch):
    """A game after another's termination marker on the same line starts the rejects file's
    line: its issues' columns are those a validate of the rejects file reports."""
    monkeypatch.chdir(tmp_path)
    Path("line.pgn").write_text('[Event "a"]\n[Result "*"]\n\n'
                                '1. e4 * 1. d4 d5 2. Qxd8 * 1. Kd2 *\n1. é4 * 1. Ke2 Ke7 3. Ke3 *\n')
    assert validate("line.pgn", "--rejects-output", "r.pgn").exit_code == 1
    assert Path("r.pgn").read_text() == "1. d4 d5 2. Qxd8 * \n1. Kd2 *\n1. é4 * \n1. Ke2 Ke7 3. Ke3 *\n"
    rows = read_sidecar(tmp_path / "r.pgn.issues.csv")
    again = json.loads(validate("r.pgn", "--format", "json").stdout)["diagnostics"]
    assert [(str(d["game_index"]), str(d["line"]), str(d["column"] or ""), d["code"]) for d in again] == [
        (r["game_index"], r["line"], r["column"], r["code"]) for r in rows]
    assert [(r["line"], r["column"], r["code"], r["source_line"]) for r in rows if r["column"]] == [
        ("1", "13", "illegal-move", "4"), ("2", "4", "illegal-move", "4"),
        ("3", "4", "unexpected-token", "5"), ("4", "4", "illegal-move", "5")]


def test_remerge_gives_the_same_games(mixed):
    """clean + rejects, validated again: the same number of games and the same game texts."""
    sample = SAMPLES / "lichess-magnus-300.pgn.zst"
    validate("mixed.pgn", str(sample), "--clean-output", "c.pgn", "--rejects-output", "r.pgn.gz")
    merged = mixed / "merged.pgn"
    merged.write_bytes((mixed / "c.pgn").read_bytes() + decompressed(mixed / "r.pgn.gz"))

    def texts(*paths) -> Counter:
        out = Counter()
        for p in paths:
            data = decompressed(p).replace(b"\r\n", b"\n")
            with open_source(str(p)) as f:
                starts = [g.byte_offset for g in read_games(f, source="x")]
            data = decompressed(p)
            out.update(data[a:b].replace(b"\r\n", b"\n").strip() for a, b in zip(starts, starts[1:] + [len(data)]))
        return out

    before, after = texts(mixed / "mixed.pgn", sample), texts(merged)
    assert sum(after.values()) == 306
    assert after == before
    res = validate("merged.pgn")
    assert res.stderr.startswith("306 games: 304 ok, 2 with errors")


def split_with_engine(paths, tmp_path: Path, tag: str, jobs: int, fail_on="warning") -> tuple[bytes, bytes, bytes]:
    """Run the split through the library, one run per source as `validate` does, with the
    single-process engine or with worker processes on small chunks."""
    clean, rejects = tmp_path / f"c{tag}.pgn", tmp_path / f"r{tag}.pgn.zst"
    gate = Gate(lambda d: None, SplitWriter(str(clean), str(rejects), fail_on))
    sink = _gate_sink(gate)
    options = AnalysisOptions(positions="none", cross_check="off")
    for p in paths:
        if jobs == 1:
            run([p], sink, options)
        else:
            run_parallel([p], sink, options, jobs=jobs, batch_bytes=48 << 10)
        sink.finish()
    gate.close()
    return clean.read_bytes(), decompressed(rejects), (tmp_path / f"r{tag}.pgn.zst.issues.csv").read_bytes()


def test_split_identical_with_worker_processes(mixed):
    paths = [str(SAMPLES / "lichess-magnus-300.pgn"), "mixed.pgn", str(SAMPLES / "lichess-jishanshaikh4-variants.pgn")]
    one = split_with_engine(paths, mixed, "1", 1)
    two = split_with_engine(paths, mixed, "2", 2)
    assert one == two
    assert len(one[0]) > 1_000_000 and one[1].count(b"[Event ") >= 4


SUITE = (
    b"# a comment line, kept with the record before it\n"
    b'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 id "ok";\r\n'
    b"hello have a nice day\n"
    b"\n"
    b'8/8/8/8/8/8/8/8 w - - id "empty";\n'
    b'4k3/8/8/8/8/8/8/4K3 w - - id "kings";'
)


def test_split_epd_lines(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "suite.epd").write_bytes(SUITE)
    res = validate("suite.epd", "--clean-output", "c.epd", "--rejects-output", "r.epd.bz2")
    assert res.exit_code == 1
    assert (tmp_path / "c.epd").read_bytes() == (
        b"# a comment line, kept with the record before it\n"
        b'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 id "ok";\r\n'
        b'4k3/8/8/8/8/8/8/4K3 w - - id "kings";\n')
    assert decompressed(tmp_path / "r.epd.bz2") == b'hello have a nice day\n\n8/8/8/8/8/8/8/8 w - - id "empty";\n'
    rows = read_sidecar(tmp_path / "r.epd.bz2.issues.csv")
    assert [(r["game_index"], r["line"], r["code"], r["source_line"]) for r in rows] == [
        ("0", "1", "invalid-epd", "3"), ("1", "3", "missing-king", "5"), ("1", "3", "missing-king", "5")]


def test_split_to_stdout_moves_diagnostics_to_stderr(mixed):
    res = validate("mixed.pgn", "--clean-output", "-")
    clean, _ = expected_split(mixed / "mixed.pgn")
    assert res.stdout_bytes == joined(clean)
    assert "error[illegal-move]" in res.stderr


@pytest.mark.parametrize("args, message", [
    (["-", "--clean-output", "c.pgn"], "give files, not stdin"),
    (["mixed.pgn", "--clean-output", "x.pgn", "--rejects-output", "./x.pgn"], "two different files"),
    (["mixed.pgn", "--clean-output", "x.pgn", "--write-baseline", "x.pgn"],
     "--clean-output and --write-baseline must be two different files"),
    (["mixed.pgn", "--rejects-output", "r.pgn", "--clean-output", "r.pgn.issues.csv"],
     "--clean-output and --rejects-output's issues file must be two different files"),
    (["mixed.pgn", "--rejects-output", "r.pgn", "--write-baseline", "./r.pgn.issues.csv"],
     "--rejects-output's issues file and --write-baseline must be two different files"),
    (["mixed.pgn", "--clean-output", "mixed.pgn"], "is an input"),
    (["mixed.pgn", "--format", "json", "--rejects-output", "-"], "--format json prints to stdout"),
    (["mixed.pgn", "suite.epd", "--clean-output", "c.pgn"], "not both"),
    (["mixed.pgn", "--clean-output", "no/such/dir/c.pgn"], "cannot write there"),
])
def test_split_usage_errors(mixed, args, message):
    (mixed / "suite.epd").write_bytes(SUITE)
    res = validate(*args)
    assert res.exit_code == 2
    assert message in res.stderr
    assert "Traceback" not in res.output
    assert (mixed / "mixed.pgn").read_bytes() == MIXED
    assert sorted(p.name for p in mixed.iterdir()) == ["mixed.pgn", "suite.epd"]  # nothing written



def test_an_issues_file_that_is_an_input_is_refused(mixed):
    (mixed / "games.pgn.issues.csv").write_bytes(MIXED)
    res = validate("games.pgn.issues.csv", "--rejects-output", "games.pgn")
    assert res.exit_code == 2
    assert "games.pgn.issues.csv is an input: the issues of the rejected games would be written over it" \
        in res.stderr
    assert (mixed / "games.pgn.issues.csv").read_bytes() == MIXED
    assert sorted(p.name for p in mixed.iterdir()) == ["games.pgn.issues.csv", "mixed.pgn"]


@pytest.mark.parametrize("what", ["notes", "header-like", "folder", "link"])
def test_an_issues_file_the_split_did_not_write_is_refused(mixed, what):
    """FILE.issues.csv is a name the user never gave: what stands there is replaced only when
    the split wrote it; a link would be written through by the text split."""
    side = mixed / "r.pgn.issues.csv"
    if what == "notes":
        side.write_text("my notes\n")
    elif what == "header-like":  # the header with more on its first line
        side.write_text(",".join(SIDECAR_COLUMNS) + ",mine\n")
    elif what == "folder":
        side.mkdir()
    else:
        (mixed / "notes.txt").write_text("my notes\n")
        side.symlink_to("notes.txt")
    before = sorted(p.name for p in mixed.iterdir())
    res = validate("mixed.pgn", "--jobs", "1", "--rejects-output", "r.pgn")
    assert res.exit_code == 2
    assert "r.pgn.issues.csv is in the way of the issues of the rejected games (" in res.stderr
    assert "move it or choose another --rejects-output" in res.stderr
    assert "issues by code" not in res.stderr  # refused before any game was read
    assert sorted(p.name for p in mixed.iterdir()) == before  # nothing written
    if what in ("notes", "link"):
        assert (mixed / ("notes.txt" if what == "link" else "r.pgn.issues.csv")).read_text() == "my notes\n"


@pytest.mark.parametrize("option", ["--clean-output", "--rejects-output", "--write-baseline"])
def test_an_output_url_is_refused_before_the_run(mixed, option):
    res = validate("mixed.pgn", option, "s3://bucket/out.pgn")
    assert res.exit_code == 2
    assert f"Invalid value for {option}: s3://bucket/out.pgn is a URL: this file is written on this machine" in res.stderr
    assert "issues by code" not in res.stderr  # (refused before any game was read)


def test_an_issues_file_the_split_wrote_is_replaced(mixed):
    assert validate("mixed.pgn", "--rejects-output", "r.pgn").exit_code == 1
    first = (mixed / "r.pgn.issues.csv").read_bytes()
    assert first.startswith(",".join(SIDECAR_COLUMNS).encode() + b"\r\n")
    (mixed / "r.pgn.issues.csv").write_text(",".join(SIDECAR_COLUMNS) + "\n")  # LF line end: still its header
    assert validate("mixed.pgn", "--rejects-output", "r.pgn").exit_code == 1
    assert (mixed / "r.pgn.issues.csv").read_bytes() == first


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_input_cut_between_games_is_a_rejected_game(mixed, jobs):
    """A compressed input that ends (or turns to garbage) between games gives a
    truncated-input error that the run counts as a game: the split counts it as rejected,
    its issue in the sidecar with no place in the rejects file, and no text to copy."""
    import random

    import zstandard

    rng = random.Random(7)
    (mixed / "app.pgn.gz").write_bytes(gzip.compress(MIXED) + bytes(rng.randrange(256) for _ in range(100)))
    sample = (SAMPLES / "lichess-magnus-300.pgn").read_bytes()
    (mixed / "cut.pgn.zst").write_bytes(zstandard.ZstdCompressor().compress(sample)[:300])
    res = validate("mixed.pgn", "app.pgn.gz", "cut.pgn.zst", "mixed.pgn", "--jobs", jobs,
                   "--clean-output", "c.pgn", "--rejects-output", "r.pgn")
    assert res.exit_code == 1
    assert "20 games: 12 ok, 8 with errors" in res.stderr
    assert "split: 12 clean -> c.pgn, 8 rejected -> r.pgn" in res.stderr
    # The games' text as without the cut inputs' errors.
    assert validate("mixed.pgn", "mixed.pgn", "mixed.pgn", "--clean-output", "c0.pgn",
                    "--rejects-output", "r0.pgn").exit_code == 1
    assert (mixed / "r.pgn").read_bytes() == (mixed / "r0.pgn").read_bytes()
    rows = read_sidecar(mixed / "r.pgn.issues.csv")
    cut = [(r["game_index"], r["line"], r["game_line"], r["code"], r["source"], r["source_game_index"],
            r["source_line"]) for r in rows if r["code"] == "truncated-input"]
    # (no game_index, line or game_line: it has no place in the rejects file)
    assert cut == [("", "", "", "truncated-input", "app.pgn.gz", "6", str(MIXED.count(b"\n") + 1)),
                   ("", "", "", "truncated-input", "cut.pgn.zst", "0", "1")]

    def placed(rs):  # (the rows but their source's name)
        return [{k: v for k, v in r.items() if k != "source"} for r in rs]

    assert placed(r for r in rows if r["code"] != "truncated-input") == placed(
        read_sidecar(mixed / "r0.pgn.issues.csv"))


def test_stopped_split_is_kept_as_partial(mixed, stop_at_second_source):
    # A stop left the split under its final names, complete-looking.
    (mixed / "two.pgn").write_bytes(MIXED)
    res = validate("mixed.pgn", "two.pgn", "--clean-output", "c.pgn", "--rejects-output", "r.pgn.gz")
    assert res.exit_code == 130
    # Each kept under its name and a random part no other run can guess (and named so).
    kept = re.search(r"kept as: (.*)", res.stderr).group(1).split(", ")
    assert [re.sub(r"\.[0-9a-f]{16}\.partial$", ".partial", k) for k in kept] == [
        "c.pgn.partial", "r.pgn.gz.partial", "r.pgn.gz.issues.csv.partial"]
    assert sorted(p.name for p in mixed.iterdir()) == sorted(["mixed.pgn", "two.pgn", *kept])
    clean, rejects = expected_split(mixed / "mixed.pgn")
    assert (mixed / kept[0]).read_bytes() == joined(clean)
    with gzip.open(mixed / kept[1]) as f:
        assert f.read() == joined(rejects)
    # A whole run (the stop came only once) gives the final names and leaves no .partial file.
    assert validate("mixed.pgn", "--clean-output", "c.pgn", "--rejects-output", "r.pgn.gz").exit_code == 1
    assert sorted(p.name for p in mixed.iterdir() if p.name.startswith(("c.", "r."))) == [
        "c.pgn", "r.pgn.gz", "r.pgn.gz.issues.csv"]


def test_split_refuses_a_pipe(mixed):
    # The pipe was empty on the second reading: "0 clean, 0 rejected", exit 0.
    r, w = os.pipe()
    try:
        os.write(w, MIXED)
        os.close(w)
        for option in ("--clean-output", "--write-baseline"):
            res = validate(f"/dev/fd/{r}", option, "out.pgn")
            assert res.exit_code == 2 and f"give files, not a pipe (/dev/fd/{r})" in res.stderr
        assert not (mixed / "out.pgn").exists()
    finally:
        os.close(r)

@pytest.mark.slow
def test_split_pgnmentor_rejects_fail_again(tmp_path):
    """The whole pgnmentor corpus: clean + rejects hold every game once, and every game of
    the rejects file fails again with the same issues (by code and ply)."""
    import json

    corpus = shared_path("games", "pgnmentor-players-dedup.pgn.zst")
    res = validate(str(corpus), "--clean-output", str(tmp_path / "c.pgn.zst"),
                   "--rejects-output", str(tmp_path / "r.pgn"), "--format", "json")
    first = json.loads(res.stdout)
    split = first["summary"]["split"]
    assert split["clean"] + split["rejects"] == first["summary"]["games_read"]
    again = json.loads(validate(str(tmp_path / "r.pgn"), "--format", "json").stdout)
    assert again["summary"]["games_read"] == split["rejects"]
    assert again["summary"]["games_with_errors"] == split["rejects"]
    rows = read_sidecar(tmp_path / "r.pgn.issues.csv")
    assert Counter((r["game_index"], r["code"], r["ply"]) for r in rows) == Counter(
        (str(d["game_index"]), d["code"], "" if d["ply"] is None else str(d["ply"])) for d in again["diagnostics"])


def test_split_archive_input_copies_nothing(mixed):
    """A zip given as an input is one game with no text: nothing to copy, and the sidecar's
    numbers stay those of the rejects file."""
    import zipfile

    with zipfile.ZipFile(mixed / "games.zip", "w") as z:
        z.writestr("mixed.pgn", MIXED)
    res = validate("games.zip", "mixed.pgn", "--clean-output", "c.pgn", "--rejects-output", "r.pgn")
    assert res.exit_code == 2  # an input that could not be analyzed
    assert "error[unsupported-input]" in res.stdout
    clean, rejects = expected_split(mixed / "mixed.pgn")
    assert (mixed / "r.pgn").read_bytes() == joined(rejects)
    assert (mixed / "c.pgn").read_bytes() == joined(clean)
    rows = read_sidecar(mixed / "r.pgn.issues.csv")
    assert [(r["game_index"], r["code"]) for r in rows] == [
        ("0", "illegal-move"), ("1", "missing-result"), ("1", "unclosed-comment")]


def test_split_epd_in_batches(tmp_path):
    """EPD records are handed on batch by batch; the files are those of one batch."""
    good = 'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 id "p{}";'
    lines = []
    for i in range(300):
        if i % 37 == 0:
            lines.append("# section")
        lines.append("bad line here" if i % 41 == 5 else good.format(i))
    path = tmp_path / "many.epd"
    path.write_text("\n".join(lines) + "\n")
    outputs = []
    for batch_rows in (25, 10_000):
        clean, rejects = tmp_path / f"c{batch_rows}.epd", tmp_path / f"r{batch_rows}.epd"
        gate = Gate(lambda d: None, SplitWriter(str(clean), str(rejects)))
        sink = _gate_sink(gate)
        run([str(path)], sink, AnalysisOptions(positions="none"), batch_rows=batch_rows)
        sink.finish()
        gate.close()
        outputs.append((clean.read_text(), rejects.read_text(), (tmp_path / f"r{batch_rows}.epd.issues.csv").read_text()))
    assert outputs[0] == outputs[1]
    clean, rejects, _ = outputs[0]
    assert rejects.splitlines() == ["bad line here"] * 8
    assert sorted(clean.splitlines() + rejects.splitlines()) == sorted(lines)


# --- each game once, in order, reading back as itself -----------------------------------------

_CLOSING = re.compile(rb"(?:[})]+ )?(?:1-0|0-1|1/2-1/2|\*)\n")


def round_trip(inputs: list[Path], tmp_path: Path, fail_on: str, *more: str) -> dict:
    """Split ``inputs`` with ``validate``, then check, for each output, that it is the records
    given to it (its games' bytes in the input, from the reader's start of one game to the
    next's), in input order, each once, with the documented additions only: an LF after a
    record with no line end, a leading BOM dropped but at the start of a file, and a closing
    line (``} *``, ``1-0``...) between two games; and that every game reads back from its file
    as itself (tags and moves). Returns the figures."""
    clean, rejects = tmp_path / "clean.pgn", tmp_path / "rejects.pgn"
    res = validate(*map(str, inputs), "--fail-on", fail_on, "--clean-output", str(clean),
                   "--rejects-output", str(rejects), *more)
    assert res.exit_code in (0, 1), res.output
    rejected = {(r["source"], int(r["source_game_index"])) for r in read_sidecar(Path(f"{rejects}.issues.csv"))}
    records = {True: [], False: []}
    games_in = bytes_in = 0
    for path in inputs:
        data = decompressed(path)
        bytes_in += len(data)
        games = list(read_games(io.BytesIO(data)))
        games_in += len(games)
        starts = [0] + [g.byte_offset for g in games[1:]] + [len(data)]
        for n, g in enumerate(games):
            records[(str(path), n) in rejected].append((data[starts[n]:starts[n + 1]], g))
    figures = {"games_in": games_in, "bytes_in": bytes_in, "bytes_out": 0, "games_back": 0, "as_themselves": 0,
               "closings": 0}
    for out, recs in ((clean, records[False]), (rejects, records[True])):
        text = out.read_bytes()
        figures["bytes_out"] += len(text)
        pos = 0
        for i, (rec, _) in enumerate(recs):
            if pos and rec.startswith(b"\xef\xbb\xbf"):
                rec = rec[3:]
            if text[pos:pos + len(rec)] != rec:
                m = _CLOSING.match(text, pos)
                assert i and m and text[m.end():m.end() + len(rec)] == rec, (out.name, i, text[pos:pos + 80], rec[:80])
                figures["closings"] += 1
                pos = m.end()
            pos += len(rec)
            if not rec.endswith((b"\n", b"\r")):
                assert text[pos:pos + 1] == b"\n", (out.name, i)
                pos += 1
        assert pos == len(text), (out.name, text[pos:pos + 80])
        back = list(read_games(io.BytesIO(text)))
        figures["games_back"] += len(back)
        figures["as_themselves"] += sum(g.tags == h.tags and g.sans == h.sans for (_, g), h in zip(recs, back))
        assert len(back) == len(recs), out.name
    assert figures["as_themselves"] == figures["games_in"] == figures["games_back"]
    return figures


def test_a_game_with_no_marker_and_a_tagless_game_after_it_stay_two_games(tmp_path):
    """A clean game that the next tag section ended, then (the reject between them gone) a
    tagless game: they read back as one game, e4 e5 d4 d5. The first is closed by its Result."""
    src = tmp_path / "in.pgn"
    src.write_bytes(b'[Event "x"]\n[Result "1-0"]\n\n1. e4 e5\n\n[Event "bad"]\n\n1. Ke2 Ke7 2. Kd3 *\n\n'
                    b'1. d4 d5 *\n')
    figures = round_trip([src], tmp_path, "error")
    assert (figures["games_in"], figures["closings"]) == (3, 1)
    assert (tmp_path / "clean.pgn").read_bytes() == b'[Event "x"]\n[Result "1-0"]\n\n1. e4 e5\n\n1-0\n1. d4 d5 *\n'
    res = validate(str(src), "--clean-output", str(tmp_path / "c2.pgn"))
    assert ("split: 1 game with no termination marker of its own closed, so that the game after it reads "
            "apart: a line with a marker (and '}' or ')' before it for a comment or variation left open)") in res.stderr
    assert json.loads(validate(str(src), "--clean-output", str(tmp_path / "c3.pgn"), "--format", "json").stdout)[
        "summary"]["split"] == {"clean": 2, "rejects": 1, "closed": 1}


def test_a_reject_whose_comment_never_closes_keeps_the_rejects_after_it(tmp_path):
    """Rejects whose '{' never closes, then rejects with a '}' before any '{': the comment took
    them in (3,484 games back for 3,487 on the messy corpus). Its look-ahead is followed across
    the records after it; where the text after decides otherwise than in the input, `} *`."""
    src = tmp_path / "in.pgn"
    src.write_bytes(b'[Event "a"]\n\n1. e4 { never closed\n\n[Event "ok"]\n\n1. e4 {fine} e5 *\n\n'
                    b'[Event "b"]\n\n1. d4 } d5 2. Kd3 *\n\n')
    figures = round_trip([src], tmp_path, "error")
    assert figures["games_in"] == 3 and figures["closings"] == 1
    assert b"1. e4 { never closed\n\n} *\n[Event \"b\"]" in (tmp_path / "rejects.pgn").read_bytes()
    # Followed by a game whose '{' comes first, as in the input: no closing, the reject as it was.
    src.write_bytes(b'[Event "a"]\n\n1. e4 { never closed\n\n[Event "b"]\n\n1. d4 {x} d5 2. Kd3 *\n\n'
                    b'[Event "ok"]\n\n1. e4 e5 *\n\n[Event "c"]\n\n1. d4 } d5 *\n')
    assert round_trip([src], tmp_path, "error")["closings"] == 0
    assert (tmp_path / "rejects.pgn").read_bytes() == src.read_bytes().replace(b'[Event "ok"]\n\n1. e4 e5 *\n\n', b"")


def test_trailing_comments_after_a_marker_stay_on_their_line(tmp_path):
    """`0-1 ;` (1,392 TCEC games): the next game's byte_offset was at the ';', so that the
    split wrote `0-1 \\n;`, 1,392 bytes more than the input, and put the ';' in the other
    file under --fail-on warning. The byte_offset is now the [Event] tag's."""
    src = tmp_path / "in.pgn"
    src.write_bytes(b'[Event "a"]\n[Result "0-1"]\n\n1. f3 e5 2. g4 Qh4# 0-1 ;\n\n'
                    b'[Event "b"]\n\n1. e4 -- 2. Nf3 *\n')
    for fail_on in ("error", "warning"):
        figures = round_trip([src], tmp_path, fail_on)
        assert figures["bytes_out"] == figures["bytes_in"] and figures["closings"] == 0
    assert (tmp_path / "clean.pgn").read_bytes() == b'[Event "a"]\n[Result "0-1"]\n\n1. f3 e5 2. g4 Qh4# 0-1 ;\n\n'


def test_a_latin1_file_failing_on_decode_fallback_is_a_reject(tmp_path):
    """decode-fallback is reported once per file, when the file ends: the split saw none and
    wrote every game clean, and its clean file failed the same gate."""
    src = tmp_path / "latin1.pgn"
    src.write_bytes(b'[Event "Caf\xe9"]\n\n1. e4 e5 *\n\n[Event "plain"]\n\n1. d4 d5 *\n\n'
                    b'[Event "M\xfcller"]\n\n1. c4 c5 *\n')
    res = validate(str(src), "--fail-on", "warning", "--clean-output", str(tmp_path / "c.pgn"),
                   "--rejects-output", str(tmp_path / "r.pgn"))
    assert res.exit_code == 1 and "split: 1 clean" in res.stderr and "2 rejected" in res.stderr
    assert [r["code"] for r in read_sidecar(tmp_path / "r.pgn.issues.csv")] == ["decode-fallback"] * 2
    assert validate(str(tmp_path / "c.pgn"), "--fail-on", "warning").exit_code == 0
    # Still one line for the file among the diagnostics, and --ignore leaves the games clean.
    assert res.stdout.count("decode-fallback") == 1
    res = validate(str(src), "--fail-on", "warning", "--ignore", "decode-fallback",
                   "--clean-output", str(tmp_path / "c.pgn"))
    assert res.exit_code == 0 and "split: 3 clean" in res.stderr


MESSY = ("messy",)


@pytest.mark.parametrize("fail_on", ["error", "warning"])
def test_round_trip_of_every_file_of_the_messy_corpus(tmp_path, fail_on):
    folder = shared_path(*MESSY)
    inputs = sorted(p for p in folder.rglob("*") if p.is_file())
    figures = round_trip(inputs, tmp_path, fail_on)
    assert figures["games_in"] == 3487


def _fuzzed(rng) -> bytes:
    """A PGN file of 3 to 11 pieces: games with and without tags, markers, comments left open,
    open variations, comments after markers, two games on a line, quoted games, stray text,
    escape lines, NULs; CRLF or CR line ends, a BOM, Latin-1 bytes, no last line end."""
    moves = ["1. e4 e5 2. Nf3 Nc6", "1. d4 d5 2. c4", "1. c4 (1. d4 d5) c5", "1. e4 {a note} c5 2. Nf3",
             "1. Nf3 $1 d5 2. g3", "1. e4 e5 2. Ke3", "1. f3 e5 2. g4 Qh4#", "1. e4 -- 2. d4"]
    results = ["1-0", "0-1", "1/2-1/2", "*"]
    pieces = []
    for _ in range(rng.randrange(3, 12)):
        tags = f'[Event "e{rng.randrange(1000)}"]\n[Result "{rng.choice(results + ["?"])}"]\n'
        mv, res = rng.choice(moves), rng.choice(results)
        pieces.append(rng.choice([
            f"{tags}\n{mv} {res}\n", f"{tags}\n{mv} {res}\n", f"{tags}\n{mv}\n", f"{mv} {res}\n", f"{mv}\n",
            f"{tags}\n{mv} {{never closed\n", f"{tags}\n{mv} (1... c5 2. Nf3\n", f"{tags}\n{mv} {res} ; note\n",
            rng.choice(["stray text\n", "% escape\n", "}\n", "{ lone comment }\n", ") 1-0 junk\n"]), tags,
            f"{tags}\n{mv} {res} {mv} *\n", f'{tags}\n{mv} {{ see\n[Event "q"]\n}} {res}\n',
            f"{tags}\n{mv} {res} {{after\n", f'{tags}\n{mv} {{ quoted\n\n[Event "in"]\n\n1. d4 *\n}} {res}\n',
            f'{mv} {{open\n[Event "sw"]\n', f"{tags}\n{mv} {res} }} stray\n", f"1. e4 (1. d4 {res}\n",
            f"{tags}\n{mv} {res}\x00\n%x 1-0\n"]) + rng.choice(["", "\n", "\n\n", "\n\n\n"]))
    text = "".join(pieces)
    if rng.random() < 0.2:
        text = text.replace("\n", "\r\n" if rng.random() < 0.7 else "\r")
    data = text.encode()
    if rng.random() < 0.15:
        data = data.replace(b"note", b"n\xe9te")
    if rng.random() < 0.1:
        data = b"\xef\xbb\xbf" + data
    return data.rstrip(b"\r\n") if rng.random() < 0.3 else data


def test_round_trip_of_fuzzed_files(tmp_path):
    """60 seeds, 1 to 3 files each, both --fail-on levels (13 games in gave 10 back)."""
    import random

    total = 0
    for seed in range(60):
        rng = random.Random(seed)
        inputs = []
        for i in range(rng.randrange(1, 4)):
            inputs.append(tmp_path / f"s{seed}-{i}.pgn")
            inputs[-1].write_bytes(_fuzzed(rng))
        for fail_on in ("error", "warning"):
            total += round_trip(inputs, tmp_path, fail_on)["games_in"]
    assert total > 1000


@pytest.mark.slow
@pytest.mark.parametrize("fail_on", ["error", "warning"])
def test_round_trip_of_tcec(tmp_path, fail_on):
    corpus = shared_path("games", "tcec-archive-nocomments.pgn.zst")
    figures = round_trip([corpus], tmp_path, fail_on)
    assert figures["games_in"] == 27612 and figures["bytes_out"] == figures["bytes_in"] and figures["closings"] == 0
