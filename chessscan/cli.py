"""Command line: ``chessscan analyze``, ``chessscan perft``, ``chessscan validate``.

A thin click layer: it parses options into :class:`AnalysisOptions` and calls the library.
stdout carries data, stderr progress and summaries; usage errors exit 2.
"""

from __future__ import annotations

import errno
import gc
import os
import re
import signal
import sys
import threading
from pathlib import Path

# numpy's OpenBLAS starts a thread per core on import, each spinning ~0.1 s of CPU waiting for
# work that never comes (nothing here does linear algebra). One thread: none spin. Set before
# numpy loads, and inherited by --jobs workers.
if "numpy" not in sys.modules:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import click

from chessscan.analysis.options import CROSS_CHECK_CHOICES, POSITIONS_CHOICES, AnalysisOptions
from chessscan.analysis.sampling import SAMPLE_EVERY, first_games

CONTEXT = {"help_option_names": ["-h", "--help"]}

# Exit statuses, the same for every command: the table in chessscan/exits.py (documented from it).
from chessscan.exits import EXIT_INTERNAL, EXIT_ISSUES, EXIT_OUTPUT, EXIT_USAGE  # noqa: E402
# Stops held while a report closes (the same mechanism as the --jobs shared memory's).
from chessscan.engines.stops import hold_stops as _hold_stops, release_stops as _release_stops  # noqa: E402


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised in the main thread so that a run ends as on Ctrl-C:
    workers stopped, tables closed, exit status ``128 + signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _raise_stopped(signum, frame) -> None:
    _ignore_stop_signals()  # a second signal must not break the clean-up of the first
    raise Stopped(signum)


def _stop_signals() -> list:
    return [getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)]


def _ignore_stop_signals() -> None:
    for sig in _stop_signals() + [signal.SIGINT]:
        signal.signal(sig, signal.SIG_IGN)


def _stop_status(exc: KeyboardInterrupt) -> int:
    # Under `python -m`, a KeyboardInterrupt raised inside a string exec or eval (as
    # dataclasses and namedtuples build their methods) marks the interpreter to die of SIGINT
    # at exit, caught or not, whatever status it exits with: an exit by Ctrl-C was -SIGINT
    # now and then, not 130. Every string eval clears that mark as it starts (CPython's
    # run_eval_code_obj).
    eval("None")
    return 128 + getattr(exc, "signum", signal.SIGINT)


def _exit_stopped(exc: KeyboardInterrupt, kept: str) -> None:
    """End an ``analyze`` run stopped by ``exc``: say what its output holds, exit 128 + N."""
    _ignore_stop_signals()
    click.echo(f"\n{_stop_name(exc)}: {kept}, and no summary.json is written", err=True)
    sys.exit(_stop_status(exc))


def _stop_name(exc: KeyboardInterrupt) -> str:
    signum = getattr(exc, "signum", None)
    return "interrupted" if signum is None else f"stopped by {signal.Signals(signum).name}"


class OutputFailure(click.ClickException):
    """A report file or stdout could not be written: exit 4, one message naming the file."""

    exit_code = EXIT_OUTPUT


class OutputInUse(click.ClickException):
    """Another chessscan run is writing the output: exit 2, refused before anything is done."""

    exit_code = EXIT_USAGE


def _shown(text) -> str:
    """A path or any text read (a file name, a baseline's field) as it may be printed: one
    line, no control character, no workflow command (:func:`~chessscan.reports.diagnostics.printable`)."""
    from chessscan.reports.diagnostics import printable

    return printable(text)


class _OneLineError(click.ClickException):
    """A ClickException shown on one line, its text made printable: ``Error: MESSAGE``, and for
    a usage error ``(see 'chessscan CMD -h')`` rather than click's usage block."""

    def __init__(self, exc: click.ClickException) -> None:
        super().__init__(exc.format_message())
        self.exit_code = exc.exit_code
        ctx = getattr(exc, "ctx", None)
        self.hint = f" (see '{ctx.command_path} -h')" if isinstance(exc, click.UsageError) and ctx else ""

    def show(self, file=None) -> None:
        click.echo(f"Error: {_shown(self.format_message())}{self.hint}", file=file, err=file is None)


def _one_line_error(exc: click.ClickException) -> click.ClickException:
    if isinstance(exc, (_OneLineError, click.exceptions.NoArgsIsHelpError)):
        return exc  # (no arguments at all: the help, as asked)
    return _OneLineError(exc)


#: The command line of this run, as a refused run shows it (:func:`_lock_output`).
_COMMAND_LINE: list[str] = []


def _open_std_streams() -> None:
    """Give every standard stream a file. A stream closed by the caller (``>&-``, ``2>&-``)
    would otherwise be the number of the next file chessscan opens (a table, a lock), into
    which anything written to it would go; and Python leaves ``sys.stdout`` None, on which
    the run crashed. stdin closed reads as empty; stdout closed, or open for reading only,
    cannot be written (every write fails: exit 4, as for a full disk); stderr closed, or
    open for reading only, drops the progress, the summary and the messages (the exit
    status still tells)."""
    _CLOSED.clear()
    for fd, flags, name in ((0, os.O_RDONLY, "stdin"), (1, os.O_RDONLY, "stdout"), (2, os.O_WRONLY, "stderr")):
        if _usable(fd, writing=fd > 0):
            continue
        try:
            null = os.open(os.devnull, flags)
        except OSError:
            continue
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        if name == "stdout":
            _CLOSED.add("stdout")
        if getattr(sys, name) is None or name == "stderr":
            mode = "r" if fd == 0 else "w"
            setattr(sys, name, open(fd, mode, buffering=1 if fd == 2 else -1, encoding="utf-8",
                                    errors="backslashreplace", closefd=False))


def _usable(fd: int, writing: bool) -> bool:
    """Whether ``fd`` is open (and, ``writing``, not for reading only: a shell script run
    with ``2>&-`` can leave its own file there)."""
    try:
        os.fstat(fd)
    except OSError:
        return False
    if writing:
        try:
            import fcntl

            return fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDONLY
        except (ImportError, OSError):
            pass
    return True


#: Standard streams found closed when the run started.
_CLOSED: set[str] = set()


def _version_message() -> str:
    from chessscan.core import core_mode

    return f"%(prog)s, version %(version)s (core: {core_mode()})"


class _Group(click.Group):
    """Ctrl-C, SIGTERM or SIGHUP that no command caught (at start-up, say) ends the run with
    128 + N and one line, not click's "Aborted!" and status 1, which means "issues found"."""

    def main(self, *args, **kwargs):
        _open_std_streams()
        given = kwargs.get("args", args[0] if args else None)
        _COMMAND_LINE[:] = ["chessscan", *(sys.argv[1:] if given is None else given)]
        try:
            return super().main(*args, **kwargs)
        except SystemExit as exc:
            if not args and kwargs.get("args") is None:
                # The process's own command line is done and the process is about to end:
                # moving every object to the permanent generation spares the interpreter's
                # last collections a walk over all of them (~2% of a run's CPU on 10,000
                # games). (Not when called with arguments, as tests do: the caller goes on.)
                gc.freeze()
            # A stop that came while click itself ran (parsing the command line): click
            # printed "Aborted!"; the status still says the run was stopped.
            abort = exc.__context__
            if exc.code == 1 and isinstance(abort, click.Abort) and isinstance(abort.__cause__, KeyboardInterrupt):
                _ignore_stop_signals()
                sys.exit(_stop_status(abort.__cause__))
            raise
        except OSError as exc:
            # What reaches here unconverted is a write to stdout failing inside click.echo
            # (--version, perft, help text to /dev/full): exit 4, one line.
            if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EBADF):
                from chessscan.reports.writers import OutputError

                closed = exc.errno == errno.EBADF and "stdout" in _CLOSED
                _fail_output(OutputError("<stdout>", "it is closed" if closed else exc))
            raise

    def make_context(self, *args, **kwargs):
        try:
            return super().make_context(*args, **kwargs)
        except click.ClickException as exc:
            raise _one_line_error(exc) from None

    def invoke(self, ctx):
        try:
            result = super().invoke(ctx)
        except click.ClickException as exc:
            raise _one_line_error(exc) from None
        except KeyboardInterrupt as exc:
            _ignore_stop_signals()
            click.echo(f"\n{_stop_name(exc)}", err=True)
            sys.exit(_stop_status(exc))
        except OSError as exc:
            # (Imported here, not before the try: a stop during that import is a stop too.)
            from chessscan.reports.writers import OutputError

            # A file of ours or stdout could not be written, or click.echo to a closed pipe.
            if isinstance(exc, (OutputError, BrokenPipeError)):
                _fail_output(exc)
            raise
        except SystemExit:
            _flush_stdout()
            _ignore_stop_signals()  # (as below)
            raise
        _flush_stdout()
        # Done: a stop from now on finds nothing left to stop. Left to Python's shutdown
        # (which restores the default handlers), it killed a finished run by the signal.
        _ignore_stop_signals()
        return result


class _NoFolder(FileNotFoundError):
    def __str__(self) -> str:
        return self.args[1]


def _lock_output(path, folder: bool = False):
    """Hold the lock of the output ``path`` (a report folder, created if missing, or one
    file) until the command ends (:class:`~chessscan.reports.files.OutputLock`). Returns the
    lock, or None for an output that is not a regular file (``-``, a device, a FIFO: written
    through, nothing to lock). Raises :class:`OutputInUse` when another run holds it (the
    message names that run), OSError when the lock cannot be made (no such folder,
    read-only)."""
    import shlex

    from chessscan.readers.sources import display_path
    from chessscan.reports.files import OutputBusy, OutputLock, lock_path_for

    if folder:
        if os.path.lexists(path) and not os.path.isdir(path):
            return None  # not a folder: refused as such (prepare_output)
        os.makedirs(path, exist_ok=True)
    elif path == "-" or (os.path.exists(path) and not os.path.isfile(path)):
        return None
    elif not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        raise _NoFolder(errno.ENOENT, f"no such folder: {_shown(os.path.dirname(path))}")
    lock = OutputLock(lock_path_for(path, folder=folder), display_path(path),
                      " ".join(shlex.quote(a) for a in _COMMAND_LINE))
    try:
        lock.acquire()
    except OutputBusy as exc:
        raise OutputInUse(f"{exc}: refused, nothing written; wait for it to end or choose another "
                          "output") from None
    click.get_current_context().call_on_close(lock.release)
    return lock


def _flush_stdout() -> None:
    """Flush stdout inside the command, so that a full disk or a closed stdout is exit 4 with
    one line (Python's own flush at exit would print a traceback and exit 120)."""
    try:
        sys.stdout.flush()
    except OSError as exc:
        from chessscan.reports.writers import OutputError

        _fail_output(OutputError("<stdout>", exc))


@click.group(cls=_Group, context_settings=CONTEXT)
@click.version_option(package_name="chessscan", message=_version_message())
def main() -> None:
    """Scan chess game datasets (PGN, EPD) with an exact legality, check and mate detector."""
    # `| head`: SIGPIPE stays ignored (Python's default) so that a closed stdout is an EPIPE
    # error, handled as a quiet exit 141 after the workers are stopped and the tables
    # closed; dying of the signal would orphan them and leak the pool's semaphores.
    # A supervisor's SIGTERM or a closed terminal's SIGHUP ends a run as Ctrl-C does.
    if threading.current_thread() is threading.main_thread():
        for sig in _stop_signals():
            signal.signal(sig, _raise_stopped)
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
              type=click.Path(file_okay=False),
              help="Folder for the report tables, or a URL (s3://bucket/prefix, gs://, az://...: any "
                   "fsspec file system) where each file is put as one whole object, summary.json last.")
@click.option("--format", "fmt", type=click.Choice(["parquet", "csv"]), default="parquet",
              show_default=True, help="Table format: parquet, a dataset folder per table "
                                      "(OUTPUT/<table>/part-*.parquet, parts in input order); csv, "
                                      "a file per table (OUTPUT/<table>.csv).")
@click.option("--positions", type=click.Choice(POSITIONS_CHOICES), default="all", show_default=True,
              help="Which position rows to write: every ply, checks only, or none.")
@click.option("--fen/--no-fen", default=False, help="Add the FEN after each move to positions.")
@click.option("--cross-check", type=click.Choice(CROSS_CHECK_CHOICES), default="sample", show_default=True,
              help=f"Replay games in python-chess and report disagreements: none, a sample, or "
                   f"all. The sample: 1 game in {SAMPLE_EVERY} of each file, and in the run "
                   f"{first_games()} holding each rare event (double check; check by "
                   f"en passant, promotion or castling; checkmate; stalemate; perpetual check), so "
                   f"every kind found is confirmed at a bounded cost; its replays compare the number "
                   f"of legal moves only in check and after the last move, and the Zobrist key every "
                   f"8th ply, at repetitions, at en-passant chances and after the last move. The summary counts "
                   f"the games sampled per reason.")
@click.option("--silent", is_flag=True, help="No progress bar.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes (default: one per core, or all in this process on 2 cores or "
                   "fewer; 1: all in this process). The tables and the summary are the same for any "
                   "number.")
@click.option("--dask", "dask_address", metavar="ADDRESS|auto|local", default=None,
              help="Run on a Dask cluster: a scheduler address (tcp://host:8786), 'auto' (Dask's "
                   "configured one: DASK_SCHEDULER_ADDRESS or scheduler-address; else as 'local') or "
                   "'local' (a LocalCluster of --jobs workers). Writes a Parquet dataset per table, "
                   "OUTPUT/<table>/part-*.parquet. Needs chessscan[dask].")
@click.option("--shard-size", default="32MiB", show_default=True, metavar="SIZE",
              callback=lambda ctx, param, value: _analyze_size(value),
              help="With --dask: bytes of uncompressed PGN per task (suffix K, M or G); a "
                   "compressed file is decompressed by this client and sent in chunks of that much text "
                   "(at most two per worker thread in flight); an EPD file is one task.")
@click.option("--select", "select", multiple=True, metavar="CODE[,CODE...]",
              help="Report only these issue codes (or groups: syntax, moves, positions, "
                   "consistency, input); the summary still counts every issue.")
@click.option("--ignore", "ignore", multiple=True, metavar="CODE[,CODE...]",
              help="Do not report these issue codes (or groups); the summary still counts them.")
@click.option("--moves-column", metavar="NAME", default=None,
              help="The column holding the moves in Parquet/Arrow game tables (default: the first "
                   "of movetext, moves_san, moves_uci, transcript, in any case).")
@click.option("--html", "write_html", is_flag=True,
              help="Also write OUTPUT/report.html, the report as one page (see `chessscan report`). "
                   "Needs chessscan[report].")
@click.option("--duplicates", "find_duplicates", is_flag=True,
              help="Find the games that repeat an earlier one (the same moves from the same start "
                   "position, whatever their tags: equal games.moves_hash): writes the duplicates table, "
                   "games.duplicate_of and the summary's duplicates counts. Runs in DuckDB over the games "
                   "table once it is written, within --duplicates-memory. Needs chessscan[duplicates].")
@click.option("--duplicates-memory", metavar="SIZE", default="512MB", show_default=True,
              help="With --duplicates: DuckDB's memory limit for the search (256MB, 2GB...); beyond it "
                   "DuckDB spills to OUTPUT/.chessscan-duplicates.tmp/ (to the system's temporary folder "
                   "when OUTPUT's name is not UTF-8), removed when the search ends.")
@click.option("--contained-games", "find_contained", is_flag=True,
              help="With --duplicates: also find the games whose whole mainline is the start of another "
                   "game's from the same start position (an unfinished copy): writes games.moves_key, the "
                   "contained_games table (which game contains which) and the summary's contained_games "
                   "count.")
def analyze(paths, out_dir, fmt, positions, fen, cross_check, silent, jobs, dask_address, shard_size,
            select, ignore, moves_column, write_html, find_duplicates, duplicates_memory, find_contained):
    """Analyze PGN games and EPD positions: check kinds, checkmates, stalemates, errors.

    PATHS are PGN or EPD files (plain, .gz, .bz2, .xz, .zst; .epd means EPD, .pgn PGN, any
    other name EPD when it starts with a FEN, else PGN), game tables (Parquet, Arrow IPC,
    Feather: one row a game), folders (their .pgn and .epd files and tables, recursively),
    URLs (s3://, gs://, az://, https://, hf://: objects, folders, globs) or - for stdin. Writes positions, games, perpetuals,
    epd_positions, issues and disagreements tables and summary.json to the output folder.
    Games are analyzed on every core (--jobs), or on a Dask cluster (--dask).

    \b
    Examples:
      chessscan analyze games.pgn.zst -o report --format csv
      chessscan analyze big.pgn --dask tcp://scheduler:8786 -o /shared/report
    """
    from concurrent.futures.process import BrokenProcessPool

    from chessscan.analysis.game import Tally
    from chessscan.engines.local import optional_columns, report_input_problems, run, tables_for
    from chessscan.reports.filters import IssueFilter
    from chessscan.reports.writers import (OutputError, OutputFolderError, ReportWriter, prepare_output,
                                           report_files)

    started = _RunClock()
    if write_html:
        _need_report_extra()
    if find_duplicates:
        _need_duckdb(duplicates_memory)
    elif find_contained:
        raise click.UsageError("--contained-games is part of the duplicate search: give --duplicates too")
    select_codes, ignore_codes = _code_options(select, ignore)
    if dask_address is None and click.get_current_context().get_parameter_source("shard_size").name != "DEFAULT":
        click.echo("warning: --shard-size applies only with --dask: ignored", err=True)
    if dask_address is not None and "-" in paths:
        raise click.UsageError("--dask reads files, not stdin ('-')")
    if dask_address is not None:
        from chessscan.readers.sources import is_pipe

        piped = [p for p in paths if is_pipe(p)]
        if piped:  # its workers cannot open /dev/fd/N, and a FIFO cannot be read in shards
            raise click.UsageError(f"--dask reads files, not a pipe ({piped[0]})")
    sources, problems = _resolve_cli_inputs(paths, moves_column=moves_column)
    _warn_repeated(paths)
    if not sources and any(p.severity == "error" for p in problems):
        for p in problems:
            click.echo(_problem_line(p), err=True)
        raise InputError("no input could be analyzed: nothing is written")
    options = AnalysisOptions(positions=positions, fen=fen, cross_check=cross_check, moves_column=moves_column,
                              moves_key=find_contained)
    progress = not silent and sys.stderr.isatty()
    _refuse_input_folder_as_output(paths, out_dir)
    remote = _object_output(out_dir)
    if remote is None and "://" in out_dir:  # file://: the local folder it names
        from chessscan.readers.urls import is_url, url_fs

        if is_url(out_dir):
            out_dir = url_fs(out_dir, "writing")[1]
    shown_dir = _shown(out_dir)
    if dask_address is not None:
        for p in problems:
            click.echo(_problem_line(p), err=True)
        put_by_workers: list = []
        summary = _analyze_on_dask(sources, out_dir, fmt, options, jobs, dask_address, shard_size, progress,
                                   problems, select_codes, ignore_codes,
                                   duplicates_memory if find_duplicates else None, remote=remote,
                                   parts=put_by_workers)
        out_dir = remote.staging if remote is not None else out_dir
        _write_run_facts(out_dir, summary, started, format=fmt, positions=positions, fen=fen,
                         cross_check=cross_check, jobs=jobs, dask=dask_address, shard_size=shard_size,
                         moves_column=moves_column)
        shown = {k: v for k, v in summary.items() if k != "retried_shards"}
        click.echo("\n".join([_render_with_timing(shown, started), *_retried_lines(summary)]), err=True)
        if remote is None:
            click.echo(f"Parquet datasets written to {shown_dir}/<table>/", err=True)
        if write_html:
            _write_html(out_dir, remote=remote)
        _upload_report(remote, put_by_workers)
        _exit_on_input_errors(problems)
        return
    tables = tables_for(sources, options)
    optional = {t: optional_columns(t, options) for t in tables}
    # A stop while the tables are opened waits until all are open (then every table closes
    # whole, empty or not), not to leave some of them.
    held = _hold_stops()
    try:
        files = report_files(tables + (("duplicates",) if find_duplicates else ())
                             + (("contained_games",) if find_contained else ()), fmt, dataset=fmt == "parquet")
        if remote is not None:
            out_dir = _prepare_object_output(remote, files, sources)
        _lock_output(out_dir, folder=True)  # for the whole run: a second run into it is refused
        prepare_output(out_dir, files, inputs=sources)
        writer = ReportWriter(out_dir, fmt=fmt, tables=tables, optional_columns=optional, parts=True)
    except OutputFolderError as exc:
        _release_stops(held)
        raise click.BadParameter(f"refusing to write the report there: {exc}", param_hint="-o/--output") from exc
    except OSError as exc:
        _release_stops(held)
        raise OutputFailure(f"cannot write the report in {shown_dir}: {exc}") from exc
    except BaseException:
        _release_stops(held)
        raise
    sink = IssueFilter(writer, select_codes, ignore_codes)
    tally = Tally()
    tally.cross_check_mode = options.cross_check  # (the mode asked for, even with no game to read)
    for p in problems:
        click.echo(_problem_line(p), err=True)
    try:
        with writer:  # closes (and names) every table on every way out
            _release_stops(held)
            report_input_problems([p for p in problems if sink.wanted(p.code)], writer, Tally())
            if sources:
                tally = run(sources, sink, options, progress=progress, jobs=jobs)
            sink.finish()
            # Analyzed: a stop from here until summary.json is written comes too late to cut
            # the run short (it would leave whole tables and no summary, or a wrong message).
            done = _hold_stops()
    except KeyboardInterrupt as exc:
        _exit_stopped(exc, _kept(remote, f"the tables in {shown_dir}/ hold only the games analyzed before"))
    except OutputError as exc:
        raise OutputFailure(f"{exc}; no summary.json is written") from None
    except OSError as exc:
        raise InputError(f"cannot read input: {exc}") from exc
    except BrokenProcessPool as exc:
        raise WorkerDied(f"a worker process died ({exc}); out of memory? Try fewer --jobs") from exc
    except click.ClickException:
        raise
    except Exception as exc:
        # Bad content never raises, so this is a chessscan bug: exit 3, not the traceback's 1,
        # which a CI gate reads as "the data has issues".
        import traceback

        traceback.print_exc()
        raise InternalError(f"internal error: {type(exc).__name__}: {_shown(exc)} (a chessscan bug: please "
                            f"report it with the input); the tables in {shown_dir}/ hold only the games "
                            "analyzed before, and no summary.json is written") from None
    report_input_problems(problems, _NoSink(), tally)  # counted whether reported or not
    summary = _finish_summary(tally, sources)
    if find_duplicates and "games" in tables:
        try:
            summary["duplicates"] = _search_duplicates(out_dir, fmt, fmt == "parquet", duplicates_memory,
                                                       find_contained)
        except KeyboardInterrupt as exc:
            _exit_stopped(exc, _kept(remote, f"the tables in {shown_dir}/ are whole but the duplicate search did "
                                             "not end"))
    try:  # last, beside tables that are closed and whole
        if writer.dataset:  # every part named is there, with the rows written to it
            from chessscan.reports.parts import check_parts

            check_parts([part for parts in writer.published.values() for part in parts])
        writer.write_summary(summary)
    except OutputError as exc:
        raise OutputFailure(str(exc)) from None
    _write_run_facts(out_dir, summary, started, format=fmt, positions=positions, fen=fen,
                     cross_check=cross_check, jobs=jobs, moves_column=moves_column)
    click.echo(_render_with_timing(summary, started), err=True)
    if remote is None:
        click.echo(f"tables written to {shown_dir}/", err=True)
    _release_stops(done, replay=False)
    if write_html:
        _write_html(out_dir, remote=remote)
    _upload_report(remote)
    _exit_on_input_errors(problems)


class OutputRefused(click.ClickException):
    """An output URL that cannot be written as given (no such bucket, its file system not
    installed): exit 2, one line, nothing written."""

    exit_code = EXIT_USAGE


def _refuse_input_folder_as_output(paths, out_dir) -> None:
    """A usage error when ``out_dir`` is one of the input folders ``paths`` (the same folder
    by any path, or the same URL): the next run would take the folder for a report and skip
    its games, so its report would be empty. A folder inside an input folder is fine."""
    from chessscan.readers.urls import is_url

    def url_key(u: str) -> str:
        return u.rstrip("/")

    for p in paths:
        if p == "-":
            continue
        if is_url(p) or is_url(out_dir):
            same = is_url(p) and is_url(out_dir) and url_key(p) == url_key(out_dir)
        else:
            try:
                same = os.path.isdir(p) and os.path.isdir(out_dir) and os.path.samefile(p, out_dir)
            except OSError:
                same = False
        if same:
            raise click.BadParameter(f"{_shown(out_dir)} is an input folder: its games and the report would "
                                     "share it, and the next run would take it for a report and read none of "
                                     "its games; choose another output (a folder inside it will do)",
                                     param_hint="-o/--output")


def _object_output(out_dir):
    """The :class:`~chessscan.reports.store.ObjectOutput` of an output URL (None for a local
    folder). Touches nothing yet; a URL no installed file system writes is
    :class:`OutputRefused` (the message names the extra to install)."""
    from chessscan.readers.urls import MissingFileSystem
    from chessscan.reports.store import object_output

    try:
        return object_output(out_dir)
    except MissingFileSystem as exc:
        raise OutputRefused(f"cannot write the report to {_shown(out_dir)}: {exc}") from None
    except OSError as exc:
        raise OutputRefused(f"cannot write the report to {_shown(out_dir)}: {exc}") from None


def _prepare_object_output(remote, files, inputs) -> str:
    """Check and ready the object store's prefix (:meth:`ObjectOutput.prepare`: the output
    folder's rules) and return the local folder the run writes into until it is put there
    (removed when the command ends)."""
    from chessscan.reports.store import StoreRefused
    from chessscan.reports.writers import OutputFolderError

    click.get_current_context().call_on_close(remote.cleanup)
    shown = _shown(remote.url)
    try:
        return remote.prepare(files, inputs)
    except OutputFolderError as exc:
        raise click.BadParameter(f"refusing to write the report there: {exc}", param_hint="-o/--output") from exc
    except (StoreRefused, NotADirectoryError) as exc:  # (an object where the prefix would be: as a file for -o DIR)
        raise OutputRefused(f"cannot write the report to {shown}: {exc}") from None
    except OSError as exc:
        raise OutputFailure(f"cannot write the report to {shown}: {exc}") from exc


def _kept(remote, local: str) -> str:
    """What a run stopped before its upload leaves: ``local`` for a folder; for an object
    store, its manifest only."""
    if remote is None:
        return local
    return f"nothing is put in {_shown(remote.url)}/ but its manifest (the next run into it removes what it lists)"


def _upload_report(remote, parts=()) -> None:
    """Put the staged report under its URL (each file one whole object, summary.json last)
    and say so; nothing for a local folder. A stop meanwhile leaves whole objects and no
    summary.json (128 + N); an object that cannot be put is exit 4. ``parts``: those the
    Dask workers put there themselves (said too)."""
    if remote is None:
        return
    from chessscan.reports.writers import OutputError

    shown = _shown(remote.url)
    try:
        names = remote.upload()
    except KeyboardInterrupt as exc:
        _exit_stopped(exc, f"the report in {shown}/ is incomplete (its objects put so far are whole)")
    except OutputError as exc:
        raise OutputFailure(f"{exc}; no summary.json is put") from None
    by_workers = f"; the workers put its {len(parts)} parts" if parts else ""
    click.echo(f"report put to {shown}/ ({len(names)} objects{by_workers})", err=True)


class _RunClock:
    """When an ``analyze`` run started: the wall clock (for the date) and a monotonic one."""

    def __init__(self) -> None:
        import time

        self.wall = time.time()
        self.mono = time.perf_counter()

    def elapsed(self) -> float:
        import time

        return time.perf_counter() - self.mono


def _write_run_facts(out_dir, summary: dict, started: _RunClock, **options) -> None:
    """``run.json`` beside summary.json: what summary.json leaves out so that two runs give
    the same one (the date, the elapsed time and throughput, chessscan's version, the
    options). ``chessscan report`` shows them in its headline. A run.json that cannot be
    written is :class:`OutputFailure` (exit 4), and none is left."""
    import datetime
    import json
    from importlib.metadata import PackageNotFoundError, version

    from chessscan.core import core_mode

    try:
        ours = version("chessscan")
    except PackageNotFoundError:
        ours = "unknown"
    elapsed = started.elapsed()
    facts = {
        "date": datetime.datetime.fromtimestamp(started.wall, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "chessscan": ours,
        "core": core_mode(),
        "elapsed_seconds": round(elapsed, 3),
        "games_per_second": round(summary.get("games_read", 0) / elapsed, 1) if elapsed > 0 else 0,
        "positions_per_second": round(summary.get("positions", 0) / elapsed, 1) if elapsed > 0 else 0,
        "options": {k: v for k, v in options.items() if v is not None},
    }
    from chessscan.reports.writers import OutputError, replace_file

    try:  # (a new file renamed into place: never written through a link standing there)
        replace_file(Path(out_dir) / "run.json", (json.dumps(facts, indent=2) + "\n").encode("utf-8"),
                     through=False)
    except OutputError as exc:
        raise OutputFailure(f"{exc} (the tables and summary.json are complete)") from None


def _need_report_extra() -> None:
    """Fail before any work (exit 2) when the page's libraries are missing."""
    try:
        import chess.svg  # noqa: F401
        import matplotlib  # noqa: F401
    except ImportError as exc:
        # The report extra is matplotlib alone: naming it works from a checkout and from a
        # package index alike ('chessscan[report]' asks an index for chessscan).
        raise InputError(f"report.html draws its charts with matplotlib, which is not installed: "
                         f"pip install 'matplotlib>=3.7' (the report extra) and run again ({exc})") from exc


def _write_html(report_dir, out=None, remote=None) -> None:
    """Render ``report_dir`` to ``out`` (default report_dir/report.html); say where on stderr.
    ``remote``: the report's URL, where the page is put with the rest (``report_dir``: its
    staging folder); the page is rendered from
    :meth:`~chessscan.reports.store.ObjectOutput.view` (named as the URL, and holding the
    tables the Dask workers put there)."""
    import time

    if remote is not None and out is None:
        try:
            with remote.view() as view:  # (what goes wrong inside is a click exception: below)
                _write_html(view, os.path.join(report_dir, "report.html"), remote=remote)
        except OSError as exc:
            raise OutputFailure(f"cannot read the report back from {_shown(remote.url)}/ for its page: "
                                f"{exc}") from exc
        return

    from chessscan.reports.page import ReportError, build_report
    from chessscan.reports.writers import OutputFolderError, check_run_file

    start = time.perf_counter()
    if out is None:
        try:
            check_run_file(report_dir, "report.html")
        except OutputFolderError as exc:
            raise click.BadParameter(f"refusing to write the page there: {exc}", param_hint="REPORT_DIR") from exc
    try:
        path = build_report(report_dir, out)
    except ReportError as exc:
        raise InputError(str(exc)) from exc
    except OSError as exc:
        raise OutputFailure(f"cannot write the page: {exc}") from exc
    took = f"{time.perf_counter() - start:.1f} s"
    if remote is not None:  # (not there yet: the page is put with the tables, summary.json last)
        click.echo(f"report page made ({took}), to be put as {_shown(remote.url)}/report.html", err=True)
        return
    click.echo(f"report written to {_shown(path)} ({took})", err=True)


@main.command(context_settings=CONTEXT)
@click.argument("report_dir", type=click.Path(file_okay=False))
@click.option("-o", "--output", "out", default=None, type=click.Path(dir_okay=False),
              help="The HTML file to write; it may replace only a page chessscan wrote.  "
                   "[default: REPORT_DIR/report.html]")
def report(report_dir, out):
    """Render a report folder (written by `analyze`) as one self-contained HTML page.

    The page opens from disk with no network and no server: a headline, charts, the games
    with errors and examples of rare events drawn on boards, and the data dictionary. It is
    built from summary.json and streamed reads of the tables (CSV or Parquet, single files or
    --dask datasets), so a report of any size renders in little memory. REPORT_DIR may be a
    URL (s3://bucket/prefix...): the report is copied into a temporary folder to be read,
    and the page put back as REPORT_DIR/report.html, one whole object.

    \b
    Examples:
      chessscan report chessscan-report
      chessscan report /shared/lichess-2024-01 -o lichess-2024-01.html
      chessscan report s3://chess/reports/twic
    """
    from chessscan.readers.urls import is_url, url_fs

    if is_url(report_dir) and not Path(report_dir).exists():
        remote = _object_output(report_dir)
        if remote is not None:
            _report_url(remote, out)
            return
        report_dir = url_fs(report_dir, "reading")[1]  # file://: the local folder it names
    if not Path(report_dir).is_dir():
        raise click.UsageError(f"{'not a folder' if Path(report_dir).exists() else 'no such folder'}: {report_dir}")
    _need_report_extra()
    try:  # no run may rewrite the folder while it is read (nor another write its page)
        _lock_output(report_dir, folder=True)
    except OSError as exc:
        if out is None:
            raise OutputFailure(f"cannot write the page in {_shown(report_dir)}: {exc}") from exc
        # A folder this user cannot write (read-only): no run writes it either; read unlocked.
    if out is not None:
        _refuse_page_output(out, report_dir)
        try:
            _lock_output(out)
        except OSError as exc:
            raise OutputFailure(f"cannot write {_shown(out)}: {exc}") from exc
    _write_html(report_dir, out)


def _refuse_page_output(out, report_dir=None) -> None:
    """A usage error, before anything is written, when the page's ``-o`` file ``out`` is one
    of ``report_dir``'s own files (the page would replace what it is read from), or a regular
    file (named, or a link's target) that is not a page chessscan wrote: the page replaces
    only an earlier page. A device or FIFO (``/dev/stdout``) is written through as before."""
    from chessscan.reports.page import is_report_page
    from chessscan.reports.writers import report_file_of

    own = report_file_of(report_dir, out) if report_dir is not None else None
    if own is not None:
        raise click.BadParameter(f"{_shown(out)} is {own}, a file of the report {_shown(report_dir)}: the page "
                                 "would be written over it; choose another file", param_hint="-o/--output")
    if os.path.isfile(out):
        try:
            ours = is_report_page(out)
        except OSError as exc:
            raise click.BadParameter(f"cannot read it: {exc}", param_hint="-o/--output") from exc
        if not ours:
            real = os.path.realpath(out)
            where = f" (a link to {_shown(real)})" if os.path.islink(out) else ""
            raise click.BadParameter(f"{_shown(out)}{where} is not a page chessscan wrote: the page would "
                                     "be written over it; move it away or choose another file",
                                     param_hint="-o/--output")


def _report_url(remote, out) -> None:
    """``chessscan report URL``: the report under ``remote`` (an
    :class:`~chessscan.reports.store.ObjectOutput`) copied into a temporary folder
    (:meth:`~chessscan.reports.store.ObjectOutput.view`), its page rendered there and put
    back as ``URL/report.html`` (one whole object), or written to the local file ``out``.
    A ``report.html`` under the prefix that no run recorded is refused (exit 2), as in a
    folder."""
    import time

    from chessscan.reports.page import ReportError, build_report
    from chessscan.reports.writers import OutputFolderError

    _need_report_extra()
    shown = _shown(remote.url)
    start = time.perf_counter()
    if out is not None:
        _refuse_page_output(out)
        try:
            _lock_output(out)
        except OSError as exc:
            raise OutputFailure(f"cannot write {_shown(out)}: {exc}") from exc
    try:
        if out is None:
            remote.check_run_file("report.html")
        with remote.view() as view:  # (what goes wrong inside is a click exception: an OSError is the copy's)
            try:
                path = build_report(view, out if out is not None else os.path.join(view, "report.html"))
            except ReportError as exc:
                raise InputError(str(exc).replace(view, shown)) from exc
            except OSError as exc:
                raise OutputFailure(f"cannot write the page: {exc}") from exc
            if out is None:
                try:
                    remote.put_file(str(path), "report.html")
                except OSError as exc:
                    raise OutputFailure(str(exc)) from None
                path = f"{remote.url}/report.html"
    except OutputFolderError as exc:
        raise click.BadParameter(f"refusing to write the page there: {exc}", param_hint="REPORT_DIR") from exc
    except OSError as exc:  # (no such bucket, an object where the folder should be, a copy that failed)
        raise InputError(f"cannot read the report at {shown}: {exc}") from None
    click.echo(f"report written to {_shown(path)} ({time.perf_counter() - start:.1f} s)", err=True)


class _NoSink:
    """A sink that drops what it is given (to count rows that are not reported)."""

    def write(self, table_name, columns) -> None:
        pass


def _code_options(select, ignore):
    """``--select`` / ``--ignore`` values as sets of codes (None: every code); a usage error
    names an unknown code."""
    from chessscan.reports.filters import parse_codes

    try:
        selected = parse_codes(select) if select else None
        if selected is not None and not selected:  # --select '' would report nothing
            raise ValueError("--select names no issue code")
        return selected, parse_codes(ignore)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--select/--ignore") from exc


def _resolve_cli_inputs(paths, ordered: bool = False, moves_column: str | None = None):
    """The sources to read for ``paths`` and the problems of the others
    (:func:`~chessscan.readers.inputs.resolve_each`); with ``ordered``, the one ordered list.
    Refuses ``-`` when stdin is a terminal (nothing is piped in), and exits 2 when no path
    can be read at all."""
    from chessscan.readers.inputs import InputProblem, resolve_each

    if "-" in paths and sys.stdin is not None and sys.stdin.isatty():
        raise click.UsageError("'-' reads PGN or EPD from stdin, but stdin is a terminal: pipe or redirect "
                               "a file into it (chessscan ... - < games.pgn, or zstdcat games.pgn.zst | "
                               "chessscan ... -)")
    items = resolve_each(paths, moves_column)
    problems = [i for i in items if isinstance(i, InputProblem)]
    sources = [i for i in items if not isinstance(i, InputProblem)]
    unreadable = [p for p in problems if p.code == "unreadable-input"]
    if not sources and unreadable and len(unreadable) == len(problems):
        raise InputError("cannot read input: " + "; ".join(f"{p.message}: {p.path}" for p in unreadable))
    return items if ordered else (sources, problems)


def _problem_line(p) -> str:
    """One input problem as a diagnostic line (``path: error[code]: message``), printable."""
    return _shown(f"{p.source}: {p.severity}[{p.code}]: {p.message}")


def _exit_on_input_errors(problems) -> None:
    """Exit 2 when an input could not be analyzed (missing, unreadable, not text)."""
    bad = [p for p in problems if p.severity == "error"]
    if bad:
        names = ", ".join(_shown(p.source) for p in bad[:3]) + (", ..." if len(bad) > 3 else "")
        click.echo(f"error: {len(bad)} input{'s' if len(bad) > 1 else ''} could not be analyzed ({names}): "
                   "exit status 2", err=True)
        sys.exit(EXIT_USAGE)


def _finish_summary(tally, sources) -> dict:
    """The run's summary (summary.json): the tally's counts and the sources read
    (``<stdin>`` for ``-``)."""
    from chessscan.readers.sources import source_name

    summary = tally.as_dict()
    summary["sources"] = [source_name(p) for p in sources]
    return summary


def _render_with_timing(summary: dict, started: "_RunClock") -> str:
    """The summary for stderr, with the elapsed time (seconds) and the throughput. They stay
    out of summary.json, which is the same for any --jobs and any machine (run.json keeps
    them)."""
    from chessscan.reports.summary import render_summary

    elapsed = max(started.elapsed(), 1e-9)
    return render_summary({**summary, "elapsed_seconds": elapsed,
                           "games_per_second": summary.get("games_read", 0) / elapsed,
                           "positions_per_second": summary.get("positions", 0) / elapsed})


def _warn_repeated(paths) -> None:
    """A source given twice is read twice (its rows repeat with the same keys): say so."""
    seen = set()
    for p in paths:
        key = p if p == "-" else os.path.realpath(p)
        if key in seen:
            again = ("stdin is read once: the next gives nothing" if p == "-"
                     else "its games are read again")
            click.echo(f"warning: {_shown(p)} is given more than once: {again}", err=True)
        seen.add(key)


def _analyze_size(text: str) -> int:
    """``analyze --shard-size``: bytes from ``123``, ``64K``, ``32M``, ``32MiB``, ``1G``."""
    import re

    m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)(?:i?B)?\s*", text or "", re.I)
    if m is None or int(m.group(1)) < 1:
        raise click.BadParameter(f"{text!r} is not a size (e.g. 32M, 512K, 1G)")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2).upper()]


def _need_duckdb(memory: str) -> None:
    """Fail before any work (exit 2) when ``--duplicates`` cannot run: DuckDB missing, or a
    memory limit that is no size."""
    from chessscan.reports.duplicates import DuplicateError, _size, need_duckdb

    try:
        need_duckdb()
        _size(memory)
    except DuplicateError as exc:
        raise InputError(str(exc)) from None


def _search_duplicates(out_dir, fmt: str, dataset: bool, memory: str, contained: bool = False) -> dict:
    """``analyze --duplicates``, once the tables are written: the duplicates table and
    games.duplicate_of in ``out_dir`` (with ``contained``, the contained_games table too);
    returns the summary's ``duplicates`` counts. A failure to write is
    :class:`OutputFailure` (exit 4)."""
    import time

    from chessscan.reports.duplicates import (SPILL_DIR_NAME, DuplicateError, Search, add_duplicate_of,
                                              write_contained_table, write_duplicates_table)
    from chessscan.reports.writers import OutputError

    start = time.perf_counter()
    out = Path(out_dir)
    spill = out / SPILL_DIR_NAME
    try:
        with Search([out], memory, spill_dir=spill, contained=contained) as search:
            found = search.spill_dir / "found.parquet"
            search.duplicates(found)
            counts = search.counts(found)
            if contained:
                inside = search.spill_dir / "contained.parquet"
                counts["contained_games"] = search.contained(inside)
                write_contained_table(inside, out, fmt, dataset)
            write_duplicates_table(found, out, fmt, dataset)
            add_duplicate_of(search, found, fmt)
    except DuplicateError as exc:
        raise InputError(str(exc)) from None
    except OutputError as exc:
        raise OutputFailure(f"{exc}; no summary.json is written") from None
    except OSError as exc:
        raise OutputFailure(f"the duplicate search could not write in {_shown(out_dir)}: {exc}; no "
                            "summary.json is written") from None
    except Exception as exc:  # DuckDB's own errors (out of memory, out of disk while spilling)
        if type(exc).__module__.split(".")[0] != "duckdb" and not type(exc).__name__.endswith("Exception"):
            raise
        failure = WorkerDied if "OutOfMemory" in type(exc).__name__ else OutputFailure
        raise failure(f"the duplicate search failed: {type(exc).__name__}: {str(exc).splitlines()[0]} (raise "
                      "--duplicates-memory?); no summary.json is written") from None
    click.echo(f"duplicates: {counts['duplicate_games']:,} games repeat {counts['games_repeated']:,} earlier "
               f"ones" + (f"; {counts['contained_games']:,} games are the start of another"
                          if contained else "") + f" ({time.perf_counter() - start:.1f} s)", err=True)
    return counts


def _analyze_on_dask(paths, out_dir, fmt, options, jobs, address, shard_size, progress, problems=(),
                     select=None, ignore=(), duplicates_memory=None, remote=None, parts=None) -> dict:
    """``analyze --dask``: run on the cluster, check what the workers wrote, write
    summary.json, return the summary. Every failure is one line and a documented status:
    a bad or unreachable address 2, a task that failed or a scheduler lost 3, a part this
    process cannot see or write 4. ``remote``: the report goes to that object store
    (:func:`_object_output`): the workers put the parts there themselves, and what this
    process writes (summary.json, run.json...) is staged in a local folder first; ``parts``
    (a list) gets the ``(URL, rows)`` of the parts the workers put."""
    from chessscan.engines.local import tables_for
    from chessscan.reports.parts import PartMissing
    from chessscan.reports.writers import OutputError, OutputFolderError, ReportWriter, prepare_output, report_files

    if fmt != "parquet":
        raise click.UsageError("--dask writes Parquet datasets: --format csv is not supported with it")
    if "-" in paths:
        raise click.UsageError("--dask reads files, not stdin ('-')")
    try:
        import dask  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as exc:
        raise DaskUsageError(
            f"--dask needs the optional dask dependencies: pip install 'chessscan[dask]' ({exc})") from exc
    from chessscan.engines import dask as engine

    # The client's own log lines (a lost connection, each reconnect attempt, a closing
    # cluster's chatter) would bury the one line that says what happened.
    engine.quiet_logs()
    shown = _shown(out_dir)
    retried: list = []
    # (written once the workers are done; moves_key comes with --contained-games)
    later = (("duplicates",) + (("contained_games",) if options.moves_key else ())) if duplicates_memory else ()
    try:  # before the folder is made (for its lock): a bad or unreachable address leaves nothing
        resolved, _ = engine.resolve_address(address)
        if resolved != "local":
            engine.probe_scheduler(resolved, engine.connect_timeout())
    except (engine.AddressError, engine.SchedulerUnreachable) as exc:
        raise DaskUsageError(f"--dask: {exc}") from None
    files = report_files(tables_for(paths, options) + later, dataset=True)
    if remote is not None:
        out_dir = _prepare_object_output(remote, files, paths)
    try:
        _lock_output(out_dir, folder=True)  # for the whole run: a second run into it is refused
    except OSError as exc:
        raise OutputFailure(f"cannot write the report in {_shown(out_dir)}: {exc}") from exc
    try:
        prepare_output(out_dir, files, check_only=True, inputs=paths)  # before connecting: fail fast
    except OutputFolderError as exc:
        raise click.BadParameter(f"refusing to write the report there: {exc}", param_hint="-o/--output") from exc
    except OSError as exc:  # a file where the folder should be
        raise OutputFailure(f"cannot write the report in {shown}: {exc}") from exc
    try:
        written: list = []
        tally = engine.run_dask(paths, out_dir if remote is None else remote.url, options, address=address,
                                jobs=jobs, shard_size=shard_size, progress=progress, select=select, ignore=ignore,
                                problems=problems, say=lambda line: click.echo(line, err=True), retried=retried,
                                later_tables=later, output=remote, parts=written)
    except OutputFolderError as exc:
        raise click.BadParameter(f"refusing to write the report there: {exc}", param_hint="-o/--output") from exc
    except KeyboardInterrupt as exc:  # (with a URL too: the workers put the parts there)
        _exit_stopped(exc, f"the datasets in {shown}/ hold only the parts finished before")
    except (engine.AddressError, engine.SchedulerUnreachable) as exc:
        raise DaskUsageError(f"--dask: {exc}") from None
    except engine.SchedulerLost as exc:
        raise WorkerDied(f"{exc}; no summary.json is written") from None
    except engine.ShardFailed as exc:
        _fail_shard(exc, shown)
    except PartMissing as exc:
        raise OutputFailure(f"{exc}; no summary.json is written") from None
    except OutputError as exc:
        raise OutputFailure(f"{exc}; no summary.json is written") from None
    except OSError as exc:  # an input, read here to cut it in shards
        raise InputError(f"cannot read input: {exc}") from exc
    except ImportError as exc:
        raise DaskUsageError(str(exc)) from None
    except click.ClickException:
        raise
    except Exception as exc:  # a chessscan bug: exit 3, not the traceback's 1 ("issues found")
        import traceback

        traceback.print_exc()
        raise InternalError(f"internal error on Dask: {type(exc).__name__}: {exc} (a chessscan bug: please "
                            "report it with the input); no summary.json is written") from None
    from chessscan.engines.local import report_input_problems

    report_input_problems(problems or [], _NoSink(), tally)
    summary = _finish_summary(tally, paths)
    if parts is not None:
        parts.extend(written)
    if duplicates_memory and remote is not None:
        # The search reads the games table here and writes games.duplicate_of into it: its
        # parts are fetched into the staging folder, and put again (whole) with the rest.
        try:
            remote.fetch(["games"])
        except OSError as exc:
            raise OutputFailure(f"cannot read the games table back from {shown}/: {exc}; no summary.json is "
                                "written") from None
    if duplicates_memory and (Path(out_dir) / "games").is_dir():
        summary["duplicates"] = _search_duplicates(out_dir, fmt, True, duplicates_memory, options.moves_key)
    if retried:
        summary["retried_shards"] = retried
    try:
        ReportWriter(out_dir, tables=()).write_summary(summary)
    except OutputError as exc:
        raise OutputFailure(str(exc)) from None
    return summary


def _retried_lines(summary: dict) -> list[str]:
    """One line per shard of a --dask run that was run again after a worker died."""
    lines = []
    for r in summary.get("retried_shards", ()):
        start, end = r["bytes"]
        times = r["workers_died"]
        lines.append(f"retried: shard {r['shard']} ({r['source']}, bytes {start:,}-{end:,}) was run again: "
                     f"{'the worker' if times == 1 else f'{times} workers'} it was given to died")
    return lines


# The packages whose errors a URL's file system raises as they are (not as OSError).
_FILE_SYSTEM_CLIENTS = {"botocore", "aiobotocore", "s3fs", "gcsfs", "google", "adlfs", "azure", "aiohttp",
                        "fsspec", "huggingface_hub", "requests"}


def _fail_shard(exc, shown: str) -> None:
    """A --dask task failed: one line naming its shard and the cause, and the status."""
    from chessscan.engines.dask import (RUN_MARKER, SHARED_FOLDER_HINT, STORE_HINT, RunGone, StoreUnreachable,
                                        describe_shard)
    from chessscan.readers.urls import is_url
    from chessscan.reports.writers import OutputError

    cause = exc.cause
    tail = "; no summary.json is written"
    if isinstance(cause, RunGone) and cause.found is not None:  # a second run into the output meanwhile
        raise OutputRefused(f"{describe_shard(exc.shard)}: another chessscan run started writing into {shown}/ "
                            f"(its {RUN_MARKER} is there): one output holds one run at a time, give each run its "
                            f"own{tail}")
    if isinstance(cause, RunGone):  # the run was live: the worker does not see its folder
        seen = "no" if cause.found is None else "another run's"
        worker = f"the worker {cause.worker}" if cause.worker else "a worker"
        hint = STORE_HINT if is_url(shown) else SHARED_FOLDER_HINT
        raise OutputFailure(f"{describe_shard(exc.shard)}: {worker} does not see the output folder {shown}/ as this "
                            f"client does ({seen} {RUN_MARKER} there): {hint}{tail}")
    if isinstance(cause, StoreUnreachable):  # no credentials, access denied: as for an input URL, 2
        worker = f"the worker {cause.worker}" if cause.worker else "a worker"
        raise OutputRefused(f"{describe_shard(exc.shard)}: {worker} cannot write the report to {shown}/ "
                            f"({cause.cause}): {STORE_HINT}{tail}")
    if isinstance(cause, OutputError):
        raise OutputFailure(f"{cause} (on a worker, {describe_shard(exc.shard)}){tail}")
    if isinstance(cause, ImportError):
        raise DaskUsageError(f"a Dask worker cannot run chessscan ({exc.reason()}): install chessscan[dask] "
                             f"on every worker, the same version as here{tail}")
    if isinstance(cause, OSError):
        raise InputError(f"a worker cannot read the input: {exc}: the workers must see the inputs under the "
                         f"same path as this client{tail}")
    if type(cause).__module__.split(".")[0] in _FILE_SYSTEM_CLIENTS:  # (botocore's NoCredentialsError...)
        raise InputError(f"a worker cannot read the input: {exc}: the workers need the file system's "
                         f"credentials and endpoint (AWS_*, GOOGLE_*, AZURE_*, HF_TOKEN...) as this client has "
                         f"them{tail}")
    if exc.killed:
        raise WorkerDied(f"{exc}{tail}")
    # Bad content never raises in a task: this is a chessscan bug.
    import traceback

    if exc.traceback is not None:
        click.echo("".join(traceback.format_exception(type(cause), cause, exc.traceback)).rstrip(), err=True)
    raise InternalError(f"internal error in {exc} (a chessscan bug: please report it with the input){tail}")


class _PerftCommand(click.Command):
    """click reads any word starting with '-' as an option, so ``perft startpos -1`` said
    "No such option '-1'": a negative number where no option matches is read as DEPTH and
    refused by its range, as ``perft startpos -- -1`` is."""

    def parse_args(self, ctx, args):
        given = list(args)
        _refuse_unquoted_fen(given, ctx)
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            word = exc.option_name or ""
            if re.fullmatch(r"-[0-9]+", word):
                depth = next(p for p in self.params if p.name == "depth")
                depth.type.convert(word, depth, ctx)  # raises BadParameter, but for -0
                return super().parse_args(ctx, [a if a != word else "0" for a in given])  # -0 is 0
            raise


# The FEN fields after the placement: side to move, castling, en passant, the two counters.
_FEN_FIELDS = (r"[wb]", r"-|[KQkqA-Ha-h]+", r"-|[a-h][36]", r"[0-9]+", r"[0-9]+")


def _refuse_unquoted_fen(args: list[str], ctx) -> None:
    """A FEN given as several words (``perft rnbqkbnr/... w KQkq - 0 1 3``: the shell splits
    it) is a usage error that shows the command with the FEN quoted; click would have read
    the side to move as DEPTH ("'w' is not a valid integer range")."""
    words = [a for a in args if not a.startswith("--")]
    at = next((i for i, a in enumerate(words) if a.count("/") == 7), None)
    if at is None or at + 1 >= len(words) or not re.fullmatch(_FEN_FIELDS[0], words[at + 1]):
        return
    fields = [words[at]]
    for word, pattern in zip(words[at + 1:], _FEN_FIELDS):
        if not re.fullmatch(pattern, word):
            break
        fields.append(word)
    rest = words[at + len(fields):]
    if not rest and len(fields) > 4:  # the last number was DEPTH
        rest = [fields.pop()]
    depth = rest[0] if rest else "DEPTH"
    raise click.UsageError(f"the FEN must be one argument: quote it, as in chessscan perft "
                           f"\"{' '.join(fields)}\" {depth}", ctx=ctx)


@main.command(cls=_PerftCommand, context_settings=CONTEXT)
@click.argument("fen", required=False, metavar="FEN|startpos")
@click.argument("depth", required=False, type=click.IntRange(min=0))
@click.option("--divide", is_flag=True,
              help="Print the node count below each legal move (FEN DEPTH only, not --suite).")
@click.option("--suite", type=click.Path(exists=True, dir_okay=False, allow_dash=True),
              help="Check every position of a perft suite (EPD with D1..Dn, or id/epd/perft layout).")
@click.option("--max-nodes", type=click.IntRange(min=0), default=1_000_000, show_default=True,
              help="With --suite: check only depths whose expected count is at most this (0: all), "
                   "and only while the shallower depths' true counts stay under it; a position with "
                   "no depth under the cap is skipped, not passed; the summary line says how "
                   "many counts the cap left unchecked.")
@click.option("--chess960", is_flag=True,
              help="Read castling rights as Chess960 (X-FEN / Shredder). A --suite reads every "
                   "position so (Chess960 castling contains the standard rules), with or without it.")
def perft(fen, depth, divide, suite, max_nodes, chess960):
    """Count the leaf nodes of the legal move tree (move generator test).

    FEN is a position, or startpos for the standard start position. DEPTH is in plies,
    0 to 64.

    \b
    Examples:
      chessscan perft startpos 5
      chessscan perft "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1" 4
      chessscan perft --suite perftsuite.epd --max-nodes 100000

    With --suite, the exit status is 0 when every position checked passed, 1 when one
    failed or none was checked (an empty suite, or every depth over --max-nodes), 2 on a
    usage error. A warning (a depth given twice: the first count is checked; a bad
    opcode) is shown on its position's line and fails nothing.
    """
    from chessscan.core.fen import InvalidFen
    from chessscan.core.movegen import divide as divide_counts
    from chessscan.core.movegen import perft as count

    if suite:
        if fen is not None:
            raise click.UsageError("give either FEN DEPTH or --suite, not both")
        if divide:
            raise click.UsageError("--divide counts one position: it cannot be given with --suite")
        _check_perft_suite(suite)
        sys.exit(_perft_suite(suite, max_nodes))
    if fen is None or depth is None:
        raise click.UsageError("give FEN and DEPTH, or --suite FILE")
    from click.core import ParameterSource

    if click.get_current_context().get_parameter_source("max_nodes") == ParameterSource.COMMANDLINE:
        # FEN DEPTH counts the whole tree, whatever its size: a cap there would be ignored.
        raise click.UsageError("--max-nodes caps a --suite run: it cannot be given with FEN DEPTH")
    from chessscan.readers.epd import MAX_PERFT_DEPTH

    if depth > MAX_PERFT_DEPTH:  # one C stack frame per ply: a deep count overflowed the stack
        raise click.UsageError(f"DEPTH {depth} is over {MAX_PERFT_DEPTH}")
    if fen.strip().lower() == "startpos":  # as UCI's `position startpos`
        from chessscan.core.position import STARTING_FEN

        fen = STARTING_FEN
    if not chess960:
        from chessscan.core.fen import validate_setup

        if validate_setup(fen)[2]:
            chess960 = True
            click.echo("castling rights that only Chess960 explains: read as Chess960", err=True)
    try:
        pos = _perft_position(fen, chess960)
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


def _perft_position(fen: str, chess960: bool):
    """The position to count from ``fen`` (six FEN fields, or the first four of an EPD).

    A position no game reaches but whose moves are well defined is counted (suites hold
    them); bad castling rights are dropped. Raises :class:`InvalidFen` for a malformed FEN,
    a missing or extra king, a pawn on a back rank, the side not to move in check, and an
    en-passant square no double push explains (as analyze does): clearing that square, as
    ``parse_fen(strict=False)`` does, would count another position than the one given.
    """
    from chessscan.core.fen import InvalidFen, parse_fen, validate_fen

    pos = parse_fen(fen, chess960=chess960, strict=False)
    if fen.split()[3] != "-":
        bad = [(code, f"{why} (the en-passant square is the one a pawn just passed over in a "
                      "double push: PGN standard §16.1.3.4)")
               for code, why in validate_fen(fen, chess960=chess960)[1] if code == "bad-en-passant"]
        if bad:
            raise InvalidFen(fen, bad)
    return pos


def _check_perft_suite(path: str) -> None:
    """Exit 2 with one message unless ``path`` starts like a perft suite: its first line that
    is not blank or a ``#`` comment is an EPD record or an ``id``/``epd``/``perft`` line."""
    from chessscan.readers import sources
    from chessscan.readers.epd import looks_like_epd
    from chessscan.readers.sources import TruncatedInput, open_source

    try:
        if path == sources.STDIN or sources.is_pipe(path):
            head, stream = sources.peek_once(path)  # read once: handed on to the run unread
            refusal = getattr(stream, "refusal", None)
        else:
            with open_source(path) as stream:
                refusal = stream.refusal
                head = b"" if refusal else stream.peek(1 << 16)[: 1 << 16]
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except TruncatedInput:
        return  # a compressed suite corrupt near its start: its run reports truncated-input
    if refusal is not None:
        raise InputError(f"{path} is not a perft suite: {refusal}")
    for line in head.removeprefix(b"\xef\xbb\xbf").splitlines():
        text = line.strip().strip(b"\0")
        if not text or text.startswith(b"#"):
            continue
        if text.split(None, 1)[0].lower() in (b"id", b"epd", b"perft") or looks_like_epd(text):
            return
        shown = text[:60].decode("utf-8", "replace")
        raise InputError(f"{path} is not a perft suite: its first line is '{shown}' (expected EPD lines "
                         "with D1..Dn node counts, or id/epd/perft blocks)")
    # Blank or comments only: the suite's own run says it holds no position.


def _perft_suite(path: str, max_nodes: int) -> int:
    import time

    from chessscan.core.fen import InvalidFen
    from chessscan.core.movegen import perft as count
    from chessscan.readers.epd import error_severity, read_perft_suite

    passed = failed = skipped = 0
    counts = unchecked = 0  # node counts of the positions run, and those over the cap
    start = time.perf_counter()
    for case in read_perft_suite(path):
        label = case.id or f"line {case.line}"
        # A message naming the line the label already names drops that prefix.
        same_line = "" if case.id else f"line {case.line}: "
        messages = [e[1].removeprefix(same_line) for e in case.errors]
        # Warnings (a depth given twice, a bad opcode) keep the first count, which is checked;
        # a position with no count at all has nothing to pass, so it fails.
        if any(error_severity(e[0]) == "error" or e[0] == "no-depths" for e in case.errors):
            failed += 1
            click.echo(_shown(f"FAIL {label}: {'; '.join(messages)}"))
            continue
        warned = f" (warning: {'; '.join(messages)})" if messages else ""
        try:
            # Chess960 castling rules contain the standard ones, so one parser serves both.
            pos = _perft_position(case.fen, True)
        except InvalidFen as exc:
            failed += 1
            click.echo(_shown(f"FAIL {label}: {exc}"))
            continue
        results = []
        ok = True
        checked = 0
        counts += len(case.depths)
        counted: dict[int, int] = {}  # depth -> true count, for the cap below
        for depth, expected in sorted(case.depths.items()):
            if max_nodes and expected > max_nodes:
                unchecked += 1
                results.append(f"D{depth} skipped")
                continue
            if max_nodes:
                # A count under the cap may be wrong (a typo, D14 1): each shallower depth is
                # counted first, and past the cap the deeper one is skipped, not run for hours.
                over = None
                for d in range(1, depth):
                    if d not in counted:
                        counted[d] = count(pos, d)
                    if counted[d] > max_nodes:
                        over = d
                        break
                if over is not None:
                    unchecked += 1
                    results.append(f"D{depth} skipped (D{over} already has {counted[over]:,} nodes)")
                    continue
            checked += 1
            got = counted[depth] if depth in counted else count(pos, depth)
            counted[depth] = got
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
        click.echo(_shown(f"{status} {label}: {', '.join(results) or 'no depth given'}{warned}"))
    click.echo(f"checked in {time.perf_counter() - start:.1f} s", err=True)
    # What the cap left out is said: a wrong count over it (D6 1e12) cannot fail the run.
    click.echo(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else "")
               + (f"; {unchecked} of {counts} counts not checked (over --max-nodes)" if unchecked else ""))
    if not passed and not failed:
        click.echo("no position was checked (raise --max-nodes, or 0 for no cap)" if skipped
                   else "the suite holds no position", err=True)
        return 1
    return 1 if failed else 0


def _validate_source(path: str, sink, options: AnalysisOptions, jobs: int | None, progress: bool):
    """``validate``'s run over one source on the engine of ``analyze`` (``jobs`` workers;
    None: every core); returns its tally. A dead worker: :class:`WorkerDied` (exit 3)."""
    from concurrent.futures.process import BrokenProcessPool

    from chessscan.engines.local import run

    try:
        return run([path], sink, options, progress=progress, jobs=jobs, progress_label="validate")
    except BrokenProcessPool as exc:
        raise WorkerDied(f"a worker process died while reading {path} ({exc}); out of memory? "
                         "Try fewer --jobs") from exc


@main.command(context_settings=CONTEXT)
@click.argument("report_dirs", nargs=-1, required=True, metavar="REPORT_DIR [REPORT_DIR...]",
                type=click.Path(file_okay=False))
@click.option("-o", "--output", "out", default=None, type=click.Path(dir_okay=False),
              help="Write the shared games here: .parquet, else CSV (default: CSV on stdout).")
@click.option("--memory", "memory", metavar="SIZE", default="512MB", show_default=True,
              help="DuckDB's memory limit for the search (256MB, 2GB...); beyond it DuckDB spills to a "
                   "new folder in the system's temporary folder, removed when the search ends.")
@click.option("--contained-games", "find_contained", is_flag=True,
              help="Instead of the shared games, write the games whose whole mainline is the start of another "
                   "game's from the same start position (an unfinished copy), in any of the reports, each with "
                   "one game that continues it: report, source, game_index, line, plies, then in_report, "
                   "in_source, in_game_index, in_line, in_plies. Needs reports written with analyze "
                   "--duplicates --contained-games (games.moves_key).")
def duplicates(report_dirs, out, memory, find_contained):
    """The games that two or more reports share (a train set and a test set), from their games
    tables' moves_hash alone, without reading the PGN again.

    With one REPORT_DIR: the games it holds twice or more. One row per game whose moves_hash
    is in two or more of the reports (one report: twice or more in it), grouped by hash in the
    order of their first occurrence: report (the folder as given), source, game_index, line,
    moves_hash. A summary line goes to stderr. A folder that is not a report, or whose games
    table has no moves_hash (an older chessscan), is a one-line error, exit status 2.

    \b
    Examples:
      chessscan duplicates train-report test-report -o shared.csv
      chessscan duplicates report
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from chessscan.readers.sources import display_path
    from chessscan.reports.duplicates import DuplicateError, Search, _size

    seen: dict[str, str] = {}
    for d in report_dirs:  # (the same games twice over would be every game shared)
        if "://" in d and not os.path.exists(d):
            raise click.BadParameter(f"{_shown(d)}: chessscan duplicates reads local report folders: copy the "
                                     "report there first", param_hint="REPORT_DIR")
        real = os.path.realpath(d)
        if real in seen:
            raise click.BadParameter(f"{_shown(display_path(d))} is the report {_shown(display_path(seen[real]))} "
                                     "again: give each report once", param_hint="REPORT_DIR")
        seen[real] = d

    try:
        _size(memory)
        search = Search(report_dirs, memory, contained=find_contained)
    except DuplicateError as exc:
        raise InputError(str(exc)) from None
    unfinished = [d for d in report_dirs if not os.path.isfile(os.path.join(d, "summary.json"))]
    if unfinished:
        search.close()
        raise InputError(f"{_shown(display_path(unfinished[0]))} has no summary.json: the run that wrote it did not "
                         "finish (its tables may hold only some of its games): run it again")
    if find_contained:
        with search:
            _write_contained(search, report_dirs, out)
        return
    with search:
        found = search.spill_dir / "shared.parquet"
        rows = search.shared(found)
        n_hashes = search.con.execute(
            f"SELECT count(DISTINCT moves_hash) FROM read_parquet('{found}')").fetchone()[0]
        counts = dict(search.con.execute(
            f"SELECT report, count(*) FROM read_parquet('{found}') GROUP BY report").fetchall())
        names = pa.array([display_path(d) for d in report_dirs], pa.string())  # (\xNN for non-UTF-8)
        schema = _shared_schema()
        _write_batches(out, schema, "shared games", (pa.record_batch([
            names.take(batch.column("report")), batch.column("source"), batch.column("game_index"),
            batch.column("line"), batch.column("moves_hash")], schema=schema)
            for batch in pq.ParquetFile(found, pre_buffer=False).iter_batches(batch_size=65_536)))
    what = "reports share" if len(report_dirs) > 1 else "report holds more than once"
    click.echo(f"{n_hashes:,} games the {what}: {rows:,} rows ("
               + ", ".join(f"{_shown(d)}: {counts.get(i, 0):,}" for i, d in enumerate(report_dirs)) + ")"
               + (f" -> {_shown(out)}" if out else ""), err=True)


def _write_contained(search, report_dirs, out) -> None:
    """``chessscan duplicates --contained-games``: the contained games to ``out`` (None:
    CSV on stdout) and a summary line to stderr."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from chessscan.readers.sources import display_path

    found = search.spill_dir / "contained.parquet"
    rows = search.contained(found)
    names = pa.array([display_path(d) for d in report_dirs], pa.string())  # (\xNN for non-UTF-8)
    schema = pa.schema([("report", pa.string()), ("source", pa.string()), ("game_index", pa.int64()),
                        ("line", pa.int64()), ("plies", pa.int32()), ("in_report", pa.string()),
                        ("in_source", pa.string()), ("in_game_index", pa.int64()), ("in_line", pa.int64()),
                        ("in_plies", pa.int32())])
    def rows_of(batch):
        c = {n: batch.column(n) for n in batch.schema.names}
        return pa.record_batch([
            names.take(c["report"]), c["source"], c["game_index"], c["line"], c["plies"],
            names.take(c["in_report"]), c["in_source"], c["in_game_index"], c["in_line"], c["in_plies"]],
            schema=schema)

    _write_batches(out, schema, "contained games", (
        rows_of(batch) for batch in pq.ParquetFile(found, pre_buffer=False).iter_batches(batch_size=65_536)))
    click.echo(f"{rows:,} games are the start of another game's mainline" + (f" -> {_shown(out)}" if out else ""),
               err=True)


def _write_batches(out, schema, what: str, batches) -> None:
    """``chessscan duplicates``: write ``batches`` (of ``schema``) to ``out``: Parquet when
    it ends in ``.parquet``, CSV otherwise, CSV on stdout when None."""
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    try:
        if out is not None and out.endswith(".parquet"):
            writer = pq.ParquetWriter(out, schema)
        else:
            sink = sys.stdout.buffer if out is None else open(out, "wb")
            writer = pacsv.CSVWriter(sink, schema)
        for batch in batches:
            writer.write_batch(batch)
        writer.close()
        if out is not None and not out.endswith(".parquet"):
            sink.close()
        elif out is None:
            sys.stdout.flush()
    except OSError as exc:
        if out is None:  # stdout: its own rule (a reader gone, `| head`: a quiet 141)
            _fail_output(exc)
        raise OutputFailure(f"cannot write the {what}: {exc}") from None


def _shared_schema():
    import pyarrow as pa

    return pa.schema([("report", pa.string()), ("source", pa.string()), ("game_index", pa.int64()),
                      ("line", pa.int64()), ("moves_hash", pa.string())])


class InputError(click.ClickException):
    """An input that exists but cannot be read (permission denied, I/O error): exit 2, like
    a usage error, so that CI tells "the gate could not run" from "the data has issues"."""

    exit_code = EXIT_USAGE


class WorkerDied(click.ClickException):
    """A worker process died (killed, out of memory): exit 3, the run could not finish."""

    exit_code = EXIT_INTERNAL


class InternalError(click.ClickException):
    """A chessscan bug met in a task (its traceback printed before): exit 3."""

    exit_code = EXIT_INTERNAL


class DaskUsageError(click.ClickException):
    """``--dask`` cannot be used as given: a bad or unreachable address, what answers there
    is not a scheduler, or the dask extra is missing: exit 2, one line."""

    exit_code = EXIT_USAGE


@main.command(context_settings=CONTEXT)
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "github", "sarif"]), default="text",
              show_default=True, help="text: path:line:column: error[code]: message; json: one "
                                      "document; github: Actions workflow commands (annotations); "
                                      "sarif: a SARIF 2.1.0 log (GitHub code scanning).")
@click.option("--fail-on", type=click.Choice(["error", "warning"]), default="error", show_default=True,
              help="Lowest severity that makes the exit status 1.")
@click.option("--cross-check", type=click.Choice(CROSS_CHECK_CHOICES), default="off", show_default=True,
              help="Also replay games in python-chess and report each disagreement as a warning.")
@click.option("--select", "select", multiple=True, metavar="CODE[,CODE...]",
              help="Report only these issue codes (or groups: syntax, moves, positions, "
                   "consistency, input); the counts still include every issue.")
@click.option("--ignore", "ignore", multiple=True, metavar="CODE[,CODE...]",
              help="Do not report these issue codes (or groups); they do not fail the run, "
                   "and the counts still include them.")
@click.option("--clean-output", metavar="FILE", default=None,
              help="Copy every game (EPD line) with no issue at or above --fail-on here, byte for "
                   "byte, in input order (.gz/.bz2/.xz/.zst by suffix; - for stdout). Of game tables: "
                   "their rows, with the tables' schema, as Parquet (.parquet, .pq) or Arrow IPC (.arrow, "
                   ".feather, .ipc) by suffix, else in the inputs' format.")
@click.option("--rejects-output", metavar="FILE", default=None,
              help="Copy every other game here, byte for byte (of game tables: their rows, as for "
                   "--clean-output); FILE.issues.csv lists their issues with their game number and line "
                   "(row) in FILE. A FILE.issues.csv already there is replaced only if it is one this "
                   "command wrote (its first line the issues header); anything else there is refused.")
@click.option("--baseline", "baseline_path", metavar="FILE", default=None,
              help="Known issues (a file of --write-baseline): only issues not in it are shown and "
                   "fail; entries no longer found are reported as fixed.")
@click.option("--write-baseline", metavar="FILE", default=None,
              help="Record every issue found in a baseline file (sorted JSON, keyed on the game's "
                   "content, the code and the ply).")
@click.option("--moves-column", metavar="NAME", default=None,
              help="The column holding the moves in Parquet/Arrow game tables (default: the first "
                   "of movetext, moves_san, moves_uci, transcript, in any case).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes (default: one per core, or all in this process on 2 cores or "
                   "fewer; 1: all in this process). The diagnostics, their order and the counts are "
                   "the same for any number.")
@click.option("--silent", is_flag=True, help="No progress bar (shown on stderr when it is a terminal).")
@click.option("--duplicates", "find_duplicates", is_flag=True,
              help="Also report each game that repeats an earlier one of the run (the same moves from the "
                   "same start position) as a duplicate-game warning naming the first one's file and line, "
                   "after the other diagnostics (they are known once every input is read). The hashes wait "
                   "on disk in the system's temporary folder; the search runs in DuckDB within "
                   "--duplicates-memory. Needs chessscan[duplicates]; not with the split or the baselines.")
@click.option("--duplicates-memory", metavar="SIZE", default="512MB", show_default=True,
              help="With --duplicates: DuckDB's memory limit for the search; beyond it DuckDB spills to "
                   "the system's temporary folder.")
def validate(paths, fmt, fail_on, cross_check, moves_column, jobs, silent, select, ignore, clean_output,
             rejects_output, baseline_path, write_baseline, find_duplicates, duplicates_memory):
    """Check PGN games and EPD positions and print one diagnostic per problem (a CI gate).

    Runs the same analysis as `analyze` but writes no table: each issue becomes a line
    `path:line:column: severity[code]: message (game_index N "White - Black", ply P)` on stdout,
    in input order; the counts, and the issues by code, go to stderr. PATHS are files (PGN,
    EPD, game tables), folders (their .pgn and .epd files and tables, recursively), URLs or
    - for stdin. Codes are listed in the
    documentation ("Issue codes"); --select and --ignore choose which are reported.

    \b
    Exit status:
      0  nothing at or above --fail-on
      1  issues at or above --fail-on
      2  usage error, an input that cannot be read, or an output another run is writing
      3  internal error (a chessscan bug)
      4  stdout or an output file could not be written (disk full, closed)
      128+N  stopped by signal N (130 Ctrl-C, 143 SIGTERM); the counts so far on stderr;
             141 quietly when stdout's reader went away (| head)

    \b
    Examples:
      chessscan validate games.pgn puzzles.epd
      chessscan validate --format github --fail-on warning data/*.pgn.zst
      chessscan validate games.pgn --clean-output clean.pgn --rejects-output rejects.pgn
      chessscan validate --baseline known.json --format sarif data/*.pgn > chess.sarif
    """
    import json

    from chessscan.analysis.game import Tally
    from chessscan.engines.local import is_epd, report_input_problems
    from chessscan.readers.inputs import InputProblem
    from chessscan.readers.sources import source_name
    from chessscan.reports.codes import ISSUE_CODES
    from chessscan.reports.diagnostics import (DiagnosticSink, closing_line, counts_by_code, format_github,
                                               format_text)
    from chessscan.reports.filters import IssueFilter
    from chessscan.reports.writers import OutputError

    if "stdout" in _CLOSED:  # its diagnostics would go nowhere: refused before any reading
        _fail_output(OutputError("<stdout>", "it is closed"))
    select_codes, ignore_codes = _code_options(select, ignore)
    if find_duplicates:
        if any((clean_output, rejects_output, baseline_path, write_baseline)):
            # (they decide each game as it is read; a duplicate is known once every input is read)
            raise click.UsageError("--duplicates cannot be combined with --clean-output, --rejects-output, "
                                   "--baseline or --write-baseline")
        _need_duckdb(duplicates_memory)
    items = _resolve_cli_inputs(paths, ordered=True, moves_column=moves_column)
    sources = [i for i in items if not isinstance(i, InputProblem)]
    _warn_repeated(paths)

    out = sys.stdout

    def write(text: str) -> None:
        try:
            out.write(text)
        except OSError as exc:  # not the input's fault: its own status
            raise OutputError("<stdout>", exc) from None

    to_stdout = "-" in (clean_output, rejects_output)
    collected = []
    if fmt == "json":
        # Streamed: one diagnostic in memory at a time, however many the input holds.
        first = [True]

        def emit(d) -> None:
            item = json.dumps(d.as_json(), ensure_ascii=False)
            write(("\n  " if first[0] else ",\n  ") + item)
            first[0] = False
    elif fmt == "sarif":
        emit = collected.append
    elif to_stdout:  # the games go to stdout: the diagnostics to stderr
        render = format_github if fmt == "github" else format_text
        emit = lambda d: click.echo(render(d), err=True)  # noqa: E731
    else:
        render = format_github if fmt == "github" else format_text
        emit = lambda d: write(render(d) + "\n")  # noqa: E731
    # (given '-', the gate refuses it: stdin cannot be read twice)
    gate = _validate_gate(list(paths) if "-" in paths else sources, fmt, fail_on, emit, clean_output,
                          rejects_output, baseline_path, write_baseline, moves_column)
    sink = DiagnosticSink(emit) if gate is None else _gate_sink(gate, sources)
    issue_filter = IssueFilter(sink, select_codes, ignore_codes)
    hashes = None
    if find_duplicates:
        import tempfile

        from chessscan.reports.duplicates import HashCollector

        hashes = HashCollector(issue_filter, tempfile.mkdtemp(prefix="chessscan-validate-"))
    if fmt == "json":
        write('{"diagnostics": [')
    # The moves hash serves --duplicates only: validate writes no games table.
    options = AnalysisOptions(positions="none", cross_check=cross_check, moves_column=moves_column,
                              moves_hash=find_duplicates)
    tally = Tally()
    tally.cross_check_mode = cross_check
    unreadable = False
    stopped: KeyboardInterrupt | None = None
    progress = not silent and sys.stderr.isatty()
    # One run per source: DiagnosticSink orders and names games within one source.
    for p in items:
        if isinstance(p, InputProblem):
            unreadable |= p.severity == "error"  # missing, unreadable, not text, an archive: as analyze
            if gate is not None and p.severity == "error":
                gate.input_errors.add(p.source)
            report_input_problems([p], issue_filter, tally)
            sink.finish()
            continue
        try:
            tally.merge(_validate_source(p, issue_filter if hashes is None else hashes, options, jobs, progress))
        except KeyboardInterrupt as exc:
            _ignore_stop_signals()
            stopped = exc
            break
        except OutputError as exc:
            _fail_output(exc)
        except OSError as exc:
            raise InputError(f"cannot read input: {exc}") from exc
        except click.ClickException:
            raise
        except Exception as exc:
            # Bad content never raises, so this is a chessscan bug. Exit 3, not the traceback's
            # 1, so that a CI gate cannot mistake it for "the data has issues".
            import traceback

            traceback.print_exc()
            click.echo(f"chessscan: internal error while reading {_shown(p)}: {type(exc).__name__}: {_shown(exc)} "
                       "(a chessscan bug: please report it with the input)", err=True)
            sys.exit(EXIT_INTERNAL)
        try:
            # The file's other diagnostics first, then its held once-per-file row: the same
            # order whatever the engine's batches (--jobs).
            sink.finish()
            issue_filter.finish()
            sink.finish()
        except OutputError as exc:
            _fail_output(exc)

    if hashes is not None:
        _validate_duplicates(hashes, stopped, duplicates_memory, issue_filter, sink, emit, tally)
    errors, warnings = sink.counts.get("error", 0), sink.counts.get("warning", 0)
    failing = errors + (warnings if fail_on == "warning" else 0)
    status = _stop_status(stopped) if stopped is not None else EXIT_USAGE if unreadable else 1 if failing else 0
    summary = tally.as_dict()
    summary.update(sources=[source_name(p) for p in sources], errors=errors, warnings=warnings,
                   fail_on=fail_on, exit_status=status)
    if stopped is not None:
        # The games of the file being read when stopped are not in the game counts.
        summary["stopped"] = _stop_name(stopped)
    try:
        if gate is not None and stopped is None:
            status = _validate_gate_close(gate, summary, status, write_baseline, baseline_path,
                                          clean_output, rejects_output)
        elif gate is not None:
            # Whole games, those read before the stop, but not the whole split: kept as .partial
            gate.close(complete=False)
    except OutputError as exc:
        _fail_output(exc)
    except OSError as exc:  # a table the split could not read again to its end
        raise InputError(f"cannot read input: {exc}") from exc
    try:
        if fmt == "json":
            write("\n], \"summary\": " + json.dumps(summary, indent=2, ensure_ascii=False) + "}\n")
        elif fmt == "sarif":
            from chessscan.reports.sarif import sarif_text

            write(sarif_text(collected) + "\n")
        out.flush()
    except OSError as exc:
        _fail_output(exc if isinstance(exc, OutputError) else OutputError("<stdout>", exc))
    if stopped is not None:
        click.echo(f"\n{_stop_name(stopped)}: {errors} errors and {warnings} warnings so far "
                   f"(games of the files finished: {summary['games_read']})", err=True)
        if gate is not None and gate.split is not None and gate.split.kept:
            kept = ", ".join(_shown(k) for k in gate.split.kept)
            click.echo(f"the split is partial, kept as: {kept}", err=True)
    elif fmt != "json":
        has_epd = any(is_epd(p) for p in sources)
        has_pgn = not has_epd or any(not is_epd(p) for p in sources)
        click.echo(closing_line(summary, pgn=has_pgn, epd=has_epd,
                                baseline=gate is not None and gate.baseline is not None), err=True)
        counts = counts_by_code(summary, ISSUE_CODES, hidden=issue_filter.hidden, reported=issue_filter.reported)
        if counts:
            click.echo(counts, err=True)
    sys.exit(status)


def _validate_duplicates(hashes, stopped, memory, issue_filter, sink, emit, tally) -> None:
    """``validate --duplicates`` once every input is read: the duplicate-game warnings (each
    counted in ``tally`` and ``sink.counts``, emitted unless --select/--ignore hide it), and
    the hashes' folder removed. Nothing is searched after a stop."""
    import shutil

    from chessscan.analysis.game import add_issue
    from chessscan.reports.duplicates import DuplicateError, Search, duplicate_diagnostics
    from chessscan.reports.writers import OutputError

    try:
        hashes.close()
        if stopped is not None:
            return
        with Search([hashes.folder], memory, spill_dir=hashes.folder / "spill") as search:
            found = hashes.folder / "found.parquet"
            search.duplicates(found)
            wanted = issue_filter.wanted("duplicate-game")
            counted = {k: [] for k in ("source", "game_index", "line", "column", "ply", "severity", "code",
                                       "message", "san")}
            for d in duplicate_diagnostics(found):
                add_issue(counted, tally, d.path, d.game_index, d.line, None, None, "warning", d.code, d.message)
                for column in counted.values():
                    column.clear()
                if wanted:
                    sink.counts["warning"] = sink.counts.get("warning", 0) + 1
                    issue_filter.reported["duplicate-game"] = issue_filter.reported.get("duplicate-game", 0) + 1
                    emit(d)
                else:
                    issue_filter.hidden["duplicate-game"] = issue_filter.hidden.get("duplicate-game", 0) + 1
    except DuplicateError as exc:
        raise InputError(str(exc)) from None
    except OutputError as exc:
        _fail_output(exc)
    except OSError as exc:
        raise OutputFailure(f"the duplicate search could not write in the temporary folder: {exc}") from None
    except Exception as exc:  # DuckDB's own errors (out of memory, out of disk while spilling)
        if type(exc).__module__.split(".")[0] != "duckdb" and not type(exc).__name__.endswith("Exception"):
            raise
        failure = WorkerDied if "OutOfMemory" in type(exc).__name__ else OutputFailure
        raise failure(f"the duplicate search failed: {type(exc).__name__}: {str(exc).splitlines()[0]} (raise "
                      "--duplicates-memory?)") from None
    finally:
        shutil.rmtree(hashes.folder, ignore_errors=True)


def _fail_output(exc: BaseException) -> None:
    """stdout failed (disk full, closed): one line on stderr, exit 4, and nothing more
    written (Python would try to flush stdout again at exit and print a traceback). A pipe
    closed by its reader (`| head`) is no failure: a quiet exit 141, as a shell shows a
    process ended by SIGPIPE."""
    broken_pipe = getattr(exc, "errno", None) == errno.EPIPE
    if not broken_pipe:
        click.echo(f"chessscan: {_shown(exc)}", err=True)
    try:
        sys.stdout = open(os.devnull, "w")
    except OSError:
        pass
    sys.exit(128 + 13 if broken_pipe else EXIT_OUTPUT)


def _validate_gate(paths, fmt, fail_on, emit, clean_output, rejects_output, baseline_path, write_baseline,
                   moves_column=None):
    """``validate``'s split and baseline options checked and opened: a
    :class:`~chessscan.reports.gate.Gate`, or None when none is given."""
    if not any((clean_output, rejects_output, baseline_path, write_baseline)):
        return None
    from chessscan.engines.local import is_epd
    from chessscan.reports.baseline import Baseline, BaselineError, BaselineRecorder
    from chessscan.reports.gate import Gate
    from chessscan.reports.split import SplitWriter, sidecar_path, sidecar_refusal

    from chessscan.readers.sources import is_pipe

    if "-" in paths:
        raise click.UsageError("--clean-output, --rejects-output, --baseline and --write-baseline read "
                               "each input twice: give files, not stdin ('-')")
    piped = [p for p in paths if is_pipe(p)]
    if piped:  # the second reading found the pipe empty: no game was copied, silently
        raise click.UsageError("--clean-output, --rejects-output, --baseline and --write-baseline read "
                               f"each input twice: give files, not a pipe ({piped[0]})")
    from chessscan.readers.tables import is_table

    tables = [p for p in paths if is_table(p)]
    if tables and (baseline_path or write_baseline):  # (keyed on a game's text, which a row has not)
        raise click.UsageError("--baseline and --write-baseline key issues on the games' text: give PGN or "
                               f"EPD inputs, not a game table ({tables[0]})")
    outputs = [o for o in (clean_output, rejects_output) if o]
    if outputs and tables and len(tables) < len(paths):
        text = next(p for p in paths if p not in tables)
        raise click.UsageError("--clean-output/--rejects-output write rows for game tables and text for PGN "
                               f"or EPD: give game tables or text files, not both ({tables[0]}, {text})")
    table_split = _table_split_plan(tables, clean_output, rejects_output, moves_column) if outputs and tables \
        else None
    if "-" in outputs and fmt in ("json", "sarif"):
        raise click.UsageError(f"--format {fmt} prints to stdout: write the games to files, not '-'")
    from chessscan.readers.urls import is_url

    for out, opt in ((clean_output, "--clean-output"), (rejects_output, "--rejects-output"),
                     (write_baseline, "--write-baseline")):
        if out and is_url(out):  # (written locally, renamed into place: a store has no rename)
            raise click.BadParameter(f"{out} is a URL: this file is written on this machine; write it here and "
                                     "copy it to the store", param_hint=opt)
    # Two writers into one file would interleave or replace each other's output.
    side = rejects_output and sidecar_path(rejects_output)
    named = [(o, opt) for o, opt in ((clean_output, "--clean-output"), (rejects_output, "--rejects-output"),
                                     (side, "--rejects-output's issues file"),
                                     (write_baseline, "--write-baseline")) if o]
    for i, (a, a_opt) in enumerate(named):
        for b, b_opt in named[i + 1:]:
            if a == b or ("-" not in (a, b) and _same_file(a, b)):
                raise click.UsageError(f"{a_opt} and {b_opt} must be two different files ({b})")
    for out, what in ((clean_output, "the games"), (rejects_output, "the games"),
                      (side, "the issues of the rejected games"), (write_baseline, "the baseline")):
        if out and out != "-" and any(_same_file(out, p) for p in paths):
            raise click.UsageError(f"{out} is an input: {what} would be written over it")
    why = side and sidecar_refusal(rejects_output, through=table_split is None)
    if why:  # (a name the user never gave: only a file this command wrote there is replaced)
        raise click.UsageError(f"{side} is in the way of the issues of the rejected games ({why}): move it "
                               "or choose another --rejects-output")
    if outputs and len({is_epd(p) for p in paths}) > 1:
        raise click.UsageError("--clean-output/--rejects-output write one file each: give PGN inputs "
                               "or EPD inputs, not both")
    if write_baseline and not Path(write_baseline).resolve().parent.is_dir():
        raise click.BadParameter(f"no such folder: {Path(write_baseline).parent}", param_hint="--write-baseline")
    if write_baseline and os.path.isdir(write_baseline):  # (refused before the run, not after it)
        raise click.BadParameter(f"cannot write there: {write_baseline} is a folder", param_hint="--write-baseline")
    # Each output locked for the whole run: a second run into one of them is refused.
    for out, opt in named:
        try:
            _lock_output(out)
        except OSError as exc:
            raise click.BadParameter(f"cannot write there: {exc}", param_hint=opt) from exc
    baseline = None
    if baseline_path:
        try:
            baseline = Baseline.load(baseline_path)
        except OSError as exc:
            raise click.BadParameter(f"cannot read it: {exc}", param_hint="--baseline") from exc
        except BaselineError as exc:
            raise click.BadParameter(str(exc), param_hint="--baseline") from exc
    try:
        if table_split is not None:
            from chessscan.reports.split import TableSplitWriter

            split = TableSplitWriter(clean_output, rejects_output, fail_on, *table_split)
        else:
            split = SplitWriter(clean_output, rejects_output, fail_on) if outputs else None
    except OSError as exc:
        raise click.BadParameter(f"cannot write there: {exc}",
                                 param_hint="--clean-output/--rejects-output") from exc
    return Gate(emit, split, baseline, BaselineRecorder() if write_baseline else None)


def _table_split_plan(tables, clean_output, rejects_output, moves_column):
    """``(schema, formats, sources, compression)`` for the split of the game tables
    ``tables`` (see :class:`~chessscan.reports.split.TableSplitWriter`). Every table whose
    moves the analysis can read must have one schema (metadata aside): the rows go to one
    table each, as they are. A table the analysis cannot read gives no row (its issue is
    reported by the run). Raises click.UsageError (a BadParameter for an output)."""
    from chessscan.readers.sources import source_name
    from chessscan.readers.tables import TableError, inspect_table, parquet_codec, table_schema
    from chessscan.reports.split import table_output_format

    schema, first, sources = None, None, {}
    for p in tables:
        try:
            inspect_table(p, moves_column)
            kind, this, _ = table_schema(p)
        except TableError:
            continue
        if schema is None:
            schema, first = this, (p, kind)
        elif not this.equals(schema, check_metadata=False):
            raise click.UsageError(f"--clean-output/--rejects-output write the rows of every table into one: "
                                   f"{_shown(first[0])} and {_shown(p)} have different columns "
                                   f"({_schema_difference(schema, this)}): split them apart")
        sources[source_name(p)] = p
    kind = first[1] if first else "parquet"
    formats = []
    for out, opt in ((clean_output, "--clean-output"), (rejects_output, "--rejects-output")):
        try:
            formats.append(table_output_format(out, kind) if out else None)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint=opt) from None
        if out and os.path.exists(out) and not os.path.isfile(out):
            raise click.BadParameter(f"{out} is not a regular file: the rows of game tables are written to a "
                                     "new file renamed into place", param_hint=opt)
    import pyarrow as pa

    return (schema if schema is not None else pa.schema([]), tuple(formats), sources,
            parquet_codec(first[0]) if first else None)


def _schema_difference(a, b) -> str:
    """The first difference of two Arrow schemas, in words."""
    for name in a.names:
        if name not in b.names:
            return f"no {name!r} in the second"
    for name in b.names:
        if name not in a.names:
            return f"no {name!r} in the first"
    if a.names != b.names:
        return "the columns in another order"
    for fa, fb in zip(a, b):
        if not fa.equals(fb):
            return f"{fa.name!r}: {fa.type}{'' if fa.nullable else ' not null'} and {fb.type}" \
                   f"{'' if fb.nullable else ' not null'}"
    return "their fields differ"


def _same_file(a: str, b: str) -> bool:
    """Whether paths ``a`` and ``b`` name one file (a hard link too, when both exist)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(a).resolve() == Path(b).resolve()


def _gate_sink(gate, sources=()):
    """The run's sink when a gate is used: a DiagnosticSink whose diagnostics reach the gate
    with their game's bytes, in input order. ``sources``: the paths read, each read again by
    its own bytes (the rows name it by its display name, ``Caf\\xe9.pgn``)."""
    from chessscan.readers.sources import source_name
    from chessscan.reports.diagnostics import DiagnosticSink
    from chessscan.reports.records import RecordSink

    paths = {source_name(p): (p, source_name(p)) for p in sources}
    records = RecordSink(gate, paths=paths, want_bytes=gate.needs_bytes)
    return records.wrap(DiagnosticSink(records.add), counts=gate.counts)


def _validate_gate_close(gate, summary, status, write_baseline, baseline_path, clean_output,
                         rejects_output) -> int:
    """Close the split files, write the baseline, report on stderr (and in ``summary``) what
    the split wrote and the baseline's known and fixed issues. Returns the exit status."""
    from chessscan.reports.baseline import FIXED_SHOWN
    from chessscan.reports.split import sidecar_path

    gate.close()
    if gate.split is not None:
        split = gate.split
        summary["split"] = {"clean": split.clean_count, "rejects": split.reject_count, "closed": split.closed}
        where = [f"{split.clean_count} clean" + (f" -> {_shown(clean_output)}" if clean_output else ""),
                 f"{split.reject_count} rejected" + (f" -> {_shown(rejects_output)}" if rejects_output else "")]
        side = sidecar_path(rejects_output) if rejects_output else None
        click.echo("split: " + ", ".join(where) + (f" (issues: {_shown(side)})" if side else ""), err=True)
        if split.closed:  # what the split adds to a game's text (docs: Curating a dataset)
            n = split.closed
            click.echo(f"split: {n} game{'s' if n > 1 else ''} with no termination marker of "
                       f"{'their' if n > 1 else 'its'} own closed, so that the game after {'each' if n > 1 else 'it'} "
                       "reads apart: a line with a marker (and '}' or ')' before it for a comment or variation "
                       "left open)", err=True)
    if gate.baseline is not None:
        fixed = gate.baseline.fixed()
        summary["baseline"] = {"known": gate.known, "fixed": fixed}
        shown, more = fixed[:FIXED_SHOWN], fixed[FIXED_SHOWN:]
        for e in shown:
            ply = "" if e.get("ply") is None else f", ply {e['ply']}"
            times = f" ({e['count']} times)" if e["count"] > 1 else ""
            players = f' "{e["players"]}"' if e.get("players") else ""
            click.echo(_shown(f"fixed: {e.get('severity', 'issue')}[{e['code']}] in game {e['game']}{players}"
                              f"{ply}: {e.get('message', '')}{times}"), err=True)
        if more:
            click.echo(f"fixed: {len(more):,} more entries ({sum(e['count'] for e in more):,} issues) not shown: "
                       "--format json lists every one (summary.baseline.fixed)", err=True)
        click.echo(f"baseline {_shown(baseline_path)}: {gate.known} known issues not shown, "
                   f"{sum(e['count'] for e in fixed)} fixed", err=True)
    if write_baseline:
        try:
            n = gate.recorder.write(write_baseline)
        except OSError as exc:
            raise OutputFailure(f"cannot write the baseline: {exc}") from exc
        click.echo(f"baseline written to {_shown(write_baseline)}: {n} entries", err=True)
        if gate.baseline is None and status == 1:
            status = 0  # every issue found is now a known one (an unreadable input stays exit 2)
            summary["exit_status"] = 0
    return status
