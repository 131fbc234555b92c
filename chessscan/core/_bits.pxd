# C helpers and constants shared by the compiled core (cimported by each module's .pxd).
#
# Each name here has a Python twin in chessscan/core/bitboard.py or squares.py, which the
# same source imports when it runs uncompiled (``if not cython.compiled: from ... import``).
# Bitboards are uint64_t (bit n = square n, a1 = 0); squares are int 0..63.

from libc.stdint cimport uint64_t

cdef extern from *:
    """
    #if defined(_MSC_VER)
    #include <intrin.h>
    static __inline int cs_lsb(unsigned long long b) { unsigned long i; return _BitScanForward64(&i, b) ? (int)i : -1; }
    static __inline int cs_msb(unsigned long long b) { unsigned long i; return _BitScanReverse64(&i, b) ? (int)i : -1; }
    static __inline int cs_popcount(unsigned long long b) { return (int)__popcnt64(b); }
    static __inline unsigned long long cs_bswap64(unsigned long long b) { return _byteswap_uint64(b); }
    #else
    static inline int cs_lsb(unsigned long long b) { return b ? __builtin_ctzll(b) : -1; }
    static inline int cs_msb(unsigned long long b) { return b ? 63 - __builtin_clzll(b) : -1; }
    static inline int cs_popcount(unsigned long long b) { return __builtin_popcountll(b); }
    static inline unsigned long long cs_bswap64(unsigned long long b) { return __builtin_bswap64(b); }
    #endif
    #define CS_BIT(n) (1ULL << (n))
    """
    int lsb "cs_lsb"(uint64_t b) nogil
    int msb "cs_msb"(uint64_t b) nogil
    int popcount "cs_popcount"(uint64_t b) nogil
    uint64_t bit "CS_BIT"(int n) nogil
    uint64_t bswap64 "cs_bswap64"(uint64_t b) nogil

    const uint64_t BB_ALL "0xFFFFFFFFFFFFFFFFULL"
    const uint64_t BB_FILE_A "0x0101010101010101ULL"
    const uint64_t BB_FILE_H "0x8080808080808080ULL"
    const uint64_t BB_RANK_1 "0x00000000000000FFULL"
    const uint64_t BB_RANK_2 "0x000000000000FF00ULL"
    const uint64_t BB_RANK_7 "0x00FF000000000000ULL"
    const uint64_t BB_RANK_8 "0xFF00000000000000ULL"
    const uint64_t BB_BACKRANKS "0xFF000000000000FFULL"
    const uint64_t BB_LIGHT_SQUARES "0x55AA55AA55AA55AAULL"
    const uint64_t BB_DARK_SQUARES "0xAA55AA55AA55AA55ULL"
    # chessscan.core.zobrist.CASTLE_MIX
    const uint64_t CASTLE_MIX "0x9E3779B97F4A7C15ULL"

    const int PAWN "1"
    const int KNIGHT "2"
    const int BISHOP "3"
    const int ROOK "4"
    const int QUEEN "5"
    const int KING "6"
    # chessscan.core.san's CASTLE_H_SIDE, CASTLE_A_SIDE, NULL_PIECE (SanMove.piece values)
    const int SAN_CASTLE_H "(-1)"
    const int SAN_CASTLE_A "(-2)"
    const int SAN_NULL "(-3)"
