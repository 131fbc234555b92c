cimport cython
from libc.stdint cimport uint64_t

from chessscan.core._bits cimport BB_ALL, BB_FILE_A, BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK, bit, lsb, msb
from chessscan.core.attacks cimport AttackTables, bishop_attacks, rook_attacks
from chessscan.core.movegen cimport attackers, castling, generate_known, has_legal_move, pinned
from chessscan.core.position cimport Position

cdef AttackTables T

@cython.locals(us=bint, our=uint64_t, occ=uint64_t, pawns=uint64_t, found=uint64_t, one=int)
cpdef uint64_t candidates(Position pos, int piece, int to) noexcept
@cython.locals(king=int, checking=uint64_t, blockers=uint64_t)
cpdef int resolve(Position pos, int piece, uint64_t from_mask, int to, int promotion, str text) except? -1
@cython.locals(us=bint, side=uint64_t, n=int, i=int, to_bb=uint64_t, frm=int, standing=int,
               a_side=bint, match=int, count=int, origins=uint64_t, last_rank=bint)
cpdef int resolve_known(Position pos, int piece, uint64_t from_mask, int to, int promotion, str text,
                        int king, uint64_t checking, uint64_t blockers) except? -1
@cython.locals(us=bint, to_bb=uint64_t, origins=uint64_t, king_bb=uint64_t)
cpdef int resolve_quick(Position pos, int piece, uint64_t from_mask, int to, int promotion, uint64_t blockers,
                        uint64_t checking) noexcept
@cython.locals(king_bb=uint64_t)
cdef int _king_step(Position pos, bint us, uint64_t from_mask, int to) noexcept
@cython.locals(to_file=uint64_t)
cdef inline uint64_t _pawn_origins(uint64_t origins, uint64_t from_mask, int to) noexcept
