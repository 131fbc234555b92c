"""One PGN game through the detector: play every SAN, tag every position, record the game.

Input is a :class:`~chessscan.readers.pgn.RawGame` (tags and SAN tokens, no chess rules);
output is appended to column buffers, plain ``dict[str, list]`` per table (``positions``,
``games``, ``issues``) whose columns are declared in :mod:`chessscan.reports.schema`.
Nothing here allocates an object per ply: each ply appends scalars to column lists.
"""

from __future__ import annotations

try:
    import cython
except ImportError:  # uncompiled, without Cython installed
    from chessscan.core import _cython_shim as cython

from collections import Counter

from chessscan.analysis.options import AnalysisOptions
from chessscan.analysis.plies import CheckTally, GameState, play_plies
from chessscan.analysis.sampling import RARE_KINDS, REASONS, describe, reason_indices
from chessscan.core.checks import DIRECT, DISCOVERED, DOUBLE
from chessscan.core.fen import fault_severity, validate_setup
from chessscan.core.position import Position
from chessscan.core.rules import FIFTY_MOVES_PLIES

# Standard chess as exporters name it: lichess ("Standard", "From Position"), python-chess's
# aliases ("Chess", "Classical", "Normal"), xboard, cutechess and TCEC ("normal", "standard"),
# kokopu ("Regular"); ChessBase and Scid write no Variant tag for it.
STANDARD_VARIANTS = frozenset({"", "standard", "chess", "normal", "from position", "fromposition",
                               "from_position", "classical", "regular", "?"})
CHESS960_VARIANTS = frozenset({"chess960", "chess 960", "chess-960", "960", "fischerandom", "fischer random",
                               "fischerrandom", "freestyle", "chess960 (fischer random)"})

STANDARD_START = Position.initial()

if cython.compiled:
    from cython.cimports.cpython.exc import PyErr_CheckSignals
    from cython.cimports.cpython.unicode import PyUnicode_1BYTE_DATA, PyUnicode_1BYTE_KIND, PyUnicode_KIND


def variant_kind(tags: dict[str, str]) -> str | None:
    """``'standard'``, ``'chess960'``, or None for a variant chessscan does not play
    (decided by the ``Variant`` tag, PGN standard §9.8 and common exporter spellings)."""
    return _kind_of(tags.get("Variant", ""))


_STANDARD = "standard"
_CHESS960 = "chess960"


def _kind_of(variant: str) -> str | None:
    v = variant.strip().lower()
    if v in STANDARD_VARIANTS:
        return _STANDARD
    if v in CHESS960_VARIANTS:
        return _CHESS960
    return None


def _int_or_none(text: str | None) -> int | None:
    if text is None:
        return None
    text = text.strip()
    if text.isdigit() and len(text) < 10:
        try:
            return int(text)
        except ValueError:  # digits int() does not take: superscripts, circled digits
            return None
    return None


def time_control(value: str | None) -> tuple[float | None, float | None]:
    """(base, increment) in seconds of a ``TimeControl`` tag (PGN standard §9.6.1), from its
    first period: ``300+3`` is (300, 3); ``40/7200:3600`` (40 moves in 7200 s, then 3600 s)
    is (7200, 0), as is a sudden-death ``7200``; ``40/5400+30:1800+30`` is (5400, 30); a
    sandclock ``*180`` is (180, None). ``-`` (no time control), ``?`` (unknown), no tag and
    anything else is (None, None). Seconds may have a fraction (``1800+5.232``)."""
    if value is None:
        return None, None
    first = value.strip().split(":", 1)[0].strip()
    if first.startswith("*"):
        base = _seconds(first[1:])
        return base, None
    moves, slash, rest = first.partition("/")
    if slash:
        if not moves.isdigit() or not moves.isascii():
            return None, None
        first = rest
    base, plus, increment = first.partition("+")
    base_s = _seconds(base)
    increment_s = _seconds(increment) if plus else 0.0
    if base_s is None or increment_s is None:
        return None, None
    return base_s, increment_s


def _seconds(text: str) -> float | None:
    """A non-negative number of seconds written as digits with an optional fraction, else None."""
    whole, point, fraction = text.partition(".")
    if (not whole.isdigit() or not whole.isascii() or len(whole) > 9
            or (point and (not fraction.isdigit() or not fraction.isascii()))):
        return None
    return float(text)


# Memos of pure functions of a tag value read every game: a dataset repeats a few spellings of
# Variant and a few thousand Elo values, and a dict hit costs less than the call. Bounded,
# so a file of ever-new values only stops filling them.
_MEMO_SIZE = 8192
_UNSEEN = object()
_KIND_MEMO: dict = {None: _STANDARD}   # Variant tag value (None: no tag) -> variant kind
_ELO_MEMO: dict = {None: None}          # Elo tag value -> _int_or_none(value)
_TIME_CONTROL_MEMO: dict = {None: (None, None)}  # TimeControl tag value -> time_control(value)
# The last value looked up in each, and what it gave, as one tuple (read once: threads see a
# consistent pair): the reader hands out the same str while a tag's value repeats from game to
# game, so an identity test spares the memo's hashing and lookup.
_LAST_KIND: tuple = (None, _STANDARD)
_LAST_TIME_CONTROL: tuple = (None, (None, None))
# The last options and their moves_key (an attribute read of a dataclass costs more than this).
_LAST_MOVES_KEY: tuple = (None, False)


# The ints of the common Elo values, made once: a game's two Elo values then make no int object.
_ELO_INTS = tuple(range(4000))


def _elo(text):
    """``_int_or_none(text)`` of an Elo tag's value: its digits read here when they are 1 to 9
    ASCII digits (the common value), else memoized."""
    if cython.compiled and isinstance(text, str):
        n = len(text)
        if 0 < n < 10 and PyUnicode_KIND(text) == PyUnicode_1BYTE_KIND:
            data = PyUnicode_1BYTE_DATA(text)
            elo = 0
            k = 0
            while k < n and 48 <= data[k] <= 57:
                elo = elo * 10 + (data[k] - 48)
                k += 1
            if k == n:
                return _ELO_INTS[elo] if elo < 4000 else elo
    return _memoized(_ELO_MEMO, _int_or_none, text)


def _memoized(memo: dict, fn, value):
    """``fn(value)``, kept in ``memo`` while it holds fewer than ``_MEMO_SIZE`` values."""
    found = memo.get(value, _UNSEEN)
    if found is _UNSEEN:
        found = fn(value)
        if len(memo) < _MEMO_SIZE:
            memo[value] = found
    return found


#: Check routes as the per-ply loop numbers them: ``route * 4 + kind`` (kind 1 direct,
#: 2 discovered, 3 double; see :mod:`chessscan.analysis.plies`).
CHECK_ROUTES = ("en_passant", "castling", "promotion")
_KINDS = (None, DIRECT, DISCOVERED, DOUBLE)


def _int_keyed(counts: dict) -> dict[str, int]:
    """``{int: count}`` as JSON-ready ``{"int": count}``, in numeric order."""
    return {str(k): counts[k] for k in sorted(counts)}


def _merge_counts(into: dict, other: dict) -> None:
    for k, v in other.items():
        into[k] = into.get(k, 0) + v


class Tally(CheckTally):
    """Dataset counters, updated once per game (the histograms of checks, CheckTally's, also on
    checking plies). Compiled, an extension type: analyze_game's updates enter no attribute dict.

    ``as_dict()`` is the run's ``summary.json``; merging the tallies of any split of the input
    (``--jobs``, ``--dask``) gives the same dict as one tally of the whole.
    """

    def __init__(self) -> None:
        CheckTally.__init__(self)  # checks_by_move, check_routes (the per-ply loop's)
        self.games = 0
        self.games_ok = 0
        self.games_with_errors = 0
        self.unsupported_variant = 0
        self.positions = 0
        # The counts analyze_game adds to every game, as C integers and C arrays indexed by a
        # small int (compiled: no int object, no dict update, no hashing of a tuple key;
        # uncompiled, lists); the properties outcome_counts, result_counts and short_lengths
        # give the arrays as lists, and checks, outcomes, results and game_lengths as dicts.
        self.checks_direct = self.checks_discovered = self.checks_double = 0
        self.outcome_counts = [0] * len(OUTCOMES)      # OUTCOMES[i] -> games
        self.result_counts = [0] * len(_RESULT_KEYS)   # _RESULT_KEYS[i] -> games
        self.short_lengths = [0] * _SHORT_GAME_PLIES   # plies replayed (fewer than _SHORT_GAME_PLIES) -> games
        self.long_lengths: dict[int, int] = {}         # plies replayed (more) -> games
        self.checkmates = 0
        self.stalemates = 0
        self.issues = Counter()
        self.issues_by_severity = Counter()
        self.epd_positions = 0
        self.epd_invalid = 0
        self.epd_outcomes = Counter()  # single / double checks, checkmates, stalemates
        self.perpetuals = 0            # runs reaching a third occurrence
        self.twofold_check_cycles = 0  # runs that reached only a second one
        self.cross_check_mode = "off"
        self.cross_checked_games = 0
        self.cross_checked_positions = 0
        self.disagreements = 0
        # Histograms (besides CheckTally's).
        self.checkmates_by_move: dict[int, int] = {}  # move number of the mating move -> games
        self.checkmate_kinds: dict[int, int] = {}  # GameState.mate_kind -> games
        self.issues_by_source: dict[tuple, int] = {}  # (source, severity) -> issues
        self.rare_games = [0] * len(RARE_KINDS)  # games holding each rare kind (sampling.RARE_KINDS)
        self.sampled_by = [0] * len(REASONS)     # cross-checked games per sample reason (sampling.REASONS)

    def merge(self, other: "Tally") -> None:
        for name in ("games", "games_ok", "games_with_errors", "unsupported_variant", "positions",
                     "checkmates", "stalemates", "epd_positions", "epd_invalid", "perpetuals",
                     "twofold_check_cycles", "cross_checked_games", "cross_checked_positions",
                     "disagreements", "checks_direct", "checks_discovered", "checks_double"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.outcome_counts = [a + b for a, b in zip(self.outcome_counts, other.outcome_counts)]
        self.result_counts = [a + b for a, b in zip(self.result_counts, other.result_counts)]
        self.short_lengths = [a + b for a, b in zip(self.short_lengths, other.short_lengths)]
        self.check_move_counts = [a + b for a, b in zip(self.check_move_counts, other.check_move_counts)]
        self.check_route_counts = [a + b for a, b in zip(self.check_route_counts, other.check_route_counts)]
        if other.cross_check_mode != "off":
            self.cross_check_mode = other.cross_check_mode
        self.rare_games = [a + b for a, b in zip(self.rare_games, other.rare_games)]
        self.sampled_by = [a + b for a, b in zip(self.sampled_by, other.sampled_by)]
        self.epd_outcomes.update(other.epd_outcomes)
        self.issues.update(other.issues)
        self.issues_by_severity.update(other.issues_by_severity)
        for name in ("late_checks", "checkmates_by_move", "checkmate_kinds", "long_lengths", "issues_by_source"):
            _merge_counts(getattr(self, name), getattr(other, name))

    @property
    def outcome_counts(self) -> list[int]:
        """Games by outcome, ``OUTCOMES[i]`` at ``i``."""
        return [n for n in self._outcome_counts]

    @outcome_counts.setter
    def outcome_counts(self, counts: list[int]) -> None:
        self._outcome_counts = list(counts)

    @property
    def result_counts(self) -> list[int]:
        """Games by (Result tag, board verdict), ``_RESULT_KEYS[i]`` at ``i``."""
        return [n for n in self._result_counts]

    @result_counts.setter
    def result_counts(self, counts: list[int]) -> None:
        self._result_counts = list(counts)

    @property
    def short_lengths(self) -> list[int]:
        """Games by plies replayed, for fewer than ``_SHORT_GAME_PLIES`` plies: ``plies`` at ``plies``."""
        return [n for n in self._short_lengths]

    @short_lengths.setter
    def short_lengths(self, counts: list[int]) -> None:
        self._short_lengths = list(counts)

    @property
    def checks(self) -> dict[int, int]:
        """Checks given, by kind (``DIRECT``, ``DISCOVERED``, ``DOUBLE``)."""
        return {DIRECT: self.checks_direct, DISCOVERED: self.checks_discovered, DOUBLE: self.checks_double}

    @property
    def outcomes(self) -> dict[str, int]:
        """Games by ``games.outcome`` (the outcomes of no game left out)."""
        return {OUTCOMES[i]: n for i, n in enumerate(self.outcome_counts) if n}

    @property
    def results(self) -> dict[tuple, int]:
        """Games by (Result tag, board verdict): ``(RESULT_ORDER[i], RESULT_VERDICTS[v])``."""
        return {_RESULT_KEYS[i]: n for i, n in enumerate(self.result_counts) if n}

    @property
    def game_lengths(self) -> dict[int, int]:
        """Games by plies replayed."""
        out = {plies: n for plies, n in enumerate(self.short_lengths) if n}
        out.update(self.long_lengths)
        return out

    def count_rare(self, kinds: int) -> None:
        """Count a game's rare kinds (a mask, bit ``i`` = ``RARE_KINDS[i]``)."""
        for i in range(len(RARE_KINDS)):
            if kinds >> i & 1:
                self.rare_games[i] += 1

    def count_sampled(self, reasons: int) -> None:
        """Count a cross-checked game's sample reasons (a mask, bit ``i`` = ``RARE_KINDS[i]``,
        :data:`~chessscan.analysis.sampling.BASE_BIT` the base rate)."""
        for i in reason_indices(reasons):
            self.sampled_by[i] += 1

    def as_dict(self) -> dict:
        epd = {"epd_positions": self.epd_positions, "epd_valid": self.epd_positions - self.epd_invalid,
               "epd_invalid": self.epd_invalid,
               "epd_checks": {k: self.epd_outcomes.get(k, 0) for k in ("single", "double")},
               "epd_checkmates": self.epd_outcomes.get("checkmate", 0),
               "epd_stalemates": self.epd_outcomes.get("stalemate", 0)} if self.epd_positions else {}
        routes = self.check_route_counts
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
            "outcomes": dict(sorted(self.outcomes.items())),
            "perpetual_checks": self.perpetuals,
            "twofold_check_cycles": self.twofold_check_cycles,
            "issues_by_severity": dict(self.issues_by_severity),
            "issues_by_code": dict(sorted(self.issues.items())),
            "cross_check": self._cross_check_dict(),
            "check_routes": {route: {kind: routes[r * 4 + k] for k, kind in enumerate(_KINDS) if k}
                             for r, route in enumerate(CHECK_ROUTES)},
            "checkmate_kinds": {kind: sum(n for m, n in self.checkmate_kinds.items() if m & 3 == k)
                                for k, kind in enumerate(_KINDS) if k},
            "checkmate_routes": {route: sum(n for m, n in self.checkmate_kinds.items() if m >> 2 == r + 1)
                                 for r, route in enumerate(CHECK_ROUTES)},
            "results": self._results(),
            "issues_by_source": self._issues_by_source(),
            "histograms": {
                "game_length_plies": _int_keyed(self.game_lengths),
                "checks_by_move_number": _int_keyed(self.checks_by_move),
                "checkmates_by_move_number": _int_keyed(self.checkmates_by_move),
            },
        }

    def _results(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for tag in RESULT_ORDER:
            row = {v: self.results.get((tag, v), 0) for v in RESULT_VERDICTS}
            if any(row.values()):
                out[tag] = row
        return out

    def _issues_by_source(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for source, severity in sorted(self.issues_by_source):
            out.setdefault(source, {"error": 0, "warning": 0})[severity] = \
                self.issues_by_source[source, severity]
        return out

    def _cross_check_dict(self) -> dict:
        out = {"mode": self.cross_check_mode, "replays": describe(self.cross_check_mode),
               "games": self.cross_checked_games, "positions": self.cross_checked_positions,
               "disagreements": self.disagreements}
        if self.cross_check_mode == "sample":
            # A game sampled for several reasons counts under each.
            out["games_sampled_by"] = dict(zip(REASONS, self.sampled_by))
            out["games_holding"] = dict(zip(RARE_KINDS, self.rare_games))
        return out


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
    key = (source, severity)
    tally.issues_by_source[key] = tally.issues_by_source.get(key, 0) + 1


# An automatic end (no claim needed) stops the game; moves after it are a warning.
AUTOMATIC_ENDS = ("checkmate", "stalemate", "insufficient_material", "seventyfive_moves",
                  "fivefold_repetition")
# Every value of games.outcome: none, an automatic end, or what the final position lets a
# player claim.
OUTCOMES = ("none", *AUTOMATIC_ENDS, "threefold_repetition", "fifty_moves")
_OUTCOME_INDEX = {outcome: i for i, outcome in enumerate(OUTCOMES)}
_CHECKMATE, _STALEMATE = _OUTCOME_INDEX["checkmate"], _OUTCOME_INDEX["stalemate"]
_THREEFOLD, _FIFTY = _OUTCOME_INDEX["threefold_repetition"], _OUTCOME_INDEX["fifty_moves"]
# Tally.short_lengths counts the games of each length below this many plies in a list (the
# longer ones by length in a dict).
_SHORT_GAME_PLIES = 1024
DECISIVE = {"1-0": "white", "0-1": "black"}
# Ends that decide the result whatever the players or an arbiter wrote (FIDE Laws art. 5.1.1
# checkmate, 5.2.1 stalemate, 5.2.2 dead position), and how a result-mismatch names them.
# A Result contradicting the other automatic ends (art. 9.6, in the Laws since July 2014)
# stays unreported: older games were played on without them.
RESULT_DECIDING_ENDS = {"checkmate": "checkmate", "stalemate": "stalemate",
                        "insufficient_material": "a dead position (insufficient material, FIDE art. 5.2.2)"}
# The Result tag's values (PGN standard §8.1.1.7).
RESULT_VALUES = {"1-0", "0-1", "1/2-1/2", "*"}
# summary.json "results": the Result tag (as written, or "missing" / "other"), and what the
# game's text and board say of it (games.result_consistent true / false / null).
RESULT_ORDER = tuple("1-0 0-1 1/2-1/2 * other missing".split())
RESULT_VERDICTS = ("consistent", "inconsistent", "not_checked")
_RESULT_INDEX = {v: RESULT_ORDER.index(v) for v in RESULT_VALUES}  # a valid Result tag's place in RESULT_ORDER


def _result_index(text) -> int:
    """The place in :data:`RESULT_ORDER` of ``text``, a Result tag's value (or a movetext
    result token): a result's, 4 for another value, 5 for None. Compiled, the characters of
    one-byte text are compared in C (a new str is not hashed)."""
    if text is None:
        return 5
    if cython.compiled and isinstance(text, str) and PyUnicode_KIND(text) == PyUnicode_1BYTE_KIND:
        n = len(text)
        data = PyUnicode_1BYTE_DATA(text)
        if n == 3 and data[1] == 45:  # 1-0, 0-1
            if data[0] == 49 and data[2] == 48:
                return 0
            if data[0] == 48 and data[2] == 49:
                return 1
        elif n == 7 and (data[0] == 49 and data[1] == 47 and data[2] == 50 and data[3] == 45 and data[4] == 49
                         and data[5] == 47 and data[6] == 50):  # 1/2-1/2
            return 2
        elif n == 1 and data[0] == 42:  # *
            return 3
        return 4
    return _RESULT_INDEX.get(text, 4)
# The keys of Tally.results, made once: (RESULT_ORDER[i], RESULT_VERDICTS[v]) at 3 * i + v.
_RESULT_KEYS = tuple((tag, verdict) for tag in RESULT_ORDER for verdict in RESULT_VERDICTS)
# _check_result's verdict bits: the result is inconsistent; a result-mismatch error.
_INCONSISTENT, _MISMATCH = 1, 2


def analyze_game(raw, tables: dict[str, dict[str, list]], options: AnalysisOptions, tally: Tally,
                 state: GameState = None) -> bool:
    """Analyze one game, appending its rows to ``tables`` and its counts to ``tally``.

    ``raw`` is a RawGame: ``source, index, byte_offset, line, tags, sans, result, issues,
    locate(ply_index), tag_line(name)`` (an issue about a tag stands at its line). A game
    with an error keeps its plies up to the error; the error is recorded (code, line, column,
    ply, SAN, FEN before the move). Never raises for bad input.

    Returns the game's rare kinds of event as a mask, bit ``i`` for
    ``sampling.RARE_KINDS[i]`` (double check, en-passant, promotion or castling check,
    checkmate, stalemate, perpetual check; 0: none), which the cross-check sample draws on.
    ``state``: a GameState to play the game on (reset first), else a new one.
    """
    source = raw.source
    gi = cython.declare(object, raw.index)  # (one int object: the games row's, the result check's, the issues')
    tags = cython.declare(dict, raw.tags)  # (compiled: dict lookups in C, no bound method)
    columns = _game_columns(tables)
    issues = columns.issues
    tally.games += 1
    # The first error in the text: (position, code, ply). Positions order the tag section
    # (-1: a reader error there; 0: the [FEN]) before the movetext, where a reader error
    # standing at ply p (before the move p would be) comes before a move error at ply p.
    first_error = None

    read_error = False  # a reader error: the moves read may not be the whole game
    for iss in raw.issues:
        add_issue(issues, tally, source, gi, iss.line, iss.column, iss.ply, iss.severity, iss.code, iss.message)
        if iss.severity == "error":
            read_error = True
            if first_error is None:
                first_error = (-1 if iss.ply is None else iss.ply - 0.5, iss.code, iss.ply)

    global _LAST_KIND, _LAST_TIME_CONTROL, _LAST_MOVES_KEY
    variant = tags.get("Variant")
    last = _LAST_KIND
    if last[0] is variant:
        kind = last[1]
    else:
        kind = _memoized(_KIND_MEMO, _kind_of, variant)
        _LAST_KIND = (variant, kind)
    if state is None:
        state = GameState()  # (compiled: C struct fields)
    else:
        state.reset()
    pos = None
    start_fen = tags.get("FEN")
    if kind is None:
        add_issue(issues, tally, source, gi, *raw.tag_line("Variant"), None, "warning", "unsupported-variant",
                  f"variant {variant!r} is not standard chess or Chess960: no positions analyzed")
        tally.unsupported_variant += 1
    elif start_fen is not None:
        pos, faults, inferred = validate_setup(start_fen.strip(), chess960=kind is _CHESS960)
        if inferred:
            add_issue(issues, tally, source, gi, *raw.tag_line("FEN"), 0, "warning", "chess960-inferred",
                      f"[FEN \"{start_fen}\"] has castling rights only Chess960 explains but no "
                      f"Chess960 Variant tag: played as Chess960")
        for code, message in faults:
            severity = fault_severity(code)
            add_issue(issues, tally, source, gi, *raw.tag_line("FEN"), 0, severity, code,
                      f"[FEN \"{start_fen}\"]: {message}")
            if severity == "error" and (first_error is None or first_error[0] > 0):
                first_error = (0, code, 0)
    else:
        pos = STANDARD_START.copy()  # (not Chess960)
        if kind is _CHESS960:  # (the kinds are _kind_of's constants)
            pos.chess960 = True

    tag = tags.get("Result")
    white = tags.get("White")
    black = tags.get("Black")
    # The tag's place in RESULT_ORDER (4: another value, 5: none).
    result_index = cython.declare(cython.Py_ssize_t, _result_index(tag))
    outcome = "none"
    k = cython.declare(cython.Py_ssize_t, 0)  # outcome's place in OUTCOMES
    result_consistent = None
    # Runs reaching a third occurrence (games.perpetuals: None when no position was played).
    n_perpetual = cython.declare(cython.Py_ssize_t, 0)
    if pos is not None:
        play_plies(raw, pos, start_fen is not None, issues, columns.positions, options, tally, state, add_issue)
        # The outcome: the first automatic end reached, else what the final position lets
        # a player claim (threefold repetition, fifty moves), else none.
        error = state.error
        ended = state.ended
        if ended is not None:
            outcome = state.outcome = ended
            k = _OUTCOME_INDEX[outcome]
        elif error is None:
            if state.final_repetition >= 3:
                outcome = state.outcome = "threefold_repetition"
                k = _THREEFOLD
            elif state.final_clock >= FIFTY_MOVES_PLIES:
                outcome = state.outcome = "fifty_moves"
                k = _FIFTY
        if error is not None and (first_error is None or first_error[0] > error[1]):
            first_error = (error[1], error[0], error[1])
        if state.repeated:  # (play_plies found the runs)
            _write_perpetuals(raw, state, tables, gi, white, black, tag)
            for run in state.perpetuals:
                if run.occurrences >= 3:
                    n_perpetual += 1
                    tally.perpetuals += 1
                else:
                    tally.twofold_check_cycles += 1
        verdict = cython.declare(cython.Py_ssize_t, _check_result(raw, state, source, gi, tag, result_index, issues,
                                                                  tally))
        result_consistent = not verdict
        if result_consistent and first_error is not None:
            # An error stopped the replay (or the reading) before the end: whether the
            # final position agrees with the result is unknown.
            result_consistent = None
        if verdict & _MISMATCH and first_error is None:
            first_error = (state.plies + 0.5, "result-mismatch", state.plies)
    if first_error is None:
        error_code = error_ply = None
        tally.games_ok += 1
    else:
        error_code, error_ply = first_error[1:]
        tally.games_with_errors += 1

    plies = cython.declare(cython.Py_ssize_t, state.plies)
    n_direct = cython.declare(cython.Py_ssize_t, state.direct)
    n_discovered = cython.declare(cython.Py_ssize_t, state.discovered)
    n_double = cython.declare(cython.Py_ssize_t, state.double)
    # The columns that name a game, in every games buffers.
    columns.source.append(source)
    columns.game_index.append(gi)
    columns.line.append(raw.line)
    columns.white.append(white)
    columns.black.append(black)
    if columns.full:
        white_elo = _elo(tags.get("WhiteElo"))
        black_elo = _elo(tags.get("BlackElo"))
        time_control_tag = tags.get("TimeControl")
        last = _LAST_TIME_CONTROL
        if last[0] is time_control_tag:
            base_s, increment_s = last[1]
        else:
            parsed = _memoized(_TIME_CONTROL_MEMO, time_control, time_control_tag)
            _LAST_TIME_CONTROL = (time_control_tag, parsed)
            base_s, increment_s = parsed
        columns.event.append(tags.get("Event"))
        columns.site.append(tags.get("Site"))
        columns.date.append(tags.get("Date"))
        columns.round.append(tags.get("Round"))
        columns.result.append(tag)
        columns.eco.append(tags.get("ECO"))
        columns.time_control.append(time_control_tag)
        columns.termination.append(tags.get("Termination"))
        columns.variant.append(variant)
        columns.byte_offset.append(raw.byte_offset)
        columns.white_elo.append(white_elo)
        columns.black_elo.append(black_elo)
        columns.start_fen.append(start_fen)
        columns.plies.append(plies)
        columns.checks.append(n_direct + n_discovered + n_double)
        columns.direct_checks.append(n_direct)
        columns.discovered_checks.append(n_discovered)
        columns.double_checks.append(n_double)
        columns.outcome.append(outcome)
        columns.winner.append(state.winner)
        # One definition of perpetuals with the summary's perpetual_checks: runs whose position
        # stood a third time (twofold cycles are rows of the perpetuals table too, occurrences 2).
        columns.perpetuals.append(None if pos is None else n_perpetual)
        columns.result_consistent.append(result_consistent)
        columns.error_code.append(error_code)
        columns.error_ply.append(error_ply)
        columns.time_control_base_s.append(base_s)
        columns.time_control_increment_s.append(increment_s)
        columns.clock_plies.append(state.clock_plies)
        columns.eval_plies.append(state.eval_plies)
        columns.moves_hash.append(None if read_error else state.moves_hash)
        last = _LAST_MOVES_KEY
        if last[0] is options:
            moves_key = last[1]
        else:
            moves_key = bool(options.moves_key)
            _LAST_MOVES_KEY = (options, moves_key)
        if moves_key:
            columns.games["moves_key"].append(None if read_error else state.moves_key)

    tally.positions += plies
    tally.checks_direct += n_direct
    tally.checks_discovered += n_discovered
    tally.checks_double += n_double
    tally._outcome_counts[k] += 1
    if plies < _SHORT_GAME_PLIES:
        tally._short_lengths[plies] += 1
    else:
        lengths = cython.declare(dict, tally.long_lengths)
        lengths[plies] = lengths.get(plies, 0) + 1
    tally._result_counts[3 * result_index + (2 if result_consistent is None else 0 if result_consistent else 1)] += 1
    mated = cython.declare(cython.bint, k == _CHECKMATE)
    stalemated = cython.declare(cython.bint, k == _STALEMATE)
    if mated:
        tally.checkmates += 1
        mates = tally.checkmates_by_move
        mates[state.mate_move_number] = mates.get(state.mate_move_number, 0) + 1
        if state.mate_kind:  # (none for a [FEN] setup already mated)
            mate_kinds = tally.checkmate_kinds
            mate_kinds[state.mate_kind] = mate_kinds.get(state.mate_kind, 0) + 1
    elif stalemated:
        tally.stalemates += 1
    kinds = cython.declare(cython.Py_ssize_t, (n_double > 0) | (state.en_passant > 0) << 1 | (state.promotion > 0) << 2
                           | (state.castling > 0) << 3 | mated << 4 | stalemated << 5 | (n_perpetual > 0) << 6)
    i = cython.declare(cython.Py_ssize_t)
    if kinds:
        rare = cython.declare(list, tally.rare_games)  # (Tally.count_rare, without the call)
        for i in range(len(RARE_KINDS)):
            if kinds >> i & 1:
                rare[i] += 1
    return kinds


def analyze_games(games, tables: dict[str, dict[str, list]], options: AnalysisOptions, tally: Tally,
                  flush_positions, flush, batch_rows: int, current: list) -> int:
    """:func:`analyze_game` on every RawGame of the iterator ``games`` (a run's loop over one
    source, compiled); after each game, ``flush_positions()`` when ``batch_rows`` positions
    rows are buffered, and ``flush()`` when ``batch_rows`` games or issues rows are.
    ``current[0]`` holds the game being analyzed (None between games), for a stop that cuts
    it short. Returns the number of games."""
    positions = tables["positions"]
    games_rows = cython.declare(list, tables["games"]["game_index"])
    issues_rows = cython.declare(list, tables["issues"]["code"])
    read = cython.declare(cython.Py_ssize_t, 0)
    state = GameState()  # one for the loop's games (no object made and freed per game)
    for raw in games:
        read += 1
        current[0] = raw
        analyze_game(raw, tables, options, tally, state)
        current[0] = None
        if cython.compiled:
            # A stop (Ctrl-C, SIGTERM) is taken between games, as the interpreted loop takes it:
            # compiled, the loop may run no Python-level step that would.
            PyErr_CheckSignals()
        if len(positions) >= batch_rows:
            flush_positions()
        if len(games_rows) >= batch_rows or len(issues_rows) >= batch_rows:
            flush()
    return read


#: The games columns that name a game (schema order): games buffers holding only these (for a
#: sink that reads no other, :func:`~chessscan.engines.local.run`) get only these appended.
GAME_NAME_COLUMNS = ("source", "game_index", "line", "white", "black")


class _GameColumns:
    """The buffers of one run's ``tables``: the ``issues`` and ``positions`` buffers, and the
    column lists of the ``games`` buffers by column name: analyze_game appends to them as fields
    (compiled: C struct reads), not through the dict. ``full`` is False for games buffers of only
    :data:`GAME_NAME_COLUMNS` (the other fields are then None)."""

    def __init__(self, tables: dict) -> None:
        self.tables = tables
        self.issues = tables["issues"]
        self.positions = tables["positions"]
        self.games = games = tables["games"]
        self.source = games["source"]
        self.game_index = games["game_index"]
        self.line = games["line"]
        self.white = games["white"]
        self.black = games["black"]
        self.full = tuple(games) != GAME_NAME_COLUMNS
        if not self.full:
            return
        self.byte_offset = games["byte_offset"]
        self.event = games["event"]
        self.site = games["site"]
        self.date = games["date"]
        self.round = games["round"]
        self.result = games["result"]
        self.white_elo = games["white_elo"]
        self.black_elo = games["black_elo"]
        self.eco = games["eco"]
        self.time_control = games["time_control"]
        self.time_control_base_s = games["time_control_base_s"]
        self.time_control_increment_s = games["time_control_increment_s"]
        self.termination = games["termination"]
        self.variant = games["variant"]
        self.start_fen = games["start_fen"]
        self.plies = games["plies"]
        self.clock_plies = games["clock_plies"]
        self.eval_plies = games["eval_plies"]
        self.checks = games["checks"]
        self.direct_checks = games["direct_checks"]
        self.discovered_checks = games["discovered_checks"]
        self.double_checks = games["double_checks"]
        self.outcome = games["outcome"]
        self.winner = games["winner"]
        self.perpetuals = games["perpetuals"]
        self.result_consistent = games["result_consistent"]
        self.error_code = games["error_code"]
        self.error_ply = games["error_ply"]
        self.moves_hash = games["moves_hash"]


# The last tables' buffers: a run appends to the same lists of the same tables dict (clearing
# empties them in place), so they are looked up once, not per game. Read once (one object),
# so that a thread always gets the buffers of the tables it asked for.
_LAST_GAMES = None


def _game_columns(tables) -> _GameColumns:
    """The buffers of ``tables``."""
    global _LAST_GAMES
    last = _LAST_GAMES
    if last is not None and last.tables is tables:
        return last
    columns = _GameColumns(tables)
    _LAST_GAMES = columns
    return columns


def _write_perpetuals(raw, state: GameState, tables, gi, white, black, result) -> None:
    """The perpetuals rows of the game ``raw`` (``gi`` its index; ``white``, ``black``,
    ``result``: its White, Black and Result tags, None when missing), if ``tables`` has them."""
    rows = tables.get("perpetuals")
    if rows is None:
        return
    for run in state.perpetuals:
        rows["source"].append(raw.source)
        rows["game_index"].append(gi)
        rows["side"].append("white" if run.side else "black")
        rows["checking_player"].append(white if run.side else black)
        rows["checked_player"].append(black if run.side else white)
        rows["first_ply"].append(run.first_ply)
        rows["last_ply"].append(run.last_ply)
        rows["checks_given"].append(run.checks)
        rows["occurrences"].append(run.occurrences)
        rows["game_ended"].append(run.last_ply == state.plies and state.error is None)
        rows["game_result"].append(result)


def _check_result(raw, state: GameState, source: str, gi: int, tag: str | None, result_index: int, issues,
                  tally: Tally) -> int:
    """Compare the Result tag (``tag``, None when missing; ``result_index`` its place in
    :data:`RESULT_ORDER`) and the movetext result token with the final position; add issues;
    return 0 when everything is consistent, else ``_INCONSISTENT``, with ``_MISMATCH`` when
    the disagreement is an error (``result-mismatch``)."""
    token = raw.result
    ok = True
    if result_index == 4:
        # PGN standard §8.1.1.7: "?" and other values are no result. The movetext's token
        # then stands for the game's claim.
        add_issue(issues, tally, source, gi, *raw.tag_line("Result"), None, "warning", "result-tag-invalid",
                  f"Result tag {tag!r} is not one of 1-0, 0-1, 1/2-1/2, * (PGN standard §8.1.1.7)")
        ok = False
        tag = None
    elif tag is not None and token is not None and _result_index(token) != result_index:  # (tag != token)
        add_issue(issues, tally, source, gi, *raw.tag_line("Result"), None, "warning", "result-token-mismatch",
                  f"Result tag {tag!r} but the movetext ends with {token!r}")
        ok = False
    if state.error is not None or state.ended is None:  # no automatic end: nothing to compare
        return 0 if ok else _INCONSISTENT
    claimed = tag if tag is not None else token
    outcome = state.outcome
    if outcome == "checkmate":
        expected = "1-0" if state.winner == "white" else "0-1"
    else:
        expected = "1/2-1/2"
    if claimed == expected:
        return 0 if ok else _INCONSISTENT
    # Where the claim stands: the Result tag, else (the movetext's token) the game. (Found
    # only here: searching the tag section for every game cost ~5% of a run.)
    at = raw.tag_line("Result") if tag is not None else (raw.line, None)
    if claimed is None or claimed == "*":
        add_issue(issues, tally, source, gi, *at, state.plies, "warning", "result-unfinished",
                  f"the game ended by {outcome.replace('_', ' ')} but its result is {claimed or 'missing'!r}")
        return _INCONSISTENT
    if outcome in RESULT_DECIDING_ENDS:
        add_issue(issues, tally, source, gi, *at, state.plies, "error", "result-mismatch",
                  f"Result {claimed!r} contradicts the final position: {RESULT_DECIDING_ENDS[outcome]}"
                  f"{' by ' + state.winner if state.winner else ''}, so {expected}")
        return _INCONSISTENT | _MISMATCH
    return 0 if ok else _INCONSISTENT
