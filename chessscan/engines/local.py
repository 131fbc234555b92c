"""Run the analysis in this process: sources -> games or EPD lines -> column buffers -> a sink.

The sink is anything with ``write(table_name, columns)`` (a
:class:`~chessscan.reports.writers.ReportWriter`, or :class:`MemorySink` for the Python API).
Buffers are flushed every ``batch_rows`` rows, so memory stays flat however large the input.

:func:`run` with ``jobs != 1`` hands over to :mod:`chessscan.engines.parallel` (worker
processes, same output); :mod:`chessscan.engines.dask` runs on a Dask cluster. Both reuse the
per-game and per-EPD-file steps defined here, so every engine computes rows the same way.
"""

from __future__ import annotations

import os
from typing import Callable, Iterable

from chessscan.analysis.epd import analyze_epd_record
from chessscan.analysis.game import GAME_NAME_COLUMNS, Tally, add_issue, analyze_game, analyze_games
from chessscan.analysis.rows import PositionRows
from chessscan.analysis.options import AnalysisOptions
from chessscan.analysis.sampling import BASE_BIT, Candidate, RowsCopy, Sampler, base_sampled
from chessscan.readers.epd import read_epd
from chessscan.readers.inputs import is_epd_source
from chessscan.readers.pgn import read_games
from chessscan.readers.sources import open_source, source_name, source_size
from chessscan.readers.tables import is_table
from chessscan.reports.filters import PER_FILE_CODES
from chessscan.reports.writers import buffered_rows, clear, new_buffers

#: Rows buffered per table before they go to the sink. Small enough that the column lists
#: stay in cache as they grow: at 65,536 rows, growing a game's columns cost about 3x more.
DEFAULT_BATCH_ROWS = 8192


def is_epd(path: str) -> bool:
    """True if ``path`` holds EPD: ``.epd`` files (optionally compressed); ``.pgn`` files are
    PGN; any other file, and stdin (``'-'``), is EPD when its first record starts with a FEN
    piece placement (:func:`~chessscan.readers.inputs.is_epd_source`)."""
    return is_epd_source(os.fspath(path))


def tables_for(paths: Iterable[str], options: AnalysisOptions) -> tuple[str, ...]:
    """Names of the report tables a run over ``paths`` writes."""
    paths = list(paths)
    names = []
    if not paths or any(not is_epd(p) for p in paths):
        names += ["positions", "games", "perpetuals"]
    if any(is_epd(p) for p in paths):
        names.append("epd_positions")
    names.append("issues")
    if options.cross_check != "off" and "games" in names:
        names.append("disagreements")
    return tuple(names)


def optional_columns(table: str, options: AnalysisOptions) -> tuple[str, ...]:
    """Optional columns ``options`` enables in ``table`` (``("fen",)`` for positions with
    ``fen=True``, ``("moves_key",)`` for games with ``moves_key=True``, else none)."""
    if table == "games":
        return ("moves_key",) if options.moves_key else ()
    return ("fen",) if options.fen and table == "positions" else ()


def new_tables(names: Iterable[str], options: AnalysisOptions, batch_rows: int | None = None) -> dict:
    """Empty column buffers for each table in ``names``: ``{table: {column: []}}``, but
    typed buffers (:class:`~chessscan.analysis.rows.PositionRows`) for ``positions``, room
    for a batch of ``batch_rows`` (and the game that ends it past them) when given."""
    # (A batch ends after the game that reaches batch_rows: the buffers' size doubles to
    # 2 * batch_rows in the first one; taken at once, no rows are copied on the way.)
    capacity = 2 * batch_rows if batch_rows else None
    return {t: PositionRows(fen=options.fen, capacity=capacity) if t == "positions"
            else new_buffers(t, optional_columns(t, options)) for t in names}


class MemorySink:
    """Keeps every written batch in memory, for :func:`chessscan.scan` (small inputs).

    Accepts column buffers of Python lists or of Arrow arrays (as the parallel engine sends);
    both are stored as lists.
    """

    def __init__(self) -> None:
        self.batches: dict[str, list[dict[str, list]]] = {}

    def write(self, table_name: str, columns) -> None:
        if isinstance(columns, PositionRows):
            columns = columns.to_arrays()
        self.batches.setdefault(table_name, []).append(
            {k: v.to_pylist() if hasattr(v, "to_pylist") else list(v) for k, v in columns.items()})


def _progress(paths: list[str], enabled: bool, label: str = "analyze"):
    """The run's :class:`~chessscan.engines.progress.Progress` bar, or None when disabled."""
    if not enabled:
        return None
    from chessscan.engines.progress import Progress

    sizes = [source_size(p) for p in paths]
    return Progress(sum(sizes) if all(s is not None for s in sizes) else None, label)


def count_progress(bar, tally: Tally) -> None:
    """Show ``tally``'s games so far on ``bar`` (a Progress, or a plain bar that has no count)."""
    count = getattr(bar, "count", None)
    if count is not None:
        count(tally.games, tally.games_with_errors)


def analyze_one(raw, tables: dict[str, dict[str, list]], options: AnalysisOptions, tally: Tally,
                sampler=None, deferred=None) -> None:
    """Analyze one game (a :class:`~chessscan.readers.pgn.RawGame`) into ``tables`` and
    ``tally``, and cross-check it against python-chess when ``options`` asks for it (the
    ``disagreements`` table must then be in ``tables``).

    With ``cross_check="sample"``, either ``sampler`` (a
    :class:`~chessscan.analysis.sampling.Sampler` fed every game of the run in input order)
    decides, or, for a piece of a source analyzed apart (a chunk, a shard), the base rate is
    decided here and a game that a rare kind may sample goes to ``deferred`` (a
    :class:`~chessscan.analysis.sampling.Deferred`) for :func:`replay_deferred`.
    """
    cross_check = options.cross_check
    if cross_check == "off":
        analyze_game(raw, tables, options, tally)
        return
    row_start = len(tables["positions"])
    kinds = analyze_game(raw, tables, options, tally)
    reasons = 0
    later = False  # whether replay_deferred counts the game's sample reasons
    if cross_check == "sample":
        if sampler is not None:
            reasons = sampler.reasons(raw.source, raw.index, kinds)
        else:
            reasons = BASE_BIT if base_sampled(raw.source, raw.index) else 0
            if kinds and deferred.offer(kinds):
                rows = None
                if not reasons and options.positions == "all":
                    rows = RowsCopy(tables["positions"], row_start)
                deferred.keep(Candidate(raw, kinds, bool(reasons), rows))
                later = True
        if not reasons:
            return
    from chessscan.analysis.crosscheck import cross_check_game

    # With every position row kept, the cross-check compares the values written.
    rows = tables["positions"] if options.positions == "all" else None
    result = cross_check_game(raw, tables["disagreements"], rows, row_start, all_counts=cross_check == "full")
    if result is None:
        return  # a variant chessscan does not play
    compared, found = result
    tally.cross_checked_games += 1
    tally.cross_checked_positions += compared
    tally.disagreements += found
    if reasons and not later:
        tally.count_sampled(reasons)


def new_sampler(options: AnalysisOptions):
    """The run's :class:`~chessscan.analysis.sampling.Sampler` with ``--cross-check sample``,
    else None."""
    if options.cross_check != "sample":
        return None
    return Sampler()


def replay_deferred(deferred, sampler, tally: Tally) -> dict[str, list] | None:
    """Take the decision :func:`analyze_one` left to the input-order pass for the games of
    one piece (``deferred``, a :class:`~chessscan.analysis.sampling.Deferred`; ``sampler``
    the run's :class:`~chessscan.analysis.sampling.Sampler`, fed the pieces in input
    order), cross-check the games it samples that were not cross-checked yet, and count them
    in ``tally``. Returns the ``disagreements`` rows found (column buffers), or None."""
    chosen = deferred.settle(sampler)
    if not chosen:
        return None
    from chessscan.analysis.crosscheck import cross_check_game

    found_rows = new_buffers("disagreements", ())
    for candidate, reasons in chosen:
        if not candidate.checked:
            result = cross_check_game(candidate.raw, found_rows, candidate.rows, 0, all_counts=False)
            if result is None:
                continue
            compared, found = result
            tally.cross_checked_games += 1
            tally.cross_checked_positions += compared
            tally.disagreements += found
        tally.count_sampled(reasons)
    return found_rows if found_rows["game_index"] else None


class _PgnGames:
    """The games of a PGN source (:func:`game_source`)."""

    def __init__(self, path: str, source: str | None) -> None:
        self.name = source if source is not None else source_name(path)
        self.stream = open_source(path, name=self.name)

    def __enter__(self) -> "_PgnGames":
        return self

    def __exit__(self, *exc) -> None:
        self.stream.close()

    @property
    def bytes_read(self) -> int:
        return self.stream.bytes_read

    def __iter__(self):
        return read_games(self.stream, source=self.name)


def game_source(path: str, options: AnalysisOptions, source: str | None = None):
    """The games of the PGN source or game table (:func:`~chessscan.readers.tables.is_table`)
    ``path``, as a context manager: iterating over it gives the RawGames in input order;
    ``name`` is the source's name in the rows (``source``, default its display name) and
    ``bytes_read`` the input read so far (for progress). Raises ``OSError`` when a PGN source
    cannot be opened (a table's problems are games with its issue)."""
    if is_table(path):
        from chessscan.readers.tables import TableReader

        return TableReader(path, options.moves_column, source=source)
    return _PgnGames(path, source)


def run_epd_source(path: str, tables: dict[str, dict[str, list]], tally: Tally,
                   flush: Callable[[], None], bar=None, batch_rows: int = DEFAULT_BATCH_ROWS,
                   source: str | None = None) -> None:
    """Analyze every record of the EPD source ``path`` into ``tables`` (``epd_positions`` and
    ``issues``), calling ``flush()`` every ``batch_rows`` rows; ``bar`` (tqdm or None) counts
    input bytes; ``source`` overrides the name written in the rows (default
    :func:`~chessscan.readers.sources.source_name`). Raises ``OSError`` if ``path`` cannot be
    opened."""
    name = source if source is not None else source_name(path)
    with open_source(path, name=name) as stream:
        seen = 0
        rows = tables["epd_positions"]["line"]
        records = 0
        for rec in read_epd(stream, source=name):
            records += 1
            analyze_epd_record(rec, tables, tally)
            if len(rows) >= batch_rows:
                flush()
                if bar is not None:
                    now = stream.bytes_read
                    bar.update(now - seen)
                    seen = now
        if not records:
            add_no_games_issue(tables["issues"], tally, name, epd=True)
        if bar is not None:
            bar.update(stream.bytes_read - seen)


def add_no_games_issue(issues: dict, tally: Tally, source: str, epd: bool = False) -> None:
    """Add the ``empty-input`` warning of a source that was read whole and gave no game (PGN:
    only comments, ``%`` escape lines, white space) or no record (EPD: only ``#`` comment
    lines) to the ``issues`` buffers: a gate must not pass a file whose games are all gone.
    The row has no game, line or ply, as an empty file's."""
    what = ("no EPD record in it: only comment lines and white space" if epd
            else "no game in it: only comments, escape lines and white space")
    add_issue(issues, tally, source, None, None, None, None, "warning", "empty-input", what)


def accepts_arrow(sink) -> bool:
    """Whether ``sink.write`` takes Arrow arrays as column buffers (a ReportWriter or a
    MemorySink does; any other sink gets Python lists)."""
    from chessscan.reports.writers import ReportWriter

    return isinstance(sink, (ReportWriter, MemorySink)) or bool(getattr(sink, "accepts_arrow", False))


def sink_columns(buffers, arrow: bool):
    """The column buffers a sink's ``write`` gets for ``buffers``: the buffers themselves
    (lists), or for the typed positions rows their Arrow arrays (``arrow``) or lists."""
    if isinstance(buffers, PositionRows):
        arrays = buffers.to_arrays()
        return arrays if arrow else {k: v.to_pylist() for k, v in arrays.items()}
    return buffers


def flush_tables(sink, tables: dict, names) -> None:
    """Write the buffered rows of the tables ``names`` to ``sink`` and empty the buffers."""
    from chessscan.reports.writers import ReportWriter

    arrow = accepts_arrow(sink)
    direct = isinstance(sink, ReportWriter)  # takes the typed positions rows as they are (to_record_batch)
    for name in names:
        buffers = tables[name]
        if buffered_rows(buffers):
            sink.write(name, buffers if direct and isinstance(buffers, PositionRows) else sink_columns(buffers, arrow))
            clear(buffers)


def run(paths: Iterable[str], sink, options: AnalysisOptions = AnalysisOptions(),
        progress: bool = False, batch_rows: int = DEFAULT_BATCH_ROWS, jobs: int | None = 1,
        progress_label: str = "analyze") -> Tally:
    """Analyze every source in ``paths`` (paths, or ``'-'`` for stdin; ``.epd`` files and EPD
    on stdin as EPD, anything else as PGN: :func:`is_epd`), writing the tables of
    :func:`tables_for` to ``sink`` in batches. Returns the tally. Raises ``OSError`` when a
    source cannot be opened; bad content never raises.

    ``jobs``: worker processes; 1 (the default) analyzes in this process, None uses every
    core (:func:`~chessscan.engines.parallel.auto_jobs`: one process on 2 cores or fewer), N > 1 hands over to :func:`chessscan.engines.parallel.run_parallel`, whose output
    (rows, their order, the tally) is identical. ``progress``: a bar on stderr counting input
    bytes, named ``progress_label``.
    """
    if jobs is None:
        from chessscan.engines.parallel import auto_jobs

        jobs = auto_jobs()
    if jobs != 1:
        from chessscan.engines.parallel import run_parallel

        return run_parallel(paths, sink, options, progress=progress, batch_rows=batch_rows, jobs=jobs,
                            progress_label=progress_label)
    paths = [os.fspath(p) for p in paths]
    names = tables_for(paths, options)
    tables = new_tables(names, options, batch_rows)
    if "games" in tables and getattr(sink, "reads_game_names", False):
        # A sink that reads only the games columns naming a game: no other is filled.
        tables["games"] = {name: [] for name in GAME_NAME_COLUMNS}
    if "perpetuals" in tables and not getattr(sink, "reads_perpetuals", True):
        # A sink that ignores the perpetuals rows: none is made (the tally still counts the runs).
        del tables["perpetuals"]
        names = tuple(name for name in names if name != "perpetuals")
    tally = Tally()
    tally.cross_check_mode = options.cross_check
    sampler = new_sampler(options)
    bar = _progress(paths, progress, progress_label)

    def flush() -> None:
        flush_tables(sink, tables, names)

    def flush_positions() -> None:
        flush_tables(sink, tables, ("positions",))

    def next_source(name: str) -> None:
        # The once-a-file rows of the sources before go after their other rows and before
        # this one's, whatever the batches (as with --jobs and Dask).
        if getattr(sink, "holding", None) is not None and (
                sink.holding(name) or not PER_FILE_CODES.isdisjoint(tables["issues"]["code"])):
            flush()
            sink.next_source(name)

    current = [None]  # the game being analyzed (a stop that cuts it short drops its rows)
    try:
        for path in paths:
            if is_epd(path):
                next_source(source_name(path))
                run_epd_source(path, tables, tally, flush, bar, batch_rows)
                continue
            with game_source(path, options) as stream:
                seen = 0
                positions = tables["positions"]
                games = tables["games"]["game_index"]
                issues = tables["issues"]["code"]
                read = 0
                name = stream.name
                next_source(name)
                if options.cross_check == "off" and bar is None:
                    # analyze_one's whole work then, in a compiled loop: no Python-level step a game.
                    read = analyze_games(stream, tables, options, tally, flush_positions, flush, batch_rows, current)
                else:
                    for raw in stream:
                        read += 1
                        current[0] = raw
                        analyze_one(raw, tables, options, tally, sampler)
                        current[0] = None
                        # The positions rows (~85 a game) alone: the other tables' list buffers
                        # convert to Arrow at a cost per batch, better paid for many rows at once.
                        if len(positions) >= batch_rows:
                            flush_positions()
                        if len(games) >= batch_rows or len(issues) >= batch_rows:
                            flush()
                        if bar is not None:
                            now = stream.bytes_read
                            bar.update(now - seen)
                            seen = now
                            count_progress(bar, tally)
                if not read:
                    add_no_games_issue(tables["issues"], tally, name)
        flush()
    except KeyboardInterrupt:
        # A stop (Ctrl-C, SIGTERM): the games analyzed whole are written, their games and
        # issues rows beside their positions; the game cut short leaves no row.
        if current[0] is not None:
            drop_game_rows(tables, current[0].source, current[0].index)
        try:
            flush()
        except Exception:  # (a table that cannot be written is absent; the stop goes on)
            pass
        raise
    finally:
        if bar is not None:
            bar.close()
    return tally


def drop_game_rows(tables: dict, source: str, game_index: int) -> None:
    """Remove the rows of game ``game_index`` of ``source`` from the end of every buffer in
    ``tables`` (rows are appended game by game, so they are the last ones)."""
    for buffers in tables.values():
        if isinstance(buffers, PositionRows):
            n = len(buffers)
            gi, sid, names = buffers.game_index, buffers.source_id, buffers.sources
            while n and gi[n - 1] == game_index and names[sid[n - 1]] == source:
                n -= 1
            buffers.truncate(n)
        elif "game_index" in buffers and "source" in buffers:
            gi, src = buffers["game_index"], buffers["source"]
            n = len(gi)
            while n and gi[n - 1] == game_index and src[n - 1] == source:
                n -= 1
            for column in buffers.values():
                del column[n:]



def report_input_problems(problems, sink, tally: Tally) -> None:
    """Write one ``issues`` row per :class:`~chessscan.readers.inputs.InputProblem` (a path
    that gives no games: missing, unreadable, not text, empty) to ``sink``, and count it in
    ``tally``. The rows have no game, line or ply."""
    if not problems:
        return
    issues = new_buffers("issues")
    for p in problems:
        add_issue(issues, tally, p.source, None, None, None, None, p.severity, p.code, p.message)
    sink.write("issues", issues)
