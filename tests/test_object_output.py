"""A report written to an object store (``-o s3://bucket/prefix``), against moto's S3 server on
127.0.0.1: the same tables as a local folder, the output folder's rules (manifest first,
foreign report-named objects refused, only recorded objects removed, summary.json last), a
stopped run (no summary.json, no half object), an unknown bucket and a missing file system."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import zstandard
from click.testing import CliRunner

import chessscan
from chessscan.cli import main
from chessscan.reports.reader import IncompleteReport, IncompleteReportWarning
from chessscan.reports.writers import MANIFEST_NAME
from conftest import REPO, SAMPLES, objects

PGN = SAMPLES / "lichess-magnus-300.pgn.zst"
TWIN = SAMPLES / "lichess-magnus-300.parquet"
RUN = ["--silent", "--cross-check", "off"]


def run(*args, **kwargs):
    return CliRunner().invoke(main, [str(a) for a in args], **kwargs)



def fetched(fs, prefix: str, into: Path) -> Path:
    """The objects under ``prefix`` copied into the local folder ``into``."""
    for name in objects(fs, prefix):
        target = into / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(fs.cat_file(f"{prefix}/{name}"))
    return into


def assert_same_report(got: Path | str, expected: Path) -> None:
    a, b = chessscan.read_report(got), chessscan.read_report(expected)
    assert a.summary == b.summary
    assert sorted(a.tables) == sorted(b.tables)
    for name in a.tables:
        pd.testing.assert_frame_equal(a.tables[name], b.tables[name])


def test_a_report_put_to_s3_is_the_local_report(tmp_path, s3):
    local = tmp_path / "local"
    assert run("analyze", PGN, "-o", local, "--jobs", "2", *RUN).exit_code == 0
    res = run("analyze", PGN, "-o", "s3://games/report/", "--jobs", "2", *RUN)
    assert res.exit_code == 0, res.output
    tables = ("games", "issues", "perpetuals", "positions")  # (no cross-check: no disagreements)
    # --jobs 2: the parts of the local folder's (a table has one per chunk with rows)
    parts = sorted(str(p.relative_to(local)) for p in local.glob("*/part-*.parquet"))
    assert {p.split("/")[0] for p in parts} == set(tables) and len(parts) > len(tables)
    assert res.stderr.splitlines()[-1] == f"report put to s3://games/report/ ({len(parts) + 2} objects)"
    assert objects(s3, "games/report") == sorted([MANIFEST_NAME, *parts, "run.json", "summary.json"])
    assert_same_report(fetched(s3, "games/report", tmp_path / "got"), local)
    assert_same_report("s3://games/report", local)  # (read_report reads a URL through fsspec)
    # ...which every Parquet reader reads through the file system, a table a prefix
    games = pd.read_parquet("s3://games/report/games", dtype_backend="numpy_nullable")
    assert len(games) == 300 and list(games.game_index) == list(range(300))
    manifest = json.loads(s3.cat_file(f"games/report/{MANIFEST_NAME}"))
    assert manifest == {"tool": "chessscan", "files": sorted([f"{t}/" for t in tables] + [
        "run.json", "summary.json", "report.html"])}

    # The next run into the prefix removes what the first recorded, and nothing else.
    s3.pipe_file("games/report/notes.txt", b"mine")
    s3.pipe_file("games/report/games/notes.txt", b"mine too")
    local_csv = tmp_path / "local-csv"
    assert run("analyze", PGN, "-o", local_csv, "--format", "csv", "--jobs", "1", *RUN).exit_code == 0
    res = run("analyze", PGN, "-o", "s3://games/report", "--format", "csv", "--jobs", "1", *RUN)
    assert res.exit_code == 0, res.output
    assert objects(s3, "games/report") == sorted([MANIFEST_NAME, *(f"{t}.csv" for t in tables), "games/notes.txt",
                                                  "notes.txt", "run.json", "summary.json"])
    for t in tables:
        assert s3.cat_file(f"games/report/{t}.csv") == (local_csv / f"{t}.csv").read_bytes()
    assert s3.cat_file("games/report/summary.json") == (local_csv / "summary.json").read_bytes()
    assert_same_report("s3://games/report", local_csv)


def test_the_parquet_twin_in_a_bucket_gives_the_pgn_report(tmp_path, s3):
    # The sample's Parquet twin, read from the bucket and reported to it: the PGN's tables.
    twin = "s3://games/hf/data/year=2022/month=04/train-00000-of-00001.parquet"
    assert run("analyze", PGN, "-o", tmp_path / "pgn", "--jobs", "1", *RUN).exit_code == 0
    res = run("analyze", twin, "-o", "s3://games/twin-report", "--jobs", "1", *RUN)
    assert res.exit_code == 0, res.output
    got = chessscan.read_report(fetched(s3, "games/twin-report", tmp_path / "got"))
    pgn = chessscan.read_report(tmp_path / "pgn")
    for name in ("positions", "games"):
        a, b = got.tables[name].copy(), pgn.tables[name].copy()
        a["source"] = b["source"] = "x"
        if name == "games":  # a table's rows are located by row number, not line and byte
            a, b = a.drop(columns=["line", "byte_offset"]), b.drop(columns=["line", "byte_offset"])
        pd.testing.assert_frame_equal(a, b)
    assert len(got.issues) == len(pgn.issues) == 0
    assert {k: v for k, v in got.summary.items() if k != "sources"} == \
        {k: v for k, v in pgn.summary.items() if k != "sources"}


@pytest.mark.parametrize("foreign", ["games.parquet", "games/part-000000.parquet", "summary.json", "games"])
def test_foreign_report_named_objects_are_refused_untouched(s3, foreign):
    prefix = f"games/foreign-{foreign.replace('/', '-')}"
    s3.pipe_file(f"{prefix}/{foreign}", b"not chessscan's")
    res = run("analyze", PGN, "-o", f"s3://{prefix}", "--jobs", "1", *RUN)
    assert res.exit_code == 2
    shown = foreign.split("/")[0] + "/" if "/" in foreign else foreign
    assert res.stderr.splitlines()[-1] == (
        f"Error: Invalid value for -o/--output: refusing to write the report there: s3://{prefix} holds "
        f"{shown}, which chessscan did not write there (it removes only what its {MANIFEST_NAME} lists): "
        "move them away or choose another output folder (see 'main analyze -h')")
    assert objects(s3, prefix) == [foreign]  # no manifest either
    assert s3.cat_file(f"{prefix}/{foreign}") == b"not chessscan's"


def test_an_input_under_the_prefix_is_refused(s3):
    s3.pipe_file("games/reads/games.parquet", TWIN.read_bytes())
    s3.pipe_file(f"games/reads/{MANIFEST_NAME}", json.dumps({"tool": "chessscan", "files": ["games.parquet"]}))
    res = run("analyze", "s3://games/reads/games.parquet", "-o", "s3://games/reads", "--jobs", "1", *RUN)
    assert res.exit_code == 2
    assert "s3://games/reads holds games.parquet, which this run reads" in res.stderr
    assert objects(s3, "games/reads") == sorted([MANIFEST_NAME, "games.parquet"])


def test_an_unknown_bucket_is_one_line(s3):
    res = run("analyze", PGN, "-o", "s3://no-such-bucket/report", "--jobs", "1", *RUN)
    assert res.exit_code == 2
    assert res.stderr == ("Error: cannot write the report to s3://no-such-bucket/report: no such bucket: "
                          "no-such-bucket\n")


@pytest.mark.parametrize("case", ["no endpoint", "no credentials"])
def test_a_store_that_refuses_says_why_not_no_such_bucket(s3_endpoint, case):
    """fsspec's exists() is False for every error: the store's own error is said instead."""
    from conftest import _free_port

    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(s3_endpoint, PYTHONPATH=str(REPO), AWS_EC2_METADATA_DISABLED="true",
               AWS_SHARED_CREDENTIALS_FILE=os.devnull, AWS_CONFIG_FILE=os.devnull)
    if case == "no endpoint":
        env["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{_free_port()}"  # (nothing listens there)
        env["AWS_MAX_ATTEMPTS"] = "1"
    else:
        del env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"]
    res = subprocess.run([sys.executable, "-m", "chessscan", "analyze", str(PGN), "-o", "s3://games/refused",
                          "--jobs", "1", *RUN], env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith("Error: cannot write the report to s3://games/refused: ")
    assert "no such bucket" not in res.stderr
    assert ("EndpointConnectionError" if case == "no endpoint" else "NoCredentialsError") in res.stderr
    assert len(res.stderr.splitlines()) == 1


def test_a_prefix_that_is_an_object_is_refused_untouched(s3):
    """``-o`` naming an object (the input itself, say) is refused as ``-o FILE`` is: exit 2,
    one line, the object untouched, nothing put; with ``--dask`` too (before any cluster)."""
    s3.pipe_file("games/one.pgn.zst", PGN.read_bytes())
    engines = [["--jobs", "1"]]
    try:
        import distributed  # noqa: F401

        engines.append(["--dask", "local"])
    except ImportError:
        pass
    for engine in engines:
        res = run("analyze", PGN, "-o", "s3://games/one.pgn.zst", *engine, *RUN)
        assert res.exit_code == 2, res.output
        assert res.stderr == ("Error: cannot write the report to s3://games/one.pgn.zst: [Errno 20] "
                              "s3://games/one.pgn.zst is an object, not a folder\n")
        assert s3.cat_file("games/one.pgn.zst") == PGN.read_bytes()
        assert [p for p in s3.find("games") if p.startswith("games/one.pgn.zst")] == ["games/one.pgn.zst"]


def test_a_missing_file_system_names_the_extra(tmp_path, monkeypatch):
    import fsspec.core

    def missing(url, **kwargs):
        raise ImportError("Please install gcsfs to access Google Storage")

    monkeypatch.setattr(fsspec.core, "url_to_fs", missing)
    monkeypatch.chdir(tmp_path)
    res = run("analyze", PGN, "-o", "gs://bucket/report", "--jobs", "1", *RUN)
    assert res.exit_code == 2
    assert res.stderr == ("Error: cannot write the report to gs://bucket/report: writing gs:// needs its file system: "
                          "pip install 'chessscan[gcs]' (from a checkout: pip install '.[gcs]') (Please install "
                          "gcsfs to access Google Storage)\n")
    assert list(tmp_path.iterdir()) == []  # no local folder named gs:


def test_sigterm_while_analyzing_puts_only_the_manifest(tmp_path, s3, s3_endpoint):
    # stdin held open: the run is mid-way for as long as the test wants.
    env = {**os.environ, **s3_endpoint, "PYTHONPATH": str(REPO), "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "chessscan", "analyze", "-", "-o", "s3://games/stopped",
                             "--jobs", "1", *RUN], stdin=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        proc.stdin.write(zstandard.ZstdDecompressor().stream_reader(PGN.open("rb")).read())
        proc.stdin.flush()
        deadline = time.monotonic() + 60
        while not s3.exists(f"games/stopped/{MANIFEST_NAME}"):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.1)
            s3.invalidate_cache()
        staged = list(tmp_path.glob("chessscan-upload-*"))
        assert len(staged) == 1
        while not list(staged[0].glob("positions/.part-*.partial")):  # rows being written
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signal.SIGTERM
    assert err.decode().strip().splitlines()[-1] == (
        "stopped by SIGTERM: nothing is put in s3://games/stopped/ but its manifest (the next run into it "
        "removes what it lists), and no summary.json is written")
    assert objects(s3, "games/stopped") == [MANIFEST_NAME]
    assert list(tmp_path.iterdir()) == []  # the staging folder removed
    # The next run into the prefix writes the report there.
    assert run("analyze", PGN, "-o", "s3://games/stopped", "--jobs", "1", *RUN).exit_code == 0
    assert "summary.json" in objects(s3, "games/stopped")


def test_a_stop_while_uploading_leaves_whole_objects_and_no_summary(s3, monkeypatch):
    put = s3.put_file  # (the run's file system is this one: fsspec keeps one instance)
    done = []

    def stopped_at_third(lpath, rpath, *args, **kwargs):
        if len(done) == 2:
            raise KeyboardInterrupt
        done.append(rpath)
        return put(lpath, rpath, *args, **kwargs)

    monkeypatch.setattr(s3, "put_file", stopped_at_third)
    res = run("analyze", PGN, "-o", "s3://games/cut", "--jobs", "1", *RUN)
    assert res.exit_code == 128 + signal.SIGINT
    assert res.stderr.splitlines()[-1] == ("interrupted: the report in s3://games/cut/ is incomplete (its objects put "
                                           "so far are whole), and no summary.json is written")
    assert objects(s3, "games/cut") == [MANIFEST_NAME, "games/part-000000.parquet", "issues/part-000000.parquet"]
    assert len(pd.read_parquet("s3://games/cut/games")) == 300
    with pytest.raises(IncompleteReport, match="^s3://games/cut has no summary.json: "):
        chessscan.read_report("s3://games/cut")
    with pytest.warns(IncompleteReportWarning):
        assert len(chessscan.read_report("s3://games/cut", incomplete="ok").games) == 300


def test_dask_local_puts_the_report_to_s3(tmp_path, s3, monkeypatch):
    # Staged on this machine, which a LocalCluster's workers share; the inputs a URL and a file.
    pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    from chessscan.engines import dask as engine

    def in_process(address, jobs):  # (the workers as threads: a quick cluster)
        cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0")
        return distributed.Client(cluster), cluster

    monkeypatch.setattr(engine, "_client", in_process)
    twin = "s3://games/hf/data/year=2022/month=04/train-00000-of-00001.parquet"
    local = tmp_path / "local"
    assert run("analyze", twin, PGN, "-o", local, "--jobs", "1", *RUN).exit_code == 0
    res = run("analyze", twin, PGN, "-o", "s3://games/dask", "--dask", "local", "--jobs", "1", *RUN)
    assert res.exit_code == 0, res.output
    assert res.stderr.splitlines()[-1].startswith("report put to s3://games/dask/ (")
    got = chessscan.read_report(fetched(s3, "games/dask", tmp_path / "got"))
    want = chessscan.read_report(local)
    assert {k: v for k, v in got.summary.items()} == want.summary
    for name, frame in want.tables.items():  # (a Dask run's parts are per shard, not per chunk)
        pd.testing.assert_frame_equal(got.tables[name].reset_index(drop=True), frame, check_categorical=False)


def test_the_report_page_is_put_with_the_tables(s3):
    pytest.importorskip("matplotlib", reason="the report extra (matplotlib) is not installed")
    res = run("analyze", PGN, "-o", "s3://games/page", "--html", "--jobs", "1", *RUN)
    assert res.exit_code == 0, res.output
    lines = res.stderr.splitlines()
    assert re.fullmatch(r"report page made \([\d.]+ s\), to be put as s3://games/page/report\.html", lines[-2])
    assert lines[-1] == "report put to s3://games/page/ (7 objects)"
    names = objects(s3, "games/page")
    assert "report.html" in names and "summary.json" in names
    assert s3.cat_file("games/page/report.html").startswith(b"<!DOCTYPE html>")
    assert b"<title>chessscan report: page</title>" in s3.cat_file("games/page/report.html")  # (the URL's name)


def test_the_duplicate_tables_are_put_with_the_others(tmp_path, s3):
    """``--duplicates --contained-games`` into a bucket: the two tables written after the
    analysis are put too, equal to a local run's."""
    local = tmp_path / "local"
    flags = ("--duplicates", "--contained-games", "--jobs", "1", *RUN)
    assert run("analyze", PGN, PGN, "-o", local, *flags).exit_code == 0
    res = run("analyze", PGN, PGN, "-o", "s3://games/dups", *flags)
    assert res.exit_code == 0, res.output
    names = objects(s3, "games/dups")
    assert any(n.startswith("duplicates") for n in names) and any(n.startswith("contained_games") for n in names)
    got = chessscan.read_report("s3://games/dups")
    want = chessscan.read_report(local)
    assert len(want.duplicates) == 300  # the second copy of every game
    pd.testing.assert_frame_equal(got.duplicates, want.duplicates)
    pd.testing.assert_frame_equal(got.contained_games, want.contained_games)


def test_run_dask_given_a_url_readies_the_prefix_and_puts_the_parts(tmp_path, s3):
    """The library's ``run_dask`` with a URL: the prefix's rules first (a foreign table
    refused, the manifest put), then the parts put by the workers (here threads), each
    reported with its URL and rows; no summary.json (the caller's), no run marker left. A
    ``file://`` URL is the local folder it names."""
    pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    from chessscan.analysis.options import AnalysisOptions
    from chessscan.engines.dask import RUN_MARKER, run_dask
    from chessscan.reports.writers import OutputFolderError

    s3.pipe_file("games/lib-foreign/games.parquet", b"not chessscan's")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as c, \
            distributed.Client(c, set_as_default=False) as client:
        with pytest.raises(OutputFolderError, match="holds games.parquet"):
            run_dask([str(PGN)], "s3://games/lib-foreign", AnalysisOptions(cross_check="off"), client=client)
        parts: list = []
        tally = run_dask([str(PGN)], "s3://games/lib", AnalysisOptions(cross_check="off"), client=client,
                         shard_size=64 << 10, parts=parts)
        local = run_dask([str(PGN)], f"file://{tmp_path / 'local'}", AnalysisOptions(cross_check="off"),
                         client=client)
    assert objects(s3, "games/lib-foreign") == ["games.parquet"]
    assert tally.games == local.games == 300
    names = objects(s3, "games/lib")
    assert names == sorted([MANIFEST_NAME, *(url[len("s3://games/lib/"):] for url, _ in parts)])
    assert RUN_MARKER not in names and "summary.json" not in names
    games = [(url, rows) for url, rows in parts if url.startswith("s3://games/lib/games/")]
    assert len(games) > 2 and sum(rows for _, rows in games) == 300
    assert len(pd.read_parquet("s3://games/lib/games")) == 300
    assert len(pd.read_parquet(tmp_path / "local" / "games")) == 300


def test_chessscan_report_renders_a_report_under_a_url_and_puts_its_page(tmp_path, s3):
    """``chessscan report s3://...``: the page of the report there, put back as one object,
    the same bytes as the page of a local copy of the report; a page no run recorded is
    refused untouched; a prefix holding no report is one line, exit 2."""
    pytest.importorskip("matplotlib", reason="the report extra (matplotlib) is not installed")
    assert run("analyze", PGN, "-o", "s3://games/later", "--jobs", "2", *RUN).exit_code == 0
    assert "report.html" not in objects(s3, "games/later")
    res = run("report", "s3://games/later")
    assert res.exit_code == 0, res.output
    assert re.fullmatch(r"report written to s3://games/later/report\.html \([\d.]+ s\)", res.stderr.strip())
    page = s3.cat_file("games/later/report.html")
    copy = fetched(s3, "games/later", tmp_path / "later")  # (named alike: the page shows the name)
    (copy / "report.html").unlink()
    assert run("report", copy).exit_code == 0

    def undated(page: bytes) -> bytes:
        # matplotlib dates each chart, and the page says when it was built (to the minute: two
        # pages built a minute apart differ there)
        page = re.sub(rb"<dc:date>[^<]*</dc:date>", b"", page)
        return re.sub(rb"built \d{4}-\d\d-\d\d \d\d:\d\d UTC", b"built", page)

    assert undated(page) == undated((copy / "report.html").read_bytes())
    # -o: a local file, nothing put
    res = run("report", "s3://games/later", "-o", tmp_path / "page.html")
    assert res.exit_code == 0 and undated((tmp_path / "page.html").read_bytes()) == undated(page)
    assert s3.cat_file("games/later/report.html") == page

    s3.pipe_file("games/mine/report.html", b"my page")
    s3.pipe_file("games/mine/summary.json", b"{}")
    res = run("report", "s3://games/mine")
    assert res.exit_code == 2
    assert res.stderr.splitlines()[-1].startswith(
        "Error: Invalid value for REPORT_DIR: refusing to write the page there: s3://games/mine holds report.html, "
        "which chessscan did not write there")
    assert s3.cat_file("games/mine/report.html") == b"my page"
    res = run("report", "s3://games/nothing-here")
    assert res.exit_code == 2
    assert res.stderr == ("Error: s3://games/nothing-here holds no summary.json: not a chessscan report, or its "
                          "analysis did not finish\n")


def test_a_worker_that_finds_no_run_marker_puts_nothing_exit_4(s3, monkeypatch):
    """A worker reaching another store (here: told the marker object is absent) stops before
    it puts a part: exit 4, one line naming the marker and what the workers need; nothing
    under the prefix but the manifest."""
    pytest.importorskip("dask.dataframe")
    distributed = pytest.importorskip("distributed")
    from chessscan.engines import dask as engine
    from chessscan.reports.store import ObjectParts

    def in_process(address, jobs):
        cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0")
        return distributed.Client(cluster), cluster

    monkeypatch.setattr(engine, "_client", in_process)
    real = ObjectParts.read
    monkeypatch.setattr(ObjectParts, "read", lambda self, name: None if name == engine.RUN_MARKER else real(self, name))
    res = run("analyze", PGN, "-o", "s3://games/elsewhere", "--dask", "local", "--jobs", "1", *RUN)
    assert res.exit_code == 4
    assert re.fullmatch(
        rf"Error: shard 0 \({PGN}, bytes 0-[\d,]+ of its text\): the worker inproc://\S+ does not see the output "
        rf"folder s3://games/elsewhere/ as this client does \(no \{engine.RUN_MARKER} there\): the workers must "
        r"reach the same object store as this client: its file system's extra, credentials and endpoint \(AWS_\*, "
        r"GOOGLE_\*, AZURE_\*, HF_TOKEN\.\.\.\) as this client has them; no summary.json is written",
        res.stderr.splitlines()[-1]), res.stderr
    assert objects(s3, "games/elsewhere") == [MANIFEST_NAME]


def test_an_input_prefix_as_the_output_is_refused(s3):
    """``-o`` the very prefix a run reads: exit 2, one line, nothing put (the next run would
    take the prefix for a report and read none of its games)."""
    s3.pipe_file("games/in/one.pgn.zst", PGN.read_bytes())
    for out in ("s3://games/in", "s3://games/in/"):
        res = run("analyze", "s3://games/in", "-o", out, "--jobs", "1", *RUN)
        assert res.exit_code == 2, res.output
        assert res.stderr.count("\n") == 1 and "is an input folder" in res.stderr, res.stderr
        assert s3.find("games/in") == ["games/in/one.pgn.zst"]
    res = run("analyze", "s3://games/in", "-o", "s3://games/in/report", "--jobs", "1", *RUN)
    assert res.exit_code == 0, res.output
