cimport cython

from chessscan.core.position cimport Position

cpdef parse_placement(Position pos, str text, str fen)
cpdef _parse_castling(Position pos, str text, str fen, list faults)
cpdef str position_epd(Position pos, str en_passant=*)
cpdef str position_fen(Position pos, str en_passant=*)
