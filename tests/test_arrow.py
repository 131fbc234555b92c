"""Arrow arrays built from buffers (chessscan.analysis.arrow) equal ``pyarrow.array``'s."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chessscan.analysis.arrow import from_list, from_numpy

REPO = Path(__file__).resolve().parents[1]
DICT = pa.dictionary(pa.int32(), pa.string())
TYPES = [pa.string(), DICT, pa.bool_(), pa.int8(), pa.int32(), pa.int64(), pa.uint8(), pa.uint64(), pa.float64()]

# Values of every kind a column buffer may hold, and some it should not: the result (or the
# exception's type) must be pyarrow.array's.
VALUES = st.one_of(
    st.none(),
    st.text(max_size=6),
    st.sampled_from(["white", "black", "e4", "", "é", "\udcff", "=cmd", "a\x00b"]),
    st.booleans(),
    st.integers(min_value=-2**65, max_value=2**65),
    st.sampled_from([0, 1, -1, 127, 128, 2**31 - 1, 2**31, 2**63 - 1, 2**63, 2**64 - 1, 2**64]),
    st.floats(allow_nan=False),
    st.just(b"bytes"),
)


def _outcome(make):
    try:
        return make(), None
    except Exception as exc:  # noqa: BLE001 - the exception's kind is what is compared
        return None, exc


def _assert_same(values, arrow_type) -> None:
    expected, expected_error = _outcome(lambda: pa.array(values, type=arrow_type))
    got, error = _outcome(lambda: from_list(values, arrow_type))
    if expected_error is not None:
        assert error is not None and isinstance(error, type(expected_error)), (values, arrow_type, error)
        return
    assert error is None, (values, arrow_type, error)
    got.validate(full=True)
    assert got.type == expected.type
    assert got.null_count == expected.null_count
    assert got.to_pylist() == expected.to_pylist()
    if pa.types.is_dictionary(arrow_type):  # same codes, same dictionary order
        assert got.indices.to_pylist() == expected.indices.to_pylist()
        assert got.dictionary.to_pylist() == expected.dictionary.to_pylist()


@settings(max_examples=400, deadline=None)
@given(st.lists(VALUES, max_size=40), st.sampled_from(TYPES))
def test_from_list_equals_pyarrow_array(values, arrow_type) -> None:
    _assert_same(values, arrow_type)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(max_size=8)), max_size=60), st.sampled_from([pa.string(), DICT]))
def test_from_list_text_columns(values, arrow_type) -> None:
    _assert_same(values, arrow_type)


@pytest.mark.parametrize("values, arrow_type", [
    ([], pa.string()), ([], pa.int64()), ([], pa.bool_()), ([], DICT),
    ([None] * 9, pa.string()), ([None] * 9, pa.int32()), ([None] * 17, pa.bool_()), ([None, None], DICT),
    ([True, None, False] * 7, pa.bool_()),
    ([2**31], pa.int32()), ([-1], pa.uint64()), ([2**64 - 1, None], pa.uint64()),
    ([True, 2], pa.int64()), ([1, "1"], pa.string()), (["a", 1], DICT), ([1.0], pa.int32()),
    (["\udcff"], pa.string()), (["x", None, "x", "y", None, "x"], DICT),
    ([], pa.float64()), ([300.0, None, 5.232, 0.001], pa.float64()), ([None] * 9, pa.float64()),
    ([1.5, 2], pa.float64()), ([1.5, True], pa.float64()),
])
def test_from_list_edges(values, arrow_type) -> None:
    _assert_same(values, arrow_type)


@pytest.mark.parametrize("arrow_type, dtype", [
    (pa.int32(), np.int32), (pa.int64(), np.int64), (pa.uint64(), np.uint64), (pa.bool_(), np.bool_),
    (pa.int32(), np.int64),  # another dtype: pyarrow.array casts (or raises)
])
def test_from_numpy_equals_pyarrow_array(arrow_type, dtype) -> None:
    rng = np.random.default_rng(7)
    for n in (0, 1, 7, 8, 9, 64, 1000):
        values = rng.integers(0, 2 if dtype is np.bool_ else 1000, size=n).astype(dtype)
        got = from_numpy(values, arrow_type)
        got.validate(full=True)
        assert got.equals(pa.array(values, type=arrow_type))
    # A strided view (a column of a 2-d array) is copied, not read with the wrong stride.
    grid = (np.arange(30) % 3 == 1).astype(dtype).reshape(10, 3)
    assert from_numpy(grid[:, 1], arrow_type).to_pylist() == pa.array(grid[:, 1], type=arrow_type).to_pylist()


def test_analyze_does_not_import_pandas(tmp_path) -> None:
    """pyarrow.array imports pandas (~0.7 s CPU) on first use: writing every table, Parquet
    and CSV, goes without it."""
    sample = REPO / "data" / "samples"
    pgn = sorted(sample.glob("*.pgn"))[0]
    code = (
        "import sys\n"
        "from chessscan.cli import main\n"
        f"sys.argv = ['chessscan', 'analyze', {str(pgn)!r}, '--jobs', '1', '--fen', '-o', {str(tmp_path / 'p')!r},"
        " '--format', 'parquet']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"sys.argv = ['chessscan', 'analyze', {str(pgn)!r}, '--jobs', '1', '--cross-check', 'off',"
        f" '-o', {str(tmp_path / 'c')!r}, '--format', 'csv']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('pandas' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.stdout.strip().splitlines()[-1] == "False", done.stdout[-2000:] + done.stderr[-2000:]
    assert (tmp_path / "p" / "positions").exists() and (tmp_path / "c" / "games.csv").exists()
