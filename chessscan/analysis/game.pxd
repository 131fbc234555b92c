# Compiled by Cython (pure Python mode): analyze_game runs once per game, and compiled its
# Python-level work costs less interpreter time. The few C types here are the per-game helpers';
# analyze_game types its dicts with cython.declare, and takes its RawGame typed (field reads in C).
cimport cython
from libc.stdint cimport uint8_t

ctypedef const uint8_t* bytes_p

from chessscan.analysis.plies cimport CheckTally, GameState, play_plies
from chessscan.core.position cimport Position
from chessscan.readers.pgn cimport RawGame

cdef Position STANDARD_START


cdef class Tally(CheckTally):
    # The counts as C integers: analyze_game's increments make no int object.
    cdef public long long games, games_ok, games_with_errors, unsupported_variant, positions, checkmates
    cdef public long long stalemates, epd_positions, epd_invalid, perpetuals, twofold_check_cycles
    cdef public long long cross_checked_games, cross_checked_positions, disagreements
    cdef public long long checks_direct, checks_discovered, checks_double
    # (sizes: len(OUTCOMES), len(_RESULT_KEYS), _SHORT_GAME_PLIES)
    cdef long long _outcome_counts[8]
    cdef long long _result_counts[18]
    cdef long long _short_lengths[1024]
    cdef public object long_lengths
    cdef public object issues, issues_by_severity, epd_outcomes, cross_check_mode
    cdef public object checkmates_by_move
    cdef public object checkmate_kinds, issues_by_source, rare_games, sampled_by

cdef dict _RESULT_INDEX, _OUTCOME_INDEX
cdef Py_ssize_t _SHORT_GAME_PLIES, _CHECKMATE, _STALEMATE, _THREEFOLD, _FIFTY
cdef object _STANDARD, _CHESS960
cdef tuple _RESULT_KEYS
cdef int _INCONSISTENT, _MISMATCH


@cython.final
cdef class _GameColumns:
    cdef object tables, games, issues, positions
    cdef bint full
    cdef list source, game_index, byte_offset, line, event, site, date, round, white, black, result
    cdef list white_elo, black_elo, eco, time_control, time_control_base_s, time_control_increment_s
    cdef list termination, variant, start_fen, plies, clock_plies, eval_plies, checks, direct_checks
    cdef list discovered_checks, double_checks, outcome, winner, perpetuals, result_consistent, error_code
    cdef list error_ply, moves_hash

cdef _GameColumns _LAST_GAMES
cdef tuple _LAST_KIND, _LAST_TIME_CONTROL, _LAST_MOVES_KEY, _ELO_INTS
@cython.locals(last=_GameColumns, columns=_GameColumns)
cdef _GameColumns _game_columns(tables)
@cython.locals(rows=dict)
cdef _write_perpetuals(RawGame raw, GameState state, tables, gi, white, black, result)
cdef object _memoized(dict memo, object fn, object value)
cdef int _check_result(RawGame raw, GameState state, source, gi, tag, int result_index, issues, Tally tally) except -1
@cython.locals(n=Py_ssize_t, data=bytes_p, elo=long, k=Py_ssize_t)
cdef object _elo(object text)
@cython.locals(n=Py_ssize_t, data=bytes_p)
cdef Py_ssize_t _result_index(object text) except -1
@cython.locals(columns=_GameColumns, outcome=str)
cpdef analyze_game(RawGame raw, tables, options, Tally tally, GameState state=*)
@cython.locals(state=GameState)
cpdef Py_ssize_t analyze_games(games, dict tables, options, Tally tally, flush_positions, flush, Py_ssize_t batch_rows, list current) except -1
