"""Shared fixtures: where the shipped samples and the optional ../shared data live."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "data" / "samples"
SHARED = REPO.parent / "shared" / "data"


def shared_skip_reason(path: Path) -> str:
    """Why a test that reads ``path`` (under ../shared/data) is skipped, in plain words."""
    return (f"needs the large shared data set of real corpora, which is absent here ({path} not "
            "found); the tests on the shipped samples in data/samples still run")


def shared_path(*parts: str) -> Path:
    """A file under ../shared/data, or skip the test when that folder is absent (a user's
    clone has none)."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(shared_skip_reason(path))
    return path


# The core, perft and analysis tests: CI runs them a second time against the uncompiled core
# (CHESSSCAN_PURE=1 python -m pytest -m "core and not slow"; see the README's test command).
CORE_TEST_MODULES = frozenset({
    "test_movegen", "test_fen", "test_check_kinds", "test_rules", "test_hotloop", "test_analyze",
    "test_crosscheck", "test_epd_analysis", "test_perft_cli", "test_repetition", "test_rows", "test_annotations",
})


def pytest_collection_modifyitems(config, items) -> None:
    for item in items:
        if item.module.__name__ in CORE_TEST_MODULES:
            item.add_marker(pytest.mark.core)


@pytest.fixture(autouse=True)
def _keep_signal_handlers():
    """The CLI installs SIGTERM/SIGHUP handlers and ignores signals while it stops; under
    CliRunner that would outlive the test, so every test gets the handlers back."""
    import signal

    names = [n for n in ("SIGINT", "SIGTERM", "SIGHUP", "SIGPIPE") if hasattr(signal, n)]
    saved = {n: signal.getsignal(getattr(signal, n)) for n in names}
    yield
    for n, handler in saved.items():
        if handler is not None:
            signal.signal(getattr(signal, n), handler)


@pytest.fixture
def stop_at_second_source(monkeypatch):
    """``chessscan.engines.local.run`` raises KeyboardInterrupt when it is called for the
    second time (``validate`` runs it once per source): a Ctrl-C between two files."""
    from chessscan.engines import local

    real_run = local.run
    calls = []

    def run(paths, sink, options, **kwargs):
        calls.append(paths)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_run(paths, sink, options, **kwargs)

    monkeypatch.setattr(local, "run", run)


def writing(out: Path) -> bool:
    """Whether a run is writing a table in the report folder ``out``: a file under its
    temporary name (``*.partial``) in the folder or in one of its dataset folders."""
    try:
        for entry in out.iterdir():
            if entry.name.endswith(".partial"):
                return True
            if entry.is_dir() and any(p.name.endswith(".partial") for p in entry.iterdir()):
                return True
    except OSError:  # (the folder, or an entry, came or went meanwhile)
        pass
    return False


# --------------------------------------------------------------------------- object storage
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3_endpoint():
    """moto's S3 server on 127.0.0.1, as a process of its own (ended by pid), with a bucket
    holding the PGN sample and its Parquet twin (``games``: ``pgn/lichess-magnus-300.pgn.zst``,
    ``hf/data/year=2022/month=04/train-00000-of-00001.parquet``); yields the environment s3fs reads."""
    s3fs = pytest.importorskip("s3fs", reason="s3fs (the s3 extra) is not installed")
    pytest.importorskip("moto.server", reason="moto's server mode (the test extra) is not installed")
    boto3 = pytest.importorskip("boto3")
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    env = {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}", "AWS_ACCESS_KEY_ID": "test",
           "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1"}
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                break
            if time.monotonic() > deadline or proc.poll() is not None:
                pytest.skip("moto's server did not start")
            time.sleep(0.1)
        s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], aws_access_key_id="test",
                          aws_secret_access_key="test", region_name="us-east-1")
        s3.create_bucket(Bucket="games")
        s3.upload_file(str(SAMPLES / "lichess-magnus-300.parquet"), "games", "hf/data/year=2022/month=04/train-00000-of-00001.parquet")
        s3.upload_file(str(SAMPLES / "lichess-magnus-300.pgn.zst"), "games", "pgn/lichess-magnus-300.pgn.zst")
        # fsspec keeps one S3FileSystem per set of options, bound to the endpoint it was made
        # for: one made for another module's server would talk to a server that is gone.
        s3fs.S3FileSystem.clear_instance_cache()
        with pytest.MonkeyPatch.context() as mp:
            for k, v in env.items():
                mp.setenv(k, v)
            yield env
    finally:
        s3fs.S3FileSystem.clear_instance_cache()
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def s3(s3_endpoint):
    """The S3 file system (fsspec's) of :func:`s3_endpoint`, its listings forgotten."""
    import fsspec

    fs = fsspec.filesystem("s3")
    fs.invalidate_cache()
    return fs


def objects(fs, prefix: str) -> list[str]:
    fs.invalidate_cache()
    return sorted(p[len(prefix) + 1:] for p in fs.find(prefix))
