"""``CHESSSCAN_PURE=1``: import the compiled modules' Python sources instead.

The compiled core (every module under chessscan/ with a ``.pxd`` beside its ``.py``) is built
from the same sources that run uncompiled. Python imports an extension module before a
``.py`` of the same name; this finder, installed first on ``sys.meta_path`` when the variable
is set, returns the ``.py`` instead, so the whole core runs uncompiled (for testing both, and
for debugging with Python tools).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from pathlib import Path


class SourceFirst(importlib.abc.MetaPathFinder):
    """Finds ``chessscan.*`` modules as their ``.py`` source when one is there."""

    def find_spec(self, fullname, path, target=None):
        if not fullname.startswith("chessscan.") or path is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.origin is None or spec.origin.endswith(".py"):
            return None  # not found, a package, or a source already: the usual finders
        source = Path(spec.origin).with_name(fullname.rpartition(".")[2] + ".py")
        if not source.is_file():
            return None
        return importlib.util.spec_from_file_location(fullname, source)


def install() -> None:
    if not any(isinstance(f, SourceFirst) for f in sys.meta_path):
        sys.meta_path.insert(0, SourceFirst())
