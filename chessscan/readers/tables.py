"""Game tables as input: Parquet, Arrow IPC (Feather v2) and Feather v1 files, one row a game.

Large public game sets are tables: the Lichess database on Hugging Face
(``Lichess/standard-chess-games``: the tag columns and the whole movetext as one string), or
tables holding a list of SAN moves (``moves_san: list<string>``) or a UCI transcript
(``transcript: "e2e4 e7e5 ..."``). :func:`table_kind` tells such a file by its magic bytes
(``PAR1``, ``ARROW1``, ``FEA1``), whatever its name; :func:`inspect_table` finds its moves
column and its tag columns; :class:`TableReader` yields one
:class:`~chessscan.readers.pgn.RawGame` per row, as the PGN reader yields them, so every
engine analyzes table rows as it analyzes PGN games.

* **The moves** come from one column, chosen by its name (:data:`MOVES_COLUMNS`, in that
  order, case-insensitive) or given (``--moves-column``): a string column holds PGN movetext
  (read by the PGN reader's own tokenizer: comments, NAGs, variations and the termination
  marker, whose absence is a ``missing-result`` warning as in a PGN file), except
  ``moves_uci`` and ``transcript``, which hold moves separated by white space; a list column
  holds one move per element (SAN or UCI). UCI moves are played as the PGN reader plays them
  (a ``uci-move`` warning, once a game).
* **The tags**: every other column named as a PGN tag (:data:`KNOWN_TAGS`, matched
  case-insensitively, ``_`` ignored: ``white_elo`` is ``WhiteElo``) is read as that tag, its
  value as PGN writes it (integers as digits, dates ``YYYY.MM.DD``, times ``HH:MM:SS``); a
  null is a missing tag. A hive partition folder named as a tag (``Variant=Chess960/``) gives
  that tag to every row below it.
* **Where**: a row is a game: its ``line`` is its 1-based row number in the file, its
  ``byte_offset`` its 0-based row index; an issue in the movetext has as ``column`` the
  1-based character position in the movetext value (in a list, the move's 1-based position
  in the list).
* **Memory**: rows are read in batches of :data:`BATCH_ROWS` rows (Parquet: within a row
  group, through a buffered stream), so memory is bounded by the batch and the row group's
  pages in flight, not by the file. A Feather v1 file (no batches) is read whole.

A table that cannot be read (a corrupt footer, no moves column) raises :class:`TableError`
from :func:`inspect_table`; the engines report it as one issue for the file. An error while
reading rows (a corrupt page) ends the file with a ``truncated-input`` error on an empty game,
as a corrupt compressed PGN stream does.
"""

from __future__ import annotations

import os
import re
import warnings
from collections import deque
from itertools import repeat
from typing import Iterator, NamedTuple, Sequence

from .pgn import MAX_GAME_BYTES, RawGame, _cut_between_tokens, _FIRST_COMMENT_B, _issue, _scan_movetext, note_issues
from .movetext import blank_comments, fast_movetext, new_note_reader, read_notes
from .sources import STDIN, source_name, source_size
from .urls import is_url, open_url

__all__ = ["TABLE_SUFFIXES", "MOVES_COLUMNS", "KNOWN_TAGS", "BATCH_ROWS", "TableError", "TableInfo",
           "table_kind", "is_table", "table_schema", "parquet_codec", "inspect_table", "TableReader", "row_batches",
           "row_group_ranges", "read_row_groups", "RowsResult"]

#: Names a folder's table files end with (a file given by name is told by its content).
TABLE_SUFFIXES = (".parquet", ".pq", ".arrow", ".feather", ".ipc")
#: Well-known names of the moves column, in order of preference (matched case-insensitively).
MOVES_COLUMNS = ("movetext", "moves_san", "moves_uci", "transcript")
# String columns of these names hold moves separated by white space (UCI), not PGN movetext.
_TOKEN_COLUMNS = frozenset({"moves_uci", "transcript"})
#: Rows converted to games at a time: memory is bounded by this many rows of the table.
BATCH_ROWS = 1024
#: Tag names a column may stand for: the PGN standard's seven-tag roster (§8.1.1) and
#: supplemental tags (§9), and those Lichess, chess.com, ChessBase and TCEC write.
KNOWN_TAGS = (
    "Event", "Site", "Date", "Round", "White", "Black", "Result",
    "WhiteTitle", "BlackTitle", "WhiteElo", "BlackElo", "WhiteUSCF", "BlackUSCF", "WhiteNA", "BlackNA",
    "WhiteType", "BlackType", "EventDate", "EventSponsor", "Section", "Stage", "Board", "Opening",
    "Variation", "SubVariation", "ECO", "NIC", "Time", "UTCTime", "UTCDate", "TimeControl", "SetUp", "FEN",
    "Termination", "Annotator", "Mode", "PlyCount", "Variant", "WhiteRatingDiff", "BlackRatingDiff",
    "WhiteFideId", "BlackFideId", "WhiteTeam", "BlackTeam", "EventType", "EventRounds", "EventCountry",
    "TerminationDetails", "Link", "CurrentPosition", "Timezone", "ECOUrl", "StartTime", "EndDate",
    "EndTime", "GameId", "StudyName", "ChapterName", "WhiteClock", "BlackClock",
)
_TAG_BY_KEY = {t.lower(): t for t in KNOWN_TAGS}
_MAGIC = ((b"PAR1", "parquet"), (b"ARROW1", "arrow"), (b"FEA1", "feather"))
_WHAT = {"parquet": "Parquet file", "arrow": "Arrow IPC file", "feather": "Feather v1 file"}
_TOKEN = re.compile(r"\S+")


class TableError(Exception):
    """A table that gives no game: ``code`` is the issue code (``truncated-input`` for a file
    that cannot be read as the table its magic bytes announce, ``unsupported-input`` for one
    with no usable moves column), the message says why."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class TableInfo(NamedTuple):
    """What :func:`inspect_table` found: ``kind`` (``'parquet'``, ``'arrow'`` or
    ``'feather'``); ``moves``, the moves column; ``moves_kind``: ``'movetext'`` (PGN),
    ``'tokens'`` (moves separated by white space) or ``'list'``; ``tags``: ``(column, tag)``
    pairs; ``fixed``: the tags of its hive partition folders; ``rows``: the rows of each row
    group (Parquet), or None."""

    kind: str
    moves: str
    moves_kind: str
    tags: tuple
    fixed: dict
    rows: tuple | None


_KIND_CACHE: dict = {}


def _cache_key(path: str):
    if is_url(path):
        return path
    st = os.stat(path)
    return (os.path.realpath(path), st.st_size, st.st_mtime_ns)


def _open(path: str):
    return open_url(path) if is_url(path) else open(path, "rb")


def _arrow_source(path: str):
    """What Arrow opens ``path`` from: the path itself (Arrow's own reads), or an open file
    for a URL and for a local name that is not UTF-8 (Arrow takes only UTF-8 names)."""
    if not is_url(path):
        try:
            os.fspath(path).encode("utf-8")
            return path
        except UnicodeEncodeError:
            pass
    return _open(path)


def table_kind(path) -> str | None:
    """``'parquet'``, ``'arrow'`` or ``'feather'`` when the file (or URL) ``path`` starts with
    that format's magic bytes, else None (also for stdin, a pipe, a folder, or a path that
    cannot be opened: a table needs random access, and the other readers report the rest)."""
    path = os.fspath(path)
    if not isinstance(path, str) or path == STDIN:
        return None
    try:
        key = _cache_key(path)
    except OSError:
        return None
    if key in _KIND_CACHE:
        return _KIND_CACHE[key]
    kind = None
    if is_url(path) or os.path.isfile(path):
        try:
            with _open(path) as f:
                head = f.read(8)
        except Exception:  # (any file system's error: the other readers report it)
            head = b""
        kind = next((k for magic, k in _MAGIC if head.startswith(magic)), None)
    if len(_KIND_CACHE) > 4096:
        _KIND_CACHE.clear()
    _KIND_CACHE[key] = kind
    return kind


def is_table(path) -> bool:
    """Whether ``path`` is a game table (:func:`table_kind`)."""
    return table_kind(path) is not None


def _tag_of(column: str) -> str | None:
    return _TAG_BY_KEY.get(column.lower().replace("_", ""))


def _is_text(t) -> bool:
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        t = t.value_type
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _is_tag_type(t) -> bool:
    import pyarrow as pa

    return (_is_text(t) or pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_temporal(t)
            or pa.types.is_boolean(t))


def _partition_tags(path: str) -> dict:
    """The tags given by the hive partition folders of ``path`` (``.../Variant=Chess960/...``):
    folders named ``key=value`` whose key is a tag name; parsed by pyarrow's
    ``HivePartitioning`` (URL-encoded values decoded)."""
    folders = [s for s in path.replace("\\", "/").split("/")[:-1] if "=" in s]
    keys = [s.split("=", 1)[0] for s in folders]
    if not any(_tag_of(k) for k in keys):
        return {}
    import pyarrow as pa
    import pyarrow.dataset as ds

    names = list(dict.fromkeys(keys))
    expr = ds.HivePartitioning(pa.schema([(k, pa.string()) for k in names])).parse("/" + "/".join(folders) + "/")
    return {_tag_of(k): v for k, v in ds.get_partition_keys(expr).items() if _tag_of(k) and v is not None}


def _columns_text(names: Sequence[str]) -> str:
    shown = ", ".join(names[:30])
    return shown + (f", ... ({len(names)} columns)" if len(names) > 30 else "")


def table_schema(path, source: str | None = None) -> tuple[str, "pyarrow.Schema", tuple | None]:
    """``(kind, schema, rows)`` of the table ``path``: its format (:func:`table_kind`), its
    Arrow schema (with the metadata the file stores) and, for Parquet, the rows of each row
    group (else None), from the footer or header alone. Raises :class:`TableError` naming the
    file (``source``, default its display name)."""
    import pyarrow as pa

    path = os.fspath(path)
    name = source if source is not None else source_name(path)
    kind = table_kind(path)
    if kind is None:
        raise TableError("unsupported-input", f"{name} is not a Parquet, Arrow IPC or Feather file")
    rows = None
    try:
        if kind == "parquet":
            import pyarrow.parquet as pq

            pf = pq.ParquetFile(_arrow_source(path))
            try:
                schema = pf.schema_arrow
                meta = pf.metadata
                rows = tuple(meta.row_group(i).num_rows for i in range(meta.num_row_groups))
            finally:
                pf.close()
        elif kind == "arrow":
            with _open(path) as f:
                schema = pa.ipc.open_file(f).schema
        else:
            schema = _read_feather(path).schema
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise TableError("truncated-input", f"{name}: not a readable {_WHAT[kind]} (truncated or corrupt: "
                                            f"{str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}); "
                                            "nothing is read from it") from None
    return kind, schema, rows


def parquet_codec(path: str) -> str | None:
    """The codec most of the column chunks of the first row group of the Parquet file
    ``path`` use, as :class:`pyarrow.parquet.ParquetWriter` names it (``'zstd'``,
    ``'snappy'``, ``'none'``...), so that the split's tables compress as their input; None
    for another format, a file with no row group or a codec pyarrow does not write."""
    import pyarrow.parquet as pq
    from collections import Counter

    if table_kind(path) != "parquet":
        return None
    try:
        pf = pq.ParquetFile(_arrow_source(path))
        try:
            meta = pf.metadata
            if not meta.num_row_groups or not meta.num_columns:
                return None
            group = meta.row_group(0)
            codec = Counter(group.column(i).compression for i in range(meta.num_columns)).most_common(1)[0][0]
        finally:
            pf.close()
    except Exception:  # (the run reports an unreadable table)
        return None
    codec = {"UNCOMPRESSED": "NONE", "LZ4_RAW": "LZ4"}.get(codec, codec)
    return codec.lower() if codec in ("NONE", "SNAPPY", "GZIP", "BROTLI", "LZ4", "ZSTD") else None


def inspect_table(path, moves_column: str | None = None, source: str | None = None) -> TableInfo:
    """Read the schema (and for Parquet the footer) of the table ``path`` and choose its
    columns (module doc). ``moves_column``: the moves column's name (exact, else
    case-insensitive); default: the first of :data:`MOVES_COLUMNS` present. Raises
    :class:`TableError` naming the file (``source``, default its display name)."""
    import pyarrow as pa

    path = os.fspath(path)
    name = source if source is not None else source_name(path)
    kind, schema, rows = table_schema(path, name)
    names = schema.names
    if moves_column:
        moves = moves_column if moves_column in names else next(
            (n for n in names if n.lower() == moves_column.lower()), None)
        if moves is None:
            raise TableError("unsupported-input", f"{name} has no column {moves_column!r} (--moves-column); "
                                                  f"its columns: {_columns_text(names)}")
    else:
        lower = {}
        for n in names:
            lower.setdefault(n.lower(), n)
        moves = next((lower[m] for m in MOVES_COLUMNS if m in lower), None)
        if moves is None:
            raise TableError("unsupported-input",
                             f"{name} has no moves column ({', '.join(MOVES_COLUMNS)}; or name it with "
                             f"--moves-column): its columns are {_columns_text(names)}")
    t = schema.field(moves).type
    if _is_text(t):
        moves_kind = "tokens" if moves.lower() in _TOKEN_COLUMNS else "movetext"
    elif (pa.types.is_list(t) or pa.types.is_large_list(t)) and _is_text(t.value_type):
        moves_kind = "list"
    else:
        raise TableError("unsupported-input", f"{name}: its moves column {moves!r} is {t}: give a string column "
                                              "(PGN movetext, or UCI moves) or a list of strings (SAN or UCI moves)")
    tags = []
    taken = set()
    for column in names:
        tag = _tag_of(column)
        if column != moves and tag is not None and tag not in taken and _is_tag_type(schema.field(column).type):
            taken.add(tag)  # (two columns for one tag: the first is read, as the first of duplicate tags)
            tags.append((column, tag))
    return TableInfo(kind, moves, moves_kind, tuple(tags), _partition_tags(path), rows)


def _read_feather(path: str):
    import pyarrow.feather as feather

    with warnings.catch_warnings():  # Feather v1 is read, as the format says, with a deprecation note
        warnings.simplefilter("ignore", DeprecationWarning)
        with _open(path) as f:
            return feather.read_table(f)


def _as_text(column):
    """A tag column's values as PGN writes them (an Arrow string array)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = column.type
    if pa.types.is_dictionary(t):
        column = column.cast(t.value_type)
        t = t.value_type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return column
    if pa.types.is_date(t) or pa.types.is_timestamp(t):
        # PGN dates (§8.1.1.3): the ISO date with dots (a twentieth of strftime's cost)
        return pc.replace_substring(column.cast(pa.date32()).cast(pa.string()), "-", ".")
    if pa.types.is_time(t):  # HH:MM:SS, as UTCTime (Parquet stores seconds as milliseconds)
        column = pc.cast(column, pa.time32("s"), safe=False)
    return column.cast(pa.string())  # digits, HH:MM:SS, shortest float


def _as_bytes(column):
    """A string column's values as UTF-8 bytes (no str made: the reader works on bytes)."""
    import pyarrow as pa

    t = column.type
    if pa.types.is_dictionary(t):
        column = column.cast(t.value_type)
        t = t.value_type
    if pa.types.is_string(t) or pa.types.is_large_string(t):  # (the same buffers: no copy)
        return column.view(pa.large_binary() if pa.types.is_large_string(t) else pa.binary())
    return column.cast(pa.binary())


class TableGame(RawGame):
    """A row of a game table as a :class:`~chessscan.readers.pgn.RawGame`: ``line`` is the
    row number, ``byte_offset`` the row index; :meth:`locate` gives the row and the
    character position in the movetext (a list's element number)."""

    # No __slots__: the compiled RawGame pickles its own fields and the instance __dict__
    # only (Cython's pickling), so ``_kind`` lives in the __dict__ to reach a worker process.

    def locate(self, ply_index: int) -> tuple[int, int | None]:
        n = len(self.sans)
        if ply_index < 0:
            ply_index += n
        if not 0 <= ply_index < n:
            raise IndexError(f"ply {ply_index} out of range (game has {n} plies)")
        if self._kind == "list":
            return self.line, ply_index + 1
        text = self._mt.decode("utf-8", "replace")
        if self._kind == "tokens":
            for k, m in enumerate(_TOKEN.finditer(text)):
                if k == ply_index:
                    return self.line, m.start() + 1
            return self.line, None
        pos = _scan_movetext(text, 1, ply_index)[-1]
        return self.line, (pos + 1 if pos >= 0 else None)


def _at_row(issues: list, text: str, row: int) -> list:
    """Reader issues located in ``text`` (line, column within it) moved to ``row``, the column
    made the character position in the whole text."""
    if "\n" not in text:
        return [i._replace(line=row) for i in issues]
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    return [i._replace(line=row, column=None if i.column is None else starts[i.line - 1] + i.column)
            for i in issues]


def _movetext_game(cell: bytes | None, name: str, index: int, tags: dict) -> TableGame:
    """One row's PGN movetext read as the PGN reader reads a game's movetext."""
    row = index + 1
    issues = []
    variations = nags = comments = 0
    first_comment = None
    if cell is None:
        cell = b""
    if b"\r" in cell:  # line ends as \n, each character kept in place (columns stay right)
        cell = cell.replace(b"\r\n", b" \n").replace(b"\r", b"\n")
    cut = None
    if len(cell) > MAX_GAME_BYTES:
        cell = cell[:_cut_between_tokens(cell, MAX_GAME_BYTES)]
        cut = _issue("game-too-long", row, None, f"movetext longer than {MAX_GAME_BYTES >> 20} MiB: "
                                                  "its text from here to its end is not read")
    sans = notes = None
    annotated = b"[%" in cell
    if b"{" in cell or b";" in cell:
        clean, comments, left_open = blank_comments(cell)
        if not left_open:
            sans, result = fast_movetext(clean)
            if sans is not None and comments:
                fc = _FIRST_COMMENT_B.match(cell)
                if fc is not None:
                    first_comment = fc.group(1).decode("utf-8", "replace").strip()
            if annotated and sans is not None:
                notes, problems, plies = read_notes(cell)
                if plies == len(sans):
                    if problems:
                        issues = _at_row(note_issues(cell, "utf-8", 1, problems), cell.decode("utf-8", "replace"), row)
                else:
                    notes = None
    else:
        sans, result = fast_movetext(cell)
    if sans is None:
        text = cell.decode("utf-8", "replace")
        reader = new_note_reader() if annotated else None
        sans, result, variations, comments, nags, first_comment, found, _ = _scan_movetext(text, 1, notes=reader)
        if reader is not None:
            notes = reader.finish()[0]
        issues = _at_row(found, text, row)
    if cut is not None:
        issues.append(cut._replace(ply=len(sans) + 1))
    elif result is None:
        issues.append(_issue("missing-result", row, None, "game has no termination marker (1-0, 0-1, 1/2-1/2, *)"))
    game = TableGame(name, index, index, row, tags, sans, result, row, variations, comments, nags, issues,
                     first_comment, cell, notes=notes)
    game._kind = "movetext"
    return game


def _tokens_game(cell: bytes | None, name: str, index: int, tags: dict) -> TableGame:
    cell = cell or b""
    sans = cell.decode("utf-8", "replace").split()
    game = TableGame(name, index, index, index + 1, tags, sans, None, index + 1, _mt=cell)
    game._kind = "tokens"
    return game


def _list_game(cell: list | None, name: str, index: int, tags: dict) -> TableGame:
    sans = ["" if m is None else m for m in cell] if cell else []
    game = TableGame(name, index, index, index + 1, tags, sans, None, index + 1)
    game._kind = "list"
    return game


_MAKERS = {"movetext": _movetext_game, "tokens": _tokens_game, "list": _list_game}


def _empty_game(name: str, index: int, code: str, message: str) -> TableGame:
    game = TableGame(name, index, index, index + 1, {}, [], None, 0,
                     issues=[_issue(code, index + 1, None, message)])
    game._kind = "list"
    return game


_consume = deque(maxlen=0).extend  # runs an iterator to its end, keeping nothing
_set_item = dict.__setitem__


def _row_tags(batch, info: TableInfo) -> list[dict]:
    """Each row's tags (a dict in column order, the partition tags first), built a column at a
    time with C loops (``map``): a dict comprehension per row cost 3.4 µs a game."""
    import pyarrow.compute as pc

    fixed = info.fixed
    rows = [dict(fixed) for _ in range(batch.num_rows)] if fixed else [{} for _ in range(batch.num_rows)]
    for k, (_, tag) in enumerate(info.tags, 1):
        values = _as_text(batch.column(k))
        nulls = values.null_count
        if not nulls:
            _consume(map(_set_item, rows, repeat(tag), values.to_pylist()))
        elif nulls < len(values):  # a null is a missing tag
            at = pc.indices_nonzero(values.is_valid()).to_pylist()
            _consume(map(_set_item, [rows[i] for i in at], repeat(tag), values.drop_null().to_pylist()))
    return rows


def _games(batch, index0: int, name: str, info: TableInfo) -> list[TableGame]:
    """The games of one record batch (column 0: the moves, then the tag columns)."""
    moves = batch.column(0)
    cells = moves.to_pylist() if info.moves_kind == "list" else _as_bytes(moves).to_pylist()
    make = _MAKERS[info.moves_kind]
    return [make(cell, name, index0 + i, tags) for i, (cell, tags) in enumerate(zip(cells, _row_tags(batch, info)))]


class TableReader:
    """The games of a game table, one per row (:class:`TableGame`), in row order.

    ``path``: a file or URL; ``moves_column`` as :func:`inspect_table`; ``row_groups``: a
    range of row group numbers to read (Parquet; default all), whose games keep their index
    in the whole file, so that a range can be read apart (by a worker) and give the games a
    read of the whole file gives; ``source``: the name written in the rows. A context manager;
    ``bytes_read`` estimates the bytes of the file read so far (for progress).

    Never raises for bad content: a table :func:`inspect_table` refuses, or an error while
    reading its rows, gives a game with no moves carrying the ``truncated-input`` or
    ``unsupported-input`` error (after the games read before it).
    """

    def __init__(self, path, moves_column: str | None = None, row_groups: range | None = None,
                 source: str | None = None, batch_rows: int = BATCH_ROWS) -> None:
        self.path = os.fspath(path)
        self.name = source if source is not None else source_name(self.path)
        self.moves_column = moves_column
        self.row_groups = row_groups
        self.batch_rows = batch_rows
        self.bytes_read = 0
        #: Whether the read stopped at a fault (its last game carries the error): the rows
        #: after it are not read, nor, in a read of the whole file, those of later row groups.
        self.ended = False

    def __enter__(self) -> "TableReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        pass

    def __iter__(self) -> Iterator[TableGame]:
        import pyarrow as pa

        try:
            info = inspect_table(self.path, self.moves_column, self.name)
        except TableError as exc:
            self.ended = True
            yield _empty_game(self.name, 0, exc.code, str(exc))
            return
        size = source_size(self.path)
        columns = [info.moves] + [c for c, _ in info.tags]
        index = 0
        try:
            for index0, total, batch in self._batches(info, columns):
                index = index0
                games = _games(batch, index0, self.name, info)
                index = index0 + len(games)
                if size and total:
                    self.bytes_read = size * index // total
                yield from games
        except (pa.ArrowException, OSError, ValueError) as exc:
            self.ended = True
            yield _empty_game(self.name, index, "truncated-input",
                              f"{self.name}: the {_WHAT[info.kind]} is truncated or corrupt at row {index + 1} "
                              f"({str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}); "
                              "the rows after this point are lost")
        if size:
            self.bytes_read = size

    def _batches(self, info: TableInfo, columns: list[str]):
        """``(first row index, rows in all, record batch)`` of the rows to read."""
        # Page by page from a local file (memory: the batch, not the row group's column chunks;
        # no more CPU); a URL's column chunks in few requests, as an object store wants.
        return row_batches(self.path, info.kind, info.rows, columns, self.row_groups, self.batch_rows,
                           pre_buffer=is_url(self.path))


def row_group_ranges(path, moves_column: str | None = None, rows: int | None = None,
                     size: int | None = None, source: str | None = None) -> list[tuple[range, int, int]] | None:
    """How to spread the Parquet table ``path`` over tasks by row group, from its footer
    alone (no row is read, no counting pass): ``[(row groups, rows, bytes), ...]``,
    consecutive ranges in file order, each closed once it holds ``rows`` rows or ``size``
    uncompressed bytes (whichever comes first; the last may hold less). None for a table
    that is not Parquet or has no row, or that :func:`inspect_table` refuses (read whole,
    its error is then the one game it gives)."""
    try:
        info = inspect_table(path, moves_column, source)
    except TableError:
        return None
    if info.kind != "parquet" or not info.rows or not sum(info.rows):
        return None
    import pyarrow.parquet as pq

    try:
        with _open(os.fspath(path)) as f:
            meta = pq.ParquetFile(f).metadata
            sizes = [meta.row_group(g).total_byte_size for g in range(meta.num_row_groups)]
    except Exception:  # (read whole then: its reader reports what is wrong)
        return None
    ranges = []
    start = held = held_bytes = 0
    for g, n in enumerate(info.rows):
        held += n
        held_bytes += sizes[g]
        if (rows is not None and held >= rows) or (size is not None and held_bytes >= size) \
                or g + 1 == len(info.rows):
            ranges.append((range(start, g + 1), held, held_bytes))
            start, held, held_bytes = g + 1, 0, 0
    return ranges


def read_row_groups(path: str, source: str, row_groups: range, moves_column: str | None, fn, *args):
    """``fn(games, *args)`` with ``games`` the games of ``row_groups`` of the table ``path``
    (:class:`TableReader`, streamed: memory holds a batch of rows); what a ``--jobs``
    worker runs for a range of row groups. The result is ``fn``'s, as a :class:`RowsResult`
    whose ``ended`` says whether the read stopped at a fault (the ranges after it are then
    not the file's: a read of the whole file stops there)."""
    with TableReader(path, moves_column, row_groups=row_groups, source=source) as reader:
        result = RowsResult(fn(reader, *args))
    result.ended = reader.ended
    return result


class RowsResult(tuple):
    """A task's result tuple, with ``ended`` (see :func:`read_row_groups`)."""

    ended = False


def row_batches(path: str, kind: str, rows: tuple | None, columns: list[str] | None = None,
                row_groups: range | None = None, batch_rows: int = BATCH_ROWS, pre_buffer: bool | None = None):
    """``(first row index, rows in all or None, record batch)`` of the table ``path`` (``kind``
    and ``rows`` as :func:`table_schema` gives them), in row order, ``batch_rows`` rows at a
    time within a row group (Parquet, through a buffered stream) or an Arrow record batch.
    ``columns``: the columns to read (None: every column, the batches then have the file's
    schema); ``row_groups``: a range of Parquet row groups (default all); ``pre_buffer``:
    pyarrow's (True: a row group's column chunks are read whole, in few requests, as an
    object store wants; False: page by page, memory bounded by the batch; None: pyarrow's
    default, True). Raises what
    pyarrow raises on a corrupt file (``ArrowException``, OSError, ValueError), after the
    batches before the fault."""
    import pyarrow as pa

    if kind == "parquet":
        import pyarrow.parquet as pq

        groups = range(len(rows)) if row_groups is None else row_groups
        index0 = sum(rows[: groups.start]) if len(groups) else 0
        total = sum(rows)
        source = _arrow_source(path)
        # A buffered stream: a column chunk is read in pieces, not whole (memory).
        more = {} if pre_buffer is None else {"pre_buffer": pre_buffer}
        pf = pq.ParquetFile(source, buffer_size=1 << 20, **more)
        try:
            if not len(groups):
                return
            for group in groups:  # (one at a time: a corrupt one loses no row before it)
                for batch in pf.iter_batches(batch_rows, row_groups=[group], columns=columns, use_threads=False):
                    yield index0, total, batch
                    index0 += batch.num_rows
        finally:
            pf.close()
            if source is not path:
                source.close()
        return
    if kind == "arrow":
        with _open(path) as f:
            reader = pa.ipc.open_file(f)
            index0 = 0
            for k in range(reader.num_record_batches):
                batch = reader.get_batch(k)
                whole = pa.Table.from_batches([batch if columns is None else batch.select(columns)])
                for batch in whole.to_batches(batch_rows):
                    yield index0, None, batch
                    index0 += batch.num_rows
        return
    table = _read_feather(path)
    if columns is not None:
        table = table.select(columns)
    index0 = 0
    for batch in table.to_batches(batch_rows):
        yield index0, table.num_rows, batch
        index0 += batch.num_rows
