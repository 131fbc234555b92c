"""Nothing lost, ever: the output folder, stopped runs, full disks, closed stdout, file names
that are not UTF-8, and worker pools that cannot start."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from chessscan.cli import main
from chessscan.reports import writers
from chessscan.reports.writers import MANIFEST_NAME, OutputError, TableWriter
from conftest import SAMPLES, writing

MAGNUS = SAMPLES / "lichess-magnus-300.pgn"
MAGNUS_ZST = SAMPLES / "lichess-magnus-300.pgn.zst"
CHESSSCAN = [sys.executable, "-m", "chessscan"]


def analyze(*args):
    return CliRunner().invoke(main, ["analyze", *map(str, args), "--silent", "--jobs", "1"])


# --- 1. the output folder ----------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_user_table_named_file_is_never_deleted(tmp_path, fmt):
    """A user's own games.csv in the folder: the run refuses, the file keeps its bytes."""
    mine = tmp_path / "games.csv"
    mine.write_text("white,black\nme,you\n")
    result = analyze(MAGNUS, "-o", tmp_path, "--format", fmt)
    assert result.exit_code == 2
    assert "refusing to write the report there" in result.output and "games.csv" in result.output
    assert mine.read_text() == "white,black\nme,you\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["games.csv"]


def test_foreign_summary_and_dataset_parts_are_refused(tmp_path):
    (tmp_path / "summary.json").write_text("{}")
    assert analyze(MAGNUS, "-o", tmp_path).exit_code == 2
    (tmp_path / "summary.json").unlink()
    (tmp_path / "positions").mkdir()
    (tmp_path / "positions" / "part-000000.parquet").write_bytes(b"mine")
    result = analyze(MAGNUS, "-o", tmp_path)
    assert result.exit_code == 2 and "positions/" in result.output
    assert (tmp_path / "positions" / "part-000000.parquet").read_bytes() == b"mine"


def test_a_run_removes_only_what_the_manifest_lists(tmp_path):
    out = tmp_path / "r"
    assert analyze(MAGNUS, "-o", out, "--format", "csv").exit_code == 0
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    assert manifest["tool"] == "chessscan"
    assert set(manifest["files"]) == {"games.csv", "issues.csv", "perpetuals.csv", "positions.csv",
                                      "disagreements.csv", "summary.json", "run.json", "report.html"}
    (out / "notes.txt").write_text("mine")
    (out / "games.parquet.bak").write_text("mine")
    # A killed run left a table under its partial name: the next run removes it too.
    (out / "positions.parquet.partial").write_bytes(b"PAR1")
    json.dump({"tool": "chessscan", "files": manifest["files"] + ["positions.parquet"]},
              (out / MANIFEST_NAME).open("w"))
    assert analyze(MAGNUS, "-o", out, "--cross-check", "off").exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == [
        MANIFEST_NAME, "games", "games.parquet.bak", "issues", "notes.txt", "perpetuals", "positions",
        "run.json", "summary.json"]
    assert sorted(p.name for p in (out / "games").iterdir()) == ["part-000000.parquet"]
    assert len(pd.read_parquet(out / "games")) == 300


def test_a_manifest_names_no_file_outside_the_report(tmp_path):
    """A manifest edited by hand (or not chessscan's) lists inputs, files above the folder and
    absolute paths: none is removed, only the report names it lists."""
    games = tmp_path / "h" / "games.pgn"
    games.parent.mkdir()
    games.write_bytes(MAGNUS.read_bytes())
    beside, above, absolute = tmp_path / "h" / "rep" / "a.pgn", tmp_path / "outside.pgn", tmp_path / "abs.pgn"
    out = tmp_path / "h" / "rep"
    assert analyze(games, "-o", out).exit_code == 0
    for f in (beside, above, absolute):
        f.write_text("mine")
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    manifest["files"] += ["../games.pgn", "../../outside.pgn", str(absolute), "a.pgn", "games/../a.pgn"]
    (out / MANIFEST_NAME).write_text(json.dumps(manifest))
    assert analyze(games, "-o", out).exit_code == 0
    assert games.read_bytes() == MAGNUS.read_bytes()
    assert [f.read_text() for f in (beside, above, absolute)] == ["mine"] * 3


@pytest.mark.parametrize("name", ["run.json", "report.html"])
def test_a_foreign_run_file_is_refused(tmp_path, name):
    (tmp_path / name).write_text("mine")
    result = analyze(MAGNUS, "-o", tmp_path)
    assert result.exit_code == 2 and name in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == [name] and (tmp_path / name).read_text() == "mine"


def test_a_linked_dataset_folder_is_never_followed(tmp_path):
    """``positions/`` replaced by a link to the user's own dataset: listed in the manifest,
    the link alone is removed; not listed, the folder is refused (a Dask run would write its
    parts through it)."""
    theirs = tmp_path / "mine" / "positions"
    theirs.mkdir(parents=True)
    for k in range(2):
        (theirs / writers.part_name(k)).write_bytes(b"mine")
    out = tmp_path / "out"
    out.mkdir()
    (out / "positions").symlink_to(theirs)
    with pytest.raises(writers.OutputFolderError, match="positions/"):
        writers.prepare_output(out, writers.report_files(["positions"], dataset=True))
    (out / MANIFEST_NAME).write_text(json.dumps({"tool": "chessscan", "files": ["positions/"]}))
    writers.prepare_output(out, writers.report_files(["positions"], dataset=True))
    assert not (out / "positions").exists()
    assert sorted(p.name for p in theirs.iterdir()) == [writers.part_name(0), writers.part_name(1)]


def test_an_input_named_as_a_report_file_is_refused(tmp_path):
    """The manifest lists games.csv and games.csv is the input: the run would remove it
    before reading it (or write its table over it)."""
    out = tmp_path / "out"
    out.mkdir()
    games = out / "games.csv"
    games.write_bytes(MAGNUS.read_bytes())
    (out / MANIFEST_NAME).write_text(json.dumps({"tool": "chessscan", "files": ["games.csv"]}))
    result = analyze(games, "-o", out, "--format", "csv")
    assert result.exit_code == 2 and "games.csv, which this run reads" in result.output
    assert games.read_bytes() == MAGNUS.read_bytes()
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST_NAME, "games.csv"]


def test_report_writes_no_page_over_a_foreign_file_or_through_a_link(tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "r"
    assert analyze(MAGNUS, "-o", out, "--cross-check", "off").exit_code == 0
    target = tmp_path / "games.pgn"
    target.write_bytes(b"1. e4 *\n")
    (out / "report.html").symlink_to(target)
    result = CliRunner().invoke(main, ["report", str(out)])
    assert result.exit_code == 2 and "a link" in result.output and target.read_bytes() == b"1. e4 *\n"
    (out / "report.html").unlink()
    (out / "report.html").write_text("my page")
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    manifest["files"].remove("report.html")
    (out / MANIFEST_NAME).write_text(json.dumps(manifest))
    result = CliRunner().invoke(main, ["report", str(out)])
    assert result.exit_code == 2 and (out / "report.html").read_text() == "my page"


def test_output_that_is_a_file_is_an_output_error(tmp_path):
    (tmp_path / "f").write_text("x")
    result = analyze(MAGNUS, "-o", tmp_path / "f")
    assert result.exit_code in (2, 4) and "Traceback" not in result.output
    assert (tmp_path / "f").read_text() == "x"


# --- 7. a full disk ----------------------------------------------------------------------

class _FullDisk:
    """A Parquet/CSV sink whose writes fail as on a full disk, after ``room`` calls."""

    def __init__(self, sink, room: int) -> None:
        self.sink, self.room = sink, room

    def __getattr__(self, name):
        attr = getattr(self.sink, name)
        if name not in ("write_table", "write_batch", "close"):
            return attr

        def call(*args, **kwargs):
            self.room -= 1
            if self.room < 0:
                attr_close = getattr(self.sink, "close")
                if name != "close":
                    attr_close()
                raise OSError(errno.ENOSPC, "No space left on device")
            return attr(*args, **kwargs)
        return call


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_table_writer_full_disk_names_the_file_and_leaves_no_partial_table(tmp_path, fmt):
    import pyarrow as pa

    path = tmp_path / f"positions.{fmt}"
    w = TableWriter(path, pa.schema([("ply", pa.int32())]), fmt, table="positions", row_group_size=1)
    w._sink = _FullDisk(w._sink, room=0)
    row = {"ply": [1, 2]}
    with pytest.raises(OutputError) as info:
        w.write({k: v for k, v in row.items()})
        w.close()
    assert str(info.value) == f"cannot write {path}: No space left on device"
    assert info.value.errno == errno.ENOSPC
    assert not path.exists() and not w.partial_path.exists()


def test_parquet_row_group_failing_in_the_background_is_raised_by_the_next_flush(tmp_path):
    # Row groups are written on a background thread: the failure of the second one is raised
    # by the write that flushes the third, and the partial file is gone.
    import pyarrow as pa

    path = tmp_path / "positions.parquet"
    w = TableWriter(path, pa.schema([("ply", pa.int32())]), "parquet", table="positions", row_group_size=1)
    w._sink = _FullDisk(w._sink, room=1)
    w.write({"ply": [1]})
    w.write({"ply": [2]})
    with pytest.raises(OutputError, match="No space left on device"):
        w.write({"ply": [3]})
    assert w.closed and not path.exists() and not w.partial_path.exists()
    w.close()  # idempotent after the failure


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_full_disk_exit_4_no_summary_no_traceback(tmp_path, monkeypatch, fmt):
    """The positions table cannot be written: exit 4, one message naming it, no summary.json,
    every other table whole and readable, the failed one absent."""
    real_init = TableWriter.__init__

    def init(self, path, *args, **kwargs):
        real_init(self, path, *args, **kwargs)
        if Path(path).name.startswith("positions") or Path(path).parent.name == "positions":
            self._sink = _FullDisk(self._sink, room=0)

    monkeypatch.setattr(TableWriter, "__init__", init)
    out = tmp_path / "r"
    result = analyze(MAGNUS, "-o", out, "--format", fmt)
    assert result.exit_code == 4, result.output
    table = out / "positions" / "part-000000.parquet" if fmt == "parquet" else out / "positions.csv"
    assert f"cannot write {table}: No space left on device" in result.output
    assert "Traceback" not in result.output
    assert not (out / "summary.json").exists()
    assert not table.exists() and not (fmt == "parquet" and any((out / "positions").iterdir()))
    assert not any(p.name.endswith(".partial") for p in out.rglob("*"))
    games = pd.read_parquet(out / "games") if fmt == "parquet" else pd.read_csv(out / "games.csv")
    assert len(games) <= 300  # readable, with the games written before the failure


def test_summary_failure_is_exit_4(tmp_path, monkeypatch):
    def full(self, summary):
        raise OutputError(self.summary_path, OSError(errno.ENOSPC, "No space left on device"))

    monkeypatch.setattr(writers.ReportWriter, "write_summary", full)
    result = analyze(MAGNUS, "-o", tmp_path / "r")
    assert result.exit_code == 4 and "summary.json: No space left on device" in result.output


def _small_tmpfs(tmp_path) -> Path:
    mnt = tmp_path / "small"
    mnt.mkdir()
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=128k", "tmpfs", str(mnt)],
                          capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    return mnt


@pytest.mark.parametrize("jobs", [1, 2])
def test_real_full_disk(tmp_path, jobs):
    """On a real 128 KiB filesystem: exit 4, tables readable or absent, no summary.json (with
    --jobs 2, the workers' parts fail: the error comes back to the main process)."""
    mnt = _small_tmpfs(tmp_path)
    try:
        for fmt in ("parquet", "csv"):
            out = mnt / fmt
            done = subprocess.run([*CHESSSCAN, "analyze", str(MAGNUS), "-o", str(out), "--format", fmt,
                                   "--jobs", str(jobs), "--silent"], capture_output=True, text=True)
            assert done.returncode == 4, done.stderr
            assert "No space left on device" in done.stderr and "Traceback" not in done.stderr
            assert not (out / "summary.json").exists()
            for p in out.rglob("*"):
                assert not p.name.endswith(".partial")
                if p.suffix == ".parquet":
                    pq.read_metadata(p)
                elif p.suffix == ".csv":
                    pd.read_csv(p)
            shutil.rmtree(out)
    finally:
        subprocess.run(["umount", str(mnt)])


# --- 6 (issue 19). stdout that cannot be written -----------------------------------------

@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
@pytest.mark.parametrize("fmt", ["json", "text"])
def test_validate_to_dev_full_is_exit_4(fmt):
    bad = SAMPLES / "lichess-jishanshaikh4-variants.pgn"  # holds issues: text output too
    with open("/dev/full", "w") as full:
        done = subprocess.run([*CHESSSCAN, "validate", "--format", fmt, str(bad)], stdout=full,
                              stderr=subprocess.PIPE, text=True)
    assert done.returncode == 4, done.stderr
    assert "cannot write <stdout>: No space left on device" in done.stderr
    assert "Traceback" not in done.stderr


def test_validate_json_is_one_document_streamed():
    bad = SAMPLES / "lichess-jishanshaikh4-variants.pgn"
    result = CliRunner().invoke(main, ["validate", "--format", "json", str(bad)])
    doc = json.loads(result.stdout)
    assert result.exit_code == doc["summary"]["exit_status"]
    assert len(doc["diagnostics"]) == doc["summary"]["errors"] + doc["summary"]["warnings"] > 0


# --- 3. validate stopped -----------------------------------------------------------------

def test_validate_interrupted_exits_130_with_counts(stop_at_second_source):
    bad = SAMPLES / "lichess-jishanshaikh4-variants.pgn"
    result = CliRunner().invoke(main, ["validate", str(bad), str(MAGNUS)])
    assert result.exit_code == 130
    assert "Aborted" not in result.output
    errors, warnings = result.stdout.count(": error["), result.stdout.count(": warning[")
    assert f"interrupted: {errors} errors and {warnings} warnings so far" in result.stderr
    assert warnings > 0
    assert "games of the files finished: " in result.stderr


# --- 2. stopped by a signal: every table readable or absent, no process left ---------------

def _big_input(tmp_path, copies: int = 40) -> Path:
    path = tmp_path / "big.pgn"
    text = MAGNUS.read_bytes()
    path.write_bytes(b"\n".join([text] * copies))
    return path


def _processes_marked(mark: str) -> list[int]:
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit() or int(d.name) == os.getpid():
            continue
        try:
            if f"CHESSSCAN_TEST_MARK={mark}".encode() in (d / "environ").read_bytes().split(b"\0"):
                found.append(int(d.name))
        except OSError:
            pass
    return found


def _catches(pid: int, sig: int) -> bool:
    """Whether process ``pid`` has a handler for ``sig`` (Linux: SigCgt in /proc)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) >> (sig - 1) & 1)
    except OSError:
        pass
    return False


def _reads(pid: int, path: Path) -> bool:
    """Whether process ``pid`` has ``path`` open (Linux: its /proc fd links)."""
    try:
        return any(os.readlink(fd) == str(path) for fd in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False


def _stop_midway(tmp_path, command: list[str], sig: int, out: Path | None,
                 group: bool = True, reading: Path | None = None) -> subprocess.CompletedProcess:
    mark = f"{os.getpid()}-{time.monotonic_ns()}"
    env = dict(os.environ, CHESSSCAN_TEST_MARK=mark)
    # SIGINT at its default in the run: a shell's background job (`cmd &`, as a CI step may
    # start pytest) inherits it ignored, and the run would rightly go on to the end.
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    # Wait until chessscan handles SIGTERM (past Python's start-up) and, for analyze, writes
    # (a table under its partial name), or reads ``reading`` (a stop before the input is open
    # has no counts to print).
    while time.monotonic() < deadline and proc.poll() is None:
        if _catches(proc.pid, signal.SIGTERM) and (out is None or writing(out)) and (
                reading is None or _reads(proc.pid, reading)):
            time.sleep(0.3)
            break
        time.sleep(0.05)
    if group:
        os.killpg(proc.pid, sig)  # as `timeout` and a closed terminal do: the whole group
    else:
        os.kill(proc.pid, sig)  # as a supervisor or Kubernetes does: the main process only
    try:
        stdout, stderr = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        raise AssertionError("the stopped run did not exit within 60 s")
    time.sleep(0.5)
    assert _processes_marked(mark) == [], "a child process outlived the run"
    return subprocess.CompletedProcess(command, proc.returncode, stdout.decode(), stderr.decode())


LINUX_PROC = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads Linux /proc")


@pytest.mark.skipif(not hasattr(signal, "SIGTERM"), reason="no SIGTERM here")
def test_a_stop_while_shared_memory_is_made_comes_after_it():
    """A stop that comes while a slot's shared memory is made or removed is handled once that
    is recorded (engines.stops.stops_held), not between the resource tracker's registration and the
    record: such a segment was left to the tracker, which warned of it as leaked."""
    from chessscan.engines.stops import stops_held

    handled = []

    def record(signum, frame):
        handled.append(signum)

    before = signal.signal(signal.SIGTERM, record)
    try:
        with stops_held():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
            assert handled == []  # held
        assert handled == [signal.SIGTERM]  # then handled, by the handler it had
        assert signal.getsignal(signal.SIGTERM) is record
    finally:
        signal.signal(signal.SIGTERM, before)


@LINUX_PROC
@pytest.mark.parametrize("sig,jobs,group", [(signal.SIGTERM, 2, True), (signal.SIGHUP, 2, True),
                                            (signal.SIGINT, 2, True), (signal.SIGTERM, 1, True),
                                            (signal.SIGTERM, 2, False)],
                         ids=["SIGTERM-jobs2", "SIGHUP-jobs2", "SIGINT-jobs2", "SIGTERM-jobs1",
                              "SIGTERM-jobs2-main-only"])
def test_signal_stops_analyze_cleanly(tmp_path, sig, jobs, group):
    big = _big_input(tmp_path, copies=80)  # 24,000 games: the run outlasts the signal's wait
    out = tmp_path / "r"
    done = _stop_midway(tmp_path, [*CHESSSCAN, "analyze", str(big), "-o", str(out), "--jobs", str(jobs),
                                   "--silent", "--cross-check", "off"], sig, out, group)
    if done.returncode == 0:
        pytest.skip("the run ended before the signal came")
    assert done.returncode == 128 + sig, done.stderr
    assert "Traceback" not in done.stderr and "leaked" not in done.stderr
    assert "no summary.json is written" in done.stderr
    assert not (out / "summary.json").exists()
    names = sorted(p.name for p in out.iterdir())
    assert names == [MANIFEST_NAME, "games", "issues", "perpetuals", "positions"]
    # Whole parts only, in input order: none being written is left, nor one hidden.
    assert not [p for p in out.rglob("*") if p.name.startswith(".") and p.name != MANIFEST_NAME]
    games = pd.read_parquet(out / "games")
    assert len(games) < 80 * 300 and list(games.game_index) == list(range(len(games)))


def test_a_stop_keeps_the_games_analyzed_whole_in_every_table(tmp_path, monkeypatch):
    # --jobs 1 writes positions every 8,192 rows but games every 8,192 games: a stop used to
    # drop the games rows of games whose positions were written. Now every table holds the
    # games analyzed whole, and none of the game the stop cut short.
    import chessscan.engines.local as local

    real = local.analyze_game

    def analyze_game(raw, *args):
        kinds = real(raw, *args)
        if raw.index == 250:  # its rows are in the buffers, its analysis not finished
            raise KeyboardInterrupt
        return kinds

    monkeypatch.setattr(local, "analyze_game", analyze_game)
    out = tmp_path / "r"
    result = analyze(MAGNUS, "-o", out)
    assert result.exit_code == 130, result.output
    games = pd.read_parquet(out / "games")
    positions = pd.read_parquet(out / "positions")
    issues = pd.read_parquet(out / "issues")
    assert list(games.game_index) == list(range(250))
    assert positions.game_index.max() == 249 and len(positions) == games.plies.sum() > 8192
    assert (issues.game_index < 250).all()


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="signals cannot be held here")
def test_a_stop_while_the_tables_open_closes_them_all(tmp_path, monkeypatch):
    # SIGTERM after the first table is open: the stop waits until all are, then every one
    # closes (it used to leave only the tables opened before it, and not say so).
    real_init = TableWriter.__init__

    def init(self, path, *args, **kwargs):
        real_init(self, path, *args, **kwargs)
        if Path(path).parent.name == "positions":
            os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(TableWriter, "__init__", init)
    out = tmp_path / "r"
    result = analyze(MAGNUS, "-o", out)
    assert result.exit_code == 143, result.output
    assert "stopped by SIGTERM: the tables in" in result.output and "no summary.json is written" in result.output
    assert sorted(p.name for p in out.iterdir()) == [MANIFEST_NAME, "disagreements", "games", "issues",
                                                     "perpetuals", "positions"]
    assert all(sorted(p.name for p in (out / t).iterdir()) == ["part-000000.parquet"]
               for t in ("disagreements", "games", "issues", "perpetuals", "positions"))
    assert pd.read_parquet(out / "games").empty


@LINUX_PROC
def test_signal_stops_validate_cleanly(tmp_path):
    big = _big_input(tmp_path, copies=120)  # 2 x 36,000 games: validate outlasts the signal's wait
    done = _stop_midway(tmp_path, [*CHESSSCAN, "validate", str(big), str(big)], signal.SIGTERM, None,
                        reading=big)
    if done.returncode in (0, 1):
        pytest.skip("the run ended before the signal came")
    assert done.returncode == 143, done.stderr
    assert "stopped by SIGTERM:" in done.stderr and "so far" in done.stderr
    assert "Traceback" not in done.stderr


# --- 8. file names that are not UTF-8 ------------------------------------------------------

@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="file names are bytes on Linux")
def test_latin1_file_name(tmp_path):
    name = os.fsdecode(b"Caf\xe9.pgn")
    (tmp_path / name).write_bytes(MAGNUS.read_bytes())
    out = tmp_path / "r"
    done = subprocess.run([*CHESSSCAN, "analyze", name, "-o", str(out), "--jobs", "1", "--silent"],
                          cwd=tmp_path, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert pd.read_parquet(out / "games").source.unique().tolist() == ["Caf\\xe9.pgn"]
    summary = json.loads((out / "summary.json").read_bytes().decode("utf-8"))
    assert summary["sources"] == ["Caf\\xe9.pgn"]
    done = subprocess.run([*CHESSSCAN, "validate", "--format", "json", name, "missing\xe9.pgn"],
                          cwd=tmp_path, capture_output=True)
    assert done.returncode == 2 and b"Traceback" not in done.stderr
    done = subprocess.run([*CHESSSCAN, "validate", "--format", "json", name], cwd=tmp_path,
                          capture_output=True)
    doc = json.loads(done.stdout.decode("utf-8"))  # strict UTF-8
    assert doc["summary"]["sources"] == ["Caf\\xe9.pgn"] and done.returncode == 0


# --- 9. a pool that cannot start -----------------------------------------------------------

def test_jobs_2_from_a_script_on_stdin_does_not_hang(tmp_path):
    big = _big_input(tmp_path, copies=4)
    script = (f"from chessscan.engines.local import run, MemorySink\n"
              f"from chessscan.engines.parallel import run_parallel\n"
              f"t = run_parallel([{str(big)!r}], MemorySink(), jobs=2, batch_bytes=200_000)\n"
              f"print(t.as_dict()['games_read'])\n")
    done = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1200"
    assert done.stderr == ""  # the workers ran (they never run the script itself)


# --- issue 19, item 7: a plain file truncated while it is read -------------------------------

def test_file_that_shrinks_while_read_is_reported(tmp_path):
    from chessscan.readers.pgn import read_games
    from chessscan.readers.sources import open_source

    text = MAGNUS.read_bytes()
    path = tmp_path / "shrinking.pgn"
    path.write_bytes(text * 10)
    games = []
    with open_source(path) as stream:
        for game in read_games(stream, source="shrinking.pgn"):
            games.append(game)
            if len(games) == 50:
                os.truncate(path, len(text) * 2)  # another program truncates it
    codes = [issue.code for g in games for issue in g.issues]
    assert codes.count("truncated-input") == 1
    issue = next(i for g in games for i in g.issues if i.code == "truncated-input")
    assert issue.message.startswith(f"{path} shrank while it was read:")
    assert f"of the {len(text) * 10:,} it held when opened" in issue.message
    assert sum(1 for g in games if not g.issues) == 600


# --- issue 19, item 9: CSV formula injection -------------------------------------------------

def test_csv_neutralises_formulas_parquet_keeps_values(tmp_path):
    pgn = tmp_path / "f.pgn"
    pgn.write_text('[Event "=HYPERLINK(\\"http://x\\")"]\n[White "@SUM(A1)"]\n[Black "-1+2"]\n'
                   '[Result "*"]\n\n1. e4 *\n')
    assert analyze(pgn, "-o", tmp_path / "c", "--format", "csv").exit_code == 0
    assert analyze(pgn, "-o", tmp_path / "p").exit_code == 0
    csv = pd.read_csv(tmp_path / "c" / "games.csv")
    assert csv.loc[0, ["event", "white", "black"]].tolist() == [
        "'=HYPERLINK(\"http://x\")", "'@SUM(A1)", "'-1+2"]
    par = pd.read_parquet(tmp_path / "p" / "games")
    assert par.loc[0, ["event", "white", "black"]].tolist() == ['=HYPERLINK("http://x")', "@SUM(A1)", "-1+2"]


# --- outputs that are not regular files; stdout of every command -----------------------------

def test_page_and_baseline_write_through_a_symlink_never_replace_it(tmp_path):
    from chessscan.reports.writers import replace_file

    real = tmp_path / "real.html"
    real.write_text("old")
    link = tmp_path / "link.html"
    link.symlink_to(real)
    replace_file(link, b"new")
    assert link.is_symlink() and real.read_text() == "new"
    plain = tmp_path / "plain.json"
    replace_file(plain, b"{}")
    assert plain.read_bytes() == b"{}" and sorted(p.name for p in tmp_path.iterdir()) == [
        "link.html", "plain.json", "real.html"]
    if os.path.exists("/dev/full"):
        with pytest.raises(OutputError, match="cannot write /dev/full: No space left on device"):
            replace_file("/dev/full", b"x" * 10)
        assert not Path("/dev/full").is_file()  # still the device


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
@pytest.mark.parametrize("args", [["perft", "startpos", "3"], ["--version"], ["validate", "-h"],
                                  ["validate", str(MAGNUS), "--clean-output", "/dev/full"]])
def test_every_command_to_a_full_disk_is_exit_4(args):
    with open("/dev/full", "w") as full:
        done = subprocess.run([*CHESSSCAN, *args], stdout=full, stderr=subprocess.PIPE, text=True)
    assert done.returncode == 4, done.stderr
    assert "No space left on device" in done.stderr and "Traceback" not in done.stderr
    assert Path("/dev/full").is_char_device()


@LINUX_PROC
def test_closed_pipe_is_a_quiet_141_with_no_process_left(tmp_path):
    """`validate --jobs 2 | head -1`: exit 141 like a process ended by SIGPIPE, nothing on
    stderr, and no worker, forkserver or resource tracker left behind."""
    noisy = tmp_path / "noisy.pgn"
    noisy.write_bytes(b"\n".join([(SAMPLES / "lichess-jishanshaikh4-variants.pgn").read_bytes()] * 60))
    mark = f"pipe-{os.getpid()}-{time.monotonic_ns()}"
    proc = subprocess.Popen([*CHESSSCAN, "validate", str(noisy), "--jobs", "2"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=dict(os.environ, CHESSSCAN_TEST_MARK=mark))
    assert proc.stdout.readline().startswith(str(noisy).encode())
    proc.stdout.close()  # the reader goes away, as `head -1` does
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert stderr == ""
    time.sleep(1.5)
    assert _processes_marked(mark) == []


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="file names are bytes on Linux")
@pytest.mark.parametrize("fmt,jobs", [("parquet", 1), ("csv", 1), ("parquet", 2)])
def test_latin1_output_folder(tmp_path, fmt, jobs):
    # --jobs 2: the parts the workers wrote are checked by their exact names before summary.json
    out = os.fsdecode(b"out\xe9")
    done = subprocess.run([*CHESSSCAN, "analyze", str(MAGNUS), "-o", out, "--jobs", str(jobs), "--silent",
                           "--format", fmt], cwd=tmp_path, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert b"tables written to out\\xe9/" in done.stderr
    tables = sorted((tmp_path / out / "games").glob("part-*.parquet")) if fmt == "parquet" else [
        tmp_path / out / "games.csv"]
    games = []
    for path in tables:
        with open(path, "rb") as f:
            games.append(pd.read_parquet(f) if fmt == "parquet" else pd.read_csv(f))
    assert list(pd.concat(games).game_index) == list(range(300))
