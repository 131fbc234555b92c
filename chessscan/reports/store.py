"""A report written to an object store or any other fsspec URL (``-o s3://bucket/prefix``).

Object stores have no rename and no lock, so the output-folder rules are kept this way:

* :meth:`ObjectOutput.prepare` lists the objects under the prefix, refuses report-named
  objects that no chessscan run recorded (its manifest, :data:`MANIFEST_NAME`), removes the
  objects a previous run recorded, and puts the new manifest, all before the run writes
  anything (the same checks as :func:`~chessscan.reports.writers.prepare_output`);
* the run writes its report into a local staging folder (:attr:`ObjectOutput.staging`, a new
  folder under the temporary directory, removed at the end), as into any output folder;
* :meth:`ObjectOutput.upload` then puts each file as one object, whole (the file system's
  ``put_file``: one request, or a multipart upload that no reader sees before it completes),
  the tables first and ``summary.json`` last. A run that stops before has put the manifest
  only (the next run into the prefix removes what it lists); one stopped while uploading
  leaves whole objects and no ``summary.json``.

With ``--dask``, the Dask workers put the tables' parts under the prefix themselves
(:class:`ObjectParts`, each part one whole object), so no part is staged on the client and
a cluster needs no shared folder: the client checks them there, and puts only what it
writes itself (``run.json``, ``summary.json``...) from the staging folder.

A URL naming a local path (``file://``) is written as the local folder it names.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from typing import Iterable, Sequence

from chessscan.readers.urls import is_url, url_fs

from .files import temporary_of
from .schema import TABLE_NAMES
from .writers import _PART, MANIFEST_NAME, RUN_FILES, SUMMARY_NAME, OutputError, OutputFolderError, _is_report_name

__all__ = ["ObjectOutput", "ObjectParts", "NoSuchBucket", "StoreRefused", "object_output", "one_line_error"]

# File systems whose first path component is a bucket (or container) that must exist.
_BUCKETS = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "oss", "r2"})


def one_line_error(exc: BaseException) -> str:
    """A file system's error in one line: its type's name, then its text with the white space
    folded (botocore's messages span lines)."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class StoreRefused(OSError):
    """The store refuses an output URL before anything is written: no credentials, an endpoint
    that does not answer, access denied (the file system's error, in one line), or
    :class:`NoSuchBucket`."""


class NoSuchBucket(StoreRefused):
    """The bucket (or container) of an output URL does not exist (or cannot be seen with the
    credentials at hand)."""


def object_output(url: str) -> "ObjectOutput | None":
    """An :class:`ObjectOutput` for the output ``url``, or None when ``url`` is a local path
    (not a URL, or ``file://``). Raises
    :class:`~chessscan.readers.urls.MissingFileSystem` (the message names the extra to
    install) and ``OSError`` for a URL fsspec does not know."""
    if not is_url(url):
        return None
    fs, root = url_fs(url, "writing")
    protocols = {fs.protocol} if isinstance(fs.protocol, str) else set(fs.protocol)
    if protocols & {"file", "local"}:
        return None
    return ObjectOutput(url, fs, root)


class ObjectOutput:
    """The report folder at ``url`` on the fsspec file system ``fs`` (``root``: its path
    there). See the module docstring for the order of the work."""

    def __init__(self, url: str, fs, root: str) -> None:
        self.url = url.rstrip("/")
        self.fs = fs
        self.root = root.rstrip("/")
        protocols = {fs.protocol} if isinstance(fs.protocol, str) else set(fs.protocol)
        self._buckets = bool(protocols & _BUCKETS)
        #: The local folder the run writes its report into (made by :meth:`prepare`).
        self.staging: str | None = None

    def _path(self, name: str) -> str:
        return f"{self.root}/{name}"

    def _objects(self) -> list[str]:
        """Names (relative to the prefix) of every object under it, sorted. Raises
        :class:`NoSuchBucket` or :class:`StoreRefused` (no credentials, no endpoint...),
        ``NotADirectoryError`` when the prefix is an object itself."""
        fs = self.fs
        fs.invalidate_cache()  # (s3fs keeps listings: another process may have written since)
        if self._buckets:
            bucket = self.root.split("/", 1)[0]
            if not bucket:
                raise NoSuchBucket(f"no such bucket: {self.url}")
            try:  # (not fs.exists(): it says False for every error, no credentials or endpoint too)
                fs.info(bucket)
            except FileNotFoundError:
                raise NoSuchBucket(f"no such bucket: {bucket}") from None
            except Exception as exc:  # noqa: BLE001 (botocore's NoCredentialsError, a connection error...)
                raise StoreRefused(one_line_error(exc)) from None
        try:
            if fs.isfile(self.root):
                raise NotADirectoryError(20, f"{self.url} is an object, not a folder")
            found = fs.find(self.root, withdirs=False)
        except FileNotFoundError as exc:
            if self._buckets:
                raise NoSuchBucket(f"no such bucket: {self.root.split('/', 1)[0]} ({exc})") from None
            return []
        head = self.root + "/"
        return sorted(p[len(head):] for p in found if p.startswith(head))

    def _read_manifest(self) -> set[str]:
        try:
            data = json.loads(self.fs.cat_file(self._path(MANIFEST_NAME)).decode("utf-8"))
            files = data.get("files", []) if data.get("tool") == "chessscan" else []
            return {f for f in files if isinstance(f, str) and _is_report_name(f)}
        except (OSError, ValueError, AttributeError):
            return set()

    @staticmethod
    def _report_named(objects: Iterable[str]) -> list[str]:
        """The report names among ``objects``: top-level table files, :data:`RUN_FILES` (also
        while written, ``NAME.<hex>.partial``), and ``<table>/`` for a prefix holding parts."""
        found = []
        for name in objects:
            head, sep, rest = name.partition("/")
            if not sep:
                # (an object named as a table's folder is one too: readers take it for the table)
                if _is_report_name(temporary_of(name) or name) or name in TABLE_NAMES:
                    found.append(name)
            elif head in TABLE_NAMES and "/" not in rest and _PART.match(rest):
                found.append(head + "/")
        return sorted(set(found))

    def prepare(self, files: Sequence[str], inputs: Iterable[str] = (), stage: bool = True) -> str | None:
        """Make the prefix ready for a run that writes ``files`` (see
        :func:`~chessscan.reports.writers.report_files`) and return the local staging folder
        the run writes into (None without ``stage``: the caller puts what it writes). Raises :class:`~chessscan.reports.writers.OutputFolderError`
        (report-named objects that no run recorded, or a report object that is one of
        ``inputs``: nothing removed), :class:`NoSuchBucket`, or another ``OSError``."""
        objects = self._objects()
        owned = self._read_manifest()
        named = self._report_named(objects)
        foreign = [n for n in named if (temporary_of(n) or n) not in owned]
        if foreign:
            raise OutputFolderError(self.url, foreign)
        read = self._inputs_here([*owned, *files], inputs)
        if read:
            raise OutputFolderError(self.url, read, "which this run reads: writing the report there would "
                                                    "remove it")
        doomed = []
        for name in objects:
            head, sep, rest = name.partition("/")
            if sep:
                if head + "/" in owned and "/" not in rest and _PART.match(rest):
                    doomed.append(name)
            elif (temporary_of(name) or name) in owned or temporary_of(name) == MANIFEST_NAME:
                doomed.append(name)
        if doomed:
            self.fs.rm([self._path(n) for n in doomed])
        manifest = json.dumps({"tool": "chessscan", "files": sorted(set(files))}, indent=1) + "\n"
        self._put_bytes(MANIFEST_NAME, manifest.encode("utf-8"))
        if stage:
            self.staging = tempfile.mkdtemp(prefix="chessscan-upload-")
        return self.staging

    def _inputs_here(self, names: Iterable[str], inputs: Iterable[str]) -> list[str]:
        """The report names among ``names`` that one of ``inputs`` (URLs) stands under."""
        read = set()
        for url in inputs:
            if not is_url(url):
                continue
            try:
                fs, path = url_fs(url)
            except OSError:
                continue
            if type(fs) is type(self.fs) and path.startswith(self.root + "/"):
                read.add(path[len(self.root) + 1:])
        found = []
        for name in sorted(set(names)):
            if any(r == name or (name.endswith("/") and r.startswith(name)) for r in read):
                found.append(name)
        return found

    def _put_bytes(self, name: str, data: bytes) -> None:
        try:
            self.fs.pipe_file(self._path(name), data)
        except OSError as exc:
            raise OutputError(f"{self.url}/{name}", exc) from None

    def staged(self) -> list[str]:
        """The report files in the staging folder, as names relative to it, in the order they
        are put: the tables (a dataset's parts in order), then ``run.json`` and
        ``report.html``, then ``summary.json``."""
        staging = self.staging
        if staging is None:
            return []
        tables, run_files = [], []
        for entry in sorted(os.listdir(staging)):
            path = os.path.join(staging, entry)
            if entry in TABLE_NAMES and os.path.isdir(path) and not os.path.islink(path):
                tables.extend(f"{entry}/{p}" for p in sorted(os.listdir(path))
                              if _PART.match(p) and temporary_of(p) is None and not p.startswith("."))
            elif entry in RUN_FILES:
                run_files.append(entry)
            elif _is_report_name(entry) and os.path.isfile(path):
                tables.append(entry)
        order = {name: i for i, name in enumerate(RUN_FILES)}
        run_files.sort(key=lambda n: (n == SUMMARY_NAME, order[n]))
        return tables + run_files

    def upload(self) -> list[str]:
        """Put every staged report file under the prefix, each as one whole object,
        ``summary.json`` last; returns the object names put. Raises
        :class:`~chessscan.reports.writers.OutputError` naming the object that could not be
        put (none after it is put: no ``summary.json``)."""
        names = self.staged()
        for name in names:
            try:
                self.fs.put_file(os.path.join(self.staging, name), self._path(name))
            except OSError as exc:
                raise OutputError(f"{self.url}/{name}", exc) from None
        return names

    def _table_parts(self, objects: Iterable[str], tables: Iterable[str]) -> list[str]:
        """The names among ``objects`` of the parts of the dataset folders ``tables``."""
        wanted = set(tables)
        found = []
        for name in objects:
            head, sep, rest = name.partition("/")
            if (sep and head in wanted and "/" not in rest and _PART.match(rest) and temporary_of(rest) is None
                    and not rest.startswith(".")):
                found.append(name)
        return found

    def _get(self, name: str, into: str) -> None:
        target = os.path.join(into, *name.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        self.fs.get_file(self._path(name), target)

    def fetch(self, tables: Iterable[str]) -> list[str]:
        """Copy the parts of the dataset folders ``tables`` from the prefix into the staging
        folder (where the client rewrites them: they are put again, whole, by
        :meth:`upload`); returns their names. Raises ``OSError`` (or the file system's own
        error)."""
        names = self._table_parts(self._objects(), tables)
        for name in names:
            self._get(name, self.staging)
        return names

    @contextlib.contextmanager
    def view(self):
        """A new local folder holding the report as it stands once put (a context manager
        yielding its path; removed on exit): every staged file (linked), and the tables that
        are only under the prefix (the parts Dask workers put, copied here), with the run's
        files put there before (``summary.json``...) that are not staged. Named as the
        prefix's last component (the page's title). Raises ``OSError`` (or the file
        system's own error)."""
        top = tempfile.mkdtemp(prefix="chessscan-view-")
        try:
            name = self.url.rsplit("/", 1)[-1]
            view = os.path.join(top, name if name not in ("", ".", "..") else "report")
            os.mkdir(view)
            staged = self.staged()
            have = {name.split("/", 1)[0] for name in staged}
            for name in staged:
                target = os.path.join(view, *name.split("/"))
                os.makedirs(os.path.dirname(target), exist_ok=True)
                os.symlink(os.path.join(self.staging, name), target)
            objects = self._objects()
            tables = [t for t in TABLE_NAMES if t not in have]
            for name in self._table_parts(objects, tables):
                self._get(name, view)
            for name in objects:  # (a table as one object: a CSV report's; the run's files)
                if "/" not in name and name not in have and (name in RUN_FILES[:2] or (
                        _is_report_name(name) and name not in RUN_FILES)):
                    self._get(name, view)
            yield view
        finally:
            shutil.rmtree(top, ignore_errors=True)

    def check_run_file(self, name: str) -> None:
        """Refuse to put ``name`` (one of :data:`~chessscan.reports.writers.RUN_FILES`, e.g.
        ``report.html``) over an object that no chessscan run recorded putting there (as
        :func:`~chessscan.reports.writers.check_run_file` for a folder). Raises
        :class:`~chessscan.reports.writers.OutputFolderError`, :class:`NoSuchBucket`,
        ``OSError``."""
        if name in self._objects() and name not in self._read_manifest():
            raise OutputFolderError(self.url, [name])

    def put_file(self, local: str, name: str) -> None:
        """Put the local file ``local`` as the object ``name`` under the prefix, whole.
        Raises :class:`~chessscan.reports.writers.OutputError` naming the object."""
        try:
            self.fs.put_file(local, self._path(name))
        except OSError as exc:
            raise OutputError(f"{self.url}/{name}", exc) from None

    def cleanup(self) -> None:
        """Remove the staging folder; never raises."""
        staging, self.staging = self.staging, None
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)


class ObjectParts:
    """The dataset parts of a report under the URL ``url`` (``-o s3://bucket/prefix`` with
    ``--dask``), as each process that puts or checks them reaches them: through its own
    fsspec file system, made from the URL with the credentials and endpoint of its own
    environment (a Dask worker's, the client's). Parts are named by URL
    (``URL/<table>/part-NNNNNN.parquet``), as messages show them.

    Raises :class:`~chessscan.readers.urls.MissingFileSystem` (the message names the extra)
    or ``OSError`` for a URL fsspec does not know."""

    def __init__(self, url: str) -> None:
        self.url = url.rstrip("/")
        self.fs, root = url_fs(url, "writing")
        self.root = root.rstrip("/")

    def url_of(self, name: str) -> str:
        """The URL of ``name`` (relative to the prefix: ``games/part-000000.parquet``)."""
        return f"{self.url}/{name}"

    def _path(self, url: str) -> str:
        if url != self.url and not url.startswith(self.url + "/"):
            raise ValueError(f"{url} is not under {self.url}")
        return self.root + url[len(self.url):]

    def read(self, name: str) -> bytes | None:
        """The object ``name`` (relative to the prefix), or None when there is none. Raises
        what the file system raises otherwise (no credentials, access denied...)."""
        try:
            return self.fs.cat_file(f"{self.root}/{name}")
        except FileNotFoundError:
            return None

    def put_bytes(self, name: str, data: bytes) -> None:
        """Put ``data`` as the object ``name``, whole. Raises ``OSError`` (or the file
        system's own error)."""
        self.fs.pipe_file(f"{self.root}/{name}", data)

    def put(self, local: str, url: str) -> None:
        """Put the local file ``local`` as the object at ``url``, whole: one request, or a
        multipart upload that no reader sees before it completes; an object there already is
        replaced whole. Raises ``OSError`` (or the file system's own error)."""
        self.fs.put_file(local, self._path(url))

    def open(self, url: str):
        """The object at ``url`` opened for reading (binary). Raises ``FileNotFoundError``
        when there is none."""
        # (a listing kept from before the part was put, by this process, would say it is not
        # there: a part the client adds rows to would lose the worker's)
        self.fs.invalidate_cache()
        return self.fs.open(self._path(url), "rb")

    def remove(self, urls: Iterable[str]) -> int:
        """Remove the objects at ``urls`` (those absent already are no error); returns how
        many were removed. Never raises."""
        removed = 0
        for url in urls:
            try:
                self.fs.rm_file(self._path(url))
                removed += 1
            except Exception:  # noqa: BLE001 (gone already, or the store went away: nothing to do)
                pass
        self.fs.invalidate_cache()
        return removed

    def parts(self, tables: Iterable[str]) -> list[str]:
        """The URLs of the objects under ``<table>/`` of ``tables`` named as parts (or as
        parts being written, :data:`~chessscan.reports.writers._PART`), in name order. Never
        raises: a listing that fails gives none."""
        self.fs.invalidate_cache()
        found = []
        for table in tables:
            try:
                names = self.fs.find(f"{self.root}/{table}", withdirs=False)
            except Exception:  # noqa: BLE001
                continue
            head = f"{self.root}/{table}/"
            found.extend(f"{self.url}/{table}/{p[len(head):]}" for p in sorted(names)
                         if p.startswith(head) and "/" not in p[len(head):] and _PART.match(p[len(head):]))
        return found
