"""Tests for chessscan.readers.pgn: game splitting, tokenizing and issues."""

from __future__ import annotations

import bz2
import gzip
import io
import re
import sys
from collections import Counter
from pathlib import Path

import pytest
import zstandard
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chessscan.readers.pgn import (ISSUE_CODES, RawGame, ReadEnd, ReaderIssue, last_sure_game_start, read_games,
                                   sure_game_start)
from conftest import shared_skip_reason

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
SAMPLES = SHARED / "games" / "samples"
MESSY = SHARED / "messy"
KOKOPU = MESSY / "kokopu-edgecases"

needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=shared_skip_reason(SHARED))


def games(text: str | bytes, source: str = "t") -> list[RawGame]:
    data = text.encode("utf-8") if isinstance(text, str) else text
    return list(read_games(io.BytesIO(data), source=source))


def one(text: str | bytes) -> RawGame:
    gs = games(text)
    assert len(gs) == 1, gs
    return gs[0]


def codes(g: RawGame) -> list[str]:
    return [i.code for i in g.issues]


def issue(g: RawGame, code: str) -> ReaderIssue:
    found = [i for i in g.issues if i.code == code]
    assert found, (code, g.issues)
    return found[0]


def count_event_tags(path: Path) -> int:
    """How SOURCES.md counts games: lines starting with '[Event ' (after a BOM)."""
    with open(path, "rb") as f:
        return sum(1 for line in f if line.removeprefix(b"\xef\xbb\xbf").startswith(b"[Event "))


def strip_check(sans):
    return [s.rstrip("+#") for s in sans]


# --------------------------------------------------------------------------
# Basic tokenizing


def test_simple_game_fields():
    g = one('[Event "E"]\n[White "W"]\n[Result "1-0"]\n\n1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n')
    assert g.source == "t"
    assert g.index == 0 and g.line == 1 and g.byte_offset == 0
    assert g.tags == {"Event": "E", "White": "W", "Result": "1-0"}
    assert list(g.tags) == ["Event", "White", "Result"]
    assert g.sans == ["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"]
    assert g.result == "1-0"
    assert g.movetext_line == 5
    assert (g.variations, g.comments, g.nags) == (0, 0, 0)
    assert g.issues == []
    assert g.first_comment is None


def test_plain_movetext_is_read_into_keys():
    # The moves of plain movetext come as SAN keys only; locating a move does not make the
    # text of every move (a long game's), and the text, once asked for, is one str per
    # distinct move.
    from chessscan.readers.movetext import key_list, key_text

    g = one('[Result "*"]\n\n1. Nf3 { a } Nf6 2. Ng1 Ng8 3. Nf3 Nf6 *\n')
    assert [key_text(k) for k in key_list(g.keys)] == ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6"]
    assert g.plies == 6 and g.locate(4) == (3, 32)
    assert g._sans is None
    assert g.sans == ["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6"]
    assert g.sans[0] is g.sans[4] and g.plies == 6
    # The general tokenizer's moves (a glyph here) come as a list, their keys made on demand.
    h = one('[Result "*"]\n\n1. Nf3!? Nf6 *\n')
    assert h.sans == ["Nf3", "Nf6"] and [key_text(k) for k in key_list(h.keys)] == ["Nf3", "Nf6"]


def test_move_numbers_glyphs_checks_kept():
    g = one('[Event "x"]\n\n1.e4! e5? 2.Nf3!? Nc6?! 3.Bb5!! a6?? 4.Bxc6+ dxc6 1/2-1/2\n')
    assert g.sans == ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Bxc6+", "dxc6"]
    assert g.nags == 6
    assert g.result == "1/2-1/2"


def test_black_move_numbers_and_ellipsis():
    g = one('[Event "x"]\n[FEN "8/8/8/8/8/8/8/8 b - - 0 1"]\n\n1... e5 2. Nf3 2...Nc6 3.Bb5 3\u2026a6 4 Ba4 *\n')
    assert g.sans == ["e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4"]
    assert g.result == "*"
    assert g.issues == []


def test_castling_promotion_ep_and_null_moves():
    g = one(
        '[Event "x"]\n\n1. e4 -- 2. 0-0 O-O-O 3. e8Q exd6 e.p. 4. exd6e.p. e8=Q+ '
        "5. Z0 0000 6. @@@@ bxa1=N# 7. O-O+ 0-0-0 *\n"
    )
    assert g.sans == [
        "e4", "--", "0-0", "O-O-O", "e8Q", "exd6", "exd6", "e8=Q+",
        "Z0", "0000", "@@@@", "bxa1=N#", "O-O+", "0-0-0",
    ]
    assert g.issues == []


def test_uci_and_long_algebraic_and_drops_are_kept():
    g = one('[Event "x"]\n\ne2e4 e7e5 g1f3 b8c6 Ng1-f3 P@e4 e7e8q *\n')
    assert g.sans == ["e2e4", "e7e5", "g1f3", "b8c6", "Ng1-f3", "P@e4", "e7e8q"]
    assert g.issues == []


def test_nags_rav_comments_counted_and_skipped():
    text = (
        '[Event "x"]\n\n'
        "{start} 1. e4 $1 {c1} e5 $14 (1... c5 {in rav} (1... e6 2. d4) 2. Nf3) "
        "2. Nf3 ; rest of line ( { [ 1-0\n"
        "Nc6 (2... d6 (2... f6)) +/= 3. Bb5 \u00b1 *\n"
    )
    g = one(text)
    assert g.sans == ["e4", "e5", "Nf3", "Nc6", "Bb5"]
    assert g.variations == 4
    assert g.comments == 4
    assert g.nags == 4  # $1, $14, +/=, ±
    assert g.first_comment == "start"
    assert g.result == "*"
    assert g.issues == []


def test_comment_containing_tags_and_results():
    text = (
        '[Event "a"]\n\n1. e4 {a comment [Event "x"] 1-0 (not a rav ; nor ) 0-1 *\n'
        '[Event "b"] e5 1/2-1/2\n} 2. Nf3 {\n\n\n} 1-0\n\n'
        '[Event "c"]\n\n1. d4 0-1\n'
    )
    gs = games(text)
    assert len(gs) == 2
    assert gs[0].sans == ["e4", "Nf3"]
    assert gs[0].result == "1-0"
    assert gs[0].comments == 2
    # Read as one comment; its [Event] line, with no blank line before it, is reported.
    assert [(i.code, i.severity, i.line, i.column) for i in gs[0].issues] == [("game-in-comment", "warning", 4, 1)]
    assert gs[1].tags == {"Event": "c"} and gs[1].sans == ["d4"] and gs[1].result == "0-1"


def test_escape_lines_ignored():
    text = '% header escape\n[Event "x"]\n%[Event "not a tag"]\n\n1. e4\n% 1-0 not a result\ne5 *\n'
    g = one(text)
    assert g.line == 2 and g.byte_offset == len("% header escape\n")
    assert g.tags == {"Event": "x"}
    assert g.sans == ["e4", "e5"]
    assert g.result == "*"
    assert g.issues == []


def test_tag_escapes_and_several_tags_per_line():
    g = one('[Event "He said \\"hi\\""] [Site "C:\\\\dir"]\n[Black "[] brackets"][Round "1"]\n\n*\n')
    assert g.tags == {"Event": 'He said "hi"', "Site": "C:\\dir", "Black": "[] brackets", "Round": "1"}
    assert g.issues == []


def test_inline_tags_and_movetext_on_one_line():
    gs = games('[Event "a"][Result "*"] 1. e4 *\n\n[Event "b"] *\n')
    assert [g.tags["Event"] for g in gs] == ["a", "b"]
    assert gs[0].sans == ["e4"]
    assert gs[0].locate(0) == (1, 28)
    assert gs[1].byte_offset == len('[Event "a"][Result "*"] 1. e4 *\n\n')


def test_result_glued_to_move():
    g = one('[Event "x"]\n\n1... h6*\n')
    assert g.sans == ["h6"] and g.result == "*" and g.issues == []


def test_two_blank_lines_between_tags_and_movetext_is_one_game():
    # pgnmentor: 216 games look like this; python-chess would split them.
    block = '[Event "Ch"]\r\n[Result "1-0"]\r\n\r\n\r\n1.e4 e5 2.Nf3 1-0\r\n\r\n'
    gs = games(block * 3)
    assert len(gs) == 3
    assert all(g.sans == ["e4", "e5", "Nf3"] and g.issues == [] for g in gs)
    assert [g.line for g in gs] == [1, 7, 13]
    assert [g.movetext_line for g in gs] == [5, 11, 17]


def test_blank_line_inside_tag_section():
    g = one('[Event "x"]\n\n[Site "y"]\n\n1. e4 *\n')
    assert g.tags == {"Event": "x", "Site": "y"}
    assert g.sans == ["e4"]


def test_tags_only_games_are_not_merged():
    gs = games('[Event "a"]\n[Result "*"]\n\n[Event "b"]\n[Result "*"]\n\n1. e4 *\n')
    assert [g.tags["Event"] for g in gs] == ["a", "b"]
    assert codes(gs[0]) == ["missing-result"]
    assert gs[1].sans == ["e4"]


def test_games_without_result_split_on_tags():
    gs = games('[Event "a"]\n\n1. e4 e5\n[Event "b"]\n\n1. d4 *\n')
    assert len(gs) == 2
    assert gs[0].sans == ["e4", "e5"] and gs[0].result is None
    mr = issue(gs[0], "missing-result")
    assert (mr.severity, mr.line) == ("warning", 3)
    assert gs[1].sans == ["d4"] and gs[1].issues == []


def test_movetext_after_result_on_same_line_starts_next_game():
    gs = games('[Event "a"]\n\n1. e4 1-0 1. d4 0-1\n')
    assert len(gs) == 2
    assert gs[0].sans == ["e4"] and gs[0].result == "1-0"
    assert gs[1].sans == ["d4"] and gs[1].result == "0-1"
    assert gs[1].line == 3 and gs[1].byte_offset == len('[Event "a"]\n\n1. e4 1-0 ')
    assert codes(gs[1]) == ["missing-tags"]
    assert gs[1].locate(0) == (3, 14)


@pytest.mark.parametrize("text", [
    '[Event "a"]\n\n1. e4 * 1. d4 d5 *\n',
    '[Event "a"]\n\n1. e4 1-0 1. d4 d5 1-0\n',
    '[Event "a"]\n\n1. e4 1-0 {c} 1. d4 d5 1-0 {d}\n',
])
def test_movetext_after_result_on_same_line_ending_with_the_same_marker(text):
    # The line's last marker is not the game's: what lies between them is the next game.
    gs = games(text)
    assert [g.sans for g in gs] == [["e4"], ["d4", "d5"]]
    assert codes(gs[1]) == ["missing-tags"]
    assert gs[1].line == 3 and gs[1].locate(0)[0] == 3


def test_control_characters_after_result_ignored():
    gs = games('[Event "a"]\r\n\r\n1.e4 1-0\x00\x00\r\n\r\n\x1a\r\n[Event "b"]\r\n\r\n1.d4 *\r\n')
    assert len(gs) == 2
    assert gs[0].issues == [] and gs[1].issues == []


def test_preamble_comment_belongs_to_next_game():
    g = one('{ file comment\nover lines }\n\n[ECO "A00"]\n\n1. b4 *\n')
    assert g.first_comment == "file comment\nover lines"
    assert g.tags == {"ECO": "A00"}
    assert g.sans == ["b4"]
    assert g.line == 1 and g.movetext_line == 6
    assert g.comments == 1
    assert g.issues == []


def test_movetext_without_tags():
    gs = games("1. e4 e5 1-0\n\n1. d4 d5 0-1\n")
    assert [g.sans for g in gs] == [["e4", "e5"], ["d4", "d5"]]
    assert [codes(g) for g in gs] == [["missing-tags"], ["missing-tags"]]
    assert issue(gs[1], "missing-tags").line == 3


# --------------------------------------------------------------------------
# Issues, one per code


def test_issue_unclosed_comment_at_eof():
    g = one('[Event "x"]\n\n1. e4 {never closed\n2. d4 1-0\n')
    assert g.sans == ["e4"]
    ic = issue(g, "unclosed-comment")
    assert (ic.severity, ic.line, ic.column) == ("error", 3, 7)
    assert "missing-result" in codes(g)


def test_issue_unclosed_comment_does_not_swallow_next_game():
    text = '[Event "a"]\n\n1. e4 {oops\n\n*\n\n[Event "b"]\n\n1. d4 1-0\n'
    gs = games(text)
    assert len(gs) == 2
    assert codes(gs[0]) == ["unclosed-comment", "missing-result"]
    assert issue(gs[0], "unclosed-comment")[2:4] == (3, 7)
    assert gs[1].tags == {"Event": "b"} and gs[1].sans == ["d4"] and gs[1].issues == []


def test_unclosed_comment_names_an_event_line_it_runs_over():
    """An unclosed comment runs on to the next tag section after a blank line (§8.2.5: a
    comment ends at '}'); when it runs over an [Event] line, the error says where, since a
    game may be inside. A closed comment holding such a line with no blank line before it is
    read as one comment (no look-ahead decides it), with a warning: a game may be inside."""
    text = ('[Event "a"]\n\n1. e4 {oops e5 *\n[Event "b"]\n[White "B"]\n\n1. d4 *\n\n'
            '[Event "c"]\n\n1. c4 {see also\n[Event "Linares 1994"]\nfor this line} c5 *\n')
    gs = games(text)
    assert [g.tags.get("Event") for g in gs] == ["a", "c"]
    assert codes(gs[0]) == ["unclosed-comment", "missing-result"]
    assert issue(gs[0], "unclosed-comment").message == (
        "'{' comment is never closed; it runs over an [Event] tag line 1 line down: a game may be inside it")
    assert gs[1].sans == ["c4", "c5"] and gs[1].comments == 1
    assert [(i.code, i.severity, i.line, i.column, i.ply) for i in gs[1].issues] == [
        ("game-in-comment", "warning", 12, 1, None)]
    assert gs[1].issues[0].message == ("a '{' comment 1 line up runs over this [Event] tag line, with no blank "
                                       "line before it, to its '}' 1 line down: a game may be inside it")


# A comment that quotes a game: a blank line and a tag section inside one brace comment.
QUOTING = ('[Event "a"]\n[Result "1-0"]\n\n1. e4 {the same idea as in\n\n[Event "Linares 1994"]\n'
           '[Site "Linares"]\n\n1. e4 c5 1-0\n\nwhere White won} e5 2. Nf3 1-0\n\n'
           '[Event "b"]\n\n1. d4 *\n')


def test_comment_holding_a_blank_line_and_a_tag_section_is_one_comment():
    """PGN §5: a brace comment runs to the next '}' whatever it holds, blank lines and tag
    lines included: one game, no issue (this used to split into two games with errors)."""
    a, b = games(QUOTING)
    assert a.tags == {"Event": "a", "Result": "1-0"} and a.sans == ["e4", "e5", "Nf3"]
    assert a.result == "1-0" and a.issues == [] and a.comments == 1
    assert b.tags == {"Event": "b"} and b.sans == ["d4"] and b.issues == [] and b.line == 13
    assert a.locate(2) == (11, 24)
    # The same through the general tokenizer (a RAV), with CRLF and CR-only line ends.
    for eol in ("\r\n", "\r"):
        text = QUOTING.replace("e5 2. Nf3", "e5 (1... c5) 2. Nf3").replace("\n", eol)
        a, b = games(text)
        assert a.sans == ["e4", "e5", "Nf3"] and a.issues == [] and a.variations == 1
        assert b.line == 13 and b.byte_offset == text.index('[Event "b"]')


@pytest.mark.parametrize("after, why", [
    ('[Site "x"]\n\n1. d4 {a comment} d5 1-0\n', "a '{' before the '}'"),
    ('[Site "x"]\n\n1. d4 d5 1-0\n\n[Event "c"]\n\n1. c4 c5 }\n', "a second tag section first"),
    # The '}' on the second tag section's own line: still that game's start first (this
    # swallowed game b into a's comment).
    ('[Site "x"]\n\n1. d4 d5 1-0\n\n[Event "c } d"]\n\n1. c4 c5 *\n', "a second tag section first"),
    ('[Site "x"]\n\n1. d4 d5 1-0\n', "the end of the input"),
    ('\n' + "%\n" * 70_000 + "} 1. d4 *\n", "more than the look-ahead before the '}'"),
])
def test_unclosed_comment_ends_its_game_at_the_tag_section_it_runs_into(after, why):
    """An open comment meets a blank line and a tag line: the game ends there with an
    unclosed-comment error, unless the comment's '}' comes first (with no '{', no second tag
    section, within the look-ahead); the tag section then starts a game, read in full."""
    text = '[Event "a"]\n\n1. e4 {never closed\n\n[Event "b"]\n' + after
    gs = games(text)
    assert codes(gs[0]) == ["unclosed-comment", "missing-result"], why
    assert gs[0].sans == ["e4"] and issue(gs[0], "unclosed-comment")[2:4] == (3, 7)
    assert gs[1].tags.get("Event") == "b" and gs[1].line == 5, why
    assert gs[1].byte_offset == text.index('[Event "b"]')
    if "second" in why:
        assert [g.tags.get("Event")[:1] for g in gs] == ["a", "b", "c"] and gs[1].sans == ["d4", "d5"]
    elif "look-ahead" not in why:
        assert len(gs) == 2 and gs[1].sans == ["d4", "d5"] and gs[1].issues == []


def test_comments_in_the_tag_section_keep_one_game():
    """PGN §5: comment text may appear in PGN data, the tag section included: a ';' comment
    after a tag or on a line of its own, a brace comment after a tag pair or over several
    lines. One game, its tags all read, no issue (these used to give a phantom game)."""
    cases = [
        '[Event "A"] ; note\n[Site "S"]\n[Round "1"]\n\n1. e4 *\n',
        '[Event "A"] {note}\n[Site "S"]\n[Round "1"]\n\n1. e4 *\n',
        '[Event "A"]\n; a line of its own\n[Site "S"]\n[Round "1"]\n\n1. e4 *\n',
        '[Event "A"]\n{ a comment\nover two lines }\n[Site "S"]\n[Round "1"]\n\n1. e4 *\n',
        '[Event "A"] {x} [Site "S"] ; y\n{z} [Round "1"]\n\n1. e4 *\n',
        '[Event "A;{"] ;\n[Site "S"] { [Round "0"] }\n[Round "1"]\n\n1. e4 *\n',
    ]
    for text in cases:
        g = one(text)
        assert g.tags == {"Event": g.tags["Event"], "Site": "S", "Round": "1"}, text
        assert g.sans == ["e4"] and g.result == "*" and g.issues == [], text
        assert g.movetext_line == text.count("\n", 0, text.index("1. e4")) + 1
        assert g.locate(0) == (g.movetext_line, 4)
    assert one(cases[-1]).tags["Event"] == "A;{"
    # A comment right before the movetext is still the movetext's first comment.
    g = one('[Event "A"]\n[Site "S"]\n{intro}\n1. e4 *\n')
    assert g.first_comment == "intro" and g.tags == {"Event": "A", "Site": "S"}
    # An Event tag (or a tag repeated) after the comments still starts the next game.
    gs = games('[Event "A"] {x}\n[Event "B"]\n\n1. e4 *\n')
    assert [g.tags for g in gs] == [{"Event": "A"}, {"Event": "B"}]
    # CRLF, a comment over two lines, an escape line whose '{' opens nothing.
    g = one('[Event "A"] {a\r\nb} ; c\r\n%{ esc\r\n; d\r\n[Site "S"]\r\n\r\n1. e4 *\r\n')
    assert g.tags == {"Event": "A", "Site": "S"} and g.issues == [] and g.locate(0) == (7, 4)
    # A tag value broken over two lines whose second half starts with '{' opens no comment
    # that would hide the tags after it.
    g = one('[Event "A long\n{value"]\n[Site "x"]\n\n1. e4 *\n')
    assert g.tags == {"Site": "x"} and [(i.code, i.line) for i in g.issues] == [("bad-tag", 1), ("bad-tag", 2)]


def test_reader_errors_in_the_movetext_carry_their_ply():
    """The ply at which an error stands: the main-line moves read before it, plus one."""
    cases = {
        "1. e4 e5 2. Sf3 Nc6 *": ("unexpected-token", 3),
        "1. e4 e5 2. Nf3 1/2 *": ("unexpected-token", 4),
        "1. e4 \u00bd-\u00bd": ("unexpected-token", 2),
        "1. e4 (1. d4 Sf3) e5 $ 2. Nf3 *": ("unexpected-token", 3),
        "1. e4 e5 } *": ("unexpected-token", 3),
        "1. e4 ) e5 *": ("unbalanced-variation", 2),
        "1. e4 e5 2. Nf3 (2. Nc3 (2. f4) *": ("unbalanced-variation", 4),
        "1. e4 (1. d4) e5 {open *": ("unclosed-comment", 3),
    }
    for movetext, (code, ply) in cases.items():
        g = one('[Event "x"]\n\n' + movetext + "\n")
        assert [(i.code, i.ply) for i in g.issues if i.severity == "error"] == [(code, ply)], movetext
    assert all(i.ply is None for i in one('[Event "x]\n\n1. e4 *\n').issues)  # the tag section


def test_issue_unbalanced_variation():
    g = one('[Event "x"]\n\n1. e4 e5 ) 2. Nf3 *\n')
    assert g.sans == ["e4", "e5", "Nf3"]
    uv = issue(g, "unbalanced-variation")
    assert (uv.severity, uv.line, uv.column) == ("error", 3, 10)
    gs = games('[Event "x"]\n\n1. e4 e5 (1... c5 *\n\n[Event "y"]\n\n*\n')
    assert len(gs) == 2
    assert codes(gs[0]) == ["unbalanced-variation", "missing-result"]
    assert issue(gs[0], "unbalanced-variation")[2:4] == (3, 10)


def test_issue_bad_tag():
    gs = games('[Event "x]\n[Site x]\n[Round "1"]\n\n1. e4 *\n')
    g = gs[0]
    assert len(gs) == 1
    bad = [i for i in g.issues if i.code == "bad-tag"]
    assert [(i.line, i.column, i.severity) for i in bad] == [(1, 1, "error"), (2, 1, "error")]
    assert g.tags == {"Round": "1"}
    assert g.sans == ["e4"]
    # Unescaped quote: value recovered, still reported.
    g = one('[Site "Somewhere " else"]\n\n*\n')
    assert g.tags == {"Site": 'Somewhere " else'}
    assert codes(g) == ["bad-tag"]


def test_issue_unexpected_token_stops_moves():
    g = one('[Event "x"]\n\n1. e4 e5 2. pawn Nf3 3. Bc4 1-0\n')
    assert g.sans == ["e4", "e5"]
    ut = issue(g, "unexpected-token")
    assert (ut.severity, ut.line, ut.column) == ("error", 3, 13)
    assert g.result == "1-0"  # the game is still consumed to its end


def test_issue_duplicate_tag():
    g = one('[Event "a"]\n[White "w1"]\n[White "w2"]\n\n*\n')
    assert g.tags == {"Event": "a", "White": "w1"}
    d = issue(g, "duplicate-tag")
    assert (d.severity, d.line, d.column) == ("warning", 3, 1)


def test_issue_missing_tags_and_missing_result():
    g = one("1. e4 e5")
    assert codes(g) == ["missing-tags", "missing-result"]
    assert [i.severity for i in g.issues] == ["warning", "warning"]
    assert g.sans == ["e4", "e5"] and g.result is None


def test_issue_decode_fallback_cp1252_and_latin1():
    g = one('[Event "Dortmund"]\n[White "J\xf6rg"]\n\n1. e4 {caf\x80} *\n'.encode("latin-1"))
    assert g.tags["White"] == "J\xf6rg"
    assert codes(g) == ["decode-fallback"]
    assert "cp1252" in g.issues[0].message
    g = one(b'[Event "\x81\xf6"]\n\n*\n')  # 0x81 is undefined in cp1252
    assert g.tags["Event"] == "\x81\xf6"
    assert "latin-1" in g.issues[0].message
    g = one('[White "J\u00f6rg \u2026"]\n\n*\n')
    assert g.tags["White"] == "J\u00f6rg \u2026" and g.issues == []


def test_issue_truncated_input_zst_and_gz(tmp_path):
    block = '[Event "g{}"]\n[Result "1-0"]\n\n1. e4 e5 2. Nf3 Nc6 {comment} 3. Bb5 a6 1-0\n\n'
    data = "".join(block.replace("{}", str(i), 1) for i in range(3000)).encode()
    for suffix, blob in (
        (".zst", zstandard.ZstdCompressor(level=3).compress(data)),
        (".gz", gzip.compress(data)),
    ):
        p = tmp_path / ("cut.pgn" + suffix)
        p.write_bytes(blob[: len(blob) // 2])
        gs = list(read_games(p))
        assert 0 < len(gs) < 3000
        complete = gs[:-1]
        assert all(g.issues == [] and g.sans == ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6"] for g in complete)
        assert [g.tags["Event"] for g in complete] == [f"g{i}" for i in range(len(complete))]
        last = gs[-1]
        t = issue(last, "truncated-input")
        assert t.severity == "error" and "truncated" in t.message
        assert last.source == str(p)


def test_truncated_between_games_yields_issue_only_game(tmp_path):
    data = b'[Event "a"]\n\n1. e4 1-0\n\n'
    blob = gzip.compress(data)
    p = tmp_path / "x.gz"
    p.write_bytes(blob[:-4])  # only the trailer (size) is missing
    gs = list(read_games(p))
    assert len(gs) == 2
    assert gs[0].issues == [] and gs[0].sans == ["e4"]
    assert codes(gs[1]) == ["truncated-input"] and gs[1].tags == {} and gs[1].sans == []


def test_every_issue_code_has_a_severity():
    assert set(ISSUE_CODES.values()) == {"error", "warning"}
    assert len(ISSUE_CODES) == 14


# --------------------------------------------------------------------------
# Line ends, BOM, sources


@pytest.mark.parametrize("nl", ["\n", "\r\n", "\r"])
def test_line_endings_and_locate(nl):
    text = nl.join(['[Event "a"]', "", "1. e4 e5", "2. Nf3 {c}", "Nc6 1-0", "", '[Event "b"]', "", "1. d4 *", ""])
    gs = games(text)
    assert [g.sans for g in gs] == [["e4", "e5", "Nf3", "Nc6"], ["d4"]]
    assert [g.line for g in gs] == [1, 7]
    assert gs[1].byte_offset == text.index('[Event "b"]')
    assert [gs[0].locate(i) for i in range(4)] == [(3, 4), (3, 7), (4, 4), (5, 1)]
    assert gs[0].locate(-1) == (5, 1)
    assert gs[1].locate(0) == (9, 4)
    with pytest.raises(IndexError):
        gs[1].locate(1)


def test_bom_stripped():
    g = one(b'\xef\xbb\xbf[Event "x"]\r\n\r\n1. e4 *\r\n')
    assert g.tags == {"Event": "x"} and g.byte_offset == 3 and g.line == 1


def test_empty_and_blank_input():
    assert games(b"") == []
    assert games(b"\n\n  \r\n") == []


def test_long_line_and_huge_game():
    moves = " ".join(f"{i}. Nf3 Nf6 {i}... Ng1 {{[%clk 0:00:01]}} Ng8" for i in range(1, 60001))
    data = ('[Event "x"]\n\n' + moves + " 1/2-1/2\n").encode()
    assert len(data) > 2_000_000
    g = one(data)
    assert len(g.sans) == 240000 and g.result == "1/2-1/2"
    assert g.comments == 60000
    assert g.locate(239999) == (3, len(moves) - 2)


def test_read_from_path_stream_and_text_stream(tmp_path):
    p = tmp_path / "a.pgn"
    p.write_bytes(b'[Event "x"]\n\n1. e4 *\n')
    assert [g.source for g in read_games(p)] == [str(p)]
    assert [g.source for g in read_games(str(p), source="named")] == ["named"]
    with open(p, "rb") as f:
        assert [g.sans for g in read_games(f)] == [["e4"]]
    assert [g.sans for g in read_games(io.StringIO('[Event "x"]\n\n1. e4 *\n'))] == [["e4"]]


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".zst", ".zstlong"])
def test_compressed_files(tmp_path, suffix):
    data = ('[Event "x"]\n\n1. e4 e5 2. Nf3 1-0\n\n' * 50).encode()
    if suffix == ".gz":
        blob = gzip.compress(data)
    elif suffix == ".bz2":
        blob = bz2.compress(data)
    elif suffix == ".zst":
        blob = zstandard.ZstdCompressor(level=3).compress(data)
    else:
        cctx = zstandard.ZstdCompressor(
            compression_params=zstandard.ZstdCompressionParameters.from_level(
                3, window_log=28, write_content_size=False
            )
        )
        co = cctx.compressobj()
        blob = co.compress(data) + co.flush()
        suffix = ".zst"
    p = tmp_path / ("g.pgn" + suffix)
    p.write_bytes(blob)
    gs = list(read_games(p))
    assert len(gs) == 50
    assert all(g.sans == ["e4", "e5", "Nf3"] and g.issues == [] for g in gs)
    assert gs[7].byte_offset == 7 * len(data) // 50


def test_stdin(monkeypatch):
    data = gzip.compress(b'[Event "x"]\n\n1. e4 *\n\n[Event "y"]\n\n1. d4 *\n')
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    gs = list(read_games("-"))
    assert [(g.source, g.sans) for g in gs] == [("<stdin>", ["e4"]), ("<stdin>", ["d4"])]


_TOKENS = [
    "1.", "2...", "3.", "e4", "exd5", "Nf3", "Nbd7", "O-O", "O-O-O", "0-0", "e8=Q+", "Qxf7#",
    "Nf3!", "e5?!", "$1", "{c}", "{", "}", "(", ")", ";x\n", "--", "0000", "e.p.", "exd6e.p.",
    "1-0", "0-1", "1/2-1/2", "*", "1/2", "pawn", "+-", "...", "12.Nf3", "1...e5", "\n", "\n\n",
    "%esc\n", "e2e4", "P@e4", "Z0", "…", "x", "\u00e9", "{a\nb}", "(1. e4 1-0)", "\x00",
    '[Event "y"]\n', "1.1-0", "Qxf7#1-0", "h6*", ";c {\n", "\r", '[A "b"] e4', '{x\n\n[Event "q"]\n',
]


def test_fast_path_agrees_with_general_tokenizer():
    """Whatever the fast path accepts, the general tokenizer reads identically."""
    from hypothesis import example, given, settings, strategies as st

    from chessscan.readers import pgn

    @settings(max_examples=400, deadline=None)
    @example(tokens=[";c {\n", '[A "b"] e4'], sep=" ")  # a comment in the tag section
    @given(st.lists(st.sampled_from(_TOKENS), max_size=25), st.sampled_from([" ", "", "  "]))
    def check(tokens, sep):
        text = '[Event "x"]\n\n' + sep.join(t if t.endswith("\n") else t + " " for t in tokens) + "\n"
        data = text.encode()
        gs = games(text)
        assert gs
        for g in gs:
            if g.movetext_line:
                slow = pgn._scan_movetext(pgn._movetext_str(g._mt, g._codec), g.movetext_line)
                assert slow[:3] + (slow[4],) == (g.sans, g.result, g.variations, g.nags)
                # The movetext scan cannot see comments read before the movetext: a preamble
                # before the game, or a comment inside its tag section (counted with the game).
                tag_section = "\n".join(text.split("\n")[g.line - 1 : g.movetext_line - 1])
                if (not g.tags or data[g.byte_offset :].startswith(b"[")) and not (
                        ";" in tag_section or "{" in tag_section):
                    assert slow[3] == g.comments
                for i in range(len(g.sans)):
                    g.locate(i)

    check()


def test_random_garbage_never_raises():
    import random

    rnd = random.Random(1234)
    alphabet = b'[]{}()";%$*.-01/2\\ \n\r\tabcdefghNBRQKOx=+#!?e.p\x00\xff\xc3'
    for _ in range(300):
        blob = bytes(rnd.choice(alphabet) for _ in range(rnd.randint(0, 300)))
        for g in games(blob):
            assert isinstance(g.sans, list)
            for i in range(len(g.sans)):
                g.locate(i)


# --------------------------------------------------------------------------
# Real data


@needs_shared
def test_sample_game_counts():
    paths = sorted(SAMPLES.glob("*.pgn"))
    assert len(paths) >= 3
    for path in paths:
        gs = list(read_games(path))
        assert len(gs) == count_event_tags(path), path.name
        assert [g.index for g in gs] == list(range(len(gs)))
        assert all(g.result is not None and g.issues == [] for g in gs), path.name


@needs_shared
@pytest.mark.slow
def test_whole_corpora_counts():
    # Counts from shared/data/SOURCES.md (lines starting with '[Event ').
    expect = {
        "pgnmentor-players-dedup.pgn.zst": 333_596,
        "lichess-jishanshaikh4.pgn.zst": 37_221,
        "lichess-magnus.pgn.zst": 10_024,
        "tcec-archive-nocomments.pgn.zst": 27_612,
    }
    for name, n in expect.items():
        got = Counter()
        for g in read_games(SHARED / "games" / name):
            got["games"] += 1
            got.update(i.code for i in g.issues)
        assert got["games"] == n, name
        assert got["truncated-input"] == got["unexpected-token"] == got["missing-tags"] == 0, name


@needs_shared
@pytest.mark.parametrize("name", ["pgnmentor-Fischer.pgn", "lichess-magnus-first1000.pgn"])
def test_matches_python_chess(name):
    chess_pgn = pytest.importorskip("chess.pgn")
    path = SAMPLES / name
    ours = list(read_games(path))
    theirs = []
    with open(path, encoding="utf-8-sig") as f:
        while (game := chess_pgn.read_game(f)) is not None:
            board = game.board()
            sans = []
            for move in game.mainline_moves():
                sans.append(board.san(move))
                board.push(move)
            theirs.append((game.headers, sans))
    assert len(ours) == len(theirs)
    for g, (headers, sans) in zip(ours, theirs):
        # python-chess re-generates SAN; files sometimes write '+' for mate.
        assert strip_check(g.sans) == strip_check(sans), g.index
        assert g.result == headers["Result"]
        for k, v in g.tags.items():
            assert headers[k] == v
    # Offsets and line numbers point at the game's first byte/line.
    raw = path.read_bytes()
    line_starts = [0] + [m.end() for m in re.finditer(rb"\r\n|\r|\n", raw)]
    for g in ours[::37]:
        assert raw[g.byte_offset : g.byte_offset + 7] == b"[Event "
        assert line_starts[g.line - 1] == g.byte_offset


@needs_shared
def test_locate_on_crlf_file():
    path = SAMPLES / "pgnmentor-Fischer.pgn"
    raw = path.read_bytes()
    assert b"\r\n" in raw
    lines = raw.decode("utf-8").split("\r\n")
    gs = list(read_games(path))
    g = gs[1]
    assert g.locate(0) == (g.movetext_line, 3)  # "1.e4"
    for g in gs[::50]:
        for i in range(0, len(g.sans), 9):
            ln, col = g.locate(i)
            assert lines[ln - 1][col - 1 :].startswith(g.sans[i]), (g.index, i)


@needs_shared
def test_messy_files_read_to_the_end():
    files = sorted(p for p in MESSY.rglob("*") if p.is_file())
    assert len(files) > 40
    for p in files:
        gs = list(read_games(p))
        for g in gs:
            assert all(i.code in ISSUE_CODES and i.severity == ISSUE_CODES[i.code] for i in g.issues)
            assert not any(i.code == "truncated-input" for i in g.issues)


@needs_shared
def test_messy_counts():
    expect = {
        "mliebelt/twic-01-232games.pgn": 232,
        "mliebelt/32games.pgn": 32,
        "pychess/dortmund.pgn": 347,
        "pychess/world_matches.pgn": 580,
        "pychess/zh.pgn": 83,
        "tcec-full-comments/TCEC_Cup_10_Final.pgn": 12,
        "tcec-full-comments/TCEC_Season_16_-_Frc_Sufi.pgn": 20,
        "pgn-extract-eco.pgn": 2014,
    }
    for rel, n in expect.items():
        gs = list(read_games(MESSY / rel))
        assert len(gs) == n, rel
    eco = list(read_games(MESSY / "pgn-extract-eco.pgn"))
    assert eco[0].first_comment.startswith("A PGN file of ECO classifications")
    assert eco[0].tags == {"ECO": "A00", "Opening": "Polish (Sokolsky) opening"}
    assert eco[0].sans == ["b4"] and all(g.result == "*" for g in eco)
    dortmund = list(read_games(MESSY / "pychess/dortmund.pgn"))
    assert all(c == "decode-fallback" for g in dortmund for c in codes(g))
    assert any("\u00fc" in v or "\u00f6" in v for g in dortmund for v in g.tags.values())


@needs_shared
def test_kokopu_edge_cases():
    k = lambda name: list(read_games(KOKOPU / name))  # noqa: E731
    assert k("empty.pgn") == []
    (bom,) = k("bom.pgn")
    assert bom.tags["Event"] == "Olympiad-21 Final D" and bom.byte_offset == 3
    assert len(bom.sans) == 61 and bom.result == "1-0" and bom.nags == 1
    for name in ("linebreak-linux.pgn", "linebreak-mac.pgn", "linebreak-windows.pgn"):
        (g,) = k(name)
        assert g.tags == {"Event": "Illegal move 1"} and g.sans == ["e5"] and g.result == "*"
        assert g.movetext_line == 3 and g.locate(0) == (3, 4)
    first, last = k("missing-last-end-of-game.pgn")
    assert first.result == "1-0" and len(first.sans) == 7 and first.issues == []
    assert last.sans == ["d4", "d5"] and last.result is None
    assert codes(last) == ["missing-result"] and last.issues[0].line == 8
    g4 = k("syntactic-error-4.pgn")
    assert len(g4) == 2 and issue(g4[0], "unclosed-comment")[2:4] == (3, 7)
    assert g4[1].sans[-1] == "Qxf7#" and g4[1].issues == []
    g5 = k("syntactic-error-5.pgn")
    assert len(g5) == 2 and issue(g5[0], "bad-tag").line == 2 and g5[1].issues == []
    s1 = k("syntactic-error-1.pgn")
    by_event = {g.tags.get("Event"): g for g in s1}
    ut = issue(by_event["Invalid move 1"], "unexpected-token")
    assert (ut.line, ut.column) == (3, 4)
    assert issue(by_event["Missing header key"], "bad-tag").line == 12
    assert issue(by_event["Missing header value"], "bad-tag").line == 18
    broken = [i.line for i in by_event["Linebreak characters are not allowed in header values"].issues]
    assert broken == [24, 25]
    assert issue(by_event["Unescaped character in comment"], "unexpected-token")[2:4] == (38, 50)
    assert issue(by_event["Non-finished variation"], "unbalanced-variation")[2:4] == (76, 10)
    assert issue(by_event["Invalid variant termination token"], "unbalanced-variation")[2:4] == (86, 10)
    assert by_event["Trying to fool the parser with an end-of-game-like comment before the error"].result == "1-0"
    assert s1[-1].sans[-1] == "Qxf7#" and s1[-1].issues == []
    raw = (KOKOPU / "syntactic-error-1.pgn").read_bytes()
    assert len(s1) == 22  # + "Header after movetext", + "Missing begin header character"
    assert sum(raw[g.byte_offset :].startswith(b"[Event ") for g in s1) == count_event_tags(KOKOPU / "syntactic-error-1.pgn")
    (rc,) = k("redos-comment.pgn")
    assert issue(rc, "unclosed-comment")[2:4] == (3, 7)
    (rh,) = k("redos-header.pgn")
    assert codes(rh) == ["bad-tag"] and rh.result == "*"
    hd = k("headers.pgn")
    assert hd[4].tags["Event"] == 'Special character " (double quote)'
    assert hd[4].tags["Black"] == "Special character \\ (backslash)"
    inline = [g for g in hd if g.tags.get("Event") == "Full inline PGN"][0]
    assert inline.tags["Round"] == "?.6" and inline.result == "*" and inline.issues == []
    misc = {g.tags.get("Event"): g for g in k("misc.pgn")}
    assert misc["Game with null-moves"].sans[:2] == ["e4", "--"]
    assert misc["Castling with character 0 instead of character O"].sans[-1] == "0-0"
    assert misc["Game with variations"].variations == 4
    assert misc["Game with variant tag 2"].sans == ["h6"]
    semantic = k("semantic-error.pgn")
    assert semantic[5].first_comment.startswith("I'am a very long comment")
    assert semantic[5].sans == ["O-O"] and semantic[5].locate(0) == (37, 4)
    for p in sorted(KOKOPU.glob("*.pgn")):
        raw = p.read_bytes()
        starts = sum(raw[g.byte_offset :].startswith(b"[Event ") for g in k(p.name))
        assert starts == count_event_tags(p), p.name


def test_comments_after_last_game_are_not_a_game():
    gs = games('[Event "a"]\n\n1. e4 0-1 ;\n\n{ trailing file comment }\n')
    assert len(gs) == 1 and gs[0].issues == [] and gs[0].comments == 0
    gs = games('[Event "a"]\n\n1. e4 0-1\n{ never closed\n')
    assert len(gs) == 2 and codes(gs[1]) == ["missing-tags", "unclosed-comment", "missing-result"]


# --------------------------------------------------------------------------
# Regressions (fuzzing)


def test_percent_line_inside_a_comment_is_comment_text_for_locate_too():
    # A '%' in column 0 inside a brace comment is comment text, not an escape
    # line (§6); locate() used to blank it and raise IndexError after it.
    g = one('[Event "a"]\n\n1. e4 {\n%} e5 2. Ke3 *\n')
    assert g.sans == ["e4", "e5", "Ke3"] and g.result == "*" and g.issues == []
    assert [g.locate(i) for i in range(3)] == [(3, 4), (4, 4), (4, 10)]
    # The general tokenizer (a RAV forces it) reads it the same way.
    g = one('[Event "a"]\n\n1. e4 {\n%x\n%} e5 (1... c5) 2. Nf3 $1 *\n')
    assert g.sans == ["e4", "e5", "Nf3"] and g.result == "*" and g.issues == []
    assert g.variations == 1 and g.comments == 1 and g.locate(2) == (5, 20)
    # Outside a comment a '%' line is still an escape line, and its '{' opens nothing.
    g = one('[Event "a"]\n\n1. e4\n%{ 1-0\ne5 (1... c5) *\n')
    assert g.sans == ["e4", "e5"] and g.issues == [] and g.locate(1) == (5, 1)


def test_locate_never_raises_for_a_ply_in_range():
    # Reading and locating disagreeing is a bug; locate then falls back to the
    # movetext's first line with no column instead of aborting the analysis.
    g = RawGame("t", 0, 0, 1, {}, ["e4", "e5"], "*", 3, _mt=b"1. e4 *\n")
    assert g.locate(0) == (3, 4)
    assert g.locate(1) == (3, None)
    with pytest.raises(IndexError):
        g.locate(2)


def test_locate_points_at_every_ply_with_comments_and_escape_lines():
    """Token soup with '%' lines in and out of comments: locate() finds every ply read."""
    from hypothesis import given, settings, strategies as st

    tokens = ["1.", "e4", "e5", "Nf3", "{", "}", "{c}", "{\n%}", "{ a\n%b } c}", "{\n%x\n}", "\n%}", "\n%",
              "\n%{", "\n", ";x\n", "(", ")", "$2", "Nc6!", "*", "1-0", "2...", "--", "\n\n",
              '\n[Event "z"]\n\n']

    @settings(max_examples=300, deadline=None, database=None)
    @given(st.lists(st.sampled_from(tokens), max_size=30))
    def check(parts):
        text = '[Event "x"]\n\n' + " ".join(parts) + "\n"
        lines = text.split("\n")
        for g in games(text):
            for i, san in enumerate(g.sans):
                ln, col = g.locate(i)
                assert col is not None and lines[ln - 1][col - 1 :].startswith(san), (i, san)

    check()


@pytest.mark.parametrize("data", [b"\xef\xbb\xbf", b"\n\n\xef\xbb\xbf", b"\xef\xbb\xbf\xef\xbb\xbf"])
def test_last_line_only_a_bom(data):
    # The BOM was stripped to b'' and then indexed: IndexError.
    assert games(data) == []
    gs = games(b'[Event "a"]\n\n1. e4 *\n' + data)
    assert len(gs) == 1 and gs[0].issues == [] and gs[0].sans == ["e4"]


def test_movetext_line_ending_like_a_tag_is_movetext():
    # After the blank line that ends the tag section (or once a tag line is
    # complete), a line ending in '"]' is movetext, not the rest of a tag.
    for sep in ("\n\n", "\n"):
        g = one(f'[Event "A"]{sep}1. e4 {{see [Event "B"]\n}} e5 *\n')
        assert g.tags == {"Event": "A"} and g.sans == ["e4", "e5"] and g.issues == []
    # A tag value really broken over two lines still stays in the tag section.
    g = one('[Event "A long\n value"]\n[Site "x"]\n\n1. e4 *\n')
    assert g.sans == ["e4"] and g.tags["Site"] == "x" and set(codes(g)) == {"bad-tag"}


def test_game_after_a_result_mid_line_columns_count_characters():
    # The rest of the line after the result is padded with one space per
    # character (it was one per byte, shifting columns after non-ASCII text).
    data = '[Event "a"]\n\n{é} e4 1-0 e5 *\n'.encode()
    g0, g1 = games(data)
    assert g0.sans == ["e4"] and g1.sans == ["e5"] and codes(g1) == ["missing-tags"]
    assert g1.locate(0) == (3, 12) and g1.line == 3
    assert g1.byte_offset == data.index(b"e5")


# --- where a source may be cut (chunks for --jobs, shards for --dask) ---------------------

@pytest.mark.parametrize("before, line, sure", [
    (b'1. e4 e5 1-0\n\n', b'[Event "b"]', True),            # after a finished game
    (b'1. e4 e5 1-0\r\n\r\n', b'[Event "b"]', True),
    (b'1. e4 e5 1-0\r\r', b'[Event "b"]', True),               # CR-only line ends
    (b'1. e4 e5 1-0\n', b'[Event "b"]', False),               # no blank line before
    (b'1. e4 e5\n\n', b'[Event "b"]', False),                 # the game has not ended
    (b'[Site "x"]\n\n', b'[Event "b"]', False),               # still a tag section
    (b'%escape 1-0\n\n', b'[Event "b"]', False),              # an escape line
    (b'1. e4 { open 1-0\n\n', b'[Event "b"]', False),         # the comment may go on past the tag
    (b'1. e4 { open\n\n', b'[Event "b}"]', False),            # a '}' on it closes it
    (b'1. e4 {\n1-0\n\n', b'[Event "b"]', True),              # a comment the rule cannot see
    (b'1. e4 {x} 1-0\n\n', b'[Event "b"]', True),
    (b'1. e4 {1-0}\n\n', b'[Event "b"]', False),              # the marker is in a comment
    (b'1. e4 1-0 ;\n\n', b'[Event "b"]', False),              # a comment after the marker
    (b'1. e4 1-0 {x}\n\n', b'[Event "b"]', False),            # opens the next game
])
def test_sure_game_start(before, line, sure):
    head = b"[Event \"a\"]\n\n" + before
    assert sure_game_start(head, line, True) is sure
    if sure:
        # The reader of the text before the line says whether a comment may go on past it
        # (a comment opened on an earlier line than the rule looks at); else a sure start
        # begins the second game.
        end = ReadEnd()
        list(read_games(io.BytesIO(head), end=end))
        assert end.open is (b"{\n" in before)
        games = list(read_games(io.BytesIO(head + line + b"\n\n1. d4 *\n")))
        if not end.open:
            assert games[-1].tags.get("Event") == line[8:-2].decode()


@pytest.mark.parametrize("text, open_", [
    (b'[Event "a"]\n\n1. e4 *\n\n', False),
    (b'[Event "a"]\n\n1. e4 {x} e5 1-0\n\n', False),
    (b'[Event "a"]\n[Site "x"]\n\n', False),                       # a tag section
    (b'[Event "a"]\n\n1. e4 (1. d4 1-0\n\n', False),               # an open variation
    (b'[Event "a"]\n\n1. e4 {open\n1-0\n\n', True),                # an open comment
    (b'[Event "a"]\n\n1. e4 {open\n\n[Event "b"]\n\n1. d4 1-0\n\n', True),  # its look-ahead
    (b'[Event "a"]\n\n1. e4 1-0\n{after}\n\n', True),              # comments only, no tags
    (b'[Event "a"]\n\n1. e4 1-0 {after}\n\n', False),              # on the marker's line: its game's
    (b'[Event "a"]\n\n1. e4 1-0 {after\n\n', True),                 # ... unless left open
    (b'[Event "a"]\n\n1. e4 {open\n\n[Event "b"]\n\n1. d4 {x} 1-0\n\n', False),  # decided
])
def test_read_end_says_whether_text_after_could_belong_to_the_last_game(text, open_):
    end = ReadEnd()
    list(read_games(io.BytesIO(text), end=end))
    assert end.open is open_


def test_last_sure_game_start():
    text = b'[Event "a"]\n\n1. e4 1-0\n\n[Event "b"]\n\n1. d4 *\n\n[Event "c"]\n[Site "x"]\n'
    b, c = text.index(b'[Event "b"]'), text.index(b'[Event "c"]')
    assert last_sure_game_start(text) == c
    assert last_sure_game_start(text[: c + 5]) == b  # "c"'s line may go on: not yet a start
    assert last_sure_game_start(text[: b + 5]) == -1
    assert last_sure_game_start(text, lo=c) == -1  # only candidates after lo
    assert last_sure_game_start(b'[Event "a"]\n\n1. e4\n\n[Event "b"]\n') == -1


def _last_sure_game_start_by_rfind(buf: bytes, lo: int = 0, hi=None, lookback: int = 1 << 16) -> int:
    """The rule as first written: rfind the candidates, sure_game_start on lookback bytes."""
    from chessscan.readers.pgn import line_at, sure_game_start

    end = len(buf) if hi is None else min(hi, len(buf))
    while True:
        i = max(buf.rfind(b'\n[Event "', lo, end), buf.rfind(b'\r[Event "', lo, end))
        if i < 0:
            return -1
        start = i + 1
        line = line_at(buf, start)
        back = max(0, start - lookback)
        if line is not None and sure_game_start(buf[back:start], line, back == 0):
            return start
        end = i


_CUT_PIECES = st.sampled_from([b'[Event "x"]', b"\n", b"\r\n", b"\r", b" ", b"\t", b"\x0b", b"1-0", b"0-1",
                               b"1/2-1/2", b"*", b"{", b"}", b";c", b"%e", b'[Site "s"]', b"1. e4 e5", b'[Event "',
                               b"x", b"\xef\xbb\xbf"])


@settings(max_examples=3000, deadline=None)
@given(st.lists(_CUT_PIECES, max_size=40).map(b"".join), st.integers(0, 80), st.integers(0, 90),
       st.sampled_from([1 << 16, 3, 7, 12, 30]))
@example(b'1. e4 1-0\n\n[Event "x"]\n', 0, 30, 1 << 16)
@example(b'1. e4 1-0\n\n[Event "x"]\n', 0, 30, 11)   # the movetext line cut by the look-back
@example(b'1. e4 1-0\n\n[Event "x"]\n', 0, 30, 12)
def test_last_sure_game_start_is_the_rule_on_any_buffer(text, lo, hi, lookback):
    """The compiled scan (from hi back, the last non-blank line found in C) gives what the
    rule gives on the look-back bytes, in a bytes object or in a writable buffer."""
    want = _last_sure_game_start_by_rfind(text, lo, hi, lookback)
    assert last_sure_game_start(text, lo, hi, lookback) == want
    assert last_sure_game_start(memoryview(bytearray(text)), lo, hi, lookback) == want


def test_rebase_moves_a_game_to_its_place():
    text = b'[Event "a"]\n\n1. e4 {x\n'
    game = next(read_games(io.BytesIO(text)))
    game.rebase(10, 1000, 50)
    assert (game.index, game.byte_offset, game.line, game.movetext_line) == (10, 1000, 51, 53)
    assert [i.line for i in game.issues] == [53, 53]
    assert game.locate(0) == (53, 4)


# --------------------------------------------------------------------------
# MAX_GAME_BYTES: memory bounded however long a game or a line is.

from chessscan.readers import pgn as pgn_module


def _starts(data: bytes, games: list[RawGame]) -> list[bytes]:
    """Each game's first bytes, and a check that its line number matches its offset."""
    for g in games:
        assert data.count(b"\n", 0, g.byte_offset) + data.count(b"\r", 0, g.byte_offset) \
            - data.count(b"\r\n", 0, g.byte_offset) + 1 == g.line
    return [data[g.byte_offset:g.byte_offset + 11] for g in games]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
@pytest.mark.parametrize("chunk", [7, 64, 1 << 20])
def test_line_over_the_cap_is_cut_and_reported(monkeypatch, eol, chunk):
    monkeypatch.setattr(pgn_module, "MAX_GAME_BYTES", 300)
    monkeypatch.setattr(pgn_module, "_CHUNK", chunk)
    data = eol.join([b'[Event "a"]', b"", b"1. e4 e5 *", b"", b'[Event "b"]', b"",
                     b"1. d4 " + b"d5 " * 400 + b"1-0", b"", b'[Event "c"]', b"", b"1. c4 *", b""])
    games = list(read_games(io.BytesIO(data)))
    assert _starts(data, games) == [b'[Event "a"]', b'[Event "b"]', b'[Event "c"]']
    a, b, c = games
    assert a.sans == ["e4", "e5"] and c.sans == ["c4"] and a.issues == c.issues == []
    # The long line would take the game past the cap: none of it is kept, and the game's
    # end (past the cut) is not read, so no missing-result either.
    assert codes(b) == ["game-too-long"] and b.sans == [] and b.result is None
    issue = b.issues[0]
    assert (issue.severity, issue.line, issue.ply) == ("error", 7, 1)


@pytest.mark.parametrize("chunk", [7, 64, 1 << 20])
def test_a_line_is_cut_at_the_cap_between_tokens(monkeypatch, chunk):
    """The cap falls inside ``O-O-O``: the line is cut before it, not after ``O-O`` (another
    move, which would be played without a word); the game ends there, reported."""
    monkeypatch.setattr(pgn_module, "MAX_GAME_BYTES", 120)
    monkeypatch.setattr(pgn_module, "_CHUNK", chunk)
    pre = b"1. d4 d5 2. Nc3 Nc6 3. Bf4 Bf5 4. Qd2 Qd7 5. {"
    data = pre + b"a" * (120 - len(pre) - 5) + b"} O-O-O O-O-O *\n\n[Event \"b\"]\n\n1. e4 *\n"
    assert data[117:120] == b"O-O" and data[120:121] == b"-"
    first, second = read_games(io.BytesIO(data))
    assert first.sans == ["d4", "d5", "Nc3", "Nc6", "Bf4", "Bf5", "Qd2", "Qd7"]
    assert "game-too-long" in codes(first) and first.result is None
    assert second.sans == ["e4"]
    # A cap that falls just before a space keeps every whole token before it.
    monkeypatch.setattr(pgn_module, "MAX_GAME_BYTES", 122)
    first, _ = read_games(io.BytesIO(data))
    assert first.sans[-1] == "O-O-O" and len(first.sans) == 9


def test_game_over_the_cap_keeps_its_lines_up_to_it(monkeypatch):
    monkeypatch.setattr(pgn_module, "MAX_GAME_BYTES", 400)
    monkeypatch.setattr(pgn_module, "_CHUNK", 50)  # the cap is crossed between batches too
    moves = b"".join(b"%d. Nf3 Nf6 %d. Ng1 Ng8\n" % (2 * i + 1, 2 * i + 2) for i in range(40))
    data = b'[Event "long"]\n\n' + moves + b"*\n\n[Event \"next\"]\n\n1. e4 1-0\n"
    games = list(read_games(io.BytesIO(data)))
    assert _starts(data, games) == [b'[Event "lon', b'[Event "nex']
    long, nxt = games
    kept = sum(len(line) for line in data.splitlines(True)[:2])
    n_lines = (400 - kept) // len(b"1. Nf3 Nf6 2. Ng1 Ng8\n")  # whole lines, the first ones are no longer
    assert len(long.sans) >= 4 * (n_lines - 1) and long.sans[:4] == ["Nf3", "Nf6", "Ng1", "Ng8"]
    assert codes(long) == ["game-too-long"]
    assert long.issues[0].ply == len(long.sans) + 1
    assert codes(nxt) == [] and nxt.sans == ["e4"] and nxt.result == "1-0"
    # The same game read in one batch is cut at the same line.
    monkeypatch.setattr(pgn_module, "_CHUNK", 1 << 20)
    again = list(read_games(io.BytesIO(data)))
    assert [(g.sans, g.issues, g.byte_offset) for g in again] == [(g.sans, g.issues, g.byte_offset) for g in games]


def test_a_tag_value_end_after_the_cap_dropped_the_tag_lines(monkeypatch):
    # A line ending '"]' once the cap has dropped the game's tag lines (a blank line was
    # taken as the tag section's; the game went past the cap across batches) is no second
    # half of a tag value: there is no tag line left to join it to. It used to raise
    # IndexError; found by fuzzing with a small cap and chunk.
    monkeypatch.setattr(pgn_module, "MAX_GAME_BYTES", 64)
    monkeypatch.setattr(pgn_module, "_CHUNK", 16)
    data = b'; no20.01.01"]}*[Round "-"]\n%esc[Date "2020.01.01"]\n\n[Round "-"]\n"]'
    (game,) = read_games(io.BytesIO(data))
    assert game.line == 1 and game.tags == {} and game.sans == []
    assert sorted(codes(game)) == ["game-too-long", "unexpected-token"]


@pytest.mark.parametrize("chunk", [16, 64, 1 << 20])
def test_tags_split_from_their_movetext_line_then_cut_by_the_cap(monkeypatch, chunk):
    # '[Event "x"] {' puts the tags in the tag section and the open comment in the movetext;
    # a tag after the comment continues the tag section, joining that line's two halves.
    # When the cap had dropped them (a long preamble), the join raised IndexError and the
    # whole read ended.
    monkeypatch.setattr(pgn_module, "MAX_GAME_BYTES", 200)
    monkeypatch.setattr(pgn_module, "_CHUNK", chunk)
    data = (b"{ preamble\n" + b"comment text\n" * 20 + b'}\n[Event "x"] { open\n' + b"more text\n" * 10
            + b'}\n\n[Site "y"]\n\n1. e4 *\n\n[Event "z"]\n\n1. d4 *\n')
    games = list(read_games(io.BytesIO(data)))
    assert [codes(g) for g in games] == [["game-too-long"], []]
    assert _starts(data, games) == [b"{ preamble\n", b'[Event "z"]']
    assert games[1].sans == ["d4"] and games[1].tags == {"Event": "z"}


@pytest.mark.parametrize("eol", [b"\n", b"\r\n"])
@pytest.mark.parametrize("chunk", range(5, 12))
def test_long_blank_line_between_games_is_reported(monkeypatch, eol, chunk):
    monkeypatch.setattr(pgn_module, "MAX_GAME_BYTES", 100)
    monkeypatch.setattr(pgn_module, "_CHUNK", chunk)  # a '\r\n' split between reads, among others
    data = eol.join([b'[Event "a"]', b"", b"1. e4 *", b" " * 250 + b'[Event "b"]', b"", b"1. d4 *",
                     b'[Event "c"]', b"", b"1. c4 *", b""])
    games = list(read_games(io.BytesIO(data)))
    # The rest of the long line (game b's tag) is dropped: its movetext is read as a game
    # without tags.
    assert [codes(g) for g in games] == [[], ["game-too-long"], ["missing-tags"], []]
    starts = _starts(data, games)
    assert starts[2].startswith(b"1. d4 *") and starts[3] == b'[Event "c"]'
    assert games[1].byte_offset == data.index(b" " * 250)
    assert games[2].sans == ["d4"] and games[3].sans == ["c4"]


def test_long_movetext_is_split_in_pieces_alike():
    from chessscan.readers.movetext import fast_movetext

    text = b"1. e4 e5 2. Nf3 Nc6 3.Bb5 a6 " * 30_000
    seen = []
    for tail in (b"1-0", b"", b"1-0 e4", b"1-0 1. d4"):
        sans, result = fast_movetext(text + tail, 1 << 12)
        assert (sans, result) == fast_movetext(text + tail, 1 << 30)
        seen.append((None if sans is None else len(sans), result))
    # A result followed by more text is not the fast path's (the general tokenizer reports it).
    assert seen == [(180_000, "1-0"), (180_000, None), (None, None), (None, None)]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_games_over_the_cap_read_alike_at_any_read_size(monkeypatch, eol):
    """Lines and games over the cap, between games, in a game and on an escape line: every
    read size gives the games a single read gives (offsets, lines, moves, issues)."""
    monkeypatch.setattr(pgn_module, "MAX_GAME_BYTES", 60)
    data = eol.join([b'[Event "a"]', b"", b"1. e4 *", b" " * 130 + b'[Event "b"]', b"",
                     b"1. d4 " + b"d5 " * 40 + b"*", b"", b'[Event "c"]', b"", b"1. c4 *", b"%" + b"x" * 90,
                     b'[Event "d"]', b"", b"1. Nf3 *", b""])

    def read() -> list:
        return [(g.byte_offset, g.line, g.sans, g.issues) for g in read_games(io.BytesIO(data))]

    whole = read()
    assert [[i.code for i in issues] for *_, issues in whole] == \
        [[], ["game-too-long"], ["missing-tags", "game-too-long"], [], []]
    for size in range(1, 80):
        monkeypatch.setattr(pgn_module, "_CHUNK", size)
        assert read() == whole, size


# A tag pair's tokens may stand on several lines (§7, §8.1), and any whitespace may lead a
# tag line. The line-by-line tag parser (taken when a section has escapes, duplicates or
# comments) reads such pairs as the one-pass scan does: the verdict on one pair does not
# depend on the other tags of its section.
_PLAIN_TAGS = {"Event": "A", "White": "W1", "Black": "B", "Result": "*"}


@pytest.mark.parametrize("white_lines", [
    '[White\n"W1"]\n', '[White\n  "W1"]\n', '[\nWhite "W1"]\n',
    '\x0c[White "W1"]\n', '\t[White "W1"]\n', '[White\r\n"W1"]\r\n', '[White "W1"]\n',
])
@pytest.mark.parametrize("extra, extra_tags, codes", [
    ("", {}, []),
    ('[Annotator "x \\"y\\""]\n', {"Annotator": 'x "y"'}, []),
    ('[Black "C"]\n', {}, ["duplicate-tag"]),
    ("{ a comment }\n", {}, []),
])
def test_a_tag_pair_over_lines_reads_alike_whatever_the_other_tags(white_lines, extra, extra_tags, codes) -> None:
    text = '[Event "A"]\n' + white_lines + '[Black "B"]\n[Result "*"]\n' + extra + "\n1. e4 *\n"
    (game,) = games(text)
    assert game.tags == {**_PLAIN_TAGS, **extra_tags}
    assert [i.code for i in game.issues] == codes
    assert game.sans == ["e4"]


# --------------------------------------------------------------------------
# Where a game ends on its marker's line, and where the next one starts


@pytest.mark.parametrize("after, next_at", [
    (" ;", "line"),                       # the TCEC archive's `0-1 ;` (1,392 games)
    (" ; Stockfish wins", "line"),
    (" {end} ; note", "line"),
    ("\t{a}{b}\x1a", "line"),              # closed comments and a DOS end-of-file byte
    (" {left open", "here"),              # a comment the next game starts with
    (" 1. d4 *", "here"),                 # a tagless game on the same line
])
def test_comments_after_a_marker_stay_on_their_games_line(after, next_at):
    """Comments closed on the marker's line stay with its game: the next game (and its
    byte_offset and line) starts on the next line, at its [Event] tag; anything else after the
    marker starts the next game right there, mid-line."""
    first = f'[Event "a"]\n\n1. e4 e5 0-1{after}\n'
    text = first + ("}" if "open" in after else "") + '\n[Event "b"]\n\n1. d4 *\n'
    gs = games(text)
    a = gs[0]
    assert a.sans == ["e4", "e5"] and a.result == "0-1" and a.issues == [] and a.comments == 0
    if next_at == "line":
        assert len(gs) == 2
        assert gs[1].byte_offset == text.index('[Event "b"]') and gs[1].line == 5
    else:
        mid = len('[Event "a"]\n\n1. e4 e5 0-1 ')
        assert gs[1].byte_offset == mid and gs[1].line == 3


def test_a_comment_over_an_event_line_with_no_blank_line_before_it_is_reported():
    """The look-ahead decides a comment holding a blank line and a tag section (no issue); an
    [Event] line with no blank line before it is no would-be game start, so a '{' left open
    swallowed the games up to the next '}' without a word: now a warning on that line."""
    swallowing = ('[Event "a"]\n\n1. e4 {oops\n[Event "b"]\n[White "W"]\n\n1. d4 d5 2. c4 {main line} e6 *\n\n'
                  '[Event "c"]\n\n1. c4 *\n')
    gs = games(swallowing)
    assert [g.tags["Event"] for g in gs] == ["a", "c"] and gs[0].sans == ["e4", "e6"]
    assert [(i.code, i.severity, i.line, i.column) for i in gs[0].issues] == [("game-in-comment", "warning", 4, 1)]
    assert "runs over this [Event] tag line, with no blank line before it, to its '}' 3 lines down" in (
        gs[0].issues[0].message)
    # After a blank line, the look-ahead saw it: one comment, no issue (docs: How PGN is read).
    quoting = '[Event "a"]\n\n1. e4 {as in\n\n[Event "b"]\n\n1. d4 *\n} e5 *\n'
    assert codes(one(quoting)) == []
    # In a comment before the tag section (a file comment) too; CRLF line ends.
    g = one('{ header\r\n  [Event "x"] \r\n}\r\n[Event "a"]\r\n\r\n1. e4 *\r\n')
    assert [(i.code, i.line, i.column) for i in g.issues] == [("game-in-comment", 2, 3)]


@pytest.mark.parametrize("text, between, in_comment, depth", [
    (b'[Event "a"]\n\n1. e4 *\n\n%x\n\n', True, False, 0),
    (b'', True, False, 0),
    (b'[Event "a"]\n\n1. e4 e5\n\n', False, False, 0),          # no marker yet
    (b'[Event "a"]\n[Site "b"]\n\n', False, False, 0),           # a tag section
    (b'[Event "a"]\n\n1. e4 (1. d4 (1. c4\n', False, False, 2),  # two variations open
    (b'[Event "a"]\n\n1. e4 (1. d4 {x\n', False, True, 1),
    (b'[Event "a"]\n\n1. e4 1-0\n{after}\n', False, False, 0),   # the preamble of a game to come
])
def test_read_end_says_where_the_reader_stood(text, between, in_comment, depth):
    end = ReadEnd()
    list(read_games(io.BytesIO(text), end=end))
    assert (end.between, end.in_comment, end.depth) == (between, in_comment, depth)


# ---- the line loop's compiled helpers, against the regexes and bytes methods they replace ----

_MARKER_PIECES = st.sampled_from([b"1-0", b"0-1", b"1/2-1/2", b"*", b"1", b"0", b"-", b"/", b"2", b".", b" ", b"\t",
                                  b"\n", b"\r", b"\x0b", b"(", b")", b"{", b"}", b"a", b"Z", b"_", b"e4", b"\x00",
                                  b"\xc3\xa9", b"\x7f", b"1-0a", b"x1-0", b"..."])


@settings(max_examples=1500, deadline=None)
@given(st.lists(_MARKER_PIECES, max_size=12).map(b"".join), st.integers(0, 12))
@example(b"1-0", 0)
@example(b"x1-0 0-1", 1)        # the look-behind sees the byte before the start
@example(b"e4 1-0a 0-1\n", 0)   # a marker followed by a symbol character is none
@example(b"e4 1/2-1/2", 3)
@example(b"1/2-1/", 0)
@example(b"(1-0)", 0)
@example(b"e4 *", 0)
@example(b"1-0", 5)
def test_result_end_is_the_marker_regex(rest: bytes, start: int) -> None:
    from chessscan.readers.pgn import _RESULT_B, _result_end

    m = _RESULT_B.search(rest, start)
    assert _result_end(rest, start) == (-1 if m is None else m.end())


def test_result_end_values() -> None:
    from chessscan.readers.pgn import _result_end

    assert _result_end(b"1. e4 e5 1-0\n", 0) == 12
    assert _result_end(b"1. e4 e5 1-0\n", 9) == 12
    assert _result_end(b"1-0 0-1", 1) == 7          # the second: '-0 0-1' has no marker at 1 or 2
    assert _result_end(b"x1-0", 1) == -1            # preceded by a symbol character
    assert _result_end(b"1-0x 0-1", 0) == 8         # followed by one
    assert _result_end(b"31. Kh1 1/2-1/2", 0) == 15
    assert _result_end(b"e4 *e5", 0) == 4           # '*' anywhere
    assert _result_end(b"12.1-0", 0) == 6           # after a move number's period
    assert _result_end(b"", 0) == -1


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=12), st.integers(0, 14))
@example(b" \t\x00\x1a\x7f\r\n", 0)
@example(b"\x00e", 1)
@example(b"\x80", 0)
def test_has_text_is_strip_junk(b: bytes, start: int) -> None:
    from chessscan.readers.pgn import _JUNK, _has_text

    assert _has_text(b, start) == bool(b[start:].strip(_JUNK))


def test_has_text_values() -> None:
    from chessscan.readers.pgn import _has_text

    assert not _has_text(b"1-0 \r\n", 3)
    assert not _has_text(b"1-0\x00\x1a\n", 3)      # NULs and a DOS end of file are junk
    assert _has_text(b"1-0 [Event", 3)
    assert _has_text(b"1-0\xc3\xa9", 3)             # a non-ASCII byte is text
    assert not _has_text(b"1-0", 7)
    assert not _has_text(b"1-0\x7f", 3)             # DEL is a control character


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from([b" ", b"\t", b"\n", b"\r", b"\x0b", b"\x0c", b"\x1c", b"\x00", b"{", b"}", b"a",
                                 b"1."]), max_size=6).map(b"".join))
def test_first_is_brace_is_where_the_first_comment_regex_may_match(text: bytes) -> None:
    from chessscan.readers.pgn import _first_is_brace

    assert _first_is_brace(text) == (re.match(rb"\s*\{", text) is not None)


def test_first_is_brace_values() -> None:
    from chessscan.readers.pgn import _first_is_brace

    assert _first_is_brace(b"  \r\n{ a comment } 1. e4")
    assert not _first_is_brace(b"1. e4 { a comment }")
    assert not _first_is_brace(b"\x1c{x}")          # not whitespace for \s in a bytes regex
    assert not _first_is_brace(b"   ")


# --------------------------------------------------------------------------
# _Span: a chunk's lines made as they are read, and a tag section's lines taken in one go.

_SPAN_PIECES = st.sampled_from([b'[Event "a"]', b'[Site "b]"]', b"[", b"]", b"1. e4 e5", b" ", b"\t", b"\x00",
                                b"{ c }", b"%", b"\n", b"\r", b"\r\n", b"\n\n", b"1-0"])


def _take_reference(lines: list[bytes]) -> tuple[int, bool]:
    """How many of ``lines`` the tag-section loop of the reader would only append after a tag
    line (tag lines while no blank line came, blank lines), and whether a blank line came."""
    taken = 0
    gap = False
    for line in lines:
        if line[:1] == b"[" and not gap:
            if not line.endswith((b"]\n", b"]\r\n", b"]\r", b"]")):  # a tag line's usual end
                break
        elif not line.strip():
            gap = True
        else:
            break
        taken += 1
    return taken, gap


@settings(max_examples=400, deadline=None)
@given(st.lists(_SPAN_PIECES, min_size=1, max_size=30).map(b"".join), st.sampled_from([[], [b"[Ev"], [b"x\r"]]),
       st.sampled_from([0, 1, 2]))
def test_span_gives_the_lines_splitlines_gives(chunk: bytes, parts: list[bytes], skip: int) -> None:
    span = pgn_module._chunk_span(chunk, list(parts))
    if span is None:
        # Only when the list path must read it: no line end, a '\r' ending the pieces before,
        # or a first line ended by a '\r' that ends the chunk.
        first = min([k for k in (chunk.find(b"\n"), chunk.find(b"\r")) if k >= 0], default=len(chunk))
        assert first == len(chunk) or (parts and parts[-1].endswith(b"\r")) or (
            parts and chunk[first] == 13 and first + 1 == len(chunk))
        return
    rest = chunk[span.end:]
    assert b"\n" not in rest and b"\r" not in rest[:-1]   # the unfinished last line only
    lines = (b"".join(parts) + chunk[:span.end]).splitlines(True)
    # After a line read (the head, or `skip` lines on), the lines after it are taken as the
    # reader's tag-section loop would take them, as whole lines.
    head = [next(span) for _ in range(min(skip + bool(parts), len(lines)))]
    assert head == lines[:len(head)]
    if not head:
        assert list(span) == lines
        return
    taken: list[bytes] = []
    n = span.take_tag_lines(taken, head[-1])
    assert (n, span.gap) == _take_reference(lines[len(head):])
    # One bytes object (the head's pieces are not the chunk's: it comes apart from those after it).
    assert len(taken) == (2 if parts and len(head) == 1 and n else 1)
    assert pgn_module._tag_line_list(taken) == lines[len(head) - 1:len(head) + n]
    assert head[:-1] + pgn_module._tag_line_list(taken) + list(span) == lines


def test_span_values() -> None:
    span = pgn_module._chunk_span(b'[Event "a"]\r\n[Site "b"]\n\n1. e4 *\n[Ev', [])
    taken: list[bytes] = []
    assert span.take_tag_lines(taken, next(span)) == 2 and span.gap
    assert taken == [b'[Event "a"]\r\n[Site "b"]\n\n']   # the section's lines as one bytes object
    assert pgn_module._tag_line_list(taken) == [b'[Event "a"]\r\n', b'[Site "b"]\n', b"\n"]
    assert list(span) == [b"1. e4 *\n"]          # '[Ev': the next chunk ends it
    span = pgn_module._chunk_span(b'"]\n[Site "b"]\n1. e4 *\n', [b'[Event "a'])
    taken = []
    assert span.take_tag_lines(taken, next(span)) == 1 and not span.gap
    assert taken == [b'[Event "a"]\n', b'[Site "b"]\n']      # the head, then the lines after it
    # Between games: the lines with no text that come next (whitespace, control characters).
    span = pgn_module._chunk_span(b'1-0\n\n \x00\x7f\r\n\x7f\n[Event "b"]\n', [])
    assert next(span) == b"1-0\n"
    assert span.skip_blank_lines() == 2 and span.skipped == 6
    assert list(span) == [b"\x7f\n", b'[Event "b"]\n']          # (a first byte 0x7f is not passed)
    span = pgn_module._chunk_span(b' *\n\n[Event "b"]\n', [b"1. e4"])
    assert span.skip_blank_lines() == 0 and span.skipped == 0     # the head comes first
    assert next(span) == b"1. e4 *\n" and span.skip_blank_lines() == 1 and span.skipped == 1
    assert pgn_module._chunk_span(b"no line end", []) is None
