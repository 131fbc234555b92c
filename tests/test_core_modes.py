"""The compiled core and the same sources run uncompiled (``CHESSSCAN_PURE=1``) write the same
tables, value for value: on every shipped sample, and on the messy real-world files of
../shared when they are there.

C integer types, shifts and array copies behave differently from Python ints; this is where
such a difference would show. (The core, perft and analysis tests also run uncompiled in CI:
see the README's test command.)
"""

from __future__ import annotations

import os
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from chessscan.core import core_mode
from conftest import REPO, SAMPLES, SHARED, shared_skip_reason

pytestmark = pytest.mark.skipif(core_mode() != "compiled", reason="the compiled core is not installed")


def analyze(paths, out, pure: bool) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("CHESSSCAN_PURE", None)
    if pure:
        env["CHESSSCAN_PURE"] = "1"
    done = subprocess.run([sys.executable, "-m", "chessscan", "analyze", *map(str, paths), "-o", str(out), "--fen",
                           "--cross-check", "off", "--jobs", "1", "--silent"], env=env, capture_output=True,
                          text=True)
    assert done.returncode in (0, 1), done.stderr


def assert_same_tables(a, b) -> None:
    names = sorted(p.name for p in a.iterdir() if p.is_dir())
    assert names and names == sorted(p.name for p in b.iterdir() if p.is_dir())
    for name in names:
        x, y = pq.read_table(a / name), pq.read_table(b / name)
        assert x.equals(y), name
    assert (a / "summary.json").read_text() == (b / "summary.json").read_text()


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.iterdir() if p.suffix in (".pgn", ".epd")))
def test_samples(tmp_path, name):
    analyze([SAMPLES / name], tmp_path / "c", pure=False)
    analyze([SAMPLES / name], tmp_path / "p", pure=True)
    assert_same_tables(tmp_path / "c", tmp_path / "p")


def test_messy_files(tmp_path):
    messy = SHARED / "messy"
    if not messy.is_dir():
        pytest.skip(shared_skip_reason(messy))
    files = sorted(messy.rglob("*.pgn"))
    analyze(files, tmp_path / "c", pure=False)
    analyze(files, tmp_path / "p", pure=True)
    assert_same_tables(tmp_path / "c", tmp_path / "p")


def test_readme_rebuild_names_the_build_requirements():
    # `python setup.py build_ext --inplace` runs outside pip's isolated build: a fresh venv
    # has neither Cython nor a setuptools that reads the project's metadata.
    import re
    line = re.search(r"^requires = \[(.*)\]$", (REPO / "pyproject.toml").read_text(), re.M).group(1)
    requires = re.findall(r'"([^"]+)"', line)  # no tomllib before Python 3.11
    assert requires
    text = (REPO / "README.md").read_text()
    i = text.index("python setup.py build_ext --inplace")
    near = text[i:i + 400]
    for req in requires:
        assert f"'{req}'" in near, req
    assert re.search(r"pip install 'setuptools>=\d+' 'Cython>=[\d.]+'", near)
