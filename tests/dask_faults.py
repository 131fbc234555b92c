"""A Dask worker preload for tests/test_dask_cluster.py: the faults a test asks for.

``dask worker --preload tests/dask_faults.py`` with ``CHESSSCAN_TEST_FAULTS`` naming a JSON
file; each time a worker opens or closes a part of the games table it reads that file (absent:
no fault), so a running cluster can be told what to do test by test:

* ``{"kill": "part-000003"}``: the worker kills itself (SIGKILL, as the kernel's OOM killer
  does) when it opens that part, leaving the part being written; with ``"once": PATH``,
  only when PATH does not exist yet (it is created first): the retry then succeeds.
* ``{"slow": SECONDS}``: closing a games part first waits SECONDS (a slow shared disk), so
  that a test finds tasks in flight when it stops the client or kills the scheduler.
* ``{"drop": "games/part-000001"}``: a part put to an object store (``-o URL``) whose URL ends
  so is removed right after its put (lost after its task reported it).
* ``{"kill_after": "part-000000", "once": PATH}``: the worker that wrote that games part kills
  itself (SIGKILL) when it opens the games part of its next task, losing the result it holds
  (once, as ``kill``'s ``once``).
* ``{"hold": {"positions/part-000000": SECONDS, ...}, "after": PATH}``: the put of a part to
  an object store whose URL ends so first waits SECONDS, when PATH exists (in a task run
  after a fault made PATH).
"""

from __future__ import annotations

import json
import os
import signal
import time

from chessscan.reports import store, writers


def _faults() -> dict:
    try:
        with open(os.environ["CHESSSCAN_TEST_FAULTS"], encoding="utf-8") as f:
            return json.load(f)
    except (KeyError, OSError, ValueError):
        return {}


def _games_part(path) -> bool:
    return f"{os.sep}games{os.sep}" in os.fspath(path)


_wrote: set[str] = set()  # (the names of the games parts this worker process opened)


if not getattr(writers.TableWriter, "_test_faults", False):  # (a preload may run twice)
    _init, _close = writers.TableWriter.__init__, writers.TableWriter.close

    def __init__(self, path, *args, **kwargs):
        _init(self, path, *args, **kwargs)
        after = _faults().get("kill_after")
        if after and _games_part(path):
            name = os.path.basename(os.fspath(path))
            once = _faults().get("once")
            if after not in name and any(after in n for n in _wrote) and once and not os.path.exists(once):
                open(once, "w").close()
                os.kill(os.getpid(), signal.SIGKILL)
            _wrote.add(name)
        kill = _faults().get("kill")
        if kill and _games_part(path) and kill in os.path.basename(os.fspath(path)):
            once = _faults().get("once")
            if once:
                if os.path.exists(once):
                    return
                open(once, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)

    def close(self):
        slow = _faults().get("slow")
        if slow and not self.closed and _games_part(self.path):
            time.sleep(slow)
        _close(self)

    writers.TableWriter.__init__ = __init__
    writers.TableWriter.close = close
    writers.TableWriter._test_faults = True


if not getattr(store.ObjectParts, "_test_faults", False):
    _put = store.ObjectParts.put

    def put(self, local, url):
        faults = _faults()
        for name, seconds in faults.get("hold", {}).items():
            if url.endswith(f"/{name}.parquet") and os.path.exists(faults.get("after", "")):
                time.sleep(seconds)
        _put(self, local, url)
        drop = _faults().get("drop")
        if drop and url.endswith(f"/{drop}.parquet"):
            self.fs.rm_file(self._path(url))

    store.ObjectParts.put = put
    store.ObjectParts._test_faults = True
