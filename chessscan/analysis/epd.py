"""EPD positions through the detector: validity, check, mate, stalemate, move counts, and
whether the ``bm``/``am`` moves of a test suite are legal.

One row per EPD line goes to the ``epd_positions`` buffers; faults go to ``issues`` (with
``game_index`` empty and the file's line number). No last move is known, so the check kind
is ``none``, ``single`` or ``double``.
"""

from __future__ import annotations


from chessscan.analysis.game import Tally, add_issue
from chessscan.core.bitboard import BB_ALL
from chessscan.core.checks import setup_check_kind, square_list
from chessscan.core.fen import fault_severity, validate_setup
from chessscan.core.movegen import checkers, legal_moves
from chessscan.core.position import Position
from chessscan.core.san import SanError, parse_san, resolve_san
from chessscan.core.squares import PAWN
from chessscan.readers.epd import error_severity



def epd_position(fen: str) -> tuple[Position | None, list[tuple[str, str]]]:
    """Validate an EPD/FEN position. An EPD line does not say whether it is Chess960, so
    castling rights that only Chess960 explains are read as Chess960 rather than rejected,
    with a ``chess960-inferred`` warning among the faults."""
    pos, faults, inferred = validate_setup(fen)
    if inferred:
        faults = [("chess960-inferred", "castling rights that only Chess960 explains: read as Chess960")] + faults
    return pos, faults


def _resolve(pos: Position, text: str) -> tuple[int | None, str | None, str | None]:
    """Move named by ``text``: ``(move, error_code, message)``. SAN resolution also takes
    long algebraic / UCI text (``g1f3``, ``e7e8q``, ``e1g1``), which gets a ``uci-move``
    warning."""
    try:
        move = resolve_san(pos, text)
    except SanError as exc:
        return None, exc.code, str(exc)
    parsed = parse_san(text)
    if parsed.piece == PAWN and parsed.from_mask != BB_ALL and not parsed.from_mask & (parsed.from_mask - 1):
        return move, "uci-move", f"'{text}' is UCI / long algebraic, not SAN"
    return move, None, None


def analyze_epd_record(rec, tables: dict[str, dict[str, list]], tally: Tally) -> None:
    """Analyze one :class:`~chessscan.readers.epd.EpdRecord`, appending an
    ``epd_positions`` row and its ``issues``. Never raises for bad content."""
    rows = tables["epd_positions"]
    issues = tables["issues"]
    source, line = rec.source, rec.line
    tally.epd_positions += 1
    for code, message, column in rec.errors:
        add_issue(issues, tally, source, None, line, column, None, error_severity(code), code, message)
    pos = None
    if rec.ok and rec.fen:
        pos, faults = epd_position(rec.fen)
        for code, message in faults:
            add_issue(issues, tally, source, None, line, None, None, fault_severity(code), code, message)
    rows["source"].append(source)
    rows["line"].append(line)
    rows["id"].append(rec.id)
    rows["fen"].append(rec.fen or rec.raw[:200])
    rows["valid"].append(pos is not None)
    bm, am = rec.bm, rec.am
    rows["bm"].append(" ".join(bm) if bm else None)
    rows["am"].append(" ".join(am) if am else None)
    if pos is None:
        tally.epd_invalid += 1
        for col in ("in_check", "check_kind", "checkers", "legal_moves", "is_checkmate", "is_stalemate",
                    "bm_legal", "am_legal"):
            rows[col].append(None)
        return
    checking = checkers(pos)
    count = len(legal_moves(pos))
    kind = setup_check_kind(checking)
    rows["in_check"].append(bool(checking))
    rows["check_kind"].append(kind)
    rows["checkers"].append(square_list(checking))
    rows["legal_moves"].append(count)
    rows["is_checkmate"].append(bool(checking) and count == 0)
    rows["is_stalemate"].append(not checking and count == 0)
    if checking:
        tally.epd_outcomes[kind] += 1
    if count == 0:
        if checking:
            tally.epd_outcomes["checkmate"] += 1
        else:
            tally.epd_outcomes["stalemate"] += 1
    for opcode, moves in (("bm", bm), ("am", am)):
        if not moves:
            rows[f"{opcode}_legal"].append(None)
            continue
        all_legal = True
        for text in moves:
            move, code, message = _resolve(pos, text)
            if move is None:
                all_legal = False
                add_issue(issues, tally, source, None, line, None, None, "error", code,
                          f"{opcode} {message} [FEN {rec.fen}]", text)
            elif code is not None:
                add_issue(issues, tally, source, None, line, None, None, "warning", code,
                          f"{opcode} {message}", text)
        rows[f"{opcode}_legal"].append(all_legal)
