"""The position: piece placement, side to move, castling rights, en-passant square, clocks.

State is held as plain ints so the hot path allocates nothing per ply:

- ``pieces[pt]``: bitboard (int of 64 bits, a1 = bit 0) of every piece of type ``pt``
  (1 = pawn .. 6 = king; index 0 unused), both colors;
- ``occupied_co[color]``: bitboard of each color's pieces (``[black, white]``);
- ``mailbox[sq]``: piece type on square ``sq`` (0 = empty), for O(1) captures;
- ``castling_rights``: bitboard of the *rook squares* that may still castle, which covers
  standard chess and Chess960 alike (FIDE Laws art. 3.8.2; Chess960 Guidelines);
- ``ep_square``: the square a pawn skipped with a double push on the last ply, or ``None``
  (recorded after every double push, as in FEN, PGN standard §16.1.3.4);
- ``halfmove_clock`` (plies since the last capture or pawn move, FIDE art. 9.3) and
  ``fullmove_number``;
- ``key``: the Polyglot Zobrist key without its en-passant part, updated incrementally
  (see :mod:`chessscan.core.zobrist`; whoever sets fields directly must refresh it with
  :func:`chessscan.core.zobrist.base_key`).

Moves are ints: ``from | to << 6 | promotion << 12`` with squares 0..63 and the promotion
piece type (0 for none). Castling is encoded as the king moving onto its own rook, which
is unambiguous in Chess960 too; :func:`move_uci` writes it the standard way.
"""

from __future__ import annotations

from chessscan.core.bitboard import BB_RANK_1, BB_RANK_8, BB_SQUARES, Bitboard
from chessscan.core.zobrist import PIECE_KEYS, TURN_KEY, castling_key
from chessscan.core.squares import (
    BISHOP, BLACK, KING, KNIGHT, PAWN, PIECE_SYMBOLS, QUEEN, ROOK, SQUARE_NAMES, WHITE,
    Color, Square,
)

STARTING_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"

Move = int
NULL_MOVE: Move = 0  # a1 -> a1: never a real move


def make_move(from_sq: Square, to_sq: Square, promotion: int = 0) -> Move:
    """Encode a move; ``promotion`` is a piece type (2..5) or 0."""
    return from_sq | (to_sq << 6) | (promotion << 12)


def move_from(move: Move) -> Square:
    return move & 63


def move_to(move: Move) -> Square:
    return (move >> 6) & 63


def move_promotion(move: Move) -> int:
    return move >> 12


class Position:
    """A chess position; mutable, updated in place by :meth:`play`.

    Build one with :func:`chessscan.core.fen.parse_fen` (or :meth:`from_fen`), or
    :meth:`initial`. ``chess960`` only changes how castling is written in UCI and FEN.
    """

    __slots__ = (
        "pieces", "occupied_co", "occupied", "mailbox", "turn", "castling_rights",
        "ep_square", "halfmove_clock", "fullmove_number", "chess960", "key",
    )

    def __init__(self) -> None:
        self.pieces: list[Bitboard] = [0] * 7
        self.occupied_co: list[Bitboard] = [0, 0]
        self.occupied: Bitboard = 0
        self.mailbox: list[int] = [0] * 64
        self.turn: Color = WHITE
        self.castling_rights: Bitboard = 0
        self.ep_square: Square | None = None
        self.halfmove_clock = 0
        self.fullmove_number = 1
        self.chess960 = False
        self.key = TURN_KEY

    @classmethod
    def initial(cls) -> "Position":
        """The standard starting position."""
        return cls.from_fen(STARTING_FEN)

    @classmethod
    def from_fen(cls, fen: str, chess960: bool = False) -> "Position":
        """Parse and validate a FEN (or the four EPD fields); raises ``InvalidFen``."""
        from chessscan.core.fen import parse_fen

        return parse_fen(fen, chess960=chess960)

    def copy(self) -> "Position":
        p = Position.__new__(Position)
        p.pieces = self.pieces[:]
        p.occupied_co = self.occupied_co[:]
        p.occupied = self.occupied
        p.mailbox = self.mailbox[:]
        p.turn = self.turn
        p.castling_rights = self.castling_rights
        p.ep_square = self.ep_square
        p.halfmove_clock = self.halfmove_clock
        p.fullmove_number = self.fullmove_number
        p.chess960 = self.chess960
        p.key = self.key
        return p

    # -- placement -------------------------------------------------------------------

    def set_piece(self, sq: Square, piece_type: int, color: Color) -> None:
        """Put a piece on an empty square ``sq``."""
        bb = BB_SQUARES[sq]
        self.pieces[piece_type] |= bb
        self.occupied_co[color] |= bb
        self.occupied |= bb
        self.mailbox[sq] = piece_type
        self.key ^= PIECE_KEYS[color][piece_type][sq]

    def color_at(self, sq: Square) -> Color | None:
        bb = BB_SQUARES[sq]
        if self.occupied_co[WHITE] & bb:
            return WHITE
        if self.occupied_co[BLACK] & bb:
            return BLACK
        return None

    def king(self, color: Color) -> Square:
        """Square of ``color``'s king (-1 if there is none)."""
        bb = self.pieces[KING] & self.occupied_co[color]
        return bb.bit_length() - 1

    def piece_symbol_at(self, sq: Square) -> str | None:
        pt = self.mailbox[sq]
        if not pt:
            return None
        s = PIECE_SYMBOLS[pt]
        return s.upper() if self.occupied_co[WHITE] & BB_SQUARES[sq] else s

    # -- moves -------------------------------------------------------------------------

    def is_castling(self, move: Move) -> bool:
        """True if ``move`` is a castling move (king onto its own rook)."""
        frm = move & 63
        return self.mailbox[frm] == KING and bool(
            self.occupied_co[self.turn] & BB_SQUARES[(move >> 6) & 63]
        )

    def is_en_passant(self, move: Move) -> bool:
        frm, to = move & 63, (move >> 6) & 63
        return (
            self.mailbox[frm] == PAWN and to == self.ep_square and not self.mailbox[to]
            and (to - frm) & 7 != 0
        )

    def play(self, move: Move) -> None:
        """Play a legal ``move`` for the side to move (no legality check: the caller's job).

        Updates placement, castling rights (FIDE art. 3.8.2.1: lost when the king or that
        rook moves, or the rook is captured), the en-passant square and both clocks.
        """
        frm = move & 63
        to = (move >> 6) & 63
        us = self.turn
        them = not us
        pieces = self.pieces
        occ_co = self.occupied_co
        mailbox = self.mailbox
        pt = mailbox[frm]
        from_bb = 1 << frm
        to_bb = 1 << to
        ep = self.ep_square
        self.ep_square = None
        self.halfmove_clock += 1
        if not us:
            self.fullmove_number += 1
        rights = self.castling_rights
        our_keys = PIECE_KEYS[us]
        key = self.key ^ TURN_KEY

        if pt == KING and occ_co[us] & to_bb:
            # Castling: king onto its rook; both land on the c/d or g/f files.
            rank = frm & 56
            if to < frm:
                k_to, r_to = rank + 2, rank + 3
            else:
                k_to, r_to = rank + 6, rank + 5
            mailbox[frm] = 0
            mailbox[to] = 0
            mailbox[k_to] = KING
            mailbox[r_to] = ROOK
            k_to_bb = 1 << k_to
            r_to_bb = 1 << r_to
            pieces[KING] = (pieces[KING] & ~from_bb) | k_to_bb
            pieces[ROOK] = (pieces[ROOK] & ~to_bb) | r_to_bb
            occ_co[us] = (occ_co[us] & ~(from_bb | to_bb)) | k_to_bb | r_to_bb
            key ^= (our_keys[KING][frm] ^ our_keys[KING][k_to] ^ our_keys[ROOK][to] ^ our_keys[ROOK][r_to])
            self.castling_rights &= ~(BB_RANK_1 if us else BB_RANK_8)
        else:
            captured = mailbox[to]
            if captured:
                pieces[captured] ^= to_bb
                occ_co[them] ^= to_bb
                key ^= PIECE_KEYS[them][captured][to]
                self.halfmove_clock = 0
                self.castling_rights &= ~to_bb
            elif pt == PAWN and to == ep and (to - frm) & 7:
                cap_sq = to - 8 if us else to + 8
                cap_bb = 1 << cap_sq
                pieces[PAWN] ^= cap_bb
                occ_co[them] ^= cap_bb
                mailbox[cap_sq] = 0
                key ^= PIECE_KEYS[them][PAWN][cap_sq]
            move_bb = from_bb | to_bb
            pieces[pt] ^= move_bb
            occ_co[us] ^= move_bb
            mailbox[frm] = 0
            mailbox[to] = pt
            key ^= our_keys[pt][frm] ^ our_keys[pt][to]
            if pt == PAWN:
                self.halfmove_clock = 0
                if to - frm == 16 or frm - to == 16:
                    self.ep_square = (frm + to) >> 1
                else:
                    promotion = move >> 12
                    if promotion:
                        pieces[PAWN] ^= to_bb
                        pieces[promotion] |= to_bb
                        mailbox[to] = promotion
                        key ^= our_keys[PAWN][to] ^ our_keys[promotion][to]
            elif pt == KING:
                self.castling_rights &= ~(BB_RANK_1 if us else BB_RANK_8)
            self.castling_rights &= ~from_bb
        if rights != self.castling_rights:
            # The part depends on where the kings stand; the mover's king stood on frm.
            kings = pieces[KING]
            wk = (kings & occ_co[1]).bit_length() - 1
            bk = (kings & occ_co[0]).bit_length() - 1
            if pt == KING:
                if us:
                    old = castling_key(rights, frm, bk)
                else:
                    old = castling_key(rights, wk, frm)
            else:
                old = castling_key(rights, wk, bk)
            key ^= old ^ castling_key(self.castling_rights, wk, bk)
        self.key = key
        self.occupied = occ_co[0] | occ_co[1]
        self.turn = them

    def play_null(self) -> None:
        """Pass the turn (a null move, ``--`` in PGN): clears the en-passant square."""
        self.ep_square = None
        self.halfmove_clock += 1
        if not self.turn:
            self.fullmove_number += 1
        self.turn = not self.turn
        self.key ^= TURN_KEY

    def move_uci(self, move: Move) -> str:
        """UCI text of ``move`` in this position (before it is played).

        Castling is written king-to-destination (``e1g1``) in standard chess and
        king-to-rook (``e1h1``) in Chess960, as UCI specifies.
        """
        frm, to = move & 63, (move >> 6) & 63
        if not self.chess960 and self.is_castling(move):
            to = (frm & 56) + (2 if to < frm else 6)
        promotion = move >> 12
        s = SQUARE_NAMES[frm] + SQUARE_NAMES[to]
        return s + PIECE_SYMBOLS[promotion] if promotion else s

    def fen(self, en_passant: str = "legal") -> str:
        """FEN of the position; see :func:`chessscan.core.fen.position_fen`."""
        from chessscan.core.fen import position_fen

        return position_fen(self, en_passant=en_passant)

    def __repr__(self) -> str:
        return f"Position({self.fen()!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Position):
            return NotImplemented
        return (
            self.pieces == other.pieces and self.occupied_co == other.occupied_co
            and self.turn == other.turn and self.castling_rights == other.castling_rights
            and self.ep_square == other.ep_square and self.halfmove_clock == other.halfmove_clock
            and self.fullmove_number == other.fullmove_number
        )

    __hash__ = None  # mutable


# Re-exported for convenience.
__all__ = ["Position", "Move", "STARTING_FEN", "NULL_MOVE", "make_move", "move_from", "move_to",
           "move_promotion", "PAWN", "KNIGHT", "BISHOP", "ROOK", "QUEEN", "KING"]
