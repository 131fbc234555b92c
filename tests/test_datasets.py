"""The report layout: each Parquet table a dataset folder of parts in input order, whatever
wrote it, read back the same by chessscan.read_report, pandas, pyarrow, Polars and DuckDB."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.dataset as ds
import pytest
from click.testing import CliRunner

import chessscan
from chessscan.cli import main
from conftest import SAMPLES

MAGNUS = SAMPLES / "lichess-magnus-300.pgn"
VARIANTS = SAMPLES / "lichess-jishanshaikh4-variants.pgn"
WAC = SAMPLES / "arasan-wacnew.epd"


def analyze(out: Path, *args) -> Path:
    result = CliRunner().invoke(main, ["analyze", *map(str, args), "-o", str(out), "--silent"])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return out


def plain(values) -> list:
    """Values as Python objects, missing ones as None, whatever the reader's types."""
    return [None if v is None or v is pd.NA or (isinstance(v, float) and v != v) else
            (v.item() if hasattr(v, "item") else v) for v in values]


def test_one_process_writes_one_part_per_table(tmp_path):
    out = analyze(tmp_path / "r", VARIANTS, WAC, MAGNUS, "--jobs", "1")
    tables = ["positions", "games", "perpetuals", "epd_positions", "issues", "disagreements"]
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == sorted(tables)
    for t in tables:
        assert [p.name for p in (out / t).iterdir()] == ["part-000000.parquet"], t
    assert not (out / "disagreements").is_file()


def test_every_reader_reads_a_report_the_same_way(tmp_path):
    """read_report, pd.read_parquet on the folder, pyarrow's dataset, Polars and DuckDB on
    ``<table>/*.parquet``: the same rows in the same order, value for value."""
    pl = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    out = analyze(tmp_path / "r", VARIANTS, WAC, MAGNUS, "--jobs", "1", "--cross-check", "full")
    report = chessscan.read_report(out)
    assert len(report.positions) > 30_000 and len(report.issues) >= 8 and report.disagreements.empty
    for name, want in report.tables.items():
        folder = out / name
        columns = list(want.columns)
        by_pandas = pd.read_parquet(folder, dtype_backend="numpy_nullable")
        by_arrow = ds.dataset(folder).to_table()
        by_polars = pl.read_parquet(str(folder / "*.parquet"))
        rel = duckdb.sql(f"SELECT * FROM read_parquet('{folder}/*.parquet')")
        by_duckdb = rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()
        for reader, got in (("pandas", {c: by_pandas[c].tolist() for c in columns}),
                            ("pyarrow", {c: by_arrow.column(c).to_pylist() for c in columns}),
                            ("polars", {c: by_polars[c].to_list() for c in columns}),
                            ("duckdb", {c: by_duckdb.column(c).to_pylist() for c in columns})):
            assert list(got) == columns, (name, reader)
            for c in columns:
                assert plain(got[c]) == plain(want[c].tolist()), (name, reader, c)


# --- the workers write the parts (--jobs N) ------------------------------------------------

import json  # noqa: E402

from chessscan.analysis.options import AnalysisOptions  # noqa: E402
from chessscan.engines import parallel  # noqa: E402
from chessscan.engines.local import run, tables_for  # noqa: E402
from chessscan.engines.parallel import run_parallel  # noqa: E402
from chessscan.reports.parts import check_parts  # noqa: E402
from chessscan.reports.filters import IssueFilter  # noqa: E402
from chessscan.reports.writers import ReportWriter  # noqa: E402
from test_engines import TRICKY_PGN, InlinePool, irregular_pgn, wrong_zobrist_everywhere  # noqa: E402

MAGNUS_ZST = SAMPLES / "lichess-magnus-300.pgn.zst"


def write_report(out: Path, paths, options, jobs: int, fmt: str = "parquet", select=None, ignore=(), **kwargs):
    """A report written as chessscan analyze writes it (parts; issues through the filter),
    by one process or by ``jobs`` workers; returns its summary and tables as read back."""
    paths = [str(p) for p in paths]
    writer = ReportWriter(out, fmt=fmt, tables=tables_for(paths, options), parts=True)
    sink = IssueFilter(writer, select, ignore)
    with writer:
        if jobs == 1:
            tally = run(paths, sink, options)
        else:
            tally = run_parallel(paths, sink, options, jobs=jobs, **kwargs)
        sink.finish()
    if writer.dataset:
        assert check_parts(published(writer)) == len(published(writer))
    writer.write_summary(tally.as_dict())
    assert not [p for p in out.rglob("*") if p.name.startswith(".") or p.name.endswith(".partial")]
    return tally.as_dict(), chessscan.read_report(out)


def published(writer) -> list:
    return [part for parts in writer.published.values() for part in parts]


def assert_same_report(one, two) -> None:
    (summary1, report1), (summary2, report2) = one, two
    assert json.dumps(summary1) == json.dumps(summary2)  # key order too
    assert report1.tables.keys() == report2.tables.keys()
    for name in report1.tables:
        pd.testing.assert_frame_equal(report1[name], report2[name], obj=name)


def parts_of(out: Path, table: str) -> list[str]:
    return sorted(p.name for p in (out / table).iterdir())


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
@pytest.mark.parametrize("cross_check", ["off", "sample"])
def test_workers_write_the_parts_of_one_process_report(tmp_path, monkeypatch, fmt, cross_check):
    """Many small chunks, PGN around an EPD file, a compressed file: every table equal to
    one process's, value for value and row for row, and the parts in input order."""
    monkeypatch.setattr(parallel, "_WORK_WHILE_POOL_STARTS", False)
    paths = [VARIANTS, WAC, MAGNUS_ZST]
    options = AnalysisOptions(cross_check=cross_check)
    one = write_report(tmp_path / "one", paths, options, 1, fmt)
    two = write_report(tmp_path / "two", paths, options, 2, fmt, batch_bytes=30_000, in_flight=3)
    assert_same_report(one, two)
    if fmt == "parquet":
        parts = parts_of(tmp_path / "two", "positions")
        assert len(parts) > 20 and parts == sorted(parts)
        assert parts_of(tmp_path / "two", "epd_positions") != ["part-000000.parquet"]  # between PGN parts
    else:
        assert sorted(p.name for p in (tmp_path / "two").iterdir() if p.suffix == ".csv") == [
            f"{t}.csv" for t in sorted(two[1].tables)]


@pytest.mark.parametrize("case", ["tricky", "irregular", "irregular-crlf", "no-event", "quotes", "truncated"])
def test_parts_of_hard_cuts_equal_one_process(tmp_path, monkeypatch, case):
    """Cuts inside comments (the chunk read again with the next), first game indexes
    estimated wrong (the chunk analyzed again, the rest read here), no place to cut (read
    here, sent as batches of games), a truncated compressed file: the parts of the dropped
    results are gone, and the tables are one process's."""
    monkeypatch.setattr(parallel, "_WORK_WHILE_POOL_STARTS", False)
    kwargs = {"batch_bytes": 2_000, "in_flight": 3, "batch_games": 7}
    path = tmp_path / "in.pgn"
    if case == "tricky":
        path.write_bytes(TRICKY_PGN.encode())
        kwargs["batch_bytes"] = 97
    elif case.startswith("irregular"):
        path.write_bytes(irregular_pgn(case.endswith("crlf")))
        kwargs["batch_bytes"] = 20_000
    elif case == "no-event":
        monkeypatch.setattr(parallel, "MAX_CHUNK_BYTES", 50_000)
        path.write_bytes(b"".join(line for line in MAGNUS.read_bytes().splitlines(True)
                                  if not line.startswith(b"[Event ")))
        kwargs["batch_bytes"] = 20_000
    elif case == "quotes":
        monkeypatch.setattr(parallel, "MAX_CHUNK_BYTES", 6_000)
        game = '[Event "g{}"]\n\n1. e4 {{quoted\n1-0\n\n[Event "in"]\n\n1. d4 0-1\n}} e5 2. Nf3 1-0 ; end\n\n'
        path.write_text("".join(game.format(k) for k in range(400)))
        kwargs["batch_bytes"] = 500
    else:
        path = tmp_path / "cut.pgn.zst"
        path.write_bytes(MAGNUS_ZST.read_bytes()[:100_000])
        kwargs["batch_bytes"] = 50_000
    options = AnalysisOptions(cross_check="sample")
    one = write_report(tmp_path / "one", [path], options, 1)
    two = write_report(tmp_path / "two", [path], options, 2, **kwargs)
    assert_same_report(one, two)
    assert len(parts_of(tmp_path / "two", "games")) > 2


def test_deferred_sample_rows_join_the_chunk_part(tmp_path, monkeypatch):
    """The rare kinds' first games, decided and replayed in input order by the main process:
    their disagreement rows go into the chunk's part among the worker's, by game index."""
    from chessscan.analysis import sampling

    monkeypatch.setattr(sampling, "SAMPLE_EVERY", 23)
    monkeypatch.setattr(sampling, "SAMPLE_PER_KIND", 2)
    monkeypatch.setattr(parallel, "_start_pool", lambda jobs: InlinePool())
    monkeypatch.setattr(parallel, "_WORK_WHILE_POOL_STARTS", False)
    wrong_zobrist_everywhere(monkeypatch)
    paths = [MAGNUS, VARIANTS, WAC, MAGNUS_ZST]
    options = AnalysisOptions(cross_check="sample")
    for fmt in ("parquet", "csv"):
        one = write_report(tmp_path / f"one-{fmt}", paths, options, 1, fmt)
        two = write_report(tmp_path / f"two-{fmt}", paths, options, 2, fmt, batch_bytes=20_000, in_flight=3)
        assert_same_report(one, two)
        dis = two[1].disagreements
        assert len(dis) > 100 and any(dis.game_index % 23 != 0)  # the main process's replays among them


def test_issue_filter_rules_hold_across_parts(tmp_path, monkeypatch):
    """--select/--ignore, uci-move once a game and decode-fallback once a file (its count
    summed over the file's chunks, its row after the file's other issues): as one process."""
    monkeypatch.setattr(parallel, "_WORK_WHILE_POOL_STARTS", False)
    latin = tmp_path / "latin.pgn"
    game = '[Event "Caf\xe9 {}"]\n[White "A"]\n[Black "B"]\n\n1. e2e4 e7e5 2. g1f3 *\n\n'
    latin.write_bytes("".join(game.format(k) for k in range(300)).encode("latin-1"))
    paths = [latin, MAGNUS, latin]
    options = AnalysisOptions(cross_check="off")
    for select, ignore in ((None, ()), (None, ("uci-move",)), ({"decode-fallback", "empty-input"}, ())):
        one = write_report(tmp_path / "one", paths, options, 1, select=select, ignore=ignore)
        two = write_report(tmp_path / "two", paths, options, 2, select=select, ignore=ignore,
                           batch_bytes=2_000, in_flight=3)
        assert_same_report(one, two)
        codes = one[1].issues.code.tolist()
        if select is None and not ignore:
            assert codes.count("decode-fallback") == 2 and codes.count("uci-move") == 600
        for folder in ("one", "two"):
            import shutil

            shutil.rmtree(tmp_path / folder)


def test_a_stop_leaves_whole_parts_in_order(tmp_path, monkeypatch):
    """A stop midway: the parts named are whole and the first ones in input order, and no
    part being written is left."""
    monkeypatch.setattr(parallel, "_WORK_WHILE_POOL_STARTS", False)
    big = tmp_path / "big.pgn"
    big.write_bytes(MAGNUS.read_bytes() * 4)
    options = AnalysisOptions(cross_check="off")
    calls = []
    real_counts = parallel._chunk_counts

    def stop_after_some(*args):
        calls.append(1)
        if len(calls) == 25:
            raise KeyboardInterrupt
        return real_counts(*args)

    monkeypatch.setattr(parallel, "_chunk_counts", stop_after_some)
    out = tmp_path / "r"
    writer = ReportWriter(out, tables=tables_for([str(big)], options), parts=True)
    with pytest.raises(KeyboardInterrupt):
        with writer:
            run_parallel([str(big)], writer, options, jobs=2, batch_bytes=30_000, in_flight=4)
    assert not [p for p in out.rglob("*") if p.name.endswith(".partial") or p.name.startswith(".part")]
    check_parts(published(writer))
    games = pd.read_parquet(out / "games")
    assert 0 < len(games) < 1200 and list(games.game_index) == list(range(len(games)))
    positions = pd.read_parquet(out / "positions")
    assert positions.game_index.max() == len(games) - 1


def test_a_part_that_cannot_be_written_is_an_output_error(tmp_path, monkeypatch):
    """A worker's part that fails (a full disk) fails the run with OutputError naming the
    table's folder, and leaves no part being written."""
    import errno

    from chessscan.reports import writers

    monkeypatch.setattr(parallel, "_start_pool", lambda jobs: InlinePool())
    monkeypatch.setattr(parallel, "_WORK_WHILE_POOL_STARTS", False)
    real_write = writers.TableWriter.write
    seen = []

    def write(self, columns):
        if not self.publish and self.table == "games":
            seen.append(1)
            if len(seen) == 3:
                raise writers.OutputError(self.path, OSError(errno.ENOSPC, "No space left on device"))
        return real_write(self, columns)

    monkeypatch.setattr(writers.TableWriter, "write", write)
    options = AnalysisOptions(cross_check="off")
    out = tmp_path / "r"
    writer = ReportWriter(out, tables=tables_for([str(MAGNUS)], options), parts=True)
    with pytest.raises(writers.OutputError, match=r"cannot write .*/games/part-\d{6}\.parquet: No space left"):
        with writer:
            run_parallel([str(MAGNUS)], writer, options, jobs=2, batch_bytes=30_000, in_flight=3)
    assert not [p for p in out.rglob("*") if p.name.endswith(".partial")]


def test_output_error_crosses_processes():
    import pickle

    from chessscan.reports.writers import OutputError

    error = OutputError("/r/games/part-000003.parquet", OSError(28, "No space left on device"))
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is OutputError and str(again) == str(error) and again.path == error.path
    assert again.errno == 28


def test_no_room_in_shared_memory_sends_the_chunks_as_bytes(tmp_path, monkeypatch):
    """A /dev/shm too small for a chunk (64 MiB in a container, say): the pages cannot be
    reserved, the slot is a bytearray, and its chunks travel as bytes, with the same tables."""
    import errno
    import os as os_module

    from chessscan.engines import chunks

    def full(fd, offset, length):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os_module, "posix_fallocate", full, raising=False)
    monkeypatch.setattr(parallel, "_WORK_WHILE_POOL_STARTS", False)
    made = []
    real_slot = chunks.Slot

    class Slot(real_slot):
        def __init__(self, capacity, shared):
            super().__init__(capacity, shared)
            made.append(self.name)

    monkeypatch.setattr(chunks, "Slot", Slot)
    options = AnalysisOptions(cross_check="off")
    one = write_report(tmp_path / "one", [MAGNUS_ZST], options, 1)
    two = write_report(tmp_path / "two", [MAGNUS_ZST], options, 2, batch_bytes=30_000, in_flight=3)
    assert_same_report(one, two)
    assert made and made == [None] * len(made)  # bytearrays only


def test_chunk_text_reads_segments_in_place():
    """A chunk's text, segments of shared memory and bytes, reads back as their bytes, then
    raises the error the source ended with."""
    from chessscan.engines.chunks import ChunkStream, ChunkText, Slots

    slots = Slots()
    try:
        slot = slots.take(1 << 16)
        slot.view[:11] = b"hello world"
        text = ChunkText((slot.segment(0, 5),), 5) + ChunkText((b", ",), 2) + ChunkText((slot.segment(6, 11),), 5)
        assert len(text) == 12
        import pickle

        assert pickle.loads(pickle.dumps(text)) == text  # (what a worker gets: names, not bytes)
        stream = ChunkStream(text, ValueError("cut short"))
        got = b""
        while True:
            try:
                piece = stream.read(3)
            except ValueError as exc:
                assert str(exc) == "cut short"
                break
            assert piece
            got += piece
        assert got == b"hello, world"
    finally:
        slots.close()


def test_slots_too_small_for_the_chunks_now_are_removed_and_let_go_by_the_workers():
    """Chunks grow as a run goes on: a free slot smaller than the one asked for is removed
    (its shared memory unlinked), not kept beside it for the rest of the run (a 1 GiB zstd
    bomb's --jobs 2 run held 29 slots, 264 MiB); a worker's mapping of a removed slot goes at
    its next new mapping, and the pages of a segment it has read are let go, the text still
    there when read again."""
    import os

    from chessscan.engines import chunks
    from chessscan.engines.chunks import ChunkStream, ChunkText, Slots

    if not chunks.shared_memory_available():
        pytest.skip("no POSIX shared memory (/dev/shm) here")
    slots = Slots()
    chunks._MAPPED.clear()
    try:
        small = slots.take(1 << 16)
        text = bytes(range(256)) * 256
        small.view[:len(text)] = text
        seg = ChunkText((small.segment(0, len(text)),), len(text))
        assert ChunkStream(seg).read() == text  # (in this process as in a worker: mapped by name)
        assert ChunkStream(seg).read() == text  # its pages let go after the first read: read again
        assert small.name.lstrip("/") in {n.lstrip("/") for n in chunks._MAPPED}
        slots.release(small)
        again = slots.take(1 << 15)  # fits in the free slot: the same one
        assert again is small
        slots.release(again)
        path = os.path.join("/dev/shm", small.name.lstrip("/"))
        assert os.path.exists(path)
        big = slots.take(1 << 20)  # too big for it: it is removed
        assert big is not small and not os.path.exists(path) and small.view is None
        assert slots._all == [big] and slots._free == []
        big.view[:5] = b"hello"
        assert ChunkStream(ChunkText((big.segment(0, 5),), 5)).read() == b"hello"
        assert [n.lstrip("/") for n in chunks._MAPPED] == [big.name.lstrip("/")]  # the removed one let go
        slots.release(big)
        assert slots.take(1 << 16) is big  # a smaller chunk takes the larger free slot
    finally:
        slots.close()
        for got in list(chunks._MAPPED.values()):
            chunks._unmap(got)
        chunks._MAPPED.clear()


def test_a_chunk_of_a_file_range_is_written_as_a_chunk_of_shared_memory(tmp_path):
    """A task that reads its text itself (a byte range of a plain file, as a cluster's task
    would) writes the same parts as one given the text."""
    from chessscan.engines.chunks import ChunkText, FileRange

    data = MAGNUS.read_bytes()
    options = AnalysisOptions(cross_check="sample")
    names = tables_for([str(MAGNUS)], options)
    results = []
    for k, text in enumerate([ChunkText((data,), len(data)),
                              ChunkText((FileRange(str(MAGNUS), 0, 1000), FileRange(str(MAGNUS), 1000, len(data))),
                                        len(data))]):
        out = tmp_path / str(k)
        target = ReportWriter(out, tables=names, parts=True).part_target()
        tally, parts, games, open_, held, deferred = parallel.write_chunk(
            text, None, "m.pgn", 0, 0, 0, options, names, target, 7, 0)
        assert games == 300 and not open_ and held == {}
        assert all(".part-000007.parquet." in path for path, _ in parts.values())
        results.append((tally.as_dict(), {t: pd.read_parquet(path) for t, (path, _) in parts.items()}))
    assert results[0][0] == results[1][0]
    for t in results[0][1]:
        pd.testing.assert_frame_equal(results[0][1][t], results[1][1][t])


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_rows_added_to_a_part_in_a_folder_named_in_other_bytes(tmp_path, fmt):
    """The main process's disagreement rows join a worker's part read back by its exact name
    (a report folder named in Latin-1 bytes: Arrow takes names as UTF-8 text)."""
    import os

    from chessscan.reports.dataset import PartTarget, _read_part, add_rows
    from chessscan.reports.schema import schema_for

    out = tmp_path / os.fsdecode(b"r\xe9")
    (out / "disagreements").mkdir(parents=True)
    target = PartTarget(str(out), fmt, {}, None, frozenset(), False)

    def rows(indexes, who):
        return {"source": ["a.pgn"] * len(indexes), "game_index": indexes, "ply": [1] * len(indexes),
                "field": ["san"] * len(indexes), "chessscan": [f"{who} {i}" for i in indexes],
                "python_chess": ["theirs"] * len(indexes), "fen": [None] * len(indexes),
                "note": [None] * len(indexes)}

    parts = {}
    add_rows(parts, "disagreements", rows([0, 4, 9], "worker"), target, 3)  # the worker's rows
    first = parts["disagreements"][0]
    add_rows(parts, "disagreements", rows([2, 4, 12], "main"), target, 3)  # the main process's, after
    path, count = parts["disagreements"]
    assert count == 6 and not os.path.exists(first)
    table = _read_part(path, fmt, schema_for("disagreements", ()))
    assert table.column("game_index").to_pylist() == [0, 2, 4, 4, 9, 12]
    assert table.column("chessscan").to_pylist() == ["worker 0", "main 2", "worker 4", "main 4",
                                                        "worker 9", "main 12"]


def test_a_stop_keeps_the_part_the_main_process_is_writing(tmp_path, monkeypatch):
    """A stop before any worker's part is named: the part the main process itself is
    writing (an EPD source's rows, analyzed here) is not swept with the workers' and is
    closed whole; no part being written is left."""
    monkeypatch.setattr(parallel, "_WORK_WHILE_POOL_STARTS", False)
    big = tmp_path / "big.pgn"
    big.write_bytes(MAGNUS.read_bytes() * 4)
    epd = SAMPLES / "perft-cw-special.epd"  # 174 positions, one with an impossible check
    options = AnalysisOptions(cross_check="off")

    def stop_at_once(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(parallel, "_chunk_counts", stop_at_once)
    out = tmp_path / "r"
    paths = [str(epd), str(big)]
    writer = ReportWriter(out, tables=tables_for(paths, options), parts=True)
    with pytest.raises(KeyboardInterrupt):
        with writer:
            run_parallel(paths, writer, options, jobs=2, batch_bytes=30_000, in_flight=4)
    assert not [p for p in out.rglob("*") if p.name.endswith(".partial") or p.name.startswith(".part")]
    check_parts(published(writer))
    issues = pd.read_parquet(out / "issues")
    assert issues.code.tolist() == ["impossible-check"] and set(issues.source) == {str(epd)}
    assert len(pd.read_parquet(out / "epd_positions")) == 174
    # The tables of the games not analyzed: one part each, the main process's, with no row.
    for table in ("games", "positions", "perpetuals"):
        assert parts_of(out, table) == ["part-000000.parquet"] and pd.read_parquet(out / table).empty
