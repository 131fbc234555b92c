"""The registry of issue codes: every ``code`` that can appear in the ``issues`` table.

Codes are a stable interface (CI gates, pre-commit hooks and scripts match on them): a
code, once listed here, keeps its name and meaning. The modules that emit codes keep their
own severity tables (``readers.pgn.ISSUE_CODES``, ``readers.epd.EPD_ERROR_SEVERITY``,
``core.fen.FAULTS`` with ``fault_severity``, the ``SanError`` classes of ``core.san``); the
test suite checks that this registry covers them all with the same severity; the
documentation's "Issue codes" page is generated from it.

This module is plain data with no imports from the rest of chessscan, so anything (the CLI,
documentation tools) can read it cheaply.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["IssueCode", "ISSUE_CODES", "GROUPS", "GROUP_DESCRIPTIONS", "SEVERITIES", "issue_code"]

#: Severities, most severe first. ``error``: the game or position could not be read or
#: replayed in full; ``warning``: it was, but something is off or was repaired.
SEVERITIES: tuple[str, ...] = ("error", "warning")

#: Groups, in the order the documentation lists them.
GROUPS: tuple[str, ...] = ("syntax", "moves", "positions", "consistency", "input")

#: group -> what its codes have in common (the documentation's heading text).
GROUP_DESCRIPTIONS: dict[str, str] = {
    "syntax": "The text does not follow the PGN standard (tags, movetext, comments, variations) or the "
              "EPD / perft layout.",
    "moves": "A move that cannot be played as written.",
    "positions": "A `[FEN]` tag or an EPD line that is malformed or describes an impossible position.",
    "consistency": "The tags, the movetext and the replayed game contradict each other.",
    "input": "The bytes, the encoding or the variant stop or limit the analysis.",
}


class IssueCode(NamedTuple):
    """One registered code. ``severity`` is one of :data:`SEVERITIES`; ``title`` a one-line
    meaning; ``group`` one of :data:`GROUPS`."""

    code: str
    severity: str
    title: str
    group: str


def _codes(group: str, *rows: tuple[str, str, str]) -> dict[str, IssueCode]:
    return {code: IssueCode(code, severity, title, group) for code, severity, title in rows}


#: code -> :class:`IssueCode`, grouped and in documentation order.
ISSUE_CODES: dict[str, IssueCode] = {
    **_codes(
        "syntax",
        # PGN reader (readers/pgn.py)
        ("unclosed-comment", "error", "a '{' comment is never closed: its game ends at the tag section the "
                                      "comment runs into, or at the end of the input; its moves after the '{' "
                                      "are not read"),
        ("game-in-comment", "warning", "a '{' comment runs over a line beginning with an [Event] tag, with no "
                                       "blank line before it: read as comment text up to its '}' (no "
                                       "look-ahead decides it), it may hold a game, so a '{' left open by "
                                       "mistake swallows the games up to the next '}'; reported on the "
                                       "[Event] line"),
        ("unbalanced-variation", "error", "a ')' without its '(' or a '(' never closed"),
        ("unexpected-token", "error", "a token that is not a move, move number, NAG, comment or result; "
                                      "later moves of the game are ignored"),
        ("bad-tag", "error", "a malformed tag pair, or a line in the tag section that is not a tag"),
        ("duplicate-tag", "warning", "a tag given twice; the first value is kept"),
        ("missing-tags", "warning", "movetext with no tag section before it"),
        ("missing-result", "warning", "the game has no termination marker (1-0, 0-1, 1/2-1/2, *)"),
        # EPD reader (readers/epd.py)
        ("invalid-epd", "error", "an EPD line with fewer than 4 fields or a field of impossible shape"),
        ("bad-operation", "error", "a D<n>/hmvc/fmvn operand that is not a non-negative integer"),
        ("unterminated-string", "warning", "a '\"' string with no closing quote; the rest of the line is taken"),
        ("bad-opcode", "warning", "an opcode that is not a letter followed by up to 14 letters, digits or '_'"),
        ("duplicate-opcode", "warning", "an opcode repeated on one line; the first one is kept"),
        ("missing-semicolon", "warning", "an operation without its ';', split at the next known opcode"),
        ("glued-counter", "warning", "the en-passant '-' glued to the halfmove clock ('- -0 1')"),
        # perft suites (chessscan perft --suite)
        ("bad-perft-line", "error", "a 'perft DEPTH NODES' line whose values are not two integers"),
        ("orphan-line", "error", "a 'perft' or 'id' line with no position to attach to"),
        ("duplicate-depth", "warning", "a perft depth given twice; the first count is kept"),
        ("no-depths", "warning", "a perft position without any node count"),
    ),
    **_codes(
        "moves",
        ("invalid-san", "error", "the move text is not SAN; the game stops there"),
        ("illegal-move", "error", "well-formed SAN that names no legal move; the game stops there"),
        ("ambiguous-move", "error", "SAN that matches several legal moves; the game stops there"),
        ("null-move", "warning", "a null move ('--', 'Z0', '0000', '@@@@') played as a pass"),
        ("uci-move", "warning", "a move written in UCI / long algebraic without a piece letter "
                                "instead of SAN (accepted)"),
    ),
    **_codes(
        "positions",
        # core/fen.py FAULTS, for [FEN] tags and EPD lines
        ("invalid-fen", "error", "the text is not a FEN (field count, placement, turn, castling, "
                                 "en-passant or counters)"),
        ("missing-king", "error", "a side has no king"),
        ("too-many-kings", "error", "a side has more than one king"),
        ("pawns-on-backrank", "error", "a pawn on the first or last rank"),
        ("too-many-pawns", "error", "a side has more than 8 pawns"),
        ("too-many-pieces", "error", "a side has more than 16 pieces"),
        ("impossible-material", "warning", "more promoted pieces than missing pawns (the position is "
                                           "still analyzed)"),
        ("bad-castling-rights", "error", "a castling right without the king and that rook on their "
                                         "original squares"),
        ("bad-en-passant", "error", "an en-passant square that no double push on the last move explains"),
        ("opposite-check", "error", "the side not to move is in check"),
        ("too-many-checkers", "error", "more than two pieces give check"),
        ("impossible-check", "error", "a check that no single last move can produce"),
    ),
    **_codes(
        "consistency",
        ("result-mismatch", "error", "the Result tag contradicts a checkmate, stalemate or dead position "
                                     "(insufficient material) on the board"),
        ("result-unfinished", "warning", "the result is '*' (or missing) but the game is over on the board"),
        ("result-token-mismatch", "warning", "the Result tag and the movetext's result token differ"),
        ("result-tag-invalid", "warning", "a Result tag other than 1-0, 0-1, 1/2-1/2 or * (such as '?')"),
        ("suffix-mismatch", "warning", "a '+' or '#' that the position contradicts, or a mate written "
                                       "without '#'"),
        ("moves-after-end", "warning", "moves written after the game ended (mate, stalemate or an "
                                       "automatic draw)"),
        ("counter-conflict", "warning", "an EPD hmvc/fmvn operation disagrees with the FEN counters"),
        ("disagreement", "warning", "with --cross-check: python-chess sees this ply differently "
                                    "(a chessscan bug to report)"),
        ("duplicate-game", "warning", "with validate --duplicates: the game has the same moves from the same "
                                      "start position (games.moves_hash) as an earlier game of the run, whose "
                                      "file and line the message names"),
    ),
    **_codes(
        "input",
        ("decode-fallback", "warning", "the text is not valid UTF-8; decoded as CP1252 or Latin-1"),
        ("truncated-input", "error", "a compressed stream or a game table ends early or is corrupt; the "
                                     "game it cuts is incomplete (a table whose footer cannot be read: "
                                     "nothing is read from it)"),
        ("unsupported-input", "error", "an archive (zip, 7z, rar, tar) given as an input: unpack it first; "
                                       "or a game table with no moves column (the message names its columns)"),
        ("not-text", "error", "an input that is not text (an image, an executable, random bytes): "
                              "nothing is read from it"),
        ("unreadable-input", "error", "a path that does not exist or cannot be read (permission denied, "
                                      "I/O error); the other inputs are analyzed"),
        ("empty-input", "warning", "an input with nothing in it (an empty file, a file of white space "
                                   "only, a file with no game or EPD record: comments only, or a "
                                   "folder without PGN or EPD files)"),
        ("line-too-long", "error", "an EPD line longer than 1 MiB, truncated"),
        ("game-too-long", "error", "a PGN game of more than 4 MiB of text (or a line that long): its "
                                   "lines up to 4 MiB are read, the rest of the game is not"),
        ("control-character", "warning", "a control character inside an EPD line (read as a space)"),
        ("unsupported-variant", "warning", "a variant other than standard chess or Chess960: counted, "
                                           "not analyzed"),
        ("chess960-inferred", "warning", "a [FEN] whose castling rights only Chess960 explains, with no "
                                         "Chess960 Variant tag: played as Chess960"),
    ),
}


def issue_code(code: str) -> IssueCode:
    """The registry entry of ``code``; raises ``KeyError`` for an unregistered code."""
    return ISSUE_CODES[code]
