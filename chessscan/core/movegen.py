"""Legal move generation: pins, evasions, castling, en passant, promotions.

The shape is Stockfish's (chessprogramming wiki, "Move Generation" and "Checks and Pinned
Pieces"): find the checkers and the slider blockers (our pieces pinned to our king); when in
check generate evasions (king moves off the checking lines; for a single checker also
captures of it and interpositions); otherwise pseudo-legal moves, keeping a pinned piece on
its pin ray and a king off attacked squares. En passant, the one move that can expose the
king along a rank through two vacated squares, gets a full make-and-test.

Every generator takes ``from_mask`` / ``to_mask`` bitboards so one code path serves perft,
SAN resolution and legality tests. Squares 0..63 (a1 = 0); bitboards are ints of 64 bits.
"""

from __future__ import annotations

from typing import Iterator

from chessscan.core.attacks import (
    BETWEEN, BISHOP_PSEUDO, DIAG_ATTACKS, DIAG_MASKS, FILE_ATTACKS, FILE_MASKS, KING_ATTACKS,
    KNIGHT_ATTACKS, PAWN_ATTACKS, RANK_ATTACKS, RANK_MASKS, RAYS, ROOK_PSEUDO,
)
from chessscan.core.bitboard import BB_ALL, BB_RANK_1, BB_RANK_8, Bitboard
from chessscan.core.position import Move, Position
from chessscan.core.squares import BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK, Color, Square

PROMOTION_TYPES = (QUEEN, ROOK, BISHOP, KNIGHT)


def attackers_mask(pos: Position, color: Color, sq: Square, occupied: Bitboard | None = None) -> Bitboard:
    """Bitboard of ``color``'s pieces attacking square ``sq``.

    ``occupied`` overrides the blockers seen by sliders (e.g. the board without our king);
    the pieces themselves are taken from ``pos``.
    """
    if occupied is None:
        occupied = pos.occupied
    p = pos.pieces
    queens = p[QUEEN]
    return (
        (KNIGHT_ATTACKS[sq] & p[KNIGHT])
        | (KING_ATTACKS[sq] & p[KING])
        | (PAWN_ATTACKS[not color][sq] & p[PAWN])
        | ((FILE_ATTACKS[sq][FILE_MASKS[sq] & occupied] | RANK_ATTACKS[sq][RANK_MASKS[sq] & occupied])
           & (p[ROOK] | queens))
        | (DIAG_ATTACKS[sq][DIAG_MASKS[sq] & occupied] & (p[BISHOP] | queens))
    ) & pos.occupied_co[color]


def checkers(pos: Position) -> Bitboard:
    """Bitboard of the enemy pieces giving check to the side to move (0 if not in check)."""
    king = pos.king(pos.turn)
    if king < 0:
        return 0
    return attackers_mask(pos, not pos.turn, king)


def slider_blockers(pos: Position, king: Square, color: Color | None = None) -> Bitboard:
    """Pieces of ``color`` (default: the side to move) pinned to its king on ``king``: the
    single piece standing between the king and an enemy slider on a line."""
    if color is None:
        color = pos.turn
    p = pos.pieces
    queens = p[QUEEN]
    snipers = ((ROOK_PSEUDO[king] & (p[ROOK] | queens)) | (BISHOP_PSEUDO[king] & (p[BISHOP] | queens))) \
        & pos.occupied_co[not color]
    blockers = 0
    occupied = pos.occupied
    while snipers:
        low = snipers & -snipers
        b = BETWEEN[king][low.bit_length() - 1] & occupied
        if b and not b & (b - 1):
            blockers |= b
        snipers ^= low
    return blockers & pos.occupied_co[color]


def _ep_is_safe(pos: Position, frm: Square, ep: Square, king: Square) -> bool:
    """Full test of an en-passant capture: does it leave our king attacked?"""
    us = pos.turn
    cap_bb = 1 << (ep - 8 if us else ep + 8)
    occupied = (pos.occupied ^ (1 << frm) ^ cap_bb) | (1 << ep)
    return not (attackers_mask(pos, not us, king, occupied) & ~cap_bb)


def _king_target_safe(pos: Position, to: Square, king_bb: Bitboard) -> bool:
    return not attackers_mask(pos, not pos.turn, to, pos.occupied ^ king_bb)


def _castling_moves(pos: Position, king: Square, from_mask: Bitboard, to_mask: Bitboard) -> Iterator[Move]:
    """Castling (FIDE art. 3.8.2, Chess960 rules): king and rook end on c/d or g/f; every
    square either passes must be empty but for the two; the king must not be in check, pass
    through or land on an attacked square. Encoded king-onto-rook."""
    us = pos.turn
    backrank = BB_RANK_1 if us else BB_RANK_8
    king_bb = 1 << king
    if not (king_bb & backrank & from_mask):
        return
    candidates = pos.castling_rights & backrank & pos.occupied_co[us] & pos.pieces[ROOK] & to_mask
    rank = king & 56
    occupied = pos.occupied
    while candidates:
        low = candidates & -candidates
        candidates ^= low
        rook = low.bit_length() - 1
        if rook < king:
            k_to, r_to = rank + 2, rank + 3
        else:
            k_to, r_to = rank + 6, rank + 5
        k_to_bb, r_to_bb = 1 << k_to, 1 << r_to
        king_path = BETWEEN[king][k_to]
        rook_path = BETWEEN[rook][r_to]
        if (occupied ^ king_bb ^ low) & (king_path | rook_path | k_to_bb | r_to_bb):
            continue
        path = king_path | king_bb
        unsafe = False
        occ_wo_king = occupied ^ king_bb
        while path:
            sq_bb = path & -path
            path ^= sq_bb
            if attackers_mask(pos, not us, sq_bb.bit_length() - 1, occ_wo_king):
                unsafe = True
                break
        if unsafe:
            continue
        if attackers_mask(pos, not us, k_to, occupied ^ king_bb ^ low ^ r_to_bb):
            continue
        yield king | (rook << 6)


def iter_legal_moves(pos: Position, from_mask: Bitboard = BB_ALL, to_mask: Bitboard = BB_ALL) -> Iterator[Move]:
    """Yield every legal move whose from-square is in ``from_mask`` and to-square in
    ``to_mask`` (castling counts as the king moving to its rook's square).

    The order is: knights, bishops, rooks, queens, pawns, en passant, king, castling.
    Lazy, so ``next(...)`` decides whether any legal move exists.
    """
    us = pos.turn
    p = pos.pieces
    our = pos.occupied_co[us]
    their = pos.occupied_co[not us]
    occupied = pos.occupied
    king_bb = p[KING] & our
    king = king_bb.bit_length() - 1
    checking = attackers_mask(pos, not us, king) if king >= 0 else 0
    blockers = slider_blockers(pos, king) if king >= 0 else 0

    if checking:
        if checking & (checking - 1):
            target = 0  # double check: only the king may move
        else:
            target = BETWEEN[king][checking.bit_length() - 1] | checking
    else:
        target = BB_ALL
    to_ok = to_mask & ~our & target

    if to_ok:
        # Knights, bishops, rooks, queens.
        for pt in (KNIGHT, BISHOP, ROOK, QUEEN):
            movers = p[pt] & our & from_mask
            while movers:
                low = movers & -movers
                movers ^= low
                frm = low.bit_length() - 1
                if pt == KNIGHT:
                    att = KNIGHT_ATTACKS[frm]
                elif pt == BISHOP:
                    att = DIAG_ATTACKS[frm][DIAG_MASKS[frm] & occupied]
                elif pt == ROOK:
                    att = FILE_ATTACKS[frm][FILE_MASKS[frm] & occupied] | RANK_ATTACKS[frm][RANK_MASKS[frm] & occupied]
                else:
                    att = (DIAG_ATTACKS[frm][DIAG_MASKS[frm] & occupied]
                           | FILE_ATTACKS[frm][FILE_MASKS[frm] & occupied]
                           | RANK_ATTACKS[frm][RANK_MASKS[frm] & occupied])
                att &= to_ok
                if low & blockers:
                    att &= RAYS[king][frm]
                while att:
                    t = att & -att
                    att ^= t
                    yield frm | ((t.bit_length() - 1) << 6)

        # Pawns: captures, single and double pushes, promotions.
        pawns = p[PAWN] & our & from_mask
        last_rank = BB_RANK_8 if us else BB_RANK_1
        while pawns:
            low = pawns & -pawns
            pawns ^= low
            frm = low.bit_length() - 1
            att = PAWN_ATTACKS[us][frm] & their
            if us:
                one = frm + 8
                if not occupied >> one & 1:
                    att |= 1 << one
                    if frm < 16 and not occupied >> (frm + 16) & 1:
                        att |= 1 << (frm + 16)
            else:
                one = frm - 8
                if not occupied >> one & 1:
                    att |= 1 << one
                    if frm >= 48 and not occupied >> (frm - 16) & 1:
                        att |= 1 << (frm - 16)
            att &= to_ok
            if low & blockers:
                att &= RAYS[king][frm]
            while att:
                t = att & -att
                att ^= t
                to = t.bit_length() - 1
                if t & last_rank:
                    for promo in PROMOTION_TYPES:
                        yield frm | (to << 6) | (promo << 12)
                else:
                    yield frm | (to << 6)

    # En passant (the captured pawn may be the checker, so no target mask here).
    ep = pos.ep_square
    if ep is not None and to_mask >> ep & 1 and not occupied >> ep & 1 and king >= 0:
        capturers = PAWN_ATTACKS[not us][ep] & p[PAWN] & our & from_mask
        while capturers:
            low = capturers & -capturers
            capturers ^= low
            frm = low.bit_length() - 1
            if _ep_is_safe(pos, frm, ep, king):
                yield frm | (ep << 6)

    # King moves.
    if king >= 0 and king_bb & from_mask:
        att = KING_ATTACKS[king] & ~our & to_mask
        occ_wo_king = occupied ^ king_bb
        while att:
            t = att & -att
            att ^= t
            to = t.bit_length() - 1
            if not attackers_mask(pos, not us, to, occ_wo_king):
                yield king | (to << 6)
        if not checking:
            yield from _castling_moves(pos, king, from_mask, to_mask)


def legal_moves(pos: Position, from_mask: Bitboard = BB_ALL, to_mask: Bitboard = BB_ALL) -> list[Move]:
    """List of the legal moves of :func:`iter_legal_moves`."""
    return list(iter_legal_moves(pos, from_mask, to_mask))


def has_legal_move(pos: Position) -> bool:
    """True if the side to move has any legal move; stops at the first one found."""
    for _ in iter_legal_moves(pos):
        return True
    return False


def has_legal_en_passant(pos: Position) -> bool:
    """True if the side to move has a legal en-passant capture (FIDE art. 3.7.3.1)."""
    ep = pos.ep_square
    if ep is None:
        return False
    king = pos.king(pos.turn)
    capturers = PAWN_ATTACKS[not pos.turn][ep] & pos.pieces[PAWN] & pos.occupied_co[pos.turn]
    if king < 0 or not capturers or pos.occupied >> ep & 1:
        return False
    while capturers:
        low = capturers & -capturers
        capturers ^= low
        if _ep_is_safe(pos, low.bit_length() - 1, ep, king):
            return True
    return False


def is_legal(pos: Position, move: Move) -> bool:
    """True if ``move`` (an encoded move) is legal in ``pos``."""
    frm, to = move & 63, (move >> 6) & 63
    return move in legal_moves(pos, 1 << frm, 1 << to)


def perft(pos: Position, depth: int) -> int:
    """Number of leaf nodes of the legal move tree ``depth`` plies deep
    (chessprogramming wiki, "Perft"); bulk-counts at depth 1."""
    if depth <= 0:
        return 1
    moves = legal_moves(pos)
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        child = pos.copy()
        child.play(move)
        total += perft(child, depth - 1)
    return total


def divide(pos: Position, depth: int) -> dict[str, int]:
    """Perft node count below each legal move (UCI text -> nodes), ``depth`` >= 1."""
    out = {}
    for move in legal_moves(pos):
        child = pos.copy()
        child.play(move)
        out[pos.move_uci(move)] = perft(child, depth - 1)
    return out
