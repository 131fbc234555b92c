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
