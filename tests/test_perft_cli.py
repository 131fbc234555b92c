"""`chessscan perft`: single positions, divide, and suites in both layouts."""

from __future__ import annotations

import bz2
import re

import pytest
from click.testing import CliRunner

from chessscan.cli import main
from conftest import SAMPLES, shared_path

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


def invoke(*args):
    return CliRunner().invoke(main, ["perft", *args])


def test_perft_counts():
    assert invoke(START, "3").output == "8902\n"
    assert invoke(KIWIPETE, "2").output == "2039\n"
    assert invoke(START, "0").output == "1\n"


def test_perft_divide():
    result = invoke(START, "2", "--divide")
    lines = result.stdout.splitlines()
    assert "e2e4: 20" in lines and "g1f3: 20" in lines
    assert lines[-1] == "nodes: 400"
    assert len([l for l in lines if ":" in l and not l.startswith("nodes")]) == 20


def test_perft_chess960_castling_is_written_king_to_rook():
    fen = "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9"
    assert invoke(fen, "2", "--chess960").output == "528\n"


def test_bad_fen_is_a_usage_error():
    result = invoke("not a fen", "2")
    assert result.exit_code == 2 and "FEN" in result.output
    assert invoke(START).exit_code == 2


def test_suite_epd_layout_passes():
    result = invoke("--suite", str(SAMPLES / "perft-cw-special.epd"), "--max-nodes", "2000")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[-1] == "128 passed, 0 failed, 46 skipped; 405 of 814 counts not checked (over --max-nodes)"
    assert lines[0] == "ok   line 1: D1 5, D2 25, D3 161, D4 1035, D5 skipped, D6 skipped"
    assert lines[2] == "skip line 3: D6 skipped"


def test_nothing_checked_is_not_green(tmp_path):
    # Two bare kings: a count over --max-nodes that takes no time to refute once run (a
    # wrong D5 of the start position took 5 s of CPU uncompiled).
    suite = tmp_path / "big.epd"
    suite.write_text("8/8/8/3k4/8/3K4/8/8 w - - ;D5 4865608\n")
    result = invoke("--suite", str(suite))
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "skip line 1: D5 skipped", "0 passed, 0 failed, 1 skipped; 1 of 1 counts not checked (over --max-nodes)"]
    assert invoke("--suite", str(suite), "--max-nodes", "0").exit_code == 1  # 0: no cap, and D5 is wrong


def test_chess960_castling_is_inferred_for_a_single_fen():
    fen = "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9"
    result = invoke(fen, "3")
    assert result.stdout == "12189\n" and "Chess960" in result.stderr


def test_suite_python_chess_layout_and_a_wrong_count_fails(tmp_path):
    suite = tmp_path / "s.perft"
    suite.write_text("# comment\n\nid start\nepd " + START[:-4] + "\nperft 1 20\nperft 2 400\n\n"
                     "id wrong\nepd " + KIWIPETE[:-4] + "\nperft 1 48\nperft 2 2040\n")
    result = invoke("--suite", str(suite))
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "ok   start: D1 20, D2 400",
        "FAIL wrong: D1 48, D2 2039 != 2040",
        "1 passed, 1 failed",
    ]


def test_empty_suite_says_so(tmp_path):
    suite = tmp_path / "empty.epd"
    suite.write_text("# nothing here\n")
    result = invoke("--suite", str(suite))
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == "0 passed, 0 failed"
    assert "the suite holds no position" in result.output


def test_suite_with_an_invalid_position_fails(tmp_path):
    suite = tmp_path / "bad.epd"
    suite.write_text("8/8/8/8/8/8/8/8 w - - ;D1 0\n" + START + " ;D1 20\n")
    result = invoke("--suite", str(suite))
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == "1 passed, 1 failed"
    assert "no king" in result.output


def test_a_depth_too_deep_to_count_is_reported_not_run(tmp_path):
    # Compiled, perft recursed one C frame per ply (D20000: a segfault; past 2**31: an
    # OverflowError); uncompiled, a RecursionError.
    suite = tmp_path / "deep.epd"
    suite.write_text("4k3/8/8/8/8/8/8/4K3 w - - ;D1 5 ;D20000 1\n"
                     "id deep\nepd 4k3/8/8/8/8/8/8/4K3 w - -\nperft 1 5\nperft 3000000000 1\n"
                     + START + " ;D1 20\n")
    result = invoke("--suite", str(suite))
    assert result.exit_code == 1
    assert result.stdout.splitlines()[-1] == "1 passed, 2 failed"
    assert "FAIL line 1: D20000: a perft depth over 64" in result.stdout
    assert "FAIL deep: line 5: perft depth 3000000000 over 64" in result.stdout
    result = invoke("4k3/8/8/8/8/8/8/4K3 w - -", "20000")
    assert result.exit_code == 2 and "DEPTH 20000 is over 64" in result.output


def test_a_compressed_suite_corrupt_at_its_start_fails_its_run(tmp_path):
    # One bad byte in a one-block bz2 file: no text at all, and the check that the file
    # starts like a suite ended with the TruncatedInput traceback.
    data = bytearray(bz2.compress((START + " ;D1 20\n").encode() * 20))
    data[len(data) // 2] ^= 0xFF
    suite = tmp_path / "suite.epd.bz2"
    suite.write_bytes(bytes(data))
    result = invoke("--suite", str(suite))
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.stdout.startswith(f"FAIL line 1: {suite}: bz2 stream is truncated or corrupt")
    assert result.stdout.splitlines()[-1] == "0 passed, 1 failed"


# (pychess-perftsuite2-sedlak.epd has only D6 counts, above any quick cap: see the slow tests)
@pytest.mark.parametrize("name", ["pychess-perftsuite.epd", "ethereal-standard.epd",
                                  "python-chess-tricky.perft", "pychess-frc_perftsuite.epd",
                                  "ethereal-fischer.epd", "python-chess-chess960.perft"])
def test_shared_suites_small_cap(name):
    path = shared_path("perft", name)
    result = invoke("--suite", str(path), "--max-nodes", "2000")
    assert result.exit_code == 0, result.output[-2000:]
    assert re.fullmatch(r"\d+ passed, 0 failed(, \d+ skipped)?(; \d+ of \d+ counts not checked \(over --max-nodes\))?",
                        result.stdout.splitlines()[-1])


def test_a_long_count_stops_on_sigterm():
    # The compiled count runs in C, where Python runs no signal handler unless asked.
    import os
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-m", "chessscan", "perft", "startpos", "9"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ))
    # Past start-up (SIGTERM handled: Linux says so in /proc), then inside the count (depth 9
    # takes hours).
    deadline = time.monotonic() + 30
    status = f"/proc/{proc.pid}/status"
    while os.path.exists(status) and time.monotonic() < deadline:
        caught = [line for line in open(status).read().splitlines() if line.startswith("SigCgt:")]
        if caught and int(caught[0].split()[1], 16) >> (signal.SIGTERM - 1) & 1:
            break
        time.sleep(0.05)
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError("perft did not stop on SIGTERM")
    assert proc.returncode == 143 and "stopped by SIGTERM" in err.decode()


def test_a_wrong_small_count_does_not_run_a_deep_depth(tmp_path):
    # 'D14 1' is under --max-nodes, but D14 would take hours: the true counts of the
    # shallower depths pass the cap first, and D14 is skipped.
    suite = tmp_path / "typo.epd"
    suite.write_text("4k3/8/8/8/8/8/8/4K3 w - - ;D1 5 ;D14 1\n"
                     "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - ;D3 8902 ;D4 197281\n")
    result = CliRunner().invoke(main, ["perft", "--suite", str(suite), "--max-nodes", "100000"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    # Two bare kings: 5, 25, 170, 1,156, 7,922, 53,896, 375,049 (python-chess agrees to D5).
    assert lines[0] == "ok   line 1: D1 5, D14 skipped (D7 already has 375,049 nodes)"
    assert lines[1] == "ok   line 2: D3 8902, D4 skipped"


def test_a_repeated_depth_or_bad_opcode_is_a_warning_in_both_layouts(tmp_path):
    # Documented as warnings (the first count kept): the position is still checked.
    suite = tmp_path / "dup.epd"
    suite.write_text(START + " ;D1 20 ;D1 21 ;D2 400\n" + START + " ;D1 20 ;1bad 3\n"
                     "id dup\nepd " + START[:-4] + "\nperft 1 20\nperft 1 21\n")
    result = invoke("--suite", str(suite))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "ok   line 1: D1 20, D2 400 (warning: opcode 'D1' repeated; first occurrence kept)",
        "ok   line 2: D1 20 (warning: opcode '1bad' is not a letter followed by up to 14 letters, "
        "digits or '_')",
        "ok   dup: D1 20 (warning: line 6: depth 1 given again (21); first value 20 kept)",
        "3 passed, 0 failed",
    ]
    # The first count is the one checked: a wrong first count still fails.
    suite.write_text(START + " ;D1 21 ;D1 20\n")
    result = invoke("--suite", str(suite))
    assert result.exit_code == 1
    assert result.stdout.splitlines()[0] == (
        "FAIL line 1: D1 20 != 21 (warning: opcode 'D1' repeated; first occurrence kept)")


def test_a_failing_line_is_named_once(tmp_path):
    suite = tmp_path / "orphan.perft"
    suite.write_text("perft 1 20\nepd " + START[:-4] + "\nperft 1 x\nperft 2 400\n")
    result = invoke("--suite", str(suite))
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "FAIL line 1: 'perft' line before any position",
        # Another line than the position's is still named.
        "FAIL line 2: line 3: expected 'perft DEPTH NODES', got 'perft 1 x'",
        "0 passed, 2 failed",
    ]


def test_divide_with_a_suite_is_a_usage_error(tmp_path):
    suite = tmp_path / "s.epd"
    suite.write_text(START + " ;D1 20\n")
    result = invoke("--suite", str(suite), "--divide")
    assert result.exit_code == 2
    assert "--divide counts one position: it cannot be given with --suite" in result.output
    assert "passed" not in result.output  # refused before any count


def test_max_nodes_without_a_suite_is_a_usage_error():
    result = invoke("startpos", "3", "--max-nodes", "10")
    assert result.exit_code == 2
    assert "--max-nodes caps a --suite run: it cannot be given with FEN DEPTH" in result.output
    assert invoke("startpos", "3").output.strip() == "8902"  # the default cap does not count as given


@pytest.mark.parametrize("args", [["startpos", "-1"], [START, "-3", "--divide"], ["startpos", "--", "-1"]])
def test_a_negative_depth_is_a_depth_error_not_an_unknown_option(args):
    # click reads a word starting with '-' as an option: '-1' was "No such option '-1'".
    result = invoke(*args)
    assert result.exit_code == 2
    bad = next(a for a in args if a.startswith("-") and a[1:].isdigit())
    assert f"Invalid value for '[DEPTH]': {bad} is not in the range x>=0." in result.output
    assert "No such option" not in result.output


def test_minus_zero_is_depth_zero():
    result = invoke("startpos", "-0")
    assert (result.exit_code, result.output) == (0, "1\n")


def test_an_unknown_option_is_still_one():
    result = invoke("startpos", "1", "-x")
    assert result.exit_code == 2 and "No such option '-x'" in result.output


@pytest.mark.parametrize("fen, why", [
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e4 0 1", "en-passant square e4 is not on rank 6"),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e6 0 1",
     "en-passant square e6 has no pawn on e5 that just moved past it"),
    ("rnbqkb1r/pppp1ppp/4n3/4p3/3P4/8/PPP1PPPP/RNBQKBNR w KQkq e6 0 1",
     "en-passant square e6: e6 or e7 is not empty"),
])
def test_an_impossible_en_passant_square_is_refused(tmp_path, fen, why):
    # Silently cleared before, so the count was of another FEN than the one given; analyze
    # refuses it (bad-en-passant), and python-chess calls it STATUS_INVALID_EP_SQUARE.
    chess = pytest.importorskip("chess")
    assert chess.Board(fen).status() & chess.STATUS_INVALID_EP_SQUARE
    result = invoke(fen, "1")
    assert result.exit_code == 2
    assert why in result.output and "§16.1.3.4" in result.output
    suite = tmp_path / "ep.epd"
    suite.write_text(f"{fen} ;D1 20\n{START} ;D1 20\n")
    result = invoke("--suite", str(suite))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"FAIL line 1: {why} (") and lines[1:] == ["ok   line 2: D1 20", "1 passed, 1 failed"]


def test_a_possible_en_passant_square_is_counted():
    # Capturable (d5xe6), and one that a pin makes uncapturable: both explained by e7-e5/d7-d5.
    assert invoke("rnbqkbnr/pppp1ppp/8/3Pp3/8/8/PPP1PPPP/RNBQKBNR w KQkq e6 0 1", "2").output == "865\n"
    assert invoke("8/8/8/K2pP2r/8/8/8/4k3 w - d6 0 1", "2").output == "96\n"


def test_the_summary_counts_what_max_nodes_left_unchecked(tmp_path):
    # D3 9999999 is wrong (8902) but over the cap: the run stays green, as documented, and
    # the summary says how many counts it did not check.
    suite = tmp_path / "capped.epd"
    suite.write_text(START + " ;D1 20 ;D3 9999999\n"
                     "4k3/8/8/8/8/8/8/4K3 w - - ;D6 53896\n"
                     "4k3/8/8/8/8/8/8/4K3 w - - ;D1 5 ;D14 1\n")
    result = invoke("--suite", str(suite), "--max-nodes", "50000")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "ok   line 1: D1 20, D3 skipped",
        "skip line 2: D6 skipped",
        "ok   line 3: D1 5, D14 skipped (D6 already has 53,896 nodes)",
        "2 passed, 0 failed, 1 skipped; 3 of 5 counts not checked (over --max-nodes)",
    ]
    suite.write_text("".join(suite.read_text().splitlines(True)[:2]))  # (D14 uncapped: hours)
    result = invoke("--suite", str(suite), "--max-nodes", "0")
    assert result.exit_code == 1  # all checked: D3 is wrong
    assert result.stdout.splitlines()[-2:] == ["ok   line 2: D6 53896", "1 passed, 1 failed"]


@pytest.mark.parametrize("words, shown", [
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 3",
     '"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1" 3'),
    ("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 3",
     '"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -" 3'),
    ("--divide 8/8/8/8/8/8/8/K6k b - - 2",
     '"8/8/8/8/8/8/8/K6k b - -" 2'),
])
def test_a_fen_not_quoted_is_shown_quoted(words, shown):
    """The shell splits a FEN given unquoted: the error shows the command with it quoted (it
    said "'w' is not a valid integer range")."""
    res = CliRunner().invoke(main, ["perft", *words.split()])
    assert res.exit_code == 2
    assert res.output.splitlines()[-1].startswith(
        f"Error: the FEN must be one argument: quote it, as in chessscan perft {shown} (see ")
    quoted = shown.rsplit(" ", 1)
    res = CliRunner().invoke(main, ["perft", quoted[0].strip('"'), quoted[1]])
    assert res.exit_code == 0 and res.output.split()[-1] == {"3": "8902", "2": "9"}[quoted[1]]
