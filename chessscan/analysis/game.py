"""One PGN game through the detector: play every SAN, tag every position, record the game.

Input is a :class:`~chessscan.readers.pgn.RawGame` (tags and SAN tokens, no chess rules);
output is appended to column buffers, plain ``dict[str, list]`` per table (``positions``,
``games``, ``issues``) whose columns are declared in :mod:`chessscan.reports.schema`.
Nothing here allocates an object per ply: each ply appends scalars to column lists.
"""

from __future__ import annotations

from collections import Counter

from chessscan.analysis.options import AnalysisOptions
from chessscan.core.checks import DIRECT, DISCOVERED, DOUBLE, NONE, square_list
from chessscan.core.fen import fault_severity, validate_fen
from chessscan.core.movegen import attackers_mask, has_legal_move
from chessscan.core.position import Position
from chessscan.core.san import NULL, SanError, parse_san, resolve_san
from chessscan.core.squares import KING, PAWN

STANDARD_VARIANTS = frozenset({"", "standard", "chess", "normal", "from position", "fromposition",
                               "from_position", "classical", "?"})
CHESS960_VARIANTS = frozenset({"chess960", "chess 960", "960", "fischerandom", "fischer random",
                               "fischerrandom", "freestyle", "chess960 (fischer random)"})

STANDARD_START = Position.initial()


def variant_kind(tags: dict[str, str]) -> str | None:
    """``'standard'``, ``'chess960'``, or None for a variant chessscan does not play
    (decided by the ``Variant`` tag, PGN standard §9.8 and common exporter spellings)."""
    v = tags.get("Variant", "").strip().lower()
    if v in STANDARD_VARIANTS:
        return "standard"
    if v in CHESS960_VARIANTS:
        return "chess960"
    return None


def _int_or_none(text: str | None) -> int | None:
    if text is None:
        return None
    text = text.strip()
    if text.isdigit() and len(text) < 10:
        return int(text)
    return None


class Tally:
    """Dataset counters, updated once per game (never per ply)."""

    def __init__(self) -> None:
        self.games = 0
        self.games_ok = 0
        self.games_with_errors = 0
        self.unsupported_variant = 0
        self.positions = 0
        self.checks = Counter()
        self.checkmates = 0
        self.stalemates = 0
        self.issues = Counter()
        self.issues_by_severity = Counter()
        self.epd_positions = 0
        self.epd_invalid = 0
        self.cross_checked_games = 0
        self.cross_checked_positions = 0
        self.disagreements = 0

    def merge(self, other: "Tally") -> None:
        for name in ("games", "games_ok", "games_with_errors", "unsupported_variant", "positions",
                     "checkmates", "stalemates", "epd_positions", "epd_invalid", "cross_checked_games", "cross_checked_positions",
                     "disagreements"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.checks.update(other.checks)
        self.issues.update(other.issues)
        self.issues_by_severity.update(other.issues_by_severity)

    def as_dict(self) -> dict:
        epd = {"epd_positions": self.epd_positions, "epd_valid": self.epd_positions - self.epd_invalid,
               "epd_invalid": self.epd_invalid} if self.epd_positions else {}
        return {
            "games_read": self.games,
            "games_ok": self.games_ok,
            "games_with_errors": self.games_with_errors,
            "games_unsupported_variant": self.unsupported_variant,
            "positions": self.positions,
            **epd,
            "checks": {k: self.checks.get(k, 0) for k in (DIRECT, DISCOVERED, DOUBLE)},
            "checkmates": self.checkmates,
            "stalemates": self.stalemates,
            "issues_by_severity": dict(self.issues_by_severity),
            "issues_by_code": dict(sorted(self.issues.items())),
            "cross_check": {"games": self.cross_checked_games, "positions": self.cross_checked_positions,
                            "disagreements": self.disagreements},
        }


def add_issue(issues: dict, tally: Tally, source: str, game_index: int | None, line: int | None,
              column: int | None, ply: int | None, severity: str, code: str, message: str,
              san: str | None = None) -> None:
    """Append one row to the ``issues`` buffers and count it."""
    issues["source"].append(source)
    issues["game_index"].append(game_index)
    issues["line"].append(line)
    issues["column"].append(column)
    issues["ply"].append(ply)
    issues["severity"].append(severity)
    issues["code"].append(code)
    issues["message"].append(message)
    issues["san"].append(san)
    tally.issues[code] += 1
    tally.issues_by_severity[severity] += 1


def analyze_game(raw, tables: dict[str, dict[str, list]], options: AnalysisOptions, tally: Tally) -> bool:
    """Analyze one game, appending its rows to ``tables`` and its counts to ``tally``.

    Returns True when the game holds a rare event (checkmate, stalemate, double check,
    en-passant or promotion check), which the cross-check sample always includes.

    ``raw`` is a RawGame: ``source, index, byte_offset, line, tags, sans, result, issues,
    locate(ply_index)``. A game with an error keeps its plies up to the error; the error is
    recorded (code, line, column, ply, SAN, FEN before the move). Never raises for bad input.
    """
    source = raw.source
    gi = raw.index
    tags = raw.tags
    issues = tables["issues"]
    tally.games += 1
    error_code = None
    error_ply = None

    for iss in raw.issues:
        add_issue(issues, tally, source, gi, iss.line, iss.column, None, iss.severity, iss.code, iss.message)
        if iss.severity == "error" and error_code is None:
            error_code = iss.code

    kind = variant_kind(tags)
    plies = 0
    counts = {DIRECT: 0, DISCOVERED: 0, DOUBLE: 0, "special": 0}
    outcome = "none"
    pos = None
    start_fen = tags.get("FEN")
    if kind is None:
        add_issue(issues, tally, source, gi, raw.line, None, None, "warning", "unsupported-variant",
                  f"variant {tags.get('Variant')!r} is not standard chess or Chess960: no positions analyzed")
        tally.unsupported_variant += 1
    elif start_fen is not None:
        pos, faults = validate_fen(start_fen.strip(), chess960=kind == "chess960")
        for code, message in faults:
            severity = fault_severity(code)
            add_issue(issues, tally, source, gi, raw.line, None, 0, severity, code,
                      f"[FEN \"{start_fen}\"]: {message}")
            if severity == "error" and error_code is None:
                error_code, error_ply = code, 0
    else:
        pos = STANDARD_START.copy()
        pos.chess960 = kind == "chess960"

    if pos is not None:
        plies, outcome, err = _play(raw, pos, tables, options, tally, counts)
        if err is not None:
            error_code, error_ply = error_code or err[0], err[1]

    games = tables["games"]
    games["source"].append(source)
    games["game_index"].append(gi)
    games["byte_offset"].append(raw.byte_offset)
    games["line"].append(raw.line)
    get = tags.get
    for col, tag in (("event", "Event"), ("site", "Site"), ("date", "Date"), ("round", "Round"),
                     ("white", "White"), ("black", "Black"), ("result", "Result")):
        games[col].append(get(tag))
    games["white_elo"].append(_int_or_none(get("WhiteElo")))
    games["black_elo"].append(_int_or_none(get("BlackElo")))
    for col, tag in (("eco", "ECO"), ("time_control", "TimeControl"), ("termination", "Termination"),
                     ("variant", "Variant")):
        games[col].append(get(tag))
    games["start_fen"].append(start_fen)
    games["plies"].append(plies)
    games["checks"].append(counts[DIRECT] + counts[DISCOVERED] + counts[DOUBLE])
    games["direct_checks"].append(counts[DIRECT])
    games["discovered_checks"].append(counts[DISCOVERED])
    games["double_checks"].append(counts[DOUBLE])
    games["outcome"].append(outcome)
    games["winner"].append(None)
    games["perpetuals"].append(None)
    games["result_consistent"].append(None)
    games["error_code"].append(error_code)
    games["error_ply"].append(error_ply)

    if error_code is None:
        tally.games_ok += 1
    else:
        tally.games_with_errors += 1
    tally.positions += plies
    tally.checks.update({k: counts[k] for k in (DIRECT, DISCOVERED, DOUBLE)})
    if outcome == "checkmate":
        tally.checkmates += 1
    elif outcome == "stalemate":
        tally.stalemates += 1
    return outcome != "none" or bool(counts[DOUBLE] or counts["special"])


def _play(raw, pos: Position, tables, options: AnalysisOptions, tally: Tally, counts: dict):
    """Play the SAN tokens from ``pos``; returns ``(plies, outcome, error or None)``."""
    source, gi = raw.source, raw.index
    rows = tables["positions"]
    keep = options.positions
    want_fen = options.fen
    # Bound appends: the per-ply cost is these calls and nothing else.
    a_source, a_gi, a_ply, a_mn = (rows["source"].append, rows["game_index"].append,
                                   rows["ply"].append, rows["move_number"].append)
    a_color, a_san, a_uci = rows["color"].append, rows["san"].append, rows["uci"].append
    a_check, a_kind, a_checkers = rows["in_check"].append, rows["check_kind"].append, rows["checkers"].append
    a_ep, a_castle, a_promo = (rows["by_en_passant"].append, rows["by_castling"].append,
                               rows["by_promotion"].append)
    a_mate, a_stale, a_clock = (rows["is_checkmate"].append, rows["is_stalemate"].append,
                                rows["halfmove_clock"].append)
    a_zob, a_rep = rows["zobrist"].append, rows["repetition"].append
    a_fen = rows["fen"].append if want_fen else None

    occ_co = pos.occupied_co
    pieces = pos.pieces
    mailbox = pos.mailbox
    plies = 0
    mate = stale = False
    error = None
    for i, san in enumerate(raw.sans):
        try:
            parsed = parse_san(san)
            if parsed.piece == NULL:
                add_issue(tables["issues"], tally, source, gi, *raw.locate(i), i + 1, "warning", "null-move",
                          f"null move {san!r} played as a pass", san)
                move = 0
            else:
                move = resolve_san(pos, parsed, san)
        except SanError as exc:
            line, col = raw.locate(i)
            number = f"{pos.fullmove_number}{'.' if pos.turn else '...'}"
            add_issue(tables["issues"], tally, source, gi, line, col, i + 1, "error", exc.code,
                      f"{number}{exc} [FEN before the move: {pos.fen()}]", san)
            error = (exc.code, i + 1)
            break
        us = pos.turn
        move_number = pos.fullmove_number
        if move:
            frm, to = move & 63, (move >> 6) & 63
            pt = mailbox[frm]
            castling = pt == KING and occ_co[us] >> to & 1
            en_passant = pt == PAWN and to == pos.ep_square and (to - frm) & 7 != 0
            promotion = move >> 12
            uci = pos.move_uci(move)
            pos.play(move)
            if castling:
                arrived = 1 << ((frm & 56) + (3 if to < frm else 5))
            else:
                arrived = 1 << to
        else:
            castling = en_passant = promotion = 0
            arrived = 0
            uci = "0000"
            pos.play_null()
        plies += 1
        king = (pieces[KING] & occ_co[not us]).bit_length() - 1
        checking = attackers_mask(pos, us, king)
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
            stale = not has_legal_move(pos)
        if keep == "all" or (keep == "checks" and checking):
            a_source(source)
            a_gi(gi)
            a_ply(plies)
            a_mn(move_number)
            a_color("white" if us else "black")
            a_san(san)
            a_uci(uci)
            a_check(bool(checking))
            a_kind(kind)
            a_checkers(square_list(checking) if checking else "")
            a_ep(bool(checking) and en_passant)
            a_castle(bool(checking and castling))
            a_promo(bool(checking and promotion))
            a_mate(mate)
            a_stale(stale)
            a_clock(pos.halfmove_clock)
            a_zob(None)
            a_rep(None)
            if a_fen is not None:
                a_fen(pos.fen())
    if plies == 0 and error is None:
        # No move played: the start position itself may be mate or stalemate (FEN setups).
        king = (pieces[KING] & occ_co[pos.turn]).bit_length() - 1
        if not has_legal_move(pos):
            mate = bool(attackers_mask(pos, not pos.turn, king))
            stale = not mate
    outcome = "checkmate" if mate else "stalemate" if stale else "none"
    return plies, outcome, error
