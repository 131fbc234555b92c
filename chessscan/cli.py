"""Command line: ``chessscan analyze``, ``chessscan perft``.

A thin click layer: it parses options into :class:`AnalysisOptions` and calls the library.
stdout carries data, stderr progress and summaries; usage errors exit 2.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import click

from chessscan.analysis.options import CROSS_CHECK_CHOICES, POSITIONS_CHOICES, AnalysisOptions

CONTEXT = {"help_option_names": ["-h", "--help"]}


@click.group(context_settings=CONTEXT)
@click.version_option(package_name="chessscan")
def main() -> None:
    """Scan chess game datasets (PGN, EPD) with an exact legality, check and mate detector."""
    # Quiet exit on `| head`: restore the default SIGPIPE behaviour.
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)


@main.command(context_settings=CONTEXT)
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("-o", "--output", "out_dir", default="chessscan-report", show_default=True,
              type=click.Path(file_okay=False), help="Folder for the report tables.")
@click.option("--format", "fmt", type=click.Choice(["parquet", "csv"]), default="parquet",
              show_default=True, help="Table file format.")
@click.option("--positions", type=click.Choice(POSITIONS_CHOICES), default="all", show_default=True,
              help="Which position rows to write: every ply, checks only, or none.")
@click.option("--fen/--no-fen", default=False, help="Add the FEN after each move to positions.")
@click.option("--cross-check", type=click.Choice(CROSS_CHECK_CHOICES), default="sample", show_default=True,
              help="Replay games in python-chess and report disagreements: none, a sample "
                   "(1 game in 50 and every game with a mate, stalemate or rare check), or all.")
@click.option("--silent", is_flag=True, help="No progress bar.")
def analyze(paths, out_dir, fmt, positions, fen, cross_check, silent):
    """Analyze PGN games and EPD positions: check kinds, checkmates, stalemates, errors.

    PATHS are PGN or EPD files (plain, .gz, .bz2, .zst; .epd means EPD) or - for stdin
    (PGN). Writes positions, games, epd_positions, issues and disagreements tables and
    summary.json to the output folder.

    \b
    Example:
      chessscan analyze games.pgn.zst -o report --format csv
    """
    from chessscan.engines.local import run, tables_for
    from chessscan.reports.summary import render_summary
    from chessscan.reports.writers import ReportWriter

    for p in paths:
        if p != "-" and not Path(p).is_file():
            raise click.UsageError(f"no such file: {p}")
    options = AnalysisOptions(positions=positions, fen=fen, cross_check=cross_check)
    progress = not silent and sys.stderr.isatty()
    optional = {"positions": ("fen",)} if fen else None
    with ReportWriter(out_dir, fmt=fmt, tables=tables_for(paths, options), optional_columns=optional) as writer:
        try:
            tally = run(paths, writer, options, progress=progress)
        except OSError as exc:
            raise click.ClickException(f"cannot read input: {exc}") from exc
        summary = tally.as_dict()
        summary["sources"] = [str(p) for p in paths]
        writer.write_summary(summary)
    click.echo(render_summary(summary), err=True)
    click.echo(f"tables written to {out_dir}/", err=True)


@main.command(context_settings=CONTEXT)
@click.argument("fen", required=False)
@click.argument("depth", required=False, type=click.IntRange(min=0))
@click.option("--divide", is_flag=True, help="Print the node count below each legal move.")
@click.option("--suite", type=click.Path(exists=True, dir_okay=False, allow_dash=True),
              help="Check every position of a perft suite (EPD with D1..Dn, or id/epd/perft layout).")
@click.option("--max-nodes", type=int, default=1_000_000, show_default=True,
              help="With --suite: check only depths whose expected count is at most this.")
@click.option("--chess960", is_flag=True, help="Read castling rights as Chess960 (X-FEN / Shredder).")
def perft(fen, depth, divide, suite, max_nodes, chess960):
    """Count the leaf nodes of the legal move tree (move generator test).

    \b
    Examples:
      chessscan perft "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1" 4
      chessscan perft --suite perftsuite.epd --max-nodes 100000
    """
    from chessscan.core.fen import InvalidFen, parse_fen
    from chessscan.core.movegen import divide as divide_counts
    from chessscan.core.movegen import perft as count

    if suite:
        if fen is not None:
            raise click.UsageError("give either FEN DEPTH or --suite, not both")
        sys.exit(_perft_suite(suite, max_nodes))
    if fen is None or depth is None:
        raise click.UsageError("give FEN and DEPTH, or --suite FILE")
    try:
        pos = parse_fen(fen, chess960=chess960, strict=False)
    except InvalidFen as exc:
        raise click.UsageError(str(exc)) from exc
    if divide and depth >= 1:
        total = 0
        for uci, n in divide_counts(pos, depth).items():
            click.echo(f"{uci}: {n}")
            total += n
        click.echo(f"\nnodes: {total}")
    else:
        click.echo(count(pos, depth))


def _perft_suite(path: str, max_nodes: int) -> int:
    import time

    from chessscan.core.fen import InvalidFen, parse_fen
    from chessscan.core.movegen import perft as count
    from chessscan.readers.epd import read_perft_suite

    passed = failed = 0
    start = time.perf_counter()
    for case in read_perft_suite(path):
        label = case.id or f"line {case.line}"
        if case.errors:
            failed += 1
            click.echo(f"FAIL {label}: {'; '.join(e[1] for e in case.errors)}")
            continue
        try:
            # Chess960 castling rules contain the standard ones, so one parser serves both.
            pos = parse_fen(case.fen, chess960=True, strict=False)
        except InvalidFen as exc:
            failed += 1
            click.echo(f"FAIL {label}: {exc}")
            continue
        results = []
        ok = True
        for depth, expected in sorted(case.depths.items()):
            if expected > max_nodes:
                continue
            got = count(pos, depth)
            if got != expected:
                ok = False
                results.append(f"D{depth} {got} != {expected}")
            else:
                results.append(f"D{depth} {got}")
        if ok:
            passed += 1
        else:
            failed += 1
        click.echo(f"{'ok  ' if ok else 'FAIL'} {label}: {', '.join(results) or 'no depth under the cap'}")
    click.echo(f"checked in {time.perf_counter() - start:.1f} s", err=True)
    click.echo(f"{passed} passed, {failed} failed")
    return 1 if failed else 0
