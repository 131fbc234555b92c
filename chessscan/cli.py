"""Command line: ``chessscan analyze``, ``chessscan perft``, ``chessscan validate``.

A thin click layer: it parses options into :class:`AnalysisOptions` and calls the library.
stdout carries data, stderr progress and summaries; usage errors exit 2.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import click

from chessscan.analysis.options import CROSS_CHECK_CHOICES, POSITIONS_CHOICES, AnalysisOptions
from chessscan.analysis.sampling import SAMPLE_EVERY, SAMPLE_PER_KIND

CONTEXT = {"help_option_names": ["-h", "--help"]}


def _version_message() -> str:
    from chessscan.core import core_mode

    return f"%(prog)s, version %(version)s (core: {core_mode()})"


@click.group(context_settings=CONTEXT)
@click.version_option(package_name="chessscan", message=_version_message())
def main() -> None:
    """Scan chess game datasets (PGN, EPD) with an exact legality, check and mate detector."""
    # Quiet exit on `| head`: restore the default SIGPIPE behaviour.
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    _warn_if_uncompiled()


def _warn_if_uncompiled() -> None:
    """One line on stderr when the compiled core is missing (and not turned off on purpose)."""
    from chessscan.core import core_mode

    if core_mode() != "compiled" and os.environ.get("CHESSSCAN_PURE") != "1":
        click.echo("chessscan: warning: the compiled core is not installed (no C compiler when it was "
                   "installed?); running the pure-Python core: the same results, many times slower",
                   err=True)


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
              help=f"Replay games in python-chess and report disagreements: none, a sample, or "
                   f"all. The sample: 1 game in {SAMPLE_EVERY} by game index, and in each file the "
                   f"first {SAMPLE_PER_KIND} games holding each rare event (double check; check by "
                   f"en passant, promotion or castling; checkmate; stalemate; perpetual check), so "
                   f"every kind found is confirmed at a bounded cost. The summary counts the games "
                   f"sampled per reason.")
@click.option("--silent", is_flag=True, help="No progress bar.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes (default: every core; 1: all in this process). The tables "
                   "and the summary are the same for any number.")
@click.option("--dask", "dask_address", metavar="ADDRESS", default=None,
              help="Run on a Dask cluster: a scheduler address (tcp://host:8786) or 'local' "
                   "(a LocalCluster of --jobs workers). Writes a Parquet dataset per table, "
                   "OUTPUT/<table>/part-*.parquet. Needs chessscan[dask].")
@click.option("--shard-size", default="32MiB", show_default=True, metavar="SIZE",
              callback=lambda ctx, param, value: _analyze_size(value),
              help="With --dask: bytes of uncompressed PGN per task (suffix K, M or G); a "
                   "compressed or EPD file is one task.")
def analyze(paths, out_dir, fmt, positions, fen, cross_check, silent, jobs, dask_address, shard_size):
    """Analyze PGN games and EPD positions: check kinds, checkmates, stalemates, errors.

    PATHS are PGN or EPD files (plain, .gz, .bz2, .xz, .zst; .epd means EPD) or - for stdin
    (EPD when it starts with a FEN, else PGN). Writes positions, games, perpetuals,
    epd_positions, issues and disagreements tables and summary.json to the output folder.
    Games are analyzed on every core (--jobs), or on a Dask cluster (--dask).

    \b
    Examples:
      chessscan analyze games.pgn.zst -o report --format csv
      chessscan analyze big.pgn --dask tcp://scheduler:8786 -o /shared/report
    """
    from concurrent.futures.process import BrokenProcessPool

    from chessscan.engines.local import run, tables_for
    from chessscan.reports.summary import render_summary
    from chessscan.reports.writers import ReportWriter, remove_report

    for p in paths:
        if p != "-" and not Path(p).is_file():
            raise click.UsageError(f"{'not a file' if Path(p).exists() else 'no such file'}: {p}")
    _warn_repeated(paths)
    options = AnalysisOptions(positions=positions, fen=fen, cross_check=cross_check)
    progress = not silent and sys.stderr.isatty()
    if dask_address is not None:
        summary = _analyze_on_dask(paths, out_dir, fmt, options, jobs, dask_address, shard_size, progress)
        click.echo(render_summary(summary), err=True)
        click.echo(f"Parquet datasets written to {out_dir}/<table>/", err=True)
        return
    optional = {"positions": ("fen",)} if fen else None
    tables = tables_for(paths, options)
    try:
        remove_report(out_dir)
        writer = ReportWriter(out_dir, fmt=fmt, tables=tables, optional_columns=optional)
    except OSError as exc:
        raise click.BadParameter(f"cannot write the report there: {exc}", param_hint="-o/--output") from exc
    with writer:
        try:
            tally = run(paths, writer, options, progress=progress, jobs=jobs)
        except KeyboardInterrupt:
            writer.close()
            click.echo(f"\ninterrupted: the tables in {out_dir}/ hold only the games analyzed before, "
                       "and no summary.json is written", err=True)
            sys.exit(130)
        except OSError as exc:
            raise click.ClickException(f"cannot read input: {exc}") from exc
        except BrokenProcessPool as exc:
            raise click.ClickException(
                f"a worker process died ({exc}); out of memory? Try fewer --jobs") from exc
        summary = tally.as_dict()
        summary["sources"] = [str(p) for p in paths]
        writer.write_summary(summary)
    click.echo(render_summary(summary), err=True)
    click.echo(f"tables written to {out_dir}/", err=True)


def _warn_repeated(paths) -> None:
    """A source given twice is read twice (its rows repeat with the same keys): say so."""
    seen = set()
    for p in paths:
        key = p if p == "-" else os.path.realpath(p)
        if key in seen:
            click.echo(f"warning: {p} is given more than once: its games are read again", err=True)
        seen.add(key)


def _analyze_size(text: str) -> int:
    """``analyze --shard-size``: bytes from ``123``, ``64K``, ``32M``, ``32MiB``, ``1G``."""
    import re

    m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)(?:i?B)?\s*", text or "", re.I)
    if m is None or int(m.group(1)) < 1:
        raise click.BadParameter(f"{text!r} is not a size (e.g. 32M, 512K, 1G)")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2).upper()]


def _analyze_on_dask(paths, out_dir, fmt, options, jobs, address, shard_size, progress) -> dict:
    """``analyze --dask``: run on the cluster, write summary.json, return the summary."""
    from chessscan.reports.writers import ReportWriter

    if fmt != "parquet":
        raise click.UsageError("--dask writes Parquet datasets: --format csv is not supported with it")
    if "-" in paths:
        raise click.UsageError("--dask reads files, not stdin ('-')")
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as exc:
        raise click.ClickException(
            f"--dask needs the optional dask dependencies: pip install 'chessscan[dask]' ({exc})") from exc
    from chessscan.engines.dask import run_dask

    try:
        tally = run_dask(paths, out_dir, options, address=address, jobs=jobs, shard_size=shard_size,
                         progress=progress)
    except ConnectionError as exc:
        raise click.ClickException(str(exc)) from exc
    except OSError as exc:
        raise click.ClickException(f"cannot read input or write {out_dir}: {exc}") from exc
    summary = tally.as_dict()
    summary["sources"] = [str(p) for p in paths]
    ReportWriter(out_dir, tables=()).write_summary(summary)
    return summary


@main.command(context_settings=CONTEXT)
@click.argument("fen", required=False)
@click.argument("depth", required=False, type=click.IntRange(min=0))
@click.option("--divide", is_flag=True, help="Print the node count below each legal move.")
@click.option("--suite", type=click.Path(exists=True, dir_okay=False, allow_dash=True),
              help="Check every position of a perft suite (EPD with D1..Dn, or id/epd/perft layout).")
@click.option("--max-nodes", type=click.IntRange(min=0), default=1_000_000, show_default=True,
              help="With --suite: check only depths whose expected count is at most this (0: all); "
                   "a position with no depth under the cap is skipped, not passed.")
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
    if not chess960:
        from chessscan.core.fen import validate_setup

        if validate_setup(fen)[2]:
            chess960 = True
            click.echo("castling rights that only Chess960 explains: read as Chess960", err=True)
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

    passed = failed = skipped = 0
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
        checked = 0
        for depth, expected in sorted(case.depths.items()):
            if max_nodes and expected > max_nodes:
                results.append(f"D{depth} skipped")
                continue
            checked += 1
            got = count(pos, depth)
            if got != expected:
                ok = False
                results.append(f"D{depth} {got} != {expected}")
            else:
                results.append(f"D{depth} {got}")
        if not ok:
            failed += 1
            status = "FAIL"
        elif checked:
            passed += 1
            status = "ok  "
        else:
            skipped += 1
            status = "skip"
        click.echo(f"{status} {label}: {', '.join(results) or 'no depth given'}")
    click.echo(f"checked in {time.perf_counter() - start:.1f} s", err=True)
    click.echo(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    if not passed and not failed:
        click.echo("no position was checked (raise --max-nodes, or 0 for no cap)" if skipped
                   else "the suite holds no position", err=True)
        return 1
    return 1 if failed else 0


def _validate_source(path: str, sink, options: AnalysisOptions, jobs: int | None, progress: bool):
    """``validate``'s run over one source on the engine of ``analyze`` (``jobs`` workers;
    None: every core); returns its tally. A dead worker is an input the run could not
    finish: :class:`InputError` (exit 2)."""
    from concurrent.futures.process import BrokenProcessPool

    from chessscan.engines.local import run

    try:
        return run([path], sink, options, progress=progress, jobs=jobs, progress_label="validate")
    except BrokenProcessPool as exc:
        raise InputError(f"a worker process died while reading {path} ({exc}); out of memory? "
                         "Try fewer --jobs") from exc


class InputError(click.ClickException):
    """An input that exists but cannot be read (permission denied, I/O error): exit 2, like
    a usage error, so that CI tells "the gate could not run" from "the data has issues"."""

    exit_code = 2


@main.command(context_settings=CONTEXT)
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "github"]), default="text",
              show_default=True, help="text: path:line:column: error[code]: message; json: one "
                                      "document; github: Actions workflow commands (annotations).")
@click.option("--fail-on", type=click.Choice(["error", "warning"]), default="error", show_default=True,
              help="Lowest severity that makes the exit status 1.")
@click.option("--cross-check", type=click.Choice(CROSS_CHECK_CHOICES), default="off", show_default=True,
              help="Also replay games in python-chess and report each disagreement as a warning.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes (default: every core; 1: all in this process). The "
                   "diagnostics, their order and the counts are the same for any number.")
@click.option("--silent", is_flag=True, help="No progress bar (shown on stderr when it is a terminal).")
def validate(paths, fmt, fail_on, cross_check, jobs, silent):
    """Check PGN games and EPD positions and print one diagnostic per problem (a CI gate).

    Runs the same analysis as `analyze` but writes no table: each issue becomes a line
    `path:line:column: severity[code]: message (game N "White - Black", ply P)` on stdout,
    in input order; the counts go to stderr. Codes are listed in the README ("Issue codes").

    \b
    Exit status:
      0  nothing at or above --fail-on
      1  issues at or above --fail-on
      2  usage error, or an input that cannot be read
      3  internal error (a chessscan bug)

    \b
    Examples:
      chessscan validate games.pgn puzzles.epd
      chessscan validate --format github --fail-on warning data/*.pgn.zst
    """
    import json

    from chessscan.analysis.game import Tally
    from chessscan.engines.local import is_epd, run
    from chessscan.readers.sources import open_source
    from chessscan.reports.diagnostics import DiagnosticSink, closing_line, format_github, format_text

    for p in paths:
        if p == "-":
            continue
        path = Path(p)
        if not path.exists():
            raise click.UsageError(f"no such file: {p}")
        if not path.is_file():
            raise click.UsageError(f"not a file: {p}")
        try:  # fail before any output rather than halfway through the list
            with open_source(path):
                pass
        except OSError as exc:
            raise InputError(f"cannot read input: {exc}") from exc
    _warn_repeated(paths)

    collected = []
    if fmt == "json":
        emit = collected.append
    else:
        render = format_github if fmt == "github" else format_text
        emit = lambda d: click.echo(render(d))  # noqa: E731
    sink = DiagnosticSink(emit)
    options = AnalysisOptions(positions="none", cross_check=cross_check)
    tally = Tally()
    progress = not silent and sys.stderr.isatty()
    # One run per source: DiagnosticSink orders and names games within one source.
    for p in paths:
        try:
            tally.merge(_validate_source(p, sink, options, jobs, progress))
        except OSError as exc:
            raise InputError(f"cannot read input: {exc}") from exc
        except click.ClickException:
            raise
        except Exception as exc:
            # Bad content never raises, so this is a chessscan bug. Exit 3, not the traceback's
            # 1, so that a CI gate cannot mistake it for "the data has issues".
            import traceback

            traceback.print_exc()
            click.echo(f"chessscan: internal error while reading {p}: {type(exc).__name__}: {exc} "
                       "(a chessscan bug: please report it with the input)", err=True)
            sys.exit(3)
        sink.finish()

    errors, warnings = sink.counts.get("error", 0), sink.counts.get("warning", 0)
    failing = errors + (warnings if fail_on == "warning" else 0)
    status = 1 if failing else 0
    summary = tally.as_dict()
    summary.update(sources=list(paths), errors=errors, warnings=warnings, fail_on=fail_on,
                   exit_status=status)
    if fmt == "json":
        click.echo(json.dumps({"diagnostics": [d.as_json() for d in collected], "summary": summary},
                              indent=2, ensure_ascii=False))
    else:
        has_epd = any(is_epd(p) for p in paths)
        has_pgn = not has_epd or any(not is_epd(p) for p in paths)
        click.echo(closing_line(summary, pgn=has_pgn, epd=has_epd), err=True)
    sys.exit(status)
