"""The per-ply loop: play a game's SAN tokens and tag every position.

For each token, in order (compiled, this is C; the same source runs uncompiled):

1. **Resolve** the SAN to the one legal move it names (:func:`chessscan.core.san.resolve`):
   an error (not SAN, illegal, ambiguous) ends the game's play with an error issue holding
   the FEN before the move. A null move (``--``) is a pass, allowed when not in check.
2. **Play** it (:meth:`chessscan.core.position.Position.play`).
3. **Check**: the checkers are the mover's pieces attacking the other king; the kind is
   ``double`` with two, ``direct`` when the one checker stands where a piece arrived (the
   moved or promoted piece, or the castling rook), else ``discovered``; route flags say
   whether the move was an en-passant capture, castling or a promotion.
4. **Mate and stalemate**: the side to move has no legal move
   (:func:`chessscan.core.movegen.has_legal_move`, which stops at the first one).
5. **Keys**: the Polyglot Zobrist key, and the FIDE repetition key (art. 9.2.2: the
   en-passant file counts only when the capture is legal), whose occurrences are counted
   since the last capture or pawn move (earlier positions cannot recur).
6. **Automatic ends** (FIDE art. 5.2.2, 9.6): a dead position (checked after a capture or
   pawn move, the only moves that remove material), the fifth occurrence of a position, 150
   plies without a capture or pawn move; at one ply, mate and stalemate come first, then the
   seventy-five-move rule. Moves after a mate or stalemate are not played; after another
   automatic end, play goes on with one ``moves-after-end`` warning.
7. A written ``+``/``#`` that the position contradicts is a ``suffix-mismatch`` warning.
8. The row goes to the ``positions`` column buffers
   (:class:`~chessscan.analysis.rows.PositionRows`), with the move's clock, move time and
   evaluation annotations when the reader found any (``raw.notes``), which are also counted.
9. The move's UCI text goes into the game's moves hash (:data:`MOVES_HASH`), written as
   bytes into a scratch buffer that is fed to :mod:`hashlib` 64 KiB at a time: no object
   per ply. With ``options.moves_key`` the move's two bytes also go into the game's moves
   key (:data:`MOVES_KEY`).
"""

from __future__ import annotations

try:
    import cython
except ImportError:  # uncompiled, without Cython installed
    from chessscan.core import _cython_shim as cython

import threading
from hashlib import blake2b

import numpy as np

from chessscan.analysis.repetition import find_perpetuals
from chessscan.analysis.rows import PositionRows
from chessscan.core.attacks import tables
from chessscan.core.position import Position
from chessscan.core.rules import SEVENTYFIVE_MOVES_PLIES
from chessscan.core.san import IllegalMove, SanError, parse_san
from chessscan.core.zobrist import keys
from chessscan.readers.movetext import LOOSE_KEY, NOTE_NA, key_list, key_text, note_values

if cython.compiled:
    from cython.cimports.cpython.bytes import PyBytes_AS_STRING, PyBytes_FromStringAndSize
    from cython.cimports.cpython.pythread import PyThread_get_thread_ident
    from cython.cimports.cpython.unicode import PyUnicode_DecodeASCII
    from cython.cimports.libc.string import memcpy

if not cython.compiled:
    from chessscan.core.bitboard import BB_ALL, BB_FILE_A, BB_RANK_1, bit, lsb, msb
    from chessscan.core.attacks import bishop_attacks, rook_attacks
    from chessscan.core.movegen import attackers, has_legal_en_passant, has_legal_move, has_legal_move_known, pinned
    from chessscan.core.rules import is_insufficient_material
    from chessscan.core.san import NULL_PIECE, resolve_known, resolve_quick
    from chessscan.core.squares import BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK
    from chessscan.core.zobrist import CASTLE_MIX

T = tables()
K = keys()
COLOR_NAMES = ("black", "white")
# Automatic ends (``ended``): 0 none yet; the names are GameState.ended's.
END_NAMES = (None, "checkmate", "stalemate", "insufficient_material", "seventyfive_moves", "fivefold_repetition")
_CHECKMATE, _STALEMATE, _DEAD, _SEVENTYFIVE, _FIVEFOLD = 1, 2, 3, 4, 5
# Check kinds as PositionRows codes.
_KIND_NAMES = ("none", "direct", "discovered", "double")
# Row flag bits (PositionRows.add).
_IN_CHECK, _BY_EP, _BY_CASTLING, _BY_PROMOTION, _MATE, _STALE = 1, 2, 4, 8, 16, 32


# The loop's view of a SAN token, cached per token text (bounded: garbage input must not
# grow it without limit). Packed in one int: piece + 3 (0..9: -3 null, -2 a-side castling,
# -1 h-side castling, 1..6 a piece) | origin file (0..7, 8 = any) << 4 | origin rank << 8 |
# to-square (64 = none) << 12 | promotion << 19 | suffix (0, 1 '+', 2 '#') << 22 |
# names-its-origin-square pawn move (UCI-like) << 24.
_TOKENS: dict = {}
_TOKENS_MAX = 100_000
_KEY_TOKENS: dict = {}  # uncompiled: packed token by SAN key (the _TokenCache's role)
_LOOSE = LOOSE_KEY      # keys from here on stand for tokens without a key (their index)
_NO_TEXT = ""           # the SAN text resolve_known is given (its errors: see play_plies)
_NOTE_NA = NOTE_NA      # no annotation value (raw.notes)


def _token(san: str) -> int:
    """The packed token of ``san`` (see ``_TOKENS``); raises
    :class:`~chessscan.core.san.InvalidSan` as :func:`~chessscan.core.san.parse_san` does."""
    piece, from_mask, to, promotion, suffix = parse_san(san)
    file = rank = 8
    uci_like = 0
    if piece > 0 and from_mask != BB_ALL:
        # The origin the text names: a file, a rank, or both (a square) that holds the mask.
        sq = lsb(from_mask)
        if from_mask & (BB_FILE_A << (sq & 7)) == from_mask:
            file = sq & 7
        if from_mask & (BB_RANK_1 << (sq & 56)) == from_mask:
            rank = sq >> 3
        if piece == 1 and file < 8 and rank < 8:
            uci_like = 1
    token = ((piece + 3) | file << 4 | rank << 8 | (to if to >= 0 else 64) << 12 | promotion << 19
             | (0 if not suffix else 1 if suffix == "+" else 2) << 22 | uci_like << 24)
    if len(_TOKENS) < _TOKENS_MAX:
        _TOKENS[san] = token
    return token


if not cython.compiled:  # (compiled: C constants, in the .pxd)
    _TOKEN_SLOTS = 1 << 14  # _TokenCache slots (a power of two)
    _TOKEN_SLOT_BITS = 14
    _GOLDEN = 0x9E3779B97F4A7C15  # 2^64 / golden ratio, odd: Fibonacci hashing


class _TokenCache:
    """Packed tokens (see ``_TOKENS``) by SAN key (:mod:`chessscan.readers.movetext`): open
    addressing with linear probing over a C array of (key, token) pairs (compiled only), so
    that a ply needs no dict lookup and no text. Key 0 marks an empty slot (no SAN is
    empty); at most 3/4 of the slots are filled, keys beyond that are looked up in
    ``_TOKENS`` each time (a corpus has a few thousand distinct moves)."""

    def __init__(self) -> None:
        self.used = 0  # slots: a C array, zeroed at allocation

    def get(self, key: int) -> int:
        """The packed token of the SAN of ``key`` (not a loose token's); raises as
        :func:`_token` does."""
        h = (key * _GOLDEN) >> (64 - _TOKEN_SLOT_BITS)
        while True:
            k = self.slots[2 * h]
            if k == key:
                return self.slots[2 * h + 1]
            if k == 0:
                return self._fill(key, h)
            h = (h + 1) & (_TOKEN_SLOTS - 1)

    def _fill(self, key, h):
        """:meth:`get` on a miss: the token of ``key``, kept in the empty slot ``h``; apart
        so that the hit path stays small enough to inline."""
        token = _key_token(key)
        if self.used < _TOKEN_SLOTS // 4 * 3:
            self.slots[2 * h] = key  # (no Python code runs between these two stores)
            self.slots[2 * h + 1] = token
            self.used += 1
        return token


def _key_token(key: int) -> int:
    """The packed token of the SAN of ``key`` (not a loose token's)."""
    token = _strict_token(key)
    if token >= 0:
        return token
    if cython.compiled:
        # The key's bytes as text, without Python's int and bytes methods.
        n = 0
        while n < 8 and (key >> (8 * n)) & 255:
            text[n] = (key >> (8 * n)) & 255
            n += 1
        san = PyUnicode_DecodeASCII(text, n, cython.NULL)
    else:
        san = key_text(key)
    cached = _TOKENS.get(san)
    return cached if cached is not None else _token(san)


def _strict_token(key: int) -> int:
    """The packed token (see ``_TOKENS``) of the SAN of ``key`` when it is strict SAN
    (:data:`~chessscan.readers.movetext.SAN_FAST`, as the reader's plain-movetext pass
    checks it), read from the key's bytes: the one :func:`_token` gives for its text, with
    no text, regex or tuple; -1 for any other token (which :func:`_token` reads)."""
    n = 0
    while n < 8 and (key >> (8 * n)) & 255:
        n += 1
    suffix = 0
    c = (key >> (8 * n - 8)) & 255 if n else 0
    if c == 43:  # '+'
        suffix = 1
        n -= 1
    elif c == 35:  # '#'
        suffix = 2
        n -= 1
    if n < 2:
        return -1
    file = rank = 8
    promotion = 0
    c = key & 255
    if c == 79:  # 'O': O-O (h-side, piece -1) or O-O-O (a-side, -2)
        if n == 3 and (key >> 8) & 0xFFFF == 0x4F2D:  # "-O"
            piece = -1
        elif n == 5 and (key >> 8) & 0xFFFFFFFF == 0x4F2D4F2D:  # "-O-O"
            piece = -2
        else:
            return -1
        to = 64
    elif c == 78 or c == 66 or c == 82 or c == 81 or c == 75:  # N B R Q K: [a-h]?[1-8]?x? square
        piece = 2 if c == 78 else 3 if c == 66 else 4 if c == 82 else 5 if c == 81 else 6
        if n < 3:
            return -1
        tf = (key >> (8 * n - 16)) & 255
        tr = (key >> (8 * n - 8)) & 255
        if not (97 <= tf <= 104 and 49 <= tr <= 56):
            return -1
        i = 1
        c = (key >> (8 * i)) & 255
        if i < n - 2 and 97 <= c <= 104:
            file = c - 97
            i += 1
            c = (key >> (8 * i)) & 255
        if i < n - 2 and 49 <= c <= 56:
            rank = c - 49
            i += 1
            c = (key >> (8 * i)) & 255
        if i < n - 2 and c == 120:  # 'x'
            i += 1
        if i != n - 2:
            return -1
        to = (tr - 49) * 8 + tf - 97
    elif 97 <= c <= 104:  # a pawn: [a-h](x[a-h])?[1-8](=[NBRQ])?
        piece = 1
        tf = c
        i = 1
        if (key >> 8) & 255 == 120:  # 'x': the origin file names the pawn
            tf = (key >> 16) & 255
            if n < 4 or not 97 <= tf <= 104:
                return -1
            file = c - 97
            i = 3
        tr = (key >> (8 * i)) & 255
        if i >= n or not 49 <= tr <= 56:
            return -1
        to = (tr - 49) * 8 + tf - 97
        i += 1
        if i < n:
            if i + 2 != n or (key >> (8 * i)) & 255 != 61:  # '='
                return -1
            c = (key >> (8 * i + 8)) & 255
            promotion = 2 if c == 78 else 3 if c == 66 else 4 if c == 82 else 5 if c == 81 else 0
            if not promotion:
                return -1
    else:
        return -1
    return (piece + 3) | file << 4 | rank << 8 | to << 12 | promotion << 19 | suffix << 22


def _text_of(raw, key: int) -> str:
    """The SAN text of ``key`` in game ``raw``."""
    return raw.sans[key & 0xFFFFFFFF] if key >= _LOOSE else key_text(key)


class _History:
    """The repetition key after each ply of the current game (index 0: the start) and
    whether the ply gave check, for the repetition counts and the perpetual-check search; and the moves hash's byte
    buffer (``text``, :data:`_HASH_BUFFER` bytes), here so that the loop takes it as a typed
    buffer with no conversion per game."""

    def __init__(self) -> None:
        self.n = 0
        self.keys = np.zeros(1024, dtype=np.uint64)
        self.checks = np.zeros(1024, dtype=np.uint8)
        self.text = np.zeros(_HASH_BUFFER, dtype=np.uint8)

    def add(self, key: int, check: bool) -> None:
        if self.n == len(self.keys):
            keys = np.zeros(2 * self.n, dtype=np.uint64)
            keys[:self.n] = self.keys
            checks = np.zeros(2 * self.n, dtype=np.uint8)
            checks[:self.n] = self.checks
            self.keys = keys
            self.checks = checks
        self.keys[self.n] = key
        self.checks[self.n] = check
        self.n += 1


#: The games table's ``moves_hash``: BLAKE2b (RFC 7693) with a 16-byte digest (``digest_size=16``,
#: no key, salt or personalization), over the ASCII bytes of the start position's FEN (six
#: fields; the en-passant square only when a legal capture exists, as python-chess's
#: ``Board.fen()`` writes it; ``rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1`` for a
#: game with no [FEN]) followed by one space and the UCI text of each move played, in order
#: (castling as king to its square, ``e1g1``, in standard chess; king to rook in Chess960; a
#: null move ``0000``); written as 32 lowercase hex digits. In Python:
#: ``blake2b(" ".join([fen, *ucis]).encode(), digest_size=16).hexdigest()``.
MOVES_HASH = "blake2b-128"
#: The games table's ``moves_key`` (``--contained-games``): a game's mainline as bytes whose
#: prefixes are its unfinished copies' keys. The first 8 bytes are BLAKE2b with an 8-byte
#: digest of the start FEN's ASCII bytes (the FEN as :data:`MOVES_HASH` takes it); then 2
#: bytes a move, big-endian ``from << 9 | to << 3 | promotion`` (squares a1=0 .. h8=63, the
#: UCI text's squares; promotion 2 knight, 3 bishop, 4 rook, 5 queen, 6 king, else 0; a null
#: move 0), written as lowercase hex digits (4 a move). One game's mainline is a prefix of
#: another's from the same position exactly when its key is a prefix of the other's key.
MOVES_KEY = "blake2b-64 start, 2 bytes a move"
START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
_START_FEN_BYTES = START_FEN.encode("ascii")
_START_KEY = blake2b(_START_FEN_BYTES, digest_size=8).digest()
# The moves hash with the standard start's FEN taken in: a game from the start copies it, which
# costs less than a new hasher's keyword arguments.
_START_HASHER = blake2b(_START_FEN_BYTES, digest_size=16)
_HASH_BUFFER = 1 << 16  # bytes of UCI text handed to the hash at once
_PROMOTION_LETTERS = b"..nbrqk"  # UCI promotion letter by piece type (2 knight .. 5 queen)


class GameState:
    """What :func:`play_plies` learned about one game (one object per game, not per ply),
    read by :func:`~chessscan.analysis.game.analyze_game`. Compiled, an extension type: its
    fields are C struct members, so the per-game reads and writes of both functions enter
    no attribute dict."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Every field as before a game (analyze_games plays a source's games on one GameState)."""
        self.plies = 0
        self.outcome = "none"
        self.winner = None
        self.error = None          # (code, ply) of the first error while playing
        self.repeated = False
        self.white_first = True
        # The perpetual-check runs (repetition.Perpetual), found when a position repeated.
        self.perpetuals = ()
        self.ended = None          # first automatic end reached (see game.AUTOMATIC_ENDS)
        self.final_repetition = 0
        self.final_clock = 0
        self.mate_move_number = 0  # PGN move number of the mating move (0: a setup already mated)
        self.mate_kind = 0         # the mating check's kind (1..3) + 4 * (route + 1) if by a route
        self.clock_plies = 0       # plies played whose move carries a clock annotation
        self.eval_plies = 0        # ... an evaluation annotation
        self.moves_hash = None     # games.moves_hash (MOVES_HASH), None when an error stopped the replay
        self.moves_key = None      # games.moves_key (MOVES_KEY) with options.moves_key, None likewise
        # Checks given, by kind (direct, discovered, double) and by route.
        self.direct = self.discovered = self.double = 0
        self.en_passant = self.castling = self.promotion = 0


#: Move numbers that CheckTally counts in an array (checks at other move numbers: a dict).
_CHECK_MOVES = 512


class CheckTally:
    """The dataset's histograms of checks, which the per-ply loop adds to on checking plies;
    the base of :class:`~chessscan.analysis.game.Tally`. Compiled, C arrays indexed by the
    PGN move number and by the check route (no int object, no dict update); uncompiled,
    lists. ``checks_by_move`` and ``check_routes`` give them as dicts."""

    def __init__(self) -> None:
        self.check_move_counts = [0] * _CHECK_MOVES  # PGN move number (below _CHECK_MOVES) -> checks given
        self.check_route_counts = [0] * 12           # route * 4 + kind -> checks (game.CHECK_ROUTES)
        self.late_checks: dict[int, int] = {}         # other move numbers -> checks given

    @property
    def check_move_counts(self) -> list[int]:
        """Checks given by PGN move number, for move numbers below ``_CHECK_MOVES``: the count at
        the move number."""
        return [n for n in self._checks_by_move]

    @check_move_counts.setter
    def check_move_counts(self, counts: list[int]) -> None:
        self._checks_by_move = list(counts)

    @property
    def check_route_counts(self) -> list[int]:
        """Checks given by route and kind: the count at ``route * 4 + kind``."""
        return [n for n in self._check_routes]

    @check_route_counts.setter
    def check_route_counts(self, counts: list[int]) -> None:
        self._check_routes = list(counts)

    @property
    def checks_by_move(self) -> dict[int, int]:
        """Checks given by PGN move number (the move numbers of no check left out)."""
        out = {number: n for number, n in enumerate(self.check_move_counts) if n}
        out.update(self.late_checks)
        return out

    @property
    def check_routes(self) -> dict[int, int]:
        """Checks given by ``route * 4 + kind`` (the routes and kinds of no check left out)."""
        return {route: n for route, n in enumerate(self.check_route_counts) if n}


# Scratch space kept from game to game, one per thread: Dask runs tasks on threads, and
# play_plies calls Python code (add_issue) where another thread may run a game meanwhile.
_LOCAL = threading.local()


def _key_scratch(n: int):
    """This thread's byte buffer for a moves key of at least ``n`` bytes."""
    buf = getattr(_LOCAL, "key_bytes", None)
    if buf is None or len(buf) < n:
        buf = _LOCAL.key_bytes = np.zeros(max(n, 4096), dtype=np.uint8)
    return buf


# The thread that last took its scratch, and the scratch: (thread ident, scratch). Reading a
# threading.local costs as much as a few dict lookups; the thread ident next to nothing. One
# tuple, read once, so that a thread always gets its own scratch (the ident of a thread
# that ended may name a new thread, which then takes the ended thread's scratch).
# (A thread's ident is never 0. Compiled, the idents compare as C integers: no int object.)
_LAST_SCRATCH: tuple = (0, None)


def _scratch() -> tuple:
    """This thread's (_History, _TokenCache or None when uncompiled)."""
    global _LAST_SCRATCH
    ident = PyThread_get_thread_ident() if cython.compiled else threading.get_ident()
    last = _LAST_SCRATCH
    last_ident = last[0]
    if last_ident == ident:
        return last[1]
    try:
        scratch = _LOCAL.scratch
    except AttributeError:
        scratch = _LOCAL.scratch = (_History(), _TokenCache() if cython.compiled else None)
    _LAST_SCRATCH = (ident, scratch)
    return scratch


# What play_plies reads of its options, as bits: the rows kept (all, or the checks only), the
# FEN column, the moves hash, the moves key.
_KEEP_ALL, _KEEP_CHECKS, _WANT_FEN, _WANT_HASH, _WANT_KEY = 1, 2, 4, 8, 16
# The last options read and their bits: the options are a frozen dataclass, whose attribute
# reads cost more than the game's other per-game work of its kind. One tuple, read once.
_LAST_OPTIONS: tuple = (None, 0)


def option_bits(options) -> int:
    """``options``' bits (``_KEEP_ALL`` ...) as :func:`play_plies` reads them."""
    global _LAST_OPTIONS
    last = _LAST_OPTIONS
    if last[0] is options:
        return last[1]
    keep = options.positions
    bits = _KEEP_ALL if keep == "all" else _KEEP_CHECKS if keep == "checks" else 0
    if options.fen and bits:
        bits |= _WANT_FEN
    if options.moves_hash:
        bits |= _WANT_HASH
    if options.moves_key:
        bits |= _WANT_KEY
    _LAST_OPTIONS = (options, bits)
    return bits


def _origin_mask(token: int) -> int:
    """The squares a packed token's origin file and rank (8: none named) allow, a bitboard."""
    from_mask = BB_ALL
    if (token >> 4) & 15 < 8:
        from_mask &= BB_FILE_A << ((token >> 4) & 15)
    if (token >> 8) & 15 < 8:
        from_mask &= BB_RANK_1 << (8 * ((token >> 8) & 15))
    return from_mask


def _note_at(np_, i: int, k: int) -> int:
    """Annotation value ``k`` (0 clock, 1 move time, 2 centipawns, 3 mate; ``_NOTE_NA``: none)
    of ply ``i``, read from ``np_``, a C pointer to ``raw.notes`` (compiled only)."""
    memcpy(cython.address(value), np_ + 32 * i + 8 * k, 8)
    return value


def play_plies(raw, pos: Position, setup: bool, issues, rows, options, tally: CheckTally, state, add_issue) -> None:
    """Play ``raw.keys`` (the moves as SAN keys, :mod:`chessscan.readers.movetext`) of the
    RawGame ``raw`` from ``pos`` (mutated: the position after the last ply played; ``setup``:
    the game's [FEN] tag gave it), appending to ``rows``, the ``positions`` buffers, rows (as
    ``options.positions`` says) and to ``issues``, the ``issues`` buffers, issues, and filling
    ``state`` (a :class:`~chessscan.analysis.game.GameState`): plies, outcome-relevant end,
    winner, error, check counts, perpetual-check runs (when a position repeated), checks given,
    plies with a clock and with an evaluation annotation, and, with ``options.moves_hash``,
    ``moves_hash`` (:data:`MOVES_HASH`; None when an error stopped the replay or the option is
    off) and, with ``options.moves_key``, ``moves_key`` (:data:`MOVES_KEY`, hex text; None
    likewise)."""
    source = raw.source
    gi = raw.index
    bits = option_bits(options)
    keep_all = bits & _KEEP_ALL
    keep_checks = bits & _KEEP_CHECKS
    want_fen = bits & _WANT_FEN
    sid = rows.source_number(source) if keep_all or keep_checks else 0
    n_direct = n_discovered = n_double = n_ep = n_castling = n_promotion = 0
    history, token_cache = _scratch()
    history.n = 0
    hash_bytes = history.text
    # The moves hash: the start FEN first (the position as given, before any move).
    start_fen = pos.fen().encode("ascii") if setup else _START_FEN_BYTES
    want_hash = bits & _WANT_HASH
    hasher = None
    if want_hash:
        hasher = blake2b(start_fen, digest_size=16) if setup else _START_HASHER.copy()
    hn = 0
    want_key = bits & _WANT_KEY
    want_uci = bits & (_WANT_HASH | _WANT_KEY | _KEEP_ALL | _KEEP_CHECKS)
    kn = 0
    uto = 0
    if want_key:
        key_bytes = _key_scratch(2 * (len(raw.keys) // 8))

    us = pos.turn
    state.white_first = us
    legal_ep = pos.ep != 0 and has_legal_en_passant(pos)
    rkey = pos.repetition_key(legal_ep)
    rep = 1
    history.add(rkey, False)
    repeated = False
    ended = _start_status(pos) if setup else 0  # (the standard start has none)
    ended_ply = 0
    if ended == _CHECKMATE:  # a setup already mated: the side not to move has won
        state.winner = COLOR_NAMES[not us]
    warned_after_end = False
    # The side to move's king, checkers and pinned pieces, computed once per position for
    # the move test, the check columns and the next move's resolution.
    king = pos.king(us)
    checking = attackers(pos, not us, king, pos.occupied)
    blockers = pinned(pos, king, us)
    plies = 0
    piece = to = token = 0
    from_mask = 0
    keys = raw._keys  # (the keys property's field: compiled, a C read)
    if keys is None:
        keys = raw.keys
    n_tokens = len(keys) // 8
    if cython.compiled:
        kp = PyBytes_AS_STRING(keys)
    else:
        key_values = key_list(keys)
    notes = raw.notes
    n_notes = 0 if notes is None else len(notes) // 32  # plies with annotations, from the first
    n_clock = n_eval = 0
    note_clock = note_emt = note_cp = note_mate = _NOTE_NA
    if cython.compiled:
        np_ = cython.NULL  # (read only for i < n_notes)
    if n_notes:
        if cython.compiled:
            np_ = PyBytes_AS_STRING(notes)
        else:
            note_list = note_values(notes)
    for i in range(n_tokens):
        if cython.compiled:
            memcpy(cython.address(key), kp + 8 * i, 8)
            if i + 1 < n_tokens:
                # The next ply's token cache slot, fetched while this ply is played: the probe's
                # load (a slot of a 256 KiB table, out of the L1 cache) is the loop's longest wait.
                memcpy(cython.address(sk), kp + 8 * i + 8, 8)
                _prefetch(cython.address(token_cache.slots[2 * ((sk * _GOLDEN) >> (64 - _TOKEN_SLOT_BITS))]))
        else:
            key = key_values[i]
        if ended:
            san = _text_of(raw, key)
            if ended == _CHECKMATE or ended == _STALEMATE:
                line, col = raw.locate(i)
                add_issue(issues, tally, source, gi, line, col, i + 1, "warning", "moves-after-end",
                          f"{n_tokens - i} move(s) after the {END_NAMES[ended]}: {san} ... not played", san)
                break
            if not warned_after_end:
                warned_after_end = True
                line, col = raw.locate(i)
                add_issue(issues, tally, source, gi, line, col, i + 1, "warning", "moves-after-end",
                          f"the game ended automatically by {END_NAMES[ended].replace('_', ' ')} at ply "
                          f"{ended_ply}; play goes on from {san}", san)
        move_number = pos.fullmove_number
        # The common ply first, outside the try (entering one saves the exception state, a
        # ply's cost): a keyed token found in the cache (_TokenCache.get's hit path, here),
        # not a null move, which resolve_quick takes as named.
        token = -1
        move = -1
        if cython.compiled and key < _LOOSE:
            th = (key * _GOLDEN) >> (64 - _TOKEN_SLOT_BITS)
            while token_cache.slots[2 * th] != key and token_cache.slots[2 * th] != 0:
                th = (th + 1) & (_TOKEN_SLOTS - 1)
            if token_cache.slots[2 * th] == key:
                token = token_cache.slots[2 * th + 1]
                piece = (token & 15) - 3
                from_mask = _origin_mask(token)
                to = (token >> 12) & 127
                if piece != NULL_PIECE:
                    move = resolve_quick(pos, piece, from_mask, to, (token >> 19) & 7, blockers, checking)
        if move < 0 or (token >> 24) & 1:
            try:
                if token < 0:
                    if key >= _LOOSE:
                        san = _text_of(raw, key)
                        cached = _TOKENS.get(san)
                        token = cached if cached is not None else _token(san)
                    elif cython.compiled:
                        token = token_cache.get(key)  # (a miss: the hit was taken above)
                    else:  # a dict lookup is the fastest there
                        cached = _KEY_TOKENS.get(key)
                        if cached is None:
                            cached = _key_token(key)
                            if len(_KEY_TOKENS) < _TOKENS_MAX:
                                _KEY_TOKENS[key] = cached
                        token = cached
                    piece = (token & 15) - 3
                    from_mask = _origin_mask(token)
                    to = (token >> 12) & 127
                    # (resolve_known below returns what resolve_quick would have)
                if piece == NULL_PIECE:
                    san = _text_of(raw, key)
                    if checking:
                        raise IllegalMove(san, f"{san} is illegal: a null move leaves the king in check")
                    add_issue(issues, tally, source, gi, *raw.locate(i), i + 1, "warning", "null-move",
                              f"null move {san!r} played as a pass", san)
                    move = 0
                elif move < 0:  # not a move taken as named: the search, or the error
                    # The move's text only goes into resolve_known's errors: they are raised again
                    # with it below, where the text is made.
                    move = resolve_known(pos, piece, from_mask, to if to < 64 else -1, (token >> 19) & 7, _NO_TEXT,
                                         king, checking, blockers)
                if (token >> 24) & 1:
                    san = _text_of(raw, key)
                    add_issue(issues, tally, source, gi, *raw.locate(i), i + 1, "warning", "uci-move",
                              f"{san!r} names its origin square without a piece letter "
                              f"(long algebraic / UCI), not SAN", san)
            except SanError as exc:
                san = _text_of(raw, key)
                if not exc.san:  # resolve_known's, without the text: the same error, with it
                    try:
                        resolve_known(pos, piece, from_mask, to if to < 64 else -1, (token >> 19) & 7, san,
                                      king, checking, blockers)
                    except SanError as again:
                        exc = again
                line, col = raw.locate(i)
                number = f"{pos.fullmove_number}{'.' if us else '...'}"
                add_issue(issues, tally, source, gi, line, col, i + 1, "error", exc.code,
                          f"{number}{exc} [FEN before the move: {pos.fen()}]", san)
                state.error = (exc.code, i + 1)
                break

        # Play it (module doc, step 3).
        frm = move & 63
        to = (move >> 6) & 63
        promotion = move >> 12
        castling = False
        en_passant = False
        if move:
            # (A legal move lands on a piece of its own side only when castling: king onto rook.)
            castling = (pos.occupied_co[us] >> to & 1) == 1
            en_passant = pos.ep != 0 and pos.is_en_passant(move)  # (no call without an en-passant square)
            pos.play(move)
        else:
            pos.play_null()
        plies += 1
        # The move's UCI text into the moves hash (step 9); the UCI destination of a castling
        # move is the king's square, not the rook's (Chess960 aside). Not needed without the
        # hash, the key and rows (validate).
        if want_uci:
            uto = to if pos.chess960 or not castling else (frm & 56) + (2 if to < frm else 6)
            if want_hash:
                if hn > _HASH_BUFFER - 8:
                    hasher.update(_hash_text(hash_bytes, hn))
                    hn = 0
                if move and cython.compiled:
                    # Through a plain C pointer, which stays in a register: a byte store through the
                    # buffer (a memoryview) reloads its address after each store, and bytes gathered
                    # in a local array are merged into one word by shifts and masks.
                    hp = cython.address(hash_bytes[hn])
                    hp[0] = 32  # ' '
                    hp[1] = 97 + (frm & 7)
                    hp[2] = 49 + (frm >> 3)
                    hp[3] = 97 + (uto & 7)
                    hp[4] = 49 + (uto >> 3)
                    if promotion:
                        hp[5] = _PROMOTION_LETTERS[promotion]
                    hn += 6 if promotion else 5
                elif move:
                    hash_bytes[hn] = 32  # ' '
                    hash_bytes[hn + 1] = 97 + (frm & 7)
                    hash_bytes[hn + 2] = 49 + (frm >> 3)
                    hash_bytes[hn + 3] = 97 + (uto & 7)
                    hash_bytes[hn + 4] = 49 + (uto >> 3)
                    hn += 5
                    if promotion:
                        hash_bytes[hn] = _PROMOTION_LETTERS[promotion]
                        hn += 1
                else:
                    hash_bytes[hn] = 32  # ' '
                    hash_bytes[hn + 1] = hash_bytes[hn + 2] = hash_bytes[hn + 3] = hash_bytes[hn + 4] = 48  # '0000'
                    hn += 5
            if want_key:  # the move's two bytes (MOVES_KEY)
                kv = frm << 9 | uto << 3 | promotion if move else 0
                key_bytes[kn] = kv >> 8
                key_bytes[kn + 1] = kv & 255
                kn += 2
        mover = us
        us = pos.turn

        king = msb(pos.pieces[KING] & pos.occupied_co[us])  # (Position.king, without the call)
        # attackers(pos, not us, king, pos.occupied) and pinned(pos, king, us) in one, here: the
        # two calls cost as much as their work, and they read the same enemy sliders.
        occupied = pos.occupied
        theirs = pos.occupied_co[not us]
        queens = pos.pieces[QUEEN]
        rooks = (pos.pieces[ROOK] | queens) & theirs & T.rook_pseudo[king]
        bishops = (pos.pieces[BISHOP] | queens) & theirs & T.bishop_pseudo[king]
        checking = ((T.knight[king] & pos.pieces[KNIGHT])
                    | (T.king[king] & pos.pieces[KING])
                    | (T.pawn[us * 64 + king] & pos.pieces[PAWN])) & theirs
        if rooks:
            checking |= rook_attacks(king, occupied) & rooks
        if bishops:
            checking |= bishop_attacks(king, occupied) & bishops
        blockers = 0
        snipers = rooks | bishops
        while snipers:
            b = T.between[king * 64 + lsb(snipers)] & occupied
            if b and not b & (b - 1):
                blockers |= b
            snipers &= snipers - 1
        blockers &= pos.occupied_co[us]
        kind = 0
        flags = 0
        if checking:
            flags = _IN_CHECK
            if checking & (checking - 1):
                kind = 3
                n_double += 1
            # The checker stands where a piece arrived (the moved or promoted piece, or the
            # castling rook; none for a null move): told here, on checking plies only.
            elif move and checking & (bit((frm & 56) + (3 if to < frm else 5)) if castling else bit(to)):
                kind = 1
                n_direct += 1
            else:
                kind = 2
                n_discovered += 1
            if en_passant:
                flags |= _BY_EP
                n_ep += 1
            if castling:
                flags |= _BY_CASTLING
                n_castling += 1
            if promotion:
                flags |= _BY_PROMOTION
                n_promotion += 1
            # The dataset's histograms (CheckTally), as C integers.
            if 0 <= move_number < _CHECK_MOVES:
                tally._checks_by_move[move_number] += 1
            else:
                late = tally.late_checks
                late[move_number] = late.get(move_number, 0) + 1
            if en_passant or castling or promotion:
                tally._check_routes[(0 if en_passant else 1 if castling else 2) * 4 + kind] += 1

        clock = pos.halfmove_clock
        legal_ep = pos.ep != 0 and has_legal_en_passant(pos)
        rkey = pos.key ^ ((pos.castling_rights * CASTLE_MIX) & BB_ALL)  # Position.repetition_key, without the call
        if legal_ep:
            rkey ^= K.ep[pos.ep & 7]
        if history.n < len(history.keys):  # _History.add, without the call
            history.keys[history.n] = rkey
            history.checks[history.n] = checking != 0
            history.n += 1
        else:
            history.add(rkey, checking != 0)
        # The position's occurrences since the last capture or pawn move (clock plies back, the
        # history's start at most): the keys at an even distance, as the side to move alternates
        # every ply (a null move too). Under one comparison a ply on average in real games.
        rep = 1
        j = history.n - 3
        lo = history.n - 1 - clock
        if lo < 0:
            lo = 0
        while j >= lo:
            if history.keys[j] == rkey:
                rep += 1
            j -= 2
        if clock == 0:
            if not pos.pieces[PAWN] and not ended and is_insufficient_material(pos):
                ended = _DEAD
                ended_ply = plies
        else:
            if rep > 1:
                repeated = True
                if rep >= 5 and not ended:
                    ended = _FIVEFOLD
                    ended_ply = plies
        if clock >= SEVENTYFIVE_MOVES_PLIES and (not ended or ended_ply == plies):
            ended = _SEVENTYFIVE  # (reported before a fivefold repetition at the same ply)
            ended_ply = plies
        mate = False
        # has_legal_move_known's first test, without the call: out of check, a pawn that is not
        # pinned and has an empty square ahead can push (most positions).
        if checking or king < 0:
            has_move = has_legal_move_known(pos, king, checking, blockers)
        else:
            pawns = pos.pieces[PAWN] & pos.occupied_co[us] & ~blockers
            has_move = (((pawns << 8) if us else (pawns >> 8)) & ~occupied & BB_ALL) != 0 \
                or has_legal_move_known(pos, king, checking, blockers)
        if not has_move:
            mate = checking != 0
            flags |= _MATE if mate else _STALE
            if not ended or ended_ply == plies:  # mate and stalemate come before the other ends
                ended = _CHECKMATE if mate else _STALEMATE
                ended_ply = plies
                if mate:
                    state.winner = COLOR_NAMES[mover]
                    state.mate_move_number = move_number
                    state.mate_kind = kind + (4 if en_passant else 8 if castling else 12 if promotion else 0)

        suffix = (token >> 22) & 3
        if suffix or checking:
            problem = _suffix_problem(suffix, checking != 0, mate)
            if problem is not None:
                san = _text_of(raw, key)
                line, col = raw.locate(i)
                add_issue(issues, tally, source, gi, line, col, plies, "warning", "suffix-mismatch",
                          f"{move_number}{'.' if mover else '...'}{san}: {problem}", san)

        if keep_all or (keep_checks and checking):
            if i < n_notes:
                if cython.compiled:
                    note_clock = _note_at(np_, i, 0)
                    note_emt = _note_at(np_, i, 1)
                    note_cp = _note_at(np_, i, 2)
                    note_mate = _note_at(np_, i, 3)
                else:
                    note_clock, note_emt, note_cp, note_mate = note_list[4 * i:4 * i + 4]
            zobrist = pos.key ^ pos.ep_key() if pos.ep else pos.key  # (ep_key is 0 without an en-passant square)
            if cython.compiled and move and 0 < key < _LOOSE and rows.n < rows.cap \
                    and rows.san_len + 8 <= len(rows.san_data):
                # PositionRows.add_key and set_notes for a move with a keyed SAN, here: a call
                # per ply costs as much as the writes.
                row = rows.n
                rows.game_index[row] = gi
                rows.source_id[row] = sid
                rows.ply[row] = plies
                rows.move_number[row] = move_number
                rows.color[row] = mover
                rows.check_kind[row] = kind
                if flags:
                    nb = rows.bitmap_bytes
                    bit8 = 1 << (row & 7)
                    for j in range(6):
                        if flags >> j & 1:
                            rows.flag_bits[j * nb + (row >> 3)] |= bit8
                rows.halfmove_clock[row] = clock
                rows.zobrist[row] = zobrist
                rows.repetition[row] = rep
                # The key's bytes up to its last non-zero one (PositionRows._add_key), and the
                # UCI text, each in one copy (room: the test above; the UCI buffer holds 5 bytes
                # a row): a byte store at a time reloads the buffer's address after each store.
                for j in range(8):
                    san_text[j] = (key >> (8 * j)) & 255
                j = rows.san_len
                memcpy(cython.address(rows.san_data[j]), san_text, 8)
                j += (msb(key) >> 3) + 1
                rows.san_len = j
                rows.san_offsets[row + 1] = j
                j = rows.uci_len
                if want_hash:  # (hp + 1: the UCI text, in the moves hash's buffer above)
                    memcpy(cython.address(rows.uci_data[j]), hp + 1, 4)
                else:
                    uci_text[1] = 97 + (frm & 7)
                    uci_text[2] = 49 + (frm >> 3)
                    uci_text[3] = 97 + (uto & 7)
                    uci_text[4] = 49 + (uto >> 3)
                    memcpy(cython.address(rows.uci_data[j]), uci_text + 1, 4)
                j += 4
                if promotion:
                    rows.uci_data[j] = _PROMOTION_LETTERS[promotion]
                    j += 1
                rows.uci_len = j
                rows.uci_offsets[row + 1] = j
                j = rows.checkers_len
                if checking:  # the checking squares' names, space-separated, a1 first (_add_checkers)
                    if j + 192 > len(rows.checkers_data):  # (3 bytes a square at most)
                        rows._grow_text(2, j + 192)
                    b = checking
                    while b:
                        ri = lsb(b)
                        b &= b - 1
                        rows.checkers_data[j] = 97 + (ri & 7)
                        rows.checkers_data[j + 1] = 49 + (ri >> 3)
                        rows.checkers_data[j + 2] = 32  # ' '
                        j += 3
                    j -= 1  # (no space after the last)
                    rows.checkers_len = j
                rows.checkers_offsets[row + 1] = j
                rows.n = row + 1
                if i < n_notes:
                    nb = rows.bitmap_bytes
                    bit8 = 1 << (row & 7)
                    if note_clock != _NOTE_NA:
                        rows.clock_ms[row] = note_clock
                        rows.note_bits[row >> 3] |= bit8
                    if note_emt != _NOTE_NA:
                        rows.emt_ms[row] = note_emt
                        rows.note_bits[nb + (row >> 3)] |= bit8
                    if note_cp != _NOTE_NA:
                        rows.eval_cp[row] = note_cp
                        rows.note_bits[2 * nb + (row >> 3)] |= bit8
                    if note_mate != _NOTE_NA:
                        rows.eval_mate[row] = note_mate
                        rows.note_bits[3 * nb + (row >> 3)] |= bit8
                if want_fen:
                    rows.add_fen(pos.fen())
            else:
                loose = _text_of(raw, key) if key >= _LOOSE else None
                if move:
                    row = rows.add_key(sid, gi, plies, move_number, mover, key, loose, frm,
                                       to if pos.chess960 or not castling else (frm & 56) + (2 if to < frm else 6),
                                       promotion, kind, checking, flags, clock, zobrist, rep)
                else:
                    row = rows.add_key(sid, gi, plies, move_number, mover, key, loose, 0, 0, 0, kind, checking, flags,
                                       clock, zobrist, rep)
                if i < n_notes:
                    rows.set_notes(row, note_clock, note_emt, note_cp, note_mate)
                if want_fen:
                    rows.add_fen(pos.fen())

    state.direct += n_direct
    state.discovered += n_discovered
    state.double += n_double
    state.en_passant += n_ep
    state.castling += n_castling
    state.promotion += n_promotion
    state.plies = plies
    if n_notes:
        # The plies played with a clock and with an evaluation annotation, counted from the
        # buffer after the loop: in it, the count costs more than this loop of its own.
        for i in range(plies if plies < n_notes else n_notes):
            if cython.compiled:
                if _note_at(np_, i, 0) != _NOTE_NA:
                    n_clock += 1
                if _note_at(np_, i, 2) != _NOTE_NA or _note_at(np_, i, 3) != _NOTE_NA:
                    n_eval += 1
            else:
                if note_list[4 * i] != _NOTE_NA:
                    n_clock += 1
                if note_list[4 * i + 2] != _NOTE_NA or note_list[4 * i + 3] != _NOTE_NA:
                    n_eval += 1
        state.clock_plies = n_clock
        state.eval_plies = n_eval
    state.repeated = repeated
    if repeated:
        # The perpetual checks, read from this thread's buffers while they hold the game
        # (compiled: the buffers as they are, no copy and no conversion).
        if cython.compiled:
            state.perpetuals = _runs(_perpetual_table(), history.keys[:history.n], history.checks[:history.n],
                                     state.white_first)
        else:
            state.perpetuals = find_perpetuals(np.asarray(history.keys)[:history.n],
                                               np.asarray(history.checks)[:history.n], state.white_first)
    state.final_repetition = rep
    state.final_clock = pos.halfmove_clock
    state.ended = END_NAMES[ended]
    if state.error is None:
        if want_hash:
            if hn:
                hasher.update(_hash_text(hash_bytes, hn))
            state.moves_hash = hasher.hexdigest()
        if want_key:
            state.moves_key = ((blake2b(start_fen, digest_size=8).digest() if setup else _START_KEY)
                               + bytes(key_bytes[:kn])).hex()


def _hash_text(text, n: int) -> bytes:
    """The first ``n`` bytes of the moves hash's buffer ``text`` as bytes (a copy of a few
    hundred bytes costs less than a memoryview slice object)."""
    if cython.compiled:
        return PyBytes_FromStringAndSize(cython.cast(cython.p_char, cython.address(text[0])), n)
    return bytes(text[:n])


def _suffix_problem(suffix: int, check: bool, mate: bool):
    """What is wrong with a written ``+`` (1) / ``#`` (2) (PGN standard §8.2.3.5), or None."""
    if suffix == 2 and not mate:
        return "it is written as mate but is " + ("only check" if check else "not check")
    if suffix == 1 and not check:
        return "it is written as check but does not give check"
    if mate and suffix != 2:
        return "it mates but is written without '#'"
    return None


def _start_status(pos: Position) -> int:
    """Automatic end already true of a start position (FEN setups): mate, stalemate, dead
    position or the seventy-five-move count; 0 if none."""
    if not has_legal_move(pos):
        return _CHECKMATE if attackers(pos, not pos.turn, pos.king(pos.turn), pos.occupied) else _STALEMATE
    if is_insufficient_material(pos):
        return _DEAD
    if pos.halfmove_clock >= SEVENTYFIVE_MOVES_PLIES:
        return _SEVENTYFIVE
    return 0
