"""What a run writes is its own: one run per output (the lock), new files only (never through
a planted link), names that are not UTF-8 on every option that takes a path, closed standard
streams, and nothing read printed raw on a terminal or a CI log."""

from __future__ import annotations

import csv
import errno
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
from click.testing import CliRunner

import chessscan
from chessscan.cli import main
from chessscan.reports import files
from chessscan.reports.files import LOCK_NAME, OutputBusy, OutputLock, lock_path_for
from conftest import SAMPLES, writing

MAGNUS = SAMPLES / "lichess-magnus-300.pgn"
VARIANTS = SAMPLES / "lichess-jishanshaikh4-variants.pgn"
CHESSSCAN = [sys.executable, "-m", "chessscan"]
LINUX = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="file names are bytes and "
                           "/proc is read on Linux")
ILLEGAL = (b'[Event "Illegal"]\n[White "C"]\n[Black "D"]\n[Result "*"]\n\n1. e4 e5 2. Ke3 *\n\n'
           b'[Event "Fine"]\n[White "E"]\n[Black "F"]\n[Result "*"]\n\n1. d4 d5 *\n')


def cli(*args, **kwargs):
    return CliRunner().invoke(main, [str(a) for a in args], **kwargs)


def big_input(folder: Path, copies: int = 40) -> Path:
    """~16,000 games, some with issues (variants, an illegal move): a second or two of work."""
    path = folder / "big.pgn"
    path.write_bytes(b"\n".join([MAGNUS.read_bytes(), VARIANTS.read_bytes(), ILLEGAL] * copies))
    return path


# --- one run per output ----------------------------------------------------------------------

def test_a_lock_refuses_a_second_holder_and_names_the_first(tmp_path):
    path = lock_path_for(tmp_path, folder=True)
    assert path == os.path.join(os.path.realpath(tmp_path), LOCK_NAME)
    first = OutputLock(path, "out", "chessscan analyze a.pgn -o out").acquire()
    owner = json.loads(Path(path).read_text())
    assert owner["pid"] == os.getpid() and owner["command"] == "chessscan analyze a.pgn -o out"
    # (flock locks belong to an open file: a second opening conflicts, in one process too)
    with pytest.raises(OutputBusy) as refused:
        OutputLock(path, "out").acquire()
    assert str(refused.value).startswith(f"out is being written by another chessscan run (pid {os.getpid()} on ")
    assert str(refused.value).endswith(", chessscan analyze a.pgn -o out)")
    first.release()
    assert not os.path.exists(path)  # nothing left behind
    with OutputLock(path, "out") as second:
        assert second.held
    assert not os.path.exists(path)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_keeps_the_lock_its_owners(tmp_path):
    """A worker forked from the run closes its copy of the lock; the run still holds it."""
    path = lock_path_for(tmp_path / "clean.pgn")
    assert os.path.basename(path) == ".clean.pgn.chessscan-lock"
    lock = OutputLock(path, "clean.pgn").acquire()
    pid = os.fork()
    if pid == 0:  # the child: its copy was closed at fork; a release is no release
        lock.release()
        os._exit(0 if not lock.held else 1)
    assert os.waitpid(pid, 0)[1] == 0
    with pytest.raises(OutputBusy):
        OutputLock(path, "clean.pgn").acquire()
    assert os.path.exists(path)
    lock.release()


def test_a_killed_run_never_blocks_the_next(tmp_path):
    path = lock_path_for(tmp_path, folder=True)
    script = ("import os, signal; from chessscan.reports.files import OutputLock\n"
              f"OutputLock({path!r}, 'out', 'x').acquire(); os.kill(os.getpid(), signal.SIGKILL)\n")
    done = subprocess.run([sys.executable, "-c", script])
    assert done.returncode == -signal.SIGKILL
    assert json.loads(Path(path).read_text())["command"] == "x"  # left, stale
    with OutputLock(path, "out") as lock:
        assert lock.held and json.loads(Path(path).read_text())["pid"] == os.getpid()


def test_a_link_or_hard_link_at_the_lock_name_is_refused(tmp_path):
    victim = tmp_path / "notes.txt"
    victim.write_text("mine")
    out = tmp_path / "out"
    out.mkdir()
    (out / LOCK_NAME).symlink_to(victim)
    with pytest.raises(OSError):
        OutputLock(lock_path_for(out, folder=True), "out").acquire()
    (out / LOCK_NAME).unlink()
    os.link(victim, out / LOCK_NAME)
    with pytest.raises(OSError, match="not a chessscan lock file"):
        OutputLock(lock_path_for(out, folder=True), "out").acquire()
    assert victim.read_text() == "mine"


def _start_and_pause(command: list[str], ready, timeout: float = 60) -> subprocess.Popen:
    """Start ``command`` in its own process group and stop it (SIGSTOP, the whole group) once
    ``ready()`` holds: it then holds its locks for as long as the test needs."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + timeout
    while not ready():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"the first run ended or never got going: {proc.communicate()}")
        time.sleep(0.005)
    os.killpg(proc.pid, signal.SIGSTOP)
    return proc


def _resume(proc: subprocess.Popen) -> tuple[int, str]:
    os.killpg(proc.pid, signal.SIGCONT)
    _, stderr = proc.communicate(timeout=120)
    return proc.returncode, stderr.decode()


def _refused_by(result, pid: int, output: str) -> None:
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"Error: {output} is being written by another chessscan run (pid {pid} on ")
    assert lines[0].endswith("refused, nothing written; wait for it to end or choose another output")


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_second_analyze_into_the_folder_is_refused(tmp_path, monkeypatch, jobs):
    monkeypatch.chdir(tmp_path)
    big = big_input(tmp_path)
    out = tmp_path / "out"
    first = _start_and_pause(
        [*CHESSSCAN, "analyze", "big.pgn", "-o", "out", "--silent", "--jobs", str(jobs), "--cross-check", "off"],
        lambda: (out / LOCK_NAME).exists() and writing(out))
    try:
        _refused_by(cli("analyze", MAGNUS, "-o", "out", "--silent", "--jobs", "1"), first.pid, "out")
        _refused_by(cli("report", "out"), first.pid, "out")  # nor read while it is written
        assert "analyze big.pgn -o out --silent" in cli("analyze", MAGNUS, "-o", "out").stderr
    finally:
        status, stderr = _resume(first)
    assert status == 0, stderr
    assert stderr.splitlines()[-1] == "tables written to out/"
    games = pd.read_parquet(out / "games")
    assert len(games) == 40 * (300 + 108 + 2) and set(games.source) == {"big.pgn"}
    assert json.loads((out / "summary.json").read_text())["sources"] == ["big.pgn"]
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == [".chessscan-manifest.json"]
    # Free again: the next run goes ahead (and finds a folder of its own kind).
    assert cli("analyze", MAGNUS, "-o", "out", "--silent", "--jobs", "1").exit_code == 0
    assert len(pd.read_parquet(out / "games")) == 300


def test_a_second_split_or_baseline_into_a_file_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    big_input(tmp_path)
    outputs = ["--clean-output", "cc.pgn", "--rejects-output", "rr.pgn", "--write-baseline", "bb.json"]
    first = _start_and_pause(
        [*CHESSSCAN, "validate", "big.pgn", *outputs, "--jobs", "1"],
        lambda: all(os.path.exists(lock_path_for(n)) for n in ("cc.pgn", "rr.pgn", "rr.pgn.issues.csv",
                                                               "bb.json")) and files.temporaries_of("rr.pgn"))
    try:
        for option, name in [("--clean-output", "cc.pgn"), ("--rejects-output", "rr.pgn"),
                             ("--write-baseline", "bb.json"), ("--clean-output", "rr.pgn.issues.csv")]:
            result = cli("validate", MAGNUS, option, name)
            assert result.exit_code == 2 and f"{name} is being written by another chessscan run (pid {first.pid}" \
                in result.stderr, result.output
            assert len(result.stderr.splitlines()) == 1
    finally:
        status, stderr = _resume(first)
    assert status == 0, stderr  # (--write-baseline: what was found is now known)
    # The first run's files are whole: those of the same run made alone.
    assert cli("validate", "big.pgn", "--clean-output", "c2.pgn", "--rejects-output", "r2.pgn",
               "--write-baseline", "b2.json").exit_code == 0
    for mine, again in [("cc.pgn", "c2.pgn"), ("rr.pgn", "r2.pgn"), ("bb.json", "b2.json")]:
        assert Path(mine).read_bytes() == Path(again).read_bytes()
    assert Path("rr.pgn.issues.csv").read_text().replace("r2.pgn", "rr.pgn") == \
        Path("r2.pgn.issues.csv").read_text().replace("r2.pgn", "rr.pgn")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith((".partial", "-lock"))]


# --- new files only: links planted at a temporary or final name are never followed -------------

@pytest.fixture
def victims(tmp_path):
    """Files a link may point at; checked untouched at the end of the test."""
    made = []

    def victim(name: str) -> Path:
        path = tmp_path / "victims" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"{name}: mine")
        made.append(path)
        return path

    yield victim
    for path in made:
        assert path.read_text() == f"{path.name}: mine"


def test_links_at_the_temporary_names_of_earlier_versions_are_never_followed(tmp_path, monkeypatch, victims):
    """The names of earlier versions could be guessed (NAME.partial, NAME.partial<pid>); links
    planted there point at files of the user, which stay as they are."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    assert cli("analyze", MAGNUS, "-o", out, "--silent", "--jobs", "1").exit_code == 0
    for name in (".chessscan-manifest.json.partial", "games/part-000000.parquet.partial", "summary.json.partial",
                 "run.json.partial"):
        (out / name).symlink_to(victims(name.replace("/", "-")))
    assert cli("analyze", MAGNUS, "-o", out, "--silent", "--jobs", "1").exit_code == 0
    assert not [p for p in out.rglob("*") if p.is_symlink()]  # the links removed, as links
    Path("in.pgn").write_bytes(ILLEGAL)
    pid = os.getpid()
    for name in ("cc.pgn.partial", "rr.pgn.partial", "rr.pgn.issues.csv.partial", f"bb.json.partial{pid}"):
        Path(name).symlink_to(victims(name))
    result = cli("validate", "in.pgn", "--clean-output", "cc.pgn", "--rejects-output", "rr.pgn",
                 "--write-baseline", "bb.json")
    assert result.exit_code == 0, result.output
    assert Path("rr.pgn").read_bytes().startswith(b'[Event "Illegal"]')


def test_links_at_guessed_temporary_names_are_never_followed(tmp_path, monkeypatch, victims):
    """Were a temporary name known the moment it is drawn (here a link is planted at the
    first name drawn for every file, as by an attacker who won that race), the file is made
    under another name: every link's target is untouched and every output whole."""
    pytest.importorskip("matplotlib")
    monkeypatch.chdir(tmp_path)
    drawn = files.temporary_path
    planted = []

    def temporary_path(path, hidden=False):
        name = drawn(path, hidden)
        if os.path.basename(path) not in planted:
            planted.append(os.path.basename(path))
            os.symlink(victims(os.path.basename(path)), name)
        return name

    monkeypatch.setattr(files, "temporary_path", temporary_path)
    out = tmp_path / "out"
    result = cli("analyze", MAGNUS, "-o", out, "--silent", "--jobs", "1", "--html")
    assert result.exit_code == 0, result.output
    tables = ["positions", "games", "perpetuals", "issues", "disagreements"]
    names = [".chessscan-manifest.json", "part-000000.parquet", "summary.json", "run.json", "report.html"]
    assert sorted(planted) == sorted(names)
    for name in [n for n in names if n.endswith(".json") or n.endswith(".html")] + [
            f"{t}/part-000000.parquet" for t in tables]:
        assert (out / name).is_file() and not (out / name).is_symlink()
    assert len(pd.read_parquet(out / "games")) == 300
    Path("in.pgn").write_bytes(ILLEGAL)
    result = cli("validate", "in.pgn", "--clean-output", "cc.pgn", "--rejects-output", "rr.pgn.gz",
                 "--write-baseline", "bb.json")
    assert result.exit_code == 0, result.output
    assert sorted(planted[len(names):]) == ["bb.json", "cc.pgn", "rr.pgn.gz", "rr.pgn.gz.issues.csv"]
    assert Path("cc.pgn").read_bytes().startswith(b'[Event "Fine"]')
    assert json.loads(Path("bb.json").read_text())["entries"][0]["code"] == "illegal-move"


def test_links_planted_at_the_final_names_meanwhile_are_replaced(tmp_path, monkeypatch, victims):
    """A link put at summary.json, run.json or report.html while the run goes (after the
    folder was checked) is replaced by the file, never written through."""
    pytest.importorskip("matplotlib")
    from chessscan.reports import page, writers

    out = tmp_path / "out"
    write_summary, render = writers.ReportWriter.write_summary, page.render_report

    def plant(name):
        if not (out / name).is_symlink():
            (out / name).symlink_to(victims(name))

    def summary_then(self, summary):
        plant("summary.json")
        plant("run.json")
        return write_summary(self, summary)

    def render_then(tables, **kwargs):
        plant("report.html")
        return render(tables, **kwargs)

    monkeypatch.setattr(writers.ReportWriter, "write_summary", summary_then)
    monkeypatch.setattr(page, "render_report", render_then)
    result = cli("analyze", MAGNUS, "-o", out, "--silent", "--jobs", "1", "--html")
    assert result.exit_code == 0, result.output
    for name in ("summary.json", "run.json", "report.html"):
        assert (out / name).is_file() and not (out / name).is_symlink()
    assert json.loads((out / "summary.json").read_text())["games_read"] == 300


def test_create_makes_only_new_files(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("mine")
    (tmp_path / "link").symlink_to(victim)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    for name in ("link", "dangling", "victim"):
        with pytest.raises(FileExistsError):
            files.create(tmp_path / name)
    assert victim.read_text() == "mine" and not (tmp_path / "nowhere").exists()
    tmp, f = files.create_temporary(tmp_path / "x.json")
    with f:
        f.write(b"{}")
    assert re.fullmatch(r"x\.json\.[0-9a-f]{16}\.partial", Path(tmp).name)
    assert files.temporary_of(Path(tmp).name) == "x.json" and files.temporary_of("x.json.partial") == "x.json"
    assert files.temporary_of("x.json") is None and files.temporary_of("x.json.abc.partial") == "x.json.abc"
    files.commit(tmp, tmp_path / "x.json")
    assert (tmp_path / "x.json").read_bytes() == b"{}"


# --- names that are not UTF-8, through every option that takes a path --------------------------

@LINUX
def test_names_that_are_not_utf8_on_every_path_option(tmp_path):
    def run(*args):
        done = subprocess.run([*CHESSSCAN, *args], cwd=tmp_path, capture_output=True)
        assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
        return done

    e = os.fsdecode(b"\xe9")
    (tmp_path / f"in{e}.pgn").write_bytes(ILLEGAL + MAGNUS.read_bytes())
    (tmp_path / "in.pgn").write_bytes(ILLEGAL + MAGNUS.read_bytes())
    done = run("validate", f"in{e}.pgn", "--clean-output", f"c{e}.pgn", "--rejects-output", f"r{e}.pgn",
               "--write-baseline", f"b{e}.json")
    assert done.returncode == 0
    lines = done.stderr.splitlines()
    assert b"split: 301 clean -> c\\xe9.pgn, 1 rejected -> r\\xe9.pgn (issues: r\\xe9.pgn.issues.csv)" in lines
    assert b"baseline written to b\\xe9.json: 1 entries" in lines
    ref = run("validate", "in.pgn", "--clean-output", "c.pgn", "--rejects-output", "r.pgn",
              "--write-baseline", "b.json")
    assert ref.returncode == 0
    for mine, plain in [(f"c{e}.pgn", "c.pgn"), (f"r{e}.pgn", "r.pgn"), (f"b{e}.json", "b.json")]:
        assert (tmp_path / mine).read_bytes() == (tmp_path / plain).read_bytes()
    sidecar = list(csv.DictReader((tmp_path / f"r{e}.pgn.issues.csv").open(encoding="utf-8")))
    assert [(r["code"], r["source"]) for r in sidecar] == [("illegal-move", "in\\xe9.pgn")]
    done = run("validate", f"in{e}.pgn", "--baseline", f"b{e}.json")
    assert done.returncode == 0 and done.stderr.splitlines()[0] == b"baseline b\\xe9.json: 1 known issues not shown, 0 fixed"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
    pytest.importorskip("matplotlib")
    done = run("analyze", "in.pgn", "-o", f"o{e}", "--html", "--silent", "--jobs", "1")
    assert done.returncode == 0 and done.stderr.splitlines()[-1].startswith(b"report written to o\\xe9/report.html")
    done = run("report", f"o{e}", "-o", f"p{e}.html")
    assert done.returncode == 0 and done.stderr.startswith(b"report written to p\\xe9.html")
    page = (tmp_path / f"p{e}.html").read_bytes().decode("utf-8")  # valid UTF-8
    assert "<title>chessscan report: o\\xe9</title>" in page
    done = run("report", f"o{e}")
    assert done.returncode == 0 and (tmp_path / f"o{e}" / "report.html").is_file()


# --- closed standard streams ---------------------------------------------------------------------

def _closed(fd: int, *args: str, cwd: Path, how: str = "closed") -> subprocess.CompletedProcess:
    """Run chessscan with descriptor ``fd`` closed (``>&-``), or ``how="read-only"`` open for
    reading only (what a shell script run so, as a version manager's shim, leaves there)."""
    def prepare():
        if how == "closed":
            os.close(fd)
        else:
            os.dup2(os.open(os.devnull, os.O_RDONLY), fd)

    return subprocess.run([*CHESSSCAN, *args], cwd=cwd, preexec_fn=prepare,
                          stdout=subprocess.PIPE if fd != 1 else subprocess.DEVNULL,
                          stderr=subprocess.PIPE if fd != 2 else subprocess.DEVNULL, timeout=120)


@pytest.mark.parametrize("how", ["closed", "read-only"])
def test_closed_stdout(tmp_path, how):
    # validate's diagnostics would go nowhere: refused at once, exit 4, one line.
    done = _closed(1, "validate", str(VARIANTS), cwd=tmp_path, how=how)
    assert done.returncode == 4 and done.stderr == b"chessscan: cannot write <stdout>: it is closed\n"
    done = _closed(1, "perft", "startpos", "2", cwd=tmp_path, how=how)
    assert done.returncode == 4 and done.stderr == b"chessscan: cannot write <stdout>: it is closed\n"
    # analyze writes nothing there: the run is done as ever (no table lands on descriptor 1).
    done = _closed(1, "analyze", str(MAGNUS), "-o", "out", "--silent", "--jobs", "1", cwd=tmp_path, how=how)
    assert done.returncode == 0 and done.stderr.splitlines()[-1] == b"tables written to out/"
    assert len(pd.read_parquet(tmp_path / "out" / "games")) == 300


@pytest.mark.parametrize("how", ["closed", "read-only"])
def test_closed_stderr(tmp_path, how):
    # Nothing can be said: the run is done, and its status tells (no --silent needed).
    done = _closed(2, "analyze", str(MAGNUS), "-o", "out", "--jobs", "1", cwd=tmp_path, how=how)
    assert done.returncode == 0 and done.stdout == b""
    assert len(pd.read_parquet(tmp_path / "out" / "games")) == 300
    assert (tmp_path / "out" / "summary.json").is_file()
    done = _closed(2, "validate", str(VARIANTS), "--fail-on", "warning", cwd=tmp_path, how=how)
    assert done.returncode == 1 and len(done.stdout.splitlines()) == 8  # the 8 warnings, on stdout


# --- nothing read printed raw: terminals and CI logs ---------------------------------------------

PAYLOADS = ["a\n::error::injected.pgn", "b\x1b]0;retitled\x07.pgn", "c\x1b[2J.pgn", "::add-mask::d.pgn",
            "e\u202egnp.pgn"]


def _clean_log(text: str) -> None:
    """No control character but line ends, no line a workflow command, no bidi override."""
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", text), repr(text)
    for line in text.splitlines():
        assert not line.startswith("::"), repr(line)


def test_file_names_are_printed_escaped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    for name in PAYLOADS:
        (data / name).write_bytes(ILLEGAL)
    # given directly too (a glob in a dataset's repository does that), twice, and one missing
    given = [f"data/{n}" for n in PAYLOADS]
    result = cli("analyze", "data", *given[:1], *given[:1], "::error::missing.pgn", "-o", "out", "--silent",
                 "--jobs", "1")
    assert result.exit_code == 2  # (the missing input)
    _clean_log(result.stderr)
    assert "data/a\\x0a::error::injected.pgn" in result.stderr and "b\\x1b]0;retitled\\x07.pgn" in result.stderr
    assert "\\x3a:error::missing.pgn: error[unreadable-input]" in result.stderr
    result = cli("validate", *given, "--clean-output", "data/c\x1b[31m.pgn")
    assert result.exit_code == 1
    _clean_log(result.stdout + result.stderr)
    assert "split: 5 clean -> data/c\\x1b[31m.pgn, 5 rejected" in result.stderr
    monkeypatch.chdir(data)  # a name at the start of a diagnostic
    result = cli("validate", *PAYLOADS)
    _clean_log(result.stdout + result.stderr)
    assert "\\x3a:add-mask::d.pgn:6:13: error[illegal-move]" in result.stdout


def test_baseline_fields_are_printed_escaped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("in.pgn").write_bytes(ILLEGAL)
    crafted = {"game": "0" * 20 + "\n::add-mask::secret", "code": "x\x1b]8;;http://e\x07y", "ply": None,
               "count": 1, "severity": "error\n::warning::w", "message": "\n::error::pwned\x1b[2J",
               "players": "\x1b[31mred - blue\u202e"}
    Path("base.json").write_text(json.dumps({"format": "chessscan-baseline", "version": 1,
                                             "entries": [crafted]}))
    result = cli("validate", "in.pgn", "--baseline", "base.json")
    assert result.exit_code == 1  # the illegal move is new
    _clean_log(result.stderr)
    fixed = [line for line in result.stderr.splitlines() if line.startswith("fixed:")]
    assert fixed == ["fixed: error\\x0a::warning::w[x\\x1b]8;;http://e\\x07y] in game 00000000000000000000"
                     "\\x0a::add-mask::secret \"\\x1b[31mred - blue\\u202e\": \\x0a::error::pwned\\x1b[2J"]


def test_split_sidecar_has_the_formula_guard(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("=cmd.pgn").write_bytes(ILLEGAL)
    Path("-x.pgn").write_bytes(ILLEGAL)
    result = cli("validate", "--rejects-output", "rr.pgn", "--", "=cmd.pgn", "-x.pgn")
    assert result.exit_code == 1
    rows = list(csv.DictReader(open("rr.pgn.issues.csv", encoding="utf-8")))
    assert [r["source"] for r in rows] == ["'=cmd.pgn", "'-x.pgn"]
    for row in rows:
        for value in row.values():
            assert not re.match(r"[=+\-@\t\r]", value), row


# --- the smaller ones ---------------------------------------------------------------------------

def test_run_json_on_a_full_disk_is_exit_4_and_absent(tmp_path, monkeypatch):
    real = files.create

    class Full:
        def __init__(self, f):
            self.f = f

        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

    def create(path, mode="wb", **kwargs):
        f = real(path, mode, **kwargs)
        return Full(f) if os.path.basename(path).startswith("run.json.") else f

    monkeypatch.setattr(files, "create", create)
    out = tmp_path / "out"
    result = cli("analyze", MAGNUS, "-o", out, "--silent", "--jobs", "1")
    assert result.exit_code == 4
    assert result.stderr.splitlines()[-1] == (f"Error: cannot write {out}/run.json: No space left on device "
                                              "(the tables and summary.json are complete)")
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(("run", "summary"))) == ["summary.json"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
@pytest.mark.parametrize("fail_on,status", [("error", 0), ("warning", 4)])
def test_rejects_to_a_device_makes_no_file_beside_it(fail_on, status):
    """No rejects (nothing written to the device), then 8 (the device full): neither makes a
    file in /dev (as root, a .issues.csv and its .partial were made there)."""
    done = subprocess.run([*CHESSSCAN, "validate", str(VARIANTS), "--fail-on", fail_on, "--rejects-output",
                           "/dev/full"], capture_output=True, text=True)
    assert done.returncode == status, done.stderr
    if status == 4:
        assert done.stderr.splitlines()[-1] == "chessscan: cannot write /dev/full: No space left on device"
    assert not [n for n in os.listdir("/dev") if n.startswith(("full.", ".full"))]


@pytest.mark.parametrize("args", [["analyze", "x.pgn", "--bogus"], ["validate"], ["nosuch"],
                                  ["validate", "x.pgn", "--fail-on", "x"], ["--bogus"]])
def test_usage_errors_are_one_line(args):
    result = cli(*args)
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("Error: ")
    assert re.search(r"\(see '\S+( \w+)? -h'\)$", result.stderr.strip())


def test_names_that_are_not_utf8_in_the_duplicate_search_and_table_inputs(tmp_path):
    """A Latin-1 output folder with --duplicates --contained-games, `chessscan duplicates` of
    such reports, and a Parquet game table with such a name: as with UTF-8 names (DuckDB and
    Arrow take UTF-8 names only: the files are opened by their bytes, the spill goes to the
    system's temporary folder, names are written with \\xNN)."""
    def run(*args):
        done = subprocess.run([*CHESSSCAN, *args], cwd=tmp_path, capture_output=True)
        assert b"Traceback" not in done.stderr, done.stderr.decode(errors="replace")
        return done

    e = os.fsdecode(b"\xe9")
    both = ("analyze", str(MAGNUS), str(MAGNUS), "--duplicates", "--contained-games", "--jobs", "1", "--silent")
    assert run(*both, "-o", f"o{e}").returncode == 0
    assert run(*both, "-o", "o").returncode == 0
    mine, plain = chessscan.read_report(tmp_path / f"o{e}"), chessscan.read_report(tmp_path / "o")
    assert len(mine.duplicates) == 300 and mine.summary["duplicates"] == plain.summary["duplicates"]
    pd.testing.assert_frame_equal(mine.duplicates, plain.duplicates)
    done = run("duplicates", f"o{e}", "-o", "shared.csv")
    assert done.returncode == 0, done.stderr
    shared = pd.read_csv(tmp_path / "shared.csv")
    assert len(shared) == 600 and set(shared.report) == {"o\\xe9"}
    done = run("duplicates", f"o{e}", f"./o{e}")  # the same report twice
    assert done.returncode == 2 and b"is the report o\\xe9 again: give each report once" in done.stderr
    (tmp_path / f"t{e}.parquet").write_bytes((SAMPLES / "lichess-magnus-300.parquet").read_bytes())
    for jobs in ("1", "2"):
        done = run("analyze", f"t{e}.parquet", "-o", f"t{jobs}", "--jobs", jobs, "--silent")
        assert done.returncode == 0, done.stderr
        games = chessscan.read_report(tmp_path / f"t{jobs}").games
        assert len(games) == 300 and set(games.source) == {"t\\xe9.parquet"}


def test_a_file_url_output_is_the_folder_it_names(tmp_path):
    out = tmp_path / "by url"
    done = subprocess.run([*CHESSSCAN, "analyze", str(MAGNUS), "-o", f"file://{out}", "--jobs", "1", "--silent"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[-1] == f"tables written to {out}/"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["by url"]  # (no folder "file:" here)
    assert len(chessscan.read_report(f"file://{out}").games) == 300


def test_duplicates_says_it_reads_local_folders_only():
    for args, want in [(("duplicates", "s3://chess/r"), "Error: Invalid value for REPORT_DIR: s3://chess/r: "
                        "chessscan duplicates reads local report folders: copy the report there first")]:
        done = subprocess.run([*CHESSSCAN, *args], capture_output=True, text=True)
        assert done.returncode == 2 and done.stderr.startswith(want), done.stderr


def test_an_input_folder_as_the_output_is_refused(tmp_path):
    """``analyze DIR -o DIR`` would make DIR a report folder, which the next run skips as an
    input (reading no game and replacing the report by an empty one): a usage error, exit 2,
    one line, nothing written; a folder inside the input folder is fine, run after run."""
    games = tmp_path / "games"
    games.mkdir()
    (games / "m.pgn").write_bytes(MAGNUS.read_bytes())
    before = sorted(p.name for p in games.iterdir())
    for out in (games, tmp_path / "link-to-games"):
        if out.name == "link-to-games":
            out.symlink_to(games)
        res = cli("analyze", games, "-o", out, "--silent")
        assert res.exit_code == 2, res.output
        assert res.output.count("\n") == 1 and "is an input folder" in res.output, res.output
        assert sorted(p.name for p in games.iterdir()) == before  # nothing written, no lock left
    for _ in range(2):  # inside the input folder: the second run still reads the 300 games
        res = cli("analyze", games, "-o", games / "report", "--silent")
        assert res.exit_code == 0, res.output
        assert json.loads((games / "report" / "summary.json").read_text())["games_read"] == 300
