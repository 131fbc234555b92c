cimport cython
from libc.stdint cimport int64_t, uint8_t, uint64_t

ctypedef const char* ccharp
ctypedef uint8_t* u8p

from chessscan.analysis.repetition cimport _runs, _table as _perpetual_table
from chessscan.analysis.rows cimport PositionRows
from chessscan.core._bits cimport (
    BB_ALL, BB_FILE_A, BB_RANK_1, BISHOP, CASTLE_MIX, KING, KNIGHT, PAWN, QUEEN, ROOK, SAN_NULL as NULL_PIECE,
    bit, lsb, msb,
)
from chessscan.core.attacks cimport AttackTables, bishop_attacks, rook_attacks
from chessscan.core.movegen cimport attackers, has_legal_en_passant, has_legal_move, has_legal_move_known, pinned
from chessscan.core.position cimport Position
from chessscan.core.rules cimport is_insufficient_material
from chessscan.core.san cimport resolve_known, resolve_quick
from chessscan.core.zobrist cimport ZobristKeys
from chessscan.readers.pgn cimport RawGame


cdef AttackTables T
cdef ZobristKeys K
cdef Py_ssize_t _HASH_BUFFER
cdef bytes _START_FEN_BYTES, _PROMOTION_LETTERS, _START_KEY
cdef object _START_HASHER
cdef extern from *:
    # The _TokenCache's hashing, as C constants (module variables are loaded at each ply).
    const Py_ssize_t _TOKEN_SLOTS "16384"
    const int _TOKEN_SLOT_BITS "14"
    const uint64_t _GOLDEN "0x9E3779B97F4A7C15ULL"
cdef extern from *:
    # A hint to load the cache line of an address (no effect on results; none where unknown).
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define CS_PREFETCH(p) __builtin_prefetch((const void *)(p))
    #else
    #define CS_PREFETCH(p) ((void)(p))
    #endif
    """
    void _prefetch "CS_PREFETCH"(const void *p) nogil


@cython.final
cdef class _TokenCache:
    cdef uint64_t slots[32768]  # 2 * _TOKEN_SLOTS: (SAN key, token) pairs
    cdef Py_ssize_t used

    @cython.locals(h=uint64_t, k=uint64_t)
    cdef inline long get(self, uint64_t key) except -1
    @cython.locals(token=long)
    cdef long _fill(self, uint64_t key, uint64_t h) except -1


cdef uint64_t _LOOSE
cdef str _NO_TEXT
cdef int64_t _NOTE_NA
@cython.locals(n=int, text=char[8], token=long)
cpdef long _key_token(uint64_t key) except -1
@cython.locals(n=int, suffix=int, c=int, file=int, rank=int, promotion=int, piece=int, to=int, tf=int, tr=int,
               i=int)
cdef long _strict_token(uint64_t key) noexcept
@cython.locals(piece=int, from_mask=uint64_t, to=int, promotion=int, file=int, rank=int, uci_like=int, sq=int,
               token=long)
cpdef long _token(str san) except -1
cpdef str _text_of(raw, uint64_t key)


@cython.final
cdef class _History:
    cdef public Py_ssize_t n
    cdef public uint64_t[::1] keys
    cdef public uint8_t[::1] checks
    cdef public uint8_t[::1] text

    cpdef add(self, uint64_t key, bint check)


@cython.final
cdef class GameState:
    cdef public int plies, final_repetition, final_clock, mate_move_number, mate_kind, clock_plies, eval_plies
    cdef public int direct, discovered, double, en_passant, castling, promotion
    cdef public bint repeated, white_first
    cdef public object outcome, winner, error, perpetuals, ended, moves_hash, moves_key

    cpdef reset(self)


cdef Py_ssize_t _CHECK_MOVES
cdef class CheckTally:
    # (sizes: _CHECK_MOVES, 3 routes * 4 kinds)
    cdef long long _checks_by_move[512]
    cdef long long _check_routes[12]
    cdef public dict late_checks


cdef dict _TOKENS
cdef int _CHECKMATE, _STALEMATE, _DEAD, _SEVENTYFIVE, _FIVEFOLD
cdef int _IN_CHECK, _BY_EP, _BY_CASTLING, _BY_PROMOTION, _MATE, _STALE
cdef int SEVENTYFIVE_MOVES_PLIES
cdef object _LOCAL
cdef tuple _LAST_SCRATCH, _LAST_OPTIONS
cdef int _KEEP_ALL, _KEEP_CHECKS, _WANT_FEN, _WANT_HASH, _WANT_KEY
@cython.locals(ident=uint64_t, last_ident=uint64_t)
cdef tuple _scratch()
@cython.locals(bits=int)
cpdef int option_bits(options) except -1

@cython.locals(from_mask=uint64_t)
cdef inline uint64_t _origin_mask(long token) noexcept

@cython.locals(value=int64_t)
cdef inline int64_t _note_at(ccharp np_, Py_ssize_t i, int k) noexcept

@cython.locals(keep_all=bint, keep_checks=bint, want_fen=bint, sid=int,
               n_direct=int, n_discovered=int, n_double=int, n_ep=int, n_castling=int,
               n_promotion=int, token_cache=_TokenCache,
               history=_History, us=bint, mover=bint, legal_ep=bint, rkey=uint64_t, rep=int, repeated=bint,
               ended=int, ended_ply=int, warned_after_end=bint, checking=uint64_t, plies=int,
               n_tokens=Py_ssize_t, i=Py_ssize_t, move_number=int, token=long, piece=int, from_mask=uint64_t,
               to=int, move=int, frm=int, promotion=int, castling=bint, en_passant=bint,
               kind=int, flags=int, clock=int, zobrist=uint64_t, mate=bint, suffix=int, gi=int64_t,
               king=int, blockers=uint64_t, keys=bytes, kp=ccharp, key=uint64_t,
               late=dict, n_notes=Py_ssize_t, n_clock=int, n_eval=int,
               np_=ccharp, note_clock=int64_t, note_emt=int64_t, note_cp=int64_t, note_mate=int64_t,
               row=Py_ssize_t, hash_bytes=uint8_t[::1], hn=Py_ssize_t, uto=int, hasher=object, want_hash=bint,
               want_key=bint, want_uci=bint, key_bytes=uint8_t[::1], kn=Py_ssize_t, kv=int, start_fen=bytes, th=uint64_t,
               j=Py_ssize_t, sk=uint64_t, nb=Py_ssize_t, bit8=uint8_t, bits=int, lo=Py_ssize_t, ri=Py_ssize_t,
               theirs=uint64_t, queens=uint64_t, rooks=uint64_t, bishops=uint64_t, snipers=uint64_t, b=uint64_t,
               occupied=uint64_t, pawns=uint64_t, has_move=bint,
               uci_text=uint8_t[8], san_text=uint8_t[8], hp=u8p)
cpdef play_plies(RawGame raw, Position pos, bint setup, issues, PositionRows rows, options, CheckTally tally,
                 GameState state, add_issue)
cpdef int _start_status(Position pos) except -1
cdef str _suffix_problem(int suffix, bint check, bint mate)
cdef bytes _hash_text(uint8_t[::1] text, Py_ssize_t n)
