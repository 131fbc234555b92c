"""The per-ply hot loop: play a game's SAN tokens and tag every position.

This is the one place written for CPython speed rather than for reading. The position's
bitboard and mailbox lists are mutated in place; its scalars (side to move, castling rights,
en-passant square, clocks, key) live in local variables and are written back to the
:class:`~chessscan.core.position.Position` (``_sync``) only before a call into the general
core API. The common cases take shortcuts whose rules are stated here and checked against
the plain core API by the cross-check and the tests (``tests/test_hotloop.py``,
``tests/test_analyze.py``, ``tests/test_crosscheck.py``):

- SAN: the parse is cached per token (``_token``: :func:`chessscan.core.san.parse_san`'s
  fields and what the text alone decides — the destination bitboard, a promotion missing or
  misplaced, a pawn move naming its origin square). For a piece move or a pawn
  push/capture (not castling, not en passant) the origin is found through the attack tables;
  a single candidate is legal unless it stands on a line through its own king and leaves
  that line while an enemy slider then attacks the king (the pin test runs only then, and
  only with an enemy bishop, rook or queen on that line). A
  king move is legal when its square is not attacked with the king lifted off the board.
  In check, a non-king move must land on the checking line (the checker's square or between
  it and the king; in double check only the king may move). Castling from the standard
  setup (king on the e-file, rook in its corner) is checked directly (FIDE art. 3.8.2).
  Everything else — several candidates, Chess960 castling, en passant, errors — goes
  through :func:`chessscan.core.san.resolve_san`.
- The move is made inline, as :meth:`Position.play` makes it (FIDE art. 3.8.2.1 for castling
  rights); the Zobrist key is updated incrementally. Castling and null moves, which are rare,
  are left to :meth:`Position.play` and :meth:`Position.play_null`.
- Check: only a move that changed a square on a queen line through the enemy king or a
  knight's jump from it can give check. Then the only possible checkers are the piece that
  arrived (the moved or promoted piece, or the castling rook) and our sliders standing behind
  a square the move vacated (its from-square, the en-passant victim's square, the castling
  rook's square) on a line through the enemy king. Only those are tested, a line's attack
  lookup only when one of our sliders of its kind stands on it.
- Mate and stalemate: a position followed by a legal move is neither. The full test
  (:func:`chessscan.core.movegen.has_legal_move`) runs only for a game's last position and
  when the next token is not a legal move (an error or a null move, which proves nothing),
  or an automatic end was reached on the same ply (mate and stalemate rank before it). A
  written ``+``/``#`` is checked once the answer is known.
- Rows: the positions columns that follow from the ply number or are rarely set (move number,
  colour, check columns, mate, stalemate, repetition) are written once per game in bulk and
  patched at the plies where they differ from the default.
"""

from __future__ import annotations

from chessscan.core.attacks import (
    BETWEEN, BISHOP_PSEUDO, DIAG_ATTACKS, DIAG_MASKS, FILE_ATTACKS, FILE_MASKS, KING_ATTACKS, KNIGHT_ATTACKS,
    PAWN_ATTACKS, RANK_ATTACKS, RANK_MASKS, RAYS, ROOK_PSEUDO,
)
from chessscan.core.bitboard import BB_ALL, BB_FILES, BB_RANK_1, BB_RANK_8
from chessscan.core.checks import DIRECT, DISCOVERED, DOUBLE, NONE, square_list
from chessscan.core.movegen import attackers_mask, has_legal_en_passant, has_legal_move
from chessscan.core.position import Position
from chessscan.core.rules import SEVENTYFIVE_MOVES_PLIES, is_insufficient_material
from chessscan.core.san import CASTLE_A_SIDE, CASTLE_H_SIDE, NULL, IllegalMove, SanError, parse_san, resolve_san
from chessscan.core.squares import BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK, SQUARE_NAMES
from chessscan.core.zobrist import EP_KEYS, MASK64, PIECE_KEYS, TURN_KEY, castling_key

QUEEN_PSEUDO = tuple(BISHOP_PSEUDO[sq] | ROOK_PSEUDO[sq] for sq in range(64))
# Squares from which a piece can attack ``sq``: its queen lines and knight jumps.
CHECK_ZONE = tuple(QUEEN_PSEUDO[sq] | KNIGHT_ATTACKS[sq] for sq in range(64))
_CASTLE_MIX = 0x9E3779B97F4A7C15  # as chessscan.core.zobrist.repetition_key
UCI_FROM_TO = tuple(tuple(SQUARE_NAMES[frm] + SQUARE_NAMES[to] for to in range(64)) for frm in range(64))
PIECE_LETTERS = " pnbrqk"
COLOR_NAMES = ("black", "white")

# Bulk columns for games up to _BULK plies (longer games build theirs element by element).
_BULK = 1024
_COLORS = (["black", "white"] * (_BULK // 2), ["white", "black"] * (_BULK // 2))  # [white_first]
_MOVE_NUMBERS = ([1 + k // 2 for k in range(1, _BULK + 1)],   # black moves first from move 1
                 [1 + k // 2 for k in range(_BULK)])          # white moves first from move 1


# The hot loop's view of a SAN token, cached per token text (bounded like parse_san's cache).
_TOKENS: dict[str, tuple] = {}
_TOKENS_MAX = 100_000


def _token(san: str) -> tuple:
    """``(piece, from_mask, to, to_bb, promotion, suffix, uci_like)`` for the hot loop:
    :func:`~chessscan.core.san.parse_san`'s fields, ``to_bb`` the destination bitboard (0 for
    castling and null moves), ``uci_like`` whether a pawn move names its origin square. A
    pawn move with its promotion missing or misplaced (PGN standard §8.2.3.3) gets piece 0:
    never the fast path, and :func:`~chessscan.core.san.resolve_san` explains the error.
    Raises :class:`~chessscan.core.san.InvalidSan` as ``parse_san`` does."""
    piece, from_mask, to, promotion, suffix = parse_san(san)
    uci_like = False
    if piece == PAWN:
        uci_like = from_mask != BB_ALL and not from_mask & (from_mask - 1)
        if (to >> 3 in (0, 7)) != bool(promotion):
            piece = 0
    token = (piece, from_mask, to, 1 << to if to >= 0 else 0, promotion, suffix, uci_like)
    if len(_TOKENS) < _TOKENS_MAX:
        _TOKENS[san] = token
    return token


def _sync(pos: Position, us: bool, rights: int, ep: int, clock: int, fullmove: int, key: int) -> None:
    """Write the hot loop's scalars back to ``pos`` (``ep`` 0 = none: a1 is never one)."""
    occ_co = pos.occupied_co
    pos.occupied = occ_co[0] | occ_co[1]
    pos.turn = us
    pos.castling_rights = rights
    pos.ep_square = ep or None
    pos.halfmove_clock = clock
    pos.fullmove_number = fullmove
    pos.key = key


def _standard_castling(pos: Position, rights: int, king: int, color: bool, h_side: bool) -> int:
    """The rook's square (0..63) if ``color`` may castle on that side from the standard setup
    — king on the e-file, rook in its corner with the right kept (``rights``: the castling
    rights bitboard), the squares between them empty, the king not passing or landing on an
    attacked square (FIDE art. 3.8.2; the caller has checked the king is not in check) — else
    -1: the caller then resolves the move in full (Chess960 layouts too)."""
    rank = 0 if color else 56
    if king != rank + 4:
        return -1
    rook = rank + 7 if h_side else rank
    occ_co = pos.occupied_co
    if not rights >> rook & 1 or not pos.pieces[ROOK] & occ_co[color] >> rook & 1:
        return -1
    occ = occ_co[0] | occ_co[1]
    if occ & ((0x60 if h_side else 0x0E) << rank):
        return -1
    for sq in (rank + 5, rank + 6) if h_side else (rank + 3, rank + 2):
        if attackers_mask(pos, not color, sq, occ):
            return -1
    return rook


def play_plies(raw, pos: Position, tables, options, tally, state, add_issue) -> None:
    """Play ``raw.sans`` from ``pos`` (mutated; in sync with the last ply played on return),
    appending ``positions`` rows (as ``options.positions`` says) and issues, and filling
    ``state`` (a GameState): plies, outcome, winner, error, check counts, repetition keys,
    checks given."""
    source, gi = raw.source, raw.index
    issues = tables["issues"]
    rows = tables["positions"]
    keep = options.positions
    keep_all = keep == "all"
    keep_checks = keep == "checks"
    want_fen = options.fen
    a_uci, a_clock, a_zob = rows["uci"].append, rows["halfmove_clock"].append, rows["zobrist"].append
    a_fen = rows["fen"].append if want_fen else None
    rows_before = len(rows["ply"])
    keys_append = state.keys.append
    counts = state.counts
    tokens = _TOKENS
    check_rows: list[tuple] = []  # (ply, kind, checkers, by_en_passant, by_castling, by_promotion)
    repeated_rows: list[tuple] = []  # (ply, repetition) where the position occurred before
    last_flags = None  # (ply, is_checkmate, is_stalemate) of a game-ending ply
    # Mate and stalemate (module doc): the current position's status is decided only when a
    # legal move from it is not found next; a written +/# waits for it in ``pending``.
    unsettled = False
    pending = None  # (token index, ply, move number, mover, SAN, suffix, checkers)

    def check_suffix(index, ply, move_number, mover, san, suffix, checking, mate) -> None:
        problem = _suffix_problem(suffix, checking, mate)
        if problem:
            line, col = raw.locate(index)
            add_issue(issues, tally, source, gi, line, col, ply, "warning", "suffix-mismatch",
                      f"{move_number}{'.' if mover else '...'}{san}: {problem}", san)

    def settle(us, rights, ep, clock, fullmove, key, checking, plies) -> None:
        """Decide with the full test whether the current position (``us`` to move) is mate or
        stalemate, record it (outcome, winner, row flags) and check the waiting suffix."""
        nonlocal unsettled, pending, ended, ended_ply, last_flags
        unsettled = False
        _sync(pos, us, rights, ep, clock, fullmove, key)
        mate = False
        if not has_legal_move(pos):
            mate = bool(checking)
            last_flags = (plies, mate, not mate)
            if ended is None or ended_ply == plies:  # mate and stalemate come before the other ends
                ended = "checkmate" if mate else "stalemate"
                ended_ply = plies
                if mate:
                    state.winner = COLOR_NAMES[not us]
            if mate and keep_checks:
                rows["is_checkmate"][-1] = True  # the mating move's row is the last one written
        if pending is not None:
            check_suffix(*pending, mate)
            pending = None

    def after_end(index, san) -> None:
        line, col = raw.locate(index)
        add_issue(issues, tally, source, gi, line, col, index + 1, "warning", "moves-after-end",
                  f"{len(sans) - index} move(s) after the {ended}: {san} ... not played", san)

    pieces = pos.pieces
    occ_co = pos.occupied_co
    mailbox = pos.mailbox
    us = pos.turn
    rights = pos.castling_rights
    rmix = (rights * _CASTLE_MIX) & MASK64
    ep = pos.ep_square or 0
    clock = pos.halfmove_clock
    fullmove = first_move = pos.fullmove_number
    key = pos.key
    chess960 = pos.chess960
    # A played position has one king per side (a setup without is a structural FEN fault).
    kings = [(pieces[KING] & occ_co[0]).bit_length() - 1, (pieces[KING] & occ_co[1]).bit_length() - 1]
    state.white_first = white_first = pos.turn
    # Repetition counts since the last irreversible move (earlier positions cannot recur).
    seen: dict[int, int] = {}
    rkey = key ^ rmix
    if ep and has_legal_en_passant(pos):
        rkey ^= EP_KEYS[ep & 7]
    seen[rkey] = 1
    keys_append(rkey)
    ended = _start_status(pos)
    ended_ply = 0 if ended else None
    if ended == "checkmate":  # a setup already mated: the side not to move has won
        state.winner = COLOR_NAMES[not us]
    warned_after_end = False
    own_king = kings[us]
    checking = attackers_mask(pos, not us, own_king)
    plies = 0
    sans = raw.sans
    for i, san in enumerate(sans):
        if ended is not None:
            if unsettled and ended_ply == plies:  # a mate or stalemate then comes first
                settle(us, rights, ep, clock, fullmove, key, checking, plies)
            if ended == "checkmate" or ended == "stalemate":
                after_end(i, san)
                break
            if not warned_after_end:
                warned_after_end = True
                line, col = raw.locate(i)
                add_issue(issues, tally, source, gi, line, col, i + 1, "warning", "moves-after-end",
                          f"the game ended automatically by {ended.replace('_', ' ')} at ply {ended_ply}; "
                          f"play goes on from {san}", san)
        them = not us
        try:
            try:
                piece, from_mask, to, to_bb, promotion, suffix, uci_like = tokens[san]
            except KeyError:
                piece, from_mask, to, to_bb, promotion, suffix, uci_like = _token(san)
            cands = 0
            if piece > 0 and (not checking or piece == KING or (
                    # In check: a single check answered on the checking line.
                    not checking & (checking - 1)
                    and (BETWEEN[own_king][checking.bit_length() - 1] | checking) >> to & 1)):
                # Fast path: resolve through the attack tables (module doc).
                our = occ_co[us]
                if not our & to_bb:
                    their = occ_co[them]
                    occ = our | their
                    if piece == PAWN:
                        if from_mask == BB_ALL or from_mask & BB_FILES[to & 7]:
                            if not occ & to_bb:
                                one = to - 8 if us else to + 8
                                if 0 <= one < 64:
                                    if (pieces[PAWN] & our) >> one & 1:
                                        cands = 1 << one
                                    elif not occ >> one & 1 and (to >> 3) == (3 if us else 4):
                                        cands = pieces[PAWN] & our & (1 << (to - 16 if us else to + 16))
                                cands &= from_mask
                        elif their & to_bb:
                            # (an en-passant capture never lands on an enemy piece: slow path)
                            cands = PAWN_ATTACKS[them][to] & pieces[PAWN] & our & from_mask
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
                        if cands:
                            # Is ``to`` attacked once the king has left its square?
                            occ2 = occ ^ cands
                            queens = pieces[QUEEN]
                            if ((KNIGHT_ATTACKS[to] & pieces[KNIGHT]) | (KING_ATTACKS[to] & pieces[KING])
                                    | (PAWN_ATTACKS[us][to] & pieces[PAWN])
                                    | (DIAG_ATTACKS[to][DIAG_MASKS[to] & occ2] & (pieces[BISHOP] | queens))
                                    | ((FILE_ATTACKS[to][FILE_MASKS[to] & occ2] | RANK_ATTACKS[to][RANK_MASKS[to] & occ2])
                                       & (pieces[ROOK] | queens))) & their:
                                cands = 0
                    frm = cands.bit_length() - 1
                    if cands & (cands - 1):
                        cands = 0  # several candidates: resolve_san disambiguates
                    elif cands & QUEEN_PSEUDO[own_king] and piece != KING \
                            and not (line := RAYS[own_king][frm]) & to_bb \
                            and line & their & (pieces[BISHOP] | pieces[ROOK] | pieces[QUEEN]):
                        # Pin test: the piece leaves a line through its king with an enemy
                        # slider on it; does an enemy slider then see the king?
                        occ2 = (occ ^ cands) | to_bb
                        their &= ~to_bb
                        queens = pieces[QUEEN]
                        if ((DIAG_ATTACKS[own_king][DIAG_MASKS[own_king] & occ2] & (pieces[BISHOP] | queens))
                                | ((FILE_ATTACKS[own_king][FILE_MASKS[own_king] & occ2]
                                    | RANK_ATTACKS[own_king][RANK_MASKS[own_king] & occ2])
                                   & (pieces[ROOK] | queens))) & their:
                            cands = 0
            if cands:
                from_bb = cands
                pt = piece
            elif (piece == CASTLE_H_SIDE or piece == CASTLE_A_SIDE) and not checking \
                    and (to := _standard_castling(pos, rights, own_king, us, piece == CASTLE_H_SIDE)) >= 0:
                frm = own_king
                from_bb = 1 << frm
                to_bb = 1 << to
                pt = KING
            else:
                if piece == NULL and unsettled:  # a pass proves no legal move exists
                    settle(us, rights, ep, clock, fullmove, key, checking, plies)
                    if ended == "checkmate" or ended == "stalemate":
                        after_end(i, san)
                        break
                _sync(pos, us, rights, ep, clock, fullmove, key)
                if piece == NULL:
                    if checking:
                        raise IllegalMove(san, f"{san} is illegal: a null move leaves the king in check")
                    add_issue(issues, tally, source, gi, *raw.locate(i), i + 1, "warning", "null-move",
                              f"null move {san!r} played as a pass", san)
                    pt = 0
                else:
                    move = resolve_san(pos, san, san)
                    frm = move & 63
                    to = (move >> 6) & 63
                    promotion = move >> 12
                    from_bb = 1 << frm
                    to_bb = 1 << to
                    pt = mailbox[frm]
            if pending is not None:  # a legal move follows: the last position was no mate
                check_suffix(*pending, False)
                pending = None
            if uci_like:
                add_issue(issues, tally, source, gi, *raw.locate(i), i + 1, "warning", "uci-move",
                          f"{san!r} names its origin square without a piece letter "
                          f"(long algebraic / UCI), not SAN", san)
        except SanError as exc:
            if unsettled:
                settle(us, rights, ep, clock, fullmove, key, checking, plies)
                if ended == "checkmate" or ended == "stalemate":
                    after_end(i, san)
                    break
            _sync(pos, us, rights, ep, clock, fullmove, key)
            line, col = raw.locate(i)
            number = f"{fullmove}{'.' if us else '...'}"
            add_issue(issues, tally, source, gi, line, col, i + 1, "error", exc.code,
                      f"{number}{exc} [FEN before the move: {pos.fen()}]", san)
            state.error = (exc.code, i + 1)
            break

        # Make the move (as Position.play): frm, to (squares), from_bb, to_bb, pt (0 = null move).
        move_number = fullmove
        if pt and not (pt == KING and occ_co[us] & to_bb):
            key ^= TURN_KEY
            clock += 1
            if not us:
                fullmove += 1
            dest = to
            vacated = from_bb
            captured = mailbox[to]
            if captured:
                pieces[captured] ^= to_bb
                occ_co[them] ^= to_bb
                key ^= PIECE_KEYS[them][captured][to]
                clock = 0
            elif pt == PAWN and to == ep and ep and (to - frm) & 7:
                cap_sq = to - 8 if us else to + 8
                cap_bb = 1 << cap_sq
                pieces[PAWN] ^= cap_bb
                occ_co[them] ^= cap_bb
                mailbox[cap_sq] = 0
                key ^= PIECE_KEYS[them][PAWN][cap_sq]
                vacated |= cap_bb
            changed = from_bb | to_bb
            pieces[pt] ^= changed
            occ_co[us] ^= changed
            mailbox[frm] = 0
            mailbox[to] = pt
            zpt = PIECE_KEYS[us][pt]
            key ^= zpt[frm] ^ zpt[to]
            uci = UCI_FROM_TO[frm][to]
            ep = 0
            if pt == PAWN:
                clock = 0
                if to - frm == 16 or frm - to == 16:
                    ep = (frm + to) >> 1
                elif promotion:
                    pieces[PAWN] ^= to_bb
                    pieces[promotion] |= to_bb
                    mailbox[to] = promotion
                    key ^= zpt[to] ^ PIECE_KEYS[us][promotion][to]
                    uci += PIECE_LETTERS[promotion]
                changed |= vacated
            elif pt == KING:
                kings[us] = to
            if rights and (rights & (from_bb | to_bb) or pt == KING):
                new_rights = rights & ~(from_bb | to_bb)
                if pt == KING:
                    new_rights &= ~(BB_RANK_1 if us else BB_RANK_8)
                if new_rights != rights:
                    # The castling part depends on where the kings stand; the mover's stood on frm.
                    wk, bk = kings[1], kings[0]
                    if pt == KING:
                        old = castling_key(rights, frm, bk) if us else castling_key(rights, wk, frm)
                    else:
                        old = castling_key(rights, wk, bk)
                    key ^= old ^ castling_key(new_rights, wk, bk)
                    rights = new_rights
                    rmix = (rights * _CASTLE_MIX) & MASK64
        else:
            # A null move or castling (king onto its rook; both land on the c/d or g/f files)
            # is rare: Position makes it, and the loop reads the scalars back.
            _sync(pos, us, rights, ep, clock, fullmove, key)
            if pt:
                pos.play(frm | to << 6)
                rank = frm & 56
                k_to, dest = (rank + 2, rank + 3) if to < frm else (rank + 6, rank + 5)
                kings[us] = k_to
                vacated = from_bb | to_bb
                changed = vacated | 1 << k_to | 1 << dest
                uci = UCI_FROM_TO[frm][to if chess960 else k_to]
            else:
                pos.play_null()
                vacated = changed = 0
                dest = -1
                uci = "0000"
            key, rights, clock, fullmove = pos.key, pos.castling_rights, pos.halfmove_clock, pos.fullmove_number
            rmix = (rights * _CASTLE_MIX) & MASK64
            ep = 0
        plies += 1

        # The side to move is now ``them``. Checks (module doc).
        own_king = kings[them]
        checking = 0
        if changed & CHECK_ZONE[own_king]:
            occ = occ_co[0] | occ_co[1]
            king_bb = 1 << own_king
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
                # (the attack lookup only when one of our sliders of the line's kind is on it)
                if line & ROOK_PSEUDO[own_king]:
                    sliders = line & (pieces[ROOK] | pieces[QUEEN]) & occ_co[us]
                    if sliders:
                        checking |= (FILE_ATTACKS[own_king][FILE_MASKS[own_king] & occ]
                                     | RANK_ATTACKS[own_king][RANK_MASKS[own_king] & occ]) & sliders
                else:
                    sliders = line & (pieces[BISHOP] | pieces[QUEEN]) & occ_co[us]
                    if sliders:
                        checking |= DIAG_ATTACKS[own_king][DIAG_MASKS[own_king] & occ] & sliders
        if checking:
            if checking & (checking - 1):
                kind = DOUBLE
            elif checking >> dest & 1:
                kind = DIRECT
            else:
                kind = DISCOVERED
            counts[kind] += 1
            castling = bool(vacated & to_bb)  # castling vacates the rook's square, its ``to``
            en_passant = vacated != from_bb and not castling
            if en_passant or promotion:
                counts["special"] += 1
            check_rows.append((plies, kind, checking, en_passant, castling, promotion > 0))

        # Zobrist key (Polyglot: en-passant file only beside an enemy pawn) and the FIDE
        # repetition key (en-passant file only when the capture is legal).
        zobrist = key
        rkey = key ^ rmix
        if ep and PAWN_ATTACKS[us][ep] & pieces[PAWN] & occ_co[them]:
            zobrist ^= EP_KEYS[ep & 7]
            _sync(pos, them, rights, ep, clock, fullmove, key)
            if has_legal_en_passant(pos):
                rkey ^= EP_KEYS[ep & 7]
        keys_append(rkey)
        if not clock:
            seen = {rkey: 1}
            rep = 1
            if not pieces[PAWN] and ended is None and is_insufficient_material(pos):
                ended = "insufficient_material"
                ended_ply = plies
        elif rkey in seen:
            rep = seen[rkey] + 1
            seen[rkey] = rep
            state.repeated = True
            repeated_rows.append((plies, rep))
            if rep >= 5 and ended is None:
                ended = "fivefold_repetition"
                ended_ply = plies
        else:
            seen[rkey] = rep = 1
        if clock >= SEVENTYFIVE_MOVES_PLIES and (ended is None or ended_ply == plies):
            # (the seventy-five-move rule is reported before a fivefold repetition)
            ended = "seventyfive_moves"
            ended_ply = plies
        unsettled = True
        if suffix or checking:
            pending = (i, plies, move_number, us, san, suffix, checking)
        if keep_all:
            a_uci(uci)
            a_clock(clock)
            a_zob(zobrist)
            if a_fen is not None:
                _sync(pos, them, rights, ep, clock, fullmove, key)
                a_fen(pos.fen())
        elif keep_checks and checking:
            if a_fen is not None:
                _sync(pos, them, rights, ep, clock, fullmove, key)
            _append_row(rows, pos if a_fen is not None else None, plies, move_number, us, san, uci,
                        check_rows[-1], clock, zobrist, rep)
        us = them
    if unsettled:
        settle(us, rights, ep, clock, fullmove, key, checking, plies)
    else:
        _sync(pos, us, rights, ep, clock, fullmove, key)
    if keep_all and plies:
        _bulk_columns(rows, rows_before, plies, sans, white_first, first_move, check_rows, repeated_rows,
                      last_flags)
    added = len(rows["ply"]) - rows_before
    if added:
        rows["source"].extend([source] * added)
        rows["game_index"].extend([gi] * added)
    gave_check = [False] * (plies + 1)
    for row in check_rows:
        gave_check[row[0]] = True
    state.gave_check = gave_check
    state.plies = plies
    state.final_repetition = seen.get(state.keys[-1], 0)
    state.final_clock = clock
    state.ended = ended


def _bulk_columns(rows, base: int, n: int, sans, white_first: bool, first_move: int, check_rows,
                  repeated_rows, last_flags) -> None:
    """Write the columns of a game's ``n`` position rows that the loop did not (module doc):
    defaults in bulk, then the plies that differ."""
    rows["ply"].extend(range(1, n + 1))
    if first_move == 1 and n <= _BULK:
        rows["move_number"].extend(_MOVE_NUMBERS[white_first][:n])
        rows["color"].extend(_COLORS[white_first][:n])
    else:
        # ply k (1-based) is played at move first_move + (k - 1) // 2 when white moves first,
        # first_move + k // 2 when black does.
        shift = 0 if white_first else 1
        rows["move_number"].extend([first_move + (k - 1 + shift) // 2 for k in range(1, n + 1)])
        names = ("white", "black") if white_first else ("black", "white")
        rows["color"].extend([names[(k - 1) & 1] for k in range(1, n + 1)])
    rows["san"].extend(sans[:n])
    falses = [False] * n
    for column in ("in_check", "by_en_passant", "by_castling", "by_promotion", "is_checkmate", "is_stalemate"):
        rows[column].extend(falses)
    rows["check_kind"].extend([NONE] * n)
    rows["checkers"].extend([""] * n)
    rows["repetition"].extend([1] * n)
    if check_rows:
        in_check, kinds, checkers = rows["in_check"], rows["check_kind"], rows["checkers"]
        by_ep, by_castling, by_promotion = rows["by_en_passant"], rows["by_castling"], rows["by_promotion"]
        for ply, kind, checking, ep, castling, promotion in check_rows:
            j = base + ply - 1
            in_check[j] = True
            kinds[j] = kind
            checkers[j] = square_list(checking)
            by_ep[j] = ep
            by_castling[j] = castling
            by_promotion[j] = promotion
    repetition = rows["repetition"]
    for ply, rep in repeated_rows:
        repetition[base + ply - 1] = rep
    if last_flags is not None:
        ply, mate, stale = last_flags
        rows["is_checkmate"][base + ply - 1] = mate
        rows["is_stalemate"][base + ply - 1] = stale


def _append_row(rows, pos, ply, move_number, mover, san, uci, check_row, clock, zobrist, rep) -> None:
    """One whole positions row (``--positions checks``); ``pos`` given when FENs are wanted.
    Written as no mate: the caller sets ``is_checkmate`` once it knows."""
    rows["ply"].append(ply)
    rows["move_number"].append(move_number)
    rows["color"].append(COLOR_NAMES[mover])
    rows["san"].append(san)
    rows["uci"].append(uci)
    _, kind, checking, ep, castling, promotion = check_row
    rows["in_check"].append(True)
    rows["check_kind"].append(kind)
    rows["checkers"].append(square_list(checking))
    rows["by_en_passant"].append(ep)
    rows["by_castling"].append(castling)
    rows["by_promotion"].append(promotion)
    rows["is_checkmate"].append(False)
    rows["is_stalemate"].append(False)
    rows["halfmove_clock"].append(clock)
    rows["zobrist"].append(zobrist)
    rows["repetition"].append(rep)
    if pos is not None:
        rows["fen"].append(pos.fen())


def _suffix_problem(suffix: str, checking: int, mate: bool) -> str | None:
    """What is wrong with a written ``+``/``#`` (PGN standard §8.2.3.5), or None."""
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
