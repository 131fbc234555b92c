"""The per-ply hot loop: play a game's SAN tokens and tag every position.

This is the one place written for CPython speed rather than for reading: the position's
lists and tables are bound to local variables, and the common cases take shortcuts whose
rules are stated here and checked against the plain core API by the cross-check and the tests
(``tests/test_analyze.py``, ``tests/test_hotloop.py``):

- SAN: the parse is cached (:func:`chessscan.core.san.parse_san`). For a piece move or a pawn
  push/capture (not castling, not en passant) the origin is found through the attack tables;
  a single candidate is legal unless it stands on a line through its own king and leaves
  that line while an enemy slider then attacks the king (the pin test runs only then). A
  king move is legal when its square is not attacked with the king lifted off the board.
  In check, a non-king move must land on the checking line (the checker's square or between
  it and the king; in double check only the king may move). Everything else — several
  candidates, castling, en passant, errors — goes through
  :func:`chessscan.core.san.resolve_san`.
- Check: after a move, the only possible checkers are the piece that arrived (the moved or
  promoted piece, or the castling rook) and our sliders standing behind a square the move
  vacated (its from-square, the en-passant victim's square, the castling rook's square) on
  a line through the enemy king. Only those are tested, never all the enemy's attackers.
- Stalemate: when not in check, a pawn that can push or a knight with a free square proves a
  legal move exists if it is not pinned (first tried without computing pins: a piece on no
  queen line through its king cannot be pinned); otherwise
  :func:`chessscan.core.movegen.has_legal_move` decides. Checkmate always uses the evasion
  generator.
"""

from __future__ import annotations

from chessscan.core.attacks import (
    BETWEEN, BISHOP_PSEUDO, DIAG_ATTACKS, DIAG_MASKS, FILE_ATTACKS, FILE_MASKS, KING_ATTACKS, KNIGHT_ATTACKS,
    PAWN_ATTACKS, RANK_ATTACKS, RANK_MASKS, RAYS, ROOK_PSEUDO,
)
from chessscan.core.bitboard import BB_ALL, BB_FILES
from chessscan.core.checks import DIRECT, DISCOVERED, DOUBLE, NONE, square_list
from chessscan.core.movegen import attackers_mask, has_legal_en_passant, has_legal_move, slider_blockers
from chessscan.core.position import Position
from chessscan.core.rules import SEVENTYFIVE_MOVES_PLIES, is_insufficient_material
from chessscan.core.san import _cache as SAN_CACHE
from chessscan.core.san import NULL, IllegalMove, SanError, parse_san, resolve_san
from chessscan.core.squares import BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK, SQUARE_NAMES
from chessscan.core.zobrist import EP_KEYS, MASK64, ep_key

QUEEN_PSEUDO = tuple(BISHOP_PSEUDO[sq] | ROOK_PSEUDO[sq] for sq in range(64))
_CASTLE_MIX = 0x9E3779B97F4A7C15  # as chessscan.core.zobrist.repetition_key
_UCI: dict[int, str] = {}
COLOR_NAMES = ("black", "white")


def _uci(move: int) -> str:
    text = SQUARE_NAMES[move & 63] + SQUARE_NAMES[(move >> 6) & 63]
    if move >> 12:
        text += " pnbrqk"[move >> 12]
    _UCI[move] = text
    return text


def play_plies(raw, pos: Position, tables, options, tally, state, add_issue) -> None:
    """Play ``raw.sans`` from ``pos`` (mutated), appending ``positions`` rows (as
    ``options.positions`` says) and issues, and filling ``state`` (a GameState): plies,
    outcome, winner, error, check counts, repetition keys, checks given."""
    source, gi = raw.source, raw.index
    issues = tables["issues"]
    rows = tables["positions"]
    keep = options.positions
    keep_all = keep == "all"
    keep_checks = keep == "checks"
    want_fen = options.fen
    a_ply, a_mn = rows["ply"].append, rows["move_number"].append
    a_color, a_san, a_uci = rows["color"].append, rows["san"].append, rows["uci"].append
    a_check, a_kind, a_checkers = rows["in_check"].append, rows["check_kind"].append, rows["checkers"].append
    a_ep, a_castle, a_promo = (rows["by_en_passant"].append, rows["by_castling"].append,
                               rows["by_promotion"].append)
    a_mate, a_stale, a_clock = (rows["is_checkmate"].append, rows["is_stalemate"].append,
                                rows["halfmove_clock"].append)
    a_zob, a_rep = rows["zobrist"].append, rows["repetition"].append
    a_fen = rows["fen"].append if want_fen else None
    rows_before = len(rows["ply"])
    keys_append = state.keys.append
    checks_append = state.gave_check.append
    counts = state.counts
    uci_cache = _UCI
    san_cache = SAN_CACHE

    occ_co = pos.occupied_co
    pieces = pos.pieces
    mailbox = pos.mailbox
    play = pos.play
    state.white_first = pos.turn
    # Repetition counts since the last irreversible move (earlier positions cannot recur).
    seen: dict[int, int] = {}
    ep0 = pos.ep_square
    key = pos.key ^ ((pos.castling_rights * _CASTLE_MIX) & MASK64)
    if ep0 is not None and has_legal_en_passant(pos):
        key ^= EP_KEYS[pos.ep_square & 7]
    seen[key] = 1
    keys_append(key)
    ended = _start_status(pos)
    ended_ply = 0 if ended else None
    warned_after_end = False
    us = pos.turn
    own_king = (pieces[KING] & occ_co[us]).bit_length() - 1
    checking = attackers_mask(pos, not us, own_king) if own_king >= 0 else 0
    mate = stale = False
    plies = 0
    sans = raw.sans
    for i, san in enumerate(sans):
        if ended is not None:
            if ended == "checkmate" or ended == "stalemate":
                line, col = raw.locate(i)
                add_issue(issues, tally, source, gi, line, col, i + 1, "warning", "moves-after-end",
                          f"{len(sans) - i} move(s) after the {ended}: {san} ... not played", san)
                break
            if not warned_after_end:
                warned_after_end = True
                line, col = raw.locate(i)
                add_issue(issues, tally, source, gi, line, col, i + 1, "warning", "moves-after-end",
                          f"the game ended automatically by {ended.replace('_', ' ')} at ply {ended_ply}; "
                          f"play goes on from {san}", san)
        them = not us
        move = -1
        try:
            parsed = san_cache.get(san) or parse_san(san)
            piece, from_mask, to, promotion, suffix = parsed
            if checking:
                # In check: a king move, or a single check answered on the checking line.
                if piece == KING:
                    evasion = BB_ALL
                elif piece > 0 and not checking & (checking - 1):
                    evasion = BETWEEN[own_king][checking.bit_length() - 1] | checking
                else:
                    evasion = 0
            else:
                evasion = BB_ALL
            if piece > 0 and evasion >> to & 1:
                # Fast path: resolve through the attack tables (module doc).
                to_bb = 1 << to
                our = occ_co[us]
                occ = our | occ_co[them]
                if not our & to_bb:
                    if piece == PAWN:
                        cands = 0
                        if from_mask == BB_ALL or from_mask & BB_FILES[to & 7]:
                            if not occ & to_bb:
                                one = to - 8 if us else to + 8
                                if 0 <= one < 64:
                                    if (pieces[PAWN] & our) >> one & 1:
                                        cands = 1 << one
                                    elif not occ >> one & 1 and (to >> 3) == (3 if us else 4):
                                        cands = pieces[PAWN] & our & (1 << (to - 16 if us else to + 16))
                            cands &= from_mask
                        elif occ_co[them] & to_bb:
                            # (an en-passant capture never lands on an enemy piece: slow path)
                            cands = PAWN_ATTACKS[them][to] & pieces[PAWN] & our & from_mask
                        if cands and ((to >> 3) in (0, 7)) != bool(promotion):
                            cands = 0  # promotion missing or misplaced: let resolve_san explain
                    elif piece == KNIGHT:
                        cands = KNIGHT_ATTACKS[to] & pieces[KNIGHT] & our & from_mask
                    elif piece == BISHOP:
                        cands = DIAG_ATTACKS[to][DIAG_MASKS[to] & occ] & pieces[BISHOP] & our & from_mask
                    elif piece == ROOK:
                        cands = (FILE_ATTACKS[to][FILE_MASKS[to] & occ] | RANK_ATTACKS[to][RANK_MASKS[to] & occ]) \
                            & pieces[ROOK] & our & from_mask
                    elif piece == QUEEN:
                        cands = (DIAG_ATTACKS[to][DIAG_MASKS[to] & occ] | FILE_ATTACKS[to][FILE_MASKS[to] & occ]
                                 | RANK_ATTACKS[to][RANK_MASKS[to] & occ]) & pieces[QUEEN] & our & from_mask
                    else:
                        cands = KING_ATTACKS[to] & pieces[KING] & our & from_mask
                        if cands and attackers_mask(pos, them, to, occ ^ cands):
                            cands = 0
                    if cands and not cands & (cands - 1):
                        frm = cands.bit_length() - 1
                        line_bb = RAYS[own_king][frm] if piece != KING else 0
                        if line_bb and not line_bb & to_bb:
                            # Pin test: after the move, does an enemy slider see our king?
                            occ2 = (occ ^ cands) | to_bb
                            their = occ_co[them] & ~to_bb
                            queens = pieces[QUEEN]
                            if ((DIAG_ATTACKS[own_king][DIAG_MASKS[own_king] & occ2] & (pieces[BISHOP] | queens))
                                    | ((FILE_ATTACKS[own_king][FILE_MASKS[own_king] & occ2]
                                        | RANK_ATTACKS[own_king][RANK_MASKS[own_king] & occ2])
                                       & (pieces[ROOK] | queens))) & their:
                                frm = -1
                        if frm >= 0:
                            move = frm | (to << 6) | (promotion << 12)
            if move < 0:
                if piece == NULL:
                    if checking:
                        raise IllegalMove(san, f"{san} is illegal: a null move leaves the king in check")
                    add_issue(issues, tally, source, gi, *raw.locate(i), i + 1, "warning", "null-move",
                              f"null move {san!r} played as a pass", san)
                    move = 0
                else:
                    move = resolve_san(pos, parsed, san)
            if piece == PAWN and from_mask != BB_ALL and not from_mask & (from_mask - 1):
                add_issue(issues, tally, source, gi, *raw.locate(i), i + 1, "warning", "uci-move",
                          f"{san!r} names its origin square without a piece letter "
                          f"(long algebraic / UCI), not SAN", san)
        except SanError as exc:
            line, col = raw.locate(i)
            number = f"{pos.fullmove_number}{'.' if us else '...'}"
            add_issue(issues, tally, source, gi, line, col, i + 1, "error", exc.code,
                      f"{number}{exc} [FEN before the move: {pos.fen()}]", san)
            state.error = (exc.code, i + 1)
            break
        move_number = pos.fullmove_number
        if move:
            frm, to = move & 63, (move >> 6) & 63
            pt = mailbox[frm]
            vacated = 1 << frm
            castling = en_passant = False
            if pt == KING and occ_co[us] >> to & 1:
                castling = True
                dest = (frm & 56) + (3 if to < frm else 5)  # the rook's square
                vacated |= 1 << to
                uci = pos.move_uci(move)
            else:
                dest = to
                if pt == PAWN and to == pos.ep_square and (to - frm) & 7:
                    en_passant = True
                    vacated |= 1 << (to - 8 if us else to + 8)
                uci = uci_cache.get(move) or _uci(move)
            play(move)
        else:
            castling = en_passant = False
            vacated = 0
            dest = -1
            uci = "0000"
            pos.play_null()
        plies += 1
        # The side to move is now ``them``. Checks (module doc): the piece that arrived on
        # ``dest``, and our sliders behind a vacated square on a line through their king.
        own_king = (pieces[KING] & occ_co[them]).bit_length() - 1
        checking = 0
        if own_king >= 0:
            king_bb = 1 << own_king
            occ = occ_co[0] | occ_co[1]
            if dest >= 0:
                arrived_pt = mailbox[dest]
                if arrived_pt == PAWN:
                    hit = PAWN_ATTACKS[us][dest] & king_bb
                elif arrived_pt == KNIGHT:
                    hit = KNIGHT_ATTACKS[dest] & king_bb
                elif arrived_pt == BISHOP:
                    hit = BISHOP_PSEUDO[dest] & king_bb and DIAG_ATTACKS[dest][DIAG_MASKS[dest] & occ] & king_bb
                elif arrived_pt == ROOK:
                    hit = ROOK_PSEUDO[dest] & king_bb and (
                        FILE_ATTACKS[dest][FILE_MASKS[dest] & occ] | RANK_ATTACKS[dest][RANK_MASKS[dest] & occ]) & king_bb
                elif arrived_pt == QUEEN:
                    hit = QUEEN_PSEUDO[dest] & king_bb and (
                        DIAG_ATTACKS[dest][DIAG_MASKS[dest] & occ] | FILE_ATTACKS[dest][FILE_MASKS[dest] & occ]
                        | RANK_ATTACKS[dest][RANK_MASKS[dest] & occ]) & king_bb
                else:
                    hit = 0
                if hit:
                    checking = 1 << dest
            opened = vacated & QUEEN_PSEUDO[own_king]
            while opened:
                low = opened & -opened
                opened ^= low
                line = RAYS[own_king][low.bit_length() - 1]
                if line & ROOK_PSEUDO[own_king]:
                    checking |= (FILE_ATTACKS[own_king][FILE_MASKS[own_king] & occ]
                                 | RANK_ATTACKS[own_king][RANK_MASKS[own_king] & occ]) \
                        & line & (pieces[ROOK] | pieces[QUEEN]) & occ_co[us]
                else:
                    checking |= DIAG_ATTACKS[own_king][DIAG_MASKS[own_king] & occ] \
                        & line & (pieces[BISHOP] | pieces[QUEEN]) & occ_co[us]
        arrived = 1 << dest if dest >= 0 else 0
        if checking:
            if checking & (checking - 1):
                kind = DOUBLE
            elif checking & arrived:
                kind = DIRECT
            else:
                kind = DISCOVERED
            counts[kind] += 1
            if en_passant or promotion:
                counts["special"] += 1
            mate = not has_legal_move(pos)
            stale = False
        else:
            kind = NONE
            mate = False
            # Sufficient conditions for a legal move (module doc), else the full test.
            mine = occ_co[them]
            empty = ~(occ_co[0] | occ_co[1])
            pawns = pieces[PAWN] & mine
            if them:
                pushers = ((pawns << 8) & empty) >> 8
            else:
                pushers = ((pawns >> 8) & empty) << 8
            lines = QUEEN_PSEUDO[own_king] if own_king >= 0 else BB_ALL
            if pushers & ~lines:
                stale = False
            else:
                knights = pieces[KNIGHT] & mine
                movers = 0
                while knights:
                    low = knights & -knights
                    if KNIGHT_ATTACKS[low.bit_length() - 1] & ~mine:
                        movers |= low
                    knights ^= low
                if movers & ~lines:
                    stale = False
                elif (pushers | movers) & ~slider_blockers(pos, own_king, them):
                    stale = False  # an unpinned pawn push or knight move
                else:
                    stale = not has_legal_move(pos)
        ep = pos.ep_square
        zobrist = pos.key
        key = zobrist ^ ((pos.castling_rights * _CASTLE_MIX) & MASK64)
        if ep is not None:
            zobrist ^= ep_key(pos)
            if has_legal_en_passant(pos):
                key ^= EP_KEYS[pos.ep_square & 7]
        clock = pos.halfmove_clock
        if clock == 0:
            seen.clear()
        rep = seen.get(key, 0) + 1
        seen[key] = rep
        keys_append(key)
        checks_append(bool(checking))
        if rep > 1:
            state.repeated = True
        if ended is None:
            if mate:
                ended = "checkmate"
                state.winner = COLOR_NAMES[us]
            elif stale:
                ended = "stalemate"
            elif clock == 0 and not pieces[PAWN] and is_insufficient_material(pos):
                ended = "insufficient_material"
            elif clock >= SEVENTYFIVE_MOVES_PLIES:
                ended = "seventyfive_moves"
            elif rep >= 5:
                ended = "fivefold_repetition"
            if ended is not None:
                ended_ply = plies
        if suffix or mate:
            problem = _suffix_problem(suffix, checking, mate)
            if problem:
                line, col = raw.locate(i)
                add_issue(issues, tally, source, gi, line, col, plies, "warning", "suffix-mismatch",
                          f"{move_number}{'.' if us else '...'}{san}: {problem}", san)
        if keep_all or (keep_checks and checking):
            a_ply(plies)
            a_mn(move_number)
            a_color(COLOR_NAMES[us])
            a_san(san)
            a_uci(uci)
            if checking:
                a_check(True)
                a_kind(kind)
                a_checkers(square_list(checking))
                a_ep(en_passant)
                a_castle(castling)
                a_promo(bool(promotion))
            else:
                a_check(False)
                a_kind(NONE)
                a_checkers("")
                a_ep(False)
                a_castle(False)
                a_promo(False)
            a_mate(mate)
            a_stale(stale)
            a_clock(clock)
            a_zob(zobrist)
            a_rep(rep)
            if a_fen is not None:
                a_fen(pos.fen())
        us = them
    added = len(rows["ply"]) - rows_before
    if added:
        rows["source"].extend([source] * added)
        rows["game_index"].extend([gi] * added)
    state.plies = plies
    state.final_repetition = seen.get(state.keys[-1], 0)
    state.final_clock = pos.halfmove_clock
    state.ended = ended


def _suffix_problem(suffix: str, checking: int, mate: bool) -> str | None:
    """What is wrong with a written ``+``/``#`` (PGN standard §8.2.3.7), or None."""
    if suffix == "#" and not mate:
        return "it is written as mate but is " + ("only check" if checking else "not check")
    if suffix == "+" and not checking:
        return "it is written as check but does not give check"
    if mate and suffix != "#":
        return "it mates but is written without '#'"
    return None


def _start_status(pos: Position) -> str | None:
    """Automatic end already true of a start position (FEN setups): mate, stalemate, dead
    position or the seventy-five-move count."""
    if not has_legal_move(pos):
        king = pos.king(pos.turn)
        return "checkmate" if attackers_mask(pos, not pos.turn, king) else "stalemate"
    if is_insufficient_material(pos):
        return "insufficient_material"
    if pos.halfmove_clock >= SEVENTYFIVE_MOVES_PLIES:
        return "seventyfive_moves"
    return None
