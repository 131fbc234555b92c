"""What ``chessscan validate`` does with each record besides printing it: the split
(``--clean-output``/``--rejects-output``), the baseline (``--baseline``,
``--write-baseline``).

:class:`Gate` is the ``on_record`` of a :class:`~chessscan.reports.records.RecordSink`: for
each record, in input order, it records its issues for a new baseline, drops those a baseline
already knows, passes the others to ``emit`` (and counts them), and hands the record to the
split writer. The split looks at every issue, known or not: a game with a known error is
still a reject.
"""

from __future__ import annotations

from typing import Callable

from chessscan.reports.baseline import Baseline, BaselineRecorder, game_key
from chessscan.reports.diagnostics import Diagnostic
from chessscan.reports.records import Record
from chessscan.reports.split import SplitWriter

__all__ = ["Gate"]


class Gate:
    """Per-record work of ``validate`` (module doc). ``emit`` gets every diagnostic not in
    ``baseline``; ``counts`` (severity -> number) counts them; ``known`` counts the others.
    ``split``, ``baseline`` and ``recorder`` may each be None.

    ``input_errors``: the display names of the inputs that could not be read (missing,
    unreadable, not text, an archive), added by the caller as it meets them. Their errors
    are an input error whatever the baseline (exit 2 in either run): never recorded, always
    passed on and counted (an entry of an older baseline for one is used up, not listed as
    fixed)."""

    def __init__(self, emit: Callable[[Diagnostic], None], split: SplitWriter | None = None,
                 baseline: Baseline | None = None, recorder: BaselineRecorder | None = None) -> None:
        self._emit = emit
        self.split = split
        self.baseline = baseline
        self.recorder = recorder
        self.counts: dict[str, int] = {"error": 0, "warning": 0}
        self.known = 0
        self.input_errors: set[str] = set()

    @property
    def needs_bytes(self) -> bool:
        """Whether records must carry their bytes (split, or content keys for a baseline); a
        split of game tables copies rows, not bytes."""
        split = self.split is not None and getattr(self.split, "needs_bytes", True)
        return split or any(x is not None for x in (self.baseline, self.recorder))

    def __call__(self, rec: Record) -> None:
        key = game_key(rec) if (self.baseline is not None or self.recorder is not None) and rec.diagnostics else None
        unread = rec.kind == "source" and rec.path in self.input_errors
        for d in rec.diagnostics:
            input_error = unread and d.severity == "error"
            if self.recorder is not None and not input_error:
                self.recorder.add(key, d)
            if self.baseline is not None and self.baseline.known(key, d) and not input_error:
                self.known += 1
                continue
            self.counts[d.severity] = self.counts.get(d.severity, 0) + 1
            self._emit(d)
        if self.split is not None:
            self.split(rec)

    def close(self, complete: bool = True) -> None:
        if self.split is not None:
            self.split.close(complete)
