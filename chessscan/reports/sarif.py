"""``chessscan validate --format sarif``: the diagnostics as a SARIF 2.1.0 log.

SARIF (Static Analysis Results Interchange Format, OASIS Standard 2.1.0) is what GitHub code
scanning and other tools read to show findings on a file and line. The log has one run:
``tool.driver`` is chessscan with every code of the issue registry
(:data:`chessscan.reports.codes.ISSUE_CODES`) as a rule (``id`` the code, ``name`` the code
in UpperCamelCase, the registry's title as description and help text, its severity as
``defaultConfiguration.level``, its group as a tag); each diagnostic is a result with
``ruleId``/``ruleIndex``, ``level``, the message, and a location: the input's path as a
relative URI (against ``%SRCROOT%``; an absolute path as a ``file://`` URI) and the
line and column (``columnKind`` ``unicodeCodePoints``: columns count code points, as the
text diagnostics do, not SARIF's default UTF-16 code units). A diagnostic without a line
(an issue of a whole source) is placed on line 1, since code scanning needs a line.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import PurePath
from typing import Iterable
from urllib.parse import quote

from chessscan.reports.codes import ISSUE_CODES
from chessscan.reports.diagnostics import Diagnostic

__all__ = ["SARIF_SCHEMA", "SARIF_VERSION", "sarif_log", "sarif_text"]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def _rule_name(code: str) -> str:
    return "".join(part.capitalize() for part in code.split("-"))


def _rules() -> list[dict]:
    rules = []
    for entry in ISSUE_CODES.values():
        rules.append({
            "id": entry.code,
            "name": _rule_name(entry.code),
            "shortDescription": {"text": entry.title},
            "fullDescription": {"text": entry.title},
            "help": {"text": f"{entry.code} ({entry.severity}, {entry.group}): {entry.title}. "
                             "See the documentation's \"Issue codes\" page."},
            "defaultConfiguration": {"level": entry.severity},
            "properties": {"tags": [entry.group]},
        })
    return rules


def _name_bytes(path: str) -> bytes | None:
    """The file name's bytes when ``path`` is a display name with ``\\xNN`` escapes for bytes
    that are not UTF-8 (:func:`~chessscan.readers.sources.display_path`), else None. Escaped
    bytes that make valid UTF-8 were a literal backslash, as display_path escapes no such
    bytes."""
    if "\\x" not in path:
        return None
    raw = re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m.group(1), 16)]), path.encode("utf-8"))
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw
    return None


def _uri(path: str) -> tuple[str, str | None]:
    """(uri, uriBaseId) of an input path: the URI of the file's own bytes."""
    if path == "<stdin>":
        return "stdin", None
    raw = _name_bytes(path) if os.name == "posix" else None
    if raw is not None:
        return ("file://" + quote(raw), None) if raw.startswith(b"/") else (quote(raw), "%SRCROOT%")
    if os.path.isabs(path):
        return PurePath(path).as_uri(), None
    return quote(PurePath(path).as_posix()), "%SRCROOT%"


def sarif_log(diagnostics: Iterable[Diagnostic], version: str | None = None) -> dict:
    """The SARIF 2.1.0 log (a JSON-ready dict) of ``diagnostics``; ``version`` is chessscan's
    version for ``tool.driver.version`` (left out when None)."""
    rules = _rules()
    index = {r["id"]: i for i, r in enumerate(rules)}
    results = []
    for d in diagnostics:
        uri, base = _uri(d.path)
        artifact = {"uri": uri}
        if base:
            artifact["uriBaseId"] = base
        region = {"startLine": d.line if d.line else 1}
        if d.line and d.column:
            region["startColumn"] = d.column
        text = d.message
        context = []
        if d.game_index is not None:
            context.append(f"game_index {d.game_index}" + (f' "{d.players}"' if d.players else ""))
        if d.ply is not None:
            context.append(f"ply {d.ply}")
        if context:
            text += f" ({', '.join(context)})"
        result = {
            "ruleId": d.code,
            "level": d.severity if d.severity in ("error", "warning") else "note",
            "message": {"text": text},
            "locations": [{"physicalLocation": {"artifactLocation": artifact, "region": region}}],
        }
        if d.code in index:
            result["ruleIndex"] = index[d.code]
        props = {k: v for k, v in (("game_index", d.game_index), ("ply", d.ply), ("san", d.san)) if v is not None}
        if props:
            result["properties"] = props
        results.append(result)
    driver = {"name": "chessscan", "rules": rules}
    if version:
        driver["version"] = version
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [{
            "tool": {"driver": driver},
            "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "the folder validate ran in"}}},
            # The readers count columns in code points; SARIF's default is UTF-16 units (§3.14.17).
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def sarif_text(diagnostics: Iterable[Diagnostic]) -> str:
    """:func:`sarif_log` as indented JSON, with the installed chessscan's version."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        tool_version = version("chessscan")
    except PackageNotFoundError:
        tool_version = None
    return json.dumps(sarif_log(diagnostics, tool_version), indent=2, ensure_ascii=False)
