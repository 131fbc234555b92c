# cython: infer_types=False
"""FEN and EPD position text: parsing with validation, and writing.

Field syntax follows the PGN standard §16.1 (FEN); castling letters accept ``KQkq``,
X-FEN (``K``/``Q`` mean the outermost rook on that side) and Shredder-FEN file letters
(``HAha``) for Chess960. Squares 0..63 with a1 = 0.

Validity rules (each fault has its own stable code, and every fault found is reported,
not just the first): see :data:`FAULTS`.
"""

from __future__ import annotations

import re

from chessscan.core.attacks import ray
from chessscan.core.bitboard import BB_BACKRANKS, BB_RANKS, BB_SQUARES
from chessscan.core.checks import square_list
from chessscan.core.movegen import attackers_mask, has_legal_en_passant
from chessscan.core.position import Position
from chessscan.core.squares import (
    BISHOP, BLACK, FILE_NAMES, KING, KNIGHT, PAWN, PIECE_TYPE_BY_SYMBOL, QUEEN, ROOK,
    SQUARE_BY_NAME, SQUARE_NAMES, WHITE,
)

# code -> what the rule is and why it exists.
FAULTS = {
    "invalid-fen": "the text is not a FEN: wrong field count, bad placement, turn, castling, "
                   "en-passant or counter field (PGN standard §16.1), or a counter over "
                   "MAX_COUNTER",
    "missing-king": "a side has no king (FIDE Laws art. 3.9: every position has both kings)",
    "too-many-kings": "a side has more than one king",
    "pawns-on-backrank": "a pawn stands on the first or last rank, which no legal move reaches "
                         "(FIDE art. 3.7.5: a pawn reaching the last rank is promoted)",
    "too-many-pawns": "a side has more than 8 pawns",
    "too-many-pieces": "a side has more than 16 pieces",
    "chess960-inferred": "castling rights only Chess960 explains, where nothing said Chess960: the "
                         "position is read as Chess960 (a warning, from validate_setup)",
    "impossible-material": "more promoted pieces than missing pawns: unreachable from the standard "
                           "start, but moves are well defined (a warning: the position is analyzed)",
    "bad-castling-rights": "a castling right without the king and that rook on their original "
                           "squares (FIDE art. 3.8.2; Chess960: king between its rooks)",
    "bad-en-passant": "an en-passant square that no double push on the last move can explain",
    "opposite-check": "the side not to move is in check: the last move was illegal",
    "too-many-checkers": "more than two pieces give check: no single move can do that",
    "impossible-check": "a check no single last move can produce: two pawns or knights, two "
                        "pieces on one line, or a check the double push that set the en-passant "
                        "square cannot have given",
}

#: The largest halfmove clock or fullmove number a FEN may give: the tables hold them (and the
#: move numbers that follow) as 32-bit integers; no game comes near it.
MAX_COUNTER = 999_999_999
_COUNTER_RE = re.compile(r"-?[0-9]+")


class InvalidFen(ValueError):
    """A FEN/EPD text that is malformed or describes an impossible position.

    ``faults`` lists ``(code, message)`` pairs, every fault found (codes from :data:`FAULTS`).
    """

    def __init__(self, fen: str, faults: list[tuple[str, str]]):
        self.fen = fen
        self.faults = faults
        super().__init__("; ".join(msg for _, msg in faults) + f" (FEN {fen!r})")

    @property
    def codes(self) -> list[str]:
        return [code for code, _ in self.faults]


def _syntax(fen: str, why: str) -> InvalidFen:
    return InvalidFen(fen, [("invalid-fen", why)])


def parse_placement(pos: Position, text: str, fen: str) -> None:
    rows = text.split("/")
    if len(rows) != 8:
        raise _syntax(fen, f"placement has {len(rows)} ranks, expected 8")
    for i, row in enumerate(rows):
        rank = 7 - i
        file = 0
        prev_digit = False
        for ch in row:
            if ch in "12345678":
                if prev_digit:
                    raise _syntax(fen, f"two digits in a row on rank {rank + 1}")
                file += int(ch)
                prev_digit = True
                continue
            prev_digit = False
            pt = PIECE_TYPE_BY_SYMBOL.get(ch.lower())
            if pt is None:
                raise _syntax(fen, f"unknown piece letter {ch!r} on rank {rank + 1}")
            if file >= 8:
                raise _syntax(fen, f"rank {rank + 1} has more than 8 squares")
            pos.set_piece(rank * 8 + file, pt, ch.isupper())
            file += 1
        if file != 8:
            raise _syntax(fen, f"rank {rank + 1} has {file} squares, expected 8")


def _parse_castling(pos: Position, text: str, fen: str, faults: list) -> None:
    if text == "-":
        return
    rights = 0
    for ch in text:
        color = ch.isupper()
        c = ch.lower()
        backrank = BB_RANKS[0] if color else BB_RANKS[7]
        rooks = pos.pieces[ROOK] & pos.occupied_co[color] & backrank
        king = pos.king(color)
        if c in "kq":
            if king < 0 or not BB_SQUARES[king] & backrank:
                faults.append(("bad-castling-rights", f"castling right {ch!r} with no king on its back rank"))
                continue
            side = rooks & ~((1 << king) - 1) if c == "k" else rooks & ((1 << king) - 1)
            if not side:
                faults.append(("bad-castling-rights", f"castling right {ch!r} with no rook on that side"))
                continue
            rook = side.bit_length() - 1 if c == "k" else (side & -side).bit_length() - 1
        elif c in FILE_NAMES:
            rook = FILE_NAMES.index(c) + (0 if color else 56)
            if not rooks & BB_SQUARES[rook] or king < 0 or not BB_SQUARES[king] & backrank:
                faults.append(("bad-castling-rights", f"castling right {ch!r} with no king and rook to castle"))
                continue
        else:
            raise _syntax(fen, f"bad castling field {text!r}")
        if not pos.chess960 and not (king & 7 == 4 and rook & 7 in (0, 7)):
            faults.append(("bad-castling-rights",
                           f"castling right {ch!r} needs the king on e{1 if color else 8} and the rook "
                           f"on the a- or h-file in standard chess"))
            continue
        rights |= BB_SQUARES[rook]
    # At most one right per side of each king.
    for color in (WHITE, BLACK):
        backrank = BB_RANKS[0] if color else BB_RANKS[7]
        mine = rights & backrank
        king = pos.king(color)
        if king >= 0 and (
            (mine & ((1 << king) - 1)).bit_count() > 1 or (mine & ~((1 << king) - 1)).bit_count() > 1
        ):
            faults.append(("bad-castling-rights", "two castling rights on one side of a king"))
            rights &= ~backrank  # which one was meant is unknowable: keep neither
    pos.castling_rights = rights


# Faults that leave move generation meaningless; the others describe positions that no game
# can reach but whose legal moves are still well defined (perft suites hold such positions).
STRUCTURAL_FAULTS = frozenset({"invalid-fen", "missing-king", "too-many-kings", "pawns-on-backrank",
                               "opposite-check"})


# Faults that describe an unreachable position whose moves are still well defined: reported as
# warnings, the position is analyzed (python-chess's is_valid() accepts these too).
WARNING_FAULTS = frozenset({"impossible-material", "chess960-inferred"})


def fault_severity(code: str) -> str:
    """``'warning'`` for :data:`WARNING_FAULTS`, else ``'error'``."""
    return "warning" if code in WARNING_FAULTS else "error"


def validate_fen(fen: str, chess960: bool = False, counters: bool = True) -> tuple[Position | None, list[tuple[str, str]]]:
    """Parse ``fen`` and return ``(position, faults)``: every fault found, and the position
    unless a fault of severity error (see :func:`fault_severity`) makes it unusable."""
    warnings: list[tuple[str, str]] = []
    try:
        pos = parse_fen(fen, chess960=chess960, counters=counters, strict=True, _warnings=warnings)
    except InvalidFen as exc:
        return None, exc.faults
    return pos, warnings


def validate_setup(fen: str, chess960: bool = False, counters: bool = True
                   ) -> tuple[Position | None, list[tuple[str, str]], bool]:
    """:func:`validate_fen`, reading castling rights that only Chess960 explains (Shredder
    letters, a castling rook inside the a/h files, a king off the e-file) as Chess960 when the
    caller did not say: returns ``(position, faults, chess960_inferred)``."""
    pos, faults = validate_fen(fen, chess960=chess960, counters=counters)
    if pos is None and not chess960 and faults and all(code == "bad-castling-rights" for code, _ in faults):
        pos960, faults960 = validate_fen(fen, chess960=True, counters=counters)
        if pos960 is not None:
            return pos960, faults960, True
    return pos, faults, False


def parse_fen(fen: str, chess960: bool = False, counters: bool = True, strict: bool = True,
              _warnings: list | None = None) -> Position:
    """Parse a FEN (six fields) or the first four EPD fields into a validated position.

    ``chess960`` enables Chess960 castling rights (otherwise a right needs king on e1/e8 and
    rook on a/h). ``counters=False`` expects exactly four fields (EPD) and leaves the clocks
    at 0 and 1. Raises :class:`InvalidFen` listing every fault (:data:`FAULTS`); with
    ``strict=False`` only :data:`STRUCTURAL_FAULTS` raise, bad castling rights are dropped
    and an unexplainable en-passant square is cleared.
    """
    parts = fen.split()
    if counters and len(parts) not in (4, 5, 6) or not counters and len(parts) != 4:
        raise _syntax(fen, f"{len(parts)} fields, expected {'4 to 6' if counters else 4}")
    pos = Position()
    pos.chess960 = chess960
    parse_placement(pos, parts[0], fen)
    if parts[1] not in ("w", "b"):
        raise _syntax(fen, f"side to move {parts[1]!r} is not 'w' or 'b'")
    pos.turn = parts[1] == "w"
    if len(parts) > 4:
        # ASCII digits only: int() also takes '+1', '1_0' and other scripts' digits ('٣'),
        # and refuses more than 4300 digits, so the digits are counted before converting.
        texts = parts[4:6]
        if not all(_COUNTER_RE.fullmatch(t) for t in texts):
            raise _syntax(fen, "halfmove clock and fullmove number must be integers")
        if any(t.startswith("-") and t.strip("-0") for t in texts):
            raise _syntax(fen, "negative halfmove clock or fullmove number")
        if any(len(t.lstrip("-0")) > len(str(MAX_COUNTER)) or int(t) > MAX_COUNTER for t in texts):
            raise _syntax(fen, f"halfmove clock or fullmove number over {MAX_COUNTER:,}")
        pos.halfmove_clock = int(parts[4])
        pos.fullmove_number = max(1, int(parts[5]) if len(parts) > 5 else 1)  # 0 is a common writer's slip for 1
    ep_text = parts[3]
    if ep_text != "-" and ep_text not in SQUARE_BY_NAME:
        raise _syntax(fen, f"bad en-passant field {ep_text!r}")
    faults: list[tuple[str, str]] = []
    if parts[2] != "-" and not set(parts[2]) <= set("KQkqABCDEFGHabcdefgh"):
        raise _syntax(fen, f"bad castling field {parts[2]!r}")
    _parse_castling(pos, parts[2], fen, faults)
    if ep_text != "-":
        pos.ep_square = SQUARE_BY_NAME[ep_text]
    pos.key = pos.base_key()
    faults = _unique(faults + position_faults(pos))
    if not any(code not in WARNING_FAULTS for code, _ in faults):
        if _warnings is not None:
            _warnings.extend(faults)
        faults = []
    if not strict:
        faults = [f for f in faults if f[0] in STRUCTURAL_FAULTS]
        if pos.ep_square is not None and _ep_fault(pos):
            pos.ep_square = None
    if faults:
        raise InvalidFen(fen, faults)
    return pos


def _unique(faults: list[tuple[str, str]]) -> list[tuple[str, str]]:
    seen, out = set(), []
    for f in faults:
        if f not in seen:
            seen.add(f)
            out.append(f)
    return out


def position_faults(pos: Position) -> list[tuple[str, str]]:
    """Every validity fault of a parsed position (castling field faults excepted), as
    ``(code, message)`` pairs; empty for a valid position."""
    faults = []
    p = pos.pieces
    for color, name in ((WHITE, "white"), (BLACK, "black")):
        own = pos.occupied_co[color]
        kings = (p[KING] & own).bit_count()
        if kings == 0:
            faults.append(("missing-king", f"{name} has no king"))
        elif kings > 1:
            faults.append(("too-many-kings", f"{name} has {kings} kings"))
        pawns = (p[PAWN] & own).bit_count()
        if pawns > 8:
            faults.append(("too-many-pawns", f"{name} has {pawns} pawns"))
        if own.bit_count() > 16:
            faults.append(("too-many-pieces", f"{name} has {own.bit_count()} pieces"))
        elif pawns <= 8:
            # Pieces beyond the original set must be promoted pawns.
            extra = (max(0, (p[QUEEN] & own).bit_count() - 1) + max(0, (p[ROOK] & own).bit_count() - 2)
                     + max(0, (p[BISHOP] & own).bit_count() - 2) + max(0, (p[KNIGHT] & own).bit_count() - 2))
            if extra > 8 - pawns:
                faults.append(("impossible-material",
                               f"{name} has {extra} promoted pieces but only {8 - pawns} missing pawns"))
    if p[PAWN] & BB_BACKRANKS:
        squares = " ".join(SQUARE_NAMES[s] for s in range(64) if (p[PAWN] & BB_BACKRANKS) >> s & 1)
        faults.append(("pawns-on-backrank", f"pawns on the first or last rank: {squares}"))
    if any(code in ("missing-king", "too-many-kings") for code, _ in faults):
        return faults  # the remaining rules need exactly one king per side
    if pos.ep_square is not None:
        fault = _ep_fault(pos)
        if fault:
            faults.append(("bad-en-passant", fault))
    them_king = pos.king(not pos.turn)
    if attackers_mask(pos, pos.turn, them_king):
        faults.append(("opposite-check", f"{'white' if not pos.turn else 'black'}, not to move, is in check"))
    checking = attackers_mask(pos, not pos.turn, pos.king(pos.turn))
    n = checking.bit_count()
    if n > 2:
        faults.append(("too-many-checkers", f"{n} pieces give check"))
    elif n == 2:
        why = _impossible_double_check(pos, checking)
        if why:
            faults.append(("impossible-check", why))
    if n and pos.ep_square is not None and not any(code == "bad-en-passant" for code, _ in faults):
        why = _check_not_from_double_push(pos, checking)
        if why:
            faults.append(("impossible-check", why))
    return faults


def _check_not_from_double_push(pos: Position, checking: int) -> str | None:
    """With an en-passant square the last move was that double push: a check must come from
    the pushed pawn, or be discovered by the pawn leaving its origin square."""
    ep = pos.ep_square
    pushed = ep - 8 if pos.turn else ep + 8
    origin = ep + 8 if pos.turn else ep - 8
    if checking & (checking - 1):
        return "double check, but the last move was a double pawn push (en-passant square set)"
    if checking == 1 << pushed:
        return None
    before = (pos.occupied & ~(1 << pushed)) | (1 << origin)
    if attackers_mask(pos, not pos.turn, pos.king(pos.turn), before) & ~(1 << pushed):
        return (f"check from {square_list(checking)} that the double push to {SQUARE_NAMES[pushed]} "
                f"(en-passant square {SQUARE_NAMES[ep]}) cannot have given")
    return None


def _ep_fault(pos: Position) -> str | None:
    ep = pos.ep_square
    us = pos.turn
    name = SQUARE_NAMES[ep]
    if ep >> 3 != (5 if us else 2):
        return f"en-passant square {name} is not on rank {6 if us else 3}"
    pushed = ep - 8 if us else ep + 8
    origin = ep + 8 if us else ep - 8
    if not pos.pieces[PAWN] & pos.occupied_co[not us] & BB_SQUARES[pushed]:
        return f"en-passant square {name} has no pawn on {SQUARE_NAMES[pushed]} that just moved past it"
    if pos.occupied & (BB_SQUARES[ep] | BB_SQUARES[origin]):
        return f"en-passant square {name}: {SQUARE_NAMES[ep]} or {SQUARE_NAMES[origin]} is not empty"
    return None


def _impossible_double_check(pos: Position, checking: int) -> str | None:
    """Two checkers are possible only as a direct check plus a discovered one (or an
    en-passant capture opening two lines): never two pawns, two knights, a pawn and a
    knight, or two sliders on one line."""
    a = (checking & -checking).bit_length() - 1
    b = checking.bit_length() - 1
    types = {pos.mailbox[a], pos.mailbox[b]}
    if types <= {PAWN, KNIGHT}:
        return "double check by two pawns or knights, which no single move gives"
    king = pos.king(pos.turn)
    if ray(king, a) and ray(king, a) == ray(king, b):
        return "double check by two pieces on one line"
    return None


def _castling_text(pos: Position) -> str:
    out = []
    for color in (WHITE, BLACK):
        backrank = BB_RANKS[0] if color else BB_RANKS[7]
        rights = pos.castling_rights & backrank
        king = pos.king(color)
        rooks = pos.pieces[ROOK] & pos.occupied_co[color] & backrank
        for rook in sorted((s for s in range(64) if rights >> s & 1), reverse=True):
            h_side = rook > king
            if not pos.chess960:
                ch = "k" if h_side else "q"
            else:
                side = rooks & ~((1 << king) - 1) if h_side else rooks & ((1 << king) - 1)
                outer = side.bit_length() - 1 if h_side else (side & -side).bit_length() - 1
                ch = ("k" if h_side else "q") if rook == outer else FILE_NAMES[rook & 7]
            out.append(ch.upper() if color else ch)
    return "".join(out) or "-"


def position_epd(pos: Position, en_passant: str = "legal") -> str:
    """The four EPD position fields. ``en_passant='legal'`` writes the ep square only when a
    legal en-passant capture exists (as most tools and opening books do); ``'fen'`` writes
    it after every double push, as PGN standard §16.1.3.4 says."""
    rows = []
    for rank in range(7, -1, -1):
        row, empty = [], 0
        for file in range(8):
            sym = pos.piece_symbol_at(rank * 8 + file)
            if sym is None:
                empty += 1
                continue
            if empty:
                row.append(str(empty))
                empty = 0
            row.append(sym)
        if empty:
            row.append(str(empty))
        rows.append("".join(row))
    ep = pos.ep_square
    if ep is not None and en_passant == "legal" and not has_legal_en_passant(pos):
        ep = None
    return " ".join(("/".join(rows), "w" if pos.turn else "b", _castling_text(pos),
                     SQUARE_NAMES[ep] if ep is not None else "-"))


def position_fen(pos: Position, en_passant: str = "legal") -> str:
    """Six-field FEN of ``pos`` (see :func:`position_epd` for ``en_passant``)."""
    return f"{position_epd(pos, en_passant)} {pos.halfmove_clock} {pos.fullmove_number}"
