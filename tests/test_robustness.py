"""No input crashes the analysis or loses a game that follows the broken part.

Each hand-made case puts a *sentinel* game (a scholar's mate, 7 plies, no issue) after the
broken bytes and checks that it is read and analyzed in full; truncated compressed streams,
which can hold nothing after the cut, get the sentinel in the next file of the same run.
Every case also checks the accounting: every game is counted once, either ok or with errors.
Property tests (hypothesis) throw random bytes, PGN token soup and mutated real games at
the analysis with the same checks; seeded mutations of real games (PGN-significant characters
inserted, bytes deleted or swapped) are also read with --jobs 2, which must give the rows and
the summary of --jobs 1.
"""

from __future__ import annotations

import bz2
import gzip
import json
import random
import re

import pytest
import zstandard
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from chessscan.analysis.options import AnalysisOptions
from chessscan.engines import parallel
from chessscan.engines.local import run
from chessscan.engines.parallel import run_parallel
from chessscan.readers.pgn import MAX_GAME_BYTES
from chessscan.readers.sources import binary_kind, detect_compression, detect_utf16
from chessscan.readers.tables import _MAGIC as TABLE_MAGIC
from conftest import SAMPLES

SENTINEL = (b'[Event "Sentinel"]\n[White "Sentinel W"]\n[Black "Sentinel B"]\n[Result "1-0"]\n\n'
            b"1. e4 e5 2. Bc4 Nc6 3. Qh5 Nf6 4. Qxf7# 1-0\n")
SENTINEL_PLIES = 7
MAGNUS = SAMPLES / "lichess-magnus-300.pgn"


class Recorder:
    """A run() sink keeping the games and issues rows (as dicts)."""

    def __init__(self) -> None:
        self.games: list[dict] = []
        self.issues: list[dict] = []

    def write(self, table: str, columns: dict[str, list]) -> None:
        rows = [dict(zip(columns, values)) for values in zip(*columns.values())]
        if table == "games":
            self.games += rows
        elif table == "issues":
            self.issues += rows


def analyze(*paths, cross_check: str = "off"):
    """Run the analysis as `validate` does; returns (summary, games rows, issues rows)."""
    rec = Recorder()
    tally = run([str(p) for p in paths], rec, AnalysisOptions(positions="none", cross_check=cross_check))
    summary = tally.as_dict()
    check_accounting(summary, rec.games, rec.issues)
    return summary, rec.games, rec.issues


def check_accounting(summary: dict, games: list[dict], issues: list[dict]) -> None:
    """Every game is counted once, as ok or with errors, and every issue names a game that
    was counted (or is an EPD line)."""
    assert summary["games_read"] == len(games)
    assert summary["games_read"] == summary["games_ok"] + summary["games_with_errors"]
    assert summary["games_with_errors"] == sum(g["error_code"] is not None for g in games)
    keys = {(g["source"], g["game_index"]) for g in games}
    assert len(keys) == len(games)
    assert all((i["source"], i["game_index"]) in keys for i in issues if i["game_index"] is not None)
    assert sum(summary["issues_by_code"].values()) == len(issues)


def assert_sentinel_last(games: list[dict], issues: list[dict]) -> None:
    last = games[-1]
    assert (last["white"], last["black"], last["plies"]) == ("Sentinel W", "Sentinel B", SENTINEL_PLIES), last
    assert last["error_code"] is None and last["outcome"] == "checkmate"
    assert not [i for i in issues if (i["source"], i["game_index"]) == (last["source"], last["game_index"])]


def _shuffle(plies: int) -> bytes:
    """A legal knight shuffle of ``plies`` plies (a multiple of 4), the same 4 positions over
    and over."""
    moves = [f"{2 * i + 1}. Nf3 Nf6 {2 * i + 2}. Ng1 Ng8" for i in range(plies // 4)]
    return " ".join(moves).encode()


# (id, bytes before the sentinel, plies of each game before it or None when the count of
# games is not defined, codes that must be reported)
CASES = [
    ("binary-garbage", bytes(range(256)) * 8 + b"\n\n", None, {"decode-fallback"}),
    ("nul-bytes", b"\x00" * 5000 + b"\n", [], set()),
    ("unclosed-comment", b'[Event "A"]\n\n1. e4 { never closed\n\n', [1], {"unclosed-comment"}),
    ("unclosed-comment-tags-inside", b'[Event "A"]\n\n1. e4 { [Event "fake"] and\n[Site "x"]\n\n', [1],
     {"unclosed-comment"}),
    ("unclosed-variation", b'[Event "A"]\n\n1. e4 ( 1. d4 d5 2. c4\n\n', [1], {"unbalanced-variation"}),
    ("stray-close-paren", b'[Event "A"]\n\n1. e4 ) e5 2. Nf3 1-0\n\n', None, {"unbalanced-variation"}),
    ("stray-close-brace", b'[Event "A"]\n\n1. e4 } e5 *\n\n', [1], {"unexpected-token"}),
    ("no-tag-section", b"1. e4 e5 2. Nf3 Nc6 *\n\n", [4], {"missing-tags"}),
    ("no-tags-no-result", b"1. d4 d5 2. c4\n\n", [3], {"missing-tags", "missing-result"}),
    ("no-blank-line-after-tags", b'[Event "A"]\n[Result "*"]\n1. e4 e5 *\n', [2], set()),
    ("blank-lines-inside-tags", b'[Event "A"]\n\n[Site "B"]\n\n[Result "*"]\n\n1. e4 *\n\n', [1], set()),
    ("results-inside-comments", b'[Event "A"]\n\n1. e4 {1-0} e5 {0-1 *} 2. Nf3 ; 1/2-1/2\n Nc6 *\n\n', [4], set()),
    ("result-inside-variation", b'[Event "A"]\n\n1. e4 (1. d4 1-0) e5 *\n\n', [2], set()),
    ("missing-result-then-tags", b'[Event "A"]\n\n1. e4 e5\n', [2], {"missing-result"}),
    ("tag-without-quotes", b'[Event A]\n[Site "x"]\n\n1. e4 *\n\n', None, {"bad-tag"}),
    ("unterminated-tag", b'[Event "A\n\n1. e4 *\n\n', None, set()),
    ("escape-lines", b'% a comment line\n[Event "A"]\n\n%x\n1. e4 e5 *\n\n', [2], set()),
    ("null-moves", b'[Event "A"]\n\n1. e4 -- 2. Z0 e5 3. Nf3 *\n\n', [5], {"null-move"}),
    ("unknown-variant", b'[Event "A"]\n[Variant "Atomic"]\n\n1. e4 e5 *\n\n', [0], {"unsupported-variant"}),
    ("variant-nonsense", b'[Event "A"]\n[Variant "\xff\xfe"]\n\n1. e4 *\n\n', [0], {"unsupported-variant"}),
    ("invalid-fen", b'[Event "A"]\n[FEN "8/8/8 w"]\n\n1. e4 *\n\n', [0], {"invalid-fen"}),
    ("illegal-move", b'[Event "A"]\n\n1. e4 e5 2. Ke3 Nc6 *\n\n', [2], {"illegal-move"}),
    ("cp1252", '[Event "A"]\n[White "Müller, Jürgen – “Ö”"]\n\n1. e4 {café} e5 *\n\n'.encode("cp1252"),
     [2], {"decode-fallback"}),
    ("latin-1", b'[Event "A"]\n[White "\x81\x8d\x8f\x90\x9d\xe9"]\n\n1. d4 *\n\n', [1], {"decode-fallback"}),
    ("utf8-bom-mid-file", b'\xef\xbb\xbf[Event "A"]\n\n1. e4 *\n\n\xef\xbb\xbf', [1], set()),
    ("cr-only", b'[Event "A"]\r\r1. e4 e5 *\r\r', [2], set()),
    ("crlf", b'[Event "A"]\r\n\r\n1. e4 e5 *\r\n\r\n', [2], set()),
    ("very-long-comment", b'[Event "A"]\n\n1. e4 {' + b"a" * (MAX_GAME_BYTES - 100) + b"} e5 *\n\n", [2], set()),
    ("very-long-line", b'[Event "A"]\n\n1. e4 {' + b"ab " * (MAX_GAME_BYTES // 3 - 100) + b"} e5 *\n\n", [2], set()),
    # Over the cap: the line is cut between tokens (its "1. e4" is kept), the game is
    # reported, the next one is read.
    ("comment-over-the-cap", b'[Event "A"]\n\n1. e4 {' + b"a" * (MAX_GAME_BYTES + 100) + b"} e5 *\n\n", [1],
     {"game-too-long"}),
    ("game-over-the-cap", b'[Event "A"]\n\n' + b"1. e4 e5 2. Nf3 Nf6 3. Ng1 Ng8\n" * (MAX_GAME_BYTES // 30)
     + b"*\n\n", None, {"game-too-long"}),
    ("very-long-game", b'[Event "A"]\n[Result "1/2-1/2"]\n\n' + _shuffle(3000) + b" 1/2-1/2\n\n", [3000], set()),
]


@pytest.mark.parametrize("data, plies, codes", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_broken_part_does_not_lose_the_next_game(tmp_path, data, plies, codes):
    path = tmp_path / "case.pgn"
    path.write_bytes(data + SENTINEL)
    summary, games, issues = analyze(path)
    assert_sentinel_last(games, issues)
    if plies is not None:
        assert [g["plies"] for g in games[:-1]] == plies
    assert codes <= {i["code"] for i in issues}


@pytest.mark.parametrize("data", [b"", b"\n\n\n", b"   \t\r\n", b"\xef\xbb\xbf\n", b"% only an escape line\n",
                                  b"; a comment\n{ and another }\n"],
                         ids=["empty", "newlines", "whitespace", "bom-line", "escape-line", "comments"])
def test_files_without_games(tmp_path, data):
    """Read whole, no game: one warning (the command line reports an empty or blank file
    before reading it, with the same code)."""
    path = tmp_path / "nothing.pgn"
    path.write_bytes(data)
    summary, games, issues = analyze(path)
    assert summary["games_read"] == 0 and games == []
    assert [(i["code"], i["severity"], i["game_index"]) for i in issues] == [("empty-input", "warning", None)]


def test_sentinel_in_the_same_file_after_every_case(tmp_path):
    """All cases one after the other in one file: none swallows the cases after it."""
    path = tmp_path / "all.pgn"
    path.write_bytes(b"".join(data + SENTINEL for _, data, _, _ in CASES))
    summary, games, issues = analyze(path)
    sentinels = [g for g in games if g["white"] == "Sentinel W"]
    assert len(sentinels) == len(CASES)
    assert all(g["plies"] == SENTINEL_PLIES and g["error_code"] is None for g in sentinels)


# --------------------------------------------------------------------------- compressed input


def _first_games(n: int) -> bytes:
    data = MAGNUS.read_bytes()
    starts = [m.start() for m in re.finditer(rb"^\[Event ", data, re.M)]
    return data[: starts[n]]


COMPRESSORS = {
    "gz": gzip.compress,
    "bz2": bz2.compress,
    "zst": lambda b: zstandard.ZstdCompressor(level=3).compress(b),
}


@pytest.mark.parametrize("suffix", sorted(COMPRESSORS))
@pytest.mark.parametrize("keep", [0.1, 0.5, 0.9, 0.999])
def test_truncated_stream_keeps_the_games_before_the_cut(tmp_path, suffix, keep):
    plain = _first_games(100)
    packed = COMPRESSORS[suffix](plain)
    full = tmp_path / f"full.pgn.{suffix}"
    full.write_bytes(packed)
    cut = tmp_path / f"cut.pgn.{suffix}"
    cut.write_bytes(packed[: int(len(packed) * keep)])
    sentinel = tmp_path / "next.pgn"
    sentinel.write_bytes(SENTINEL)

    _, full_games, _ = analyze(full)
    summary, games, issues = analyze(cut, sentinel)
    assert_sentinel_last(games, issues)
    cut_games = [g for g in games if g["source"] == str(cut)]
    assert cut_games, "the truncation must be reported on a game"
    truncated = [i for i in issues if i["code"] == "truncated-input"]
    assert len(truncated) == 1 and truncated[0]["severity"] == "error"
    assert truncated[0]["game_index"] == cut_games[-1]["game_index"]
    assert cut_games[-1]["error_code"] is not None
    # Every game before the cut is read exactly as from the whole stream.
    same = ("white", "black", "plies", "outcome", "error_code", "line", "byte_offset")
    for got, want in zip(cut_games[:-1], full_games):
        assert {k: got[k] for k in same} == {k: want[k] for k in same}
    assert len(cut_games) <= len(full_games) + 1


@pytest.mark.parametrize("suffix, head", [("gz", b"\x1f\x8b\x08\x00"), ("zst", b"\x28\xb5\x2f\xfd"),
                                          ("bz2", b"BZh9")])
def test_corrupt_compressed_stream(tmp_path, suffix, head):
    bad = tmp_path / f"bad.pgn.{suffix}"
    bad.write_bytes(head + bytes(range(256)) * 4)
    sentinel = tmp_path / "next.pgn"
    sentinel.write_bytes(SENTINEL)
    summary, games, issues = analyze(bad, sentinel)
    assert_sentinel_last(games, issues)
    assert [i["code"] for i in issues] == ["truncated-input"]


@pytest.mark.parametrize("suffix", ["gz", "bz2"])  # zst: test_junk_after_a_zstd_frame_keeps_the_frame
def test_trailing_garbage_after_a_compressed_stream(tmp_path, suffix):
    path = tmp_path / f"tail.pgn.{suffix}"
    path.write_bytes(COMPRESSORS[suffix](SENTINEL) + b"garbage after the stream")
    summary, games, issues = analyze(path)
    sentinel = [g for g in games if g["white"] == "Sentinel W"]
    assert len(sentinel) == 1 and sentinel[0]["plies"] == SENTINEL_PLIES


@pytest.mark.parametrize("suffix", sorted(COMPRESSORS))
def test_empty_compressed_streams(tmp_path, suffix):
    for name, data in (("empty", COMPRESSORS[suffix](b"")), ("zero", b"")):
        path = tmp_path / f"{name}.pgn.{suffix}"
        path.write_bytes(data)
        summary, games, issues = analyze(path)
        assert summary["games_read"] == 0, name
        assert [i["code"] for i in issues] == ["empty-input"], name


# --------------------------------------------------------------------------- bugs outside these files


def test_percent_line_inside_a_comment_before_an_error(tmp_path):
    path = tmp_path / "percent.pgn"
    path.write_bytes(b'[Event "A"]\n\n1. e4 {\n%} e5 2. Ke3 *\n\n' + SENTINEL)
    summary, games, issues = analyze(path)
    assert_sentinel_last(games, issues)
    assert [i["code"] for i in issues] == ["illegal-move"]


@pytest.mark.parametrize("data", [b"\xef\xbb\xbf", SENTINEL + b"\n\xef\xbb\xbf"], ids=["bom-only", "bom-at-end"])
def test_file_ending_with_a_bare_bom(tmp_path, data):
    path = tmp_path / "bom.pgn"
    path.write_bytes(data)
    summary, games, issues = analyze(path)
    assert [i["code"] for i in issues] == ([] if games else ["empty-input"])
    assert len(games) == (1 if data.startswith(SENTINEL) else 0)


@pytest.mark.parametrize("suffix", sorted(COMPRESSORS))
def test_truncated_compressed_epd(tmp_path, suffix):
    lines = (SAMPLES / "arasan-wacnew.epd").read_bytes()
    packed = COMPRESSORS[suffix](lines)
    path = tmp_path / f"cut.epd.{suffix}"
    path.write_bytes(packed[: len(packed) // 2])
    summary, games, issues = analyze(path)
    assert "truncated-input" in {i["code"] for i in issues}


def test_junk_after_a_zstd_frame_keeps_the_frame(tmp_path):
    path = tmp_path / "tail.pgn.zst"
    path.write_bytes(COMPRESSORS["zst"](SENTINEL) + b"garbage after the stream")
    summary, games, issues = analyze(path)
    assert games[0]["white"] == "Sentinel W" and games[0]["plies"] == SENTINEL_PLIES


def test_movetext_line_ending_like_a_tag(tmp_path):
    path = tmp_path / "quote-bracket.pgn"
    path.write_bytes(b'[Event "A"]\n\n1. e4 {see [Event "B"]\n} e5 *\n\n' + SENTINEL)
    summary, games, issues = analyze(path)
    assert_sentinel_last(games, issues)
    assert games[0]["plies"] == 2 and issues == []


def test_a_game_with_an_error_counts_as_with_errors(tmp_path):
    path = tmp_path / "wrong-result.pgn"
    path.write_bytes(SENTINEL.replace(b'"1-0"', b'"0-1"').replace(b"# 1-0", b"# 0-1"))
    summary, games, issues = analyze(path)
    assert [(i["code"], i["severity"]) for i in issues] == [("result-mismatch", "error")]
    assert summary["games_with_errors"] == 1


def test_null_move_in_check_is_an_error(tmp_path):
    path = tmp_path / "null-in-check.pgn"
    path.write_bytes(b'[Event "A"]\n\n1. e4 d5 2. Bb5+ -- 3. Nf3 *\n\n')
    summary, games, issues = analyze(path)
    assert games[0]["error_code"] is not None
    assert any(i["severity"] == "error" and i["ply"] == 4 for i in issues)


# --------------------------------------------------------------------------- property tests


def assert_sentinel_read(games: list[dict]) -> None:
    """The sentinel is the last game and is replayed in full. Junk right before it may leave
    it an issue (a stray '[' line joins its tag section), never fewer plies."""
    last = games[-1]
    assert (last["white"], last["plies"], last["outcome"]) == ("Sentinel W", SENTINEL_PLIES, "checkmate"), last


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("hypothesis")


PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow],
                    database=None)

# Bytes that steer the reader into its less common states.
TOKENS = [b"{", b"}", b"(", b")", b"[", b"]", b'"', b"\\", b";", b"%", b"$", b"$12", b"*", b"1-0", b"0-1",
          b"1/2-1/2", b"\n", b"\r\n", b"\r", b"\n\n", b" ", b"\t", b"1.", b"12...", b"e4", b"Nf3", b"O-O",
          b"exd6", b"e8=Q", b"--", b"Z0", b"+", b"#", b"!?", b'[Event "x"]', b'[FEN "', b"\xef\xbb\xbf",
          b"\x00", b"\xff", b"\xe9", b"\xc3\xa9", b"\x1f\x8b", b"\x28\xb5\x2f\xfd"]


@PROPERTY
@given(junk=st.binary(max_size=4000))
def test_random_bytes_then_sentinel(scratch, junk):
    path = scratch / "random.pgn"
    # A file starting with a compression magic number is decompressed, by design: start
    # with a newline (test_random_bytes_in_any_format covers compressed input).
    path.write_bytes(b"\n" + junk + b"\n\n" + SENTINEL)
    summary, games, issues = analyze(path)
    assert_sentinel_read(games)


@PROPERTY
@given(parts=st.lists(st.sampled_from(TOKENS), max_size=200))
def test_token_soup_then_sentinel(scratch, parts):
    path = scratch / "soup.pgn"
    # The leading newline keeps a compression magic token from making the file "compressed".
    path.write_bytes(b"\n" + b"".join(parts) + b"\n\n" + SENTINEL)
    summary, games, issues = analyze(path)
    assert_sentinel_read(games)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(junk=st.binary(max_size=2000), suffix=st.sampled_from([".pgn.gz", ".pgn.bz2", ".pgn.zst", ".epd", ".epd.gz"]))
def test_random_bytes_in_any_format(scratch, junk, suffix):
    path = scratch / f"random{suffix}"
    path.write_bytes(junk)
    analyze(path)


REAL = _first_games(20)
REAL_STARTS = [m.start() for m in re.finditer(rb"^\[Event ", REAL, re.M)]
MUTATION = st.tuples(
    st.sampled_from(["insert", "delete", "swap"]),
    st.integers(0, REAL_STARTS[10] - 1),                 # in the first 10 games only
    st.integers(0, len(REAL) - 1),
    st.one_of(st.binary(min_size=1, max_size=6), st.sampled_from(TOKENS)),
)


def _mutate(data: bytes, mutations) -> bytes:
    buf = bytearray(data)
    for op, i, j, payload in mutations:
        i = min(i, len(buf))
        if op == "insert":
            buf[i:i] = payload
        elif op == "delete":
            del buf[i:i + len(payload)]
        elif buf:
            i, j = min(i, len(buf) - 1), min(j, len(buf) - 1, REAL_STARTS[10] - 1)
            buf[i], buf[j] = buf[j], buf[i]
    head = bytes(buf[:64])
    if (detect_compression(head) or binary_kind(head) not in (None, "binary data") or detect_utf16(head)
            or head.startswith(tuple(magic for magic, _ in TABLE_MAGIC))):
        # A compression magic number in front would make it a "compressed" file, another
        # magic number (\x7fELF) a file that is not text, a table's (FEA1) a game table, a
        # byte order mark (\xfe\xff) UTF-16 text.
        buf[:0] = b"\n"
    return bytes(buf)


@pytest.fixture(scope="module")
def real_games(scratch):
    path = scratch / "real.pgn"
    path.write_bytes(REAL)
    summary, games, issues = analyze(path)
    assert summary["games_read"] == 20
    return games


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(mutations=st.lists(MUTATION, min_size=1, max_size=20))
@example(mutations=[("insert", 0, 0, b"FEA1")])  # (a Feather table's magic number in front)
@example(mutations=[("insert", 0, 0, b"XZ\x00"), ("insert", 0, 0, b"\xfd7z")])  # (xz's, 6 bytes, in two)
@example(mutations=[("insert", 0, 0, b"\xfe\xff")])  # (UTF-16's byte order mark)
def test_mutated_real_games(scratch, real_games, mutations):
    """Bytes inserted, deleted or swapped in the first 10 of 20 real games: nothing raises, the
    accounting holds, and the last 9 games (after an untouched one) are read as before."""
    path = scratch / "mutated.pgn"
    path.write_bytes(_mutate(REAL, mutations))
    summary, games, issues = analyze(path)
    tail = [(g["white"], g["black"], g["plies"], g["outcome"], g["error_code"]) for g in games[-9:]]
    want = [(g["white"], g["black"], g["plies"], g["outcome"], g["error_code"]) for g in real_games[-9:]]
    assert tail == want


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None)
@given(mutations=st.lists(MUTATION, min_size=1, max_size=10))
def test_mutated_real_games_cross_checked(scratch, mutations):
    """The same with --cross-check full: python-chess's replay must not crash either."""
    path = scratch / "mutated-cc.pgn"
    path.write_bytes(_mutate(REAL, mutations))
    analyze(path, cross_check="full")


# --------------------------------------------------------------------------- mutations, --jobs 2

# PGN-significant characters (and runs of them) a mutation inserts; any byte too.
SIGNIFICANT = [b"{", b"}", b"(", b")", b"[", b"]", b'"', b";", b"%", b"\n", b"\r", b"\n\n", b"\r\n",
               b"{\n", b"\n}", b"{\n\n", b"\n\n[", b'\n\n[Event "m"]\n', b"1-0\n\n", b"*", b"$", b"\\"]


def real_games_some_bare(n: int) -> bytes:
    """The first ``n`` real games, every other one without its comments (as TCEC and
    pgnmentor write games): a comment a mutation opens can then reach a '}' far on."""
    games = re.split(rb"(?m)^(?=\[Event )", _first_games(n))
    return b"".join(re.sub(rb" ?\{[^}]*\}", b"", g) if k % 2 else g for k, g in enumerate(games))


def mutate_seeded(data: bytes, rng: random.Random, count: int) -> bytes:
    """``count`` mutations anywhere in ``data``: PGN-significant characters (or random bytes)
    inserted, bytes deleted, two bytes swapped, or a '{' inserted with a '}' up to 4 kB after
    it (a comment over several games' text)."""
    buf = bytearray(data)
    for _ in range(count):
        i = rng.randrange(len(buf) + 1)
        op = rng.choice(("insert", "insert", "delete", "swap", "enclose"))
        if op == "enclose":
            j = min(len(buf), i + rng.randrange(4000))
            buf[j:j] = b"}"
            buf[i:i] = rng.choice((b"{", b"{\n", b"{\n\n"))
        elif op == "insert":
            buf[i:i] = rng.choice(SIGNIFICANT) if rng.random() < 0.8 else bytes([rng.randrange(256)])
        elif op == "delete":
            del buf[i:i + rng.choice((1, 1, 2, 7))]
        elif buf:
            i, j = min(i, len(buf) - 1), rng.randrange(len(buf))
            buf[i], buf[j] = buf[j], buf[i]
    if detect_compression(bytes(buf[:6])) or detect_utf16(bytes(buf[:32])):
        buf[:0] = b"\n"
    return bytes(buf)


class RowSink:
    """A run() sink keeping every table's rows as column lists."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, list]] = {}

    def write(self, name, columns):
        table = self.rows.setdefault(name, {c: [] for c in columns})
        for c, v in columns.items():
            table[c].extend(v.to_pylist() if hasattr(v, "to_pylist") else v)


class KeptPool:
    """One worker pool for many run_parallel calls: their shutdown leaves it running."""

    def __init__(self, pool) -> None:
        self.pool = pool

    def submit(self, fn, *args, **kwargs):
        return self.pool.submit(fn, *args, **kwargs)

    def shutdown(self, wait=True, cancel_futures=False):
        pass


@pytest.fixture(scope="module")
def worker_pool():
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as starter:  # as run_parallel starts it
        pool = starter.submit(parallel._start_pool, 2).result()
    yield pool
    pool.shutdown(wait=True)


def check_mutations(tmp_path, monkeypatch, pool, seeds, games: int) -> None:
    """For each seed, mutate ``games`` real games (:func:`real_games_some_bare`) anywhere
    (:func:`mutate_seeded`) and read the file with --jobs 1 and --jobs 2 (chunks of 1.5 kB,
    so the mutated text is cut everywhere it allows): the accounting holds, every game read
    has one games row, and both give the same rows in every table and the same summary."""
    monkeypatch.setattr(parallel, "_start_pool", lambda jobs: KeptPool(pool))
    monkeypatch.setattr(parallel, "_WORK_WHILE_POOL_STARTS", False)
    chunks = []
    counts = parallel._chunk_counts
    monkeypatch.setattr(parallel, "_chunk_counts", lambda *args: chunks.append(1) or counts(*args))
    data = real_games_some_bare(games)
    path = tmp_path / "mutated.pgn"
    for seed in seeds:
        rng = random.Random(seed)
        path.write_bytes(mutate_seeded(data, rng, rng.randint(1, 12)))
        options = AnalysisOptions(cross_check=rng.choice(("off", "sample")))
        one, two = RowSink(), RowSink()
        tally1 = run([str(path)], one, options)
        tally2 = run_parallel([str(path)], two, options, jobs=2, batch_bytes=1500, batch_games=3,
                              in_flight=rng.choice((1, 2, 4)))
        summary = tally1.as_dict()
        games_rows = one.rows.get("games", {"game_index": [], "error_code": []})
        assert summary["games_read"] == summary["games_ok"] + summary["games_with_errors"], seed
        assert games_rows["game_index"] == list(range(summary["games_read"])), seed
        assert sum(e is not None for e in games_rows["error_code"]) == summary["games_with_errors"], seed
        assert json.dumps(tally2.as_dict()) == json.dumps(summary), seed
        assert two.rows == one.rows, seed
    assert len(chunks) > 5 * len(seeds)  # the files were cut into chunks (about one per game)


def test_mutated_games_read_alike_with_jobs_1_and_2(tmp_path, monkeypatch, worker_pool):
    check_mutations(tmp_path, monkeypatch, worker_pool, range(40), games=12)


@pytest.mark.slow
def test_mutated_games_read_alike_with_jobs_1_and_2_long(tmp_path, monkeypatch, worker_pool):
    check_mutations(tmp_path, monkeypatch, worker_pool, range(1000, 2000), games=40)


def test_stdin_like_stream_of_many_small_games(tmp_path):
    """10,000 tiny games: every one counted, memory and time stay flat (one batch flush)."""
    path = tmp_path / "many.pgn"
    path.write_bytes(b"".join(b'[Event "%d"]\n\n1. e4 *\n\n' % i for i in range(10_000)) + SENTINEL)
    summary, games, issues = analyze(path)
    assert summary["games_read"] == 10_001 and summary["games_ok"] == 10_001
    assert_sentinel_last(games, issues)

