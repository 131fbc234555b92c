# Compiled by Cython (pure Python mode): analyze_game runs once per game, and compiled its
# Python-level work costs less interpreter time. The few C types here are the per-game helpers';
# analyze_game types its dicts with cython.declare.
cimport cython
from libc.stdint cimport uint8_t

ctypedef const uint8_t* bytes_p

from chessscan.analysis.plies cimport GameState, play_plies
from chessscan.core.position cimport Position

cdef Position STANDARD_START
cdef dict _RESULT_INDEX
cdef tuple _RESULT_KEYS
cdef int _INCONSISTENT, _MISMATCH
cdef tuple _LAST_GAMES
cdef tuple _game_columns(dict games)
@cython.locals(k=Py_ssize_t)
cdef int _append_row(tuple columns, tuple values) except -1
cdef object _memoized(dict memo, object fn, object value)
cdef int _check_result(raw, GameState state, source, gi, tag, int result_index, issues, tally) except -1
@cython.locals(n=Py_ssize_t, data=bytes_p, elo=long, k=Py_ssize_t)
cdef object _elo(object text)
