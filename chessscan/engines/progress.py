"""The progress bar of a run (stderr, when it is a terminal): how far through the input, how
many games so far, how fast, and how many with errors.

``Progress`` wraps a ``tqdm`` bar counting input bytes (compressed bytes for compressed
input: the share of the file read) and adds ``N games, R games/s, E with errors`` as its
postfix. A background thread redraws it twice a second, so that its clock and rates move
while a long game or a large chunk is being analyzed (tqdm only redraws on an update).
"""

from __future__ import annotations

import sys
import threading
import time

__all__ = ["Progress", "REFRESH_SECONDS"]

#: How often the bar is redrawn when no byte count arrives.
REFRESH_SECONDS = 0.5


class Progress:
    """A bar over ``total`` input bytes (None: unknown, as for stdin) labelled ``label``.

    ``update(n)`` adds ``n`` bytes; ``count(games, errors)`` sets the games read and the
    games with errors so far (absolute numbers, cheap to call per game); ``close()`` stops
    the redraw thread and removes the bar. ``n`` is the bytes counted so far."""

    def __init__(self, total: int | None, label: str = "analyze", file=None) -> None:
        from tqdm import tqdm

        self._bar = tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024,
                         file=file or sys.stderr, desc=label, leave=False, dynamic_ncols=True,
                         mininterval=REFRESH_SECONDS)
        self._games = self._errors = 0
        self._start = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._redraw, name="chessscan-progress", daemon=True)
        self._thread.start()

    @property
    def n(self) -> int:
        return self._bar.n

    def update(self, n: int) -> None:
        self._bar.update(n)

    def count(self, games: int, errors: int) -> None:
        self._games, self._errors = games, errors

    def _postfix(self) -> str:
        elapsed = max(time.monotonic() - self._start, 1e-9)
        return f"{self._games:,} games, {self._games / elapsed:,.0f} games/s, {self._errors:,} with errors"

    def _redraw(self) -> None:
        while not self._stop.wait(REFRESH_SECONDS):
            try:
                self._bar.set_postfix_str(self._postfix(), refresh=False)
                self._bar.refresh()
            except Exception:  # a closed or torn-down stream: the bar is cosmetic
                return

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self._bar.close()
