"""Clocks, move times and evaluations read from the moves' comments ([%clk], [%emt], [%eval]),
the TimeControl tag's figures, and the per-game counts, checked against real comments and
against python-chess's ``node.clock()`` / ``node.eval()`` as an independent reading."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import chessscan
from chessscan.analysis.game import time_control
from chessscan.readers.movetext import (NOTE_NA, blank_comments, fast_keys, fast_keys_notes, game_line_keys_notes,
                                        note_values, read_notes)
from chessscan.readers.pgn import read_games
from conftest import SAMPLES, shared_path

MAGNUS = SAMPLES / "lichess-magnus-300.pgn"
NOTES = ["clock_ms", "emt_ms", "eval_cp", "eval_mate"]


def notes_of(pgn: bytes) -> list[list[list]]:
    """Each game's notes per ply as [clock, emt, cp, mate] lists, None for NA."""
    out = []
    for game in read_games(io.BytesIO(pgn)):
        values = [None if v == NOTE_NA else v for v in note_values(game.notes)]
        out.append([values[k:k + 4] for k in range(0, len(values), 4)])
    return out


def one(comment: str, move: str = "e4") -> list:
    """The notes of a one-move game whose move carries ``comment``."""
    got = notes_of(f'[Event "x"]\n\n1. {move} {{{comment}}} *\n'.encode())[0]
    return got[0] if got else [None] * 4


# --- reading commands ---------------------------------------------------------------------

def test_the_first_plies_of_a_real_lichess_game():
    game = next(read_games(MAGNUS))
    assert game.tags["Site"] == "https://lichess.org/5jR9agAP"
    values = note_values(game.notes)
    plies = [values[k:k + 4] for k in range(0, len(values), 4)]
    assert len(plies) == game.plies == 99
    # 1. d4 { [%eval 0.3] [%clk 0:01:00] } 1... d5 { [%eval 0.35] [%clk 0:01:00] } 2. Nc3
    # { [%eval -0.12] [%clk 0:01:00] } 2... e5 { [%eval 0.93] [%clk 0:00:58] } ...
    assert [p[0] for p in plies[:8]] == [60000, 60000, 60000, 58000, 58000, 57000, 55000, 56000]
    assert [p[2] for p in plies[:8]] == [30, 35, -12, 93, -12, -25, -161, -133]
    assert all(p[1] == NOTE_NA and p[3] == NOTE_NA for p in plies)  # no emt, no mate score
    # ... 49... Rc3 { [%eval 10.46] [%clk 0:00:03] } 50. bxc3 { [%eval 9.65] [%clk 0:00:05] } 1-0
    assert plies[-2][0::2] == [3000, 1046] and plies[-1][0::2] == [5000, 965]


def test_mate_scores_of_a_real_lichess_game():
    # Game 5 of the sample: 52... a5 { [%eval #31] [%clk 0:00:09] } 53. h5 { [%eval #13] ...
    scan = chessscan.scan(str(MAGNUS), jobs=1, cross_check="off")
    p = scan.positions
    rows = p[(p.game_index == 3) & p.ply.between(104, 108)]
    assert rows.san.tolist() == ["Kg4", "a5", "h5", "a6", "h4"]
    assert rows.eval_cp.tolist() == [7612, pd.NA, pd.NA, pd.NA, pd.NA]
    assert rows.eval_mate.tolist() == [pd.NA, 31, 13, 14, 13]
    assert rows.clock_ms.tolist() == [9000] * 5


@pytest.mark.parametrize("comment, expected", [
    ("[%clk 0:00:05.1]", [5100, None, None, None]),
    ("[%clk 1:00:00.25]", [3600250, None, None, None]),
    ("[%clk 0:00:09.8765]", [9876, None, None, None]),     # to the millisecond
    ("[%clk 72:00:00]", [259200000, None, None, None]),     # correspondence: hours past 24
    ("  [%clk   0:03:00  ]  ", [180000, None, None, None]),
    ("[%emt 0:00:12]", [None, 12000, None, None]),
    ("[%clk 0:01:40] [%emt 0:00:03]", [100000, 3000, None, None]),
    ("[%eval +1.5]", [None, None, 150, None]),
    ("[%eval -0.05]", [None, None, -5, None]),
    ("[%eval .5]", [None, None, 50, None]),
    ("[%eval 3]", [None, None, 300, None]),
    ("[%eval 0.175]", [None, None, 18, None]),              # rounded half away from zero
    ("[%eval -0.175]", [None, None, -18, None]),
    ("[%eval 1.23,20]", [None, None, 123, None]),           # a depth after the comma
    ("[%eval #-3]", [None, None, None, -3]),
    ("[%eval #+2]", [None, None, None, 2]),
    ("[%eval 0.2] [%eval 9.9] [%clk 0:00:01] [%clk 0:00:02]", [1000, None, 20, None]),  # the first counts
    ("[%cal Ge2e4] [%csl Rh5] [%clkx 5] [%evaluation 3]", [None] * 4),  # other commands
    ("a comment [% clk 0:00:01] %clk 0:00:01", [None] * 4),
    # Lichess' own forms (read without the general scans) and their neighbours.
    ("[%clk 9:59:59]", [35999000, None, None, None]),
    ("[%clk 10:00:00]", [36000000, None, None, None]),
    ("[%eval 0.3] [%clk 0:03:00]", [180000, None, 30, None]),
    ("[%eval -12.34][%clk 0:00:00]", [0, None, -1234, None]),
    ("[%eval 1234567.89]", [None, None, 123456789, None]),
    ("[%eval 1.]", [None, None, 100, None]),
    ("[%eval #-3] [%eval -0.5]", [None, None, None, -3]),
    ("[%eval -0.5] [%eval #-3] [%clk 0:00:01] [%clk 0:00:02.5]", [1000, None, -50, None]),
])
def test_commands(comment, expected):
    assert one(comment) == expected


@pytest.mark.parametrize("command", [
    "[%clk 0:61:00]", "[%clk 0:0:1]", "[%clk 0:01:60]", "[%clk -0:00:01]", "[%clk 0:01:00.]", "[%clk]",
    "[%clk 1:00]", "[%emt 0:00:1x]", "[%eval abc]", "[%eval #]", "[%eval 1.2.3]", "[%eval 12345678]",
    "[%eval 1.5,]", "[%eval #3.5]", "[%eval ]", "[%clk 0:01:00", "[%clk 0:60:00]", "[%clk 0:00:6x]",
    "[%eval 12345678.9]", "[%eval -.]",
])
def test_a_malformed_command_is_one_warning_and_the_move_counts(command):
    text = f'[Event "x"]\n\n1. e4 {{ {command} }} 1... e5 {{[%clk 0:00:07]}} 1-0\n'
    (game,) = read_games(io.BytesIO(text.encode()))
    assert game.plies == 2
    assert [(i.code, i.severity, i.line, i.column, i.ply) for i in game.issues] == [
        ("malformed-annotation", "warning", 3, text.split("\n")[2].index("[%") + 1, 1)]
    assert "the move counts" in game.issues[0].message
    values = note_values(game.notes)
    assert values[:4] == [NOTE_NA] * 4 and values[4:] == [7000, NOTE_NA, NOTE_NA, NOTE_NA]


@pytest.mark.parametrize("command, what", [
    ("[%eval 12345678]", "an evaluation has at most 7 integer digits"),
    ("[%eval -21474836.48]", "an evaluation has at most 7 integer digits"),
    ("[%eval #99999999999]", "an evaluation has at most 7 integer digits"),
    ("[%clk 9999999999999:00:00]", "a time has at most 9 digits of hours"),
    ("[%emt 1234567890:00:00.5]", "a time has at most 9 digits of hours"),
])
def test_a_value_too_long_is_said_to_be_out_of_range(command, what):
    text = f'[Event "x"]\n\n1. e4 {{ {command} }} 1... e5 1-0\n'
    (game,) = read_games(io.BytesIO(text.encode()))
    assert [(i.code, i.message) for i in game.issues] == [
        ("malformed-annotation", f"'{command}' is out of range ({what}): the move counts, without it")]


def test_which_comments_count():
    pgn = b"""[Event "x"]

{[%clk 9:00:00] before the first move: none}
1. e4 {[%clk 0:05:00]} ( 1. d4 {[%clk 0:00:01] in a variation: not read} ) 1... e5 $2
{ [%eval -0.3] } { a second comment: [%clk 0:04:59] } ; [%clk 0:00:02] rest of line: not read
2. Nf3 2... Nc6 {[%eval #4]} 1-0 {[%clk 0:00:03] after the result: none}
"""
    assert notes_of(pgn) == [[[300000, None, None, None], [299000, None, -30, None], [None] * 4,
                              [None, None, None, 4]]]


def test_plain_and_general_movetext_read_the_same_notes():
    plain = b'[Event "x"]\n\n1. e4 {[%clk 0:01:00]} 1... e5 {[%eval 0.2] [%clk 0:01:00]} 2. Nf3 {[%clk 0:61:00]} *\n'
    general = plain.replace(b"1... e5", b"1... e5!? $1").replace(b"*\n", b"(2. d4) *\n")
    a, b = (list(read_games(io.BytesIO(t))) for t in (plain, general))
    assert a[0].notes == b[0].notes and a[0].notes is not None
    for text, game in ((plain, a[0]), (general, b[0])):
        column = text.split(b"\n")[2].index(b"[%clk 0:61") + 1
        assert [(i.code, i.line, i.column, i.ply) for i in game.issues] == [("malformed-annotation", 3, column, 3)]


def _two_passes(mt: bytes):
    """What the reader got before the one-pass reading: the moves from the movetext with its
    comments blanked, then the annotations in a second pass."""
    keys, result = fast_keys(blank_comments(mt)[0])
    if keys is None:
        return None, None, None, []
    notes, problems, plies = read_notes(mt)
    assert plies == len(keys) // 8
    return keys, result, notes, problems


def test_one_pass_reads_what_two_passes_read():
    # Every movetext of the Lichess sample (a clock and an evaluation after almost every move).
    texts = [game._mt for game in read_games(MAGNUS)]
    assert len(texts) == 300
    for mt in texts:
        both = fast_keys_notes(mt)
        if both is None:
            assert chessscan.core_mode() != "compiled"
            continue
        assert both == _two_passes(mt)
        assert len(both[2]) == 32 * (len(both[0]) // 8)  # (every ply has a clock)
    # Comments glued to the moves and after the result, a malformed command, a non-SAN token.
    for mt in (b"1.e4{[%clk 0:01:00]}e5 {x}{[%eval #-2] [%emt 0:00:03.5]}2. Nf3 {[%clk 0:61:00]} 1-0 {[%clk 0:00:01]}\n",
               b"{[%clk 0:01:00] before} 1. e4 {[%eval 9.995]} *",
               b"1. e4 {[%clk 0:01:00]} 1... e5 2. Nf3 !? *\n"):
        both = fast_keys_notes(mt)
        if both is not None:
            assert both == _two_passes(mt)
    if chessscan.core_mode() == "compiled":  # (uncompiled, the reader always takes two passes)
        assert fast_keys_notes(b"1. e4 {[%clk 0:01:00]} e5!? *") == (None, None, None, [])
    # Where one pass does not apply (a ';' comment, an escape line, a '{' left open), None:
    # the reader takes the two passes.
    for mt in (b"1. e4 {[%clk 0:01:00]} ; [%clk 0:00:02]\n1... e5 *\n", b"1. e4 {[%clk 0:01:00]}\n% escape\n1... e5 *\n",
               b"1. e4 {[%clk 0:01:00] *\n", b"1. e4 {[%clk 0:01:00]} * ; after\n"):
        assert fast_keys_notes(mt) is None


_MOVETEXT_PIECES = ["1.", "1...", "12.", "e4", "Nf3", "O-O", "exd5", "e8=Q+", "Qh9", " ", " ", "\t", "\n", "\r\n",
                    "\x0b", "\x00", "\x1c", "{", "}", "{[%clk 0:01:00]}", "{ [%eval 0.3] [%clk 0:00:59] }",
                    "{[%eval #-2]}", "{[%clk 9:99]}", ";", ";x\n", "%", "\n%x\n", "1-0", "*", "1/2-1/2", "x", "!?",
                    "$1", "(", ")"]


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(_MOVETEXT_PIECES), max_size=14).map(lambda t: "".join(t).encode()))
@example(b"1. e4\te5\x0b{[%clk 0:01:00]}Nf3\x1c *")
@example(b"1. e4;x\n e5 *")
@example(b"1.e4{[%clk 0:01:00]}e5{[%clk 0:00:59]}1-0")
def test_one_pass_reads_what_two_passes_read_any_movetext(mt: bytes) -> None:
    both = fast_keys_notes(mt)
    if both is None:
        return  # (uncompiled always; compiled: a ';', an escape line or a '{' left open)
    assert both == _two_passes(mt)


# Lichess's annotation comments, which the one pass reads at fixed offsets, and near misses of
# them (each read by the general command reader instead).
_LICHESS_VALUES = ["0.3", "-0.35", "12.34", "-1234567.89", "12345678.1", "#3", "#-12", "#1234567", "#12345678",
                   "0.123", "+0.3", ".5", "-", "1.", "1.2,20", "#-", "0.3 ", " 0.3"]
_LICHESS_CLOCKS = ["0:03:00", "9:59:59", "0:60:00", "0:00:60", "10:00:00", "0:0:00", "0:00:00.5", "0:00", "0:5a:00"]


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["1. e4 ", "1... e5 ", "2. Nf3 ", "Nc6 "]),
                          st.one_of(st.sampled_from(_LICHESS_VALUES).map(lambda v: "{ [%eval " + v + "] [%clk "),
                                    st.just("{ [%clk ")),
                          st.sampled_from(_LICHESS_CLOCKS), st.sampled_from(["] }", "]}", "] } ", "]  }", "] }{ x }"]),
                          st.sampled_from([" ", "", "\n"])), max_size=6),
       st.sampled_from(["1-0", "*", "1/2-1/2\n", " 0-1 "]))
def test_one_pass_reads_lichess_comments_as_two_passes(plies, result) -> None:
    mt = ("".join(a + b + c + d + e for a, b, c, d, e in plies) + result).encode()
    both = fast_keys_notes(mt)
    if both is not None:
        assert both == _two_passes(mt)
    line = game_line_keys_notes(mt)
    if line is not None:
        assert line[:4] == _two_passes(mt)


def test_a_non_ascii_line_is_no_one_pass_game():
    assert game_line_keys_notes("1. e4 { [%clk 0:03:00] café } 1-0\n".encode()) is None
    assert game_line_keys_notes("1. e4é { [%clk 0:03:00] } 1-0\n".encode()) is None
    assert game_line_keys_notes("1. e4 { [%clk 0:03:00] } 1-0 é\n".encode()) is None
    if chessscan.core_mode() == "compiled":
        assert game_line_keys_notes(b"1. e4 { [%clk 0:03:00] } 1-0\n")[:2] == (b"e4" + bytes(6), "1-0")


def test_the_issues_and_positions_tables(tmp_path):
    pgn = tmp_path / "bad.pgn"
    pgn.write_bytes(b'[Event "x"]\n[TimeControl "180+2"]\n\n1. e4 {[%clk 0:03:02]} 1... e5 {[%clk 0:61:00]}\n'
                    b'2. Nf3 {[%eval abc] [%clk 0:03:01]} 2... Nc6 {[%eval #-3]} 1-0\n')
    scan = chessscan.scan(str(pgn), jobs=1, cross_check="off")
    issues = scan.issues
    assert issues[["code", "severity", "line", "column", "ply"]].astype(object).values.tolist() == [
        ["malformed-annotation", "warning", 4, 33, 2], ["malformed-annotation", "warning", 5, 9, 3]]
    p = scan.positions
    assert p.san.tolist() == ["e4", "e5", "Nf3", "Nc6"]
    assert p.clock_ms.tolist() == [182000, pd.NA, 181000, pd.NA]
    assert p.eval_mate.tolist() == [pd.NA, pd.NA, pd.NA, -3]
    g = scan.games.iloc[0]
    assert (g.plies, g.clock_plies, g.eval_plies) == (4, 2, 1) and pd.isna(g.error_code)
    assert (g.time_control_base_s, g.time_control_increment_s) == (180.0, 2.0)


# --- TimeControl -----------------------------------------------------------------------------

@pytest.mark.parametrize("tag, expected", [
    ("300+3", (300.0, 3.0)),
    ("60+0", (60.0, 0.0)),
    ("-", (None, None)),
    ("?", (None, None)),
    (None, (None, None)),
    ("", (None, None)),
    ("40/7200:3600", (7200.0, 0.0)),             # the PGN standard's example: the first period
    ("40/7200:20/3600:900+30", (7200.0, 0.0)),   # TCEC
    ("40/5400+30:1800+30", (5400.0, 30.0)),
    ("40/900", (900.0, 0.0)),                    # TCEC
    ("36000", (36000.0, 0.0)),                   # TCEC: sudden death
    ("1800+5.232", (1800.0, 5.232)),             # TCEC
    ("36000+0.001", (36000.0, 0.001)),           # TCEC
    ("*180", (180.0, None)),                     # sandclock
    (" 180+2 ", (180.0, 2.0)),
    ("300+", (None, None)), ("+3", (None, None)), ("abc", (None, None)), ("40/", (None, None)),
    ("x/300", (None, None)), ("5 min", (None, None)), ("-5+3", (None, None)),
])
def test_time_control(tag, expected):
    assert time_control(tag) == expected


def test_time_control_columns_of_the_sample():
    games = chessscan.scan(str(MAGNUS), jobs=1, cross_check="off").games
    split = games.time_control.astype(str).str.split("+", expand=True).astype(float)
    assert games.time_control.value_counts().to_dict() == {"60+0": 273, "180+0": 23, "180+2": 4}
    assert games.time_control_base_s.tolist() == split[0].tolist()
    assert games.time_control_increment_s.tolist() == split[1].tolist()


# --- against python-chess ------------------------------------------------------------------

def python_chess_notes(path) -> tuple[list[tuple], list[tuple]]:
    """Per mainline node (ply, clock ms, cp, mate) and per game (clock plies, eval plies), by
    python-chess's own comment parsing."""
    chess_pgn = pytest.importorskip("chess.pgn")
    plies, games = [], []
    with open(path, encoding="utf-8") as f:
        while (game := chess_pgn.read_game(f)) is not None:
            n_clock = n_eval = 0
            for ply, node in enumerate(game.mainline(), 1):
                clock, score = node.clock(), node.eval()
                white = score.white() if score is not None else None
                plies.append((ply, None if clock is None else round(clock * 1000),
                              None if white is None else white.score(), None if white is None else white.mate()))
                n_clock += clock is not None
                n_eval += score is not None
            games.append((n_clock, n_eval))
    return plies, games


def ours(scan) -> tuple[list[tuple], list[tuple]]:
    p = scan.positions.astype(object).where(scan.positions.notna(), None)
    plies = list(zip(p.ply, p.clock_ms, p.eval_cp, p.eval_mate))
    return plies, list(zip(scan.games.clock_plies, scan.games.eval_plies))


@pytest.mark.parametrize("path", [MAGNUS, "lichess-magnus-first1000.pgn"])
def test_every_clock_and_eval_as_python_chess_reads_them(path):
    if isinstance(path, str):
        path = shared_path("games", "samples", path)
    scan = chessscan.scan(str(path), jobs=1, cross_check="off")
    assert scan.games.error_code.isna().all()  # every ply played: one row per mainline node
    theirs = python_chess_notes(path)
    assert ours(scan) == theirs
    assert sum(n for n, _ in theirs[1]) == len(theirs[0])  # a clock on every ply
    assert sum(n for _, n in theirs[1]) > 0.9 * len(theirs[0])


def test_jobs_2_gives_the_same_notes(tmp_path):
    one = chessscan.scan(str(MAGNUS), jobs=1, cross_check="off")
    two = chessscan.scan(str(MAGNUS), jobs=2, cross_check="off")
    assert one.positions.clock_ms.notna().sum() == 25805
    pd.testing.assert_frame_equal(one.positions[NOTES], two.positions[NOTES])
    columns = ["time_control_base_s", "time_control_increment_s", "clock_plies", "eval_plies"]
    pd.testing.assert_frame_equal(one.games[columns], two.games[columns])


def test_a_movetext_column_reads_the_same_notes():
    pgn = chessscan.scan(str(MAGNUS), jobs=1, cross_check="off")
    table = chessscan.scan(str(SAMPLES / "lichess-magnus-300.parquet"), jobs=1, cross_check="off")
    pd.testing.assert_frame_equal(pgn.positions[NOTES], table.positions[NOTES])
    assert pgn.games.eval_plies.tolist() == table.games.eval_plies.tolist()
