"""The exit statuses of every chessscan command, in one table.

The command line exits with these constants (``cli.py``), and the documentation's "Exit
status" page is generated from :data:`EXIT_STATUSES`; the test suite checks that every exit
in ``cli.py`` is one of them. Status 1 keeps one meaning, "issues found", so that a CI gate
can tell a dataset with defects from a run that failed.

Plain data with no imports from the rest of chessscan, so anything (the CLI at start-up,
documentation tools) can read it cheaply.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["ExitStatus", "EXIT_STATUSES", "EXIT_OK", "EXIT_ISSUES", "EXIT_USAGE", "EXIT_INTERNAL",
           "EXIT_OUTPUT", "EXIT_SIGNAL_BASE"]

EXIT_OK = 0        # done
EXIT_ISSUES = 1    # validate: issues at or above --fail-on; perft: a count differs
EXIT_USAGE = 2     # bad option, missing or unreadable input, refused output folder, output in use, no scheduler,
                   # a folder `report` cannot read, matplotlib missing for the page
EXIT_INTERNAL = 3  # a chessscan bug, a --jobs process that died (worker, forkserver, resource tracker), a shard given up
EXIT_OUTPUT = 4    # a table, summary.json or stdout could not be written (disk full...), a part not seen
EXIT_SIGNAL_BASE = 128  # 128 + N: stopped by signal N, as a shell reports it


class ExitStatus(NamedTuple):
    """One row of the table: ``status`` as shown (``"0"``, ``"128+N"``) and its meaning
    (Markdown: code in backticks)."""

    status: str
    meaning: str


#: Every exit status, in order. The meanings are the documentation's text.
EXIT_STATUSES: tuple[ExitStatus, ...] = (
    ExitStatus(str(EXIT_OK), "done (`validate`: nothing at or above `--fail-on`)"),
    ExitStatus(str(EXIT_ISSUES), "`validate`: issues at or above `--fail-on`; `perft`: a count differs"),
    ExitStatus(str(EXIT_USAGE),
               "usage error (one line: `Error: ... (see 'chessscan validate -h')`; a FEN not quoted, say), "
               "an input that could not be analyzed (missing, unreadable, not text, an archive; the other "
               "inputs are analyzed and reported), a folder `report` cannot read, an output folder "
               "refused, an output another chessscan run is writing, matplotlib missing for the page "
               "(`--html`, `report`); with "
               "`--dask`: an address that is not one, no scheduler answering there within Dask's "
               "connect timeout, the dask extra missing, workers that cannot read the inputs or run "
               "chessscan"),
    ExitStatus(str(EXIT_INTERNAL),
               "internal error (a chessscan bug, printed with a traceback), or a process of a `--jobs` run "
               "died (a worker, the forkserver or the resource tracker: killed, out of memory): one line "
               "says which, the other processes of the run are ended, and the output is that of a "
               "stopped run; with `--dask`: a shard whose workers died each time it ran "
               "(Dask's retries used up), the scheduler lost midway"),
    ExitStatus(str(EXIT_OUTPUT),
               "output could not be written: a table, summary.json, run.json (the tables and "
               "summary.json are then complete; no run.json is left) or stdout (disk full, read-only, "
               "`/dev/full`, closed: `>&-`); the message names the file; with `--dask`: a part a worker "
               "wrote that this machine does not see (workers and client must share the output "
               "folder). `validate` with stdout closed "
               "stops before reading anything: its diagnostics would go nowhere; `analyze` writes "
               "nothing there and is not concerned"),
    ExitStatus(f"{EXIT_SIGNAL_BASE}+N",
               "stopped by signal N: 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP (`validate` prints the counts "
               "so far); 141 (SIGPIPE) when stdout's reader went away (`validate ... | head -1`): "
               "quietly, with nothing on stderr, as a shell shows a process ended by SIGPIPE — the "
               "reader had what it wanted, no output failed"),
)
