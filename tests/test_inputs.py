"""What a run takes as input and how much it says: folders, bad paths, EPD by content, binary
and empty inputs, perft startpos and suites, --select/--ignore, repeated facts once, the
summary's rendering."""

from __future__ import annotations

import bz2
import gzip
import json
import os
import shutil
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from chessscan.cli import main
from chessscan.readers.inputs import is_epd_source, resolve_inputs
from chessscan.readers.sources import binary_kind
from chessscan.reports.summary import percent, render_summary
from conftest import SAMPLES, shared_path

MAGNUS = SAMPLES / "lichess-magnus-300.pgn"
MAGNUS_ZST = SAMPLES / "lichess-magnus-300.pgn.zst"
WAC = SAMPLES / "arasan-wacnew.epd"


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def issues_of(out):
    return pd.read_parquet(out / "issues")


# --------------------------------------------------------------------------- folders and bad paths


def test_a_folder_is_read_recursively_in_sorted_order(tmp_path):
    tree = tmp_path / "data"
    (tree / "b").mkdir(parents=True)
    shutil.copy(MAGNUS_ZST, tree / "b" / "magnus.pgn.zst")
    shutil.copy(WAC, tree / "a-wac.epd")
    (tree / "notes.txt").write_text("not an input\n")
    (tree / ".hidden.pgn").write_text("1. e4 *\n")
    sources, problems = resolve_inputs([str(tree)])
    assert sources == [str(tree / "a-wac.epd"), str(tree / "b" / "magnus.pgn.zst")]
    assert problems == []
    out = tmp_path / "r"
    res = run("analyze", tree, "-o", out, "--silent", "--jobs", "1", "--cross-check", "off")
    assert res.exit_code == 0, res.output
    games = pd.read_parquet(out / "games")
    assert len(games) == 300 and set(games.source) == {str(tree / "b" / "magnus.pgn.zst")}
    assert len(pd.read_parquet(out / "epd_positions")) == 300
    summary = json.loads((out / "summary.json").read_text())
    assert summary["sources"] == sources


def test_a_linked_folder_is_read_once_without_looping(tmp_path):
    # A symlinked folder was skipped without a word.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(MAGNUS, elsewhere / "m.pgn")
    tree = tmp_path / "data"
    tree.mkdir()
    (tree / "linked").symlink_to(elsewhere)
    (tree / "z-again").symlink_to(elsewhere)  # the same folder a second time: read once
    (elsewhere / "up").symlink_to(tree)  # a link to an ancestor: no loop
    sources, problems = resolve_inputs([str(tree)])
    assert sources == [str(tree / "linked" / "m.pgn")]
    assert problems == []


def test_a_missing_file_among_good_ones_is_an_issue_and_exit_2(tmp_path):
    out = tmp_path / "r"
    missing = tmp_path / "gone.pgn"
    res = run("analyze", MAGNUS, missing, "-o", out, "--silent", "--jobs", "1", "--cross-check", "off")
    assert res.exit_code == 2
    assert f"{missing}: error[unreadable-input]: no such file or folder" in res.stderr
    assert "1 input could not be analyzed" in res.stderr
    games = pd.read_parquet(out / "games")
    assert len(games) == 300  # the good file is analyzed
    bad = issues_of(out).query("code == 'unreadable-input'")
    assert bad[["source", "severity"]].values.tolist() == [[str(missing), "error"]]
    assert bad.game_index.isna().all()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["issues_by_code"]["unreadable-input"] == 1 and summary["games_read"] == 300


def test_validate_reports_a_missing_file_in_place_and_exits_2(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(MAGNUS, "magnus.pgn")
    res = run("validate", "gone.pgn", "magnus.pgn")
    assert res.exit_code == 2
    assert res.stdout.splitlines()[0] == "gone.pgn: error[unreadable-input]: no such file or folder"
    assert res.stderr.splitlines()[0] == "300 games: 300 ok, 0 with errors, 0 warnings"


# --------------------------------------------------------------------------- EPD by content


@pytest.mark.parametrize("suffix", [".fen", ".txt", ""])
def test_epd_named_otherwise_is_read_by_content(tmp_path, suffix):
    path = tmp_path / f"wac{suffix}"
    shutil.copy(WAC, path)
    assert is_epd_source(str(path))
    pgn = tmp_path / "games.txt"
    shutil.copy(MAGNUS, pgn)
    assert not is_epd_source(str(pgn))
    res = run("validate", path)
    assert res.exit_code == 0, res.output
    assert res.stderr.splitlines()[0] == "300 EPD positions: 300 valid, 0 invalid, 0 warnings"


def test_pgn_suffix_stays_pgn_whatever_it_holds(tmp_path):
    path = tmp_path / "odd.pgn"
    shutil.copy(WAC, path)
    assert not is_epd_source(str(path))


# --------------------------------------------------------------------------- binary, archives, empty


def test_binary_kind_tells_text_from_data():
    assert binary_kind(b"PAR1\x15\x04") == "a Parquet file"
    assert binary_kind(bytes(range(256)) * 4) == "binary data"
    assert binary_kind(MAGNUS.read_bytes()[:4096]) is None
    # EPD suites with a NUL ending each line are text (perft-marcel's files).
    assert binary_kind(b"8/8/8/8/8/8/8/K6k w - - 0 1 ;D1 3\0\n" * 40) is None
    assert binary_kind("Ärger über Öl — café\n".encode("cp1252") * 30) is None


def test_a_parquet_file_without_moves_gives_one_error_and_a_failing_exit(tmp_path):
    # A report's games table is a Parquet file but no game table: no column holds moves.
    report = tmp_path / "r1"
    assert run("analyze", MAGNUS, "-o", report, "--silent", "--jobs", "1").exit_code == 0
    parquet = report / "games" / "part-000000.parquet"
    res = run("validate", parquet)
    assert res.exit_code == 2  # an input that could not be analyzed, as in analyze
    assert res.stdout.splitlines() == [
        f"{parquet}: error[unsupported-input]: {parquet} has no moves column (movetext, moves_san, moves_uci, "
        "transcript; or name it with --moves-column): its columns are source, game_index, byte_offset, line, "
        "event, site, date, round, white, black, result, white_elo, black_elo, eco, time_control, "
        "time_control_base_s, time_control_increment_s, termination, variant, start_fen, plies, clock_plies, "
        "eval_plies, checks, direct_checks, discovered_checks, double_checks, outcome, winner, "
        "perpetuals, ... (34 columns)"]
    assert res.stderr.splitlines()[0] == "0 games: 0 ok, 0 with errors, 0 warnings"
    out = tmp_path / "r2"
    res = run("analyze", parquet, MAGNUS, "-o", out, "--silent", "--jobs", "1", "--cross-check", "off")
    assert res.exit_code == 2
    assert issues_of(out).code.tolist() == ["unsupported-input"]
    assert json.loads((out / "summary.json").read_text())["games_read"] == 300


def test_random_bytes_give_one_error(tmp_path):
    import random

    path = tmp_path / "noise.pgn"
    path.write_bytes(random.Random(7).randbytes(200_000))
    res = run("validate", path)
    assert res.exit_code == 2
    assert len(res.stdout.splitlines()) == 1 and "error[not-text]" in res.stdout
    assert "is not text but binary data" in res.stdout


def test_a_nul_in_a_move_is_that_games_error_not_not_text(tmp_path):
    """A few NULs do not make a file binary (docs/explanation/pgn.md): read as any character."""
    path = tmp_path / "nul.pgn"
    path.write_bytes(b'[Event "A"]\n\n1. e4 e5 2. N\x00f3 Nc6 *\n\n[Event "B"]\n\n1. d4 d5 *\n')
    doc = json.loads(run("validate", "--format", "json", path).stdout)
    assert [(d["code"], d["line"], d["game_index"]) for d in doc["diagnostics"]] == [("unexpected-token", 3, 0)]
    assert doc["summary"]["games_read"] == 2 and doc["summary"]["games_ok"] == 1


def test_noise_before_games_is_read_not_refused(tmp_path):
    import random

    noise = random.Random(3).randbytes(100_000)
    for name, data in (("head.pgn", noise + b"\n\n" + MAGNUS.read_bytes()[:20_000]),
                       ("tail.pgn", noise + b"\n\n" + MAGNUS.read_bytes()[-3000:])):
        path = tmp_path / name
        path.write_bytes(data)
        res = run("validate", "--format", "json", path)
        doc = json.loads(res.stdout)
        assert "not-text" not in {d["code"] for d in doc["diagnostics"]}, name
        assert doc["summary"]["games_read"] >= 2, name  # read, noise included, not refused
        if name == "head.pgn":  # the whole games after the noise are read as usual
            assert doc["summary"]["games_ok"] >= 1 and doc["summary"]["positions"] >= 40


def test_a_zip_in_analyze_is_one_error_not_a_game(tmp_path):
    archive = tmp_path / "games.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(MAGNUS, "magnus.pgn")
    out = tmp_path / "r"
    res = run("analyze", archive, MAGNUS, "-o", out, "--silent", "--jobs", "1", "--cross-check", "off")
    assert res.exit_code == 2
    summary = json.loads((out / "summary.json").read_text())
    assert summary["games_read"] == 300 and summary["sources"] == [str(MAGNUS)]
    assert issues_of(out).code.tolist()[0] == "unsupported-input"


@pytest.mark.parametrize("kind", ["not-text", "unsupported-input", "both"])
def test_analyze_with_no_input_it_can_analyze_writes_nothing(tmp_path, kind):
    """Only inputs that cannot be analyzed (not text, an archive): exit 2 before anything is
    written, as for a missing file (a full, empty report was written, then exit 2)."""
    import random

    noise = tmp_path / "noise.bin"
    noise.write_bytes(random.Random(7).randbytes(3000))
    archive = tmp_path / "games.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.write(MAGNUS, "magnus.pgn")
    paths = {"not-text": [noise], "unsupported-input": [archive], "both": [noise, archive]}[kind]
    out = tmp_path / "r"
    res = run("analyze", *paths, "-o", out, "--silent", "--jobs", "1")
    assert res.exit_code == 2 and not out.exists()
    lines = res.stderr.splitlines()
    assert [line.split("[")[1].split("]")[0] for line in lines[:-1]] == [
        {noise: "not-text", archive: "unsupported-input"}[p] for p in paths]
    assert lines[-1] == "Error: no input could be analyzed: nothing is written"
    # An empty file beside them gives nothing to analyze either; a file of games does.
    empty = tmp_path / "empty.pgn"
    empty.write_bytes(b"")
    assert run("analyze", *paths, empty, "-o", out, "--silent", "--jobs", "1").exit_code == 2
    assert not out.exists()
    assert run("analyze", *paths, MAGNUS, "-o", out, "--silent", "--jobs", "1").exit_code == 2
    assert json.loads((out / "summary.json").read_text())["games_read"] == 300


def test_an_empty_file_warns(tmp_path):
    empty = tmp_path / "empty.pgn"
    empty.write_bytes(b"")
    res = run("validate", empty)
    assert res.exit_code == 0
    assert res.stdout == f"{empty}: warning[empty-input]: empty: no game or position in it\n"
    assert res.stderr.splitlines()[0] == "0 games: 0 ok, 0 with errors, 1 warning"
    assert run("validate", "--fail-on", "warning", empty).exit_code == 1
    out = tmp_path / "r"
    res = run("analyze", empty, "-o", out, "--silent")
    assert res.exit_code == 0 and "warning[empty-input]" in res.stderr
    assert issues_of(out).code.tolist() == ["empty-input"]
    # The summary names the cross-check asked for, though no game was there to replay.
    assert json.loads((out / "summary.json").read_text())["cross_check"]["mode"] == "sample"
    res = run("analyze", empty, "-o", tmp_path / "f", "--silent", "--cross-check", "full")
    assert json.loads((tmp_path / "f" / "summary.json").read_text())["cross_check"]["replays"] == "every game"
    folder = tmp_path / "nothing"
    folder.mkdir()
    res = run("validate", folder)
    assert "a folder with no .pgn or .epd file" in res.stdout


@pytest.mark.parametrize("data", [b"\n\n  \r\n", b"\xef\xbb\xbf", b"\xef\xbb\xbf\n\t\n"])
@pytest.mark.parametrize("suffix", [".pgn", ".epd", ".pgn.gz"])
def test_a_file_of_white_space_only_warns_as_empty(tmp_path, data, suffix):
    # As empty as a file of no bytes: a gate with --fail-on warning must not pass it silently.
    path = tmp_path / ("blank" + suffix)
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    res = run("validate", path)
    assert res.exit_code == 0
    assert res.stdout == f"{path}: warning[empty-input]: blank: nothing but white space in it\n"
    assert run("validate", "--fail-on", "warning", path).exit_code == 1
    # A file with a game after blank lines is read as before.
    if suffix == ".pgn":
        path.write_bytes(data + b'[Event "a"]\n\n1. e4 *\n')
        assert run("validate", path).stderr.splitlines()[0] == "1 game: 1 ok, 0 with errors, 0 warnings"


def test_shared_empty_messy_file_warns():
    path = shared_path("messy", "kokopu-edgecases", "empty.pgn")
    res = run("validate", path)
    assert "warning[empty-input]" in res.stdout


# --------------------------------------------------------------------------- perft and CLI odds


def test_perft_startpos():
    res = run("perft", "startpos", 3)
    assert res.exit_code == 0 and res.stdout == "8902\n"
    assert run("perft", "startpos", 2, "--divide").stdout.endswith("nodes: 400\n")


def test_perft_suite_refuses_a_pgn_with_one_error():
    res = run("perft", "--suite", MAGNUS)
    assert res.exit_code == 2
    assert res.stdout == ""
    assert res.stderr.strip().splitlines() == [
        f"Error: {MAGNUS} is not a perft suite: its first line is '[Event \"Rated Bullet game\"]' (expected "
        "EPD lines with D1..Dn node counts, or id/epd/perft blocks)"]


def test_perft_suite_still_reads_a_suite():
    res = run("perft", "--suite", SAMPLES / "perft-cw-special.epd")
    assert res.exit_code == 0 and res.stdout.splitlines()[-1].startswith("147 passed, 0 failed")


def test_stdin_on_a_terminal_is_refused(monkeypatch):
    class Tty:
        buffer = None

        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdin", Tty())
    from chessscan.cli import _resolve_cli_inputs
    import click

    with pytest.raises(click.UsageError, match="stdin is a terminal"):
        _resolve_cli_inputs(["-"])


def test_shard_size_without_dask_warns(tmp_path):
    res = run("analyze", MAGNUS_ZST, "--shard-size", "1M", "-o", tmp_path / "r", "--silent", "--jobs", "1")
    assert res.exit_code == 0
    assert "warning: --shard-size applies only with --dask: ignored" in res.stderr


def test_compressed_input_corrupt_before_its_first_byte(tmp_path):
    # bz2 hands out a block only whole: one bad byte in a one-block file gives no text at
    # all. Checking the input looked twice and got the error raised (a traceback), for a
    # file and for stdin; it is a truncated-input issue like any corrupt stream.
    data = bytearray(bz2.compress(b'[Event "A"]\n\n1. e4 e5 *\n\n' * 50))
    data[len(data) // 2] ^= 0xFF
    path = tmp_path / "bad.pgn.bz2"
    path.write_bytes(bytes(data))
    (tmp_path / "bad.txt.bz2").write_bytes(bytes(data))  # told apart by content: exit 3 too
    for name, inp in ((path, None), ("-", bytes(data)), (tmp_path / "bad.txt.bz2", None)):
        res = run("validate", name, "--jobs", "1", "--silent", input=inp)
        assert res.exit_code == 1 and isinstance(res.exception, SystemExit), res.output
        shown = str(name) if inp is None else "<stdin>"
        assert res.stdout.startswith(f"{shown}:1: error[truncated-input]: {shown}: bz2 stream is truncated")
        assert len(res.stdout.splitlines()) == 1


def test_a_fifo_in_a_folder_is_reported_not_waited_for(tmp_path):
    # Opening a FIFO waits for a writer: the folder's run hung before its first game.
    folder = tmp_path / "games"
    folder.mkdir()
    shutil.copy(MAGNUS, folder / "a.pgn")
    os.mkfifo(folder / "b.pgn")
    res = subprocess.run([sys.executable, "-m", "chessscan", "validate", str(folder), "--jobs", "1", "--silent"],
                         capture_output=True, text=True, timeout=120, cwd=Path(__file__).resolve().parents[1])
    assert res.returncode == 2, res.stderr
    assert res.stdout == (f"{folder / 'b.pgn'}: error[unreadable-input]: not a regular file (a FIFO, socket or "
                          "device) in a folder: give it by name to read it\n")
    assert "300 games: 300 ok" in res.stderr


def test_a_pipe_given_by_name_is_read_once(tmp_path):
    # A pipe (`validate <(zcat games.pgn.gz)`, /dev/fd/N) gives its bytes once: the input
    # check opened it to look at its first 64 KiB and closed it, and the games there were
    # lost (265 of 300 games read, the first cut). The stream looked at is the one read.
    for args, want in ((["validate"], "300 games: 300 ok"), (["perft", "--max-nodes", "1000", "--suite"], "300 passed")):
        data = (MAGNUS if args[0] == "validate" else SAMPLES / "perft-marcel-sample.epd").read_bytes()
        r, w = os.pipe()
        writer = threading.Thread(target=_write_all, args=(w, data))
        writer.start()
        try:
            res = run(*args, f"/dev/fd/{r}", *(["--jobs", "1", "--silent"] if args[0] == "validate" else []))
        finally:
            writer.join()
            os.close(r)
        assert want in res.output, res.output
    res = run("perft", "--max-nodes", "1000", "--suite", "-", input=(SAMPLES / "perft-marcel-sample.epd").read_bytes())
    assert res.stdout.splitlines()[-1] == "300 passed, 0 failed; 1242 of 1800 counts not checked (over --max-nodes)"


def _write_all(fd: int, data: bytes) -> None:
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def test_stdin_is_named_stdin_in_the_summary(tmp_path):
    out = tmp_path / "r"
    res = run("analyze", "-", "-o", out, "--silent", "--jobs", "1", input=MAGNUS.read_bytes())
    assert res.exit_code == 0
    assert json.loads((out / "summary.json").read_text())["sources"] == ["<stdin>"]
    assert set(pd.read_parquet(out / "games").source) == {"<stdin>"}


# --------------------------------------------------------------------------- select, ignore, once


UCI_GAMES = '''[Event "uci"]
[White "A"]
[Black "B"]
[Result "*"]

1. e2e4 e7e5 2. g1f3 b8c6 3. Bb5 a6 *

[Event "uci 2"]
[Result "*"]

1. d2d4 d5 2. Bf4 xx9 *
'''


@pytest.fixture
def uci_file(tmp_path):
    path = tmp_path / "uci.pgn"
    path.write_text(UCI_GAMES)
    return path


def test_uci_move_is_reported_once_per_game_with_its_count(uci_file):
    res = run("validate", uci_file)
    lines = res.stdout.splitlines()
    uci = [ln for ln in lines if "[uci-move]" in ln]
    assert len(uci) == 2
    assert uci[0].startswith(f"{uci_file}:6:4: warning[uci-move]: 'e2e4' names its origin square")
    assert "(4 moves of this game are written so; reported once)" in uci[0]
    assert "(game_index 1" in uci[1] and "reported once" not in uci[1]  # a single one has no count
    # The counts on stderr keep every occurrence, and say how many diagnostics stand for them,
    # so that the closing line's warnings (the diagnostics printed) add up.
    assert "  5  warning  uci-move  (2 diagnostics: once a game)" in res.stderr.splitlines()
    assert res.stderr.splitlines()[0].endswith(", 2 warnings")


def test_select_and_ignore(uci_file, tmp_path):
    res = run("validate", "--select", "unexpected-token", uci_file)
    assert [ln.split(": ")[1] for ln in res.stdout.splitlines()] == ["error[unexpected-token]"]
    assert res.exit_code == 1
    res = run("validate", "--ignore", "uci-move,unexpected-token", uci_file)
    assert res.stdout == "" and res.exit_code == 0
    assert "  5  warning  uci-move  (not reported)" in res.stderr
    res = run("validate", "--ignore", "moves", "--ignore", "syntax", uci_file)
    assert res.stdout == ""
    res = run("validate", "--select", "no-such-code", uci_file)
    assert res.exit_code == 2 and "unknown issue code 'no-such-code'" in res.stderr
    for empty in ("", " , "):  # it would report nothing and pass every gate
        res = run("validate", "--select", empty, uci_file)
        assert res.exit_code == 2 and "--select names no issue code" in res.stderr
    out = tmp_path / "r"
    res = run("analyze", uci_file, "-o", out, "--silent", "--ignore", "uci-move", "--jobs", "1")
    assert res.exit_code == 0
    assert issues_of(out).code.tolist() == ["unexpected-token"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["issues_by_code"] == {"uci-move": 5, "unexpected-token": 1}


def test_decode_fallback_once_per_file(tmp_path):
    game = '[Event "Café"]\n[White "Müller"]\n[Result "*"]\n\n1. e4 e5 *\n\n'
    path = tmp_path / "latin.pgn"
    path.write_bytes((game * 5).encode("cp1252"))
    res = run("validate", path)
    lines = [ln for ln in res.stdout.splitlines() if "decode-fallback" in ln]
    assert len(lines) == 1
    assert lines[0].startswith(f"{path}:1: warning[decode-fallback]: ")
    assert "5 games of this file are decoded so (reported once)" in lines[0]
    assert "  5  warning  decode-fallback  (1 diagnostic: once a file)" in res.stderr.splitlines()
    out = tmp_path / "r"
    assert run("analyze", path, "-o", out, "--silent", "--jobs", "1").exit_code == 0
    rows = issues_of(out).query("code == 'decode-fallback'")
    assert len(rows) == 1 and rows.game_index.tolist() == [0]


def test_decode_fallback_of_each_file_before_the_next_files_issues(tmp_path):
    game = '[Event "Café"]\n[Result "*"]\n\n1. e4 e5 *\n\n'
    first, second = tmp_path / "a.pgn", tmp_path / "b.pgn"
    first.write_bytes((game * 3).encode("cp1252"))
    second.write_bytes((game * 2).encode("cp1252") + b'[Event "x"]\n\n1. e4 e5 2. Ke3 *\n')
    out = tmp_path / "r"
    assert run("analyze", first, second, "-o", out, "--silent", "--jobs", "1").exit_code == 0
    issues = issues_of(out)
    assert list(zip(issues.source, issues.code)) == [
        (str(first), "decode-fallback"), (str(second), "illegal-move"), (str(second), "decode-fallback")]
    assert "3 games of this file" in issues.message[0] and "2 games of this file" in issues.message[2]


def test_uci_moves_of_the_shared_messy_file_once():
    path = shared_path("messy", "python-chess", "uci-moves.pgn")
    res = run("validate", "--format", "json", path)
    doc = json.loads(res.stdout)
    uci = [d for d in doc["diagnostics"] if d["code"] == "uci-move"]
    assert len(uci) == len({d["game_index"] for d in uci})
    assert doc["summary"]["issues_by_code"]["uci-move"] > len(uci)


def test_messages_quote_tokens_as_written(tmp_path):
    path = tmp_path / "esc.pgn"
    path.write_text('[Event "x"]\n\n1. e4 e5 2. ef\\ghij *\n')
    res = run("validate", path)
    assert "error[unexpected-token]: 'ef\\ghij' is not a move" in res.stdout
    res = run("validate", "--format", "json", path)
    assert json.loads(res.stdout)["diagnostics"][0]["message"].startswith("'ef\\ghij' is not a move")


# --------------------------------------------------------------------------- summary rendering


def test_small_shares_read_meaningfully():
    assert percent(14, 333_596) == "0.0042%"
    assert percent(1, 10_000_000) == "<0.001%"
    assert percent(333_582, 333_596) == ">99.9%"
    assert percent(0, 5) == "0.0%" and percent(5, 5) == "100.0%" and percent(1, 8) == "12.5%"
    text = render_summary({"games_read": 333_596, "games_ok": 333_582, "games_with_errors": 14})
    assert "(0.0042%)" in text and "(>99.9%)" in text


def test_summary_groups_issues_and_counts_many_sources():
    summary = {"sources": [f"f{i}.pgn" for i in range(59)], "games_read": 1,
               "issues_by_code": {"illegal-move": 1, "uci-move": 3}, "outcomes": {"none": 1},
               "issues_by_severity": {"error": 1, "warning": 3}, "elapsed_seconds": 2.0}
    lines = render_summary(summary).splitlines()
    assert lines[1].split(None, 1)[1].strip() == "59 files: f0.pgn, f1.pgn, f2.pgn, ..."
    at = [i for i, ln in enumerate(lines) if ln.startswith("issues by")]
    assert [lines[i].strip() for i in at] == ["issues by severity", "issues by code"]
    assert at[1] == at[0] + 3
    assert lines[at[1] + 1].split() == ["uci-move", "(warning)", "3"]


def test_analyze_summary_has_elapsed_time_and_throughput(tmp_path):
    out = tmp_path / "r"
    res = run("analyze", MAGNUS_ZST, "-o", out, "--silent", "--jobs", "1", "--cross-check", "off")
    assert res.exit_code == 0
    lines = {ln.rsplit("  ", 1)[0].strip(): ln.rsplit("  ", 1)[1].strip() for ln in res.stderr.splitlines()
             if "  " in ln.strip()}
    elapsed, rate = float(lines["elapsed (s)"]), float(lines["games / s"].replace(",", ""))
    # elapsed is printed to 0.01 s: the rate agrees with it within that rounding
    assert elapsed > 0 and 300 / (elapsed + 0.005) - 1 <= rate <= 300 / max(elapsed - 0.005, 1e-3) + 1
    # summary.json stays the same from run to run: no clock in it.
    summary = json.loads((out / "summary.json").read_text())
    assert "elapsed_seconds" not in summary and "games_per_second" not in summary
