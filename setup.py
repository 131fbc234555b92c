"""Build the compiled core: every module under chessscan/ whose ``.py`` has a ``.pxd`` beside it
is compiled by Cython (pure Python mode: the same ``.py`` also runs uncompiled).

Where no C compiler works, the build says so and installs the pure-Python package: chessscan
then runs the same sources uncompiled (and says so once at start-up). Set
``CHESSSCAN_NO_COMPILE=1`` to skip compiling on purpose.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent


def compiled_modules() -> list[str]:
    """Paths (relative, with '/') of the sources that have a .pxd beside them."""
    return sorted(p.with_suffix(".py").relative_to(HERE).as_posix()
                  for p in (HERE / "chessscan").rglob("*.pxd")
                  if not p.name.startswith("_") and p.with_suffix(".py").exists())


class OptionalBuildExt(build_ext):
    """build_ext that falls back to the pure-Python package when compiling fails."""

    failed = False

    def build_extensions(self) -> None:
        if self.compiler.compiler_type != "msvc":
            for ext in self.extensions:
                ext.extra_compile_args = ["-g0"]  # no debug info: a smaller wheel
        super().build_extensions()

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # no compiler, missing headers, ...
            self._skip(exc)

    def build_extension(self, ext) -> None:
        try:
            super().build_extension(ext)
        except Exception as exc:
            self._skip(exc)

    def _skip(self, exc: Exception) -> None:
        if not self.failed:
            self.failed = True
            print(f"chessscan: the compiled core could not be built ({exc}); installing the "
                  "pure-Python core (same results, much slower)", file=sys.stderr)


def extensions() -> list:
    if os.environ.get("CHESSSCAN_NO_COMPILE") == "1":
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("chessscan: Cython is not available; installing the pure-Python core", file=sys.stderr)
        return []
    return cythonize(
        compiled_modules(),
        language_level=3,
        compiler_directives={
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
            "embedsignature": True,
            "annotation_typing": False,  # the .pxd files hold the types
        },
        quiet=True,
    )


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
