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

try:
    import cython
except ImportError:  # uncompiled, without Cython installed
    from chessscan.core import _cython_shim as cython

from chessscan.core.attacks import tables
from chessscan.core.bitboard import BB_FILES, BB_RANKS
from chessscan.core.movegen import MAX_MOVES, legal_moves
from chessscan.core.position import Position
from chessscan.core.squares import PIECE_SYMBOLS, SQUARE_BY_NAME, SQUARE_NAMES

if not cython.compiled:
    from chessscan.core.attacks import bishop_attacks, rook_attacks
    from chessscan.core.bitboard import BB_ALL, BB_FILE_A, bit, lsb, msb
    from chessscan.core.movegen import attackers, castling, generate_known, has_legal_move, pinned
    from chessscan.core.squares import BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK

T = tables()


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


# SanMove.piece values for castling and a null move (the compiled core has C twins: _bits.pxd).
CASTLE_H_SIDE, CASTLE_A_SIDE, NULL_PIECE = -1, -2, -3


class SanMove(NamedTuple):
    """Parsed SAN. ``piece``: piece type 1..6, or ``CASTLE_H_SIDE`` / ``CASTLE_A_SIDE`` /
    ``NULL_PIECE``; ``from_mask``: bitboard of allowed origin squares (file/rank disambiguation);
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
        parsed = SanMove(NULL_PIECE, 0, -1, 0, suffix)
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
    our = pos.occupied_co[us]
    occ = pos.occupied
    if piece == KNIGHT:
        return T.knight[to] & pos.pieces[KNIGHT] & our
    if piece == BISHOP:
        return bishop_attacks(to, occ) & pos.pieces[BISHOP] & our
    if piece == ROOK:
        return rook_attacks(to, occ) & pos.pieces[ROOK] & our
    if piece == QUEEN:
        return (bishop_attacks(to, occ) | rook_attacks(to, occ)) & pos.pieces[QUEEN] & our
    if piece == KING:
        return T.king[to] & pos.pieces[KING] & our
    pawns = pos.pieces[PAWN] & our
    found = 0
    if pos.occupied_co[not us] >> to & 1 or (to == pos.ep and pos.ep != 0):
        found = T.pawn[(not us) * 64 + to] & pawns
    if not occ >> to & 1:
        one = to - 8 if us else to + 8
        if 0 <= one < 64:
            if pawns >> one & 1:
                found |= bit(one)
            elif not occ >> one & 1 and (to >> 3) == (3 if us else 4):
                found |= pawns & bit(to - 16 if us else to + 16)
    return found


def resolve_san(pos: Position, san, text=None) -> int:
    """The legal move that ``san`` (text, or a :class:`SanMove` already parsed from
    ``text``) names in ``pos``.

    Raises :class:`InvalidSan`, :class:`IllegalMove` or :class:`AmbiguousMove`. A null move
    resolves to ``0`` (the caller decides what to do with it).
    """
    if isinstance(san, str):
        text = san
        parsed = parse_san(san)
    else:
        parsed = san
        if text is None:
            text = repr(parsed)
    return resolve(pos, parsed.piece, parsed.from_mask, parsed.to_square, parsed.promotion, text)


def resolve(pos: Position, piece: int, from_mask: int, to: int, promotion: int, text: str) -> int:
    """:func:`resolve_san` on the fields of a :class:`SanMove` (``text`` names the move in
    error messages)."""
    king = pos.king(pos.turn)
    checking = 0
    blockers = 0
    if king >= 0:
        checking = attackers(pos, not pos.turn, king, pos.occupied)
        blockers = pinned(pos, king, pos.turn)
    return resolve_known(pos, piece, from_mask, to, promotion, text, king, checking, blockers)


def resolve_known(pos: Position, piece: int, from_mask: int, to: int, promotion: int, text: str,
                  king: int, checking: int, blockers: int) -> int:
    """:func:`resolve` for a caller that knows the side to move's king square, checkers and
    pinned pieces (see :func:`chessscan.core.movegen.generate_known`)."""
    if cython.compiled:
        found = cython.declare(cython.int[256])
    else:
        found = [0] * MAX_MOVES
    us = pos.turn
    if piece < 0:
        if piece == NULL_PIECE:
            return 0
        if king < 0:
            raise IllegalMove(text, f"{text}: no king to castle")
        side = bit(king) - 1 if piece == CASTLE_A_SIDE else ~(bit(king) - 1)
        n = 0
        if not checking:
            n = castling(pos, king, side, found, 0)
        if n == 0:
            raise IllegalMove(text, f"{text} is illegal: castling is not possible here")
        if n > 1:
            raise AmbiguousMove(text, f"{text} is ambiguous")
        return found[0]
    to_bb = bit(to)
    if piece == PAWN and not from_mask & (from_mask - 1):
        # A full origin square without a piece letter (g1f3, e1g1): long algebraic / UCI, which
        # the import format tolerates (§8.2.2); the piece is the one standing there.
        frm = msb(from_mask)
        standing = pos.mailbox[frm]
        if standing and standing != PAWN and pos.occupied_co[us] >> frm & 1:
            if standing == KING and (pos.occupied_co[us] & pos.pieces[ROOK] & to_bb
                                     or (abs((to & 7) - (frm & 7)) == 2 and to >> 3 == frm >> 3
                                         and not pos.chess960)):
                n = 0
                if not checking:
                    n = castling(pos, frm, BB_ALL, found, 0)
                a_side = to < frm
                match = 0
                count = 0
                for i in range(n):
                    if (((found[i] >> 6) & 63) < frm) == a_side:
                        match = found[i]
                        count += 1
                if count == 1:
                    return match
                raise IllegalMove(text, f"{text} is illegal: castling is not possible here")
            piece = standing
    if pos.occupied_co[us] & to_bb:
        raise IllegalMove(text, f"{text} is illegal: {SQUARE_NAMES[to]} holds a piece of the side to move")
    origins = candidates(pos, piece, to) & from_mask
    if piece == PAWN:
        origins = _pawn_origins(origins, from_mask, to)
    if not origins:
        raise IllegalMove(text, f"{text} is illegal: no {_piece_name(piece)} can reach {SQUARE_NAMES[to]}")
    last_rank = (to >> 3) == (7 if us else 0)
    if piece == PAWN and last_rank != (promotion != 0):
        if last_rank:
            raise IllegalMove(text, f"{text} is illegal: a pawn reaching {SQUARE_NAMES[to]} must promote")
        raise IllegalMove(text, f"{text} is illegal: a pawn promotes only on the last rank")
    if (not checking and not origins & (origins - 1) and not origins & blockers and piece != KING
            and (promotion == 0 or (piece == PAWN and KNIGHT <= promotion <= QUEEN))
            and not (piece == PAWN and to == pos.ep and pos.ep != 0)):
        # One origin, not pinned, no check to answer, not the king, not en passant: the move
        # stands as named (what the search below would find, alone), most plies of a game.
        return lsb(origins) | (to << 6) | (promotion << 12)
    n = generate_known(pos, found, origins, to_bb, False, king, checking, blockers)
    match = 0
    count = 0
    for i in range(n):
        if found[i] >> 12 == promotion:
            if count == 0:
                match = found[i]
            count += 1
    if count == 1:
        return match
    if count == 0:
        if checking:
            raise IllegalMove(text, f"{text} is illegal: it does not answer the check")
        raise IllegalMove(text, f"{text} is illegal: it would leave the king in check")
    squares = ", ".join([SQUARE_NAMES[found[i] & 63] for i in range(n) if found[i] >> 12 == promotion])
    raise AmbiguousMove(text, f"{text} is ambiguous: pieces on {squares} can make it")


def resolve_quick(pos: Position, piece: int, from_mask: int, to: int, promotion: int, blockers: int,
                  checking: int) -> int:
    """The move :func:`resolve_known` returns for a move it takes as named with no search (one
    origin, not pinned, not the king, not en passant, and in check, to the one checker's
    square or between it and the king: most plies of a game), or for a king's step (the one
    king of the side to move, to a square no enemy piece attacks once the king has left its
    own: the test its search makes), else -1 (any other move, and every move it raises an
    error for). The same tests in the same order, with no
    text and no exception: a small function for the loop to try first."""
    if piece <= 0 or not 0 <= to < 64:
        return -1
    us = pos.turn
    to_bb = bit(to)
    if pos.occupied_co[us] & to_bb:
        return -1
    if piece == KING:
        return -1 if promotion else _king_step(pos, us, from_mask, to)
    if checking:
        # One checker: a move that captures it or blocks its line (generate_known's target);
        # the origin must then be unpinned (tested below), as no pinned piece can answer a
        # check. A double check leaves only king moves.
        if checking & (checking - 1):
            return -1
        king_bb = pos.pieces[KING] & pos.occupied_co[us]
        if not king_bb or king_bb & (king_bb - 1):
            return -1  # (no king, or more than one in a set-up position: left to the search)
        if not (T.between[msb(king_bb) * 64 + lsb(checking)] | checking) & to_bb:
            return -1
    if piece == PAWN:
        if not from_mask & (from_mask - 1) or (to == pos.ep and pos.ep != 0):
            return -1  # a UCI-like origin square (the piece standing there decides), or en passant
        if promotion and not KNIGHT <= promotion <= QUEEN:
            return -1
        if ((to >> 3) == (7 if us else 0)) != (promotion != 0):
            return -1
    elif promotion:
        return -1
    origins = candidates(pos, piece, to) & from_mask
    if piece == PAWN:
        origins = _pawn_origins(origins, from_mask, to)
    if not origins or origins & (origins - 1) or origins & blockers:
        return -1
    return lsb(origins) | (to << 6) | (promotion << 12)


def _king_step(pos: Position, us: bool, from_mask: int, to: int) -> int:
    """:func:`resolve_quick` for a king's step to ``to`` (not a square of the side to move,
    no promotion): the move when the side to move has one king, in ``from_mask``, next to
    ``to``, and no enemy piece attacks ``to`` once the king has left its square (the test of
    :func:`~chessscan.core.movegen.generate_known`, which finds no other move: a castling move
    goes to its rook's square); else -1. Apart so that the common path stays small."""
    king_bb = pos.pieces[KING] & pos.occupied_co[us]
    if not king_bb & T.king[to] & from_mask or king_bb & (king_bb - 1):
        return -1
    if attackers(pos, not us, to, pos.occupied ^ king_bb):
        return -1
    return lsb(king_bb) | (to << 6)


def _pawn_origins(origins: int, from_mask: int, to: int) -> int:
    """Of a pawn's ``origins`` (bitboard), those on the file the move names (PGN standard
    §8.2.3.3: a pawn capture names its origin file; without one the move is a push)."""
    to_file = BB_FILE_A << (to & 7)
    if from_mask == BB_ALL or from_mask & to_file:
        return origins & to_file
    return origins & ~to_file


def _piece_name(piece: int) -> str:
    return ("", "pawn", "knight", "bishop", "rook", "queen", "king")[piece]


def move_san(pos: Position, move: int, suffix: bool = True) -> str:
    """SAN text of legal ``move`` in ``pos`` (before it is played), with ``+``/``#``
    when ``suffix`` (PGN standard §8.2.3)."""
    frm, to = move & 63, (move >> 6) & 63
    pt = pos.mailbox[frm]
    if pos.is_castling(move):
        text = "O-O-O" if to < frm else "O-O"
    else:
        capture = bool(pos.occupied >> to & 1) or pos.is_en_passant(move)
        if pt == PAWN:
            text = (SQUARE_NAMES[frm][0] + "x" if capture else "") + SQUARE_NAMES[to]
            if move >> 12:
                text += "=" + PIECE_SYMBOLS[move >> 12].upper()
        else:
            others = [m for m in legal_moves(pos, candidates(pos, pt, to) & ~bit(frm), bit(to))
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
        if king >= 0 and attackers(after, not after.turn, king, after.occupied):
            text += "+" if has_legal_move(after) else "#"
    return text
