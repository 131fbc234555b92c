"""The positions rows' typed buffers (chessscan.analysis.rows) and their hand-over to Arrow.

``to_arrays`` gives Arrow the buffers themselves (no copy); rows written afterwards must go to
new buffers, so that arrays already handed over (to a writer's pending row group, to another
process) never change. Each test writes rows, builds the arrays, writes more, and compares
every value with what was written, as ``pyarrow.array`` would hold it.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

from chessscan.analysis.rows import CHECK_KINDS, COLORS, PositionRows
from chessscan.readers.movetext import NOTE_NA
from chessscan.reports.schema import schema_for

FLAGS = ("in_check", "by_en_passant", "by_castling", "by_promotion", "is_checkmate", "is_stalemate")


def square(sq: int) -> str:
    return "abcdefgh"[sq & 7] + "12345678"[sq >> 3]


def make_row(k: int) -> tuple:
    """The ``add`` arguments of a varied row number ``k``: long and short SAN, null moves,
    promotions, one and two checkers, every flag."""
    san = ("e4", "Nbd7", "exd8=Q+", "O-O-O#", "--", "Pa7xb8=Q++", "Qh4xe1")[k % 7]
    frm, to = (k * 7) % 64, (k * 13 + 5) % 64
    if san == "--":
        frm = to = 0
    checkers = 0 if k % 3 else (1 << (k % 64)) | (1 << ((k * 5 + 9) % 64)) if k % 2 else 1 << (k % 64)
    flags = 0 if k % 3 else 1 | ((k >> 1) & 62)
    return (k % 2, 1000 + k // 40, k % 40 + 1, k // 80 + 1, k % 2 == 0, san, frm, to, (0, 2, 3, 4, 5)[k % 5],
            k % 4, checkers, flags, k % 101, (k * 0x9E3779B97F4A7C15) % 2**64, k % 6 + 1)


def make_notes(k: int) -> tuple:
    """Row ``k``'s clock_ms, emt_ms, eval_cp, eval_mate (None: no value; none at all in
    every eleventh row, which is then written without set_notes)."""
    if k % 11 == 10:
        return None, None, None, None
    return (None if k % 4 == 3 else 60_000 - 7 * k, 1000 * k if k % 5 == 0 else None,
            None if k % 3 == 0 else k - 1500, -(k % 9) if k % 3 == 0 and k % 2 else None)


def expected(k: int, sources=("a.pgn", "b.pgn")) -> dict:
    (sid, gi, ply, move_number, white, san, frm, to, promotion, kind, checkers, flags, clock, zobrist,
     repetition) = make_row(k)
    uci = "0000" if frm == to else square(frm) + square(to) + ("", "", "n", "b", "r", "q")[promotion]
    row = {"source": sources[sid], "game_index": gi, "ply": ply, "move_number": move_number,
           "color": COLORS[white], "san": san, "uci": uci, "check_kind": CHECK_KINDS[kind],
           "checkers": " ".join(square(sq) for sq in range(64) if checkers >> sq & 1),
           "halfmove_clock": clock, "zobrist": zobrist, "repetition": repetition}
    row.update({name: bool(flags >> i & 1) for i, name in enumerate(FLAGS)})
    row.update(zip(("clock_ms", "emt_ms", "eval_cp", "eval_mate"), make_notes(k)))
    return row


def fill(rows: PositionRows, ks) -> None:
    for k in ks:
        rows.source_number(("a.pgn", "b.pgn")[0])
        rows.source_number(("a.pgn", "b.pgn")[1])
        i = rows.add(*make_row(k))
        assert i == len(rows) - 1
        if k % 11 != 10:
            rows.set_notes(i, *(NOTE_NA if v is None else v for v in make_notes(k)))


def as_rows(arrays: dict) -> list[dict]:
    schema = schema_for("positions")
    assert list(arrays) == schema.names
    table = pa.table(arrays)
    for array, field in zip(table.columns, schema):
        assert array.type == field.type, field.name
        for chunk in array.chunks:
            chunk.validate(full=True)
    return table.to_pylist()


@pytest.mark.parametrize("capacity", [16, 1024])
def test_rows_equal_what_was_written(capacity):
    rows = PositionRows(capacity=capacity)
    fill(rows, range(3000))
    assert len(rows) == 3000
    assert as_rows(rows.to_arrays()) == [expected(k) for k in range(3000)]
    for k in (0, 5, 2999):
        r = rows.row(k)
        e = expected(k)
        assert r == {name: e[name] for name in r}


def test_arrays_handed_over_never_change():
    rows = PositionRows(capacity=64)
    fill(rows, range(100))
    first = rows.to_arrays()
    # More rows in the same batch, then a new batch after clear(): neither may write into the
    # memory the first arrays stand on.
    fill(rows, range(100, 150))
    second = rows.to_arrays()
    rows.clear()
    fill(rows, range(500, 700))
    third = rows.to_arrays()
    assert as_rows(first) == [expected(k) for k in range(100)]
    assert as_rows(second) == [expected(k) for k in range(150)]
    assert as_rows(third) == [expected(k) for k in range(500, 700)]


@pytest.mark.parametrize("handed_over", [False, True])
def test_truncate_then_more_rows(handed_over):
    # Rows 0..98 kept, 99..129 dropped (a game cut short): the bits of the dropped rows' flags
    # must not show in the rows written after them, in the same bitmap byte.
    rows = PositionRows(capacity=256)
    fill(rows, range(130))
    before = rows.to_arrays() if handed_over else None
    rows.truncate(99)
    assert len(rows) == 99
    fill(rows, range(1000, 1040))
    got = as_rows(rows.to_arrays())
    assert got == [expected(k) for k in range(99)] + [expected(k) for k in range(1000, 1040)]
    if before is not None:
        assert as_rows(before) == [expected(k) for k in range(130)]


def test_fen_column_and_empty_batch():
    rows = PositionRows(fen=True)
    assert as_rows_fen(rows.to_arrays()) == []
    fill(rows, range(3))
    for k in range(3):
        rows.add_fen(f"fen {k}")
    arrays = rows.to_arrays()
    assert arrays["fen"].to_pylist() == ["fen 0", "fen 1", "fen 2"]
    rows.truncate(1)
    assert rows.fens == ["fen 0"]


def as_rows_fen(arrays: dict) -> list[dict]:
    schema = schema_for("positions", ("fen",))
    assert list(arrays) == schema.names
    return pa.table(arrays).to_pylist()


def test_batch_handed_over_equals_arrays():
    # The writer's way (to_batch: the whole batch in one import, compiled): the same values,
    # buffers and schema as the arrays, and like them never changed by the rows written after.
    import chessscan
    from chessscan.reports.writers import to_record_batch

    schema = schema_for("positions")
    rows = PositionRows(capacity=64)
    fill(rows, range(300))
    batch = rows.to_batch(schema)
    if chessscan.core_mode() != "compiled":
        assert batch is None
        return
    assert batch.schema.equals(schema, check_metadata=True)
    batch.validate(full=True)
    fill(rows, range(300, 340))  # into new buffers
    rows.clear()
    fill(rows, range(700, 900))
    again = to_record_batch(rows, schema, "positions")
    assert batch.to_pylist() == [expected(k) for k in range(300)]
    assert again.to_pylist() == [expected(k) for k in range(700, 900)]
    # Each buffer spans exactly its rows, as the arrays' do (a row group's size is cut on it).
    same = PositionRows(capacity=64)
    fill(same, range(300))
    arrays = pa.RecordBatch.from_pydict(same.to_arrays(), schema=schema)
    assert batch.get_total_buffer_size() == arrays.get_total_buffer_size()
    assert rows.to_batch(schema_for("positions", ("fen",))) is None
    assert PositionRows().to_batch(schema) is None
