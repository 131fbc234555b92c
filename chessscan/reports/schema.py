"""Declared Arrow schemas of the report tables.

Every report table has a FIXED schema declared here; writers never infer
types from the data (an all-None column must still come out as, say,
int32). The single source of truth is ``TABLE_SPECS``: to add a column,
add one ``Column(...)`` line to the right table below. Everything else
(``*_SCHEMA``, ``*_COLUMNS``, ``schema_for``, ``new_buffers`` in
``writers.py``) is derived from it.

Conventions
-----------
* ``ply`` is 1-based within the game: ply 1 is the first move of its movetext
  (from the standard start or its ``[FEN]``). ``move_number`` is the
  PGN full-move number (1, 1, 2, 2, ...).
* ``game_index`` is 0-based within its ``source`` (file name or URL).
* ``line`` is 1-based, ``column`` is 1-based, ``byte_offset`` is 0-based
  bytes from the start of the (decompressed) source.
* Square lists (``checkers``) are space-separated names, e.g. ``"e1 h4"``;
  the empty string means "none".
* Low-cardinality text columns (sides, kinds, codes, results, sources) are Arrow
  dictionaries (``D``): pandas reads them as categoricals; their values are the same text.
* ``nullable=False`` columns reject ``None`` at write time.
* ``optional=True`` columns are only part of the schema when the caller
  enables them (see :func:`schema_for`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import pyarrow as pa

__all__ = [
    "Column",
    "TABLE_SPECS",
    "TABLE_NAMES",
    "OPTIONAL_COLUMNS",
    "column_specs",
    "column_names",
    "schema_for",
    "POSITIONS_SCHEMA",
    "GAMES_SCHEMA",
    "ISSUES_SCHEMA",
    "EPD_POSITIONS_SCHEMA",
    "PERPETUALS_SCHEMA",
    "DISAGREEMENTS_SCHEMA",
    "POSITIONS_COLUMNS",
    "GAMES_COLUMNS",
    "ISSUES_COLUMNS",
    "EPD_POSITIONS_COLUMNS",
    "PERPETUALS_COLUMNS",
    "DISAGREEMENTS_COLUMNS",
    "POSITIONS_OPTIONAL_COLUMNS",
]


@dataclass(frozen=True)
class Column:
    """One declared column: name, Arrow type, nullability, optionality."""

    name: str
    type: pa.DataType
    nullable: bool = False
    optional: bool = False  # only present when the caller asks for it
    doc: str = ""

    def field(self) -> pa.Field:
        meta = {"doc": self.doc} if self.doc else None
        return pa.field(self.name, self.type, nullable=self.nullable, metadata=meta)


S, I32, I64, U64, B, F64 = pa.string(), pa.int32(), pa.int64(), pa.uint64(), pa.bool_(), pa.float64()
#: Text with few distinct values (a side, a kind, a code, a file name): an Arrow dictionary,
#: which Parquet keeps and pandas reads as a ``category`` (one small code per row instead of
#: a string). CSV writes the text.
D = pa.dictionary(pa.int32(), pa.string())


def _c(name: str, typ: pa.DataType, doc: str = "", *, null: bool = False,
       optional: bool = False) -> Column:
    return Column(name, typ, nullable=null, optional=optional, doc=doc)


# ---------------------------------------------------------------------------
# THE place to edit. Order here is the on-disk column order.
# ---------------------------------------------------------------------------
TABLE_SPECS: dict[str, tuple[Column, ...]] = {
    "positions": (
        _c("source", D, "input file / URL the game came from"),
        _c("game_index", I64, "0-based game number within source"),
        _c("ply", I32, "1-based ply of the move just played"),
        _c("move_number", I32, "PGN full-move number"),
        _c("color", D, "side that moved: 'white' | 'black'"),
        _c("san", S, "move in SAN"),
        _c("uci", S, "move in UCI"),
        _c("in_check", B, "side to move is in check after the move"),
        _c("check_kind", D, "none | direct | discovered | double"),
        _c("checkers", S, "space-separated checking squares, '' if none"),
        _c("by_en_passant", B, "the check was given by an en-passant capture"),
        _c("by_castling", B, "the check was given by castling (the rook)"),
        _c("by_promotion", B, "the check was given by a promotion"),
        _c("is_checkmate", B, "the position after the move is checkmate"),
        _c("is_stalemate", B, "the position after the move is stalemate"),
        _c("halfmove_clock", I32, "50-move-rule clock after the move, in plies"),
        _c("zobrist", U64, "Polyglot Zobrist hash of the position"),
        _c("repetition", I32, "occurrence count of this position so far"),
        _c("clock_ms", I64, "clock of the side that just moved, after its move, in milliseconds, from the "
                            "[%clk H:MM:SS] command in the move's comment; None without one", null=True),
        _c("emt_ms", I64, "time the side that just moved spent on the move, in milliseconds, from the "
                          "[%emt H:MM:SS] command in the move's comment; None without one", null=True),
        _c("eval_cp", I32, "evaluation after the move in centipawns from White's point of view, from the "
                           "[%eval 0.17] command in the move's comment; None without one or with a mate "
                           "score", null=True),
        _c("eval_mate", I32, "moves to mate after the move, signed (positive: White mates), from the "
                             "[%eval #-3] command in the move's comment; None without one", null=True),
        _c("fen", S, "FEN after the move", null=True, optional=True),
    ),
    "games": (
        _c("source", D, "input file / URL the game came from"),
        _c("game_index", I64, "0-based game number within source"),
        _c("byte_offset", I64, "0-based byte offset of the game's first tag"),
        _c("line", I64, "1-based line of the game's first tag"),
        _c("event", S, "Event tag", null=True),
        _c("site", S, "Site tag", null=True),
        _c("date", S, "Date tag, as written (YYYY.MM.DD, ?? for unknown parts)", null=True),
        _c("round", S, "Round tag", null=True),
        _c("white", S, "White tag: the white player", null=True),
        _c("black", S, "Black tag: the black player", null=True),
        _c("result", D, "Result tag as written", null=True),
        _c("white_elo", I32, "WhiteElo tag, when a number", null=True),
        _c("black_elo", I32, "BlackElo tag, when a number", null=True),
        _c("eco", D, "ECO tag: opening code", null=True),
        _c("time_control", D, "TimeControl tag", null=True),
        _c("time_control_base_s", F64, "base time in seconds of the TimeControl tag's first period "
                                       "(300+3: 300; 40/7200:3600: 7200); None for '-', '?', no tag or "
                                       "another form", null=True),
        _c("time_control_increment_s", F64, "increment per move in seconds of the TimeControl tag's first "
                                            "period (300+3: 3; 0 for a period without one; None for a "
                                            "sandclock '*180', '-', '?', no tag or another form)", null=True),
        _c("termination", D, "Termination tag", null=True),
        _c("variant", D, "Variant tag (standard, Chess960, or an unsupported variant)", null=True),
        _c("start_fen", S, "FEN/SetUp start position if not standard", null=True),
        _c("plies", I32, "plies successfully replayed"),
        _c("clock_plies", I32, "plies replayed whose move carries a clock annotation (positions.clock_ms)"),
        _c("eval_plies", I32, "plies replayed whose move carries an evaluation annotation (positions.eval_cp or "
                              "eval_mate)"),
        _c("checks", I32, "moves giving check"),
        _c("direct_checks", I32, "checks given by the piece that arrived"),
        _c("discovered_checks", I32, "checks given by a piece that did not move"),
        _c("double_checks", I32, "checks given by two pieces"),
        _c("outcome", D, "outcome derived from the final position"),
        _c("winner", D, "'white' | 'black' | None", null=True),
        _c("perpetuals", I32, "perpetual checks: runs of checks whose position stood a third time (rows of perpetuals with occurrences >= 3; the summary's perpetual_checks); None if not replayed", null=True),
        _c("result_consistent", B, "Result tag agrees with final position", null=True),
        _c("error_code", D, "first fatal issue code, None if the game is ok", null=True),
        _c("error_ply", I32, "ply at which the first error stands (0: the [FEN])", null=True),
        _c("moves_hash", S, "BLAKE2b-128 of the start FEN and the moves played in UCI, space-separated, as 32 "
                            "hex digits: blake2b(' '.join([fen, *ucis]).encode(), digest_size=16).hexdigest(); "
                            "equal for the same moves from the same position whatever the tags; None when the "
                            "moves were not all read and played (an unsupported variant, a [FEN] that cannot "
                            "be set up, a reader error, an illegal, ambiguous or invalid move)", null=True),
        _c("moves_key", S, "with --contained-games: the start position and the moves played, as hex digits of "
                            "8 bytes of BLAKE2b of the start FEN (as moves_hash takes it) then 2 bytes a move "
                            "(from << 9 | to << 3 | promotion, big-endian; squares a1=0..h8=63, promotion "
                            "2 knight..5 queen, 6 king, else 0; a null move 0): a game's mainline is the start "
                            "of another's from the same position when its key is a prefix of the other's. None "
                            "when moves_hash is", null=True, optional=True),
        _c("duplicate_of", I64, "with --duplicates: the run order (0-based row of this table) of the first game "
                                "with the same moves_hash, when this game repeats it; None for a first occurrence "
                                "or a game without moves_hash. With one input file it is that game's game_index",
           null=True, optional=True),
    ),
    "issues": (
        _c("source", D, "input file / URL"),
        _c("game_index", I64, "0-based game number within source; None for an EPD line", null=True),
        _c("line", I64, "1-based line of the problem", null=True),
        _c("column", I32, "1-based column of the problem", null=True),
        _c("ply", I32, "ply at which the problem stands (0: the [FEN]); None in a tag section", null=True),
        _c("severity", D, "'error' | 'warning'"),
        _c("code", D, "stable machine-readable issue code"),
        _c("message", S, "what is wrong, with the move number and FEN where they help"),
        _c("san", S, "offending move text, if any", null=True),
    ),
    "epd_positions": (
        _c("source", D, "input file"),
        _c("line", I64, "1-based"),
        _c("id", S, "EPD 'id' opcode", null=True),
        _c("fen", S, "the position as FEN (the EPD's four fields and its counters)"),
        _c("valid", B, "position is legal / parseable"),
        _c("in_check", B, "side to move is in check", null=True),
        _c("check_kind", D, "none | single | double", null=True),
        _c("checkers", S, "space-separated checking squares", null=True),
        _c("legal_moves", I32, "number of legal moves", null=True),
        _c("is_checkmate", B, "the position is checkmate", null=True),
        _c("is_stalemate", B, "the position is stalemate", null=True),
        _c("bm", S, "best-move opcode, as written", null=True),
        _c("bm_legal", B, "every bm move is legal", null=True),
        _c("am", S, "avoid-move opcode, as written", null=True),
        _c("am_legal", B, "every am move is legal", null=True),
    ),
    "perpetuals": (
        _c("source", D, "input file / URL"),
        _c("game_index", I64, "0-based game number within source"),
        _c("side", D, "side giving the checks"),
        _c("checking_player", S, "name of the side giving the checks (White or Black tag)", null=True),
        _c("checked_player", S, "name of the side in check (White or Black tag)", null=True),
        _c("first_ply", I32, "ply after which the run's earliest repeated position first stood"),
        _c("last_ply", I32, "ply after which the run's last repeated position stood (the checked side's reply when the cycle ends on it)"),
        _c("checks_given", I32, "the checking side's moves from first_ply to last_ply, every one a check"),
        _c("occurrences", I32, "max repetition count seen in the sequence"),
        _c("game_ended", B, "sequence runs to the last move of the game"),
        _c("game_result", D, "the game's Result tag", null=True),
    ),
    "duplicates": (
        _c("source", D, "input file / URL of the game that repeats an earlier one"),
        _c("game_index", I64, "0-based game number within source"),
        _c("line", I64, "1-based line of the game's first tag"),
        _c("first_source", D, "input file / URL of the first game with the same moves_hash"),
        _c("first_game_index", I64, "0-based game number of that first game within first_source"),
        _c("first_line", I64, "1-based line of that first game's first tag"),
        _c("duplicate_of", I64, "the first game's run order: its 0-based row in the games table"),
        _c("moves_hash", S, "the moves_hash both games have"),
    ),
    "contained_games": (
        _c("source", D, "input file / URL of a game whose whole mainline is the start of another game's from "
                        "the same start position (an unfinished copy)"),
        _c("game_index", I64, "0-based game number within source"),
        _c("line", I64, "1-based line of the game's first tag"),
        _c("plies", I32, "plies the game has"),
        _c("in_source", D, "input file / URL of a game that continues it: of those, the ones whose moves_key "
                           "comes first in order, and of these the first in the run's order"),
        _c("in_game_index", I64, "0-based game number of that game within in_source"),
        _c("in_line", I64, "1-based line of that game's first tag"),
        _c("in_plies", I32, "plies that game has (more than plies)"),
        _c("contained_in", I64, "that game's run order: its 0-based row in the games table"),
    ),
    "disagreements": (
        _c("source", D, "input file / URL"),
        _c("game_index", I64, "0-based game number within source"),
        _c("ply", I32, "ply compared", null=True),
        _c("field", D, "what was compared"),
        _c("chessscan", S, "our value, as text"),
        _c("python_chess", S, "python-chess value, as text"),
        _c("fen", S, "FEN before the move", null=True),
        _c("note", S, "a known python-chess behaviour that explains the difference", null=True),
    ),
}

TABLE_NAMES: tuple[str, ...] = tuple(TABLE_SPECS)

#: table -> names of columns that must be enabled explicitly.
OPTIONAL_COLUMNS: dict[str, tuple[str, ...]] = {
    t: tuple(c.name for c in cols if c.optional) for t, cols in TABLE_SPECS.items()
}


def _table(table: str) -> tuple[Column, ...]:
    try:
        return TABLE_SPECS[table]
    except KeyError:
        raise ValueError(
            f"unknown table {table!r}; known: {', '.join(TABLE_NAMES)}"
        ) from None


def column_specs(table: str, optional: Iterable[str] = ()) -> tuple[Column, ...]:
    """Declared columns of ``table``, in order, with the given optional ones.

    ``optional`` names optional columns to include; naming a column that is
    not an optional column of this table raises ``ValueError``.
    """
    cols = _table(table)
    wanted = set(optional)
    allowed = set(OPTIONAL_COLUMNS[table])
    bad = sorted(wanted - allowed)
    if bad:
        raise ValueError(
            f"table {table!r}: {bad} are not optional columns "
            f"(optional: {sorted(allowed) or 'none'})"
        )
    return tuple(c for c in cols if not c.optional or c.name in wanted)


def column_names(table: str, optional: Iterable[str] = ()) -> tuple[str, ...]:
    """Column names of ``table`` in on-disk order (see :func:`column_specs`)."""
    return tuple(c.name for c in column_specs(table, optional))


def schema_for(table: str, optional: Iterable[str] = ()) -> pa.Schema:
    """Arrow schema of ``table``, with the enabled optional columns.

    The schema metadata carries ``chessscan.table`` so a file can be traced
    back to its table.
    """
    return pa.schema(
        [c.field() for c in column_specs(table, optional)],
        metadata={"chessscan.table": table},
    )


# Base schemas / names (optional columns NOT included; use schema_for to add).
POSITIONS_SCHEMA = schema_for("positions")
GAMES_SCHEMA = schema_for("games")
ISSUES_SCHEMA = schema_for("issues")
EPD_POSITIONS_SCHEMA = schema_for("epd_positions")
PERPETUALS_SCHEMA = schema_for("perpetuals")
DISAGREEMENTS_SCHEMA = schema_for("disagreements")

POSITIONS_COLUMNS = column_names("positions")
GAMES_COLUMNS = column_names("games")
ISSUES_COLUMNS = column_names("issues")
EPD_POSITIONS_COLUMNS = column_names("epd_positions")
PERPETUALS_COLUMNS = column_names("perpetuals")
DISAGREEMENTS_COLUMNS = column_names("disagreements")

POSITIONS_OPTIONAL_COLUMNS = OPTIONAL_COLUMNS["positions"]  # ("fen",)
