"""Check, before a run says it wrote them, the Parquet parts that other processes wrote.

A table written as a dataset folder (``<out_dir>/<table>/part-*.parquet``) is written part by
part by the processes that analyze the input (a Dask worker, on another machine perhaps).
Each tells the run the parts it wrote and the rows their footers hold; the run checks them
here, as the process that writes ``summary.json`` sees them, before writing it. A part that
is absent there, or holds other rows, means the writers wrote somewhere else (a worker with
its own ``/tmp``, a pod without the shared volume, a mount typed wrong): the run fails
instead of saying it wrote what it cannot see. Parts put to an object store (``-o URL``)
are checked there, through the client's file system (``open_part``).
"""

from __future__ import annotations

import os
from typing import Iterable

from chessscan.reports.writers import OutputError

__all__ = ["PartMissing", "check_parts"]


class PartMissing(OutputError):
    """A part a writer reported is absent, unreadable, or holds other rows than its writer's
    footer said. ``path``: the part; ``expected``: the rows its writer reported; ``found``:
    the rows its footer holds here (None: absent or unreadable); ``hint``: the likely cause."""

    def __init__(self, path: str | os.PathLike, expected: int, found: int | None, reason: str,
                 hint: str = "") -> None:
        OSError.__init__(self, 0, f"{os.fspath(path)} {reason}" + (f": {hint}" if hint else ""))
        self.path = os.fspath(path)
        self.expected = expected
        self.found = found
        self.hint = hint


def check_parts(parts: Iterable[tuple[str | os.PathLike, int]], hint: str = "", open_part=None) -> int:
    """Check every ``(path, rows)`` of ``parts``, in order: the file exists here and its
    Parquet footer holds ``rows`` rows. Returns the number of parts checked.
    ``open_part(path)``: opens a part for reading (binary), raising ``FileNotFoundError``
    when it is absent (an object store's: :meth:`~chessscan.reports.store.ObjectParts.open`);
    by default the local file of that name.

    Raises :class:`PartMissing` for the first part that does not (its message names the
    part, the rows expected and found, and ``hint``, the likely cause).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    checked = 0
    for path, rows in parts:
        try:
            # Opened here, by its exact name (Arrow takes names as UTF-8 text: a folder
            # named in Latin-1 bytes could not be opened by it).
            with (open(path, "rb") if open_part is None else open_part(path)) as f:
                found = pq.read_metadata(f).num_rows
        except FileNotFoundError:
            raise PartMissing(path, rows, None, f"is missing ({rows:,} rows were written to it)", hint) from None
        except (OSError, pa.ArrowException) as exc:
            raise PartMissing(path, rows, None, f"cannot be read ({exc}; {rows:,} rows were written to it)",
                              hint) from None
        if found != rows:
            raise PartMissing(path, rows, found, f"holds {found:,} rows where {rows:,} were written", hint)
        checked += 1
    return checked
