"""Stops held back while a step must not be cut in two.

Ctrl-C, SIGTERM and SIGHUP end a run by an exception that the main thread's signal handler
raises between any two bytecodes (``chessscan.cli``). A few steps must finish or not start:
the CLI's closing of a report, and the shared memory of ``--jobs`` made or removed and
recorded (:mod:`chessscan.engines.chunks`: a stop between the resource tracker's registration
and the record left a segment that only the tracker removed, at exit, with a "leaked
shared_memory objects" warning). They run with the stops held, and a stop that came meanwhile
is handled once they are done, as it would have been.
"""

from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager

__all__ = ["hold_stops", "release_stops", "stops_held"]

_STOP_SIGNALS = [getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n)]


def hold_stops():
    """Hold Ctrl-C, SIGTERM and SIGHUP back until :func:`release_stops`, which handles one
    that came meanwhile as it would have been (in the main thread; elsewhere nothing is
    held). Returns what release_stops takes."""
    if threading.current_thread() is not threading.main_thread():
        return None
    came: list[int] = []
    before = {}
    for sig in _STOP_SIGNALS:
        before[sig] = signal.getsignal(sig)
        signal.signal(sig, lambda signum, frame: came.append(signum))
    return before, came


def release_stops(held, replay: bool = True) -> None:
    """Put back the handlers :func:`hold_stops` replaced and, with ``replay``, handle the
    first stop that came meanwhile (its handler raises KeyboardInterrupt or the CLI's
    ``Stopped``; at its default, the signal is sent again)."""
    if held is None:
        return
    before, came = held
    for sig, handler in before.items():
        signal.signal(sig, handler)
    if came and replay:
        handler = before[came[0]]
        if callable(handler):
            handler(came[0], None)
        elif handler == signal.SIG_DFL:
            os.kill(os.getpid(), came[0])


@contextmanager
def stops_held():
    """:func:`hold_stops` for the ``with`` block, then :func:`release_stops`."""
    held = hold_stops()
    try:
        yield
    finally:
        release_stops(held)
