"""Stand-in for the ``cython`` module when the core runs uncompiled without Cython installed.

The core's sources are Cython "pure Python mode" modules: their types live in the ``.pxd``
beside each ``.py``, and the ``.py`` asks only whether it is compiled.
"""

compiled = False
