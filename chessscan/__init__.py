"""chessscan: scan chess game datasets (PGN, EPD) with an exact legality, check and mate
detector of its own, cross-validated against python-chess.

Public API (re-exports only): :func:`scan`, :func:`read_report`, :class:`Report`, :class:`Position`, :func:`parse_fen`,
:func:`legal_moves`, :func:`perft`, :func:`resolve_san`, :func:`classify_move`, check kinds.
"""

import os as _os

if _os.environ.get("CHESSSCAN_PURE") == "1":
    from chessscan import _purecore

    _purecore.install()

from chessscan.core import core_mode
from chessscan.core.checks import CHECK_KINDS, MoveCheck, classify_move
from chessscan.core.fen import InvalidFen, parse_fen
from chessscan.core.movegen import checkers, has_legal_move, legal_moves, perft
from chessscan.core.position import STARTING_FEN, Position
from chessscan.core.san import AmbiguousMove, IllegalMove, InvalidSan, SanError, move_san, resolve_san

__version__ = "0.1.0"


def __getattr__(name: str):
    # scan(), read_report() pull in pandas and pyarrow: imported on first use, so that the command line
    # starts (and answers Ctrl-C) sooner.
    if name in ("scan", "read_report", "Report"):
        from chessscan import api

        return getattr(api, name)
    raise AttributeError(f"module 'chessscan' has no attribute {name!r}")

__all__ = [
    "scan", "read_report", "Report", "Position", "STARTING_FEN", "parse_fen", "InvalidFen", "legal_moves", "has_legal_move",
    "checkers", "perft", "resolve_san", "move_san", "SanError", "InvalidSan", "IllegalMove",
    "AmbiguousMove", "classify_move", "MoveCheck", "CHECK_KINDS", "core_mode", "__version__",
]
