cimport cython
from libc.stdint cimport uint64_t

from chessscan.core._bits cimport (
    BB_ALL, BB_RANK_1, BB_RANK_8, BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK, bit, lsb, msb,
)
from chessscan.core.attacks cimport AttackTables, bishop_attacks, rook_attacks
from chessscan.core.position cimport Position

cdef AttackTables T

@cython.locals(queens=uint64_t, own=uint64_t, found=uint64_t, sliders=uint64_t)
cpdef uint64_t attackers(Position pos, bint color, int sq, uint64_t occupied) noexcept
cpdef uint64_t checkers(Position pos) noexcept
@cython.locals(queens=uint64_t, snipers=uint64_t, blockers=uint64_t, b=uint64_t)
cpdef uint64_t pinned(Position pos, int king, bint color) noexcept
@cython.locals(cap=uint64_t, occupied=uint64_t)
cpdef bint ep_is_safe(Position pos, int frm, int ep, int king) noexcept
@cython.locals(us=bint, backrank=uint64_t, candidates=uint64_t, rank=int, occupied=uint64_t, rook=int,
               k_to=int, r_to=int, path=uint64_t, occ_wo_king=uint64_t, safe=bint)
cdef int castling(Position pos, int king, uint64_t to_mask, int* moves, int n) noexcept
@cython.locals(king=int, checking=uint64_t, blockers=uint64_t)
cdef int generate(Position pos, int* moves, uint64_t from_mask, uint64_t to_mask, bint first_only) noexcept
@cython.locals(us=bint, our=uint64_t, their=uint64_t, occupied=uint64_t, n=int, king_bb=uint64_t,
               target=uint64_t, to_ok=uint64_t, pt=int, movers=uint64_t,
               frm=int, att=uint64_t, pawns=uint64_t, last_rank=uint64_t, one=int, to=int, promo=int, ep=int,
               capturers=uint64_t, occ_wo_king=uint64_t)
cdef int generate_known(Position pos, int* moves, uint64_t from_mask, uint64_t to_mask, bint first_only,
                        int king, uint64_t checking, uint64_t blockers) noexcept
@cython.locals(n=int, i=int)
cpdef list legal_moves(Position pos, uint64_t from_mask=*, uint64_t to_mask=*)
cpdef bint has_legal_move(Position pos) noexcept
@cython.locals(us=bint, pawns=uint64_t, steps=uint64_t, occupied=uint64_t)
cpdef bint has_legal_move_known(Position pos, int king, uint64_t checking, uint64_t blockers) noexcept
@cython.locals(ep=int, king=int, capturers=uint64_t)
cpdef bint has_legal_en_passant(Position pos) noexcept
@cython.locals(n=int, i=int, total=uint64_t, child=Position)
cpdef uint64_t perft(Position pos, int depth)
