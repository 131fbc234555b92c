"""The movetext module (compiled, or its source under CHESSSCAN_PURE=1) gives exactly the
results of the reader's earlier bytes-method and regex implementations, kept here as the
reference."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chessscan.readers import movetext

# ---- reference: the reader's implementations before chessscan.readers.movetext ----

_RESULTS = {b"1-0": "1-0", b"0-1": "0-1", b"1/2-1/2": "1/2-1/2", b"*": "*"}
_STRIP_B = re.compile(rb"\{[^}]*\}|;[^\r\n]*")
_COMMENTS_B = re.compile(rb"\{[^}]*\}?|;[^\r\n]*")
_SAN_FAST = r"(?:[NBRQK][a-h]?[1-8]?x?[a-h][1-8]|[a-h](?:x[a-h])?[1-8](?:=[NBRQ])?|O-O(?:-O)?)[+#]?"
_FAST_TOKEN_B = re.compile((r"(\d*\.)|(" + _SAN_FAST + ")").encode())
_TOKEN_CACHE: dict[bytes, str] = {}


def reference_fast_movetext(cb: bytes, piece: int = 1 << 18) -> tuple[list[str] | None, str | None]:
    if not cb.isascii():
        return None, None
    if len(cb) > piece:
        sans: list[str] = []
        result = None
        i = 0
        while i < len(cb):
            j = i + piece
            if j < len(cb):
                j = max(cb.rfind(b" ", i, j), cb.rfind(b"\n", i, j), cb.rfind(b"\r", i, j), cb.rfind(b"\t", i, j))
                if j <= i:
                    return None, None
            part, result = reference_fast_movetext(cb[i:j], piece)
            if part is None or (result is not None and cb[j:].strip()):
                return None, None
            sans += part
            i = j
        return sans, result
    if b"." in cb:
        cb = cb.replace(b"...", b".").replace(b".", b". ")
    toks = cb.split()
    result = None
    if toks:
        result = _RESULTS.get(toks[-1])
        if result is not None:
            toks.pop()
    vals = list(map(_TOKEN_CACHE.get, toks))
    if None in vals:
        for i, v in enumerate(vals):
            if v is None:
                t = toks[i]
                m = _FAST_TOKEN_B.fullmatch(t)
                if m is None:
                    return None, None
                v = vals[i] = "" if m.lastindex == 1 else t.decode("ascii")
                _TOKEN_CACHE[t] = v
    return list(filter(None, vals)), result


def reference_blank_comments(rest: bytes) -> tuple[bytes, int, bool]:
    stripped, n = _STRIP_B.subn(b" ", rest)
    k = stripped.find(b"{")
    if k >= 0:
        return stripped[:k], len(_COMMENTS_B.findall(rest)), True
    return stripped, n, False


# ---- tokens ----

FILES = "abcdefgh"
SAN_TOKENS = [
    "e4", "d5", "exd5", "axb8=Q", "h1=N", "g8=R+", "fxe1=B#", "c8=Q#", "Nf3", "Nbd7", "N1f3",
    "Ng1xf3", "Nxe5", "Bb5+", "Qh5#", "Qa1xb2+", "Rxe8", "Kxf7", "Ra1a8", "O-O", "O-O-O",
    "O-O+", "O-O-O#", "Kg1", "Rfe1", "R8a7", "Qxd8+",
]
JUNK_TOKENS = [
    "e9", "i4", "Nf3!", "e4?", "Nf3!?", "$1", "$14", "{", "}", "{a}", "{ [%clk 0:01:00] }", ";",
    "; x", "(", ")", "0-0", "0-0-0", "O-O-O-O", "P", "Pe4", "e8=K", "e8Q", "exd", "ex", "e",
    "Nf", "N", "K+", "+", "#", "e4++", "e4+#", "Zf3", "nf3", "1-0-", "1/2", "1/2-1/", "½-½",
    "--", "Z0", "null", "e4.", ".e4", "e.4", "\u00e9", "\x00", "\x7f", "N\xff3", "Nf3 ",
    "12", "1-", "-0", "**", "1-01", "0-10", "e4e5", "Qa1xb2=Q", "exd8=Q++", "a", "Oo",
]
NUMBERS = ["1.", "12.", "12...", "123.", ".", "...", "....", "1..", "12..", "1....", "0.", "9999."]
RESULT_TOKENS = ["1-0", "0-1", "1/2-1/2", "*"]
SPACES = [" ", "  ", "\t", "\n", "\r\n", "\r", "\x0b", "\x0c", " \n "]


def _glue(parts: list[str]) -> str:
    return "".join(parts)


token = st.one_of(
    st.sampled_from(SAN_TOKENS),
    st.sampled_from(NUMBERS),
    st.builds(_glue, st.lists(st.sampled_from(NUMBERS + SAN_TOKENS + RESULT_TOKENS), min_size=2, max_size=3)),
    st.sampled_from(RESULT_TOKENS),
    st.sampled_from(JUNK_TOKENS),
    st.text(alphabet="abcdefghNBRQKOx12345678=+#-./*0 {};()$!?", max_size=6),
)
movetext_text = st.builds(
    lambda toks, seps, tail: "".join(t + s for t, s in zip(toks, seps)) + tail,
    st.lists(token, max_size=40),
    st.lists(st.sampled_from(SPACES), min_size=40, max_size=40),
    st.sampled_from(["", " ", "\n", "1-0", " 1-0", " 0-1\n", " 1/2-1/2 ", " *", "*", " 1-0 e4"]),
)


def encode(text: str) -> bytes:
    return text.encode("utf-8") if not text.isascii() else text.encode("ascii")


def same_movetext(cb: bytes, piece: int = 1 << 18) -> None:
    got = movetext.fast_movetext(cb, piece)
    want = reference_fast_movetext(cb, piece)
    assert got == want
    if got[0] is not None:
        assert all(type(s) is str for s in got[0])


EDGE_MOVETEXT = [
    b"", b" ", b"\n\r\t\x0b\x0c", b"1.", b"1...", b"...", b".", b"1-0", b"*", b"1/2-1/2", b" 1-0 ",
    b"1. e4 e5 2. Nf3 Nc6 1-0", b"1.e4 e5 2.Nf3 Nc6 *", b"1...e5", b"12...Nf6 13.O-O-O#",
    b"1. e4 1-0 e5", b"1. e4 1-0 1-0", b"1. e4 *1-0", b"1.1-0", b"1. e4 e5.", b"1. e4 e5 2.",
    b"1. exd8=Q+ exd1=N#", b"1. e4 e9", b"1. Nf3!", b"1. e4 $1", b"1. e4 { x } e5", b"1. e4 ( e5 )",
    b"1. e4 \xc3\xa9", b"1. e4\x00e5", b"1.e4\x1ce5", b"1. e4\x85e5", b"12Nf3", b"1.2.3.", b"1.2",
    b"a.b", b"e4..e5", b"1. 0-0", b"1. O-O O-O-O", b"1. e4 e5 1/2-1/2\r\n", b"Qa1xb2+ Qa1xb2+",
    b"Ra1a8 N1f3 Ng1xf3", b"1. e4 1-", b"1. e4 1/2", b"1 . e4", b"1.\te4\n1-0\n",
]


@pytest.mark.parametrize("cb", EDGE_MOVETEXT)
def test_fast_movetext_edge_cases(cb):
    same_movetext(cb)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(text=movetext_text)
@example(text="1. e4 e5 2. Nf3 1-0")
@example(text="1.e4 e5 2.Nf3 1-0 1. d4")
def test_fast_movetext_matches_reference(text):
    same_movetext(encode(text))


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(text=movetext_text, piece=st.integers(min_value=1, max_value=64))
def test_fast_movetext_pieces_match_reference(text, piece):
    same_movetext(encode(text), piece)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(data=st.binary(max_size=200))
def test_fast_movetext_any_bytes(data):
    same_movetext(data)


def test_equal_moves_share_one_str():
    first, _ = movetext.fast_movetext(b"1. Nf3 Nf6 2. O-O-O+")  # (a token not seen before is new)
    sans, _ = movetext.fast_movetext(b"1. Nf3 Nf6 2. Nf3 Nf6 3. O-O-O+ O-O-O+")
    assert sans == ["Nf3", "Nf6", "Nf3", "Nf6", "O-O-O+", "O-O-O+"]
    assert sans[0] is sans[2] is first[0] and sans[1] is sans[3] is first[1] and sans[4] is sans[5] is first[2]


comment_line = st.lists(
    st.sampled_from(["{", "}", ";", "{ c }", "{}", "; c", "e4", " ", "\t", "\r", "\n", "\r\n", "1.", "x",
                     "{ [%clk 0:00:10] }", "(", ")", "\u00e9", "%"]),
    max_size=30,
).map(lambda parts: encode("".join(parts)))

EDGE_LINES = [
    b"", b"{", b"}", b";", b"{}", b"{;}", b"{ a ; b", b"; a { b }", b"; a \r { b", b"; a \n { b",
    b"{ a } { b", b"{ a } ; b { c } \r\n", b"e4 { a } e5 { b } 1-0\n", b"e4 {", b"e4 { a\n",
    b"{ { } }", b"} { a }", b"; a\r\n", b";\n;\n", b"{ \xc3\xa9 } e4 ; \xff", b"{{{", b"{ a ; b } ; c",
]


@pytest.mark.parametrize("line", EDGE_LINES)
def test_blank_comments_edge_cases(line):
    assert movetext.blank_comments(line) == reference_blank_comments(line)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(line=comment_line)
def test_blank_comments_matches_reference(line):
    assert movetext.blank_comments(line) == reference_blank_comments(line)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(line=st.binary(max_size=200))
def test_blank_comments_any_bytes(line):
    assert movetext.blank_comments(line) == reference_blank_comments(line)


# ---- fast_keys: fast_movetext's moves as keys ----

def same_keys(cb: bytes, piece: int = 1 << 18) -> None:
    keys, result = movetext.fast_keys(cb, piece)
    want = reference_fast_movetext(cb, piece)
    got = (None if keys is None else [movetext.key_text(k) for k in movetext.key_list(keys)], result)
    assert got == want
    if keys is not None:
        assert movetext.san_keys(want[0]) == keys


@pytest.mark.parametrize("cb", EDGE_MOVETEXT)
def test_fast_keys_edge_cases(cb):
    same_keys(cb)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(text=movetext_text)
def test_fast_keys_matches_reference(text):
    same_keys(encode(text))


@pytest.mark.parametrize("tail", [b"1-0\n", b"e4 e5 *", b"e4 Qh9 *", b"1-0 e4"])
def test_fast_keys_of_a_movetext_longer_than_a_piece(tail):
    # Compiled, one pass over the whole text; the reference reads it in pieces.
    cb = b"1. Nf3 Nf6 2. Ng1 Ng8 " * 14_000 + tail
    assert len(cb) > movetext.FAST_PIECE
    same_keys(cb)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(data=st.binary(max_size=200))
def test_fast_keys_any_bytes(data):
    same_keys(data)


def test_keys_give_the_text_back():
    for san in SAN_TOKENS:
        assert movetext.key_text(movetext.san_key(san)) == san
    assert movetext.san_key("exd8=Q++") == movetext.san_key("P@e4\u00e9") == movetext.san_key("") == 0
    keys = movetext.key_list(movetext.san_keys(["e4", "Pa7xb8=Q++", "O-O"]))
    assert keys[1] == movetext.LOOSE_KEY | 1 and movetext.key_text(keys[2]) == "O-O"


# ---- tag_pairs: the reader's tag-section regex split, kept here as the reference ----

_TAG_NAME = r"[A-Za-z0-9][A-Za-z0-9_+#=:-]*"
_TAG_RE = re.compile(r'\[\s*(' + _TAG_NAME + r')\s*"([^"\\\r\n]*(?:\\.[^"\\\r\n]*)*)"\s*\]')


def reference_tag_pairs(tag_b: bytes, codec: str) -> dict[str, str] | None:
    tag_s = tag_b.decode(codec)
    parts = _TAG_RE.split(tag_s)
    names = parts[1::3]
    tags = dict(zip(names, parts[2::3]))
    if "".join(parts[0::3]).strip() or len(tags) != len(names) or "\\" in tag_s:
        return None
    return tags


def _same_tags(tag_b: bytes, codec: str = "utf-8") -> None:
    try:
        expected = reference_tag_pairs(tag_b, codec)
    except UnicodeDecodeError:
        with pytest.raises(UnicodeDecodeError):
            movetext.tag_pairs(tag_b, codec)
        return
    got = movetext.tag_pairs(tag_b, codec)
    assert got == expected, tag_b
    if got is not None:  # same order of names, as the games table's extra tags keep it
        assert list(got) == list(expected)


_TAG_PIECES = st.sampled_from([
    "[", "]", '"', " ", "\t", "\r\n", "\n", "\r", "\v", "\f", "\x1c", "\xa0", "\u2003", "\\", '\\"',
    "Event", "Site", "White", "e", "1", "_x", "a+#=:-", "é", "x y", "", ";", "{c}", "%", "[Event \"",
    '"]', "Ü", "\x00",
])


@st.composite
def _tag_sections(draw) -> bytes:
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        if draw(st.booleans()):
            ws = draw(st.sampled_from(["", " ", "\t", "  "]))
            name = draw(st.sampled_from(["Event", "Site", "Date", "WhiteElo", "X_1", "a+#=:-", "9z", "_bad",
                                         "Ké", "Event"]))
            value = draw(st.text(alphabet=st.sampled_from('abc 1.-?é"\\\t'), max_size=8))
            gap = draw(st.sampled_from(["", " ", "\t", "\n", "  "]))
            lines.append(f"{ws}[{name}{gap or ' '}\"{value}\"{draw(st.sampled_from(['', ' ']))}]")
        else:
            lines.append("".join(draw(st.lists(_TAG_PIECES, max_size=8))))
    end = draw(st.sampled_from(["\n", "\r\n", "\r", " \n"]))
    return "".join(line + end for line in lines).encode("utf-8")


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_tag_sections())
@example(b'[Event "x"]\n[Site "y"]\n')
@example(b'[Event "x"]\n[Event "y"]\n')
@example(b'[Event\n"x"\n]\n')
@example(b'[Event"x"]')
@example(b'[Event "a\\"b"]\n')
@example(b'[Event "x"] junk\n')
@example(b'[Event "x"]\x0b\n')
@example(b'[Event "x"]\xc2\xa0\n')
@example(b'[Event "\xc3\xa9"]\n')
@example(b'[_E "x"]\n')
@example(b'[Event "x\r\n"]\n')
@example(b'')
def test_tag_pairs_equals_reference(tag_b: bytes) -> None:
    _same_tags(tag_b)


@pytest.mark.parametrize("tag_b, codec", [
    (b'[Event "\xe9"]\n', "latin-1"), (b'[Event "\xe9"]\n', "utf-8"), (b'[Event "\x93x\x94"]\n', "cp1252"),
    (b'[Ev\xe9nt "x"]\n', "latin-1"),
])
def test_tag_pairs_other_codecs(tag_b: bytes, codec: str) -> None:
    _same_tags(tag_b, codec)


@pytest.mark.parametrize("name", ["lichess-magnus.pgn.zst", "pgnmentor-players-dedup.pgn.zst",
                                  "tcec-archive-nocomments.pgn.zst"])
def test_tag_pairs_on_corpora(name: str) -> None:
    """Every tag section in the first 20 MB of a real corpus: the same pairs as the reference."""
    import itertools

    from chessscan.readers.sources import open_source

    from conftest import shared_path

    sections = 0
    with open_source(str(shared_path("games", name))) as stream:
        text = stream.read(20 << 20)
    lines = text.splitlines(keepends=True)
    for is_tag, group in itertools.groupby(lines, key=lambda ln: ln.lstrip()[:1] == b"["):
        if is_tag:
            _same_tags(b"".join(group))
            sections += 1
    assert sections > 5_000


def test_tag_pairs_values_repeated_from_section_to_section() -> None:
    """Values are kept from one section to the next by position (compiled): a value equal to
    the last section's at its position, one of the same length that differs, a non-ASCII one
    and an ASCII one after it, a shorter and a longer one, all read as written."""
    sections = [
        b'[Event "Rated Blitz"]\n[Site "a"]\n[White "Ab"]\n',
        b'[Event "Rated Blitz"]\n[Site "b"]\n[White "\xc3\x89b"]\n',
        b'[Event "Rated Blitz"]\n[Site "b"]\n[White "Eb"]\n[Black "x"]\n',
        b'[Event "Rated Blitz"]\n[Site ""]\n[White "Eb "]\n',
        b'[Event "Rated Bullet"]\n[Site ""]\n[White "E"]\n[Black "x"]\n',
        b'[Site "Rated Bullet"]\n[Event "x"]\n',
        b'[Event "Rated Bullet"]\r\n[Site ""]\r\n[White "\xc3\x89b"]\r\n',
    ]
    got = [movetext.tag_pairs(s, "utf-8") for s in sections]
    assert got == [reference_tag_pairs(s, "utf-8") for s in sections]
    assert got[1]["White"] == "Éb" and got[2]["White"] == "Eb" and got[3]["White"] == "Eb "
    assert got[5] == {"Site": "Rated Bullet", "Event": "x"}
