"""``analyze --dask`` on a real cluster: a ``dask scheduler`` and ``dask worker`` processes
started here on 127.0.0.1 and ended by pid, and the command line run as a user runs it.

What a user meets when the cluster is not a happy LocalCluster: a worker killed midway (its
shard retried, the tables equal), a shard that kills every worker it runs on, the scheduler
killed, the client stopped, workers that do not see the output folder, addresses that lead
to no scheduler. Each failure is one line and a documented exit status, and nothing that
reads as whole is left unless the run finished. The faults are asked of the workers through
``tests/dask_faults.py`` (a worker preload).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from conftest import REPO, SAMPLES

distributed = pytest.importorskip("distributed", reason="needs the dask extra: pip install 'chessscan[dask]'")
pytest.importorskip("dask.dataframe", reason="needs the dask extra: pip install 'chessscan[dask]'")

import chessscan  # noqa: E402
from chessscan.analysis.options import AnalysisOptions  # noqa: E402
from chessscan.cli import main  # noqa: E402
from chessscan.engines import dask as dask_engine  # noqa: E402
from chessscan.reports.parts import PartMissing, check_parts  # noqa: E402
from chessscan.reports.reader import IncompleteReport  # noqa: E402

MAGNUS = SAMPLES / "lichess-magnus-300.pgn"
INPUTS = [MAGNUS, SAMPLES / "lichess-jishanshaikh4-variants.pgn", SAMPLES / "sf-books-stalemates-500.epd",
          SAMPLES / "lichess-magnus-300.pgn.zst"]
DASK = [sys.executable, "-m", "dask"]  # the `dask` command of this Python
FAULTS_PRELOAD = Path(__file__).with_name("dask_faults.py")
START_SECONDS = 60


def _env(**extra: str) -> dict:
    """The environment of the cluster and of the command line: this checkout first on the
    path, so that workers import the chessscan under test."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])])
    env.update(extra)
    return env


class Cluster:
    """A scheduler and ``workers`` worker processes (one thread each) on 127.0.0.1, each a
    process group of its own, ended by pid. ``wrap(i)`` gives a worker's command a prefix
    (``unshare``...); ``unset``: variables of this environment left out of the cluster's."""

    def __init__(self, folder: Path, workers: int = 2, env: dict | None = None, preload: bool = True,
                 wrap=None, unset: tuple = ()) -> None:
        self.folder = folder
        self.faults = folder / "faults.json"
        self.env = _env(CHESSSCAN_TEST_FAULTS=str(self.faults), **(env or {}))
        for name in unset:  # (a variable of this process's environment the cluster must not have)
            self.env.pop(name, None)
        self.procs: list[subprocess.Popen] = []
        self.scheduler_file = folder / "scheduler.json"
        try:
            self.scheduler = self._start([*DASK, "scheduler", "--host", "127.0.0.1", "--port", "0",
                                          "--dashboard-address", "127.0.0.1:0",
                                          "--scheduler-file", str(self.scheduler_file)], "scheduler")
            deadline = time.monotonic() + START_SECONDS
            while not self.scheduler_file.exists() or not self.scheduler_file.stat().st_size:
                if self.scheduler.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the scheduler did not start: {self.log('scheduler')}")
                time.sleep(0.1)
            self.address = json.loads(self.scheduler_file.read_text())["address"]
            for i in range(workers):
                command = [*DASK, "worker", "--scheduler-file", str(self.scheduler_file), "--host", "127.0.0.1",
                           "--nworkers", "1", "--nthreads", "1", "--dashboard-address", "127.0.0.1:0",
                           "--no-dashboard", *(["--preload", str(FAULTS_PRELOAD)] if preload else [])]
                self._start(wrap(i, command) if wrap else command, f"worker{i}")
            self.wait_for_workers(workers)
        except BaseException:
            self.stop()
            raise

    def _start(self, command: list[str], name: str) -> subprocess.Popen:
        log = open(self.folder / f"{name}.log", "wb")
        proc = subprocess.Popen(command, env=self.env, stdout=log, stderr=subprocess.STDOUT, cwd=self.folder,
                                start_new_session=True)
        log.close()
        self.procs.append(proc)
        return proc

    def log(self, name: str) -> str:
        return (self.folder / f"{name}.log").read_text(errors="replace")[-2000:]

    def wait_for_workers(self, n: int) -> None:
        with distributed.Client(self.address, timeout=START_SECONDS, set_as_default=False) as client:
            client.wait_for_workers(n, timeout=START_SECONDS)

    def info(self) -> dict:
        with distributed.Client(self.address, timeout=START_SECONDS, set_as_default=False) as client:
            return client.scheduler_info()

    def fault(self, **faults) -> None:
        self.faults.write_text(json.dumps(faults))

    def clear_faults(self, workers: int = 2) -> None:
        self.faults.unlink(missing_ok=True)
        self.wait_for_workers(workers)  # (a killed worker is back: its nanny restarted it)

    def kill_scheduler(self) -> None:
        os.killpg(self.scheduler.pid, signal.SIGKILL)

    def stop(self) -> None:
        """End every process started, by its process group's id (the worker processes the
        nannies started are in their nanny's group): SIGTERM, then SIGKILL."""
        for proc in reversed(self.procs):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 10
        for proc in self.procs:
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # (the group: a worker its nanny left)
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    """The suite's cluster: a scheduler (which gives a task up after its second worker
    death, and gives each worker one task at a time) and two one-thread workers."""
    started = time.monotonic()
    env = {"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "1",
           "DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION": "1.0"}
    c = Cluster(tmp_path_factory.mktemp("cluster"), env=env)
    c.start_seconds = time.monotonic() - started
    print(f"\ncluster started in {c.start_seconds:.1f} s: {c.address}", file=sys.stderr)
    try:
        yield c
    finally:
        c.stop()


def analyze(*args, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """``chessscan analyze ARGS --silent`` in a process of its own, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "chessscan", "analyze", *map(str, args), "--silent"],
                          env=_env(**(env or {})), capture_output=True, text=True, timeout=timeout)


def _last_line(result) -> str:
    lines = result.stderr.strip().splitlines()
    return lines[-1] if lines else ""


def _tracebacks(result) -> int:
    return result.stderr.count("Traceback")


def _being_written(out: Path) -> list[str]:
    """Files of ``out`` that are parts being written: ``*.partial`` or hidden part names."""
    return sorted(str(p.relative_to(out)) for p in out.rglob("*")
                  if p.name.endswith(".partial") or p.name.startswith(".part-"))


def _parts(out: Path) -> set[str]:
    return {str(p.relative_to(out)) for p in out.glob("*/part-*.parquet")}


def _shard(paths, shard_size: int, number: int) -> dask_engine.Shard:
    """Shard ``number`` of a run over ``paths`` (counted here, as the cluster counts it)."""
    shards = dask_engine.plan_shards([str(p) for p in paths], shard_size)
    shards, _ = dask_engine.settle_shards(
        shards, lambda needed: [dask_engine.count_range(s.path, s.start, s.end) for s in needed])
    return shards[number]


def _local(paths, out: Path, *options: str) -> None:
    result = CliRunner().invoke(main, ["analyze", *map(str, paths), "--jobs", "1", "--silent", "-o", str(out),
                                       *options])
    assert result.exit_code == 0, result.output


def assert_same_report(local: Path, dask: Path) -> dict:
    """Every table and summary.json of ``dask`` equal to ``local``'s, value for value;
    returns the Dask run's summary."""
    want, got = chessscan.read_report(local), chessscan.read_report(dask)
    assert set(want.tables) == set(got.tables)
    for name, table in want.tables.items():
        pd.testing.assert_frame_equal(table, got.tables[name].reset_index(drop=True), check_exact=True, obj=name)
    summary = dict(got.summary)
    retried = summary.pop("retried_shards", None)
    assert summary == want.summary
    return {**summary, **({"retried_shards": retried} if retried else {})}


# ---------------------------------------------------------------------------
# On the suite's cluster
# ---------------------------------------------------------------------------
def test_the_cluster_gives_the_tables_of_one_process(cluster, tmp_path):
    """Every table and summary.json as --jobs 1, the scheduler and its dashboard named."""
    local, dask = tmp_path / "local", tmp_path / "dask"
    _local(INPUTS, local)
    result = analyze(*INPUTS, "--dask", cluster.address, "--shard-size", "128K", "-o", dask)
    assert result.returncode == 0, result.stderr
    assert _last_line(result) == f"Parquet datasets written to {dask}/<table>/"
    summary = assert_same_report(local, dask)
    assert "retried_shards" not in summary and summary["games_read"] > 600
    assert chessscan.read_report(dask).tables["positions"].eval_cp.notna().sum() == 2 * 24764  # two magnus samples
    assert len(list((dask / "games").glob("part-*.parquet"))) > 8  # the big files in shards
    assert not _being_written(dask) and not (dask / dask_engine.RUN_MARKER).exists()
    port = cluster.info()["services"]["dashboard"]
    lines = result.stderr.splitlines()
    assert lines[0] == f"Dask scheduler: {cluster.address}, 2 workers"
    assert lines[1].startswith(f"Dask dashboard: http://127.0.0.1:{port}/status")


def test_the_cluster_finds_the_duplicates_of_one_process(cluster, tmp_path):
    """--duplicates over shards: the sample and its .zst copy (the same 300 games), in 96 KB
    shards, give the duplicates table, games.duplicate_of and the counts of --jobs 1."""
    pytest.importorskip("duckdb", reason="the duplicate search runs in DuckDB: pip install 'chessscan[duplicates]'")
    inputs = [MAGNUS, SAMPLES / "lichess-magnus-300.pgn.zst"]
    local, dask = tmp_path / "local", tmp_path / "dask"
    _local(inputs, local, "--duplicates")
    result = analyze(*inputs, "--dask", cluster.address, "--shard-size", "96K", "--duplicates", "-o", dask)
    assert result.returncode == 0, result.stderr
    summary = assert_same_report(local, dask)
    assert summary["duplicates"] == {"games_hashed": 600, "duplicate_games": 300, "games_repeated": 300}
    assert len(list((dask / "games").glob("part-*.parquet"))) > 2
    duplicates = chessscan.read_report(dask).tables["duplicates"]
    assert duplicates.game_index.tolist() == list(range(300)) and duplicates.duplicate_of.tolist() == list(range(300))


def test_auto_reads_the_scheduler_address_from_dasks_configuration(cluster, tmp_path):
    result = analyze(MAGNUS, "--dask", "auto", "-o", tmp_path / "r",
                     env={"DASK_SCHEDULER_ADDRESS": cluster.address})
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0] == f"Dask scheduler: {cluster.address} (from DASK_SCHEDULER_ADDRESS), 2 workers"
    assert chessscan.read_report(tmp_path / "r").summary["games_read"] == 300


def test_a_killed_worker_is_replaced_and_its_shard_retried(cluster, tmp_path):
    """The worker running shard 3 is killed (SIGKILL, as out of memory) once: its nanny
    starts a new one, the shard runs again, the tables are those of one process, and the
    retry is one line on stderr and in summary.json."""
    shard = _shard([MAGNUS], 96 << 10, 3)
    cluster.fault(kill="part-000003", once=str(tmp_path / "killed-once"))
    try:
        result = analyze(MAGNUS, "--dask", cluster.address, "--shard-size", "96K", "-o", tmp_path / "dask")
    finally:
        cluster.clear_faults()
    assert (tmp_path / "killed-once").exists()
    assert result.returncode == 0, result.stderr
    _local([MAGNUS], tmp_path / "local")
    summary = assert_same_report(tmp_path / "local", tmp_path / "dask")
    # A shard the same worker had just finished may be run again too: SIGKILL can come before
    # the worker's batched "finished" message reaches the scheduler, which then counts it as
    # lost with the worker. Shard 3 is always there; every shard listed was lost once.
    retried = summary["retried_shards"]
    assert {"shard": 3, "source": str(MAGNUS), "bytes": [shard.start, shard.end], "workers_died": 1} in retried
    assert all(r["workers_died"] == 1 and r["source"] == str(MAGNUS) for r in retried), retried
    assert [r["shard"] for r in retried] == sorted({r["shard"] for r in retried})
    assert (f"retried: shard 3 ({MAGNUS}, bytes {shard.start:,}-{shard.end:,}) was run again: the worker it was "
            "given to died") in result.stderr.splitlines()
    assert not _being_written(tmp_path / "dask")


def test_a_shard_that_kills_every_worker_fails_the_run_in_one_line(cluster, tmp_path):
    """Retries used up (KilledWorker): exit 3, one line naming the shard, its file and byte
    range, and the cause; no part being written left; read_report refuses the folder."""
    shard = _shard([MAGNUS], 96 << 10, 3)
    out = tmp_path / "dask"
    cluster.fault(kill="part-000003")
    try:
        result = analyze(MAGNUS, "--dask", cluster.address, "--shard-size", "96K", "-o", out)
    finally:
        cluster.clear_faults()
    assert result.returncode == 3, result.stderr
    assert _last_line(result).startswith(
        f"Error: shard 3 ({MAGNUS}, bytes {shard.start:,}-{shard.end:,}): its worker died each of the 2 times it "
        "ran it (last on tcp://127.0.0.1:")
    assert _last_line(result).endswith("; no summary.json is written")
    assert len(result.stderr.strip().splitlines()) == 3 and not _tracebacks(result)  # scheduler, dashboard, error
    assert not _being_written(out) and not (out / "summary.json").exists()
    pd.read_parquet(out / "games")  # what is there reads (no part being written in the way)
    with pytest.raises(IncompleteReport, match="has no summary.json"):
        chessscan.read_report(out)


@pytest.mark.parametrize("source", [MAGNUS, SAMPLES / "lichess-magnus-300.pgn.zst"], ids=["plain", "zst"])
def test_a_stopped_client_leaves_no_part_after_its_exit(cluster, tmp_path, source):
    """SIGTERM to the client while tasks run: exit 143, and the tasks it had started write
    no part after it exited (they were cancelled; the one closing a part when told removes
    it), and no part being written is left; a compressed file's chunks too."""
    out = tmp_path / "dask"
    cluster.fault(slow=1.0)
    try:
        proc = subprocess.Popen([sys.executable, "-m", "chessscan", "analyze", str(source), "--dask", cluster.address,
                                 "--shard-size", "64K", "-o", str(out), "--silent"],
                                env=_env(), stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not _parts(out) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert _parts(out), "no part was written"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        at_exit = _parts(out)
        time.sleep(3)  # longer than a task takes to close its part
        assert _parts(out) == at_exit
        assert not _being_written(out)
    finally:
        if proc.poll() is None:
            proc.kill()
        cluster.clear_faults()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert err.strip().splitlines()[-1] == (f"stopped by SIGTERM: the datasets in {out}/ hold only the parts "
                                            "finished before, and no summary.json is written")
    tasks = (len(dask_engine.plan_shards([str(MAGNUS)], 64 << 10)) if source == MAGNUS
             else len(_chunks(source, 64 << 10)))
    assert tasks > 8
    assert len([p for p in at_exit if p.startswith("games")]) < tasks // 2  # stopped early


MAGNUS_ZST = SAMPLES / "lichess-magnus-300.pgn.zst"


def _chunks(path: Path, size: int) -> list:
    """The chunks the client cuts a compressed file into (text offsets, in order)."""
    from chessscan.readers.sources import open_source

    with open_source(str(path)) as stream:
        return list(iter(dask_engine._Cutter(stream, size).next, None))


def test_a_compressed_file_is_cut_by_the_client_and_analyzed_by_both_workers(cluster, tmp_path):
    """The .zst sample, read and cut here in 32 KiB chunks of text, each chunk a task that
    carries its text: the tables of one process, a part a chunk, and both workers at work
    (the scheduler's task stream says which worker ran which chunk, and for how long)."""
    from distributed import get_task_stream

    local, dask = tmp_path / "local", tmp_path / "dask"
    _local([MAGNUS_ZST], local)
    chunks = _chunks(MAGNUS_ZST, 32 << 10)
    assert len(chunks) > 8
    with distributed.Client(cluster.address, set_as_default=False) as client:
        with get_task_stream(client) as stream:
            result = analyze(MAGNUS_ZST, "--dask", cluster.address, "--shard-size", "32K", "-o", dask)
        tasks = [t for t in stream.data if str(t["key"]).startswith("analyze_shard-")]
    assert result.returncode == 0, result.stderr
    summary = assert_same_report(local, dask)
    assert "retried_shards" not in summary and summary["games_read"] == 300
    assert sorted(p.name for p in (dask / "games").glob("part-*.parquet")) == [
        f"part-{k:06d}.parquet" for k in range(len(chunks))]
    assert len(tasks) == len(chunks)
    busy: dict = {}
    for t in tasks:
        seconds = sum(s["stop"] - s["start"] for s in t["startstops"] if s["action"] == "compute")
        busy.setdefault(t["worker"], []).append(seconds)
    assert len(busy) == 2 and all(len(v) >= 2 and sum(v) > 0 for v in busy.values()), busy
    assert not _being_written(dask) and not (dask / dask_engine.RUN_MARKER).exists()


def test_a_killed_worker_gives_its_chunk_to_the_other(cluster, tmp_path):
    """The worker analyzing chunk 3 of the .zst sample is killed once: the scheduler, which
    holds the chunk's text, gives the task to the other worker; the tables are one
    process's, and the retry is said."""
    chunk = _chunks(MAGNUS_ZST, 32 << 10)[3]
    cluster.fault(kill="part-000003", once=str(tmp_path / "killed-once"))
    try:
        result = analyze(MAGNUS_ZST, "--dask", cluster.address, "--shard-size", "32K", "-o", tmp_path / "dask")
    finally:
        cluster.clear_faults()
    assert (tmp_path / "killed-once").exists()
    assert result.returncode == 0, result.stderr
    _local([MAGNUS_ZST], tmp_path / "local")
    summary = assert_same_report(tmp_path / "local", tmp_path / "dask")
    start, end = chunk.offset, chunk.offset + len(chunk.text)
    assert {"shard": 3, "source": str(MAGNUS_ZST), "bytes": [start, end], "workers_died": 1} in summary["retried_shards"]
    assert (f"retried: shard 3 ({MAGNUS_ZST}, bytes {start:,}-{end:,}) was run again: the worker it was given to "
            "died") in result.stderr.splitlines()
    assert not _being_written(tmp_path / "dask")


def test_a_chunk_that_kills_every_worker_fails_the_run_in_one_line(cluster, tmp_path):
    """Retries used up on a chunk of the .zst sample: exit 3, one line naming the chunk (its
    bytes of the decompressed text), no part being written left, no summary."""
    chunk = _chunks(MAGNUS_ZST, 32 << 10)[3]
    out = tmp_path / "dask"
    cluster.fault(kill="part-000003")
    try:
        result = analyze(MAGNUS_ZST, "--dask", cluster.address, "--shard-size", "32K", "-o", out)
    finally:
        cluster.clear_faults()
    assert result.returncode == 3, result.stderr
    start, end = chunk.offset, chunk.offset + len(chunk.text)
    assert _last_line(result).startswith(
        f"Error: shard 3 ({MAGNUS_ZST}, bytes {start:,}-{end:,} of its text): its worker died each of the 2 times "
        "it ran it (last on tcp://127.0.0.1:")
    assert _last_line(result).endswith("; no summary.json is written")
    assert len(result.stderr.strip().splitlines()) == 3 and not _tracebacks(result)
    assert not _being_written(out) and not (out / "summary.json").exists()
    pd.read_parquet(out / "games")


@pytest.mark.parametrize("address, message", [
    ("", "Error: --dask: '' is not a Dask scheduler address: --dask takes tcp://HOST:PORT, 'auto' or 'local'"),
    ("bogus://x:1", "Error: --dask: 'bogus://x:1' is not a Dask scheduler address: unknown address scheme 'bogus'"),
    ("tcp://127.0.0.1", "Error: --dask: 'tcp://127.0.0.1' is not a Dask scheduler address ([tcp://]HOST:PORT): "
                        "missing port number"),
])
def test_a_malformed_address_is_a_usage_error(tmp_path, address, message):
    result = analyze(MAGNUS, "--dask", address, "-o", tmp_path / "r")
    assert result.returncode == 2 and result.stderr.strip().startswith(message), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "r").exists()


def test_what_is_not_a_scheduler_gives_up_within_the_connect_timeout(cluster, tmp_path):
    """The dashboard's port accepts the connection and never answers as Dask does (this hung
    for minutes): exit 2 in one line within the timeout. A closed port, refused, too."""
    dashboard = f"tcp://127.0.0.1:{cluster.info()['services']['dashboard']}"
    started = time.monotonic()
    result = analyze(MAGNUS, "--dask", dashboard, "-o", tmp_path / "r",
                     env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"})
    elapsed = time.monotonic() - started
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == (f"Error: --dask: no Dask scheduler answered at {dashboard} within 2 s (Dask's "
                                     "connect timeout, distributed.comm.timeouts.connect): is it the scheduler's "
                                     "port (8786 by default), not its dashboard's?")
    assert elapsed < 2 + 10  # the timeout, and the start of a Python process importing pandas
    assert not (tmp_path / "r").exists()
    with __import__("socket").socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"tcp://127.0.0.1:{s.getsockname()[1]}"  # (bound, not listening: refused)
        started = time.monotonic()
        with pytest.raises(dask_engine.SchedulerUnreachable,
                           match=f"cannot reach a Dask scheduler at {closed}: Timed out trying to connect"):
            dask_engine.probe_scheduler(closed, 0.5)
        assert time.monotonic() - started < 0.5 + 2
    with pytest.raises(dask_engine.SchedulerUnreachable, match="is not a Dask scheduler: a Worker answered there"):
        with distributed.Client(cluster.address, set_as_default=False) as client:
            worker = next(iter(client.scheduler_info()["workers"]))
        dask_engine.probe_scheduler(worker, 5)
    assert dask_engine.probe_scheduler(cluster.address, 5)["type"] == "Scheduler"


def test_a_local_cluster_names_its_dashboard(tmp_path):
    result = analyze(SAMPLES / "sf-books-stalemates-500.epd", "--dask", "local", "--jobs", "1", "-o", tmp_path / "r")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0] == "Dask: a LocalCluster of 1 worker on this machine"
    assert lines[1].startswith("Dask dashboard: http://127.0.0.1:") and "/status" in lines[1]


def test_the_progress_bars_count_games_on_the_cluster(cluster, tmp_path, monkeypatch, capsys):
    """The counting pass has a bar of its own; the analysis bar counts games, games/s and
    games with errors, as the local one does."""
    from chessscan.engines.progress import Progress

    counts = []
    real = Progress.count
    monkeypatch.setattr(Progress, "count", lambda self, games, errors: (counts.append((games, errors)),
                                                                        real(self, games, errors)))
    bad = tmp_path / "bad.pgn"
    bad.write_text('[Event "illegal"]\n\n1. e4 e5 2. Ke3 *\n\n[Event "fine"]\n\n1. d4 *\n')
    paths = [str(MAGNUS), str(SAMPLES / "lichess-jishanshaikh4-variants.pgn"), str(bad)]
    with distributed.Client(cluster.address, set_as_default=False) as client:
        tally = dask_engine.run_dask(paths, str(tmp_path / "r"), AnalysisOptions(cross_check="off"), client=client,
                                     shard_size=128 << 10, progress=True)
    assert counts[-1] == (tally.games, tally.games_with_errors) == (410, 1)
    assert [g for g, _ in counts] == sorted(g for g, _ in counts) and len(counts) > 5
    err = capsys.readouterr().err
    assert "count (dask)" in err and "analyze (dask)" in err


# ---------------------------------------------------------------------------
# On clusters of their own
# ---------------------------------------------------------------------------
def test_a_scheduler_killed_midway_fails_the_run_in_one_line(tmp_path):
    """SIGKILL to the scheduler while tasks run: exit 3, one line naming the scheduler and
    the first shard not done; no part being written left, nothing read as whole."""
    c = Cluster(tmp_path, workers=2)
    out = tmp_path / "dask"
    try:
        c.fault(slow=0.5)
        proc = subprocess.Popen([sys.executable, "-m", "chessscan", "analyze", str(MAGNUS), "--dask", c.address,
                                 "--shard-size", "64K", "-o", str(out), "--silent"],
                                env=_env(), stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not _parts(out) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        c.kill_scheduler()
        _, err = proc.communicate(timeout=90)
        time.sleep(3)  # the workers' tasks run on: they find the run gone, and remove what they wrote
        assert not _being_written(out)
    finally:
        if proc.poll() is None:
            proc.kill()
        c.stop()
    assert proc.returncode == 3, err
    lines = err.strip().splitlines()
    assert re.fullmatch(rf"Error: lost the connection to the Dask scheduler at {c.address} \((scheduler connection "
                        rf"lost|connection closed)\) with \d+ tasks? unfinished; first unfinished: shard \d+ "
                        rf"\({MAGNUS}, bytes [\d,]+-[\d,]+\); no summary.json is written", lines[-1]), lines[-1]
    assert len(lines) == 3 and "Traceback" not in err
    assert not (out / "summary.json").exists()
    with pytest.raises(IncompleteReport):
        chessscan.read_report(out)


def _can_mount_privately(folder: Path) -> str | None:
    """Why a worker cannot be given a private tmpfs here (None: it can)."""
    if shutil.which("unshare") is None:
        return "needs unshare (util-linux)"
    if os.geteuid() != 0:
        return "needs root: a worker is given a private tmpfs over the output path (unshare -m, mount)"
    probe = folder / "probe"
    probe.mkdir()
    done = subprocess.run(["unshare", "-m", "sh", "-c", f"mount -t tmpfs tmpfs {probe}"], capture_output=True)
    if done.returncode:
        return f"cannot mount in a private mount namespace here: {done.stderr.decode(errors='replace').strip()}"
    return None


def test_workers_that_do_not_see_the_output_folder_fail_the_run(tmp_path):
    """A worker with a private tmpfs over the output path (its own /tmp, a pod without the
    shared volume) used to make a run that exits 0 and has no table: exit 4 now, one line
    naming what is missing and the likely cause. Over the whole folder, the task finds no
    run marker and stops at once; over one table's folder (a mount typed wrong), the check
    of the parts the tasks report finds the first part missing."""
    why = _can_mount_privately(tmp_path)
    if why:
        pytest.skip(why)
    blind, half = tmp_path / "blind", tmp_path / "half"
    (half / "games").mkdir(parents=True)
    blind.mkdir()
    mounts = f"mount -t tmpfs tmpfs {blind} && mount -t tmpfs tmpfs {half / 'games'}"

    def wrap(i, command):
        return ["unshare", "-m", "sh", "-c", f"{mounts} && exec \"$0\" \"$@\"", *command]

    (tmp_path / "cluster").mkdir()
    c = Cluster(tmp_path / "cluster", workers=1, preload=False, wrap=wrap)
    hidden_input = blind / "games.pgn"  # (here, not where the worker looks)
    shutil.copy(MAGNUS, hidden_input)
    try:
        whole = analyze(MAGNUS, "--dask", c.address, "--shard-size", "256K", "-o", blind / "report")
        games = analyze(MAGNUS, "--dask", c.address, "--shard-size", "256K", "-o", half)
        unread = analyze(hidden_input, "--dask", c.address, "--shard-size", "256K", "-o", tmp_path / "seen")
    finally:
        c.stop()
    assert unread.returncode == 2, unread.stderr
    assert re.fullmatch(rf"Error: a worker cannot read the input: shard 0 \({hidden_input}, bytes 0-[\d,]+\): "
                        rf"FileNotFoundError: .*: the workers must see the inputs under the same path as this "
                        rf"client; no summary.json is written", _last_line(unread)), unread.stderr
    assert whole.returncode == 4, whole.stderr
    assert _last_line(whole).startswith(f"Error: shard 0 ({MAGNUS}, bytes 0-")
    assert (f"the worker tcp://127.0.0.1:") in _last_line(whole)
    assert _last_line(whole).endswith(
        f"does not see the output folder {blind / 'report'}/ as this client does (no {dask_engine.RUN_MARKER} "
        "there): the workers and this client must see the output folder under the same path (a shared filesystem "
        "such as NFS, mounted alike everywhere); no summary.json is written")
    assert not (blind / "report" / "summary.json").exists()
    assert games.returncode == 4, games.stderr
    assert _last_line(games).startswith(f"Error: {half / 'games' / 'part-000000.parquet'} is missing (")
    assert _last_line(games).endswith(
        "rows were written to it): the workers and this client must see the output folder under the same path "
        "(a shared filesystem such as NFS, mounted alike everywhere); no summary.json is written")
    assert not (half / "summary.json").exists()
    assert len(games.stderr.strip().splitlines()) == 3 and not _tracebacks(games)


# ---------------------------------------------------------------------------
# Without a cluster
# ---------------------------------------------------------------------------
def test_check_parts_names_the_first_part_missing_or_short(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    a, b = tmp_path / "part-000000.parquet", tmp_path / "part-000001.parquet"
    pq.write_table(pa.table({"x": [1, 2, 3]}), a)
    pq.write_table(pa.table({"x": [1]}), b)
    assert check_parts([(a, 3), (b, 1)]) == 2
    with pytest.raises(PartMissing, match=r"part-000001.parquet holds 1 rows where 2 were written: share it"):
        check_parts([(a, 3), (b, 2), (tmp_path / "gone", 5)], "share it")
    with pytest.raises(PartMissing) as info:
        check_parts([(a, 3), (tmp_path / "gone.parquet", 5)])
    assert info.value.path == str(tmp_path / "gone.parquet") and info.value.found is None
    assert str(info.value) == f"{tmp_path / 'gone.parquet'} is missing (5 rows were written to it)"
    (tmp_path / "bad.parquet").write_bytes(b"PAR1")
    with pytest.raises(PartMissing, match="bad.parquet cannot be read"):
        check_parts([(tmp_path / "bad.parquet", 1)])


def _in_process(address, jobs):
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None)
    return distributed.Client(cluster, set_as_default=False), cluster


def test_the_run_marker_is_a_new_file_and_gone_after_the_run(tmp_path, monkeypatch):
    """A link planted at the marker's name is replaced, not written through; the marker is
    gone when the run is."""
    monkeypatch.setattr(dask_engine, "_client", _in_process)
    out, victim = tmp_path / "r", tmp_path / "victim"
    victim.write_text("keep")
    out.mkdir()
    (out / dask_engine.RUN_MARKER).symlink_to(victim)
    result = CliRunner().invoke(main, ["analyze", str(SAMPLES / "sf-books-stalemates-500.epd"), "--dask", "local",
                                       "-o", str(out), "--silent"])
    assert result.exit_code == 0, result.output
    assert victim.read_text() == "keep" and not os.path.lexists(out / dask_engine.RUN_MARKER)


def test_a_part_lost_after_its_task_fails_the_run_with_exit_4(tmp_path, monkeypatch):
    """The check of the reported parts is what stands between a lost part and a summary:
    a part gone after its task reported it (here removed as it is published) is exit 4."""
    real = dask_engine._publish

    def publish(writers, out_dir, check, published):
        parts = real(writers, out_dir, check, published)
        for path, _ in parts:
            if path.endswith(os.path.join("games", "part-000001.parquet")):
                os.unlink(path)
        return parts

    monkeypatch.setattr(dask_engine, "_publish", publish)
    monkeypatch.setattr(dask_engine, "_client", _in_process)
    out = tmp_path / "r"
    result = CliRunner().invoke(main, ["analyze", str(MAGNUS), "--dask", "local", "--shard-size", "256K",
                                       "-o", str(out), "--silent"])
    assert result.exit_code == 4, result.output
    assert result.output.strip().splitlines()[-1].startswith(
        f"Error: {out / 'games' / 'part-000001.parquet'} is missing (")
    assert not (out / "summary.json").exists()


def test_read_report_refuses_a_folder_without_summary_unless_asked(tmp_path):
    """A local run's tables without summary.json (stopped) too; parts being written
    (``*.partial``, hidden names) are never read."""
    from chessscan.reports.reader import IncompleteReportWarning

    _local([MAGNUS], tmp_path / "r")
    (tmp_path / "r" / "summary.json").unlink()
    (tmp_path / "r" / "games.parquet.partial").write_bytes(b"PAR1")
    with pytest.raises(IncompleteReport, match=r"r has no summary.json: the run that wrote it did not finish .*"
                                               r"\(positions: 1 part, games: 1 part, .*incomplete='ok'"):
        chessscan.read_report(tmp_path / "r")
    with pytest.warns(IncompleteReportWarning, match="read what is there"):
        report = chessscan.read_report(tmp_path / "r", incomplete="ok")
    assert len(report.games) == 300 and report.summary is None
    with pytest.raises(ValueError, match="incomplete must be 'raise' or 'ok'"):
        chessscan.read_report(tmp_path / "r", incomplete="yes")


def test_resolve_address_reads_dasks_configuration(monkeypatch):
    import dask

    assert dask_engine.resolve_address(" tcp://10.0.0.5:8786 ") == ("tcp://10.0.0.5:8786", "given")
    assert dask_engine.resolve_address("local") == ("local", "given")
    with dask.config.set({"scheduler-address": "tcp://127.0.0.1:9999"}):
        monkeypatch.delenv("DASK_SCHEDULER_ADDRESS", raising=False)
        assert dask_engine.resolve_address("auto") == ("tcp://127.0.0.1:9999",
                                                       "scheduler-address in Dask's configuration")
    with dask.config.set({"scheduler-address": None}):
        assert dask_engine.resolve_address("auto")[0] == "local"
    with dask.config.set({"scheduler-address": "nonsense://x"}):
        with pytest.raises(dask_engine.AddressError, match=r"'nonsense://x' \(from scheduler-address in Dask's "
                                                           "configuration\\) is not a Dask scheduler address"):
            dask_engine.resolve_address("auto")
    for bad in ("inproc://x", "tcp://:8786", "tcp://h:0", "tcp://h:port", "-o"):
        with pytest.raises(dask_engine.AddressError):
            dask_engine.resolve_address(bad)
