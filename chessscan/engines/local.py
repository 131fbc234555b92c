"""Run the analysis in this process: sources -> games or EPD lines -> column buffers -> a sink.

The sink is anything with ``write(table_name, columns)`` (a
:class:`~chessscan.reports.writers.ReportWriter`, or :class:`MemorySink` for the Python API).
Buffers are flushed every ``batch_rows`` rows, so memory stays flat however large the input.
"""

from __future__ import annotations

import os
import sys
from typing import Iterable

from chessscan.analysis.epd import analyze_epd_record
from chessscan.analysis.game import Tally, analyze_game
from chessscan.analysis.options import AnalysisOptions
from chessscan.readers.epd import read_epd
from chessscan.readers.pgn import read_games
from chessscan.readers.sources import open_source, source_name, source_size
from chessscan.reports.writers import buffered_rows, clear, new_buffers

DEFAULT_BATCH_ROWS = 65_536
_COMPRESSION_SUFFIXES = (".gz", ".bz2", ".zst", ".zstd")


def is_epd(path: str) -> bool:
    """True if ``path`` names an EPD file (``.epd``, optionally compressed); PGN otherwise."""
    name = os.fspath(path).lower()
    for suffix in _COMPRESSION_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return name.endswith(".epd")


def tables_for(paths: Iterable[str], options: AnalysisOptions) -> tuple[str, ...]:
    """Names of the report tables a run over ``paths`` writes."""
    paths = list(paths)
    names = []
    if any(not is_epd(p) for p in paths):
        names += ["positions", "games", "perpetuals"]
    if any(is_epd(p) for p in paths):
        names.append("epd_positions")
    names.append("issues")
    if options.cross_check != "off" and "games" in names:
        names.append("disagreements")
    return tuple(names)


class MemorySink:
    """Keeps every written batch in memory, for :func:`chessscan.scan` (small inputs)."""

    def __init__(self) -> None:
        self.batches: dict[str, list[dict[str, list]]] = {}

    def write(self, table_name: str, columns: dict[str, list]) -> None:
        self.batches.setdefault(table_name, []).append({k: list(v) for k, v in columns.items()})


def _progress(paths: list[str], enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    sizes = [source_size(p) for p in paths]
    total = sum(sizes) if all(s is not None for s in sizes) else None
    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, file=sys.stderr,
                desc="analyze", leave=False, dynamic_ncols=True)


def run(paths: Iterable[str], sink, options: AnalysisOptions = AnalysisOptions(),
        progress: bool = False, batch_rows: int = DEFAULT_BATCH_ROWS) -> Tally:
    """Analyze every source in ``paths`` (paths, or ``'-'`` for stdin; ``.epd`` files as EPD,
    anything else as PGN), writing the tables of :func:`tables_for` to ``sink`` in batches.
    Returns the tally. Raises ``OSError`` when a source cannot be opened; bad content never
    raises.
    """
    paths = [os.fspath(p) for p in paths]
    names = tables_for(paths, options)
    optional = ("fen",) if options.fen else ()
    tables = {t: new_buffers(t, optional if t == "positions" else ()) for t in names}
    tally = Tally()
    bar = _progress(paths, progress)
    cross_check = options.cross_check
    if cross_check != "off":
        from chessscan.analysis.crosscheck import cross_check_game, sampled

    def flush() -> None:
        for name in names:
            if buffered_rows(tables[name]):
                sink.write(name, tables[name])
                clear(tables[name])

    try:
        for path in paths:
            name = source_name(path)
            with open_source(path) as stream:
                seen = 0
                if is_epd(path):
                    records = read_epd(stream, source=name)
                    for rec in records:
                        analyze_epd_record(rec, tables, tally)
                        if len(tables["epd_positions"]["line"]) >= batch_rows:
                            flush()
                    continue
                for raw in read_games(stream, source=name):
                    rare = analyze_game(raw, tables, options, tally)
                    if cross_check == "full" or (cross_check == "sample" and sampled(raw.index, rare)):
                        compared, found = cross_check_game(raw, tables["disagreements"])
                        tally.cross_checked_games += 1
                        tally.cross_checked_positions += compared
                        tally.disagreements += found
                    if len(tables["positions"]["ply"]) >= batch_rows or len(tables["games"]["game_index"]) >= batch_rows:
                        flush()
                    if bar is not None:
                        now = stream.bytes_read
                        bar.update(now - seen)
                        seen = now
        flush()
    finally:
        if bar is not None:
            bar.close()
    return tally


run_games = run  # the name used before EPD input existed
