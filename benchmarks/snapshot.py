"""Snapshot every input's report tables, and compare two snapshots (run by hand).

A change that must not alter results (a rewrite, a compiled core) is checked by writing the
tables of every input before and after it and comparing them value for value:

    python benchmarks/snapshot.py write SNAPSHOT_DIR [--jobs N] [--cross-check MODE] [--only SUBSTRING]
    python benchmarks/snapshot.py compare OLD_DIR NEW_DIR [--nullability]

``write`` runs ``python -m chessscan analyze INPUT --positions all --fen --cross-check off``
(``--cross-check``: another mode; ``--format csv``: CSV tables) for every input in ``data/samples/`` and ``../shared/data/`` (games, messy, EPD suites,
puzzles' PGNs, perft suites read as EPD), each into its own folder, and
with ``--perft``, ``chessscan perft --suite FILE --max-nodes 1000000`` for every perft suite
(its stdout in ``perft.txt``). The code analyzed is whatever ``python -m chessscan`` imports from the
current directory. ``compare`` reads every table of both snapshots with pyarrow and prints
each difference (rows, columns, the first rows that differ), ``summary.json`` and
``perft.txt``; exit status 1 when anything differs. ``--nullability``: a schema that differs
only in which columns are declared nullable (a column declared not null, whose values were
never null) is not a difference; such tables are counted and their columns named at the end. A table is read as written: a Parquet
dataset folder (``<table>/part-*.parquet``, its parts concatenated in name order, i.e. input
order), a single ``<table>.parquet`` file (as versions before the dataset layout wrote it), or
``<table>.csv`` (with the table's declared schema), so two builds that lay the tables out
differently, or two ``--jobs`` counts that cut them into other parts, compare value for value.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
INPUT_SUFFIXES = (".pgn", ".epd", ".perft", ".pgn.zst", ".epd.zst")


def inputs(shared: Path) -> list[tuple[str, Path, Path]]:
    """(label, root, path relative to root) of every input: data/samples first, then the
    shared data folder when present."""
    found = []
    for root, label in ((REPO / "data" / "samples", "samples"), (shared, "shared")):
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            if path.is_file() and path.name.endswith(INPUT_SUFFIXES):
                found.append((f"{label}/{path.relative_to(root)}", root, path.relative_to(root)))
    return found


def is_perft_suite(path: Path) -> bool:
    return "perft" in path.parts or path.name.startswith("perft-")


def write(out: Path, jobs: int, only: str | None, perft: bool, shared: Path, cross_check: str = "off",
          fmt: str = "parquet") -> int:
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    # Run from the input's folder with a relative path, so that the source names in the
    # tables do not depend on where the checkout is; import this checkout's chessscan.
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for label, root, path in inputs(shared):
        if only and only not in label:
            continue
        folder = out / label.replace("/", "__")
        start = time.perf_counter()
        cmd = [sys.executable, "-m", "chessscan", "analyze", str(path), "-o", str(folder), "--positions",
               "all", "--fen", "--cross-check", cross_check, "--silent", "--jobs", str(jobs), "--format", fmt]
        done = subprocess.run(cmd, capture_output=True, env=env, cwd=root)
        (folder / "stderr.txt").write_bytes(done.stderr)
        status = f"exit {done.returncode}"
        if perft and is_perft_suite(path):
            p = subprocess.run([sys.executable, "-m", "chessscan", "perft", "--suite", str(path), "--max-nodes",
                                "1000000"], capture_output=True, env=env, cwd=root)
            (folder / "perft.txt").write_bytes(p.stdout)
            status += f", perft exit {p.returncode}: {p.stdout.decode(errors='replace').strip().splitlines()[-1:]}"
        print(f"{label}: {status} ({time.perf_counter() - start:.1f} s)", flush=True)
    return 0


TABLES = ("positions", "games", "perpetuals", "epd_positions", "issues", "disagreements")


def _table_files(folder: Path) -> dict[str, Path]:
    """table name -> its dataset folder or file in a report folder."""
    found = {}
    for p in folder.iterdir():
        name = p.name.rsplit(".", 1)[0] if p.suffix in (".parquet", ".csv") else p.name
        if name in TABLES and (p.suffix in (".parquet", ".csv") or p.is_dir()):
            found[name] = p
    return found


def read_table(path: Path):
    """A table of a report as one pyarrow Table (see the module doc)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if path.is_dir():
        parts = sorted(path.glob("part-*.parquet"))
        return pa.concat_tables([pq.read_table(p) for p in parts]) if parts else None
    if path.suffix == ".csv":
        sys.path.insert(0, str(REPO))
        from chessscan.reports.schema import schema_for
        from chessscan.reports.writers import read_table as read_csv

        with open(path, encoding="utf-8") as f:
            header = f.readline()
        optional = ["fen"] if path.stem == "positions" and '"fen"' in header else []
        return read_csv(path, schema_for(path.stem, optional))
    return pq.read_table(path)


def _all_nullable(schema):
    import pyarrow as pa

    return pa.schema([f.with_nullable(True) for f in schema])


def compare(old: Path, new: Path, nullability: bool = False) -> int:
    bad = 0
    nullable_only: dict[str, int] = {}  # "column: old -> new" -> tables
    labels = sorted({p.name for p in old.iterdir() if p.is_dir()} | {p.name for p in new.iterdir() if p.is_dir()})
    for label in labels:
        a, b = old / label, new / label
        if not a.is_dir() or not b.is_dir():
            print(f"{label}: only in {'old' if a.is_dir() else 'new'}")
            bad += 1
            continue
        ta, tb = _table_files(a), _table_files(b)
        if set(ta) != set(tb):
            print(f"{label}: tables differ: {sorted(ta)} vs {sorted(tb)}")
            bad += 1
        for name in sorted(set(ta) & set(tb)):
            x, y = read_table(ta[name]), read_table(tb[name])
            if x is None or y is None:
                print(f"{label}/{name}: no part in {'old' if x is None else 'new'}")
                bad += 1
                continue
            xs, ys = x.schema.remove_metadata(), y.schema.remove_metadata()
            if xs != ys and nullability and _all_nullable(xs) == _all_nullable(ys):
                for fx, fy in zip(xs, ys):
                    if fx.nullable != fy.nullable:
                        change = f"{name}.{fx.name}: nullable {fx.nullable} -> {fy.nullable}"
                        nullable_only[change] = nullable_only.get(change, 0) + 1
            elif xs != ys:
                print(f"{label}/{name}: schema differs:\n  old {x.schema.remove_metadata()}\n  new {y.schema.remove_metadata()}")
                bad += 1
            if x.num_rows != y.num_rows:
                print(f"{label}/{name}: {x.num_rows} rows vs {y.num_rows}")
                bad += 1
                continue
            for col in x.column_names:
                if col not in y.column_names:
                    continue
                cx, cy = x.column(col), y.column(col)
                if cx.type != cy.type:
                    cy = cy.cast(cx.type)
                if not cx.equals(cy):
                    lx, ly = cx.to_pylist(), cy.to_pylist()
                    rows = [i for i in range(len(lx)) if lx[i] != ly[i]]
                    if not rows:
                        continue  # the same values, other Arrow chunks or dictionaries
                    print(f"{label}/{name}: column {col!r} differs in {len(rows)} rows, first at row "
                          f"{rows[:5]}: {[lx[i] for i in rows[:3]]} vs {[ly[i] for i in rows[:3]]}")
                    bad += 1
        for extra in ("summary.json", "perft.txt"):
            fa, fb = a / extra, b / extra
            if fa.exists() or fb.exists():
                ca = fa.read_bytes() if fa.exists() else None
                cb = fb.read_bytes() if fb.exists() else None
                if extra == "summary.json" and ca and cb:
                    ca, cb = json.loads(ca), json.loads(cb)
                    for d in (ca, cb):
                        d.pop("sources", None)
                        d.pop("elapsed_seconds", None)
                if ca != cb:
                    print(f"{label}/{extra} differs")
                    bad += 1
    for change, tables in sorted(nullable_only.items()):
        print(f"{change} in {tables} table(s), values the same (--nullability)")
    print(f"{len(labels)} inputs compared, {bad} difference(s)")
    return 1 if bad else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write")
    w.add_argument("out", type=Path)
    w.add_argument("--jobs", type=int, default=1)
    w.add_argument("--only", help="only inputs whose label contains this")
    w.add_argument("--perft", action="store_true", help="also run every perft suite (slow)")
    w.add_argument("--cross-check", default="off", choices=["off", "sample", "full"])
    w.add_argument("--format", default="parquet", choices=["parquet", "csv"])
    w.add_argument("--shared", type=Path, default=SHARED, help=f"the shared data folder (default {SHARED})")
    c = sub.add_parser("compare")
    c.add_argument("old", type=Path)
    c.add_argument("new", type=Path)
    c.add_argument("--nullability", action="store_true",
                   help="a schema differing only in the columns declared nullable is no difference")
    args = parser.parse_args()
    if args.command == "write":
        return write(args.out, args.jobs, args.only, args.perft, args.shared, args.cross_check, args.format)
    return compare(args.old, args.new, args.nullability)


if __name__ == "__main__":
    sys.exit(main())
