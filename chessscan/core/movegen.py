"""Legal move generation: pins, evasions, castling, en passant, promotions; perft.

The shape is Stockfish's (chessprogramming wiki, "Move Generation" and "Checks and Pinned
Pieces"): find the checkers and the slider blockers (our pieces pinned to our king); when in
check generate evasions (king moves off the checking lines; for a single checker also
captures of it and interpositions); otherwise pseudo-legal moves, keeping a pinned piece on
its pin ray and a king off attacked squares. En passant, the one move that can expose the
king along a rank through two vacated squares, gets a full make-and-test.

:func:`generate` writes the moves into a caller's buffer (a C array once compiled) and can
stop at the first one found; every generator takes ``from_mask`` / ``to_mask`` bitboards so
one code path serves perft, SAN resolution and legality tests. Squares 0..63 (a1 = 0);
bitboards are ints of 64 bits; moves are encoded as in :mod:`chessscan.core.position`.
"""

from __future__ import annotations

try:
    import cython
except ImportError:  # uncompiled, without Cython installed
    from chessscan.core import _cython_shim as cython

from chessscan.core.attacks import tables
from chessscan.core.position import Position

if cython.compiled:
    from cython.cimports.cpython.exc import PyErr_CheckSignals
else:
    from chessscan.core.attacks import bishop_attacks, rook_attacks
    from chessscan.core.bitboard import BB_ALL, BB_RANK_1, BB_RANK_8, bit, lsb, msb
    from chessscan.core.squares import BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK

T = tables()
#: Room for every legal move of any position (the most known is 218).
MAX_MOVES = 256


def attackers(pos: Position, color: bool, sq: int, occupied: int) -> int:
    """Bitboard of ``color``'s pieces attacking square ``sq``, sliders seeing ``occupied``
    as the blockers (the pieces themselves are taken from ``pos``). The per-ply loop
    (:func:`chessscan.analysis.plies.play_plies`) has this and :func:`pinned` written out for
    the side to move's king: a change here is made there too."""
    own = pos.occupied_co[color]
    queens = pos.pieces[QUEEN]
    found = ((T.knight[sq] & pos.pieces[KNIGHT])
             | (T.king[sq] & pos.pieces[KING])
             | (T.pawn[(not color) * 64 + sq] & pos.pieces[PAWN])) & own
    # A slider's line is only traced when one stands on it on an empty board (most calls:
    # none does), which gives the same bits for less work.
    sliders = (pos.pieces[ROOK] | queens) & own
    if sliders & T.rook_pseudo[sq]:
        found |= rook_attacks(sq, occupied) & sliders
    sliders = (pos.pieces[BISHOP] | queens) & own
    if sliders & T.bishop_pseudo[sq]:
        found |= bishop_attacks(sq, occupied) & sliders
    return found


def attackers_mask(pos: Position, color: bool, sq: int, occupied=None) -> int:
    """Bitboard of ``color``'s pieces attacking square ``sq`` (0..63).

    ``occupied`` overrides the blockers seen by sliders (e.g. the board without our king);
    the pieces themselves are taken from ``pos``.
    """
    return attackers(pos, color, sq, pos.occupied if occupied is None else occupied)


def checkers(pos: Position) -> int:
    """Bitboard of the enemy pieces giving check to the side to move (0 if not in check)."""
    king = pos.king(pos.turn)
    if king < 0:
        return 0
    return attackers(pos, not pos.turn, king, pos.occupied)


def pinned(pos: Position, king: int, color: bool) -> int:
    """Pieces of ``color`` pinned to its king on square ``king``: the single piece standing
    between the king and an enemy slider on a line (written out in the per-ply loop too: see
    :func:`attackers`)."""
    queens = pos.pieces[QUEEN]
    snipers = ((T.rook_pseudo[king] & (pos.pieces[ROOK] | queens))
               | (T.bishop_pseudo[king] & (pos.pieces[BISHOP] | queens))) & pos.occupied_co[not color]
    blockers = 0
    while snipers:
        b = T.between[king * 64 + lsb(snipers)] & pos.occupied
        if b and not b & (b - 1):
            blockers |= b
        snipers &= snipers - 1
    return blockers & pos.occupied_co[color]


def slider_blockers(pos: Position, king: int, color=None) -> int:
    """Pieces of ``color`` (default: the side to move) pinned to its king on ``king``."""
    return pinned(pos, king, pos.turn if color is None else color)


def ep_is_safe(pos: Position, frm: int, ep: int, king: int) -> bool:
    """Full test of an en-passant capture from ``frm`` to ``ep``: does it leave our king (on
    ``king``) unattacked?"""
    cap = bit(ep - 8) if pos.turn else bit(ep + 8)
    occupied = (pos.occupied ^ bit(frm) ^ cap) | bit(ep)
    return not (attackers(pos, not pos.turn, king, occupied) & ~cap)


def castling(pos: Position, king: int, to_mask: int, moves, n: int) -> int:
    """Append the legal castling moves of the side to move (king on ``king``, not in check:
    the caller's test) whose rook stands in ``to_mask`` to ``moves`` from index ``n``; return
    the new count. FIDE art. 3.8.2 and the Chess960 rules: king and rook end on c/d or g/f;
    every square either passes must be empty but for the two; the king must not pass through
    or land on an attacked square. Encoded king-onto-rook."""
    us = pos.turn
    backrank = BB_RANK_1 if us else BB_RANK_8
    if not bit(king) & backrank:
        return n
    candidates = pos.castling_rights & backrank & pos.occupied_co[us] & pos.pieces[ROOK] & to_mask
    rank = king & 56
    occupied = pos.occupied
    while candidates:
        rook = lsb(candidates)
        candidates &= candidates - 1
        if rook < king:
            k_to = rank + 2
            r_to = rank + 3
        else:
            k_to = rank + 6
            r_to = rank + 5
        if (occupied ^ bit(king) ^ bit(rook)) & (T.between[king * 64 + k_to] | T.between[rook * 64 + r_to]
                                                 | bit(k_to) | bit(r_to)):
            continue
        path = T.between[king * 64 + k_to] | bit(king)
        occ_wo_king = occupied ^ bit(king)
        safe = True
        while path:
            if attackers(pos, not us, lsb(path), occ_wo_king):
                safe = False
                break
            path &= path - 1
        if not safe:
            continue
        if attackers(pos, not us, k_to, occupied ^ bit(king) ^ bit(rook) ^ bit(r_to)):
            continue
        moves[n] = king | (rook << 6)
        n += 1
    return n


def generate(pos: Position, moves, from_mask: int, to_mask: int, first_only: bool) -> int:
    """Write the legal moves whose from-square is in ``from_mask`` and to-square in
    ``to_mask`` (castling counts as the king moving to its rook's square) to ``moves`` (room
    for :data:`MAX_MOVES`), in the order knights, bishops, rooks, queens, pawns (promotions
    as queen, rook, bishop, knight), en passant, king, castling; return how many.
    ``first_only`` stops after the first one (is there any legal move?)."""
    king = pos.king(pos.turn)
    checking = 0
    blockers = 0
    if king >= 0:
        checking = attackers(pos, not pos.turn, king, pos.occupied)
        blockers = pinned(pos, king, pos.turn)
    return generate_known(pos, moves, from_mask, to_mask, first_only, king, checking, blockers)


def generate_known(pos: Position, moves, from_mask: int, to_mask: int, first_only: bool, king: int,
                   checking: int, blockers: int) -> int:
    """:func:`generate` for a caller that knows the side to move's king square (-1: none),
    its ``checking`` pieces and its pinned pieces (``blockers``, see :func:`pinned`)."""
    us = pos.turn
    our = pos.occupied_co[us]
    their = pos.occupied_co[not us]
    occupied = pos.occupied
    n = 0
    king_bb = bit(king) if king >= 0 else 0

    if checking:
        if checking & (checking - 1):
            target = 0  # double check: only the king may move
        else:
            target = T.between[king * 64 + lsb(checking)] | checking
    else:
        target = BB_ALL
    to_ok = to_mask & ~our & target

    if to_ok:
        # Knights, bishops, rooks, queens.
        for pt in range(KNIGHT, KING):
            movers = pos.pieces[pt] & our & from_mask
            while movers:
                frm = lsb(movers)
                movers &= movers - 1
                if pt == KNIGHT:
                    att = T.knight[frm]
                elif pt == BISHOP:
                    att = bishop_attacks(frm, occupied)
                elif pt == ROOK:
                    att = rook_attacks(frm, occupied)
                else:
                    att = bishop_attacks(frm, occupied) | rook_attacks(frm, occupied)
                att &= to_ok
                if bit(frm) & blockers:
                    att &= T.rays[king * 64 + frm]
                while att:
                    moves[n] = frm | (lsb(att) << 6)
                    n += 1
                    if first_only:
                        return n
                    att &= att - 1

        # Pawns: captures, single and double pushes, promotions.
        pawns = pos.pieces[PAWN] & our & from_mask
        last_rank = BB_RANK_8 if us else BB_RANK_1
        while pawns:
            frm = lsb(pawns)
            pawns &= pawns - 1
            att = T.pawn[us * 64 + frm] & their
            if us:
                one = frm + 8
                if not occupied >> one & 1:
                    att |= bit(one)
                    if frm < 16 and not occupied >> (frm + 16) & 1:
                        att |= bit(frm + 16)
            else:
                one = frm - 8
                if not occupied >> one & 1:
                    att |= bit(one)
                    if frm >= 48 and not occupied >> (frm - 16) & 1:
                        att |= bit(frm - 16)
            att &= to_ok
            if bit(frm) & blockers:
                att &= T.rays[king * 64 + frm]
            while att:
                to = lsb(att)
                att &= att - 1
                if bit(to) & last_rank:  # promotions: queen, rook, bishop, knight
                    moves[n] = frm | (to << 6) | (QUEEN << 12)
                    moves[n + 1] = frm | (to << 6) | (ROOK << 12)
                    moves[n + 2] = frm | (to << 6) | (BISHOP << 12)
                    moves[n + 3] = frm | (to << 6) | (KNIGHT << 12)
                    n += 4
                else:
                    moves[n] = frm | (to << 6)
                    n += 1
                if first_only:
                    return n

    # En passant (the captured pawn may be the checker, so no target mask here).
    ep = pos.ep
    if ep and to_mask >> ep & 1 and not occupied >> ep & 1 and king >= 0:
        capturers = T.pawn[(not us) * 64 + ep] & pos.pieces[PAWN] & our & from_mask
        while capturers:
            frm = lsb(capturers)
            capturers &= capturers - 1
            if ep_is_safe(pos, frm, ep, king):
                moves[n] = frm | (ep << 6)
                n += 1
                if first_only:
                    return n

    # King moves.
    if king >= 0 and king_bb & from_mask:
        att = T.king[king] & ~our & to_mask
        occ_wo_king = occupied ^ king_bb
        while att:
            to = lsb(att)
            att &= att - 1
            if not attackers(pos, not us, to, occ_wo_king):
                moves[n] = king | (to << 6)
                n += 1
                if first_only:
                    return n
        if not checking:
            n = castling(pos, king, to_mask, moves, n)
    return n


def legal_moves(pos: Position, from_mask: int = BB_ALL, to_mask: int = BB_ALL) -> list:
    """List of the legal moves (encoded ints) whose from-square is in ``from_mask`` and
    to-square in ``to_mask``, in :func:`generate`'s order."""
    if cython.compiled:
        moves = cython.declare(cython.int[256])
    else:
        moves = [0] * MAX_MOVES
    n = generate(pos, moves, from_mask, to_mask, False)
    return [moves[i] for i in range(n)]


def iter_legal_moves(pos: Position, from_mask: int = BB_ALL, to_mask: int = BB_ALL):
    """Iterator over :func:`legal_moves`."""
    return iter(legal_moves(pos, from_mask, to_mask))


def has_legal_move(pos: Position) -> bool:
    """True if the side to move has any legal move; stops at the first one found."""
    if cython.compiled:
        moves = cython.declare(cython.int[256])
    else:
        moves = [0] * MAX_MOVES
    return generate(pos, moves, BB_ALL, BB_ALL, True) > 0


def has_legal_move_known(pos: Position, king: int, checking: int, blockers: int) -> bool:
    """:func:`has_legal_move` for a caller that knows the king, checkers and pinned pieces
    (see :func:`generate_known`)."""
    if not checking and king >= 0:
        # Out of check, a pawn that is not pinned and has an empty square ahead can push (the
        # push exposes nothing): most positions are settled here, with no generation.
        us = pos.turn
        pawns = pos.pieces[PAWN] & pos.occupied_co[us] & ~blockers
        if ((pawns << 8) if us else (pawns >> 8)) & ~pos.occupied & BB_ALL:
            return True
    elif checking and king >= 0:
        # In check, the king's steps first (most checks leave one): generate_known's test of
        # them, before it generates the other pieces' moves.
        us = pos.turn
        steps = T.king[king] & ~pos.occupied_co[us]
        occupied = pos.occupied ^ bit(king)
        while steps:
            if not attackers(pos, not us, lsb(steps), occupied):
                return True
            steps &= steps - 1
    if cython.compiled:
        moves = cython.declare(cython.int[256])
    else:
        moves = [0] * MAX_MOVES
    return generate_known(pos, moves, BB_ALL, BB_ALL, True, king, checking, blockers) > 0


def has_legal_en_passant(pos: Position) -> bool:
    """True if the side to move has a legal en-passant capture (FIDE art. 3.7.3.1)."""
    ep = pos.ep
    if not ep:
        return False
    king = pos.king(pos.turn)
    capturers = T.pawn[(not pos.turn) * 64 + ep] & pos.pieces[PAWN] & pos.occupied_co[pos.turn]
    if king < 0 or not capturers or pos.occupied >> ep & 1:
        return False
    while capturers:
        if ep_is_safe(pos, lsb(capturers), ep, king):
            return True
        capturers &= capturers - 1
    return False


def is_legal(pos: Position, move: int) -> bool:
    """True if ``move`` (an encoded move) is legal in ``pos``."""
    return move in legal_moves(pos, bit(move & 63), bit((move >> 6) & 63))


def perft(pos: Position, depth: int) -> int:
    """Number of leaf nodes of the legal move tree ``depth`` plies deep
    (chessprogramming wiki, "Perft"); bulk-counts at depth 1."""
    if cython.compiled:
        moves = cython.declare(cython.int[256])
    else:
        moves = [0] * MAX_MOVES
    if depth <= 0:
        return 1
    n = generate(pos, moves, BB_ALL, BB_ALL, False)
    if depth == 1:
        return n
    if cython.compiled and depth >= 3:
        # A deep count runs minutes in C, where Python runs no signal handler: let Ctrl-C
        # and SIGTERM in (raising what their handler raises) every few hundred nodes.
        PyErr_CheckSignals()
    total = 0
    for i in range(n):
        child = pos.copy()
        child.play(moves[i])
        total += perft(child, depth - 1)
    return total


def divide(pos: Position, depth: int) -> dict:
    """Perft node count below each legal move (UCI text -> nodes), ``depth`` >= 1."""
    out = {}
    for move in legal_moves(pos):
        child = pos.copy()
        child.play(move)
        out[pos.move_uci(move)] = perft(child, depth - 1)
    return out
