"""Parquet encodings, writer options and column types for the positions table, by measurement
(run by hand).

    python benchmarks/parquet_options.py [PATH] [--repeat N] [--only SECTION]

Analyzes PATH (default ``<repo>/../shared/data/games/lichess-magnus.pgn.zst``) once into a
positions table, holds it in memory, then:

1. **Per column** (``columns``): each column alone, written in every encoding that fits its
   type (dictionary pages, plain, DELTA_BINARY_PACKED, BYTE_STREAM_SPLIT, the byte-array
   deltas, RLE for booleans), zstd or no compression, with or without min/max statistics:
   ns per row and bytes per row. Columns are encoded independently, so the sum over the
   columns of one choice each is the table's cost. chessscan's choice
   (``chessscan.reports.writers.POSITIONS_ENCODINGS``, zstd at ``POSITIONS_ZSTD_LEVELS``'
   levels) is marked ``*``.
2. **Whole table** (``table``): chessscan's per-column choice against the choice before it
   (every text column dictionary-encoded, the rest plain, all zstd, statistics but for the
   moves' text) and against pyarrow's defaults; then one option changed at a time from
   chessscan's: zstd level, row-group size, data page version, rows per data page.
3. **Column types** (``types``): the text columns as plain strings, or the low-cardinality
   ones as Arrow dictionaries (what chessscan writes), or SAN/UCI/checkers as dictionaries
   too: the file size, the write time and the memory pandas needs for the table read back.

Each time is the best of ``--repeat`` writes of the whole table with
``pyarrow.parquet.ParquetWriter``, in row groups as chessscan cuts them (65,536 rows), in
CPU seconds of this process (the writer is single-threaded here), so a busy shared machine
skews them less than wall time.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
DEFAULT_INPUT = REPO.parent / "shared" / "data" / "games" / "lichess-magnus.pgn.zst"
ROW_GROUP = 65_536


def positions_table(path: str):
    """The positions table of ``path`` as chessscan writes it, read back into memory."""
    import pyarrow.parquet as pq

    from chessscan.analysis.options import AnalysisOptions
    from chessscan.engines.local import run, tables_for
    from chessscan.reports.writers import ReportWriter

    out = tempfile.mkdtemp(prefix="chessscan-pq-")
    options = AnalysisOptions(cross_check="off")
    with ReportWriter(out, tables=tables_for([path], options)) as writer:
        run([path], writer, options)
    table = pq.read_table(os.path.join(out, "positions.parquet"))
    for name in os.listdir(out):
        os.remove(os.path.join(out, name))
    os.rmdir(out)
    return table


def retyped(table, dictionary_columns):
    """``table`` with exactly ``dictionary_columns`` as dictionaries, other text as strings."""
    import pyarrow as pa

    fields = []
    for f in table.schema:
        if pa.types.is_dictionary(f.type) or pa.types.is_string(f.type):
            f = f.with_type(pa.dictionary(pa.int32(), pa.string()) if f.name in dictionary_columns
                            else pa.string())
        fields.append(f)
    schema = pa.schema(fields, metadata=table.schema.metadata)
    return table.cast(schema)


def write(table, path: str, encodings: dict | None = None, row_group: int = ROW_GROUP, **extra) -> float:
    """Write ``table`` with chessscan's options for its schema, ``encodings`` (``{column:
    (encoding, codec, statistics)}``) in place of its per-column choice and ``extra``
    ParquetWriter arguments on top; returns CPU seconds."""
    import pyarrow.parquet as pq

    from chessscan.reports.writers import column_encodings, parquet_options

    options = parquet_options(table.schema, encodings={**column_encodings(table.schema), **(encodings or {})})
    level = extra.pop("compression_level", None)
    if level is not None:  # (a codec without levels refuses one)
        options["compression_level"] = {name: level for name, codec in options["compression"].items()
                                         if codec == "zstd"}
    options.update(extra)
    t0 = time.process_time()
    with pq.ParquetWriter(path, table.schema, **options) as w:
        for start in range(0, table.num_rows, row_group):
            w.write_table(table.slice(start, row_group), row_group_size=row_group)
    return time.process_time() - t0


def best(table, path, repeat, encodings=None, **options) -> tuple[float, float]:
    """(ns per row, bytes per row): the best of ``repeat`` writes."""
    seconds = min(write(table, path, encodings, **options) for _ in range(repeat))
    return seconds / table.num_rows * 1e9, os.path.getsize(path) / table.num_rows


def candidates(arrow_type) -> list[str]:
    """The Parquet encodings that fit a column of ``arrow_type``."""
    import pyarrow as pa

    if pa.types.is_boolean(arrow_type):
        return ["PLAIN", "RLE"]
    if pa.types.is_dictionary(arrow_type):
        return ["dictionary", "PLAIN"]
    if pa.types.is_string(arrow_type):
        return ["dictionary", "PLAIN", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY"]
    return ["dictionary", "PLAIN", "DELTA_BINARY_PACKED", "BYTE_STREAM_SPLIT"]


def per_column(table, out: str, repeat: int) -> None:
    from chessscan.reports.writers import column_encodings

    chosen = column_encodings(table.schema)
    print("\nper column: ns/row and bytes/row of the column alone; * chessscan's choice")
    print(f"{'column':16} {'encoding':24} {'codec':5} {'stats':5} {'ns/row':>7} {'B/row':>7}")
    total_ns = total_bytes = 0.0
    for f in table.schema:
        one = table.select([f.name])
        for encoding in candidates(f.type):
            for codec in ("zstd", "none"):
                for statistics in (False, True):
                    option = (encoding, codec, statistics)
                    ns, size = best(one, out, repeat, {f.name: option})
                    mark = "*" if option == chosen[f.name] else " "
                    if mark == "*":
                        total_ns += ns
                        total_bytes += size
                    print(f"{mark}{f.name:15} {encoding:24} {codec:5} {'yes' if statistics else 'no':5} "
                          f"{ns:7.1f} {size:7.3f}", flush=True)
    print(f"chessscan's choices summed over the columns: {total_ns:.0f} ns/row, {total_bytes:.2f} B/row")


def whole_table(table, out: str, repeat: int) -> None:
    import pyarrow as pa

    from chessscan.reports.writers import _NO_STATISTICS

    before = {f.name: ("dictionary" if pa.types.is_string(f.type) or pa.types.is_dictionary(f.type) else "PLAIN",
                       "zstd", f.name not in _NO_STATISTICS) for f in table.schema}
    defaults = {f.name: ("dictionary" if not pa.types.is_boolean(f.type) else "PLAIN", "snappy", True)
                for f in table.schema}
    print("\nwhole table: ns/row and bytes/row")
    print(f"{'setting':64} {'ns/row':>7} {'B/row':>7}")
    trials = [
        ("* chessscan: per-column encodings (POSITIONS_ENCODINGS), zstd level 1 (POSITIONS_ZSTD_LEVELS), "
         "65,536 rows, pages v1", None, {}),
        ("before: text dictionary-encoded, the rest plain; zstd; statistics but for moves' text", before,
         {"compression_level": 1}),
        ("pyarrow's defaults (dictionary pages everywhere, snappy, statistics)", defaults, {}),
        ("zstd level 3", None, {"compression_level": 3}),
        ("row groups of 16,384 rows", None, {"row_group": 16_384}),
        ("row groups of 262,144 rows", None, {"row_group": 262_144}),
        ("data pages v2", None, {"data_page_version": "2.0"}),
        ("data pages of at most 20,000 rows (recent pyarrow's default)", None, {"max_rows_per_page": 20_000}),
    ]
    for label, encodings, options in trials:
        ns, size = best(table, out, repeat, encodings, **options)
        print(f"{label:64.64} {ns:7.0f} {size:7.3f}", flush=True)


def column_types(table, out: str, repeat: int) -> None:
    import pandas as pd
    import pyarrow as pa

    from chessscan.reports.schema import schema_for

    low = [f.name for f in schema_for("positions") if pa.types.is_dictionary(f.type)]
    print("\ncolumn types (written with chessscan's per-column encodings)")
    print(f"{'text columns':44} {'ns/row':>7} {'B/row':>7} {'pandas MiB':>11}")
    variants = [("all plain strings", []), (f"dictionaries: {', '.join(low)}", low),
                ("dictionaries: those + san, uci, checkers", low + ["san", "uci", "checkers"])]
    for label, columns in variants:
        ns, size = best(retyped(table, columns), out, repeat)
        memory = pd.read_parquet(out).memory_usage(deep=True).sum()
        print(f"{label:44} {ns:7.0f} {size:7.3f} {memory / 2**20:11.1f}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", nargs="?", default=str(DEFAULT_INPUT))
    ap.add_argument("--repeat", type=int, default=5, help="writes per measurement (the best is kept)")
    ap.add_argument("--only", choices=["columns", "table", "types"], help="one section only")
    args = ap.parse_args()

    table = positions_table(args.path)
    print(f"input: {args.path}: positions table of {table.num_rows:,} rows, best of {args.repeat} writes")
    tmp = tempfile.mkdtemp(prefix="chessscan-pq-")
    out = os.path.join(tmp, "positions.parquet")
    try:
        if args.only in (None, "columns"):
            per_column(table, out, args.repeat)
        if args.only in (None, "table"):
            whole_table(table, out, args.repeat)
        if args.only in (None, "types"):
            column_types(table, out, args.repeat)
    finally:
        if os.path.exists(out):
            os.remove(out)
        os.rmdir(tmp)


if __name__ == "__main__":
    main()
