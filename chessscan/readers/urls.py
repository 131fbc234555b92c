"""Inputs given as URLs (``s3://``, ``gs://``, ``az://``, ``https://``, ``hf://``, ...), read
through `fsspec <https://filesystem-spec.readthedocs.io>`_, the convention of pandas, pyarrow
and Dask: this module only maps a URL to its file system and path, opens it, and lists a
folder or a glob. Credentials and endpoints come from where each file system reads them (the
environment: ``AWS_ENDPOINT_URL``, ``AWS_PROFILE``, ``AWS_ACCESS_KEY_ID``, ``HF_TOKEN``,
``GOOGLE_APPLICATION_CREDENTIALS``, ``AZURE_STORAGE_CONNECTION_STRING``, ...).

A file system whose package is missing raises :class:`MissingFileSystem`, whose message
names the extra to install (``pip install '.[s3]'`` from a checkout).
"""

from __future__ import annotations

import re

__all__ = ["MissingFileSystem", "is_url", "url_fs", "open_url", "url_size", "list_url", "EXTRAS"]

# A URL: a scheme of two or more characters, then "://" (a Windows drive, C:/x, has one letter).
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+://")

#: The optional extra that installs each scheme's file system (pyproject.toml).
EXTRAS = {"s3": "s3", "s3a": "s3", "gs": "gcs", "gcs": "gcs", "az": "azure", "abfs": "azure",
          "abfss": "azure", "adl": "azure", "hf": "hf", "http": "http", "https": "http"}


class MissingFileSystem(OSError):
    """The file system of a URL's scheme is not installed (an ``OSError``: the input cannot
    be read); the message names the extra that installs it."""


def is_url(path) -> bool:
    """Whether ``path`` (a str) is a URL (``scheme://...``) rather than a local path."""
    return isinstance(path, str) and _URL.match(path) is not None


def url_fs(url: str, doing: str = "reading"):
    """``(filesystem, path)`` of ``url`` (an ``fsspec`` file system and the path it takes).
    ``doing`` (``"reading"``, ``"writing"``) words the messages. Raises
    :class:`MissingFileSystem` when the scheme's package is not installed, ``OSError``
    (``ValueError`` mapped) for a scheme fsspec does not know."""
    import fsspec.core

    try:
        return fsspec.core.url_to_fs(url)
    except ImportError as exc:
        scheme = url.split("://", 1)[0].lower()
        extra = EXTRAS.get(scheme)
        hint = (f"pip install 'chessscan[{extra}]' (from a checkout: pip install '.[{extra}]')" if extra
                else "install the fsspec file system for it")
        raise MissingFileSystem(f"{doing} {scheme}:// needs its file system: {hint} ({exc})") from None
    except ValueError as exc:
        raise OSError(f"not a URL fsspec can {'write' if doing == 'writing' else 'read'}: {exc}") from None


def open_url(url: str):
    """A binary file object reading ``url`` from its start (fsspec's buffered file, with
    ``readinto``). Raises ``OSError`` (``FileNotFoundError`` for a missing object)."""
    fs, path = url_fs(url)
    return fs.open(path, "rb")


def url_size(url: str) -> int | None:
    """Size in bytes of the object at ``url``, or None when the file system cannot tell."""
    try:
        fs, path = url_fs(url)
        size = fs.size(path)
    except Exception:  # (any file system's error: the size only serves progress)
        return None
    return int(size) if size is not None else None


def list_url(url: str, wanted, skip_folder=None) -> list[str] | None:
    """The files ``url`` stands for, as URLs, in sorted order: the files under a folder
    whose name ``wanted(name)`` accepts (recursively: a folder's own files in name order,
    then its subfolders in name order; hidden files and folders left out), every file a glob
    matches (``*``, ``?``, ``[...]``), or ``[url]`` for one object. None when nothing is
    there. ``skip_folder(names)``
    says whether a folder holding these file names is left out (a report folder). Raises
    ``OSError`` (or the file system's own error) when it cannot be listed."""
    from fsspec.core import has_magic

    fs, path = url_fs(url)
    protocols = (fs.protocol,) if isinstance(fs.protocol, str) else tuple(fs.protocol)
    if "http" in protocols and not path.endswith("/") and not has_magic(path):
        # Over http every URL is also a "folder" of the links its page holds, which fsspec
        # finds by downloading it whole: only a URL ending with '/' is listed.
        return [url] if fs.exists(path) else None
    if has_magic(path):
        found = sorted(fs.glob(path))
        return [fs.unstrip_protocol(p) for p in found if not fs.isdir(p)] or None
    if fs.isdir(path):
        files = []
        for root, dirs, names in fs.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            if skip_folder is not None and skip_folder(names):
                dirs[:] = []
                continue
            files.extend(f"{root.rstrip('/')}/{n}" for n in sorted(names)
                         if not n.startswith(".") and wanted(n))
        return [fs.unstrip_protocol(p) for p in files]
    if fs.exists(path):
        return [url]
    return None
