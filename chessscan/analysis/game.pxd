# Compiled by Cython (pure Python mode): analyze_game runs once per game, and compiled its
# Python-level work costs less interpreter time. The few C types here are the per-game helpers';
# analyze_game types its dicts with cython.declare, and takes its RawGame typed (field reads in C).
cimport cython
from libc.stdint cimport uint8_t

ctypedef const uint8_t* bytes_p

from chessscan.analysis.plies cimport GameState, play_plies
from chessscan.core.position cimport Position
from chessscan.readers.pgn cimport RawGame

cdef Position STANDARD_START


cdef class Tally:
    cdef public object games, games_ok, games_with_errors, unsupported_variant, positions, checks, checkmates
    cdef public object stalemates, issues, issues_by_severity, epd_positions, epd_invalid, epd_outcomes, outcomes
    cdef public object perpetuals, twofold_check_cycles, cross_check_mode, cross_checked_games
    cdef public object cross_checked_positions, disagreements, checks_by_move, check_routes, checkmates_by_move
    cdef public object checkmate_kinds, game_lengths, results, issues_by_source, rare_games, sampled_by

cdef dict _RESULT_INDEX
cdef tuple _RESULT_KEYS
cdef int _INCONSISTENT, _MISMATCH
cdef tuple _LAST_GAMES, _LAST_KIND, _LAST_TIME_CONTROL
cdef tuple _game_columns(dict games)
@cython.locals(k=Py_ssize_t)
cdef int _append_row(tuple columns, tuple values) except -1
cdef object _memoized(dict memo, object fn, object value)
cdef int _check_result(RawGame raw, GameState state, source, gi, tag, int result_index, issues, Tally tally) except -1
@cython.locals(n=Py_ssize_t, data=bytes_p, elo=long, k=Py_ssize_t)
cdef object _elo(object text)
cpdef analyze_game(RawGame raw, tables, options, Tally tally)
