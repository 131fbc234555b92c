"""The cross-check sample: which games ``--cross-check sample`` replays in python-chess.

The rule, applied to a run's games in input order (:class:`Sampler`): 1 game in
:data:`SAMPLE_EVERY` of each source (the base rate: the games whose ``game_index`` plus the
CRC-32 of the source's file name is a multiple of it), and, for each rare kind of event
(:data:`RARE_KINDS`: double check, en-passant check, promotion check, castling check,
checkmate, stalemate, perpetual check), the first :data:`SAMPLE_PER_KIND` games of the run in
which our detector found it. So every kind that occurs is confirmed, and the cost is bounded
however the games are spread over files: a python-chess replay costs about as much as
analyzing a hundred games, and the rare kinds add at most ``len(RARE_KINDS) *
SAMPLE_PER_KIND`` replays per run to the base rate's one game in ``SAMPLE_EVERY`` (a rule per
source would replay every game of a folder of one-game files). Deterministic by
construction: the same games whatever the engine.
"""

from __future__ import annotations

import os
import zlib

#: The base rate: 1 game in this many of each source is sampled (:func:`base_sampled`).
SAMPLE_EVERY = 2000
#: Games sampled per rare kind and run: the first ones holding it. One is enough to
#: confirm a kind; each replay costs as much as analyzing about a hundred games.
SAMPLE_PER_KIND = 1
#: Rare kinds of event, in the order of their bits in :func:`chessscan.analysis.game.analyze_game`'s
#: result (bit ``i`` = ``RARE_KINDS[i]``): a check given by two pieces, by an en-passant capture,
#: a promotion or castling, a checkmate or stalemate on the board, a perpetual-check run
#: (a ``perpetuals`` row reaching a third occurrence).
RARE_KINDS = ("double_check", "en_passant_check", "promotion_check", "castling_check", "checkmate",
              "stalemate", "perpetual_check")
#: Reasons a game is sampled, as counted in the summary: the base rate, then the rare kinds.
BASE_RATE = "base_rate"
REASONS = (BASE_RATE,) + RARE_KINDS
#: Bit of the base rate in a reasons mask (the rare kinds keep their bits).
BASE_BIT = 1 << len(RARE_KINDS)


def first_games() -> str:
    """``'the first game'`` or ``'the first N games'``, as :data:`SAMPLE_PER_KIND` says."""
    return "the first game" if SAMPLE_PER_KIND == 1 else f"the first {SAMPLE_PER_KIND} games"


def describe(mode: str) -> str:
    """What ``--cross-check mode`` replays, in words (for the summary)."""
    if mode == "full":
        return "every game"
    if mode == "sample":
        return (f"1 game in {SAMPLE_EVERY:,} of each source, and {first_games()} of the "
                f"run holding each rare kind ({', '.join(k.replace('_', ' ') for k in RARE_KINDS)})")
    return "none"


def reason_indices(mask: int) -> list[int]:
    """Indices in :data:`REASONS` of the reasons set in a reasons mask."""
    out = [0] if mask & BASE_BIT else []
    return out + [i + 1 for i in range(len(RARE_KINDS)) if mask >> i & 1]


class Sampler:
    """The sample rule (module doc), fed every game of a run in input order.

    ``reasons(source, game_index, kinds)`` returns the reasons mask of one game (``kinds``:
    its rare kinds mask; 0 = not sampled) and counts it. Engines that analyze in pieces
    decide the base rate where they analyze and hand the games a rare kind may sample
    (:class:`Deferred`) to one Sampler in input order.
    """

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen = [0] * len(RARE_KINDS)  # games of the run so far holding each kind

    def reasons(self, source: str, game_index: int, kinds: int) -> int:
        """The reasons mask of the run's next game, ``game_index`` of ``source`` (bit ``i``:
        ``RARE_KINDS[i]``, :data:`BASE_BIT`: the base rate; 0: not sampled); counts its
        ``kinds``."""
        mask = BASE_BIT if base_sampled(source, game_index) else 0
        if kinds:
            seen = self._seen
            for i in range(len(RARE_KINDS)):
                if kinds >> i & 1:
                    if seen[i] < SAMPLE_PER_KIND:
                        mask |= 1 << i
                    seen[i] += 1
        return mask

    def full(self) -> int:
        """Mask of the kinds whose quota is already used up in the run: games holding only
        those need not be handed over any more."""
        return sum(1 << i for i, n in enumerate(self._seen) if n >= SAMPLE_PER_KIND)


def _name_crc(source: str) -> int:
    """The CRC-32 of the source's file name (its last path component): the base rate's
    offset, so that the sources of a folder of small files do not all give their game 0,
    and the same file gives the same games from any folder."""
    return zlib.crc32(os.path.basename(source).encode("utf-8", "surrogatepass"))


_LAST = ("", 0)  # the last source and its _name_crc: games come source by source


def base_sampled(source: str, game_index: int) -> bool:
    """The base rate alone: whether game ``game_index`` (0-based) of ``source`` is among the
    1 in :data:`SAMPLE_EVERY` whose index plus the CRC-32 of the source's file name is a
    multiple of it."""
    global _LAST
    last = _LAST
    if last[0] != source:
        last = _LAST = (source, _name_crc(source))
    return (game_index + last[1]) % SAMPLE_EVERY == 0


class Candidate:
    """A game holding rare kinds, kept by :class:`Deferred` for the input-order decision.

    ``raw``: the RawGame; ``kinds``: its rare kinds mask; ``checked``: whether it was
    cross-checked where it was analyzed (the base rate took it); ``rows``: a copy of its
    ``positions`` rows (:class:`RowsCopy`) when they are to be compared, else None.
    """

    __slots__ = ("raw", "kinds", "checked", "rows")

    def __init__(self, raw, kinds: int, checked: bool, rows) -> None:
        self.raw, self.kinds, self.checked, self.rows = raw, kinds, checked, rows


class RowsCopy:
    """The ``positions`` rows of one game, as the cross-check reads them (``len``, ``row(i)``),
    copied out of buffers that are about to be sent away or cleared."""

    __slots__ = ("_rows",)

    def __init__(self, rows, start: int) -> None:
        self._rows = [rows.row(i) for i in range(start, len(rows))]

    def __len__(self) -> int:
        return len(self._rows)

    def row(self, i: int) -> dict:
        return self._rows[i]


class Deferred:
    """The games of one piece of a source (a ``--jobs`` chunk, a Dask shard) that a rare kind
    may sample: only the process that sees the pieces in order can tell whether a game is
    among the first :data:`SAMPLE_PER_KIND` of the run holding a kind.

    A game is kept when, for one of its kinds, fewer than ``SAMPLE_PER_KIND`` earlier games of
    the piece hold that kind and the kind is not in ``full`` (quotas already used up when the
    piece was sent out). Any game the rule can take is kept, and the Sampler that sees only
    the kept games decides as one that sees them all: for each kind, the kept games of a
    piece are its first ``SAMPLE_PER_KIND`` (or all) holding it, so the Sampler's count of a
    kind is the true count while below the quota, and reaches the quota when the true count
    does.
    """

    __slots__ = ("full", "counts", "games")

    def __init__(self, full: int = 0) -> None:
        self.full = full
        self.counts = [0] * len(RARE_KINDS)  # games of the piece holding each kind
        self.games: list[Candidate] = []

    def offer(self, kinds: int) -> bool:
        """Count a game's kinds; whether to keep it (then :meth:`keep` it)."""
        keep = False
        counts = self.counts
        for i in range(len(RARE_KINDS)):
            if kinds >> i & 1:
                if not self.full >> i & 1 and counts[i] < SAMPLE_PER_KIND:
                    keep = True
                counts[i] += 1
        return keep

    def keep(self, candidate: Candidate) -> None:
        self.games.append(candidate)

    def settle(self, sampler: Sampler) -> list[tuple[Candidate, int]]:
        """Decide the reasons of each kept game with the run's ``sampler``, which must be fed
        the pieces in input order. Returns ``(candidate, reasons mask)`` for the games
        sampled, in input order."""
        out = []
        for c in self.games:
            reasons = sampler.reasons(c.raw.source, c.raw.index, c.kinds)
            if reasons:
                out.append((c, reasons))
        return out
