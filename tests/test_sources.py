"""Tests for chessscan.readers.sources: opening plain/compressed files and stdin."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import random
import sys
from pathlib import Path

import pytest
import zstandard

from chessscan.readers import sources
from chessscan.readers.sources import (
    CountingReader,
    TruncatedInput,
    UnsupportedInput,
    detect_compression,
    detect_utf16,
    open_source,
    peek_stdin,
    source_name,
    source_size,
)
from conftest import SAMPLES, shared_skip_reason

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"

PGN = b'[Event "x"]\n[Result "1-0"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n' * 500


def _zstd_long(data: bytes, window_log: int = 28) -> bytes:
    """A frame whose header demands a big window (content size unknown)."""
    params = zstandard.ZstdCompressionParameters.from_level(
        3, window_log=window_log, write_content_size=False
    )
    co = zstandard.ZstdCompressor(compression_params=params).compressobj()
    return co.compress(data) + co.flush()


COMPRESSORS = {
    ".gz": gzip.compress,
    ".bz2": bz2.compress,
    ".xz": lzma.compress,
    ".zst": lambda d: zstandard.ZstdCompressor(level=3).compress(d),
}


def read_all(path) -> bytes:
    with open_source(path) as s:
        return s.read()


def test_plain_file(tmp_path):
    p = tmp_path / "a.pgn"
    p.write_bytes(PGN)
    with open_source(p) as s:
        assert s.compression is None
        assert s.read() == PGN
        assert s.bytes_read == len(PGN)
    assert source_size(p) == len(PGN)
    assert source_name(p) == str(p)
    assert source_name(str(p)) == str(p)


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".zst"])
def test_compressed_roundtrip_and_progress(tmp_path, suffix):
    blob = COMPRESSORS[suffix](PGN)
    p = tmp_path / ("a.pgn" + suffix)
    p.write_bytes(blob)
    with open_source(p) as s:
        assert s.compression == {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zst": "zstd"}[suffix]
        first = s.read(10)
        assert first == PGN[:10]
        assert 0 < s.bytes_read <= len(blob)
        assert first + s.read() == PGN
        # Progress counts compressed bytes of the underlying file.
        assert s.bytes_read == len(blob) == source_size(p)


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".zst"])
def test_wrong_suffix_is_sniffed(tmp_path, suffix):
    p = tmp_path / "misnamed.pgn"
    p.write_bytes(COMPRESSORS[suffix](PGN))
    assert read_all(p) == PGN


def test_plain_text_with_compressed_suffix_is_an_error(tmp_path):
    # Suffix says zstd, magic says nothing: trust the suffix and report clearly.
    p = tmp_path / "a.pgn.zst"
    p.write_bytes(PGN)
    with pytest.raises(TruncatedInput, match="zstd"):
        read_all(p)


def test_empty_files(tmp_path):
    for name in ("e.pgn", "e.pgn.gz", "e.pgn.zst"):
        p = tmp_path / name
        p.write_bytes(b"")
        assert read_all(p) == b""


@pytest.fixture(params=["libzstd", "python-calls"])
def zstd_decoder(request, monkeypatch):
    """Both zstd decoders: libzstd's streaming API through zstandard's cffi binding (the
    default), and zstandard's decompressobj fed 1 KiB per Python call (without the binding)."""
    if request.param == "libzstd":
        if sources._zstd_lib is None:
            pytest.skip("zstandard's cffi binding (zstandard.backend_cffi) is not importable here")
    else:
        monkeypatch.setattr(sources, "_zstd_lib", None)
    return request.param


def test_the_zstd_decoder_in_use(tmp_path, zstd_decoder):
    p = tmp_path / "g.pgn.zst"
    p.write_bytes(zstandard.ZstdCompressor().compress(PGN))
    with open_source(p) as s:
        assert s.read() == PGN
        want = sources._ZstdDirect if zstd_decoder == "libzstd" else sources._ZstdReader
        assert type(s.raw._inner) is want


def test_zstd_long_window_and_multiple_frames(tmp_path, zstd_decoder):
    blob = _zstd_long(PGN, 28)
    with pytest.raises(zstandard.ZstdError):  # the library default refuses this frame
        zstandard.ZstdDecompressor().stream_reader(io.BytesIO(blob)).read()
    p = tmp_path / "long.pgn.zst"
    p.write_bytes(blob + zstandard.ZstdCompressor().compress(b"tail\n") + _zstd_long(b"x", 27))
    assert read_all(p) == PGN + b"tail\nx"


def test_zstd_window_27_from_level(tmp_path, zstd_decoder):
    cctx = zstandard.ZstdCompressor(
        compression_params=zstandard.ZstdCompressionParameters.from_level(3, window_log=27)
    )
    p = tmp_path / "w27.zst"
    p.write_bytes(cctx.compress(PGN))
    assert read_all(p) == PGN


@pytest.mark.parametrize("suffix", [".gz", ".zst", ".bz2", ".xz"])
def test_truncated_stream_yields_data_then_raises(tmp_path, suffix, zstd_decoder):
    big = PGN * 20
    blob = COMPRESSORS[suffix](big)
    p = tmp_path / ("cut.pgn" + suffix)
    p.write_bytes(blob[: len(blob) * 2 // 3])
    got = []
    with open_source(p) as s:
        with pytest.raises(TruncatedInput) as ei:
            while True:
                chunk = s.read(1 << 14)
                if not chunk:
                    break
                got.append(chunk)
    data = b"".join(got)
    assert big.startswith(data)
    assert len(data) < len(big)
    assert str(p) in str(ei.value)
    if suffix != ".bz2":  # bzip2 only emits whole 900 kB blocks
        assert len(data) > 0


def test_corrupt_zstd_raises_truncated_input(tmp_path, zstd_decoder):
    blob = bytearray(zstandard.ZstdCompressor(level=3).compress(PGN * 20))
    blob[len(blob) // 2 : len(blob) // 2 + 50] = b"\x00" * 50
    p = tmp_path / "bad.zst"
    p.write_bytes(bytes(blob))
    with pytest.raises(TruncatedInput, match="zstd"):
        read_all(p)


def test_truncated_readline_path(tmp_path):
    p = tmp_path / "cut.gz"
    blob = gzip.compress(PGN * 20)
    p.write_bytes(blob[: len(blob) // 2])
    lines = []
    with open_source(p) as s:
        with pytest.raises(TruncatedInput):
            for line in s:
                lines.append(line)
    assert len(lines) > 100


def test_stdin_plain_and_compressed(monkeypatch):
    for blob in (PGN, gzip.compress(PGN), zstandard.ZstdCompressor().compress(PGN)):
        fake = io.TextIOWrapper(io.BytesIO(blob))
        monkeypatch.setattr(sys, "stdin", fake)
        with open_source("-") as s:
            assert s.read() == PGN
            assert s.bytes_read == len(blob)
        assert not fake.buffer.closed  # stdin is never closed
    assert source_name("-") == "<stdin>"
    assert source_size("-") is None


def test_closing_closes_file(tmp_path):
    p = tmp_path / "a.pgn.zst"
    p.write_bytes(COMPRESSORS[".zst"](PGN))
    s = open_source(p)
    counter = s.counter
    s.read(5)
    s.close()
    assert counter.closed


def test_detect_compression():
    assert detect_compression(b"\x1f\x8b\x08\x00") == "gzip"
    assert detect_compression(b"BZh9") == "bz2"
    assert detect_compression(b"\x28\xb5\x2f\xfd") == "zstd"
    assert detect_compression(b"\x50\x2a\x4d\x18") == "zstd"  # skippable frame
    assert detect_compression(b"\xfd7zXZ\x00\x00\x04") == "xz"
    assert detect_compression(b"[Eve") is None
    assert detect_compression(b"BZh ") is None
    assert detect_compression(b"") is None


def test_counting_reader_counts():
    raw = io.BytesIO(b"abcdef")
    c = CountingReader(raw)
    buf = bytearray(4)
    assert c.readinto(buf) == 4
    assert c.bytes_read == 4
    assert c.read() == b"ef"
    assert c.bytes_read == 6


def test_shared_corpus_zstd_long27():
    p = SHARED / "games" / "lichess-magnus.pgn.zst"
    if not p.exists():
        pytest.skip(shared_skip_reason(SHARED))
    with open_source(p) as s:
        head = s.read(1 << 16)
    assert head.startswith(b'[Event "Rated ')


def _read_until_error(path) -> tuple[bytes, BaseException | None]:
    got = []
    err = None
    with open_source(path) as s:
        try:
            while True:
                chunk = s.read(1 << 14)
                if not chunk:
                    break
                got.append(chunk)
        except TruncatedInput as exc:
            err = exc
    return b"".join(got), err


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".zst"])
@pytest.mark.parametrize("tail", ["junk", "bad-stream"])
def test_bad_data_after_complete_streams_keeps_them(tmp_path, suffix, tail):
    # Several complete frames/members/streams (all in one 64 KiB input chunk),
    # then junk or a stream corrupt from its start: everything decoded before
    # is returned, then TruncatedInput. zstd used to drop the whole chunk;
    # bz2 used to stop silently, without an error.
    compress = COMPRESSORS[suffix]
    good = b"".join(compress(PGN) for _ in range(5))
    bad = b"garbage" if tail == "junk" else compress(b"x" * 1000)[:4] + b"\xff" * 300
    p = tmp_path / ("tail.pgn" + suffix)
    p.write_bytes(good + bad)
    data, err = _read_until_error(p)
    assert data == PGN * 5
    assert isinstance(err, TruncatedInput) and str(p) in str(err)


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_nul_padding_after_the_last_stream_is_ignored(tmp_path, suffix):
    p = tmp_path / ("padded.pgn" + suffix)
    p.write_bytes(COMPRESSORS[suffix](PGN) + COMPRESSORS[suffix](b"tail\n") + b"\0" * 1000)
    assert _read_until_error(p) == (PGN + b"tail\n", None)


def test_corrupt_zstd_block_keeps_the_blocks_before_it(tmp_path, zstd_decoder):
    # Within a frame, what the blocks before the corrupt one decoded is kept
    # too: the decoder is fed in slices, an error loses only its own slice's
    # output. Blocks of ~16 KB compressed, the 12th made invalid (reserved
    # block type), so several complete blocks share its 64 KiB input chunk.
    rnd = random.Random(5)
    parts = [rnd.randbytes(15000).hex().encode() for _ in range(20)]
    co = zstandard.ZstdCompressor(level=3).compressobj()
    pieces = [co.compress(part) + co.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK) for part in parts]
    pieces.append(co.flush())
    blob = bytearray(b"".join(pieces))
    bad = 11
    blob[sum(map(len, pieces[:bad]))] |= 0b110  # the header of block 12: type 3 is reserved
    p = tmp_path / "bad-block.pgn.zst"
    p.write_bytes(bytes(blob))
    data, err = _read_until_error(p)
    assert isinstance(err, TruncatedInput)
    whole = b"".join(parts)
    assert whole.startswith(data) and len(data) >= sum(map(len, parts[: bad - 1]))


# UTF-16 text, as PowerShell 5's `>` writes it: read transcoded to UTF-8.
NAMES = '[Event "x"]\n[White "Jürgen Müller"]\n[Black "Åsa"]\n[Result "1-0"]\n\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\n\n'
UTF16_FORMS = {
    "le-bom": lambda text: b"\xff\xfe" + text.encode("utf-16-le"),
    "be-bom": lambda text: b"\xfe\xff" + text.encode("utf-16-be"),
    "le": lambda text: text.encode("utf-16-le"),
    "be": lambda text: text.encode("utf-16-be"),
}


def test_detect_utf16():
    text = '[Event "x"]\n[Site "Café"]\n'  # the accent after the first 16 characters
    assert detect_utf16(b"\xff\xfe[\x00") == "utf-16"
    assert detect_utf16(b"\xfe\xff\x00[") == "utf-16"
    assert detect_utf16(text.encode("utf-16-le")[:32]) == "utf-16-le"
    assert detect_utf16(text.encode("utf-16-be")[:32]) == "utf-16-be"
    assert detect_utf16("1. e4".encode("utf-16-le")) == "utf-16-le"  # a short file: all of it
    # Latin-1 letters early on (no byte order mark): still UTF-16
    for name in ("Café", "Müller", "Türkiye", "Ñandú"):
        head = f'[Event "{name}"]\n'.encode("utf-16-le")[:32]
        assert detect_utf16(head) == "utf-16-le", name
        assert detect_utf16(f'[Event "{name}"]\n'.encode("utf-16-be")[:32]) == "utf-16-be", name
    assert detect_utf16("éééééééé[".encode("utf-16-le")) is None  # mostly not ASCII
    assert detect_utf16("[E\x85vent]".encode("utf-16-le")) is None  # a C1 control
    # 8-bit text with a few NULs is no UTF-16, however it starts (a robustness case):
    for head in (b"\n\x00;\x00\n\n[Event \"A\"]\n[Result", b"\n\x00{\x00\n\n[Event", b"[\x00E\x00",
                 b"[Eve", b"\xef\xbb\xbf[", b"", b"\x00\x00\x00\x00\x00\x00\x00\x00", b"\x1f\x8b\x08\x00",
                 "[Event \"Café\"]".encode("utf-16-le")[:12] + b"\xe9\x01" + b"x\x00" * 9):
        assert detect_utf16(head) is None, head


@pytest.mark.parametrize("form", sorted(UTF16_FORMS))
@pytest.mark.parametrize("suffix", ["", ".gz", ".zst"])
def test_utf16_is_read_as_utf8(tmp_path, form, suffix):
    text = NAMES * 3000  # several buffers' worth
    blob = UTF16_FORMS[form](text)
    p = tmp_path / ("u16.pgn" + suffix)
    p.write_bytes(COMPRESSORS[suffix](blob) if suffix else blob)
    with open_source(p) as s:
        assert s.text_encoding == ("utf-16" if form.endswith("bom") else "utf-16-" + form)
        assert s.read() == text.encode("utf-8")
        assert s.bytes_read == p.stat().st_size


@pytest.mark.parametrize("bom, codec", [(b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be")])
def test_utf32_with_a_bom_is_read_as_utf8(tmp_path, bom, codec):
    # The little-endian mark starts as UTF-16's: it was read as UTF-16, one game of errors.
    text = NAMES * 3000
    p = tmp_path / "u32.pgn"
    p.write_bytes(bom + text.encode(codec))
    with open_source(p) as s:
        assert s.text_encoding == "utf-32"
        assert s.read() == text.encode("utf-8")
        assert s.bytes_read == p.stat().st_size


def test_utf16_on_stdin(monkeypatch):
    blob = UTF16_FORMS["le-bom"](NAMES)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(blob)))
    with open_source("-") as s:
        assert s.read() == NAMES.encode("utf-8")


def test_utf16_odd_byte_becomes_replacement_character(tmp_path):
    p = tmp_path / "odd.pgn"
    p.write_bytes(UTF16_FORMS["le-bom"](NAMES) + b"\x41")
    assert read_all(p) == NAMES.encode("utf-8") + "\ufffd".encode("utf-8")


def test_utf16_truncated_compressed_stream_yields_text_then_raises(tmp_path):
    text = NAMES * 3000
    blob = gzip.compress(UTF16_FORMS["le-bom"](text))
    p = tmp_path / "cut.pgn.gz"
    p.write_bytes(blob[: len(blob) // 2])
    got = []
    with open_source(p) as s:
        with pytest.raises(TruncatedInput):
            while chunk := s.read(1 << 14):
                got.append(chunk)
    data = b"".join(got)
    assert len(data) > 1000 and text.encode("utf-8").startswith(data[:-3])


@pytest.mark.parametrize("suffix", ["", ".gz", ".bz2", ".zst"])
def test_peek_stdin_loses_nothing(monkeypatch, suffix):
    """What peek_stdin shows is still read by the next open_source('-'), the counts too."""
    blob = COMPRESSORS[suffix](PGN) if suffix else PGN
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(blob)))
    head = peek_stdin()
    assert len(head) >= 64 and PGN.startswith(head)
    assert peek_stdin() == head  # looking twice changes nothing
    with open_source("-") as s:
        assert s.read() == PGN
        assert s.bytes_read == len(blob)


def test_closed_stdin_is_an_os_error(monkeypatch):
    monkeypatch.setattr(sys, "stdin", None)
    with pytest.raises(OSError, match="stdin is closed"):
        open_source("-")
    with pytest.raises(OSError):
        peek_stdin()


@pytest.mark.parametrize("packed", ["", "gz", "zst"])
def test_a_tar_archive_is_refused_plain_or_compressed(tmp_path, packed):
    """A tar member header (ustar magic, checksum right) at the start of the text: refused
    as an archive, although the games inside it are text; "ustar " at the same offset in a
    PGN file is not a tar (its checksum does not match)."""
    import io
    import tarfile

    buf = io.BytesIO()
    data = (SAMPLES / "lichess-magnus-300.pgn").read_bytes()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("games.pgn")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    raw = buf.getvalue()
    if packed == "gz":
        raw = gzip.compress(raw)
    elif packed == "zst":
        raw = zstandard.ZstdCompressor().compress(raw)
    p = tmp_path / ("games.tar" + (f".{packed}" if packed else ""))
    p.write_bytes(raw)
    with open_source(p) as s:
        with pytest.raises(UnsupportedInput, match="is a tar archive: unpack it"):
            s.read()
    fake = tmp_path / "fake.pgn"
    fake.write_bytes(data[:257] + b"ustar " + data[263:])
    with open_source(fake) as s:
        assert s.read(300) == fake.read_bytes()[:300]


@pytest.mark.parametrize("kind, head", [("zip", b"PK\x03\x04"), ("7z", b"7z\xbc\xaf\x27\x1c"), ("rar", b"Rar!\x1a\x07\x00")])
def test_archives_are_refused_with_their_kind(tmp_path, kind, head):
    """Refused at the first read (a run reports it and goes on with the next source)."""
    p = tmp_path / "games.pgn"
    p.write_bytes(head + b"\x00" * 100)
    with open_source(p) as s:
        assert s.compression == kind
        with pytest.raises(UnsupportedInput, match=f"is a {kind} archive: unpack it") as ei:
            s.read()
    assert ei.value.code == "unsupported-input" and isinstance(ei.value, TruncatedInput)


# --- decompression bombs ---------------------------------------------------------------------

MIB = 1 << 20


def _zstd_bomb(path: Path, game: bytes, size: int = 1 << 30, level: int = 3) -> int:
    """Write a .zst of ``game`` repeated to at least ``size`` bytes (zstd compresses a
    repeated block at several GB/s: ~0.2 s and ~100 KB here); return the games written."""
    block = game * max(1, MIB // len(game))
    co = zstandard.ZstdCompressor(level=level).compressobj()
    written = 0
    with open(path, "wb") as f:
        while written < size:
            f.write(co.compress(block))
            written += len(block)
        f.write(co.flush())
    return written // len(game)


def _bomb_game() -> bytes:
    """A game whose every ply has a 4,000-byte comment: 1 GiB of it is 13,390 games, which the
    analysis passes in about a second, so that the run's memory is that of reading."""
    moves = "e4 e5 Nf3 Nc6 Bb5 a6 Ba4 Nf6 O-O Be7 Re1 b5 Bb3 d6 c3 O-O h3 Nb8 d4 Nbd7".split()
    lines = ['[Event "bomb"]', '[White "A"]', '[Black "B"]', '[Result "*"]', ""]
    lines += [f"{i // 2 + 1}. " * (i % 2 == 0) + f"{m} {{{'x' * 4000}}}" for i, m in enumerate(moves)]
    return ("\n".join(lines + ["*", "", ""])).encode()


# The command's peak RSS, summed over its process tree sampled every 20 ms (psutil), and the
# largest single process's peak from the kernel (RUSAGE_CHILDREN of a wrapper that runs it).
_PEAK_WRAPPER = """
import resource, subprocess, sys
status = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
sys.stderr.buffer.write(status.stderr)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * (1 if sys.platform == "darwin" else 1024))
sys.exit(status.returncode)
"""


def _peak_memory(command: list[str]) -> tuple[int, int, str]:
    """(exit status, peak RSS in bytes, stderr) of ``command``."""
    import subprocess
    import time

    try:
        import psutil
    except ImportError:
        psutil = None
    proc = subprocess.Popen([sys.executable, "-c", _PEAK_WRAPPER, *command], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    peak = 0
    while proc.poll() is None and psutil is not None:
        try:
            tree = psutil.Process(proc.pid).children(recursive=True)
        except psutil.Error:
            tree = []
        total = 0
        for p in tree:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        peak = max(peak, total)
        time.sleep(0.02)
    stdout, stderr = proc.communicate(timeout=300)
    return proc.returncode, max(peak, int(stdout.split()[-1])), stderr.decode()


def _needs_free_memory(gib: int) -> None:
    try:
        import psutil
    except ImportError:
        return
    if psutil.virtual_memory().available < gib << 30:
        pytest.skip(f"needs {gib} GiB of free memory, should the decompression not be bounded "
                    f"(a 1 GiB zstd bomb took 1.4 GiB before); {psutil.virtual_memory().available >> 20} MiB free")


def test_zstd_bomb_is_read_in_bounded_memory(tmp_path):
    """A ~100 KB .zst of one game repeated to 1 GiB: the stream hands on every byte, holding
    at most one decoder call's output (ZSTD_INPUT_SLICE): 29 MiB of peak RSS for the reading
    process (1.4 GiB when each 64 KiB of input was decoded at once)."""
    _needs_free_memory(3)
    bomb = tmp_path / "bomb.pgn.zst"
    game = PGN[: PGN.index(b"[Event", 1)]
    games = _zstd_bomb(bomb, game)
    assert bomb.stat().st_size < 200_000
    reader = ("import sys\nfrom chessscan.readers.sources import open_source\nn = 0\n"
              "with open_source(sys.argv[1]) as s:\n    while (b := s.read(1 << 20)):\n        n += len(b)\n"
              "print(n, file=sys.stderr)")
    status, peak, stderr = _peak_memory([sys.executable, "-c", reader, str(bomb)])
    assert status == 0 and int(stderr.split()[-1]) == games * len(game) >= 1 << 30
    assert peak < 100 * MIB, f"{peak / MIB:.0f} MiB"


def test_zstd_bomb_through_validate_stays_under_the_memory_bound(tmp_path):
    """The whole run (read, analyze, diagnose) of a 1 GiB zstd bomb: every game read, and the
    run's memory that of one process's settings (docs, Speed and scale, "Memory": --jobs 1 under 300 MiB)."""
    _needs_free_memory(3)
    bomb = tmp_path / "bomb.pgn.zst"
    games = _zstd_bomb(bomb, _bomb_game())
    status, peak, stderr = _peak_memory([sys.executable, "-m", "chessscan", "validate", str(bomb), "--jobs", "1"])
    assert status == 0, stderr
    assert stderr.strip().splitlines()[-1] == f"{games} games: {games} ok, 0 with errors, 0 warnings"
    assert peak < 300 * MIB, f"{peak / MIB:.0f} MiB"


@pytest.mark.slow
def test_zstd_bomb_through_analyze_jobs_2_stays_under_the_memory_bound(tmp_path):
    """The 1 GiB zstd bomb through ``analyze --jobs 2`` (the main process reads and cuts, two
    workers analyze and write): every game read, and the process tree under the bound the docs
    state (Speed and scale, "Memory": 512 MiB). Its chunks grow as the run goes on; each
    shared-memory slot grown out of was kept to the end (29 slots, 264 MiB: 874 MiB in all)."""
    _needs_free_memory(3)
    bomb = tmp_path / "bomb.pgn.zst"
    games = _zstd_bomb(bomb, _bomb_game())
    out = tmp_path / "out"
    status, peak, stderr = _peak_memory([sys.executable, "-m", "chessscan", "analyze", str(bomb), "--jobs", "2",
                                         "--positions", "none", "--silent", "-o", str(out)])
    assert status == 0, stderr
    import json

    assert json.loads((out / "summary.json").read_text())["games_read"] == games
    assert peak < 512 * MIB, f"{peak / MIB:.0f} MiB"
