"""Parquet writer options and column types for the positions table, by measurement (run by hand).

    python benchmarks/parquet_options.py [PATH] [--repeat N]

Analyzes PATH (default ``<repo>/../shared/data/games/lichess-magnus.pgn.zst``) once into a
positions table, then:

1. **Column types**: the text columns as plain strings, or the low-cardinality ones as Arrow
   dictionaries (what chessscan writes), or SAN/UCI/checkers as dictionaries too: the file
   size, the write time and the memory pandas needs for the table read back
   (``pd.read_parquet``, ``memory_usage(deep=True)``).
2. **Writer options**, one at a time from the options chessscan uses (marked ``*``): the
   compression codec and level, dictionary pages (text columns only, every column, none),
   column statistics, row-group size and data page version. Each line: ns per row written
   (best of ``--repeat`` writes of the whole table, ``pyarrow.parquet.ParquetWriter``, in
   row groups as chessscan cuts them) and the file size.

Times are CPU seconds of this process (the writer is single-threaded here), so a busy
shared machine skews them less than wall time.
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


def positions_table(path: str):
    """The positions table of ``path`` as chessscan writes it."""
    import pyarrow.parquet as pq

    from chessscan.analysis.options import AnalysisOptions
    from chessscan.engines.local import run, tables_for
    from chessscan.reports.writers import ReportWriter

    out = tempfile.mkdtemp(prefix="chessscan-pq-")
    options = AnalysisOptions(cross_check="off")
    with ReportWriter(out, tables=tables_for([path], options)) as writer:
        run([path], writer, options)
    return pq.read_table(os.path.join(out, "positions.parquet"))


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


def write(table, path: str, *, compression="zstd", level=None, dictionary="text", statistics=True,
          row_group=65_536, page_version="1.0") -> float:
    """Write ``table`` with these options; returns CPU seconds."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if dictionary == "text":
        use_dictionary = [f.name for f in table.schema
                          if pa.types.is_string(f.type) or pa.types.is_dictionary(f.type)]
    else:
        use_dictionary = dictionary == "all"
    t0 = time.process_time()
    with pq.ParquetWriter(path, table.schema, compression=compression, compression_level=level,
                          use_dictionary=use_dictionary, write_statistics=statistics,
                          data_page_version=page_version) as w:
        for start in range(0, table.num_rows, row_group):
            w.write_table(table.slice(start, row_group), row_group_size=row_group)
    return time.process_time() - t0


def best(table, path, repeat, **options) -> tuple[float, int]:
    seconds = min(write(table, path, **options) for _ in range(repeat))
    return seconds / table.num_rows * 1e9, os.path.getsize(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("path", nargs="?", default=str(DEFAULT_INPUT))
    ap.add_argument("--repeat", type=int, default=3, help="writes per measurement (best is kept)")
    args = ap.parse_args()
    import pandas as pd
    import pyarrow as pa

    from chessscan.reports.schema import schema_for

    table = positions_table(args.path)
    print(f"input: {args.path}: positions table of {table.num_rows:,} rows")
    low = [f.name for f in schema_for("positions") if pa.types.is_dictionary(f.type)]
    tmp = tempfile.mkdtemp(prefix="chessscan-pq-")
    out = os.path.join(tmp, "positions.parquet")

    print("\ncolumn types (zstd, dictionary pages for text, 65,536-row groups)")
    print(f"{'text columns':44} {'ns/row':>7} {'MiB':>6} {'pandas MiB':>11}")
    variants = [("all plain strings", []), (f"dictionaries: {', '.join(low)}", low),
                ("dictionaries: those + san, uci, checkers", low + ["san", "uci", "checkers"])]
    for label, columns in variants:
        t = retyped(table, columns)
        ns, size = best(t, out, args.repeat)
        memory = pd.read_parquet(out).memory_usage(deep=True).sum()
        print(f"{label:44} {ns:7.0f} {size / 2**20:6.2f} {memory / 2**20:11.1f}")

    table = retyped(table, low)
    print("\nwriter options, one at a time from chessscan's (*)")
    print(f"{'option':44} {'ns/row':>7} {'MiB':>6}")
    trials = [
        ("* zstd level 1 (default level), dictionary pages for text, statistics, 65,536 rows, pages v1", {}),
        ("zstd level 3", {"level": 3}),
        ("zstd level 6", {"level": 6}),
        ("snappy", {"compression": "snappy"}),
        ("lz4", {"compression": "lz4"}),
        ("no compression", {"compression": "none"}),
        ("dictionary pages for every column", {"dictionary": "all"}),
        ("no dictionary pages", {"dictionary": "none"}),
        ("no statistics", {"statistics": False}),
        ("row groups of 16,384 rows", {"row_group": 16_384}),
        ("row groups of 262,144 rows", {"row_group": 262_144}),
        ("row groups of 1,048,576 rows", {"row_group": 1_048_576}),
        ("data pages v2", {"page_version": "2.0"}),
        ("snappy, row groups of 262,144 rows", {"compression": "snappy", "row_group": 262_144}),
        ("lz4, row groups of 262,144 rows", {"compression": "lz4", "row_group": 262_144}),
    ]
    for label, options in trials:
        ns, size = best(table, out, args.repeat, **options)
        print(f"{label:44.44} {ns:7.0f} {size / 2**20:6.2f}")
    os.remove(out)
    os.rmdir(tmp)


if __name__ == "__main__":
    main()
