"""Write ``lichess-magnus-300.parquet``: the games of ``lichess-magnus-300.pgn.zst`` as a table
in the schema of the Lichess database on Hugging Face (``Lichess/standard-chess-games``).

One row a game. The columns of that schema, in its order and with its types: ``Event, Site,
White, Black, Result, WhiteTitle, BlackTitle`` (string), ``WhiteElo, BlackElo,
WhiteRatingDiff, BlackRatingDiff`` (int16), ``UTCDate`` (date32), ``UTCTime`` (time32[s]),
``ECO, Opening, Termination, TimeControl, movetext`` (string: the game's movetext as written,
``[%clk]``/``[%eval]`` comments and the result included); then the two tags these games have
that the schema leaves out (the Hugging Face data holds standard games and no ``Date``):
``Date`` and ``Variant`` (string), so that the table holds every tag of the PGN. A missing tag
is a null. Row groups of 64 rows (five of them), zstd.

The PGN is split here with a regular expression of its own (tag lines, a blank line, the
movetext up to the next blank line: the Lichess export's layout), not with chessscan's
reader, so that a test reading both files compares two independent paths.

Run from the repository: ``python data/samples/make_parquet_sample.py``.
"""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import zstandard

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "lichess-magnus-300.pgn.zst"
TARGET = HERE / "lichess-magnus-300.parquet"

SCHEMA = pa.schema([
    ("Event", pa.string()), ("Site", pa.string()), ("White", pa.string()), ("Black", pa.string()),
    ("Result", pa.string()), ("WhiteTitle", pa.string()), ("BlackTitle", pa.string()),
    ("WhiteElo", pa.int16()), ("BlackElo", pa.int16()), ("WhiteRatingDiff", pa.int16()),
    ("BlackRatingDiff", pa.int16()), ("UTCDate", pa.date32()), ("UTCTime", pa.time32("s")),
    ("ECO", pa.string()), ("Opening", pa.string()), ("Termination", pa.string()),
    ("TimeControl", pa.string()), ("movetext", pa.string()),
    ("Date", pa.string()), ("Variant", pa.string()),
])
GAME = re.compile(r"((?:\[[^\n]*\]\n)+)\n(.*?)(?:\n\n|\n?\Z)", re.S)
TAG = re.compile(r'\[(\w+) "(.*)"\]')


def value(name: str, text: str | None):
    """A tag's text as the column's type (None stays None)."""
    if text is None:
        return None
    t = SCHEMA.field(name).type
    if t == pa.int16():
        return int(text)
    if t == pa.date32():
        return datetime.date(*map(int, text.split(".")))
    if t == pa.time32("s"):
        return datetime.time(*map(int, text.split(":")))
    return text


def main() -> None:
    text = zstandard.ZstdDecompressor().decompress(SOURCE.read_bytes(), max_output_size=1 << 30).decode("utf-8")
    columns = {name: [] for name in SCHEMA.names}
    for m in GAME.finditer(text):
        tags = dict(TAG.findall(m.group(1)))
        for name in SCHEMA.names:
            columns[name].append(value(name, " ".join(m.group(2).split("\n")).strip() if name == "movetext"
                                       else tags.get(name)))
    table = pa.table(columns, schema=SCHEMA)
    pq.write_table(table, TARGET, row_group_size=64, compression="zstd")
    print(f"{TARGET.name}: {table.num_rows} games, {pq.ParquetFile(TARGET).num_row_groups} row groups, "
          f"{TARGET.stat().st_size:,} bytes")


if __name__ == "__main__":
    main()
