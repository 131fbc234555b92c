"""The chunk counts of the --jobs main process (chessscan.readers.counts, compiled) equal
the bytes.count expressions that define them."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from chessscan.readers import counts

PIECES = st.sampled_from([b"1-0", b"0-1", b"1/2-1/2", b"*", b"1", b"0", b"-", b"/", b"2", b"\n", b"\r", b"\r\n",
                          b'[Event "', b"[Event", b"\xef\xbb\xbf", b" ", b"e4", b"1/2", b"-1/2", b"x"])
TEXT = st.lists(PIECES, max_size=40).map(b"".join) | st.binary(max_size=60)


def _marks(d: bytes) -> int:
    return d.count(b"1-0") + d.count(b"0-1") + d.count(b"1/2-1/2") + d.count(b"*")


def _line_ends(d: bytes) -> int:
    return d.count(b"\n") + d.count(b"\r") - d.count(b"\r\n")


def _event_lines(d: bytes) -> int:
    first = d.startswith(b'[Event "') or d.startswith(b'\xef\xbb\xbf[Event "')
    return first + d.count(b'\n[Event "') + d.count(b'\r[Event "')


@settings(max_examples=3000, deadline=None)
@given(TEXT)
@example(b"1/2-1/2-1/2")          # overlapping draws: bytes.count takes the first
@example(b"1/2-1/2-1/2-1/2")
@example(b"1-0-1-0")
@example(b"\r\n[Event \"x\"]\r[Event \"y\"]\n\r\n")
@example(b'[Event "')
@example(b'\n[Event "')
@example(b'\n[Event ')
@example(b"-")
@example(b"\r")
def test_counts_equal_bytes_count(data: bytes) -> None:
    assert counts.termination_marks(data) == _marks(data)
    assert counts.line_ends(data) == _line_ends(data)
    assert counts.event_lines(data) == _event_lines(data)


def test_counts_on_a_sample() -> None:
    from pathlib import Path

    data = (Path(__file__).resolve().parents[1] / "data" / "samples" / "lichess-magnus-300.pgn").read_bytes()
    assert (counts.termination_marks(data), counts.line_ends(data), counts.event_lines(data)) == (
        _marks(data), _line_ends(data), _event_lines(data))
    assert counts.event_lines(data) == 300


@settings(max_examples=3000, deadline=None)
@given(TEXT, st.integers(0, 70), st.integers(0, 70))
@example(b'\xef\xbb\xbf[Event "x"]\r\n[Event "y"]', 0, 30)
@example(b'\n[Event "x"]', 1, 12)
def test_text_counts_of_a_slice_of_any_buffer(data: bytes, lo: int, hi: int) -> None:
    """One pass, no copy: the line ends and [Event " lines of data[lo:hi], read in place
    from a bytes object or a writable buffer (the --jobs main process's shared memory)."""
    lo, hi = min(lo, len(data)), min(max(lo, hi), len(data))
    part = data[lo:hi]
    want = (_line_ends(part), _event_lines(part))
    assert counts.text_counts(data, lo, hi) == want
    assert counts.text_counts(memoryview(bytearray(data)), lo, hi) == want
    assert counts.text_counts(part) == want
