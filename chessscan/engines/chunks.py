"""How the ``--jobs`` main process hands its text to the workers, and where a worker writes.

A **chunk** is a piece of one PGN source that starts at a game start: its text
(:class:`ChunkText`), where it stands in the source (the game index, byte offset and line of
its first byte) and, for the last chunk of a source, the error the source ended with. The
text is described, not copied: a list of **segments**, each a byte range of a shared-memory
buffer of the main process (:class:`Slot`), ``bytes`` (where no shared memory can be had,
and for a task that carries its text with it, as a Dask task would), or a byte range of a
plain file (:class:`FileRange`: a task that reads its text itself). A worker reads a
chunk's segments in place (:class:`ChunkStream`), so the text is copied once on its way
from the decompressor to the worker's reader: into the slot.

**Slots.** The main process reads each source in blocks into a slot and cuts chunks out of
it; a slot is handed back (:meth:`Slots.release`) when every chunk cut from it has been
written, and used again. They are POSIX shared memory (``/dev/shm``): made by the main
process (``multiprocessing.shared_memory``, so that its resource tracker removes them should
the main process be killed), their pages reserved at once (``posix_fallocate``: a full
``/dev/shm`` is an error here, never a SIGBUS later), and mapped by the workers by name.
Where that cannot be done (no ``/dev/shm``, no ``posix_fallocate``, no room), a slot is a
``bytearray`` and its chunks travel as ``bytes`` (pickled to the worker), as they always did.

With a report whose tables take parts (:mod:`chessscan.reports.dataset`), a worker writes
its chunk's rows itself, and the main process names those parts in input order.
"""

from __future__ import annotations

import mmap
import os
import sys
from typing import NamedTuple

from .stops import stops_held

__all__ = ["Slot", "Slots", "ChunkText", "ChunkStream", "FileRange", "shared_memory_available"]

_SHM_DIR = "/dev/shm"


def shared_memory_available() -> bool:
    """Whether slots can be shared memory here (Linux: ``/dev/shm`` and ``posix_fallocate``)."""
    return os.path.isdir(_SHM_DIR) and hasattr(os, "posix_fallocate") and sys.platform.startswith("linux")


class Slot:
    """A buffer of the main process that chunks are cut from. ``view``: a writable
    ``memoryview`` of ``capacity`` bytes; ``name``: its shared-memory name (None: a
    ``bytearray``, whose chunks are sent as bytes); ``refs``: chunks cut from it not written
    yet, plus one while the main process still reads into it."""

    __slots__ = ("name", "view", "capacity", "refs", "_shm")

    def __init__(self, capacity: int, shared: bool) -> None:
        self.capacity = capacity
        self.refs = 0
        self._shm = None
        self.name = None
        if shared:
            from multiprocessing import shared_memory

            shm = shared_memory.SharedMemory(create=True, size=capacity)
            try:
                fd = getattr(shm, "_fd", -1)
                if fd < 0:
                    raise OSError("no descriptor to reserve the pages of")
                os.posix_fallocate(fd, 0, capacity)  # ENOSPC now, not SIGBUS when written
            except BaseException:
                _free_shm(shm)
                raise
            self._shm = shm
            self.name = shm.name
            self.view = shm.buf
        else:
            self.view = memoryview(bytearray(capacity))

    def segment(self, start: int, end: int):
        """The segment of a chunk text for bytes ``start..end`` of this slot."""
        if self.name is None:
            return bytes(self.view[start:end])
        return (self.name, start, end)

    def free(self) -> None:
        """Unmap and remove the shared memory (the workers' mappings stay valid)."""
        shm, self._shm = self._shm, None
        self.view = None
        if shm is not None:
            _free_shm(shm)


# Shared memory removed while a view of it was still held (by a traceback, say): kept here
# so that it is never closed under that view; the mapping goes with the process.
_UNCLOSED: list = []


def _free_shm(shm) -> None:
    try:
        shm.close()
    except (BufferError, OSError):
        _UNCLOSED.append(shm)
    try:
        shm.unlink()
    except OSError:
        pass


class Slots:
    """The main process's slots (module doc): :meth:`take` one of at least ``capacity``
    bytes, :meth:`release` it (a reference), :meth:`close` them all at the end of the run."""

    def __init__(self, shared: bool | None = None) -> None:
        self.shared = shared_memory_available() if shared is None else shared
        self._free: list[Slot] = []
        self._all: list[Slot] = []

    def take(self, capacity: int) -> Slot:
        """A slot of at least ``capacity`` bytes with one reference (the reader's)."""
        fits = [s for s in self._free if s.capacity >= capacity]
        if fits:
            slot = min(fits, key=lambda s: s.capacity)
            self._free.remove(slot)
        else:
            # A chunk grows as the run goes on (the engine's module doc: Chunk sizes), so a free
            # slot too small now is not used again: removed, so that the memory held is that of
            # the chunks in flight, not of every size they had (a zstd bomb's run held 29 slots).
            with stops_held():
                for small in [s for s in self._free if s.capacity < capacity]:
                    self._free.remove(small)
                    self._all.remove(small)
                    small.free()
                try:
                    slot = Slot(capacity, self.shared)
                except (OSError, ValueError):  # no room in /dev/shm, or none: bytes from now on
                    self.shared = False
                    slot = Slot(capacity, False)
                self._all.append(slot)
        slot.refs = 1
        return slot

    def hold(self, slot: Slot) -> None:
        slot.refs += 1

    def release(self, slot: Slot) -> None:
        slot.refs -= 1
        if slot.refs == 0:
            self._free.append(slot)

    def close(self) -> None:
        with stops_held():
            for slot in self._all:
                slot.free()
            self._all, self._free = [], []


class FileRange(NamedTuple):
    """A segment of a chunk's text: bytes ``start..end`` of the plain file ``path``."""

    path: str
    start: int
    end: int


class ChunkText(NamedTuple):
    """A chunk's text: ``segments`` in order, each ``bytes`` or ``(shared-memory name,
    start, end)`` (module doc), ``size`` bytes in all."""

    segments: tuple
    size: int

    def __add__(self, other: "ChunkText") -> "ChunkText":  # two chunks read as one
        return ChunkText(self.segments + other.segments, self.size + other.size)

    def __len__(self) -> int:
        return self.size

    def __reduce__(self):
        return (ChunkText, (self.segments, self.size))


# A worker's mappings of the main process's slots, by name (most recently used last).
_MAPPED: dict[str, tuple[mmap.mmap, memoryview]] = {}
_MAPPED_MAX = 64


def _mapped(name: str) -> memoryview:
    got = _MAPPED.pop(name, None)
    if got is None:
        path = os.path.join(_SHM_DIR, name.lstrip("/"))
        if os.path.exists(path):
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            try:
                m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
            finally:
                os.close(fd)
        else:  # (no /dev/shm path: the platform's shared memory, by name)
            from multiprocessing import shared_memory

            m = shared_memory.SharedMemory(name=name)
        got = (m, memoryview(m.buf if hasattr(m, "buf") else m))
        # A new slot: the main process may have removed some it no longer uses (Slots.take),
        # whose pages stay in memory while a worker maps them.
        if os.path.exists(path):
            for gone in [n for n in _MAPPED if not os.path.exists(os.path.join(_SHM_DIR, n.lstrip("/")))]:
                _unmap(_MAPPED.pop(gone))
        while len(_MAPPED) >= _MAPPED_MAX:
            _unmap(_MAPPED.pop(next(iter(_MAPPED))))
    _MAPPED[name] = got
    return got[1]


def _drop_pages(name: str, start: int, end: int) -> None:
    """Let go of a worker's pages of bytes ``start..end`` of a slot it has read (the text
    stays in the shared memory; read again, it is mapped again): a worker holds in memory
    the chunk it reads, not every chunk it read from the slots it maps."""
    got = _MAPPED.get(name)
    if got is None or not isinstance(got[0], mmap.mmap) or not hasattr(got[0], "madvise"):
        return
    m = got[0]
    lo = start - start % mmap.PAGESIZE
    hi = min(len(m), end + (-end) % mmap.PAGESIZE)
    if hi > lo:
        try:
            m.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
        except (OSError, ValueError):
            pass


def _unmap(got: tuple) -> None:
    old_map, old_view = got
    old_view.release()
    try:
        old_map.close()
    except (BufferError, OSError):
        pass


class ChunkStream:
    """A binary stream (``read(size)``) over a :class:`ChunkText`, read in place from the
    slots it names; then ``error``, if given, is raised (the source ended with it)."""

    def __init__(self, text: ChunkText | bytes, error: BaseException | None = None) -> None:
        if isinstance(text, (bytes, bytearray, memoryview)):
            text = ChunkText((bytes(text),), len(text))
        self._segments = list(text.segments)
        self._k = 0
        self._view: memoryview | None = None
        self._pos = self._end = 0
        self._error = error
        self._read: tuple | None = None  # the slot segment being read: its pages let go after it

    def _next(self) -> bool:
        if self._read is not None:
            _drop_pages(*self._read)
            self._read = None
        while self._k < len(self._segments):
            seg = self._segments[self._k]
            self._k += 1
            if isinstance(seg, (bytes, bytearray)):
                self._view, self._pos, self._end = memoryview(seg), 0, len(seg)
            elif isinstance(seg, FileRange):
                with open(seg.path, "rb") as f:  # (read whole: a range is a chunk, at most 16 MiB)
                    f.seek(seg.start)
                    data = f.read(seg.end - seg.start)
                if len(data) != seg.end - seg.start:
                    raise OSError(f"{seg.path} is shorter than it was: bytes {seg.start:,}..{seg.end:,} are gone")
                self._view, self._pos, self._end = memoryview(data), 0, len(data)
            else:
                name, start, end = seg
                self._view, self._pos, self._end = _mapped(name), start, end
                self._read = seg
            if self._end > self._pos:
                return True
        return False

    def read(self, size: int = -1) -> bytes:
        if self._pos >= self._end and not self._next():
            if self._error is not None:
                error, self._error = self._error, None
                raise error
            return b""
        end = self._end if size is None or size < 0 else min(self._end, self._pos + size)
        data = bytes(self._view[self._pos:end])
        self._pos = end
        return data
