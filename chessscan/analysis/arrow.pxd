# Compiled by Cython (pure Python mode): from_list's reading of a list runs in C (the _read_*
# functions, one pass over the values); the NumPy passes remain the uncompiled path.
cdef object _read_strings(list values)
cdef object _read_dictionary(list values)
cdef object _read_bools(list values)
cdef object _read_integers(list values, object arrow_type, object low, object high)
cdef object _read_floats(list values)
