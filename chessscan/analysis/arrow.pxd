# Compiled by Cython (pure Python mode): from_list's reading of a list runs in C (the _read_*
# functions, one pass over the values); the NumPy passes remain the uncompiled path.
cimport cython

ctypedef const char* cchars

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object o)  # (a str of ASCII characters only: its data are its UTF-8 bytes)

@cython.locals(text=cchars)
cdef object _read_strings(list values)
cdef object _read_dictionary(list values)
cdef object _read_bools(list values)
cdef object _read_integers(list values, object arrow_type, object low, object high)
cdef object _read_floats(list values)
