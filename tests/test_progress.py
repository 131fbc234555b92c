"""The progress bar: games, games/s and games with errors so far, redrawn while nothing else
moves it."""

from __future__ import annotations

import io
import time

from chessscan.engines.local import run
from chessscan.engines.local import MemorySink
from chessscan.engines.progress import REFRESH_SECONDS, Progress
from conftest import SAMPLES


def test_bar_shows_games_and_errors_and_keeps_ticking():
    out = io.StringIO()
    bar = Progress(1000, "analyze", file=out)
    bar.update(250)
    bar.count(1234, 5)
    time.sleep(REFRESH_SECONDS * 5)  # nothing updates the bar meanwhile
    text = out.getvalue()
    bar.close()
    assert "1,234 games" in text and "5 with errors" in text and "games/s" in text
    assert "250/1000" in text or "250/1.00k" in text or "250" in text
    assert text.count("\r") >= 3  # redrawn several times with no update
    assert not bar._thread.is_alive()


def test_a_run_counts_its_games_on_the_bar(monkeypatch):
    from chessscan.engines import local

    bars = []

    def progress(paths, enabled, label="analyze"):
        bars.append(Progress(None, label, file=io.StringIO()))
        return bars[-1]

    monkeypatch.setattr(local, "_progress", progress)
    tally = run([str(SAMPLES / "lichess-magnus-300.pgn")], MemorySink(), progress=True)
    assert tally.games == 300
    assert (bars[0]._games, bars[0]._errors) == (300, tally.games_with_errors)
