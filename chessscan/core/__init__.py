"""The detector: squares, bitboards, attack tables, position, FEN, move generation, check
kinds, SAN, Zobrist keys, perft. Compiled with Cython where a C compiler was found at install
time; the same sources run uncompiled otherwise (see :func:`core_mode`)."""


def core_mode() -> str:
    """``"compiled"`` when the core's C extension modules are loaded, else ``"pure Python"``
    (no compiler at install time, or ``CHESSSCAN_PURE=1``)."""
    from chessscan.analysis import plies
    from chessscan.core import position

    compiled = all(not m.__file__.endswith(".py") for m in (position, plies))
    return "compiled" if compiled else "pure Python"
