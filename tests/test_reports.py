"""Report schemas, writers and summary rendering (no chess logic)."""

from __future__ import annotations

import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from chessscan.reports import schema as sch
from conftest import SAMPLES
from chessscan.reports.summary import render_summary
from chessscan.reports.writers import (
    ReportWriter,
    TableWriter,
    buffered_rows,
    clear,
    new_buffers,
    read_table,
    to_record_batch,
)

BIG = 2**64 - 1  # zobrist values >= 2**63 must survive as uint64


def position_rows(n: int, fen: bool = False, start: int = 0) -> dict[str, list]:
    b = new_buffers("positions", ("fen",) if fen else ())
    for i in range(start, start + n):
        b["source"].append("a.pgn")
        b["game_index"].append(i // 10)
        b["ply"].append(i % 10 + 1)
        b["move_number"].append((i % 10) // 2 + 1)
        b["color"].append("white" if i % 2 == 0 else "black")
        b["san"].append("Qh4#" if i % 3 == 0 else "e4")
        b["uci"].append("d8h4" if i % 3 == 0 else "e2e4")
        b["in_check"].append(i % 3 == 0)
        b["check_kind"].append("direct" if i % 3 == 0 else "none")
        b["checkers"].append("h4" if i % 3 == 0 else "")
        for col in ("by_en_passant", "by_castling", "by_promotion", "is_stalemate"):
            b[col].append(False)
        b["is_checkmate"].append(i % 3 == 0)
        b["halfmove_clock"].append(i % 50)
        b["zobrist"].append(BIG - i)
        b["repetition"].append(1 + i % 3)
        b["clock_ms"].append(None if i % 5 == 4 else 60_000 - 1000 * i)
        b["emt_ms"].append(None)
        b["eval_cp"].append(None if i % 3 == 0 else 17 - i)
        b["eval_mate"].append(-3 if i % 3 == 0 else None)
        if fen:
            b["fen"].append(f"fen{i}")
    return b


def game_row(**over) -> dict[str, list]:
    b = new_buffers("games")
    row = {c: None for c in b}
    row.update(source="a.pgn", game_index=0, byte_offset=0, line=1, plies=4,
               checks=1, direct_checks=1, discovered_checks=0, double_checks=0,
               outcome="checkmate", clock_plies=0, eval_plies=0)
    row.update(over)
    for c, v in row.items():
        b[c].append(v)
    return b


# --------------------------------------------------------------------- schema
def test_schema_declarations():
    assert sch.POSITIONS_COLUMNS[:3] == ("source", "game_index", "ply")
    assert "fen" not in sch.POSITIONS_COLUMNS
    assert sch.POSITIONS_OPTIONAL_COLUMNS == ("fen",)
    assert sch.column_names("positions", ["fen"])[-1] == "fen"
    assert sch.POSITIONS_SCHEMA.field("zobrist").type == pa.uint64()
    assert sch.GAMES_SCHEMA.field("white_elo").type == pa.int32()
    assert sch.GAMES_SCHEMA.field("white_elo").nullable
    assert not sch.GAMES_SCHEMA.field("source").nullable
    assert len(sch.GAMES_COLUMNS) == 34
    assert sch.GAMES_SCHEMA.field("time_control_base_s").type == pa.float64()
    assert sch.POSITIONS_SCHEMA.field("clock_ms").type == pa.int64()
    assert sch.POSITIONS_SCHEMA.field("eval_cp").nullable
    assert sch.GAMES_COLUMNS[-1] == "moves_hash" and sch.GAMES_SCHEMA.field("moves_hash").type == pa.string()
    for t in sch.TABLE_NAMES:
        assert tuple(sch.schema_for(t).names) == sch.column_names(t)
    assert sch.EPD_POSITIONS_COLUMNS[:4] == ("source", "line", "id", "fen")
    assert sch.PERPETUALS_SCHEMA.field("game_ended").type == pa.bool_()
    assert sch.DISAGREEMENTS_COLUMNS[4:6] == ("chessscan", "python_chess")
    with pytest.raises(ValueError, match="not optional"):
        sch.schema_for("games", ["fen"])
    with pytest.raises(ValueError, match="unknown table"):
        sch.schema_for("nope")


def test_buffers_helpers():
    b = new_buffers("issues")
    assert tuple(b) == sch.ISSUES_COLUMNS and all(v == [] for v in b.values())
    append = b["source"].append
    append("x")
    assert buffered_rows(b) == 1  # rows = length of the first column
    clear(b)
    assert buffered_rows(b) == 0
    append("y")  # the same list object survives clear()
    assert b["source"] == ["y"]
    assert "fen" in new_buffers("positions", ["fen"])


# -------------------------------------------------------------- round trips
def test_parquet_round_trip_exact_dtypes(tmp_path):
    with ReportWriter(tmp_path / "out", tables=("positions", "games")) as rw:
        rw.write("positions", position_rows(12))
        rw.write("games", game_row(white_elo=2850, result="0-1", winner="black",
                                   result_consistent=True))
        rw.write("games", game_row(game_index=1))  # all optional fields None
        assert rw.rows_written == {"positions": 12, "games": 2}

    pos = pd.read_parquet(tmp_path / "out" / "positions.parquet",
                          dtype_backend="numpy_nullable")
    assert tuple(pos.columns) == sch.POSITIONS_COLUMNS
    assert str(pos["zobrist"].dtype) == "UInt64"
    assert pos["zobrist"][0] == BIG and pos["zobrist"][10] == BIG - 10
    assert not pos["zobrist"].isna().any()  # required: never null
    assert str(pos["clock_ms"].dtype) == "Int64" and pos["clock_ms"].isna().sum() == 2
    assert str(pos["ply"].dtype) == "Int32"
    assert str(pos["game_index"].dtype) == "Int64"
    assert str(pos["in_check"].dtype) == "boolean"
    assert pos["checkers"].tolist()[:2] == ["h4", ""]

    games = pd.read_parquet(tmp_path / "out" / "games.parquet",
                            dtype_backend="numpy_nullable")
    assert tuple(games.columns) == sch.GAMES_COLUMNS
    assert str(games["white_elo"].dtype) == "Int32"
    assert games["white_elo"][0] == 2850 and pd.isna(games["white_elo"][1])
    # black_elo / perpetuals / error_ply are None in every row: types kept.
    t = pq.read_table(tmp_path / "out" / "games.parquet")
    assert t.schema.field("black_elo").type == pa.int32()
    assert t.schema.field("error_ply").type == pa.int32()
    assert t.schema.field("result_consistent").type == pa.bool_()
    assert t.schema.field("eco").type == pa.dictionary(pa.int32(), pa.string())
    assert t.schema.field("event").type == pa.string()
    assert t.column("black_elo").null_count == 2
    assert t.schema.remove_metadata().equals(sch.GAMES_SCHEMA.remove_metadata())

    # Plain pandas (no nullable backend): non-null uint64/bool columns are exact.
    plain = pd.read_parquet(tmp_path / "out" / "positions.parquet")
    assert plain["in_check"].dtype == bool and plain["ply"].dtype == "int32"


LOW_CARDINALITY = {
    "positions": {"source", "color", "check_kind"},
    "games": {"source", "result", "eco", "time_control", "termination", "variant", "outcome", "winner",
              "error_code"},
    "issues": {"source", "severity", "code"},
    "epd_positions": {"source", "check_kind"},
    "perpetuals": {"source", "side", "game_result"},
    "disagreements": {"source", "field"},
}


def test_low_cardinality_text_is_a_dictionary_and_nothing_else():
    for table, names in LOW_CARDINALITY.items():
        schema = sch.schema_for(table)
        assert {f.name for f in schema if pa.types.is_dictionary(f.type)} == names, table


def test_low_cardinality_text_reads_back_as_categoricals(tmp_path):
    """Real games through the whole path: pandas reads the dictionary columns as
    categoricals holding the same text, with either dtype backend; other text stays text."""
    from chessscan.analysis.options import AnalysisOptions
    from chessscan.engines.local import run, tables_for

    options = AnalysisOptions(cross_check="off")
    paths = [str(SAMPLES / "lichess-jishanshaikh4-variants.pgn")]
    with ReportWriter(tmp_path, tables=tables_for(paths, options)) as rw:
        run(paths, rw, options)
    for backend in (None, "numpy_nullable"):
        kw = {"dtype_backend": backend} if backend else {}
        pos = pd.read_parquet(tmp_path / "positions.parquet", **kw)
        games = pd.read_parquet(tmp_path / "games.parquet", **kw)
        issues = pd.read_parquet(tmp_path / "issues.parquet", **kw)
        for frame, table in ((pos, "positions"), (games, "games"), (issues, "issues")):
            cats = {c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)}
            assert cats == LOW_CARDINALITY[table], table
        assert set(pos.color.cat.categories) == {"white", "black"}
        assert pos.color.tolist()[:2] == ["white", "black"]
        assert set(pos.check_kind.unique()) == {"none", "direct", "discovered", "double"}
        assert (pos.check_kind == "discovered").sum() == (pos.check_kind.astype(str) == "discovered").sum() > 0
        assert set(games.variant.dropna().unique()) >= {"Standard", "Atomic"}
        assert set(issues.code) >= {"unsupported-variant"} and set(issues.severity) == {"warning"}
        assert not isinstance(pos.san.dtype, pd.CategoricalDtype) and pos.san.iloc[0] == "e4"


def test_csv_text_is_the_same_for_dictionary_columns(tmp_path):
    """CSV carries text: a dictionary column writes exactly what a string column does."""
    rows = game_row(result="1-0", outcome="checkmate", winner="white", eco="B20")
    plain = pa.schema([f.with_type(pa.string()) if pa.types.is_dictionary(f.type) else f
                       for f in sch.GAMES_SCHEMA])
    for name, schema in (("dict.csv", sch.GAMES_SCHEMA), ("plain.csv", plain)):
        with TableWriter(tmp_path / name, schema, "csv", table="games") as w:
            w.write(rows)
            w.write(game_row(game_index=1))
    assert (tmp_path / "dict.csv").read_bytes() == (tmp_path / "plain.csv").read_bytes()
    assert b'"1-0"' in (tmp_path / "dict.csv").read_bytes()


def test_csv_round_trip(tmp_path):
    with ReportWriter(tmp_path, fmt="csv", tables=("positions", "games")) as rw:
        rw.write("positions", position_rows(5))
        rw.write("games", game_row(white_elo=2000, event='He said "hi", twice'))
    text = (tmp_path / "positions.csv").read_text()
    header, first = text.splitlines()[:2]
    assert header.replace('"', "").split(",") == list(sch.POSITIONS_COLUMNS)
    assert ",true," in first and ",false," in first  # bools as true/false

    # Exact types back through the declared schema.
    t = read_table(tmp_path / "positions.csv", sch.POSITIONS_SCHEMA)
    assert t.schema.field("zobrist").type == pa.uint64()
    assert t.column("zobrist").to_pylist()[:4] == [BIG, BIG - 1, BIG - 2, BIG - 3]
    assert t.column("clock_ms").to_pylist()[3:] == [57_000, None]  # null stays null
    assert t.column("checkers").to_pylist()[:2] == ["h4", ""]  # "" is not None
    g = read_table(tmp_path / "games.csv", sch.GAMES_SCHEMA)
    assert g.column("white_elo").to_pylist() == [2000]
    assert g.column("black_elo").type == pa.int32()
    assert g.column("black_elo").to_pylist() == [None]
    assert g.column("event").to_pylist() == ['He said "hi", twice']

    # And plain pandas can read it.
    df = pd.read_csv(tmp_path / "games.csv")
    assert tuple(df.columns) == sch.GAMES_COLUMNS and len(df) == 1


def test_jsonl_round_trip(tmp_path):
    with ReportWriter(tmp_path, fmt="jsonl", tables=("positions", "issues")) as rw:
        rw.write("positions", position_rows(3))
    lines = (tmp_path / "positions.jsonl").read_text().splitlines()
    assert json.loads(lines[0])["zobrist"] == BIG
    t = read_table(tmp_path / "positions.jsonl", sch.POSITIONS_SCHEMA)
    assert t.num_rows == 3 and t.schema.field("zobrist").type == pa.uint64()
    assert read_table(tmp_path / "issues.jsonl", sch.ISSUES_SCHEMA).num_rows == 0


def test_parquet_options_zstd_levels():
    from chessscan.reports.writers import POSITIONS_ZSTD_LEVELS, parquet_options

    options = parquet_options(sch.POSITIONS_SCHEMA)
    assert options["compression_level"] == POSITIONS_ZSTD_LEVELS
    assert all(options["compression"][name] == "zstd" for name in POSITIONS_ZSTD_LEVELS)
    # A codec without levels gets none; nor do the other tables.
    assert parquet_options(sch.POSITIONS_SCHEMA, "snappy")["compression_level"] is None
    assert parquet_options(sch.GAMES_SCHEMA)["compression_level"] is None


def test_parquet_options_positions_pages(tmp_path):
    """The positions table's data pages are cut by their bytes, not at pyarrow's 20,000 rows."""
    import inspect

    from chessscan.reports.writers import POSITIONS_PAGE_ROWS, parquet_options

    if "max_rows_per_page" not in inspect.signature(pq.ParquetWriter.__init__).parameters:
        assert "max_rows_per_page" not in parquet_options(sch.POSITIONS_SCHEMA)
        return
    assert parquet_options(sch.POSITIONS_SCHEMA)["max_rows_per_page"] == POSITIONS_PAGE_ROWS
    assert "max_rows_per_page" not in parquet_options(sch.GAMES_SCHEMA)
    with ReportWriter(tmp_path, tables=("positions",), row_group_size=30_000) as rw:
        rw.write("positions", position_rows(30_000))
    table = pq.read_table(tmp_path / "positions.parquet")
    assert table.num_rows == 30_000 and table.column("zobrist").to_pylist()[-1] == BIG - 29_999


def test_positions_keys_required_and_earlier_reports_read_alike(tmp_path):
    """``zobrist`` and ``repetition`` are required (Parquet: no definition levels); a
    positions part written when they were declared nullable (never null) reads back with the
    same values beside a new one: pyarrow's dataset, ``read_report``, pandas, Polars, DuckDB."""
    import warnings

    import pyarrow.dataset as ds

    from chessscan import read_report

    assert not sch.POSITIONS_SCHEMA.field("zobrist").nullable
    assert not sch.POSITIONS_SCHEMA.field("repetition").nullable
    rows = position_rows(12)
    rows["zobrist"][5] = None
    with pytest.raises(ValueError, match="'zobrist' is not nullable"):
        to_record_batch(rows, sch.POSITIONS_SCHEMA, "positions")
    with ReportWriter(tmp_path / "new", tables=("positions",)) as rw:
        rw.write("positions", position_rows(12))
    new = pq.read_table(tmp_path / "new" / "positions.parquet")
    before = pa.schema([f.with_nullable(True) if f.name in ("zobrist", "repetition") else f
                        for f in new.schema], metadata=new.schema.metadata)
    folder = tmp_path / "mixed" / "positions"
    folder.mkdir(parents=True)
    for order, part in enumerate((new.cast(before), new)):  # before first, then after
        pq.write_table(part, folder / f"part-{order:06d}.parquet")
    keys = new.column("zobrist").to_pylist() * 2
    counts = new.column("repetition").to_pylist() * 2
    assert pq.ParquetFile(folder / "part-000001.parquet").schema.column(16).max_definition_level == 0
    for table in (ds.dataset(folder).to_table(), pq.read_table(folder)):
        assert table.column("zobrist").to_pylist() == keys
        assert table.column("repetition").to_pylist() == counts
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no summary.json: an incomplete report, read anyway
        positions = read_report(tmp_path / "mixed", incomplete="ok").positions
    assert str(positions["zobrist"].dtype) == "UInt64" and positions["zobrist"].tolist() == keys
    assert str(positions["repetition"].dtype) == "Int32" and positions["repetition"].tolist() == counts
    frame = pd.read_parquet(folder, dtype_backend="numpy_nullable")
    assert frame["zobrist"].tolist() == keys and frame["repetition"].tolist() == counts
    try:
        import polars as pl
    except ImportError:
        pass
    else:
        frame = pl.read_parquet(str(folder / "*.parquet"))
        assert frame["zobrist"].to_list() == keys and frame["repetition"].to_list() == counts
    try:
        import duckdb
    except ImportError:
        pass
    else:
        got = duckdb.sql(f"SELECT zobrist, repetition FROM read_parquet('{folder}/*.parquet') "
                         "ORDER BY filename, file_row_number").fetchall()
        assert got == list(zip(keys, counts))


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_empty_table_readable(tmp_path, fmt):
    with ReportWriter(tmp_path, fmt=fmt, tables=("issues",)) as rw:
        rw.write("issues", new_buffers("issues"))  # zero-row write is a no-op
    path = tmp_path / f"issues.{fmt}"
    df = pd.read_parquet(path) if fmt == "parquet" else pd.read_csv(path)
    assert len(df) == 0 and tuple(df.columns) == sch.ISSUES_COLUMNS
    t = read_table(path, sch.ISSUES_SCHEMA)
    assert t.num_rows == 0 and t.schema.field("column").type == pa.int32()


def test_all_none_column_keeps_type_in_batch():
    b = new_buffers("epd_positions")
    for c in b:
        b[c].append(None)
    b["source"][0], b["line"][0], b["fen"][0], b["valid"][0] = "s.epd", 3, "8/8 w - -", False
    batch = to_record_batch(b, sch.EPD_POSITIONS_SCHEMA)
    assert batch.schema.field("legal_moves").type == pa.int32()
    assert batch.schema.field("bm_legal").type == pa.bool_()
    assert batch.column(batch.schema.get_field_index("bm_legal")).null_count == 1


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_optional_fen_column(tmp_path, fmt):
    with ReportWriter(tmp_path / "on", fmt=fmt, tables=("positions",),
                      optional_columns={"positions": ("fen",)}) as rw:
        assert rw.columns("positions")[-1] == "fen"
        b = rw.new_buffers("positions")
        b.update(position_rows(2, fen=True))
        rw.write("positions", b)
    with ReportWriter(tmp_path / "off", fmt=fmt, tables=("positions",)) as rw:
        rw.write("positions", position_rows(2))
        with pytest.raises(ValueError, match="not enabled"):
            rw.write("positions", position_rows(2, fen=True))
    read = pd.read_parquet if fmt == "parquet" else pd.read_csv
    on = read(tmp_path / "on" / f"positions.{fmt}")
    off = read(tmp_path / "off" / f"positions.{fmt}")
    assert on["fen"].tolist() == ["fen0", "fen1"]
    assert "fen" not in off.columns and len(off) == 2


def test_parquet_row_groups_accumulate(tmp_path):
    path = tmp_path / "p.parquet"
    with TableWriter(path, sch.POSITIONS_SCHEMA, "parquet", row_group_size=25) as w:
        for k in range(7):  # 7 batches of 10 rows -> groups of 30, 30, 10
            w.write(position_rows(10, start=10 * k))
            assert w._pending_rows < 25  # never holds a full group
    md = pq.ParquetFile(path).metadata
    assert md.num_rows == 70
    assert [md.row_group(i).num_rows for i in range(md.num_row_groups)] == [30, 30, 10]
    assert pq.read_table(path).column("halfmove_clock").to_pylist() == [i % 50 for i in range(70)]


def test_parquet_row_groups_are_cut_by_bytes_too(tmp_path, monkeypatch):
    """Wide rows: a row group is cut once its pending Arrow data reaches ROW_GROUP_BYTES,
    long before row_group_size rows."""
    from chessscan.reports import writers

    path = tmp_path / "p.parquet"
    batch_bytes = writers.to_record_batch(position_rows(10), sch.POSITIONS_SCHEMA).get_total_buffer_size()
    cap = 2 * batch_bytes + 1  # reached by the third batch of a group (batches differ by a few bytes)
    monkeypatch.setattr(writers, "ROW_GROUP_BYTES", cap)
    with TableWriter(path, sch.POSITIONS_SCHEMA, "parquet", row_group_size=1_000) as w:
        for k in range(7):
            w.write(position_rows(10, start=10 * k))
            assert w._pending_bytes < cap
    md = pq.ParquetFile(path).metadata
    assert [md.row_group(i).num_rows for i in range(md.num_row_groups)] == [30, 30, 10]


def test_annotated_positions_row_groups_are_cut_by_rows(tmp_path):
    """The positions rows of a Lichess export (clock and evaluation columns filled) reach
    row_group_size before ROW_GROUP_BYTES: their row groups hold 65,536 rows or more (whole
    batches), not fewer cut by bytes."""
    from chessscan.analysis.options import AnalysisOptions
    from chessscan.engines.local import run
    from chessscan.reports import writers

    batches = []

    class Keep:
        accepts_arrow = True

        def write(self, name, columns):
            if name == "positions":
                batches.append(writers.to_record_batch(columns, sch.POSITIONS_SCHEMA, name))

    run([str(SAMPLES / "lichess-magnus-300.pgn.zst")], Keep(), AnalysisOptions(cross_check="off"))
    assert batches and sum(b.num_rows for b in batches) > 20_000
    assert all(b.column("clock_ms").null_count < b.num_rows // 2 for b in batches)  # annotated rows
    path = tmp_path / "p.parquet"
    with TableWriter(path, sch.POSITIONS_SCHEMA, "parquet") as w:  # the default row_group_size
        for _ in range(4):  # the sample's rows four times over: 100,000 rows
            for b in batches:
                w.write({name: b.column(name) for name in b.schema.names})
    md = pq.ParquetFile(path).metadata
    sizes = [md.row_group(i).num_rows for i in range(md.num_row_groups)]
    assert sizes[0] >= writers.DEFAULT_ROW_GROUP_SIZE
    assert sizes[0] - writers.DEFAULT_ROW_GROUP_SIZE < max(b.num_rows for b in batches)
    assert sum(sizes) == 4 * sum(b.num_rows for b in batches)


# -------------------------------------------------------------------- errors
def test_column_errors(tmp_path):
    with ReportWriter(tmp_path, tables=("positions", "issues")) as rw:
        b = position_rows(1)
        b["bogus"] = [1]
        with pytest.raises(ValueError, match="bogus"):
            rw.write("positions", b)
        b = position_rows(1)
        del b["uci"]
        with pytest.raises(ValueError, match="missing.*uci"):
            rw.write("positions", b)
        b = position_rows(2)
        b["san"].pop()
        with pytest.raises(ValueError, match="different lengths"):
            rw.write("positions", b)
        b = position_rows(1)
        b["ply"] = [2**31]
        with pytest.raises(ValueError, match="'ply'"):
            rw.write("positions", b)
        b = position_rows(1)
        b["san"] = [None]
        with pytest.raises(ValueError, match="'san' is not nullable"):
            rw.write("positions", b)
        b = position_rows(1)
        b["source"] = [7]
        with pytest.raises(ValueError, match="'source'"):
            rw.write("positions", b)
        with pytest.raises(ValueError, match="not open"):
            rw.write("games", game_row())
        rw.write("positions", position_rows(1))  # still usable after errors
    assert pq.read_table(tmp_path / "positions.parquet").num_rows == 1

    with pytest.raises(ValueError, match="unknown table"):
        ReportWriter(tmp_path, tables=("nope",))
    with pytest.raises(ValueError, match="format"):
        ReportWriter(tmp_path, fmt="xlsx")
    with pytest.raises(ValueError, match="not optional"):
        ReportWriter(tmp_path, optional_columns={"positions": ("zobrist",)})
    w = TableWriter(tmp_path / "x.csv", sch.ISSUES_SCHEMA, "csv")
    w.close()
    w.close()  # idempotent
    with pytest.raises(ValueError, match="closed"):
        w.write(new_buffers("issues"))


def test_closed_on_exception_keeps_rows(tmp_path):
    with pytest.raises(RuntimeError):
        with ReportWriter(tmp_path, tables=("positions",)) as rw:
            rw.write("positions", position_rows(4))
            raise RuntimeError("boom")
    assert rw.closed
    assert pq.read_table(tmp_path / "positions.parquet").num_rows == 4


def test_write_summary(tmp_path):
    with ReportWriter(tmp_path, tables=()) as rw:
        p = rw.write_summary({"games_read": 3, "codes": {"b", "a"}, "path": tmp_path})
    data = json.loads(p.read_text())
    assert data == {"games_read": 3, "codes": ["a", "b"], "path": str(tmp_path)}
    assert not list(tmp_path.glob("*.tmp"))


# ------------------------------------------------------------------- summary
def test_render_summary():
    s = {
        "elapsed_seconds": 1.5,
        "games_read": 1000,
        "games_ok": 990,
        "games_with_errors": 10,
        "positions": 81234,
        "checks_by_kind": {"direct": 812, "discovered": 31, "double": 4},
        "checkmates": 120,
        "stalemates": 3,
        "issues_by_code": {"illegal_move": 7, "bad_tag": 12},
        "custom_flag": True,
        "nothing": None,
    }
    out = render_summary(s)
    lines = out.splitlines()
    assert lines[0] == "chessscan summary"
    assert lines[1].startswith("games read") and lines[1].endswith("1,000")
    assert "(99.0%)" in out and "81,234" in out
    assert "  direct" in out and "elapsed (s)" in out and "1.50" in out
    # issue codes verbatim, largest count first
    assert out.index("bad_tag") < out.index("illegal_move")
    assert "custom flag" in out and "yes" in out
    # numbers right-aligned in one column
    num_ends = {len(l) for l in lines if l.rstrip().endswith(("1,000", "81,234", "120"))}
    assert len(num_ends) == 1
    assert render_summary({}, title=None) == "(empty)"
    assert render_summary({"x": {}}, title=None) == "x  (none)"


def test_the_report_extra_missing_is_a_usage_error_with_a_hint_that_works_anywhere(tmp_path, monkeypatch):
    """Without matplotlib, `analyze --html` (before any work) and `report` exit 2, not 1
    ("issues found"), and name the package to install: 'chessscan[report]' failed from a
    checkout, where no package index has chessscan."""
    import sys

    from click.testing import CliRunner

    from chessscan.cli import main

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    out = tmp_path / "r"
    for args in (["analyze", str(SAMPLES / "lichess-magnus-300.pgn"), "-o", str(out), "--html", "--silent"],
                 ["report", str(tmp_path)]):
        res = CliRunner().invoke(main, args)
        assert res.exit_code == 2, res.output
        assert res.output.startswith("Error: report.html draws its charts with matplotlib, which is not "
                                     "installed: pip install 'matplotlib>=3.7' (the report extra)")
    assert not out.exists()
