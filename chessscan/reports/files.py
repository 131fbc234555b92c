"""How chessscan creates the files it writes, and keeps two runs out of one output.

Every file a run writes (a table, a dataset part, the manifest, ``summary.json``,
``run.json``, ``report.html``, a baseline, a split file and its ``.issues.csv``) is made the
same way:

* :func:`temporary_path` names it ``NAME.<16 hex digits>.partial`` beside ``NAME``: a name
  nobody can know before the run picks it, so no link or file can be waiting there;
* :func:`create` makes it with ``O_CREAT | O_EXCL | O_NOFOLLOW``: a new file or an error,
  never an existing file and never the target of a link;
* :func:`commit` renames it over ``NAME`` once it is whole (``os.replace``: a link at
  ``NAME`` is replaced, not followed); :func:`discard` removes it when it is not.

:class:`OutputLock` is an exclusive lock on an output (a report folder, or one file), held for
a run's whole life: a second run into the same output is refused at once, naming the first.
It is an advisory ``flock`` on a small lock file (``FOLDER/.chessscan-lock``, or
``.NAME.chessscan-lock`` beside a file) holding the owner's pid, host, start time and
command; the kernel drops it when its process ends however it ends, so a killed run never
blocks the next. Locks are not inherited: their files are closed on ``exec``, and a process
forked from the owner closes its copy (closing a copy leaves the owner's lock in place).
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import socket
import stat
import time
from pathlib import Path
from typing import IO, Any

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["PARTIAL_SUFFIX", "LOCK_NAME", "temporary_path", "temporary_of", "temporaries_of", "create",
           "create_temporary",
           "commit", "discard", "OutputLock", "OutputBusy", "lock_path_for"]

#: What every file being written ends with; ``*.partial`` finds what a killed run left.
PARTIAL_SUFFIX = ".partial"
#: The lock file of a report folder, inside it.
LOCK_NAME = ".chessscan-lock"

_TEMPORARY = re.compile(r"(?P<base>.+?)(?:\.[0-9a-f]{16})?\.partial\Z", re.S)

# O_NOFOLLOW where the platform has it (O_EXCL alone already refuses a link at the name).
_NEW = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        | getattr(os, "O_BINARY", 0))


def temporary_path(path, hidden: bool = False):
    """Where ``path`` is written until it is whole: ``path`` + ``.<16 random hex digits>.partial``
    (a str for a str, a Path for a Path). ``hidden``: with a ``.`` before the file's name
    (``.part-000003.parquet.<hex>.partial``), which the readers of a Parquet dataset folder
    skip, so that a part being written is never read as one."""
    head, name = os.path.split(os.fspath(path))
    name = f"{'.' if hidden else ''}{name}.{secrets.token_hex(8)}{PARTIAL_SUFFIX}"
    name = os.path.join(head, name) if head else name
    return Path(name) if isinstance(path, Path) else name


def temporary_of(name: str) -> str | None:
    """The name a temporary file name stands for (``games.parquet`` for
    ``games.parquet.3f09a1c25b7e4d86.partial``, and for ``games.parquet.partial``, which
    earlier versions wrote), or None when ``name`` is not one."""
    found = _TEMPORARY.fullmatch(name)
    return found.group("base") if found else None


def temporaries_of(path) -> list[str]:
    """The temporary files of ``path`` standing beside it (left by runs that stopped before
    renaming them), sorted; ``[]`` when its folder cannot be listed."""
    head, name = os.path.split(os.fspath(path))
    try:
        entries = os.listdir(head or ".")
    except OSError:
        return []
    return sorted(os.path.join(head, e) for e in entries if temporary_of(e) == name)


def create(path, mode: str = "wb", **kwargs: Any) -> IO:
    """A new file at ``path``, opened for writing (``mode`` and ``kwargs`` as :func:`open`'s).
    Raises ``FileExistsError`` when anything stands at ``path`` (a file, a link, even one
    pointing nowhere), or another OSError."""
    fd = os.open(path, _NEW, 0o666)
    try:
        return os.fdopen(fd, mode, **kwargs)
    except BaseException:
        os.close(fd)
        raise


def create_temporary(path, mode: str = "wb", hidden: bool = False, **kwargs: Any):
    """``(temporary path, file)``: :func:`create` at a :func:`temporary_path` of ``path``."""
    for _ in range(8):
        tmp = temporary_path(path, hidden)
        try:
            return tmp, create(tmp, mode, **kwargs)
        except FileExistsError:  # a name taken: planted there, or (2**-64) drawn twice
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", os.fspath(path))


def commit(tmp, path) -> None:
    """Give the whole file ``tmp`` its name ``path`` (replacing what stands there: a link
    is replaced, not followed)."""
    os.replace(tmp, path)


def discard(tmp) -> None:
    """Remove the temporary file ``tmp`` if it is there; never raises."""
    try:
        os.unlink(tmp)
    except OSError:
        pass


# ---------------------------------------------------------------------------
# Locks
# ---------------------------------------------------------------------------
def lock_path_for(path, folder: bool = False) -> str:
    """The lock file of the output ``path``: ``path/.chessscan-lock`` for a folder,
    ``.NAME.chessscan-lock`` beside a file (through links: two names of one file share it)."""
    real = os.path.realpath(path)
    if folder:
        return os.path.join(real, LOCK_NAME)
    head, name = os.path.split(real)
    return os.path.join(head, f".{name}{LOCK_NAME}")


class OutputBusy(Exception):
    """Another run holds the lock of an output. ``owner``: what that run recorded in the lock
    file (``pid``, ``host``, ``started``, ``command``; empty when it had not written it yet)."""

    def __init__(self, shown: str, owner: dict) -> None:
        self.owner = owner
        who = []
        if owner.get("pid"):
            who.append(f"pid {owner['pid']}" + (f" on {owner['host']}" if owner.get("host") else ""))
        if owner.get("started"):
            who.append(f"started {owner['started']}")
        if owner.get("command"):
            who.append(str(owner["command"]))
        about = f" ({', '.join(who)})" if who else ""
        super().__init__(f"{shown} is being written by another chessscan run{about}")


_HELD: dict[int, "OutputLock"] = {}  # fd -> lock, to close in forked children


class OutputLock:
    """An exclusive lock on an output for as long as it is held: ``OutputLock(lock_file,
    shown, command)`` then :meth:`acquire` (or ``with``), :meth:`release`.

    ``lock_file``: see :func:`lock_path_for`; ``shown``: the output as messages name it;
    ``command``: the command line recorded for a refused run to show. :meth:`acquire`
    raises :class:`OutputBusy` when another process holds the lock, OSError when the lock
    file cannot be made (no such folder, read-only, or a link or other file standing at
    its name). Where the platform has no ``flock`` (Windows), ``msvcrt.locking``."""

    def __init__(self, lock_file: str, shown: str, command: str = "") -> None:
        self.path = lock_file
        self.shown = shown
        self.command = command
        self._fd: int | None = None
        self._pid = 0

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> "OutputLock":
        if self._fd is not None:
            return self
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) \
            | getattr(os, "O_CLOEXEC", 0)
        for _ in range(16):
            fd = os.open(self.path, flags, 0o666)
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
                    # Its owner info would be written into a file of someone else's.
                    raise OSError(errno.EEXIST, "not a chessscan lock file (another kind of file, or a "
                                  "hard link, stands at its name)", self.path)
                if not _try_lock(fd):
                    raise OutputBusy(self.shown, _read_owner(fd))
                # The run that held it may have ended and removed it between our open and our
                # lock: the lock counts only on the file that stands at the name.
                try:
                    now = os.stat(self.path, follow_symlinks=False)
                except FileNotFoundError:
                    now = None
                if now is None or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
                    os.close(fd)
                    continue
                owner = {"pid": os.getpid(), "host": socket.gethostname(),
                         "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
                         "command": self.command}
                try:
                    os.ftruncate(fd, 0)
                    os.write(fd, (json.dumps(owner, ensure_ascii=True) + "\n").encode("ascii"))
                except OSError:
                    pass  # (a full disk: the lock holds all the same; a refused run names no owner)
            except BaseException:
                os.close(fd)
                raise
            self._fd, self._pid = fd, os.getpid()
            _HELD[fd] = self
            return self
        raise OSError(errno.EAGAIN, "the lock file keeps being replaced", self.path)

    def release(self) -> None:
        """Remove the lock file and release the lock (in the process that took it: a forked
        copy does neither). Never raises."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        _HELD.pop(fd, None)
        if os.getpid() != self._pid:
            return
        try:
            # Removed while still locked: a run that opened it meanwhile finds, once it has
            # the lock, that the name is no longer its file, and makes a new one.
            st = os.fstat(fd)
            now = os.stat(self.path, follow_symlinks=False)
            if (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):
                os.unlink(self.path)
        except OSError:
            pass
        try:
            os.close(fd)  # releases the lock
        except OSError:
            pass

    def __enter__(self) -> "OutputLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"<OutputLock {self.path!r} {'held' if self.held else 'free'}>"


def _try_lock(fd: int) -> bool:
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False
    import msvcrt

    try:
        msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        return True
    except OSError:
        return False


def _read_owner(fd: int) -> dict:
    try:
        owner = json.loads(os.pread(fd, 4096, 0) if hasattr(os, "pread") else b"{}")
    except (OSError, ValueError):
        return {}
    return owner if isinstance(owner, dict) else {}


def _forget_held() -> None:
    # A forked child shares the owner's lock: it closes its copy (the lock stays the
    # owner's) and never unlocks or removes it.
    for fd in list(_HELD):
        _HELD.pop(fd)._fd = None
        try:
            os.close(fd)
        except OSError:
            pass


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_held)
