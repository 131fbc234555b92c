"""Standard Algebraic Notation (PGN standard §8.2.3): parsing, resolving, writing.

:func:`parse_san` turns text into a :class:`SanMove` (cached: a corpus has a few thousand
distinct SAN tokens among millions); :func:`resolve_san` finds the one legal move it names
through the attack tables and the mask-taking move generator, never by listing all moves.
Three distinct errors: :class:`InvalidSan` (not SAN at all), :class:`IllegalMove` (no legal
move matches), :class:`AmbiguousMove` (several do).

Accepted beyond strict SAN, as import format allows (§8.2.2): ``0-0`` for ``O-O``,
``e8Q`` for ``e8=Q``, lower-case promotion letters, ``-``/``x``/``:`` separators, long
algebraic ``Ng1-f3``/``e2e4``, a trailing ``e.p.``, and ``+``/``#``/``!``/``?`` suffixes.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from chessscan.core.attacks import (
    DIAG_ATTACKS, DIAG_MASKS, FILE_ATTACKS, FILE_MASKS, KING_ATTACKS, KNIGHT_ATTACKS,
    PAWN_ATTACKS, RANK_ATTACKS, RANK_MASKS,
)
from chessscan.core.bitboard import BB_ALL, BB_FILES, BB_RANKS
from chessscan.core.movegen import _castling_moves, attackers_mask, iter_legal_moves, legal_moves
from chessscan.core.position import Move, Position
from chessscan.core.squares import (
    BISHOP, KING, KNIGHT, PAWN, PIECE_SYMBOLS, QUEEN, ROOK, SQUARE_BY_NAME, SQUARE_NAMES,
)


class SanError(ValueError):
    """A SAN token that cannot be played; ``code`` is the stable issue code."""

    code = "invalid-san"

    def __init__(self, san: str, message: str):
        self.san = san
        super().__init__(message)


class InvalidSan(SanError):
    """The text is not SAN (syntax)."""

    code = "invalid-san"


class IllegalMove(SanError):
    """Well-formed SAN that names no legal move in the position."""

    code = "illegal-move"


class AmbiguousMove(SanError):
    """Well-formed SAN that matches more than one legal move (§8.2.3.4 disambiguation)."""

    code = "ambiguous-move"


CASTLE_H_SIDE, CASTLE_A_SIDE, NULL = -1, -2, -3  # SanMove.piece values for special moves


class SanMove(NamedTuple):
    """Parsed SAN. ``piece``: piece type 1..6, or ``CASTLE_H_SIDE`` / ``CASTLE_A_SIDE`` /
    ``NULL``; ``from_mask``: bitboard of allowed origin squares (file/rank disambiguation);
    ``to_square`` 0..63 (-1 for special moves); ``promotion``: piece type or 0;
    ``suffix``: ``"+"``, ``"#"`` or ``""`` as written."""

    piece: int
    from_mask: int
    to_square: int
    promotion: int
    suffix: str


_SAN_RE = re.compile(
    r"([NBRQK])?([a-h])?([1-8])?[-x:]?([a-h][1-8])(?:=?([nbrqNBRQ]))?(?:e\.?p\.?)?"
)
_CASTLE = {"O-O": CASTLE_H_SIDE, "0-0": CASTLE_H_SIDE, "O-O-O": CASTLE_A_SIDE, "0-0-0": CASTLE_A_SIDE}
_NULL_TOKENS = frozenset({"--", "Z0", "0000", "@@@@"})
_PIECES = {"N": KNIGHT, "B": BISHOP, "R": ROOK, "Q": QUEEN, "K": KING}
_PROMOTIONS = {"n": KNIGHT, "b": BISHOP, "r": ROOK, "q": QUEEN}
_cache: dict[str, SanMove] = {}


def parse_san(san: str) -> SanMove:
    """Parse SAN text (no position needed); raises :class:`InvalidSan`."""
    hit = _cache.get(san)
    if hit is not None:
        return hit
    body = san.rstrip("!?")
    suffix = ""
    if body.endswith("#"):
        suffix = "#"
    elif body.endswith("+"):
        suffix = "+"
    body = body.rstrip("+#")
    if body in _CASTLE:
        parsed = SanMove(_CASTLE[body], 0, -1, 0, suffix)
    elif body in _NULL_TOKENS:
        parsed = SanMove(NULL, 0, -1, 0, suffix)
    else:
        m = _SAN_RE.fullmatch(body)
        if m is None:
            raise InvalidSan(san, f"{san!r} is not SAN")
        piece_letter, file, rank, to, promo = m.groups()
        piece = _PIECES[piece_letter] if piece_letter else PAWN
        from_mask = BB_ALL
        if file:
            from_mask &= BB_FILES[ord(file) - 97]
        if rank:
            from_mask &= BB_RANKS[ord(rank) - 49]
        promotion = _PROMOTIONS[promo.lower()] if promo else 0
        if promotion and piece != PAWN:
            raise InvalidSan(san, f"{san!r}: only a pawn promotes")
        parsed = SanMove(piece, from_mask, SQUARE_BY_NAME[to], promotion, suffix)
    if len(_cache) < 100_000:  # bounded: garbage input must not grow it without limit
        _cache[san] = parsed
    return parsed


def candidates(pos: Position, piece: int, to: int) -> int:
    """Bitboard of the side to move's pieces of type ``piece`` that attack (or, for pawns,
    could push or capture to) square ``to``, before any legality test."""
    us = pos.turn
    p = pos.pieces
    our = pos.occupied_co[us]
    occ = pos.occupied
    if piece == KNIGHT:
        return KNIGHT_ATTACKS[to] & p[KNIGHT] & our
    if piece == BISHOP:
        return DIAG_ATTACKS[to][DIAG_MASKS[to] & occ] & p[BISHOP] & our
    if piece == ROOK:
        return (FILE_ATTACKS[to][FILE_MASKS[to] & occ] | RANK_ATTACKS[to][RANK_MASKS[to] & occ]) & p[ROOK] & our
    if piece == QUEEN:
        return (DIAG_ATTACKS[to][DIAG_MASKS[to] & occ] | FILE_ATTACKS[to][FILE_MASKS[to] & occ]
                | RANK_ATTACKS[to][RANK_MASKS[to] & occ]) & p[QUEEN] & our
    if piece == KING:
        return KING_ATTACKS[to] & p[KING] & our
    pawns = p[PAWN] & our
    to_bb = 1 << to
    if pos.occupied_co[not us] & to_bb or to == pos.ep_square:
        found = PAWN_ATTACKS[not us][to] & pawns
    else:
        found = 0
    if not occ & to_bb:
        one = to - 8 if us else to + 8
        if 0 <= one < 64:
            if pawns >> one & 1:
                found |= 1 << one
            elif not occ >> one & 1 and (to >> 3) == (3 if us else 4):
                two = to - 16 if us else to + 16
                found |= pawns & (1 << two)
    return found


def resolve_san(pos: Position, san: str | SanMove, text: str | None = None) -> Move:
    """The legal move that ``san`` (text, or already parsed with its ``text``) names in ``pos``.

    Raises :class:`InvalidSan`, :class:`IllegalMove` or :class:`AmbiguousMove`. A null move
    resolves to ``0`` (the caller decides what to do with it).
    """
    if isinstance(san, str):
        text, parsed = san, parse_san(san)
    else:
        parsed = san
        text = text if text is not None else repr(parsed)
    piece = parsed.piece
    us = pos.turn
    if piece < 0:
        if piece == NULL:
            return 0
        king = pos.king(us)
        if king < 0:
            raise IllegalMove(text, f"{text}: no king to castle")
        side = ((1 << king) - 1) if piece == CASTLE_A_SIDE else ~((1 << king) - 1) & BB_ALL
        found = [m for m in _castling_moves(pos, king, BB_ALL, side)] if not attackers_mask(
            pos, not us, king) else []
        if not found:
            raise IllegalMove(text, f"{text} is illegal: castling is not possible here")
        if len(found) > 1:
            raise AmbiguousMove(text, f"{text} is ambiguous")
        return found[0]
    to = parsed.to_square
    to_bb = 1 << to
    from_mask = parsed.from_mask
    if piece == PAWN and not from_mask & (from_mask - 1):
        # A full origin square without a piece letter (g1f3, e1g1): long algebraic / UCI, which
        # the import format tolerates (§8.2.2); the piece is the one standing there.
        frm = from_mask.bit_length() - 1
        standing = pos.mailbox[frm]
        if standing and standing != PAWN and pos.occupied_co[us] >> frm & 1:
            if standing == KING and (pos.occupied_co[us] & pos.pieces[ROOK] & to_bb
                                     or (abs((to & 7) - (frm & 7)) == 2 and to >> 3 == frm >> 3
                                         and not pos.chess960)):
                a_side = to < frm
                found = [m for m in _castling_moves(pos, frm, from_mask, BB_ALL)
                         if ((m >> 6) & 63 < frm) == a_side] if not attackers_mask(pos, not us, frm) else []
                if len(found) == 1:
                    return found[0]
                raise IllegalMove(text, f"{text} is illegal: castling is not possible here")
            piece = standing
    if pos.occupied_co[us] & to_bb:
        raise IllegalMove(text, f"{text} is illegal: {SQUARE_NAMES[to]} holds a piece of the side to move")
    origins = candidates(pos, piece, to) & from_mask
    if piece == PAWN:
        # §8.2.3.3: a pawn capture names its origin file; without one the move is a push.
        to_file = BB_FILES[to & 7]
        if from_mask == BB_ALL or from_mask & to_file:
            origins &= to_file
        else:
            origins &= ~to_file
    if not origins:
        raise IllegalMove(text, f"{text} is illegal: no {_piece_name(piece)} can reach {SQUARE_NAMES[to]}")
    promotion = parsed.promotion
    last_rank = (to >> 3) == (7 if us else 0)
    if piece == PAWN and last_rank != bool(promotion):
        if last_rank:
            raise IllegalMove(text, f"{text} is illegal: a pawn reaching {SQUARE_NAMES[to]} must promote")
        raise IllegalMove(text, f"{text} is illegal: a pawn promotes only on the last rank")
    found = [m for m in iter_legal_moves(pos, origins, to_bb) if m >> 12 == promotion]
    if len(found) == 1:
        return found[0]
    if not found:
        raise IllegalMove(text, f"{text} is illegal: it would leave the king in check" if not
                          attackers_mask(pos, not us, pos.king(us)) else f"{text} is illegal: it does not answer the check")
    squares = ", ".join(SQUARE_NAMES[m & 63] for m in found)
    raise AmbiguousMove(text, f"{text} is ambiguous: pieces on {squares} can make it")


def _piece_name(piece: int) -> str:
    return ("", "pawn", "knight", "bishop", "rook", "queen", "king")[piece]


def move_san(pos: Position, move: Move, suffix: bool = True) -> str:
    """SAN text of legal ``move`` in ``pos`` (before it is played), with ``+``/``#``
    when ``suffix`` (PGN standard §8.2.3)."""
    frm, to = move & 63, (move >> 6) & 63
    pt = pos.mailbox[frm]
    if pos.is_castling(move):
        text = "O-O-O" if to < frm else "O-O"
    else:
        capture = bool(pos.occupied & (1 << to)) or pos.is_en_passant(move)
        if pt == PAWN:
            text = (SQUARE_NAMES[frm][0] + "x" if capture else "") + SQUARE_NAMES[to]
            if move >> 12:
                text += "=" + PIECE_SYMBOLS[move >> 12].upper()
        else:
            others = [m for m in legal_moves(pos, candidates(pos, pt, to) & ~(1 << frm), 1 << to)
                      if pos.mailbox[m & 63] == pt]
            dis = ""
            if others:
                files = {m & 7 for m in others}
                ranks = {(m & 63) >> 3 for m in others}
                if frm & 7 not in files:
                    dis = SQUARE_NAMES[frm][0]
                elif frm >> 3 not in ranks:
                    dis = SQUARE_NAMES[frm][1]
                else:
                    dis = SQUARE_NAMES[frm]
            text = PIECE_SYMBOLS[pt].upper() + dis + ("x" if capture else "") + SQUARE_NAMES[to]
    if suffix:
        after = pos.copy()
        after.play(move)
        king = after.king(after.turn)
        if king >= 0 and attackers_mask(after, not after.turn, king):
            text += "+" if any(True for _ in iter_legal_moves(after)) else "#"
    return text
