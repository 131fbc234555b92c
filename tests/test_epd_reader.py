"""Tests for chessscan.readers.epd (EPD lines, perft suites).

Real-data tests read ../shared/data (see its SOURCES.md) and skip when the
shared folder is absent; the crafted-line tests always run.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from chessscan.readers.epd import (
    looks_like_epd,
    EPD_ERROR_SEVERITY,
    EpdRecord,
    PerftCase,
    error_severity,
    parse_epd_line,
    read_epd,
    read_perft_suite,
)
from chessscan.readers.sources import TruncatedInput
from conftest import shared_skip_reason

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
DATA = SHARED / "data"

# Record counts as SOURCES.md gives them (non-empty, non-'#' lines; '.perft'
# files: 'epd' lines). Files not listed here are counted by the same rule.
SOURCES_COUNTS = {
    "epd/bratko-kopec.epd": 24,
    "epd/python-chess-endgame.epd": 200,
    "epd/python-chess-endgame-dm-4.epd": 48,
    "epd/python-chess-endgame-dm-5.epd": 27,
    "epd/arasan/wacnew.epd": 300,
    "epd/arasan/ecmgcp.epd": 183,
    "epd/arasan/arasan2024.epd": 200,
    "epd/arasan/bt2630.epd": 30,
    "epd/arasan/iq4.epd": 183,
    "epd/arasan/pet.epd": 48,
    "epd/arasan/eet.epd": 100,
    "epd/arasan/lapuce2.epd": 35,
    "epd/arasan/prof.epd": 8,
    "epd/STS1-STS15_LAN_v3.epd": 1500,
    "epd/STS1-STS15_LAN_v6.epd": 1188,
    "epd/pychess-GetMated-cap.epd": 3119,
    "epd/sf-books-stalemates_200d30_v1.epd": 10796,
    "epd/sf-books-popularpos_lichess_v3.epd.zst": 200_000,
    "perft/python-chess-random.perft": 6838,
    "perft/python-chess-tricky.perft": 19,
    "perft/python-chess-chess960.perft": 960,
    "perft/ethereal-standard.epd": 128,
    "perft/ethereal-fischer.epd": 960,
    "perft/pychess-perftsuite.epd": 127,
    "perft/pychess-perftsuite2-sedlak.epd": 32,
    "perft/pychess-frc_perftsuite.epd": 9,
    "perft/marcel-perft.epd": 6838,
    "perft/cw-perft-special.epd": 174,
    "perft/ferdy-checks/ferdy_perft_double_checks.epd": 184,
    "perft/ferdy-checks/ferdy_perft_enpassant_1.epd": 3760,
}
GROUP_TOTALS = {  # SOURCES.md gives these per group, not per file
    "epd/chess-epds/": 3594,
    "perft/ferdy-checks/ferdy_perft_single_check_": 93_811,
}

needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=shared_skip_reason(DATA))


def _data_files() -> list[str]:
    if not DATA.is_dir():
        return []
    files = [p for sub in ("epd", "perft") for p in (DATA / sub).rglob("*")
             if p.is_file() and p.name.endswith((".epd", ".perft", ".epd.zst"))]
    return sorted(str(p.relative_to(DATA)) for p in files)


def _raw_bytes(path: Path) -> bytes:
    if path.suffix == ".zst":
        import zstandard

        with open(path, "rb") as fh:
            return zstandard.ZstdDecompressor().stream_reader(fh).read()
    return path.read_bytes()


def _sources_count(path: Path) -> int:
    """Count records the way SOURCES.md does."""
    lines = _raw_bytes(path).split(b"\n")
    if path.suffix == ".perft":
        return sum(1 for ln in lines if ln.startswith(b"epd "))
    return sum(1 for ln in lines if ln.strip() and not ln.startswith(b"#"))


def _read(reader, rel: str):
    """Run ``reader`` on a data file by path (decompression via open_source)."""
    return list(reader(DATA / rel))


def _reader_for(rel: str):
    return read_perft_suite if rel.startswith("perft/") else read_epd


# ---------------------------------------------------------------------------
# real data
# ---------------------------------------------------------------------------

_COUNTS: dict[str, int] = {}


@needs_data
@pytest.mark.parametrize("rel", _data_files())
def test_record_counts_match_sources(rel):
    records = _read(_reader_for(rel), rel)
    expected = _sources_count(DATA / rel)
    assert len(records) == expected
    if rel in SOURCES_COUNTS:
        assert expected == SOURCES_COUNTS[rel]
    _COUNTS[rel] = len(records)
    # every record carries its source and strictly increasing 1-based lines
    lines = [r.line for r in records]
    assert lines == sorted(set(lines)) and (not lines or lines[0] >= 1)
    assert all(isinstance(r, PerftCase if rel.startswith("perft/") else EpdRecord)
               for r in records)


@needs_data
def test_group_totals_match_sources():
    files = _data_files()
    for prefix, total in GROUP_TOTALS.items():
        group = [f for f in files if f.startswith(prefix)]
        assert group, prefix
        assert sum(_COUNTS.get(f) or _sources_count(DATA / f) for f in group) == total


@needs_data
def test_perft_files_fully_parsed():
    # Every perft position of the real suites has a FEN and node counts, no errors.
    for rel in ("perft/ethereal-standard.epd", "perft/pychess-frc_perftsuite.epd",
                "perft/cw-perft-special.epd", "perft/pychess-perftsuite2-sedlak.epd",
                "perft/ferdy-checks/ferdy_perft_double_checks.epd",
                "perft/python-chess-tricky.perft", "perft/python-chess-chess960.perft"):
        for case in _read(read_perft_suite, rel):
            assert case.errors == [], (rel, case.line, case.errors)
            assert case.depths and len(case.fen.split()) == 6, (rel, case.line)


@needs_data
def test_bratko_kopec_first_record():
    rec = _read(read_epd, "epd/bratko-kopec.epd")[0]
    assert rec.line == 1
    assert rec.id == "BK.01"
    assert rec.bm == ["Qd1+"]
    assert rec.am == []
    assert rec.fields == "1k1r4/pp1b1R2/3q2pp/4p3/2B5/4Q3/PPP2B2/2K5 b - -"
    assert rec.fen == rec.fields + " 0 1"
    assert rec.operations == {"bm": ["Qd1+"], "id": ["BK.01"]}
    assert rec.errors == [] and rec.ok


@needs_data
def test_ethereal_standard_depths():
    cases = _read(read_perft_suite, "perft/ethereal-standard.epd")
    first, second = cases[0], cases[1]
    assert first.fen == "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
    assert first.depths == {1: 20, 2: 400, 3: 8902, 4: 197281, 5: 4865609, 6: 119060324}
    assert second.line == 2 and second.id is None
    assert second.depths == {1: 48, 2: 2039, 3: 97862, 4: 4085603, 5: 193690690}


@needs_data
def test_python_chess_tricky_perft_blocks():
    cases = _read(read_perft_suite, "perft/python-chess-tricky.perft")
    kiwi = cases[0]
    assert kiwi.id == "pos-2"
    assert kiwi.line == 7  # the 'epd' line, not the 'id' line
    assert kiwi.fen == "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
    assert kiwi.depths == {1: 48, 2: 2039, 3: 97862}
    assert cases[1].id == "pos-3"
    assert cases[1].depths == {1: 14, 2: 191, 3: 2812, 4: 43238}


@needs_data
def test_ferdy_double_space_and_crlf():
    case = _read(read_perft_suite, "perft/ferdy-checks/ferdy_perft_double_checks.epd")[0]
    assert case.fen == "8/5kpp/8/8/1p3P2/6PP/r3KP2/1R1q4 w - - 0 1"
    assert case.depths == {4: 23441}


@needs_data
@pytest.mark.parametrize("name", ["destruction-test.epd", "destructive.epd"])
def test_destructive_files_read_to_the_end(name):
    rel = f"epd/chess-epds/{name}"
    records = _read(read_epd, rel)
    assert len(records) == 106
    assert records[0].fen == "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
    bad = [r for r in records if not r.ok]
    assert bad and all(r.fen == "" for r in bad)
    assert all(e[0] in EPD_ERROR_SEVERITY for r in records for e in r.errors)
    by_line = {r.line: r for r in records}
    # "- 400 500" counters are kept as written; legality is not this layer's job
    assert by_line[9].fen.endswith(" w KQkq - 400 500")
    # "w - -0 1" (missing space) is repaired with a warning
    assert any(e[0] == "glued-counter" for e in by_line[16].errors) or name == "destructive.epd"
    assert [e[0] for e in by_line[30].errors] == ["invalid-epd"]  # "hello have a nice day"


# ---------------------------------------------------------------------------
# crafted lines
# ---------------------------------------------------------------------------

START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"


def _lines(text: str | bytes, reader=read_epd):
    data = text.encode() if isinstance(text, str) else text
    return list(reader(io.BytesIO(data), "crafted"))


def test_quoted_operands_with_semicolon_and_escaped_quote():
    rec = parse_epd_line(START + ' c0 "foo; bar"; id "say \\"hi\\" \\\\ ok"; bm Nf3 Qd2;')
    assert rec.operations == {
        "c0": ["foo; bar"],
        "id": ['say "hi" \\ ok'],
        "bm": ["Nf3", "Qd2"],
    }
    assert rec.id == 'say "hi" \\ ok'
    assert rec.bm == ["Nf3", "Qd2"]
    assert rec.errors == []


def test_unterminated_string_takes_rest_of_line():
    rec = parse_epd_line(START + ' id "WAC.001; bm e4;')
    assert rec.operations == {"id": ["WAC.001; bm e4;"]}
    assert [e[0] for e in rec.errors] == ["unterminated-string"]
    assert rec.ok  # a warning only


def test_counters_from_hmvc_fmvn():
    rec = parse_epd_line(START + " hmvc 7; fmvn 42; bm e4;")
    assert rec.fen == START + " 7 42"
    assert (rec.hmvc, rec.fmvn) == (7, 42)
    assert rec.errors == []


def test_one_depth_written_twice_keeps_the_first_count():
    # D1 and D01 are one depth: the second count replaced the first, without a word.
    rec = parse_epd_line(START + " ;D1 20 ;D01 21 ;D2 400")
    assert rec.perft_depths() == {1: 20, 2: 400}
    assert [(e[0], e[1]) for e in rec.errors] == [
        ("duplicate-depth", "D01 is depth 1 again (as D1); the first count is kept")]
    assert rec.ok  # a warning only


def test_six_field_fen_lines():
    rec = parse_epd_line(START + " 3 17")
    assert rec.fields == START and rec.fen == START + " 3 17" and rec.operations == {}
    rec = parse_epd_line(START + "  0 1; D4 23441  ")
    assert rec.fen == START + " 0 1" and rec.perft_depths() == {4: 23441}
    rec = parse_epd_line(START + " 0 1 ;D1 20 ;D2 400")
    assert rec.perft_depths() == {1: 20, 2: 400}
    rec = parse_epd_line(START + " 0 1; D1 20; D2 400;")
    assert rec.perft_depths() == {1: 20, 2: 400} and rec.errors == []
    # hmvc/fmvn operations win over the FEN counters, with a warning
    rec = parse_epd_line(START + " 5 9; hmvc 6;")
    assert rec.fen == START + " 6 9"
    assert [e[0] for e in rec.errors] == ["counter-conflict"]


def test_glued_counter_is_repaired():
    rec = parse_epd_line(START.replace(" -", " -0") + " 1; bm e4")
    assert rec.fen == START + " 0 1" and rec.bm == ["e4"]
    assert [e[0] for e in rec.errors] == ["glued-counter"]


def test_bad_perft_operand():
    rec = parse_epd_line(START + " ;D1 20 ;D2 lots ;D3 1 2")
    assert rec.perft_depths() == {1: 20}
    assert [e[0] for e in rec.errors] == ["bad-operation", "bad-operation"]
    assert not rec.ok


def test_numbers_longer_than_int_takes_are_reported_not_raised():
    # int() refuses strings of more than 4300 digits (ValueError ended the run).
    huge = "9" * 5000
    rec = parse_epd_line(START + f" {huge} 1")
    assert rec.fen == START + f" {huge} 1"  # the FEN check reports it (invalid-fen)
    rec = parse_epd_line(START.replace(" -", " -" + huge) + " 1")
    assert rec.fen == START + f" {huge} 1" and [e[0] for e in rec.errors] == ["glued-counter"]
    rec = parse_epd_line(START + f" 000007 01; hmvc {huge}; D1 {huge}; D2 {'0' * 30}400;")
    assert rec.fen == START + " 7 1" and rec.hmvc is None
    assert rec.perft_depths() == {2: 400}
    assert [(e[0], e[2]) for e in rec.errors] == [("bad-operation", 65), ("bad-operation", 5072)]
    assert "at most 20 digits" in rec.errors[0][1]
    case, = _lines(f"id x\nepd {START}\nperft 1 20\nperft 2 {huge}\n", read_perft_suite)
    assert case.depths == {1: 20} and [e[0] for e in case.errors] == ["bad-perft-line"]


def test_missing_semicolons_split_at_known_opcodes():
    rec = parse_epd_line(START + " 0 1 bm Rc8+ dm 26")
    assert rec.operations == {"bm": ["Rc8+"], "dm": ["26"]}
    assert [e[0] for e in rec.errors] == ["missing-semicolon"]
    rec = parse_epd_line(START + " bm c5; id test")  # c5 is a move, not an opcode
    assert rec.operations == {"bm": ["c5"], "id": ["test"]} and rec.errors == []


def test_missing_semicolon_found_when_the_line_ends_with_one():
    # The final ';' ends only the last operation: 'id "a" bm Kd2;' still lacks the ';' after "a".
    k = "4k3/8/8/8/8/8/8/4K3 w - -"
    for tail in ('', ';'):
        rec = parse_epd_line(k + ' id "a" bm Kd2' + tail)
        assert rec.operations == {"id": ["a"], "bm": ["Kd2"]} and rec.bm == ["Kd2"]
        assert [(e[0], e[2]) for e in rec.errors] == [("missing-semicolon", 34)]
        rec = parse_epd_line(k + ' id "a" id "b"' + tail)
        assert rec.operations == {"id": ["a"]}
        assert [(e[0], e[2]) for e in rec.errors] == [("missing-semicolon", 34),
                                                       ("duplicate-opcode", 34)]


def test_bad_line_then_good_line_numbers_and_crlf():
    text = ("# comment\r\n"
            "\r\n"
            "startpos\r\n"
            "8/8/8 w -\r\n"
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR K KQkq - 0 1\r\n"
            + START + " bm e4; id \"good\";\r\n"
            "   \x00\r\n"
            + START + " 0 1\x00\x00\r\n")
    recs = _lines(text)
    assert [r.line for r in recs] == [3, 4, 5, 6, 8]
    assert [r.ok for r in recs] == [False, False, False, True, True]
    assert recs[0].errors == [("invalid-epd", "expected 4 position fields, found 1", 9)]
    assert recs[1].errors[0][0] == "invalid-epd"
    assert recs[2].errors[0][0] == "invalid-epd" and recs[2].errors[0][2] == 45
    assert recs[3].id == "good" and recs[3].raw == START + ' bm e4; id "good";'
    assert recs[4].fen == START + " 0 1" and recs[4].errors == []


def test_cr_only_and_no_final_newline():
    recs = _lines(f"{START} bm e4;\r{START} bm d4;")
    assert [(r.line, r.bm) for r in recs] == [(1, ["e4"]), (2, ["d4"])]


def test_latin1_fallback_and_control_characters():
    data = (START + ' c0 "Dortmund caf\xe9";\n').encode("latin-1") + \
        (START + " bm e4;\x01 id x;\n").encode()
    first, second = _lines(data)
    assert first.operations["c0"] == ["Dortmund caf\xe9"]
    assert first.errors[0][0] == "decode-fallback"
    assert error_severity("decode-fallback") == "warning" and first.ok
    assert second.operations == {"bm": ["e4"], "id": ["x"]}
    assert [e[0] for e in second.errors] == ["control-character"]


def test_text_stream_and_bom():
    recs = list(read_epd(io.StringIO("\ufeff" + START + " id a;\n"), "t"))
    assert recs[0].id == "a" and recs[0].source == "t" and recs[0].errors == []


def test_duplicate_opcode_and_bad_opcode():
    rec = parse_epd_line(START + " acn 5; acn 6; 18 knights;")
    assert rec.operations == {"acn": ["5"], "18": ["knights"]}
    assert [e[0] for e in rec.errors] == ["duplicate-opcode", "bad-opcode"]


def test_over_long_line_is_truncated_not_buffered(monkeypatch):
    import chessscan.readers.epd as epd

    monkeypatch.setattr(epd, "MAX_LINE_BYTES", 100)
    monkeypatch.setattr(epd, "_CHUNK", 64)
    recs = _lines(START + " c0 " + "x" * 1000 + ";\n" + START + " id ok;\n")
    assert len(recs) == 2
    assert any(e[0] == "line-too-long" for e in recs[0].errors)
    assert recs[1].line == 2 and recs[1].id == "ok"


def test_perft_suite_both_layouts_and_orphans():
    text = ("perft 1 5\n"
            "# python-chess layout\n"
            "id kiwi\n"
            "epd " + START + "\n"
            "perft 1 20\n"
            "perft 2 400\n"
            "perft 2 401\n"
            "perft x 3\n"
            "\n"
            + START + " 0 1 ;D1 20 ;D2 400\n"
            "id lonely\n"
            + START + " 4 9; D1 20; id \"e\";\n"
            "epd " + START + "\n")
    cases = _lines(text, read_perft_suite)
    assert [(c.line, c.id) for c in cases] == [
        (1, None), (4, "kiwi"), (10, None), (11, "lonely"), (12, "e"), (13, None)]
    assert cases[0].fen == "" and cases[0].errors[0][0] == "orphan-line"
    kiwi = cases[1]
    assert kiwi.fen == START + " 0 1" and kiwi.depths == {1: 20, 2: 400}
    assert [e[0] for e in kiwi.errors] == ["duplicate-depth", "bad-perft-line"]
    assert cases[2].depths == {1: 20, 2: 400} and cases[2].errors == []
    assert cases[3].errors[0][0] == "orphan-line"
    assert cases[4].fen == START + " 4 9" and cases[4].depths == {1: 20}
    assert [e[0] for e in cases[5].errors] == ["no-depths"]


def test_path_input_gzip(tmp_path):
    import gzip

    path = tmp_path / "suite.epd.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("# header\n" + START + " bm e4; id \"g1\";\n")
    (rec,) = read_epd(path)
    assert rec.source == str(path) and rec.line == 2 and rec.id == "g1"
    (case,) = read_perft_suite(str(path), source="named")
    assert case.source == "named" and case.errors[0][0] == "no-depths"


def test_every_code_has_a_known_severity():
    assert set(EPD_ERROR_SEVERITY.values()) <= {"error", "warning"}
    assert error_severity("invalid-epd") == "error"


class _CutStream(io.RawIOBase):
    """A binary stream handing out ``data`` in ``chunk``-byte reads, then
    raising TruncatedInput, as open_source does for a cut .gz/.zst file."""

    def __init__(self, data: bytes, chunk: int = 7) -> None:
        super().__init__()
        self._data, self._chunk = data, chunk

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if not self._data:
            raise TruncatedInput("x.epd.gz: gzip stream is truncated or corrupt")
        out, self._data = self._data[: self._chunk], self._data[self._chunk :]
        return out


def test_truncated_input_is_a_record_not_an_exception():
    # read_epd used to let TruncatedInput out, aborting the whole run.
    assert EPD_ERROR_SEVERITY["truncated-input"] == "error"
    good = START + " id \"a\";\n"
    # Cut in the middle of line 3: the cut line is reported, never parsed
    # (its castling field could be cut from "KQkq" to a valid-looking "KQ").
    recs = list(read_epd(_CutStream((good + "# c\n" + START[:-3]).encode()), "cut"))
    assert [(r.line, r.id, r.ok) for r in recs] == [(1, "a", True), (3, None, False)]
    cut = recs[1]
    assert (cut.fields, cut.fen, cut.raw) == ("", "", START[:-3])
    assert [e[0] for e in cut.errors] == ["truncated-input"] and cut.errors[0][2] is None
    assert "cut off" in cut.errors[0][1]
    # Cut at a line end, and before anything could be read.
    recs = list(read_epd(_CutStream(good.encode())))
    assert [(r.line, [e[0] for e in r.errors]) for r in recs] == [(1, []), (2, ["truncated-input"])]
    assert recs[1].raw == "" and "cut off" not in recs[1].errors[0][1]
    recs = list(read_epd(_CutStream(b"")))
    assert [(r.line, [e[0] for e in r.errors]) for r in recs] == [(1, ["truncated-input"])]


def test_truncated_input_ends_a_perft_suite():
    text = "id kiwi\nepd " + START + "\nperft 1 20\nperft 2 400\nperft 3 89"  # cut: 8902
    cases = list(read_perft_suite(_CutStream(text.encode())))
    assert [(c.line, c.id) for c in cases] == [(2, "kiwi"), (5, None)]
    assert cases[0].depths == {1: 20, 2: 400} and cases[0].errors == []
    assert cases[1].fen == "" and [e[0] for e in cases[1].errors] == ["truncated-input"]
    assert not cases[1].ok


@pytest.mark.parametrize("suffix", ["gz", "bz2", "zst"])
def test_truncated_compressed_epd_file(tmp_path, suffix):
    import bz2
    import gzip

    import zstandard

    compress = {"gz": gzip.compress, "bz2": bz2.compress,
                "zst": lambda b: zstandard.ZstdCompressor(level=3).compress(b)}[suffix]
    rnd = __import__("random").Random(3)
    lines = "".join(f"{START} id \"p{i}\"; c0 \"{rnd.randbytes(30).hex()}\";\n" for i in range(3000))
    packed = compress(lines.encode())
    path = tmp_path / f"cut.epd.{suffix}"
    path.write_bytes(packed[: len(packed) * 2 // 3])
    recs = list(read_epd(path))  # does not raise
    assert [e[0] for e in recs[-1].errors] == ["truncated-input"] and recs[-1].fen == ""
    assert all(r.ok and r.id == f"p{i}" for i, r in enumerate(recs[:-1]))
    assert recs[-1].line == len(recs)
    cases = list(read_perft_suite(path))
    assert [e[0] for e in cases[-1].errors] == ["truncated-input"]
    assert len(cases) == len(recs)


@pytest.mark.parametrize("head, expected", [
    (b"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - bm e4;\n", True),
    (b"\xef\xbb\xbf\n# a suite\n\n8/8/8/8/8/8/8/K6k w - -\n", True),
    (b"8/8/8/8/8/8/8/K6k", True),  # a first line cut short by the look-ahead, placement whole
    (b'[Event "x"]\n\n1. e4 e5 *\n', False),
    (b"1. e4 e5 2. Nf3 *\n", False),
    (b"{ rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR }\n", False),
    (b"8/8/8/8/8/8/K6k w - -\n", False),  # seven ranks: no FEN
    (b"", False),
    (b"\n\n# only comments\n", True),  # PGN has no '#' comments: an EPD suite with no position
    (b"# a note\n1. e4 e5 *\n", False),
    (b"\n \n", False),
])
def test_looks_like_epd(head, expected):
    assert looks_like_epd(head) is expected
