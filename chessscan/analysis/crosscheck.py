"""Cross-validation against python-chess, position by position.

python-chess replays each game from the same raw SAN tokens and ``[FEN]`` start with its own
board and ``parse_san``: it never sees our positions. Our side is replayed through the public
core API (not the hot loop), so the comparison also checks the hot path's shortcuts against
the plain rules. Every difference becomes a ``disagreements`` row; known python-chess
behaviours get a ``note`` but are never hidden.

Compared per ply: the move (UCI, or the error class when one side rejects it), ``in_check``,
the checkers (square names), checkmate, stalemate, the number of legal moves, insufficient
material, the halfmove clock, the Polyglot Zobrist key (``chess.polyglot.zobrist_hash``) and
the repetition count (occurrences of python-chess's transposition key: placement, turn,
castling rights and a *legal* en-passant square, as its ``is_repetition`` uses).

Which games ``--cross-check sample`` replays: :mod:`chessscan.analysis.sampling`.
"""

from __future__ import annotations

import chess
import chess.polyglot

from chessscan.analysis.game import variant_kind
from chessscan.core.checks import square_list
from chessscan.core.fen import validate_setup
from chessscan.core.movegen import checkers, has_legal_en_passant, has_legal_move, legal_moves
from chessscan.core.rules import is_insufficient_material
from chessscan.core.zobrist import repetition_key, zobrist_hash
from chessscan.core.position import STARTING_FEN
from chessscan.core.san import NULL_PIECE, SanError, parse_san, resolve_san

_PC_ERRORS = (
    (chess.AmbiguousMoveError, "ambiguous-move"),
    (chess.IllegalMoveError, "illegal-move"),
    (chess.InvalidMoveError, "invalid-san"),
)


def _pc_error_code(exc: Exception) -> str:
    for cls, code in _PC_ERRORS:
        if isinstance(exc, cls):
            return code
    return type(exc).__name__


def _python_chess_kind(move: chess.Move, castling: bool, checkers_bb: int) -> str:
    """chessscan's check kind (docs: explanation/check-kinds.md) derived from python-chess's view: the
    square where the moved piece (or the castling rook) arrived, against its checkers. A null
    move arrives nowhere."""
    if not checkers_bb:
        return "none"
    if checkers_bb & (checkers_bb - 1):
        return "double"
    if not move:
        return "discovered"
    arrived = move.to_square
    if castling:
        arrived = (move.from_square & 56) + (3 if move.to_square < move.from_square else 5)
    return "direct" if checkers_bb >> arrived & 1 else "discovered"


def cross_check_game(raw, disagreements: dict[str, list], rows=None,
                     row_start: int = 0, all_counts: bool = True) -> tuple[int, int] | None:
    """Replay ``raw`` (a RawGame) in python-chess and compare with chessscan; append one
    ``disagreements`` row per difference. Returns ``(positions compared, rows added)``.

    ``all_counts``: compare the number of legal moves and the Zobrist key after every ply
    (``--cross-check full``); False (the sample) compares the number of legal moves only
    where the side to move is in check and after the last move (counting python-chess's legal
    moves is a third of a replay's cost; evasions are where a move generator most often goes
    wrong, and perft tests the rest), and the Zobrist key (python-chess's Polyglot hash is a
    fifth) every 8th ply, where the position repeats, where a pawn stands ready to take en
    passant (the key's en-passant part is computed afresh each ply) and after the last move:
    a key updated wrongly stays wrong, so a wrong update is still found, at most 7 plies
    later. When a move error stops the replay, the last ply played counts as the last move.

    ``rows``/``row_start``: the ``positions`` buffers holding this game's rows from index
    ``row_start`` on (one per ply, i.e. written with ``positions="all"``): then the values
    compared are the ones chessscan wrote. Without them (or beyond them) chessscan's side is
    replayed through the core API. The move, the number of legal moves and insufficient
    material always come from that replay. ``fen`` in a row is the FEN before the move.
    Games in a variant chessscan does not play are skipped: None.
    """
    kind = variant_kind(raw.tags)
    if kind is None:
        return None
    chess960 = kind == "chess960"
    fen = raw.tags.get("FEN")
    added = 0

    def emit(ply, field, ours, theirs, fen_before, note=None):
        nonlocal added
        disagreements["source"].append(raw.source)
        disagreements["game_index"].append(raw.index)
        disagreements["ply"].append(ply)
        disagreements["field"].append(field)
        disagreements["chessscan"].append(str(ours))
        disagreements["python_chess"].append(str(theirs))
        disagreements["fen"].append(fen_before)
        disagreements["note"].append(note)
        added += 1

    ours, faults, inferred = validate_setup(fen.strip() if fen else STARTING_FEN, chess960=chess960)
    our_error = faults[0][0] if ours is None else None
    # The castling interpretation is an input setting, not a detector result: give
    # python-chess the same one.
    chess960 = chess960 or inferred
    try:
        board = chess.Board(fen.strip() if fen else chess.STARTING_FEN, chess960=chess960)
        if fen and not board.is_valid():
            pc_error = f"invalid-fen ({board.status()!r})"
        else:
            pc_error = None
    except ValueError as exc:
        board, pc_error = None, f"invalid-fen ({exc})"
    if (our_error is None) != (pc_error is None):
        note = None
        if our_error and board is not None:
            note = f"chessscan's rule {our_error} is stricter than python-chess's Board.is_valid()"
        emit(0, "start_fen", our_error or "valid", pc_error or "valid", fen, note)
        return 0, added
    if ours is None:
        return 0, added

    n_rows = len(rows) - row_start if rows is not None else 0
    n_sans = len(raw.sans)
    compared = 0
    ply = 0
    mine = None
    counted = keyed = True  # whether the last ply's legal moves and key were compared

    def emit_pairs(pairs) -> None:
        """A disagreement row at ``ply`` (with the FEN before its move) for each
        ``(field, ours, theirs)`` of ``pairs`` that differ."""
        fen_before = None
        for field, a, b in pairs:
            if a != b:
                if fen_before is None:
                    last = board.pop()
                    fen_before = board.fen()
                    board.push(last)
                emit(ply, field, a, b, fen_before)

    def last_ply() -> None:
        """For a replay that stops at a move error: the comparisons the sample makes after a
        game's last move, on the last ply played."""
        pairs = []
        if not counted:
            pairs.append(("legal_moves", len(legal_moves(ours)), board.legal_moves.count()))
        if not keyed:
            pairs.append(("zobrist", mine["zobrist"], chess.polyglot.zobrist_hash(board)))
        emit_pairs(pairs)

    our_seen = {repetition_key(ours, has_legal_en_passant(ours)): 1}
    pc_seen = {board._transposition_key(): 1}
    for san in raw.sans:
        try:
            parsed = parse_san(san)
            our_move = 0 if parsed.piece == NULL_PIECE else resolve_san(ours, parsed, san)
            our_text = ours.move_uci(our_move) if our_move else "0000"
            our_err = None
        except SanError as exc:
            our_err, our_text = exc.code, None
        try:
            pc_move = board.parse_san(san)
            pc_text = pc_move.uci() if pc_move else "0000"
            pc_err = None
        except (ValueError, AssertionError) as exc:
            pc_err, pc_text = _pc_error_code(exc), None
        if our_err or pc_err or our_text != pc_text:  # the replay stops at this move
            if not (counted and keyed):
                last_ply()
            if not (our_err or pc_err):
                emit(ply + 1, "move", our_text, pc_text, board.fen())
            elif our_err != pc_err:
                note = None
                if pc_err is None and our_err == "invalid-san":
                    note = "python-chess's parse_san accepts text that is not SAN"
                emit(ply + 1, "move", our_err or our_text, pc_err or pc_text, board.fen(), note)
            break
        if our_move:
            ours.play(our_move)
        else:
            ours.play_null()
        pc_castling = bool(pc_move) and board.is_castling(pc_move)
        board.push(pc_move)
        ply += 1
        if not ply & 1023:
            # python-chess keeps a state per ply for pop() and its own repetition checks; the
            # replay pops at most one ply and counts repetitions itself: memory stays flat
            # however long the game.
            del board.move_stack[:-1]
            del board._stack[:-1]
        compared += 1
        pc_checkers = board.checkers_mask()
        pc_key = board._transposition_key()
        pc_seen[pc_key] = pc_rep = pc_seen.get(pc_key, 0) + 1
        pc_kind = _python_chess_kind(pc_move, pc_castling, pc_checkers)
        our_key = repetition_key(ours, has_legal_en_passant(ours))
        our_seen[our_key] = our_rep = our_seen.get(our_key, 0) + 1
        if ply <= n_rows:
            r = row_start + ply - 1
            mine = rows.row(r)
        else:
            our_checkers = checkers(ours)
            our_any = has_legal_move(ours)
            mine = {"uci": our_text, "in_check": bool(our_checkers), "checkers": square_list(our_checkers),
                    "check_kind": None, "is_checkmate": bool(our_checkers) and not our_any,
                    "is_stalemate": not our_checkers and not our_any, "halfmove_clock": ours.halfmove_clock,
                    "zobrist": zobrist_hash(ours), "repetition": our_rep}
        # python-chess's is_check(), is_checkmate() and is_stalemate() (standard and Chess960
        # boards), from one checkers mask and one legal-move search.
        pc_check = bool(pc_checkers)
        pc_stuck = not any(board.generate_legal_moves())
        pairs = (
            ("uci", mine["uci"], pc_text),
            ("in_check", mine["in_check"], pc_check),
            ("check_kind", mine["check_kind"] or pc_kind, pc_kind),
            ("checkers", mine["checkers"], square_list(pc_checkers)),
            ("is_checkmate", mine["is_checkmate"], pc_check and pc_stuck),
            ("is_stalemate", mine["is_stalemate"], not pc_check and pc_stuck),
        )
        counted = all_counts or bool(pc_checkers) or ply == n_sans
        if counted:
            pairs += (("legal_moves", len(legal_moves(ours)), board.legal_moves.count()),)
        pairs += (
            ("insufficient_material", is_insufficient_material(ours), board.is_insufficient_material()),
            ("halfmove_clock", mine["halfmove_clock"], board.halfmove_clock),
        )
        # (The Polyglot key holds the en-passant file whenever a pawn stands ready to take,
        # legal or not: that part is not carried from ply to ply, so it is compared there.)
        keyed = (all_counts or not ply & 7 or ply == n_sans or pc_rep > 1
                 or board.has_pseudo_legal_en_passant())
        if keyed:
            pairs += (("zobrist", mine["zobrist"], chess.polyglot.zobrist_hash(board)),)
        pairs += (("repetition", mine["repetition"], pc_rep),)
        emit_pairs(pairs)
    return compared, added
