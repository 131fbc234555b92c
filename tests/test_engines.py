"""Engines: worker processes (--jobs) and Dask (--dask) give the single-process output.

Timing is never asserted here (benchmarks/throughput.py measures it by hand).
"""

from __future__ import annotations

import io
import json
import os
import re
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from chessscan.analysis.game import Tally
from chessscan.analysis.options import AnalysisOptions
from chessscan.cli import main
from chessscan.engines import dask as dask_engine
from chessscan.engines import parallel
from chessscan.engines.local import MemorySink, run, tables_for
from chessscan.engines.parallel import run_parallel
from chessscan.readers.pgn import last_sure_game_start, read_games
from chessscan.reports.writers import ReportWriter
from conftest import SAMPLES

MAGNUS = SAMPLES / "lichess-magnus-300.pgn"
MAGNUS_ZST = SAMPLES / "lichess-magnus-300.pgn.zst"
VARIANTS = SAMPLES / "lichess-jishanshaikh4-variants.pgn"
WACNEW = SAMPLES / "arasan-wacnew.epd"

INPUTS = {
    "magnus": [MAGNUS],
    # PGN, EPD in between (shares the issues table), then a compressed PGN.
    "multi": [VARIANTS, WACNEW, MAGNUS_ZST],
}


def read_report(out: Path, names) -> dict[str, pd.DataFrame]:
    """Each table of a report folder (a file, or a Dask dataset folder) as a DataFrame."""
    tables = {}
    for name in names:
        path = out / f"{name}.parquet"
        tables[name] = pd.read_parquet(path if path.exists() else out / name, dtype_backend="numpy_nullable")
    return tables


def assert_same_tables(left: dict[str, pd.DataFrame], right: dict[str, pd.DataFrame], sort: bool = False):
    assert left.keys() == right.keys()
    for name in left:
        a, b = left[name], right[name]
        if sort:
            keys = [k for k in ("source", "game_index", "ply", "line") if k in a.columns]
            a = a.sort_values(keys, kind="stable").reset_index(drop=True)
            b = b.sort_values(keys, kind="stable").reset_index(drop=True)
        pd.testing.assert_frame_equal(a, b, obj=name)


def analyze_cli(tmp: Path, label: str, paths, *args) -> Path:
    out = tmp / label
    result = CliRunner().invoke(main, ["analyze", *map(str, paths), "-o", str(out), "--silent", *args])
    assert result.exit_code == 0, result.output + repr(result.exception)
    return out


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    """The --jobs 1 reports, made once per (input, cross-check mode)."""
    tmp = tmp_path_factory.mktemp("single")
    cache = {}

    def get(inputs: str, cross_check: str) -> Path:
        key = (inputs, cross_check)
        if key not in cache:
            cache[key] = analyze_cli(tmp, f"{inputs}-{cross_check}", INPUTS[inputs],
                                     "--jobs", "1", "--cross-check", cross_check)
        return cache[key]

    return get


# (multi, sample) is covered by test_small_batches_keep_order_and_tally, and its --jobs 1
# report is the Dask test's reference. (multi, full), 6 s of CPU, adds no case of its own to
# those and (magnus, full): slow.
@pytest.mark.parametrize("inputs, cross_check", [("magnus", "sample"), ("magnus", "full"),
                                                 pytest.param("multi", "full", marks=pytest.mark.slow)])
def test_jobs_2_equals_jobs_1(tmp_path, single, inputs, cross_check):
    one = single(inputs, cross_check)
    two = analyze_cli(tmp_path, "two", INPUTS[inputs], "--jobs", "2", "--cross-check", cross_check)
    names = tables_for(map(str, INPUTS[inputs]), AnalysisOptions(cross_check=cross_check))
    expected = read_report(one, names)
    assert len(expected["games"]) > 250
    assert_same_tables(expected, read_report(two, names))
    assert (one / "summary.json").read_text() == (two / "summary.json").read_text()
    summary = json.loads((two / "summary.json").read_text())
    if cross_check == "full":
        assert summary["cross_check"]["positions"] == summary["positions"]


class ListSink:
    """A sink that is neither a ReportWriter nor a MemorySink: gets Python lists."""

    def __init__(self):
        self.rows: dict[str, dict[str, list]] = {}

    def write(self, name, columns):
        assert all(isinstance(v, list) for v in columns.values())
        table = self.rows.setdefault(name, {c: [] for c in columns})
        for c, v in columns.items():
            table[c].extend(v)


@pytest.mark.parametrize("work_while_starting", [True, False])
def test_small_batches_keep_order_and_tally(monkeypatch, work_while_starting):
    """Many small chunks, few in flight, a sink taking lists: same rows and tally, whether
    the main process analyzes chunks while the pool starts or waits for it."""
    monkeypatch.setattr(parallel, "_WORK_WHILE_POOL_STARTS", work_while_starting)
    paths = [str(p) for p in INPUTS["multi"]]
    options = AnalysisOptions(cross_check="sample")
    ref, got = ListSink(), ListSink()
    tally1 = run(paths, ref, options)
    tally2 = run_parallel(paths, got, options, jobs=2, batch_bytes=20_000, in_flight=3)
    assert tally1.as_dict() == tally2.as_dict()
    assert list(json.dumps(tally1.as_dict())) == list(json.dumps(tally2.as_dict()))  # key order too
    assert ref.rows == got.rows


def irregular_pgn(crlf: bool) -> bytes:
    """The magnus sample with Event tags a count of ``[Event "`` lines gets wrong: every
    37th game has none, and every 53rd quotes an Event line in a comment."""
    text = MAGNUS.read_bytes()
    games = text.split(b'\n\n[Event "')
    out = []
    for k, game in enumerate(games):
        game = game.removeprefix(b'[Event "')
        if k % 37 == 5:
            out.append(game.split(b"\n", 1)[1])
        else:
            if k % 53 == 7:
                game = game.replace(b" 2. ", b' {\n[Event "quoted"]\n} 2. ', 1)
            out.append(b'[Event "' + game)
    text = b"\n\n".join(out)
    return text.replace(b"\n", b"\r\n") if crlf else text


class Counting:
    """Wraps a function of a module and counts its calls."""

    def __init__(self, monkeypatch, module, name):
        self.calls = 0
        inner = getattr(module, name)

        def counted(*args, **kwargs):
            self.calls += 1
            return inner(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)


def test_tricky_file_has_cuts_inside_comments():
    """The optimistic rule cuts the tricky file inside the quoting comments: the cases below
    do test that such a cut is undone."""
    data = TRICKY_PGN.encode()
    quoted = [m.start() for m in re.finditer(rb'\[Event "in a comment"\]', data)]
    assert len(quoted) == 3
    assert all(last_sure_game_start(data, q - 1, q + 9) == q for q in quoted)
    games = list(read_games(io.BytesIO(data)))
    assert not any(g.tags.get("Event", "").startswith("in ") for g in games)
    by_event = {g.tags.get("Event"): g for g in games}
    # The quoted games' second [Event] line has no blank line before it: a warning each.
    assert [i.code for i in by_event["qa"].issues] == ["game-in-comment"] and by_event["qa"].sans == ["e4", "e5"]
    assert [i.code for i in by_event["qb"].issues] == ["game-in-comment"] * 2 and by_event["qd"].issues == []
    assert [i.code for i in by_event["qc"].issues] == ["unclosed-comment", "missing-result"]
    assert by_event["qe"].tags == {"Event": "qe", "Site": "s", "Round": "1"} and by_event["qe"].issues == []


@pytest.mark.parametrize("in_flight", [1, 3])
@pytest.mark.parametrize("cross_check", ["sample", "off"])
@pytest.mark.parametrize("batch_bytes", [1, 5, 97])
def test_chunks_cut_only_at_sure_game_starts(tmp_path, monkeypatch, cross_check, batch_bytes, in_flight):
    """Chunks cut wherever the tricky file allows: the rows and the tally are one process's
    (a chunk that ends inside a comment is read again with the next: at once, or when the
    next is queued, or with the rest of the source read here)."""
    monkeypatch.setattr(parallel, "_WORK_WHILE_POOL_STARTS", False)
    path = tmp_path / "tricky.pgn"
    path.write_bytes(TRICKY_PGN.encode())
    options = AnalysisOptions(cross_check=cross_check)
    chunks = Counting(monkeypatch, parallel, "_chunk_counts")  # once per chunk sent
    ref, got = ListSink(), ListSink()
    tally1 = run([str(path)], ref, options)
    tally2 = run_parallel([str(path)], got, options, jobs=2, batch_bytes=batch_bytes, in_flight=in_flight)
    assert len(ref.rows["games"]["game_index"]) >= 20
    assert chunks.calls >= 5
    assert tally1.as_dict() == tally2.as_dict()
    assert ref.rows == got.rows


@pytest.mark.parametrize("crlf", [False, True])
@pytest.mark.parametrize("cross_check", ["sample", "off"])
def test_chunks_with_wrong_game_index_estimates(tmp_path, monkeypatch, cross_check, crlf):
    """Estimates off in both directions are corrected: by shifting game_index, or (sample
    cross-check) by analyzing the chunk again and reading the rest of the file here."""
    monkeypatch.setattr(parallel, "_WORK_WHILE_POOL_STARTS", False)
    path = tmp_path / "irregular.pgn"
    path.write_bytes(irregular_pgn(crlf))
    options = AnalysisOptions(cross_check=cross_check)
    shifts = Counting(monkeypatch, parallel, "_shift_game_index")
    rest = Counting(monkeypatch, parallel, "_Rest")
    ref, got = ListSink(), ListSink()
    tally1 = run([str(path)], ref, options)
    tally2 = run_parallel([str(path)], got, options, jobs=2, batch_bytes=20_000, batch_games=9, in_flight=3)
    assert len(ref.rows["games"]["game_index"]) == 300
    if cross_check == "sample":
        assert rest.calls == 1 and shifts.calls == 0
    else:
        assert rest.calls == 0 and shifts.calls > 5
    assert tally1.as_dict() == tally2.as_dict()
    assert ref.rows == got.rows
    if cross_check == "off":  # the shift on Arrow record batches (what the report writer gets)
        arrow_sink = MemorySink()
        run_parallel([str(path)], arrow_sink, options, jobs=2, batch_bytes=20_000, in_flight=3)
        for name, columns in ref.rows.items():
            assert [v for b in arrow_sink.batches[name] for v in b["game_index"]] == columns["game_index"]


def test_source_without_sure_game_starts_is_read_here(tmp_path, monkeypatch):
    """No line a chunk can be cut at (no Event tags) in MAX_CHUNK_BYTES: the main process
    reads the rest of the file, in batches of games."""
    monkeypatch.setattr(parallel, "MAX_CHUNK_BYTES", 50_000)
    monkeypatch.setattr(parallel, "_WORK_WHILE_POOL_STARTS", False)
    path = tmp_path / "no-event.pgn"
    text = b"".join(line for line in MAGNUS.read_bytes().splitlines(True) if not line.startswith(b"[Event "))
    path.write_bytes(text)
    rest = Counting(monkeypatch, parallel, "_Rest")
    options = AnalysisOptions(cross_check="sample")
    ref, got = ListSink(), ListSink()
    tally1 = run([str(path)], ref, options)
    tally2 = run_parallel([str(path)], got, options, jobs=2, batch_bytes=20_000, batch_games=9)
    assert rest.calls == 1
    assert tally1.as_dict() == tally2.as_dict()
    assert ref.rows == got.rows


def test_comment_at_every_cut_is_read_here(tmp_path, monkeypatch):
    """Every cut the rule finds lies inside a comment (each game quotes one, and ends with a
    ';' comment, which the rule never cuts after): chunks are joined until they reach
    MAX_CHUNK_BYTES, then the main process reads the rest of the file."""
    monkeypatch.setattr(parallel, "MAX_CHUNK_BYTES", 6_000)
    monkeypatch.setattr(parallel, "_WORK_WHILE_POOL_STARTS", False)
    game = '[Event "g{}"]\n\n1. e4 {{quoted\n1-0\n\n[Event "in"]\n\n1. d4 0-1\n}} e5 2. Nf3 1-0 ; end\n\n'
    path = tmp_path / "quotes.pgn"
    path.write_text("".join(game.format(k) for k in range(400)))
    rest = Counting(monkeypatch, parallel, "_Rest")
    options = AnalysisOptions(cross_check="sample")
    ref, got = ListSink(), ListSink()
    tally1 = run([str(path)], ref, options)
    tally2 = run_parallel([str(path)], got, options, jobs=2, batch_bytes=500, batch_games=7, in_flight=3)
    assert tally1.games == 400 and tally1.games_ok == 400
    assert rest.calls == 1
    assert tally1.as_dict() == tally2.as_dict()
    assert ref.rows == got.rows


def test_truncated_source_in_chunks(tmp_path):
    """A compressed file cut short: the last chunk carries the error, reported as by one
    process (on the game it cut, with the line reached)."""
    path = tmp_path / "cut.pgn.zst"
    path.write_bytes(MAGNUS_ZST.read_bytes()[:100_000])
    ref, got = ListSink(), ListSink()
    tally1 = run([str(path)], ref, AnalysisOptions())
    tally2 = run_parallel([str(path)], got, AnalysisOptions(), jobs=2, batch_bytes=50_000)
    assert tally1.issues["truncated-input"] == 1
    assert tally1.as_dict() == tally2.as_dict()
    assert ref.rows == got.rows


def test_pool_start_failure_is_raised(monkeypatch):
    """A pool that cannot start (no processes left, say) fails the run with its error."""
    def no_pool(jobs):
        raise OSError("cannot start worker processes")

    monkeypatch.setattr(parallel, "_start_pool", no_pool)
    with pytest.raises(OSError, match="cannot start worker processes"):
        run_parallel([str(MAGNUS)], ListSink(), jobs=2, batch_bytes=100_000)


def test_stopped_pool_kills_running_workers():
    """An interrupted run stops its workers at once (they ignore SIGINT), not after their
    current chunk."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as starter:  # as run_parallel starts it (it blocks SIGINT there)
        pool = starter.submit(parallel._start_pool, 2).result()
    processes = list(pool._processes.values())
    pool.submit(time.sleep, 60)
    parallel._stop_pool(pool)
    for process in processes:
        process.join(30)
        assert not process.is_alive()


def test_the_main_thread_never_submits_to_the_pool(monkeypatch):
    """A stop is raised in the main thread between any two bytecodes: raised inside
    ``ProcessPoolExecutor.submit``, which may be starting a worker, it left that worker
    half started (an EOFError traceback) or unknown to the pool (the exit hung). So every
    submit, and the pool's start, runs in the pool's own thread."""
    import threading

    threads = []

    class Recording(InlinePool):
        def submit(self, fn, *args, **kwargs):
            threads.append(threading.current_thread())
            return super().submit(fn, *args, **kwargs)

    def start(jobs):
        threads.append(threading.current_thread())
        return Recording()

    monkeypatch.setattr(parallel, "_start_pool", start)
    monkeypatch.setattr(parallel, "_WORK_WHILE_POOL_STARTS", False)
    ref, got = ListSink(), ListSink()
    run([str(MAGNUS)], ref, AnalysisOptions())
    run_parallel([str(MAGNUS)], got, AnalysisOptions(), jobs=2, batch_bytes=50_000)
    assert got.rows == ref.rows
    assert len(threads) > 5 and threading.main_thread() not in threads


def test_memory_sink_accepts_arrow_batches():
    tally = Tally()
    sink = MemorySink()
    tally.merge(run_parallel([str(MAGNUS)], sink, jobs=2, batch_bytes=200_000))
    ref = MemorySink()
    run([str(MAGNUS)], ref)
    merged = {t: {c: sum((b[c] for b in bs), []) for c in bs[0]} for t, bs in sink.batches.items()}
    expected = {t: {c: sum((b[c] for b in bs), []) for c in bs[0]} for t, bs in ref.batches.items()}
    assert merged == expected
    assert tally.games == 300


class BarRecorder:
    """Stands in for the tqdm bar: records the byte counts it is advanced by."""

    def __init__(self):
        self.n = 0

    def update(self, n):
        assert n >= 0
        self.n += n

    def close(self):
        pass


def test_progress_counts_every_input_byte(monkeypatch):
    bar = BarRecorder()
    monkeypatch.setattr(parallel, "_progress", lambda paths, enabled, label="analyze": bar if enabled else None)
    paths = [str(p) for p in INPUTS["multi"]]
    run_parallel(paths, ListSink(), jobs=2, batch_bytes=100_000, progress=True)
    assert bar.n == sum(Path(p).stat().st_size for p in paths)


def test_reused_output_folder_keeps_no_table_of_an_earlier_run(tmp_path):
    """The tables an earlier run recorded writing are removed; the user's files stay."""
    epd = SAMPLES / "sf-books-stalemates-500.epd"
    out = analyze_cli(tmp_path, "out", [MAGNUS, epd], "--cross-check", "sample")
    assert (out / "epd_positions").is_dir() and (out / "disagreements").is_dir()
    (out / "games" / "notes.txt").write_text("mine")  # in a dataset folder of the run
    (out / "mine.parquet").write_bytes(b"mine")
    analyze_cli(tmp_path, "out", [MAGNUS], "--cross-check", "off", "--format", "csv")
    assert sorted(p.name for p in out.iterdir()) == [
        ".chessscan-manifest.json", "games", "games.csv", "issues.csv", "mine.parquet", "perpetuals.csv",
        "positions.csv", "run.json", "summary.json"]
    assert [p.name for p in (out / "games").iterdir()] == ["notes.txt"]


def test_jobs_rejects_zero():
    result = CliRunner().invoke(main, ["analyze", str(MAGNUS), "--jobs", "0", "-o", "unused"])
    assert result.exit_code == 2
    with pytest.raises(ValueError):
        run_parallel([str(MAGNUS)], MemorySink(), jobs=0)


# --- Dask ---------------------------------------------------------------------------------

# Game starts the shard planner must get right: a game ended by a new tag section inside an
# open comment or an open variation, a tag section with no movetext and no Event tag, a
# marker in a ';' comment of a game without tags, two markers on one line, escape lines,
# CR-only and CRLF line ends, a NUL line, comments after a marker (they open the next game),
# a last game without a final newline; a comment quoting games (a marker ending a line, a
# blank line and an [Event] line inside it: a cut there is wrong, and is undone), an
# unclosed one whose next line ends with a marker (a cut there is right), comments between
# tag pairs.
QUOTED = '{quoted\n1-0\n\n[Event "in a comment"]\n\n1. d4 0-1\n[Event "in it too"]\n\n}'
TRICKY_PGN = "".join([
    f'[Event "qa"]\n\n1. e4 {QUOTED} e5 1-0\n\n[Event "qb"]\n\n1. e4 {QUOTED} {QUOTED} *\n\n',
    '[Event "qc"]\n\n1. e4 {never closed\n1-0\n\n[Event "qd"]\n\n1. d4 {x} *\n\n',
    '[Event "qe"] ; note\n[Site "s"] {c}\n; a line\n[Round "1"]\n\n1. c4 *\n\n',
    '[Event "a"]\n[Site "x"]\n\n1. e4 e5 1-0\n\n[Event "b"]\n\n1. d4 {open comment 1-0\n\n',
    '[Event "c"]\n\n1. c4 (1. d4 1-0\n\n[Event "d"]\n[White "w"]\n\n[Event "e"]\n\n1. e4 *\n',
    '[Event "u"]\n\n1. e4 {cut\n[Event "v"]\n\n1. d4 {x\n[Site "y"]\n\n[Event "w"]\n1. c4 *\n\n',
    '; only a comment 1-0\n\n[Event "f"]\n\n1. e4 1-0 1-0\n\n[Event "g"]\n\n1. e4 1-0 { tail\n\n',
    '[Event "h"]\n\n[Site "nox"]\n\n[Event "i"]\n1. e4 *\n\n%escape 1-0\n\n[Event "j"]\n\n',
    '1. Nf3 *\r\n\r\n[Event "k"]\r\n\r\n1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# 1-0\r\r',
    '[Event "l"]\r\r1. e4 *\r\n\n{ pre } [Event "m"]\n1. e4 *\n\n[Event "n"] 1. e4 *\n\n',
    '[Foo "bar 1-0\n\n[Event "o"]\n\n1. e4 1/2-1/2\n\n\x00\n\n[Event "p"]\n\n1. e4 *\n',
    '1. e4 e5 2. Ke2 *\n\n[Event "q"]\n\n1. e4 {x} ; y 1-0\n\n[Event "r"]\n\n1. e4 } 1-0\n\n',
    '[Event "s"]\n1. e4 (1. d4 { c\n\n[Event "t"]\n\n1. e4 *\n\n[Event "x"]\n\n1. e4 1-0 ;\n\n',
    '[Event "y"]\n\n1. d4 1-0 {after}\n\n[Event "z"]\n\n1. c4 *',
])


def shards_inline(paths, out: Path, options, shard_size, in_flight: int = 3) -> tuple[Tally, int]:
    """What run_dask does, task by task in this process (no Dask needed): a compressed
    file read and cut here, its chunks analyzed as tasks (at once: their results are taken
    ``in_flight`` chunks later, in input order)."""
    import itertools

    shards = dask_engine.plan_shards(paths, shard_size)

    def count(needed):
        return [dask_engine.count_range(s.path, s.start, s.end) for s in needed]

    shards, firsts = dask_engine.settle_shards(shards, count)
    names = tables_for(paths, options)

    def task(s, index0, line0, text=None, error=None):
        return dask_engine.analyze_shard(s, index0, line0, options, names, str(out), s.number == 0, text=text,
                                         error=error)

    numbers = itertools.count()
    done = []
    for shard, (index0, line0) in zip(shards, firsts):
        if shard.kind == "stream":
            done += dask_engine._stream_source(shard, task, lambda result, s: result, lambda: in_flight, numbers,
                                               shard_size)
        else:
            s = shard._replace(number=next(numbers))
            done.append((s, task(s, index0, line0)))
    shards, results = [s for s, _ in done], [r for _, r in done]
    return dask_engine.finish_shards(shards, results, options, str(out)), len(shards)


def local_report(paths, out: Path, options) -> tuple[Tally, dict[str, pd.DataFrame]]:
    names = tables_for(paths, options)
    with ReportWriter(out, tables=names, optional_columns={"positions": ("fen",)} if options.fen else None) as w:
        tally = run(paths, w, options)
    return tally, read_report(out, names)


@pytest.mark.parametrize("shard_size", [1, 5, 97])
def test_shards_start_at_game_boundaries(tmp_path, shard_size):
    """Cut a file at every possible place: the shards' rows are the whole file's."""
    path = tmp_path / "tricky.pgn"
    path.write_bytes(TRICKY_PGN.encode())
    paths = [str(path)]
    options = AnalysisOptions(cross_check="full")
    tally, expected = local_report(paths, tmp_path / "local", options)
    assert len(expected["games"]) >= 20
    got_tally, n = shards_inline(paths, tmp_path / "shards", options, shard_size)
    assert n >= 5
    assert tally.as_dict() == got_tally.as_dict()
    assert_same_tables(expected, read_report(tmp_path / "shards", expected))


def test_shards_of_the_samples(tmp_path):
    paths = [str(VARIANTS), str(SAMPLES / "sf-books-stalemates-500.epd")]
    options = AnalysisOptions(cross_check="sample", fen=True)
    tally, expected = local_report(paths, tmp_path / "local", options)
    got_tally, n = shards_inline(paths, tmp_path / "shards", options, 20_000)
    assert n > 10
    assert tally.as_dict() == got_tally.as_dict()
    assert_same_tables(expected, read_report(tmp_path / "shards", expected))


class InlinePool:
    """An executor that runs each task at once in this process: the pieces are analyzed
    apart as by workers, but a monkeypatched function reaches them too."""

    def submit(self, fn, *args, **kwargs):
        from concurrent.futures import Future

        future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            future.set_exception(exc)
        return future

    def shutdown(self, wait=True, cancel_futures=False):
        pass


def wrong_zobrist_everywhere(monkeypatch) -> None:
    """A detector fault on every positions row (the Zobrist key off by one): each game the
    cross-check replays gets disagreement rows, wherever it is replayed."""
    import chessscan.analysis.crosscheck as crosscheck

    class Wrong:
        def __init__(self, rows):
            self.rows = rows

        def __len__(self):
            return len(self.rows)

        def row(self, i):
            row = self.rows.row(i)
            return {**row, "zobrist": row["zobrist"] + 1}

    real = crosscheck.cross_check_game
    monkeypatch.setattr(crosscheck, "cross_check_game", lambda raw, dis, rows=None, start=0, **kw: real(
        raw, dis, Wrong(rows) if rows is not None else None, start, **kw))


def sample_reasons(tables) -> set:
    """(source, game_index) of the games with disagreement rows: those cross-checked."""
    dis = tables["disagreements"]
    return set(zip(dis.source, dis.game_index))


@pytest.mark.parametrize("batch_bytes", [20_000, 150_000])
def test_sample_is_decided_in_input_order_across_chunks(monkeypatch, batch_bytes):
    """The base rate decided in each chunk, the rare kinds' first games in input order in the
    main process (replayed there, their disagreement rows merged into the chunk's): the same
    games, rows in the same order and the same tally as one process."""
    from chessscan.analysis import sampling

    monkeypatch.setattr(sampling, "SAMPLE_EVERY", 23)  # base-rate games in most chunks
    monkeypatch.setattr(sampling, "SAMPLE_PER_KIND", 2)  # a quota above one, spread over chunks
    monkeypatch.setattr(parallel, "_start_pool", lambda jobs: InlinePool())
    monkeypatch.setattr(parallel, "_WORK_WHILE_POOL_STARTS", False)
    wrong_zobrist_everywhere(monkeypatch)
    paths = [str(p) for p in (MAGNUS, *INPUTS["multi"])]
    options = AnalysisOptions(cross_check="sample")
    ref, got = ListSink(), ListSink()
    tally1 = run(paths, ref, options)
    chunks = Counting(monkeypatch, parallel, "_chunk_counts")
    tally2 = run_parallel(paths, got, options, jobs=2, batch_bytes=batch_bytes, in_flight=3)
    assert chunks.calls >= 4
    assert list(json.dumps(tally1.as_dict())) == list(json.dumps(tally2.as_dict()))
    assert ref.rows == got.rows
    dis = ref.rows["disagreements"]
    sampled = set(zip(dis["source"], dis["game_index"]))
    by = tally1.as_dict()["cross_check"]["games_sampled_by"]
    assert len(sampled) == tally1.cross_checked_games
    assert by["base_rate"] >= 20 and all(by[k] >= 1 for k in sampling.RARE_KINDS)
    # Rare kinds' games that the base rate did not take: replayed by the main process.
    assert any(gi % 23 for _, gi in sampled)


def test_sample_is_decided_in_input_order_across_shards(tmp_path, monkeypatch):
    """The same on Dask shards: the client replays the rare kinds' first games and adds their
    rows to the shard's part of the disagreements table."""
    from chessscan.analysis import sampling

    monkeypatch.setattr(sampling, "SAMPLE_EVERY", 23)
    monkeypatch.setattr(sampling, "SAMPLE_PER_KIND", 2)
    wrong_zobrist_everywhere(monkeypatch)
    paths = [str(MAGNUS), str(VARIANTS)]
    options = AnalysisOptions(cross_check="sample")
    tally, expected = local_report(paths, tmp_path / "local", options)
    got_tally, n = shards_inline(paths, tmp_path / "shards", options, 100_000)
    assert n >= 4
    assert tally.as_dict() == got_tally.as_dict()
    got = read_report(tmp_path / "shards", expected)
    assert_same_tables(expected, got)
    assert len(sample_reasons(got)) == tally.cross_checked_games > 20


def test_shards_name_sources_as_given(tmp_path, monkeypatch):
    """A relative path stays relative in the rows and in messages (truncated-input here),
    as in a local run, though the tasks open the absolute path."""
    import gzip

    monkeypatch.chdir(tmp_path)
    blob = gzip.compress(MAGNUS.read_bytes())
    Path("cut.pgn.gz").write_bytes(blob[: len(blob) // 2])
    paths = ["cut.pgn.gz", str(SAMPLES / "sf-books-stalemates-500.epd")]
    options = AnalysisOptions(cross_check="off")
    _, expected = local_report(paths, tmp_path / "local", options)
    shards_inline(paths, tmp_path / "shards", options, 1 << 20)
    got = read_report(tmp_path / "shards", expected)
    assert_same_tables(expected, got)
    truncated = got["issues"][got["issues"].code == "truncated-input"]
    assert list(truncated.source) == ["cut.pgn.gz"] and truncated.message.iloc[0].startswith("cut.pgn.gz: gzip")


def test_utf16_file_is_one_shard(tmp_path):
    """UTF-16 text is read transcoded from its start: never cut into byte ranges (the client
    reads it, and cuts its text)."""
    path = tmp_path / "utf16.pgn"
    path.write_bytes(b"\xff\xfe" + TRICKY_PGN.encode("utf-16-le"))
    shards = dask_engine.plan_shards([str(path)], 97)
    assert [(s.kind, s.start, s.end) for s in shards] == [("stream", 0, path.stat().st_size)]
    plain = tmp_path / "plain.pgn"
    plain.write_bytes(TRICKY_PGN.encode())
    assert len(dask_engine.plan_shards([str(plain)], 97)) > 5


def test_dask_local_cluster_equals_local_run(tmp_path, single):
    pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    paths = [str(p) for p in INPUTS["multi"]]
    options = AnalysisOptions(cross_check="sample")
    ref = single("multi", "sample")
    expected = read_report(ref, tables_for(paths, options))
    assert expected["positions"].clock_ms.notna().sum() > 25805  # compared below with the rest
    summary = json.loads((ref / "summary.json").read_text())
    del summary["sources"]
    out = tmp_path / "dask"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        got = dask_engine.run_dask(paths, str(out), options, client=client, shard_size=64 << 10)
    assert got.as_dict() == summary
    # variants.pgn in 4 ranges, the EPD file (no game: no part), and the .zst read here and
    # cut in chunks of at most 64 KiB of text, a part each: numbered with no gap.
    assert [s.kind for s in dask_engine.plan_shards(paths, 64 << 10)] == ["range"] * 4 + ["epd", "stream"]
    from chessscan.readers.sources import open_source

    with open_source(paths[-1]) as stream:
        cutter = dask_engine._Cutter(stream, 64 << 10)
        chunks = list(iter(cutter.next, None))
    assert len(chunks) > 10 and all(len(c.text) <= 64 << 10 for c in chunks)
    assert b"".join(c.text for c in chunks) == zstd_text(paths[-1])
    names = sorted(p.name for p in (out / "games").glob("part-*.parquet"))
    assert names == [f"part-{k:06d}.parquet" for k in range(4)] + [
        f"part-{k:06d}.parquet" for k in range(5, 5 + len(chunks))]
    # The parts, read in name order, are in input order; sorting is what the documentation promises.
    assert_same_tables(expected, read_report(out, expected), sort=True)
    assert_same_tables(expected, read_report(out, expected))
    import dask.dataframe as dd

    # The whole folder as the big-data guide reads it: with Arrow dtypes (with pandas 3's
    # defaults, a dictionary column all null in some parts, "winner" here, has categories of
    # another dtype there, and dask.dataframe refuses to concatenate them).
    games = dd.read_parquet(str(out / "games"), dtype_backend="pyarrow").compute()
    assert len(games) == len(expected["games"])
    assert list(games.game_index) == list(expected["games"].game_index)


def zstd_text(path) -> bytes:
    import zstandard

    with open(path, "rb") as f:
        return zstandard.ZstdDecompressor().stream_reader(f).read()


def test_dask_cli_errors(tmp_path, monkeypatch):
    runner = CliRunner()
    result = runner.invoke(main, ["analyze", str(MAGNUS), "--dask", "local", "--format", "csv", "-o", str(tmp_path)])
    assert result.exit_code == 2 and "--format csv" in result.output
    result = runner.invoke(main, ["analyze", "-", "--dask", "local", "-o", str(tmp_path)], input="")
    assert result.exit_code == 2 and "stdin" in result.output
    # A pipe by name: the workers could not open /dev/fd/N ("cannot read input", exit 1).
    r, w = os.pipe()
    try:
        result = runner.invoke(main, ["analyze", f"/dev/fd/{r}", "--dask", "local", "-o", str(tmp_path)])
    finally:
        os.close(r)
        os.close(w)
    assert result.exit_code == 2 and f"--dask reads files, not a pipe (/dev/fd/{r})" in result.output
    result = runner.invoke(main, ["analyze", str(MAGNUS), "--dask", "local", "--shard-size", "lots"])
    assert result.exit_code == 2 and "not a size" in result.output
    monkeypatch.setitem(sys.modules, "distributed", None)  # as if not installed
    result = runner.invoke(main, ["analyze", str(MAGNUS), "--dask", "local", "-o", str(tmp_path)])
    assert result.exit_code == 2 and "pip install 'chessscan[dask]'" in result.output  # (1 is "issues found")


def test_many_tiny_games_without_sure_starts_are_read_in_batches(tmp_path, monkeypatch):
    """Tagless games (no `[Event "` line, so no sure game start) in a chunk of more than
    MAX_CHUNK_GAMES games: the main process reads them and sends batches, so a worker never
    holds the rows of a whole chunk of them; the rows equal one process's."""
    assert parallel._termination_marks(b'[Result "1-0"]\n\n1. e4 1-0\n\n1. d4 *\n1/2-1/2') == 4
    path = tmp_path / "tagless.pgn"
    # (4,000 games: 79 kB, over a sixteenth of a chunk, under which the run is one process)
    path.write_text("".join(f"1. e4 e5 2. Nf3 {'*' if i % 3 else '1-0'}\n\n" for i in range(4000)))
    monkeypatch.setattr(parallel, "MAX_CHUNK_GAMES", 500)
    read_here = []  # sources the main process read on itself (a _Rest over the stream)
    real = parallel._Rest

    def rest(head, error, stream=None):
        if stream is not None:
            read_here.append(len(head))
        return real(head, error, stream)

    monkeypatch.setattr(parallel, "_Rest", rest)
    ref, got = ListSink(), ListSink()
    tally1 = run([str(path)], ref, AnalysisOptions(cross_check="off"))
    tally2 = run_parallel([str(path)], got, AnalysisOptions(cross_check="off"), jobs=2,
                          batch_bytes=1 << 20, batch_games=200)
    assert tally1.as_dict() == tally2.as_dict() and tally2.as_dict()["games_read"] == 4000
    assert ref.rows == got.rows
    assert read_here == [path.stat().st_size]


def test_games_over_the_cap_read_alike_in_chunks(tmp_path, monkeypatch):
    """A game longer than MAX_GAME_BYTES (over many lines) and one whose single line is: the
    workers cut them where one process does, and the tables are the same."""
    from chessscan.readers.pgn import MAX_GAME_BYTES

    monkeypatch.setattr(parallel, "_WORK_WHILE_POOL_STARTS", False)
    sample = MAGNUS.read_bytes()
    moves = b"".join(b"%d. Nf3 Nf6 %d. Ng1 Ng8\n" % (2 * i + 1, 2 * i + 2)
                     for i in range(MAX_GAME_BYTES // 24 + 1000))
    line = b"1. e4 " + b"e5 " * (MAX_GAME_BYTES // 3 + 10) + b"1-0\n"
    path = tmp_path / "long.pgn"
    path.write_bytes(sample + b'[Event "long"]\n\n' + moves + b"*\n\n" + sample[:100_000].rsplit(b'[Event "', 1)[0]
                     + b'[Event "one line"]\n\n' + line + b"\n" + sample)
    options = AnalysisOptions(cross_check="off", positions="checks")
    ref, got = ListSink(), ListSink()
    tally1 = run([str(path)], ref, options)
    tally2 = run_parallel([str(path)], got, options, jobs=2, batch_bytes=200_000)
    assert tally1.as_dict() == tally2.as_dict()
    assert ref.rows == got.rows
    issues = ref.rows["issues"]
    cut = [i for i, code in enumerate(issues["code"]) if code == "game-too-long"]
    assert len(cut) == 2
    games = ref.rows["games"]
    long_game = games["game_index"].index(issues["game_index"][cut[0]])
    assert games["event"][long_game] == "long" and games["plies"][long_game] > 100_000
    assert games["error_code"][long_game] == "game-too-long"


def test_a_folder_of_small_files_is_analyzed_in_one_process(tmp_path, monkeypatch):
    """Inputs that each hold less than one chunk never start the pool: run_parallel hands
    them to the one-process run instead of making each file a task of its own (which cost
    5x the time of one process), with the same tables and tally."""
    games = re.split(rb"(?m)^(?=\[Event )", (SAMPLES / "lichess-magnus-300.pgn").read_bytes())[1:41]
    for i, game in enumerate(games):
        (tmp_path / f"g{i:02d}.pgn").write_bytes(game)
    paths = sorted(str(p) for p in tmp_path.glob("*.pgn"))
    options = AnalysisOptions()
    ref, got = ListSink(), ListSink()
    tally1 = run(paths, ref, options)
    chunks = Counting(monkeypatch, parallel, "analyze_chunk")
    tally2 = run_parallel(paths, got, options, jobs=2)
    assert chunks.calls == 0 and tally2.games == 40
    assert tally1.as_dict() == tally2.as_dict() and ref.rows == got.rows
    # One file of a sixteenth of a chunk or more, or stdin: the pool's path, as before.
    assert parallel._all_under_a_chunk(paths, parallel.DEFAULT_BATCH_BYTES)
    assert not parallel._all_under_a_chunk(paths, 16 * min(os.path.getsize(p) for p in paths))
    assert not parallel._all_under_a_chunk(paths + ["-"], parallel.DEFAULT_BATCH_BYTES)


def _no_game_inputs(tmp_path: Path) -> list[str]:
    """A games file, a PGN file of comments and escape lines only (75 KB: several chunks'
    worth), an EPD file of comment lines only, and a small PGN file of one comment."""
    long = tmp_path / "comments.pgn"
    long.write_text("".join(f"; line {k} of notes\n% escape {k}\n{{a comment {k}}}\n" for k in range(1500)))
    epd = tmp_path / "notes.epd"
    epd.write_text("# a suite with its positions gone\n\n# nothing else\n")
    small = tmp_path / "one.pgn"
    small.write_text("{only this}\n")
    return [str(MAGNUS), str(long), str(epd), str(small)]


def _empty_input_rows(rows: dict) -> list[tuple]:
    issues = rows["issues"]
    return [(issues["source"][k], issues["message"][k]) for k in range(len(issues["code"]))
            if issues["code"][k] == "empty-input"]


@pytest.mark.parametrize("read_here", [False, True])
def test_a_source_with_no_game_is_an_empty_input_warning(tmp_path, monkeypatch, read_here):
    """A file read whole that holds no game (only comments) or no EPD record is reported as
    an empty file is: an ``empty-input`` warning after its rows, alike in every engine."""
    paths = _no_game_inputs(tmp_path)
    ref = ListSink()
    tally1 = run(paths, ref, AnalysisOptions())
    assert _empty_input_rows(ref.rows) == [
        (paths[1], "no game in it: only comments, escape lines and white space"),
        (paths[2], "no EPD record in it: only comment lines and white space"),
        (paths[3], "no game in it: only comments, escape lines and white space"),
    ]
    assert tally1.issues["empty-input"] == 3 and tally1.games == 300
    if read_here:  # the main process reads the comments file (no sure game start in it)
        monkeypatch.setattr(parallel, "MAX_CHUNK_BYTES", 30_000)
    monkeypatch.setattr(parallel, "_WORK_WHILE_POOL_STARTS", False)
    rest = Counting(monkeypatch, parallel, "_Rest")
    got = ListSink()
    tally2 = run_parallel(paths, got, AnalysisOptions(), jobs=2, batch_bytes=20_000, in_flight=3)
    assert rest.calls == (1 if read_here else 0)
    assert tally1.as_dict() == tally2.as_dict()
    assert ref.rows == got.rows


def test_a_source_with_no_game_is_reported_on_dask(tmp_path):
    pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    paths = _no_game_inputs(tmp_path)
    ref = MemorySink()
    expected = run(paths, ref, AnalysisOptions()).as_dict()
    out = tmp_path / "dask"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        got = dask_engine.run_dask(paths, str(out), AnalysisOptions(), client=client, shard_size=16 << 10)
    assert got.as_dict() == expected
    issues = pd.read_parquet(out / "issues")
    empty = issues[issues["code"] == "empty-input"]
    assert list(empty["source"]) == paths[1:]
    assert empty["game_index"].isna().all()


def test_validate_fails_a_file_of_comments_on_warnings(tmp_path):
    path = tmp_path / "gone.pgn"
    path.write_text("; the games were here\n{ and here }\n")
    result = CliRunner().invoke(main, ["validate", "--fail-on", "warning", str(path)])
    assert result.exit_code == 1
    assert f"{path}: warning[empty-input]: no game in it" in result.output
    assert CliRunner().invoke(main, ["validate", str(path)]).exit_code == 0


def test_dask_writes_the_issues_of_a_local_run(tmp_path, monkeypatch):
    """--select/--ignore, one row a game for uci-move, one row a file for decode-fallback
    (a file cut in several shards too), the rows of the paths that gave nothing (first) and
    the empty-input warning of a file with no game: the issues table of --dask is --jobs 1's."""
    pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    latin = tmp_path / "latin.pgn"  # CP1252 names: decode-fallback in every game
    latin.write_bytes(b"".join(b'[Event "g%d"]\n[White "Caf\xe9"]\n\n1. e4 e5 2. Nf3 1-0\n\n' % k for k in range(120)))
    uci = tmp_path / "uci.pgn"
    uci.write_text('[Event "u"]\n\n1. e2e4 e7e5 2. g1f3 *\n\n[Event "v"]\n\n1. d2d4 d7d5 *\n')
    empty, comments = tmp_path / "empty.pgn", tmp_path / "comments.pgn"
    empty.write_text("")
    comments.write_text("{ the games were here }\n")
    paths = [str(tmp_path / "missing.pgn"), str(latin), str(empty), str(uci), str(comments), str(MAGNUS)]
    assert len([s for s in dask_engine.plan_shards([str(latin)], 2048) if s.path.endswith("latin.pgn")]) > 2

    def in_process(address, jobs):
        cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=":0")
        return distributed.Client(cluster), cluster

    monkeypatch.setattr(dask_engine, "_client", in_process)
    runner = CliRunner()
    for k, codes in enumerate([[], ["--ignore", "uci-move"], ["--select", "decode-fallback,input"]]):
        local, dask = tmp_path / f"local{k}", tmp_path / f"dask{k}"
        common = ["analyze", *paths, "--cross-check", "off", *codes]
        assert runner.invoke(main, [*common, "--jobs", "1", "-o", str(local)]).exit_code == 2  # missing.pgn
        assert runner.invoke(main, [*common, "--dask", "local", "--shard-size", "2K", "-o", str(dask)]).exit_code == 2
        want = pd.read_parquet(local / "issues", dtype_backend="numpy_nullable")
        got = pd.read_parquet(dask / "issues", dtype_backend="numpy_nullable")
        pd.testing.assert_frame_equal(want, got, obj=f"issues {codes}")
        assert json.loads((local / "summary.json").read_text()) == json.loads((dask / "summary.json").read_text())
        if not codes:
            assert list(want["code"][:1]) == ["unreadable-input"]
            fallback = want[want["code"] == "decode-fallback"]
            assert len(fallback) == 1 and fallback["message"].iloc[0].endswith(
                "; 120 games of this file are decoded so (reported once)")
            assert (want["code"] == "uci-move").sum() == 2
            assert list(want[want["code"] == "empty-input"]["source"]) == [str(empty), str(comments)]


# --- Dask: a compressed file read and cut by the client -----------------------------------


def compressed(path: Path, data: bytes, kind: str) -> Path:
    import bz2
    import gzip
    import lzma

    import zstandard

    pack = {"zst": zstandard.ZstdCompressor().compress, "gz": gzip.compress, "bz2": bz2.compress,
            "xz": lzma.compress}[kind]
    out = path.with_name(f"{path.name}.{kind}")
    out.write_bytes(pack(data))
    return out


class Kept:
    """Counts the chunks and the tails :func:`dask_engine._stream_source` sends, by kind."""

    def __init__(self, monkeypatch):
        self.kinds: list[str] = []
        real = dask_engine.analyze_shard

        def analyze(shard, *args, **kwargs):
            self.kinds.append(shard.kind)
            return real(shard, *args, **kwargs)

        monkeypatch.setattr(dask_engine, "analyze_shard", analyze)


@pytest.mark.parametrize("kind", ["zst", "gz", "bz2", "xz", "utf16"])
def test_a_compressed_file_in_chunks_equals_one_process(tmp_path, kind):
    """The client cuts the decompressed text at sure game starts: one part a chunk, the rows
    and the tally those of one process, whatever the compression."""
    if kind == "utf16":  # (read transcoded: its text cannot be cut in byte ranges either)
        path = tmp_path / "magnus-utf16.pgn"
        path.write_bytes(b"\xff\xfe" + MAGNUS.read_text().encode("utf-16-le"))
    else:
        path = compressed(tmp_path / "magnus.pgn", MAGNUS.read_bytes(), kind)
    options = AnalysisOptions(cross_check="sample")
    tally, expected = local_report([str(path)], tmp_path / "local", options)
    got_tally, n = shards_inline([str(path)], tmp_path / "chunks", options, 48 << 10)
    assert n >= len(MAGNUS.read_bytes()) // (48 << 10)
    assert list(json.dumps(tally.as_dict())) == list(json.dumps(got_tally.as_dict()))
    assert_same_tables(expected, read_report(tmp_path / "chunks", expected))
    assert len(list((tmp_path / "chunks" / "games").glob("part-*.parquet"))) == n


@pytest.mark.parametrize("in_flight", [1, 3])
@pytest.mark.parametrize("chunk_size", [1, 5, 97])
def test_chunks_of_a_compressed_file_cut_inside_comments(tmp_path, monkeypatch, chunk_size, in_flight):
    """The tricky file cut wherever it allows: a chunk that ends inside a comment is analyzed
    again joined with the next one (its parts and the next one's removed), and one whose first
    game index proves wrong again with the right one, as --jobs does."""
    path = compressed(tmp_path / "tricky.pgn", TRICKY_PGN.encode(), "zst")
    options = AnalysisOptions(cross_check="full")
    tally, expected = local_report([str(path)], tmp_path / "local", options)
    kept = Kept(monkeypatch)
    joins = []
    join = dask_engine._Chunk.__add__
    monkeypatch.setattr(dask_engine._Chunk, "__add__", lambda a, b: (joins.append(a.offset), join(a, b))[1])
    got_tally, n = shards_inline([str(path)], tmp_path / "chunks", options, chunk_size, in_flight)
    assert len(joins) >= 3
    # Some chunks analyzed twice (joined, or with the right index), then (an index estimate
    # wrong: the quoted Event lines) the rest of the file in one task.
    assert n >= 3 and len(kept.kinds) > n and kept.kinds[-1] == "tail" and kept.kinds.count("chunk") >= 6
    assert tally.as_dict() == got_tally.as_dict()
    assert_same_tables(expected, read_report(tmp_path / "chunks", expected))


@pytest.mark.parametrize("cross_check", ["sample", "off"])
def test_chunks_with_wrong_first_game_indexes(tmp_path, monkeypatch, cross_check):
    """Games without an [Event] line, and Event lines quoted in comments: the estimate of a
    chunk's first game index proves wrong, the chunk is analyzed again with the right one,
    and the rest of the file is one task that reads it itself."""
    path = compressed(tmp_path / "irregular.pgn", irregular_pgn(False), "gz")
    options = AnalysisOptions(cross_check=cross_check)
    tally, expected = local_report([str(path)], tmp_path / "local", options)
    kept = Kept(monkeypatch)
    got_tally, n = shards_inline([str(path)], tmp_path / "chunks", options, 20_000)
    assert kept.kinds.count("tail") == 1 and kept.kinds[-1] == "tail" and kept.kinds.count("chunk") > 1
    assert tally.as_dict() == got_tally.as_dict()
    assert_same_tables(expected, read_report(tmp_path / "chunks", expected))


def test_a_compressed_file_without_sure_game_starts_is_one_tail(tmp_path, monkeypatch):
    """No line to cut at (no Event tags) within the chunk size and 16 MiB (50 kB here): the
    file is one task that reads it itself, as a compressed file always was."""
    monkeypatch.setattr(dask_engine, "_MAX_GROWTH", 50_000)
    text = b"".join(line for line in MAGNUS.read_bytes().splitlines(True) if not line.startswith(b"[Event "))
    path = compressed(tmp_path / "no-event.pgn", text, "zst")
    options = AnalysisOptions(cross_check="sample")
    tally, expected = local_report([str(path)], tmp_path / "local", options)
    kept = Kept(monkeypatch)
    got_tally, n = shards_inline([str(path)], tmp_path / "chunks", options, 20_000)
    assert kept.kinds == ["tail"] and n == 1
    assert tally.as_dict() == got_tally.as_dict() and tally.games == 300
    assert_same_tables(expected, read_report(tmp_path / "chunks", expected))


def test_a_truncated_compressed_file_in_chunks(tmp_path):
    """A .zst file cut short: the last chunk carries the error, reported as by one process."""
    path = tmp_path / "cut.pgn.zst"
    path.write_bytes(MAGNUS_ZST.read_bytes()[:100_000])
    options = AnalysisOptions()
    tally, expected = local_report([str(path)], tmp_path / "local", options)
    got_tally, n = shards_inline([str(path)], tmp_path / "chunks", options, 30_000)
    assert n > 3 and tally.issues["truncated-input"] == 1
    assert tally.as_dict() == got_tally.as_dict()
    assert_same_tables(expected, read_report(tmp_path / "chunks", expected))


@pytest.mark.parametrize("in_flight", [2, 5])
def test_a_compressed_file_has_at_most_in_flight_chunks_out(tmp_path, in_flight):
    """The client sends a chunk only once fewer than ``in_flight`` are out (sent, their
    result not taken), and takes the results in input order: its memory stays flat."""
    path = compressed(tmp_path / "magnus.pgn", MAGNUS.read_bytes(), "zst")
    shard = dask_engine.plan_shards([str(path)])[0]
    names = tables_for([str(path)], AnalysisOptions())
    out, taken, most = [], [], [0]

    def task(s, index0, line0, text=None, error=None):
        out.append(s.number)
        most[0] = max(most[0], len(out))
        return s, dask_engine.analyze_shard(s, index0, line0, AnalysisOptions(), names, str(tmp_path / "r"),
                                            text=text, error=error)

    def take(future, s):
        assert future[0] == s and out[0] == s.number  # the oldest first
        out.pop(0)
        taken.append(s.number)
        return future[1]

    import itertools

    kept = dask_engine._stream_source(shard, task, take, lambda: in_flight, itertools.count(), 16 << 10)
    assert len(kept) == len(taken) > 3 * in_flight and most[0] == in_flight and not out
    assert taken == sorted(taken) == [s.number for s, _ in kept]
    assert sum(r.games for _, r in kept) == 300


def test_a_worker_without_the_file_systems_credentials_is_an_input_error():
    """A task whose URL input its worker cannot open for want of credentials (botocore's
    NoCredentialsError, not an OSError): exit 2 naming what the workers need, not exit 3 "a
    chessscan bug" with a traceback."""
    botocore = pytest.importorskip("botocore.exceptions", reason="needs botocore (the test extra's s3fs)")
    pytest.importorskip("distributed", reason="needs the dask extra")
    from chessscan import cli
    from chessscan.engines.dask import Shard, ShardFailed

    shard = Shard(0, "s3://games/in.pgn.zst", "s3://games/in.pgn.zst", "pgn", 0, 100, 100, True)
    with pytest.raises(cli.InputError) as raised:
        cli._fail_shard(ShardFailed(shard, botocore.NoCredentialsError()), "out")
    assert raised.value.message == (
        "a worker cannot read the input: shard 0 (s3://games/in.pgn.zst, the whole file): NoCredentialsError: "
        "Unable to locate credentials: the workers need the file system's credentials and endpoint (AWS_*, "
        "GOOGLE_*, AZURE_*, HF_TOKEN...) as this client has them; no summary.json is written")
    assert raised.value.exit_code == 2
