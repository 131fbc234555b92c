"""`chessscan validate --clean-output/--rejects-output` of game tables: every row copied, as it
stands (columns, types, schema metadata), to one of two tables, once, in input order; the
sidecar; --jobs 2; several tables; what is refused; a link at an output name is replaced."""

from __future__ import annotations

import csv
import os
import re
import sys

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from chessscan.analysis.options import AnalysisOptions
from chessscan.cli import main
from chessscan.engines.local import MemorySink, run
from chessscan.reports import split as split_module
from conftest import SAMPLES

TWIN = SAMPLES / "lichess-magnus-300.parquet"
PGN = SAMPLES / "lichess-magnus-300.pgn.zst"
ILLEGAL, WRONG_RESULT, WARNED = 5, None, 7  # WRONG_RESULT: the first game won by a mate (below)
MATE = re.compile(r"[a-hNBRQKx1-8=O-]+#")


def validate(*args):
    return CliRunner().invoke(main, ["validate", *[str(a) for a in args]])


def _set(table: pa.Table, name: str, values: list) -> pa.Table:
    i = table.schema.get_field_index(name)
    return table.set_column(i, table.schema.field(i), pa.array(values, table.schema.field(i).type))


def spoiled() -> tuple[pa.Table, int]:
    """The sample with rows made bad: an illegal first move (row 5), a Result tag and marker
    that contradict the mate on the board (the first mated game from row 10: an error), a
    Result tag that differs from the marker (row 7: a warning); schema and field metadata
    added. Returns the table and the row of the contradicted mate."""
    table = pq.read_table(TWIN)
    moves, results = table.column("movetext").to_pylist(), table.column("Result").to_pylist()
    moves[ILLEGAL] = moves[ILLEGAL].replace("1. ", "1. Ke3 ", 1)
    mated = next(i for i in range(10, len(moves))
                 if MATE.search(re.sub(r"\{[^}]*\}", "", moves[i])) and results[i] in ("1-0", "0-1"))
    flip = {"1-0": "0-1", "0-1": "1-0"}[results[mated]]
    moves[mated] = moves[mated][: moves[mated].rindex(results[mated])] + flip
    results[mated] = flip
    results[WARNED] = "1-0" if results[WARNED] != "1-0" else "0-1"
    table = _set(_set(table, "movetext", moves), "Result", results)
    fields = [f.with_metadata({b"about": b"the game's PGN movetext"}) if f.name == "movetext" else f
              for f in table.schema]
    return table.cast(pa.schema(fields, metadata={b"origin": b"chessscan tests"})), mated


@pytest.fixture
def bad(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    table, mated = spoiled()
    pq.write_table(table, "bad.parquet", row_group_size=64, compression="brotli")  # 5 row groups
    return tmp_path, mated


def verdicts(path, fail_on: str = "error") -> set[int]:
    """The rows of ``path`` with an issue at or above ``fail_on``, from the issues table of an
    analysis (apart from the split code)."""
    sink = MemorySink()
    run([str(path)], sink, AnalysisOptions(positions="none", cross_check="off"))
    return {gi for batch in sink.batches.get("issues", [])
            for gi, sev in zip(batch["game_index"], batch["severity"]) if sev == "error" or fail_on == "warning"}


def assert_rows(out: pa.Table, source: pa.Table, rows: list[int]) -> None:
    """``out`` holds exactly the rows ``rows`` of ``source``, in that order, value for value,
    with its schema (metadata too)."""
    assert out.schema.equals(source.schema, check_metadata=True)
    assert out.schema.field("movetext").metadata == {b"about": b"the game's PGN movetext"}
    assert out.num_rows == len(rows)
    for name in source.column_names:
        got, want = out.column(name), source.column(name)
        assert got.type == want.type
        for i, r in enumerate(rows):
            assert got[i].equals(want[r]), (name, i, r)
    assert out.equals(source.take(rows))


def read_sidecar(path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_rows_are_split_exactly_in_input_order(bad):
    tmp, mated = bad
    res = validate("bad.parquet", "--clean-output", "clean.parquet", "--rejects-output", "rejects.parquet")
    assert res.exit_code == 1, res.output
    rejected = sorted(verdicts("bad.parquet"))
    assert rejected == sorted([ILLEGAL, mated])
    source = pq.read_table("bad.parquet")
    clean = [r for r in range(300) if r not in rejected]
    assert_rows(pq.read_table("clean.parquet"), source, clean)
    assert_rows(pq.read_table("rejects.parquet"), source, rejected)
    for name in ("clean.parquet", "rejects.parquet"):  # compressed as the input
        meta = pq.ParquetFile(name).metadata
        assert {meta.row_group(0).column(i).compression for i in range(meta.num_columns)} == {"BROTLI"}
    assert "split: 298 clean -> clean.parquet, 2 rejected -> rejects.parquet (issues: rejects.parquet.issues.csv)" \
        in res.stderr
    assert sorted(os.listdir(tmp)) == ["bad.parquet", "clean.parquet", "rejects.parquet",
                                       "rejects.parquet.issues.csv"]
    # The clean table passes the gate; the rejects fail it again, each at its row there.
    again = validate("clean.parquet")
    assert again.exit_code == 0 and "error[" not in again.stdout
    again = validate("rejects.parquet")
    assert again.exit_code == 1
    assert [re.match(r"rejects\.parquet:(\d+):", ln).group(1) for ln in again.stdout.splitlines()
            if "error[" in ln] == ["1", "2"]


def test_sidecar_names_each_rejected_row(bad):
    _, mated = bad
    validate("bad.parquet", "--rejects-output", "rejects.parquet")
    rows = read_sidecar("rejects.parquet.issues.csv")
    assert [(r["game_index"], r["line"], r["game_line"], r["code"], r["source"], r["source_game_index"],
             r["source_line"]) for r in rows] == [
        ("0", "1", "1", "illegal-move", "bad.parquet", str(ILLEGAL), str(ILLEGAL + 1)),
        ("1", "2", "2", "result-mismatch", "bad.parquet", str(mated), str(mated + 1))]
    # Each as the issues table of an analysis of the input has it.
    sink = MemorySink()
    run(["bad.parquet"], sink, AnalysisOptions(positions="none", cross_check="off"))
    issues = [(gi, code, "" if ply is None else str(ply)) for batch in sink.batches["issues"]
              for gi, code, ply in zip(batch["game_index"], batch["code"], batch["ply"])
              if code != "result-token-mismatch"]
    assert [(int(r["source_game_index"]), r["code"], r["ply"]) for r in rows] == issues
    assert rows[0]["ply"] == "1" and int(rows[1]["ply"]) > 10
    assert rows[0]["column"] == "4" and rows[0]["san"] == "Ke3"  # the character in the movetext value
    # The rejects table validated reports the same places.
    out = validate("rejects.parquet").stdout
    assert out.startswith("rejects.parquet:1:4: error[illegal-move]: 1.Ke3 is illegal")


def test_fail_on_warning_and_ignore_move_rows_as_validate_fails(bad):
    _, mated = bad
    source = pq.read_table("bad.parquet")
    validate("bad.parquet", "--fail-on", "warning", "--clean-output", "c.parquet", "--rejects-output", "r.parquet")
    rejected = sorted(verdicts("bad.parquet", "warning"))
    assert {ILLEGAL, WARNED, mated} <= set(rejected)
    assert_rows(pq.read_table("r.parquet"), source, rejected)
    assert_rows(pq.read_table("c.parquet"), source, [r for r in range(300) if r not in rejected])
    # An ignored code fails nothing, so it rejects nothing either.
    res = validate("bad.parquet", "--ignore", "illegal-move", "--clean-output", "c2.parquet",
                   "--rejects-output", "r2.parquet")
    assert res.exit_code == 1
    assert pq.read_table("r2.parquet").column("movetext").to_pylist() == [source.column("movetext")[mated].as_py()]


def test_jobs_2_writes_the_same_files(bad):
    for jobs in ("1", "2"):
        res = validate("bad.parquet", "--jobs", jobs, "--clean-output", f"c{jobs}.parquet",
                       "--rejects-output", f"r{jobs}.parquet")
        assert res.exit_code == 1
    for name in ("c{}.parquet", "r{}.parquet", "r{}.parquet.issues.csv"):
        one, two = open(name.format(1), "rb").read(), open(name.format(2), "rb").read()
        assert one.replace(b"r1.parquet", b"") == two.replace(b"r2.parquet", b"") and len(one) > 100


def test_several_tables_go_to_the_same_two_files(bad):
    _, mated = bad
    res = validate("bad.parquet", TWIN, "bad.parquet", "--clean-output", "c.parquet", "--rejects-output", "r.parquet")
    assert res.exit_code == 1
    source = pq.read_table("bad.parquet")
    twin = pq.read_table(TWIN).cast(source.schema)  # (its schema, but for the metadata)
    both = pa.concat_tables([source, twin, source])
    rejected = [ILLEGAL, mated, 600 + ILLEGAL, 600 + mated]
    assert_rows(pq.read_table("c.parquet"), both, [r for r in range(900) if r not in rejected])
    assert_rows(pq.read_table("r.parquet"), both, rejected)
    sources = [(r["source"], r["source_game_index"]) for r in read_sidecar("r.parquet.issues.csv")]
    assert sources == [("bad.parquet", str(ILLEGAL)), ("bad.parquet", str(mated))] * 2


def test_small_row_groups_and_batches(bad, monkeypatch):
    # Rows read 10 at a time, written once 50 are held: the same rows, in row groups of 50 to 59.
    monkeypatch.setattr(split_module, "TABLE_GROUP_ROWS", 50)
    monkeypatch.setattr("chessscan.readers.tables.BATCH_ROWS", 10)
    _, mated = bad
    validate("bad.parquet", "--clean-output", "c.parquet", "--rejects-output", "r.parquet")
    source = pq.read_table("bad.parquet")
    assert_rows(pq.read_table("c.parquet"), source, [r for r in range(300) if r not in (ILLEGAL, mated)])
    meta = pq.ParquetFile("c.parquet").metadata
    groups = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    assert sum(groups) == 298 and len(groups) >= 5 and all(50 <= n < 60 for n in groups[:-1])


def test_arrow_and_feather(bad):
    _, mated = bad
    source = pq.read_table("bad.parquet")
    feather.write_feather(source, "bad.feather", chunksize=100)  # Arrow IPC (Feather v2)
    res = validate("bad.feather", "--clean-output", "c.parquet", "--rejects-output", "r.rows")
    assert res.exit_code == 1
    assert_rows(pq.read_table("c.parquet"), source, [r for r in range(300) if r not in (ILLEGAL, mated)])
    assert_rows(feather.read_table("r.rows"), source, [ILLEGAL, mated])  # the input's format
    assert open("r.rows", "rb").read(6) == b"ARROW1"
    validate("bad.parquet", "--rejects-output", "r.arrow")
    assert_rows(feather.read_table("r.arrow"), source, [ILLEGAL, mated])  # the suffix's format
    assert [split_module.table_output_format(name, kind) for name, kind in (
        ("r.rows", "parquet"), ("r.rows", "feather"), ("r.PQ", "arrow"), ("r.ipc", "parquet"))] == [
        "parquet", "arrow", "parquet", "arrow"]


def test_a_corrupt_row_group_copies_the_rows_before_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = bytearray(TWIN.read_bytes())
    meta = pq.ParquetFile(TWIN).metadata
    start = min(meta.row_group(4).column(i).data_page_offset for i in range(meta.num_columns))
    data[start:start + 4000] = b"\xff" * 4000
    (tmp_path / "cut.parquet").write_bytes(bytes(data))
    res = validate("cut.parquet", TWIN, "--clean-output", "c.parquet", "--rejects-output", "r.parquet")
    assert res.exit_code == 1 and "error[truncated-input]" in res.stdout
    # The 256 rows read are clean; the rows after the fault are in neither file. The game
    # the run counts for the fault is a rejected one with no row: its issue in the sidecar
    # with no place in the rejects table, so that clean + rejected are the games counted.
    assert "split: 556 clean -> c.parquet, 1 rejected -> r.parquet" in res.stderr
    assert "557 games: 556 ok, 1 with errors" in res.stderr
    assert pq.read_table("c.parquet").equals(pa.concat_tables([pq.read_table(TWIN).slice(0, 256),
                                                               pq.read_table(TWIN)]))
    assert pq.read_table("r.parquet").num_rows == 0
    assert [(r["game_index"], r["line"], r["code"], r["source"], r["source_game_index"], r["source_line"])
            for r in read_sidecar("r.parquet.issues.csv")] == [
        ("", "", "truncated-input", "cut.parquet", "256", "257")]


def test_rows_after_the_analysis_found_a_table_corrupt_are_not_copied(tmp_path, monkeypatch):
    # Even when the split's own reading would get past the fault (here: it reads the whole
    # table), it copies only the rows the analysis read.
    from chessscan.readers import tables

    monkeypatch.chdir(tmp_path)
    data = bytearray(TWIN.read_bytes())
    meta = pq.ParquetFile(TWIN).metadata
    start = min(meta.row_group(4).column(i).data_page_offset for i in range(meta.num_columns))
    data[start:start + 4000] = b"\xff" * 4000
    (tmp_path / "cut.parquet").write_bytes(bytes(data))
    real = tables.row_batches

    def whole_for_the_split(path, kind, rows, columns=None, *args, **kwargs):
        return real(str(TWIN) if columns is None else path, kind, rows, columns, *args, **kwargs)

    monkeypatch.setattr(tables, "row_batches", whole_for_the_split)
    res = validate("cut.parquet", "--clean-output", "c.parquet", "--rejects-output", "r.parquet")
    assert res.exit_code == 1 and "split: 256 clean -> c.parquet, 1 rejected" in res.stderr
    assert pq.read_table("c.parquet").equals(pq.read_table(TWIN).slice(0, 256))


def test_an_issues_file_the_table_split_did_not_write(bad):
    """As for text: only a file the split wrote is replaced; a link is replaced, as the table
    split replaces a link at any of its names, never writing through it."""
    side = bad[0] / "r.parquet.issues.csv"
    side.write_text("my notes\n")
    res = validate("bad.parquet", "--rejects-output", "r.parquet")
    assert res.exit_code == 2 and "r.parquet.issues.csv is in the way of the issues of the rejected games (its " \
        "first line is not the issues header): move it or choose another --rejects-output" in res.stderr
    assert side.read_text() == "my notes\n" and not (bad[0] / "r.parquet").exists()
    side.unlink()
    (bad[0] / "notes.txt").write_text("my notes\n")
    side.symlink_to("notes.txt")
    assert validate("bad.parquet", "--rejects-output", "r.parquet").exit_code == 1
    assert not side.is_symlink() and read_sidecar(side)
    assert (bad[0] / "notes.txt").read_text() == "my notes\n"


def test_an_unreadable_table_gives_no_rows(bad):
    (bad[0] / "cut.parquet").write_bytes(TWIN.read_bytes()[:-100])
    res = validate("cut.parquet", TWIN, "--clean-output", "c.parquet")
    assert res.exit_code == 2 and "error[truncated-input]" in res.stdout
    assert pq.read_table("c.parquet").equals(pq.read_table(TWIN))


@pytest.mark.parametrize("args, message", [
    (["bad.parquet", "x.pgn.zst", "--clean-output", "c.parquet"], "give game tables or text files, not both"),
    (["x.pgn.zst", "bad.parquet", "--rejects-output", "r.pgn"], "give game tables or text files, not both"),
    (["bad.parquet", "other.parquet", "--clean-output", "c.parquet"],
     "have different columns (no 'Site' in the second): split them apart"),
    (["bad.parquet", "--clean-output", "-"], "give a file name, not '-'"),
    (["bad.parquet", "--clean-output", "c.parquet.zst"], "drop the compression suffix"),
    (["bad.parquet", "--rejects-output", "/dev/null"], "is not a regular file"),
    (["bad.parquet", "--clean-output", "bad.parquet"], "is an input"),
    (["bad.parquet", "--write-baseline", "b.json"], "not a game table"),
])
def test_refused(bad, args, message):
    (bad[0] / "x.pgn.zst").write_bytes(PGN.read_bytes())
    pq.write_table(pq.read_table(TWIN).drop_columns(["Site"]), bad[0] / "other.parquet")
    before = sorted(os.listdir(bad[0]))
    res = validate(*args)
    assert res.exit_code == 2, res.output
    assert message in res.stderr and "Traceback" not in res.output
    assert sorted(os.listdir(bad[0])) == before  # nothing written


def test_a_link_at_an_output_name_is_replaced_not_written_through(bad):
    tmp, mated = bad
    (tmp / "victim").write_bytes(b"keep me")
    (tmp / "victim2").write_bytes(b"keep me too")
    os.symlink(tmp / "victim", tmp / "r.parquet")
    os.symlink(tmp / "victim2", tmp / "r.parquet.issues.csv")
    res = validate("bad.parquet", "--rejects-output", "r.parquet")
    assert res.exit_code == 1
    assert (tmp / "victim").read_bytes() == b"keep me" and (tmp / "victim2").read_bytes() == b"keep me too"
    assert not os.path.islink(tmp / "r.parquet") and not os.path.islink(tmp / "r.parquet.issues.csv")
    assert_rows(pq.read_table("r.parquet"), pq.read_table("bad.parquet"), [ILLEGAL, mated])
    assert not [n for n in os.listdir(tmp) if n.endswith(".partial")]


def test_a_disk_full_is_exit_4_and_leaves_partial_files(bad, monkeypatch):
    def full(self, table):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pq.ParquetWriter, "write_table", full)
    res = validate("bad.parquet", "--clean-output", "c.parquet")
    assert res.exit_code == 4 and "cannot write c.parquet: No space left on device" in res.stderr
    assert "c.parquet" not in os.listdir(bad[0])


def test_a_table_changed_between_the_readings_is_an_input_error(bad, monkeypatch):
    # The split's reading finds a row more than the analysis read: exit 2, the files not named.
    from chessscan.readers import tables

    real = tables.row_batches

    def one_more(path, kind, rows, columns=None, *args, **kwargs):
        yield from real(path, kind, rows, columns, *args, **kwargs)
        if columns is None:
            batch = next(real(path, kind, rows, None))[2].slice(0, 1)
            yield sum(rows), sum(rows), batch

    monkeypatch.setattr(tables, "row_batches", one_more)
    res = validate("bad.parquet", "--clean-output", "c.parquet")
    assert res.exit_code == 2 and "bad.parquet changed while it was read" in res.stderr
    assert "c.parquet" not in os.listdir(bad[0])


def test_a_stopped_split_is_kept_as_partial_tables(bad, stop_at_second_source):
    tmp, mated = bad
    res = validate("bad.parquet", TWIN, "--clean-output", "c.parquet", "--rejects-output", "r.parquet")
    assert res.exit_code == 130
    kept = re.search(r"kept as: (.*)", res.stderr).group(1).split(", ")
    assert [re.sub(r"\.[0-9a-f]{16}\.partial$", ".partial", k) for k in kept] == [
        "c.parquet.partial", "r.parquet.partial", "r.parquet.issues.csv.partial"]
    assert sorted(os.listdir(tmp)) == sorted(["bad.parquet", *kept])
    # The rows of the input read before the stop, each table whole (its footer written).
    source = pq.read_table("bad.parquet")
    assert_rows(pq.read_table(kept[0]), source, [r for r in range(300) if r not in (ILLEGAL, mated)])
    assert_rows(pq.read_table(kept[1]), source, [ILLEGAL, mated])


def test_docs_and_help_say_what_a_table_split_writes():
    from pathlib import Path

    guide = (Path(__file__).resolve().parent.parent / "docs" / "guides" / "curating.md").read_text()
    assert "### Game tables" in guide and "different columns" in guide
    help_text = CliRunner().invoke(main, ["validate", "--help"]).output
    assert "game tables: their rows" in " ".join(help_text.split())
