"""Stand-in for the ``cython`` module when the core runs uncompiled without Cython installed.

The core's sources are Cython "pure Python mode" modules: their types live in the ``.pxd``
beside each ``.py``, and the ``.py`` asks only whether it is compiled (a generator's locals,
which a ``.pxd`` cannot type, are typed with ``cython.declare`` in the ``.py``).
"""

compiled = False


def declare(t=None, value=None, **names):
    """``cython.declare``: types for the compiler; uncompiled, ``value`` as it is."""
    return value


Py_ssize_t = bint = int  # type names for cython.declare, read only by the compiler
