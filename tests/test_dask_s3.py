"""``analyze --dask ADDRESS -o s3://bucket/prefix`` on a real cluster (a ``dask scheduler`` and
``dask worker`` processes on 127.0.0.1, ended by pid) against moto's S3 server (its own process
on 127.0.0.1): the workers put the parts to the bucket themselves, through their own file system
and credentials, with a temporary folder of their own (none shared with the client, which
stages nothing but its run files); the output folder's rules hold there (tables of one process,
a retried task, a stopped client, a missing part, a worker without credentials).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from conftest import SAMPLES, objects
from test_dask_cluster import Cluster, _env, _last_line, _local, _shard, _tracebacks, analyze, assert_same_report

pytest.importorskip("distributed", reason="needs the dask extra: pip install 'chessscan[dask]'")

import chessscan  # noqa: E402
from chessscan.cli import main  # noqa: E402
from chessscan.engines import dask as dask_engine  # noqa: E402
from chessscan.reports import writers  # noqa: E402
from chessscan.reports.reader import IncompleteReport  # noqa: E402
from chessscan.reports.writers import MANIFEST_NAME  # noqa: E402

MAGNUS = SAMPLES / "lichess-magnus-300.pgn"
MAGNUS_ZST = SAMPLES / "lichess-magnus-300.pgn.zst"
CREDENTIALS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE")


@pytest.fixture(scope="module")
def s3_cluster(s3_endpoint, tmp_path_factory):
    """Two one-thread workers that reach the S3 endpoint (its address and credentials in their
    environment) and write in a temporary folder of their own (``TMPDIR``)."""
    folder = tmp_path_factory.mktemp("s3-cluster")
    (folder / "tmp").mkdir()
    env = {**s3_endpoint, "TMPDIR": str(folder / "tmp"), "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "1",
           "DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION": "1.0"}
    c = Cluster(folder, env=env)
    try:
        yield c
    finally:
        c.stop()



def parts_of(fs, prefix: str) -> list[str]:
    return [n for n in objects(fs, prefix) if "/part-" in n]


def test_workers_put_the_parts_and_the_tables_are_one_processs(s3_cluster, s3, tmp_path, monkeypatch):
    """The PGN sample in 96 KB shards: the parts are objects under the prefix, put by the
    workers (the client, run here, opens no table file but its run files), and the tables
    and summary.json equal those of ``--jobs 1`` into a local folder."""
    opened = []
    real = writers.TableWriter.__init__

    def recording(self, path, *args, **kwargs):
        opened.append(os.fspath(path))
        real(self, path, *args, **kwargs)

    monkeypatch.setattr(writers.TableWriter, "__init__", recording)
    local = tmp_path / "local"
    _local([MAGNUS], local)
    opened.clear()
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    result = CliRunner().invoke(main, ["analyze", str(MAGNUS), "--dask", s3_cluster.address, "--shard-size", "96K",
                                       "-o", "s3://games/dask-plain", "--silent"])
    assert result.exit_code == 0, result.output
    assert opened == []  # no part (nor any table) written on the client
    parts = parts_of(s3, "games/dask-plain")
    shards = len(dask_engine.plan_shards([str(MAGNUS)], 96 << 10))
    assert shards > 3 and len([p for p in parts if p.startswith("games/")]) == shards
    assert objects(s3, "games/dask-plain") == sorted([MANIFEST_NAME, *parts, "run.json", "summary.json"])
    assert result.stderr.splitlines()[-1] == (f"report put to s3://games/dask-plain/ (2 objects; the workers put "
                                              f"its {len(parts)} parts)")
    summary = assert_same_report(local, "s3://games/dask-plain")
    assert summary["games_read"] == 300 and "retried_shards" not in summary
    assert list(tmp_path.glob("chessscan-*")) == []  # the staging folder removed
    assert list((s3_cluster.folder / "tmp").glob("chessscan-*")) == []  # the workers' folders of parts too


def test_a_compressed_input_cut_by_the_client(s3_cluster, s3, tmp_path):
    """The .zst sample, cut here into 32 KiB chunks that travel in the tasks: one part a chunk,
    put by the workers; the tables of one process."""
    local = tmp_path / "local"
    _local([MAGNUS_ZST], local)
    result = analyze(MAGNUS_ZST, "--dask", s3_cluster.address, "--shard-size", "32K", "-o", "s3://games/dask-zst",
                     env={"TMPDIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    parts = parts_of(s3, "games/dask-zst")
    assert len([p for p in parts if p.startswith("games/")]) > 8
    assert _last_line(result) == f"report put to s3://games/dask-zst/ (2 objects; the workers put its {len(parts)} parts)"
    assert assert_same_report(local, "s3://games/dask-zst")["games_read"] == 300


def test_a_killed_worker_is_replaced_and_its_shard_put_again(s3_cluster, s3, tmp_path):
    """The worker writing shard 3's games part is killed (SIGKILL) once: the shard runs again
    on a worker, which puts its parts whole; the tables are one process's."""
    shard = _shard([MAGNUS], 96 << 10, 3)
    s3_cluster.fault(kill="part-000003", once=str(tmp_path / "killed-once"))
    try:
        result = analyze(MAGNUS, "--dask", s3_cluster.address, "--shard-size", "96K", "-o", "s3://games/dask-killed")
    finally:
        s3_cluster.clear_faults()
    assert (tmp_path / "killed-once").exists()
    assert result.returncode == 0, result.stderr
    _local([MAGNUS], tmp_path / "local")
    summary = assert_same_report(tmp_path / "local", "s3://games/dask-killed")
    assert {"shard": 3, "source": str(MAGNUS), "bytes": [shard.start, shard.end],
            "workers_died": 1} in summary["retried_shards"]
    parts = parts_of(s3, "games/dask-killed")
    assert "games/part-000003.parquet" in parts
    assert _last_line(result) == f"report put to s3://games/dask-killed/ (2 objects; the workers put its {len(parts)} parts)"


def test_a_result_computed_again_as_the_run_ends_leaves_its_parts(s3_cluster, s3, tmp_path):
    """The worker that ran shard 0 is killed (SIGKILL) once, at its next task, after the client
    took shard 0's result: the scheduler computes shard 0 again (the client holds its
    future), after the tasks then waiting, i.e. as the run ends (the last shard's put is
    held 2 s, and that task's 6 s). The run ends with exit 0 once that task has put its
    parts again, and the report equals --jobs 1's once it has ended: it did not find the run
    marker gone after its puts and remove shard 0's parts, the only ones of ``issues`` and
    ``disagreements``, which the client had checked."""
    shards, _ = dask_engine.settle_shards(
        dask_engine.plan_shards([str(MAGNUS)], 96 << 10),
        lambda needed: [dask_engine.count_range(s.path, s.start, s.end) for s in needed])
    once = tmp_path / "killed-once"
    s3_cluster.fault(kill_after="part-000000", once=str(once), after=str(once),
                     hold={"positions/part-000000": 6, f"positions/part-{len(shards) - 1:06d}": 2})
    try:
        result = analyze(MAGNUS, "--dask", s3_cluster.address, "--shard-size", "96K", "-o", "s3://games/dask-again")
    finally:
        s3_cluster.clear_faults()
    assert once.exists()
    assert result.returncode == 0, result.stderr
    time.sleep(8)  # (longer than the task computed again takes to end)
    _local([MAGNUS], tmp_path / "local")
    assert assert_same_report(tmp_path / "local", "s3://games/dask-again")["games_read"] == 300
    assert "games/part-000000.parquet" in parts_of(s3, "games/dask-again")


def _slow_run_with_a_part_put(cluster, s3, prefix: str, tmp_path):
    """A client process analyzing MAGNUS into ``s3://prefix`` with every task slowed down,
    returned once its first part is under the prefix (or it ended, or 60 s passed)."""
    cluster.fault(slow=1.0)
    proc = subprocess.Popen([sys.executable, "-m", "chessscan", "analyze", str(MAGNUS), "--dask", cluster.address,
                             "--shard-size", "64K", "-o", f"s3://{prefix}", "--silent"],
                            env=_env(TMPDIR=str(tmp_path)), stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not parts_of(s3, prefix) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    return proc

def test_a_stopped_client_leaves_no_summary_and_no_part_after_its_exit(s3_cluster, s3, tmp_path):
    """SIGTERM to the client while tasks run: exit 143, no summary.json; the tasks it had
    started put no part after it exited (cancelled, and what they put after the last result
    taken removed)."""
    prefix = "games/dask-stopped"
    proc = _slow_run_with_a_part_put(s3_cluster, s3, prefix, tmp_path)
    try:
        assert parts_of(s3, prefix), "no part was put"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        at_exit = parts_of(s3, prefix)
        time.sleep(3)  # longer than a task takes to close and put its part
        assert parts_of(s3, prefix) == at_exit
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        s3_cluster.clear_faults()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert err.strip().splitlines()[-1] == (f"stopped by SIGTERM: the datasets in s3://{prefix}/ hold only the parts "
                                            "finished before, and no summary.json is written")
    names = objects(s3, prefix)
    assert "summary.json" not in names and dask_engine.RUN_MARKER not in names
    tasks = len(dask_engine.plan_shards([str(MAGNUS)], 64 << 10))
    assert len([p for p in at_exit if p.startswith("games/")]) < tasks // 2  # stopped early
    with pytest.raises((IncompleteReport, FileNotFoundError)):  # (no part kept: "holds no table")
        chessscan.read_report(f"s3://{prefix}")
    assert list(tmp_path.iterdir()) == []  # the staging folder removed


def test_a_part_lost_after_its_put_fails_the_run_with_exit_4(s3_cluster, s3):
    """The games part of shard 1 removed right after its worker put it: the client's check of
    the reported parts (through its own file system) names it; exit 4, no summary.json."""
    s3_cluster.fault(drop="games/part-000001")
    try:
        result = analyze(MAGNUS, "--dask", s3_cluster.address, "--shard-size", "96K", "-o", "s3://games/dask-lost")
    finally:
        s3_cluster.clear_faults()
    assert result.returncode == 4, result.stderr
    assert _last_line(result).startswith("Error: s3://games/dask-lost/games/part-000001.parquet is missing (")
    assert _last_line(result).endswith(
        "rows were written to it): the workers must reach the same object store as this client: its file "
        "system's extra, credentials and endpoint (AWS_*, GOOGLE_*, AZURE_*, HF_TOKEN...) as this client has them; "
        "no summary.json is written")
    assert len(result.stderr.strip().splitlines()) == 3 and not _tracebacks(result)
    assert "summary.json" not in objects(s3, "games/dask-lost")


def test_a_worker_without_credentials_is_one_line_exit_2(s3_endpoint, s3, tmp_path):
    """A worker whose environment has the endpoint but no credentials cannot read the run
    marker: one line naming the shard, the worker, the file system's error and what the
    workers need; exit 2; nothing but the manifest under the prefix."""
    c = Cluster(tmp_path, workers=1, preload=False, unset=CREDENTIALS,
                env={"AWS_ENDPOINT_URL": s3_endpoint["AWS_ENDPOINT_URL"], "AWS_EC2_METADATA_DISABLED": "true",
                     "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"), "AWS_CONFIG_FILE": str(tmp_path / "none")})
    try:
        result = analyze(MAGNUS, "--dask", c.address, "-o", "s3://games/dask-blind")
    finally:
        c.stop()
    assert result.returncode == 2, result.stderr
    assert _last_line(result).startswith(f"Error: shard 0 ({MAGNUS}, the whole file): the worker tcp://127.0.0.1:")
    assert _last_line(result).endswith(
        " cannot write the report to s3://games/dask-blind/ (NoCredentialsError: Unable to locate credentials): the "
        "workers must reach the same object store as this client: its file system's extra, credentials and "
        "endpoint (AWS_*, GOOGLE_*, AZURE_*, HF_TOKEN...) as this client has them; no summary.json is written")
    assert len(result.stderr.strip().splitlines()) == 3 and not _tracebacks(result)
    assert objects(s3, "games/dask-blind") == [MANIFEST_NAME]


def test_what_the_client_rewrites_goes_through_the_store(s3_cluster, s3, tmp_path):
    """The rows the client adds to the workers' parts (an input that is missing: its issue at
    the head of the first part; an empty file: its ``empty-input`` warning in its part) are
    read and put again through the file system, and ``--duplicates`` (the games table read
    back, its ``duplicate_of`` column written) and ``--html`` work on the parts in the bucket:
    every table and summary.json equal ``--jobs 1``'s in a local folder."""
    pytest.importorskip("duckdb", reason="the duplicate search runs in DuckDB: pip install 'chessscan[duplicates]'")
    pytest.importorskip("matplotlib", reason="the report extra (matplotlib) is not installed")
    empty = tmp_path / "empty.pgn"
    empty.write_bytes(b"")
    inputs = [tmp_path / "missing.pgn", MAGNUS, empty, MAGNUS_ZST]
    local = tmp_path / "local"
    done = CliRunner().invoke(main, ["analyze", *map(str, inputs), "--jobs", "1", "-o", str(local), "--duplicates",
                                     "--silent"])
    assert done.exit_code == 2, done.output  # (an input missing)
    result = analyze(*inputs, "--dask", s3_cluster.address, "--shard-size", "96K", "-o", "s3://games/dask-rewrites",
                     "--duplicates", "--html", env={"TMPDIR": str(tmp_path)})
    assert result.returncode == 2, result.stderr
    summary = assert_same_report(local, "s3://games/dask-rewrites")
    assert summary["duplicates"]["duplicate_games"] == 300
    issues = chessscan.read_report("s3://games/dask-rewrites").issues
    assert issues.code.tolist()[0] == "unreadable-input" and "empty-input" in issues.code.tolist()
    names = objects(s3, "games/dask-rewrites")
    assert "report.html" in names and s3.cat_file("games/dask-rewrites/report.html").startswith(b"<!DOCTYPE html>")
    assert any(n.startswith("duplicates/part-") for n in names)
    assert list(tmp_path.glob("chessscan-*")) == []


def test_a_run_with_no_game_has_every_table(s3_cluster, s3, tmp_path):
    """An empty folder as the only input: no task runs, yet every table has its one empty
    part, as with ``--jobs 1`` (the ``empty-input`` warning in ``issues``), under the prefix
    and in a local folder alike."""
    empty = tmp_path / "empty"
    empty.mkdir()
    local = tmp_path / "local"
    _local([empty], local)
    for out in ("s3://games/dask-no-game", tmp_path / "dask"):
        result = analyze(empty, "--dask", s3_cluster.address, "-o", out, env={"TMPDIR": str(tmp_path)})
        assert result.returncode == 0, result.stderr
        summary = assert_same_report(local, out)
        assert summary["games_read"] == 0
        report = chessscan.read_report(out)
        assert set(report.tables) == {"positions", "games", "perpetuals", "issues", "disagreements"}
        assert report.issues.code.tolist() == ["empty-input"]
    assert [p for p in parts_of(s3, "games/dask-no-game") if p.startswith("games/")] == ["games/part-000000.parquet"]
    assert list(tmp_path.glob("chessscan-*")) == []


def test_a_second_run_into_the_prefix_meanwhile_is_left_its_marker_and_parts(s3_cluster, s3, tmp_path):
    """While a run's tasks go on, another run's marker and a part of its own appear under the
    prefix (a second run started into it): the first run ends with exit 2 and one line
    saying so, and leaves the other run's marker and part where they are (it removed both,
    and failed with exit 4 saying its workers did not see the store)."""
    prefix = "games/dask-second-run"
    proc = _slow_run_with_a_part_put(s3_cluster, s3, prefix, tmp_path)
    try:
        first = parts_of(s3, prefix)
        assert first, "no part was put"
        # Read before the marker is planted: a task that then sees it removes its own parts.
        foreign_part = s3.cat_file(f"{prefix}/{first[0]}")
        s3.pipe_file(f"{prefix}/{dask_engine.RUN_MARKER}", b"0123456789abcdef0123456789abcdef\n")
        s3.pipe_file(f"{prefix}/games/part-000099.parquet", foreign_part)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        s3_cluster.clear_faults()
    assert proc.returncode == 2, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("Error: shard ") and last.endswith(
        f": another chessscan run started writing into s3://{prefix}/ (its {dask_engine.RUN_MARKER} is there): one "
        "output holds one run at a time, give each run its own; no summary.json is written")
    names = objects(s3, prefix)
    assert dask_engine.RUN_MARKER in names and "games/part-000099.parquet" in names and "summary.json" not in names
    assert s3.cat_file(f"{prefix}/{dask_engine.RUN_MARKER}") == b"0123456789abcdef0123456789abcdef\n"
