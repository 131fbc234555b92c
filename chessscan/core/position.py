"""The position: piece placement, side to move, castling rights, en-passant square, clocks.

State (C arrays and scalars once compiled, so the hot path allocates nothing per ply):

- ``pieces[pt]``: bitboard (int of 64 bits, a1 = bit 0) of every piece of type ``pt``
  (1 = pawn .. 6 = king; index 0 unused), both colors;
- ``occupied_co[color]``: bitboard of each color's pieces (``[black, white]``);
- ``occupied``: bitboard of every piece;
- ``mailbox[sq]``: piece type on square ``sq`` (0 = empty), for O(1) captures;
- ``turn``: the side to move (True = white);
- ``castling_rights``: bitboard of the *rook squares* that may still castle, which covers
  standard chess and Chess960 alike (FIDE Laws art. 3.8.2; Chess960 Guidelines);
- ``ep_square``: the square a pawn skipped with a double push on the last ply, or ``None``
  (recorded after every double push, as in FEN, PGN standard §16.1.3.4); ``ep`` holds it as
  a square with 0 for none (a1 is never one);
- ``halfmove_clock`` (plies since the last capture or pawn move, FIDE art. 9.3) and
  ``fullmove_number``;
- ``key``: the Polyglot Zobrist key without its en-passant part, updated incrementally
  (see :mod:`chessscan.core.zobrist`; after setting fields directly, refresh it with
  :meth:`Position.base_key`).

The arrays read from Python (uncompiled, or through the compiled object's attributes) are
lists; compiled, reading one gives a copy, so only this module and the other compiled core
modules change them.

Moves are ints: ``from | to << 6 | promotion << 12`` with squares 0..63 and the promotion
piece type (0 for none). Castling is encoded as the king moving onto its own rook, which
is unambiguous in Chess960 too; :meth:`Position.move_uci` writes it the standard way.
"""

from __future__ import annotations

try:
    import cython
except ImportError:  # uncompiled, without Cython installed
    from chessscan.core import _cython_shim as cython

from chessscan.core.squares import PIECE_SYMBOLS, SQUARE_NAMES
from chessscan.core.zobrist import keys

if not cython.compiled:
    from chessscan.core.bitboard import BB_ALL, BB_RANK_1, BB_RANK_8, bit, lsb, msb
    from chessscan.core.zobrist import CASTLE_MIX, castling_key
    from chessscan.core.squares import BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK

STARTING_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"

Move = int
NULL_MOVE: Move = 0  # a1 -> a1: never a real move

K = keys()


def make_move(from_sq: int, to_sq: int, promotion: int = 0) -> Move:
    """Encode a move; squares 0..63, ``promotion`` a piece type (2..5) or 0."""
    return from_sq | (to_sq << 6) | (promotion << 12)


def move_from(move: Move) -> int:
    return move & 63


def move_to(move: Move) -> int:
    return (move >> 6) & 63


def move_promotion(move: Move) -> int:
    return move >> 12


class Position:
    """A chess position; mutable, updated in place by :meth:`play`.

    Build one with :func:`chessscan.core.fen.parse_fen` (or :meth:`from_fen`), or
    :meth:`initial`. ``chess960`` only changes how castling is written in UCI and FEN.
    """

    def __init__(self) -> None:
        self.pieces = [0] * 7
        self.occupied_co = [0, 0]
        self.occupied = 0
        self.mailbox = [0] * 64
        self.turn = True
        self.castling_rights = 0
        self.ep = 0
        self.halfmove_clock = 0
        self.fullmove_number = 1
        self.chess960 = False
        self.key = K.turn

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
        """An independent copy."""
        p = Position.__new__(Position)
        if cython.compiled:  # C arrays: assignment copies them
            p.pieces = self.pieces
            p.occupied_co = self.occupied_co
            p.mailbox = self.mailbox
        else:
            p.pieces = self.pieces[:]
            p.occupied_co = self.occupied_co[:]
            p.mailbox = self.mailbox[:]
        p.occupied = self.occupied
        p.turn = self.turn
        p.castling_rights = self.castling_rights
        p.ep = self.ep
        p.halfmove_clock = self.halfmove_clock
        p.fullmove_number = self.fullmove_number
        p.chess960 = self.chess960
        p.key = self.key
        return p

    @property
    def ep_square(self):
        """The en-passant square (0..63), or None."""
        return self.ep if self.ep else None

    @ep_square.setter
    def ep_square(self, sq) -> None:
        self.ep = sq if sq is not None else 0

    # -- placement -------------------------------------------------------------------

    def set_piece(self, sq: int, piece_type: int, color: bool) -> None:
        """Put a piece on an empty square ``sq``."""
        b = bit(sq)
        self.pieces[piece_type] |= b
        self.occupied_co[color] |= b
        self.occupied |= b
        self.mailbox[sq] = piece_type
        self.key ^= K.piece[(color * 7 + piece_type) * 64 + sq]

    def color_at(self, sq: int):
        """True (white), False (black) or None (empty) for square ``sq``."""
        if self.occupied_co[1] >> sq & 1:
            return True
        if self.occupied_co[0] >> sq & 1:
            return False
        return None

    def king(self, color: bool) -> int:
        """Square of ``color``'s king (-1 if there is none)."""
        return msb(self.pieces[KING] & self.occupied_co[color])

    def piece_symbol_at(self, sq: int):
        """FEN letter of the piece on ``sq`` (upper case for white), or None."""
        pt = self.mailbox[sq]
        if not pt:
            return None
        s = PIECE_SYMBOLS[pt]
        return s.upper() if self.occupied_co[1] >> sq & 1 else s

    # -- keys --------------------------------------------------------------------------

    def base_key(self) -> int:
        """Polyglot key without the en-passant part, computed from scratch."""
        key = castling_key(self.castling_rights, self.king(True), self.king(False))
        if self.turn:
            key ^= K.turn
        for color in range(2):
            own = self.occupied_co[color]
            for pt in range(1, 7):
                bb = self.pieces[pt] & own
                while bb:
                    key ^= K.piece[(color * 7 + pt) * 64 + lsb(bb)]
                    bb &= bb - 1
        return key

    def ep_key(self) -> int:
        """En-passant part of the Polyglot key: the file key when a pawn of the side to move
        stands beside the pawn that just made a double push, else 0."""
        ep = self.ep
        if not ep:
            return 0
        pushed = ep - 8 if self.turn else ep + 8
        beside = 0
        if pushed & 7:
            beside |= bit(pushed - 1)
        if pushed & 7 != 7:
            beside |= bit(pushed + 1)
        if beside & self.pieces[PAWN] & self.occupied_co[self.turn]:
            return K.ep[ep & 7]
        return 0

    def repetition_key(self, legal_ep: bool) -> int:
        """Key of the FIDE repetition identity (art. 9.2.2): placement, side to move, all
        castling rights, and the en-passant file only when ``legal_ep``."""
        key = self.key
        if legal_ep:
            key ^= K.ep[self.ep & 7]
        return key ^ ((self.castling_rights * CASTLE_MIX) & BB_ALL)

    # -- moves -------------------------------------------------------------------------

    def is_castling(self, move: int) -> bool:
        """True if ``move`` is a castling move (king onto its own rook)."""
        frm = move & 63
        return self.mailbox[frm] == KING and bool(self.occupied_co[self.turn] >> ((move >> 6) & 63) & 1)

    def is_en_passant(self, move: int) -> bool:
        """True if ``move`` is an en-passant capture."""
        frm = move & 63
        to = (move >> 6) & 63
        return (self.mailbox[frm] == PAWN and to == self.ep and self.ep != 0 and not self.mailbox[to]
                and (to - frm) & 7 != 0)

    def play(self, move: int) -> None:
        """Play a legal ``move`` for the side to move (no legality check: the caller's job).

        Updates placement, castling rights (FIDE art. 3.8.2.1: lost when the king or that
        rook moves, or the rook is captured), the en-passant square, both clocks and the key.
        """
        frm = move & 63
        to = (move >> 6) & 63
        us = self.turn
        them = not us
        pt = self.mailbox[frm]
        from_bb = bit(frm)
        to_bb = bit(to)
        ep = self.ep
        self.ep = 0
        self.halfmove_clock += 1
        if not us:
            self.fullmove_number += 1
        rights = self.castling_rights
        key = self.key ^ K.turn
        ours = us * 7 * 64  # offset of our piece keys
        theirs = them * 7 * 64

        if pt == KING and self.occupied_co[us] & to_bb:
            # Castling: king onto its rook; both land on the c/d or g/f files.
            rank = frm & 56
            if to < frm:
                k_to = rank + 2
                r_to = rank + 3
            else:
                k_to = rank + 6
                r_to = rank + 5
            self.mailbox[frm] = 0
            self.mailbox[to] = 0
            self.mailbox[k_to] = KING
            self.mailbox[r_to] = ROOK
            self.pieces[KING] = (self.pieces[KING] ^ from_bb) | bit(k_to)
            self.pieces[ROOK] = (self.pieces[ROOK] ^ to_bb) | bit(r_to)
            self.occupied_co[us] = (self.occupied_co[us] ^ from_bb ^ to_bb) | bit(k_to) | bit(r_to)
            key ^= (K.piece[ours + KING * 64 + frm] ^ K.piece[ours + KING * 64 + k_to]
                    ^ K.piece[ours + ROOK * 64 + to] ^ K.piece[ours + ROOK * 64 + r_to])
            self.castling_rights &= ~(BB_RANK_1 if us else BB_RANK_8)
        else:
            captured = self.mailbox[to]
            if captured:
                self.pieces[captured] ^= to_bb
                self.occupied_co[them] ^= to_bb
                key ^= K.piece[theirs + captured * 64 + to]
                self.halfmove_clock = 0
            elif pt == PAWN and to == ep and ep != 0 and (to - frm) & 7:
                cap_sq = to - 8 if us else to + 8
                self.pieces[PAWN] ^= bit(cap_sq)
                self.occupied_co[them] ^= bit(cap_sq)
                self.mailbox[cap_sq] = 0
                key ^= K.piece[theirs + PAWN * 64 + cap_sq]
            self.pieces[pt] ^= from_bb | to_bb
            self.occupied_co[us] ^= from_bb | to_bb
            self.mailbox[frm] = 0
            self.mailbox[to] = pt
            key ^= K.piece[ours + pt * 64 + frm] ^ K.piece[ours + pt * 64 + to]
            if pt == PAWN:
                self.halfmove_clock = 0
                if to - frm == 16 or frm - to == 16:
                    self.ep = (frm + to) >> 1
                else:
                    promotion = move >> 12
                    if promotion:
                        self.pieces[PAWN] ^= to_bb
                        self.pieces[promotion] |= to_bb
                        self.mailbox[to] = promotion
                        key ^= K.piece[ours + PAWN * 64 + to] ^ K.piece[ours + promotion * 64 + to]
            if rights:  # (none left in most of a game: no test then)
                kept = rights & ~from_bb
                if captured:
                    kept &= ~to_bb
                if pt == KING:
                    kept &= ~(BB_RANK_1 if us else BB_RANK_8)
                self.castling_rights = kept
        if rights != self.castling_rights:
            # The castling part depends on where the kings stand; the mover's king stood on frm.
            wk = msb(self.pieces[KING] & self.occupied_co[1])
            bk = msb(self.pieces[KING] & self.occupied_co[0])
            if pt == KING:
                if us:
                    old = castling_key(rights, frm, bk)
                else:
                    old = castling_key(rights, wk, frm)
            else:
                old = castling_key(rights, wk, bk)
            key ^= old ^ castling_key(self.castling_rights, wk, bk)
        self.key = key
        self.occupied = self.occupied_co[0] | self.occupied_co[1]
        self.turn = them

    def play_null(self) -> None:
        """Pass the turn (a null move, ``--`` in PGN): clears the en-passant square."""
        self.ep = 0
        self.halfmove_clock += 1
        if not self.turn:
            self.fullmove_number += 1
        self.turn = not self.turn
        self.key ^= K.turn

    def move_uci(self, move: int) -> str:
        """UCI text of ``move`` in this position (before it is played).

        Castling is written king-to-destination (``e1g1``) in standard chess and
        king-to-rook (``e1h1``) in Chess960, as UCI specifies.
        """
        frm = move & 63
        to = (move >> 6) & 63
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
            list(self.pieces) == list(other.pieces) and list(self.occupied_co) == list(other.occupied_co)
            and self.turn == other.turn and self.castling_rights == other.castling_rights
            and self.ep == other.ep and self.halfmove_clock == other.halfmove_clock
            and self.fullmove_number == other.fullmove_number
        )

    __hash__ = None  # mutable


__all__ = ["Position", "Move", "STARTING_FEN", "NULL_MOVE", "make_move", "move_from", "move_to",
           "move_promotion"]
