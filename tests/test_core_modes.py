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


@pytest.mark.parametrize("doc", ["README.md", "docs/explanation/compiled-core.md"])
def test_docs_rebuild_names_the_build_requirements(doc):
    # `python setup.py build_ext --inplace` runs outside pip's isolated build: a fresh venv
    # has neither Cython nor a setuptools that reads the project's metadata.
    import re
    line = re.search(r"^requires = \[(.*)\]$", (REPO / "pyproject.toml").read_text(), re.M).group(1)
    requires = re.findall(r'"([^"]+)"', line)  # no tomllib before Python 3.11
    assert requires
    text = (REPO / doc).read_text()
    places = [m.start() for m in re.finditer(re.escape("python setup.py build_ext --inplace"), text)]
    assert places
    # where the command is explained, the requirements are named beside it
    near = max((text[max(0, i - 400):i + 400] for i in places), key=lambda t: sum(f"'{r}'" in t for r in requires))
    for req in requires:
        assert f"'{req}'" in near, req
    assert re.search(r"pip install 'setuptools>=\d+' 'Cython>=[\d.]+'", near)


@pytest.mark.slow
def test_the_wheel_holds_the_compiled_core_and_no_generated_c(tmp_path):
    """A wheel built from the checkout (as `pip install .` builds one) holds every compiled
    module and its .pxd, and none of Cython's generated .c files: an extension's sources went
    into the wheel and site-packages as package data (16 MB). Compiles the core: ~1 min."""
    import shutil
    import zipfile

    pytest.importorskip("Cython")
    src = tmp_path / "src"
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, tracked.decode().split("\0")):
        if (REPO / name).is_file():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, src / name)
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation",
                           "-q", "-w", str(tmp_path / "wheel")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    wheel, = (tmp_path / "wheel").glob("chessscan-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    compiled = sorted(p.with_suffix(".py").relative_to(src).as_posix() for p in (src / "chessscan").rglob("*.pxd")
                      if not p.name.startswith("_"))
    assert len(compiled) >= 15
    for module in compiled:
        stem = module[:-len(".py")]
        assert any(n.startswith(stem + ".") and n.endswith((".so", ".pyd")) for n in names), module
        assert stem + ".pxd" in names, module
    assert [n for n in names if n.endswith(".c")] == []
