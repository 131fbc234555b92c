"""Options shared by every analysis entry point (CLI, Python API, engines)."""

from __future__ import annotations

from dataclasses import dataclass

POSITIONS_CHOICES = ("all", "checks", "none")
CROSS_CHECK_CHOICES = ("off", "sample", "full")


@dataclass(frozen=True)
class AnalysisOptions:
    """What to compute and which rows to keep.

    ``positions``: which position rows are written: ``all`` (one per ply), ``checks`` (plies
    that give check) or ``none``. ``fen``: add the FEN after each move to position rows.
    ``cross_check``: replay games in python-chess and report disagreements: ``off``,
    ``sample`` (the rule in :mod:`chessscan.analysis.crosscheck`) or ``full``.
    ``moves_column``: the column of a game table holding the moves (``--moves-column``;
    None: the first of the well-known names, :data:`chessscan.readers.tables.MOVES_COLUMNS`).
    ``moves_key``: add the games table's ``moves_key`` column
    (:data:`chessscan.analysis.plies.MOVES_KEY`; ``--contained-games``).
    ``moves_hash``: fill the games table's ``moves_hash`` column
    (:data:`chessscan.analysis.plies.MOVES_HASH`); off, the column holds nulls and the hash's
    cost (~3% of a run that writes no positions) is saved: ``validate`` without
    ``--duplicates``, which writes no games table.
    """

    positions: str = "all"
    fen: bool = False
    cross_check: str = "off"
    moves_column: str | None = None
    moves_key: bool = False
    moves_hash: bool = True

    def __post_init__(self) -> None:
        if self.positions not in POSITIONS_CHOICES:
            raise ValueError(f"positions must be one of {POSITIONS_CHOICES}, not {self.positions!r}")
        if self.cross_check not in CROSS_CHECK_CHOICES:
            raise ValueError(f"cross_check must be one of {CROSS_CHECK_CHOICES}, not {self.cross_check!r}")
