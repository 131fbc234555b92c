"""Shared fixtures: where the shipped samples and the optional ../shared data live."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "data" / "samples"
SHARED = REPO.parent / "shared" / "data"


def shared_path(*parts: str) -> Path:
    """A file under ../shared/data, or skip the test when that folder is absent (a user's
    clone has none)."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not present (../shared is only on the project's machines)")
    return path
