"""Games that are there twice: games.moves_hash, analyze --duplicates, chessscan duplicates.

The hash is recomputed apart (python-chess for the UCI moves, hashlib for BLAKE2b) and the
duplicates counted apart (pandas over those UCI strings), not taken from chessscan."""

from __future__ import annotations

import hashlib
import json
import shutil

import chess.pgn
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from chessscan.cli import main
from chessscan.reports.duplicates import Search
from conftest import SAMPLES

pytest.importorskip("duckdb", reason="the duplicate search runs in DuckDB: pip install 'chessscan[duplicates]'")

MAGNUS = SAMPLES / "lichess-magnus-300.pgn"
VARIANTS = SAMPLES / "lichess-jishanshaikh4-variants.pgn"
START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def analyze(out, *paths, options=("--duplicates",)):
    result = run("analyze", *paths, "-o", out, "--silent", "--cross-check", "off", "--positions", "none",
                 "--jobs", "1", *options)
    assert result.exit_code == 0, result.output
    return out


def python_chess_games(*paths):
    """(source, game_index, start FEN, UCI moves) of every standard or Chess960 game, from
    python-chess."""
    out = []
    for path in paths:
        with open(path, encoding="utf-8-sig") as f:
            i = 0
            while (game := chess.pgn.read_game(f)) is not None:
                if game.headers.get("Variant", "Standard") in ("Standard", "Chess960", "From Position"):
                    board = game.board()
                    fen, ucis = board.fen(), []
                    for move in game.mainline_moves():
                        ucis.append(board.uci(move))
                        board.push(move)
                    out.append((str(path), i, fen, " ".join(ucis)))
                i += 1
    return pd.DataFrame(out, columns=["source", "game_index", "fen", "uci"])


def table(out, name):
    """A Parquet table of a report folder: a dataset folder (out/name/part-*.parquet) or a file."""
    folder = out / name
    return pq.read_table(folder if folder.is_dir() else out / f"{name}.parquet")


def games(out):
    return table(out, "games").to_pandas()


def games_file(out):
    """The one file of a one-process run's games table."""
    parts = sorted((out / "games").glob("part-*.parquet"))
    return parts[0] if len(parts) == 1 else out / "games.parquet"


def test_moves_hash_is_blake2b_128_of_the_fen_and_the_uci_moves(tmp_path):
    analyze(tmp_path / "r", MAGNUS, VARIANTS, options=())
    ours = games(tmp_path / "r").set_index(["source", "game_index"]).moves_hash
    theirs = python_chess_games(MAGNUS, VARIANTS)
    assert len(theirs) == 400 and ours.notna().sum() == 400  # the 8 other variants have none
    for row in theirs.itertuples():
        text = " ".join(filter(None, [row.fen, row.uci]))
        assert ours[row.source, row.game_index] == hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
    # From a [FEN] setup and Chess960 too.
    assert (theirs.fen != START).sum() == 40  # [FEN] setups and Chess960 starts among them


GAME = """[Event "{event}"]
[White "{white}"]
[Black "B"]
[Result "{result}"]
{fen}
{moves} {result}

"""
MOVES = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Bxc6 dxc6 5. O-O f6"
OTHER = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Bxc6 dxc6 5. O-O f5"
SETUP = '[SetUp "1"]\n[FEN "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"]'


def pgn(*games_):
    return "".join(GAME.format(event=e, white=w, result=r, fen=f, moves=m) for e, w, r, f, m in games_)


@pytest.fixture
def two_files(tmp_path):
    a, b = tmp_path / "a.pgn", tmp_path / "b.pgn"
    a.write_text(pgn(("A", "W", "*", "", MOVES),          # 0: first
                     ("A", "W", "*", "", OTHER),          # 1: one move different: not a duplicate
                     ("Other", "X", "1-0", "", MOVES),    # 2: other tags, same moves: duplicate of 0
                     ("A", "W", "*", SETUP, "1. e3"),     # 3: from a [FEN]
                     ("A", "W", "*", "", "1. e4 e5 2. Ke3")))  # 4: illegal: no hash
    b.write_text(pgn(("B", "W", "*", "", "1. e3"),        # 0: standard start: not the [FEN] game
                     ("B", "W", "*", SETUP, "1. e3"),     # 1: duplicate of a.pgn 3
                     ("B", "W", "*", "", MOVES),          # 2: duplicate of a.pgn 0
                     ("B", "W", "*", "", "1. e4 e5 2. Ke3")))  # 3: illegal again: no hash, no duplicate
    return a, b


def test_duplicates_inside_a_file_and_across_files(tmp_path, two_files):
    a, b = two_files
    out = analyze(tmp_path / "r", a, b)
    g = games(out)
    assert g.moves_hash.isna().tolist() == [False, False, False, False, True, False, False, False, True]
    assert [None if pd.isna(v) else int(v) for v in g.duplicate_of] == [None, None, 0, None, None,
                                                                         None, 3, 0, None]
    d = table(out, "duplicates").to_pandas()
    assert d[["source", "game_index", "line", "first_source", "first_game_index", "first_line",
              "duplicate_of"]].astype(str).values.tolist() == [
        [str(a), "2", "15", str(a), "0", "1", "0"],
        [str(b), "1", "8", str(a), "3", "22", "3"],
        [str(b), "2", "16", str(a), "0", "1", "0"]]
    assert (d.moves_hash == g.moves_hash[0]).tolist() == [True, False, True]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["duplicates"] == {"games_hashed": 7, "duplicate_games": 3, "games_repeated": 2}
    # Without --duplicates: the hash, and no search.
    plain = analyze(tmp_path / "plain", a, b, options=())
    assert "duplicate_of" not in games(plain).columns and not (plain / "duplicates.parquet").exists() and not (plain / "duplicates").exists()
    assert games(plain).moves_hash.equals(g.moves_hash)
    assert "duplicates" not in json.loads((plain / "summary.json").read_text())


def test_the_csv_report_holds_the_same_duplicates(tmp_path, two_files):
    out = analyze(tmp_path / "csv", *two_files, options=("--duplicates", "--format", "csv"))
    ref = analyze(tmp_path / "pq", *two_files)
    g = pd.read_csv(out / "games.csv", dtype={"duplicate_of": "Int64"})
    assert g.duplicate_of.tolist() == games(ref).duplicate_of.astype("Int64").tolist()
    assert (out / "games.csv").read_text().splitlines()[0].endswith(',"moves_hash","duplicate_of"')
    assert len(pd.read_csv(out / "duplicates.csv")) == 3


def test_the_duplicates_of_jobs_2_chunks_are_those_of_one_process(tmp_path):
    # Four copies of the sample in one file (1.4 MB): --jobs 2 cuts it into chunks.
    big = tmp_path / "four.pgn"
    big.write_text(MAGNUS.read_text() * 4)
    one = analyze(tmp_path / "one", big, VARIANTS)
    two = analyze(tmp_path / "two", big, VARIANTS, options=("--duplicates", "--jobs", "2"))
    for name in ("games", "duplicates"):
        pd.testing.assert_frame_equal(table(one, name).to_pandas(),
                                      table(two, name).to_pandas(), check_exact=True)
    assert json.loads((two / "summary.json").read_text())["duplicates"] == {
        "games_hashed": 1300, "duplicate_games": 900, "games_repeated": 300}


def test_an_independent_count_of_the_duplicates(tmp_path):
    """pandas over python-chess's start FEN and UCI moves, against the duplicates table."""
    copy = tmp_path / "copy.pgn"
    text = MAGNUS.read_text().split("\n\n[Event ")
    copy.write_text("\n\n[Event ".join(text[:150]) + "\n\n")  # the sample's first 150 games again
    out = analyze(tmp_path / "r", MAGNUS, VARIANTS, copy)
    theirs = python_chess_games(MAGNUS, VARIANTS, copy)
    repeated = theirs.duplicated(["fen", "uci"], keep="first")
    d = table(out, "duplicates").to_pandas()
    assert repeated.sum() == len(d) == 150
    assert sorted(zip(d.source.astype(str), d.game_index)) == sorted(
        zip(theirs.source[repeated], theirs.game_index[repeated]))


def test_chessscan_duplicates_finds_what_two_reports_share(tmp_path, two_files):
    a, b = two_files
    ra, rb = analyze(tmp_path / "ra", a, options=()), analyze(tmp_path / "rb", b, options=())
    result = CliRunner().invoke(main, ["duplicates", str(ra), str(rb)])
    assert result.exit_code == 0, result.output
    rows = [line.split(",") for line in result.stdout.splitlines()]
    assert rows[0] == ['"report"', '"source"', '"game_index"', '"line"', '"moves_hash"']
    # a.pgn's games 0 and 2 and b.pgn's 2 (one game), a.pgn's 3 and b.pgn's 1 (the [FEN] one).
    assert [(r[0].strip('"'), int(r[2])) for r in rows[1:]] == [
        (str(ra), 0), (str(ra), 2), (str(rb), 2), (str(ra), 3), (str(rb), 1)]
    assert result.stderr.strip() == f"2 games the reports share: 5 rows ({ra}: 3, {rb}: 2)"
    out = tmp_path / "shared.parquet"
    assert run("duplicates", ra, rb, "-o", out).exit_code == 0
    assert pq.read_table(out).num_rows == 5
    # One report: the games it holds twice.
    result = CliRunner().invoke(main, ["duplicates", str(ra)])
    assert result.stderr.strip() == f"1 games the report holds more than once: 2 rows ({ra}: 2)"


def test_chessscan_duplicates_refuses_what_is_not_a_report_in_one_line(tmp_path, two_files):
    ra = analyze(tmp_path / "ra", two_files[0], options=())
    result = run("duplicates", ra, tmp_path)
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"Error: {tmp_path}: not a chessscan report (no games.parquet, games.csv or games/part-*.parquet in it)"]
    old = tmp_path / "old"
    old.mkdir()
    pq.write_table(table(ra, "games").drop(["moves_hash"]), old / "games.parquet")
    result = run("duplicates", ra, old)
    assert result.exit_code == 2
    assert result.output.strip() == (f"Error: {old}: its games table has no moves_hash column (a report "
                                     "written by an older chessscan): run analyze again")


def test_a_small_memory_limit_still_finds_every_duplicate(tmp_path):
    """200,000 games with 50,000 hashes repeated: DuckDB within 64 MB spills and finds all."""
    import numpy as np

    n = 200_000
    rng = np.random.default_rng(7)
    ids = rng.permutation(n)
    ids[ids >= 150_000] -= 150_000  # ids 150,000.. repeat 0..49,999
    hashes = [hashlib.blake2b(str(i).encode(), digest_size=16).hexdigest() for i in ids]
    report = tmp_path / "big"
    report.mkdir()
    pq.write_table(pa.table({"source": ["x.pgn"] * n, "game_index": np.arange(n), "line": np.arange(n) * 20 + 1,
                             "moves_hash": hashes}), report / "games.parquet")
    found = tmp_path / "found.parquet"
    with Search([report], "64MB", spill_dir=tmp_path / "spill") as search:
        assert search.duplicates(found) == 50_000
    d = pq.read_table(found).to_pandas()
    first = {}
    for k, i in enumerate(ids):
        first.setdefault(i, k)
    want = [(k, first[i]) for k, i in enumerate(ids) if first[i] != k]
    assert list(zip(d.ord, d.first_ord)) == want


def test_validate_duplicates_warns_naming_the_first_games_file_and_line(tmp_path, two_files):
    a, b = two_files
    result = run("validate", a, b, "--duplicates", "--fail-on", "warning", "--jobs", "1")
    assert result.exit_code == 1
    lines = [line for line in result.stdout.splitlines() if "duplicate-game" in line]
    first = "the same moves from the same start position as game_index"
    assert lines == [f"{a}:15: warning[duplicate-game]: {first} 0 at {a}:1 (game_index 2)",
                     f"{b}:8: warning[duplicate-game]: {first} 3 at {a}:22 (game_index 1)",
                     f"{b}:16: warning[duplicate-game]: {first} 0 at {a}:1 (game_index 2)"]
    assert result.stdout.splitlines()[-3:] == lines  # after the other diagnostics
    assert "  3  warning  duplicate-game" in result.stderr
    # --jobs 2 gives the same lines; CI can ignore the code (counted, not reported, not failing).
    assert run("validate", a, b, "--duplicates", "--fail-on", "warning", "--jobs", "2").stdout == result.stdout
    ignored = run("validate", a, b, "--duplicates", "--ignore", "duplicate-game")
    assert "duplicate-game" not in ignored.stdout and "3  warning  duplicate-game  (not reported)" in ignored.stderr
    # Without the flag: no search.
    assert "duplicate-game" not in run("validate", a, b).output


def test_validate_duplicates_is_refused_with_the_split(tmp_path, two_files):
    result = run("validate", *two_files, "--duplicates", "--clean-output", tmp_path / "clean.pgn")
    assert result.exit_code == 2
    assert "--duplicates cannot be combined with --clean-output" in result.output


def test_a_failure_while_games_duplicate_of_is_written_keeps_the_whole_games_table(tmp_path, two_files,
                                                                                    monkeypatch):
    """The games table is written again with duplicate_of: cut short, the one written first
    stays, whole (a stop or a full disk must not leave a games table missing games)."""
    from chessscan.reports import duplicates

    out = analyze(tmp_path / "r", *two_files, options=())
    before = games_file(out).read_bytes()

    def cut(path, fmt):
        for i, batch in enumerate(pq.ParquetFile(path).iter_batches(batch_size=2)):
            if i == 2:
                raise KeyboardInterrupt
            yield batch

    monkeypatch.setattr(duplicates, "_games_batches", cut)
    with Search([out]) as search:
        found = search.spill_dir / "found.parquet"
        search.duplicates(found)
        with pytest.raises(KeyboardInterrupt):
            duplicates.add_duplicate_of(search, found, "parquet")
    assert games_file(out).read_bytes() == before
    assert sorted(p.name for p in out.iterdir() if "partial" in p.name) == []


# --- --contained-games: games whose whole mainline is the start of another's -------------------

AFTER_E4 = '[SetUp "1"]\n[FEN "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"]'


@pytest.fixture
def prefixes(tmp_path):
    a = tmp_path / "p.pgn"
    a.write_text(pgn(("A", "W", "*", "", MOVES),                   # 0: 10 plies
                     ("A", "W", "*", "", "1. e4 e5 2. Nf3"),       # 1: the start of 0
                     ("Other", "X", "*", "", "1. e4 e5 2. Nf3"),   # 2: again, other tags: also the start of 0
                     ("A", "W", "*", "", OTHER),                   # 3: 9 plies of 0 and another 10th: not
                     ("A", "W", "*", AFTER_E4, "1... e5 2. Nf3"),  # 4: 0's moves after 1. e4, from that FEN: not
                     ("A", "W", "*", SETUP, "1. e3"),              # 5: from a [FEN]: the start of 6
                     ("A", "W", "*", SETUP, "1. e3 Kd7"),          # 6
                     ("A", "W", "*", "", ""),                      # 7: no moves: not counted
                     ("A", "W", "*", "", "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Bxc6 dxc6 5. O-O")))  # 8: 9 plies of 0, 3
    return a


def test_contained_games_with_the_flag(tmp_path, prefixes):
    out = analyze(tmp_path / "r", prefixes, options=("--duplicates", "--contained-games"))
    c = table(out, "contained_games").to_pandas()
    p = str(prefixes)
    assert c.astype(str).values.tolist() == [
        # source, game_index, line, plies, in_source, in_game_index, in_line, in_plies, contained_in
        [p, "1", "8", "3", p, "8", "60", "9", "8"],
        [p, "2", "15", "3", p, "8", "60", "9", "8"],
        [p, "5", "37", "1", p, "6", "45", "2", "6"],
        # (0 and 3 continue it: 3's 10th move, f7f5, comes first in moves_key's order)
        [p, "8", "60", "9", p, "3", "22", "10", "3"]]
    g = games(out)
    # The key: 8 bytes of BLAKE2b of the start FEN, then 2 bytes a move (from << 9 | to << 3 | promotion).
    start = hashlib.blake2b(START.encode(), digest_size=8).hexdigest()
    e2e4, e7e5, g1f3 = (12 << 9 | 28 << 3), (52 << 9 | 36 << 3), (6 << 9 | 21 << 3)
    assert g.moves_key[1] == start + f"{e2e4:04x}{e7e5:04x}{g1f3:04x}"
    assert g.moves_key[7] == start and g.plies[7] == 0
    assert g.moves_key[0].startswith(g.moves_key[8]) and g.moves_key.str.len().tolist()[:4] == [56, 28, 28, 56]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["duplicates"] == {"games_hashed": 9, "duplicate_games": 1, "games_repeated": 1,
                                     "contained_games": 4}
    # The same in a CSV report.
    csv = analyze(tmp_path / "csv", prefixes, options=("--duplicates", "--contained-games", "--format", "csv"))
    assert pd.read_csv(csv / "contained_games.csv").astype(str).values.tolist() == c.astype(str).values.tolist()
    assert pd.read_csv(csv / "games.csv", dtype={"moves_key": str}).moves_key.fillna("").tolist() == \
        g.moves_key.fillna("").tolist()


def test_without_the_flag_no_contained_games(tmp_path, prefixes):
    out = analyze(tmp_path / "r", prefixes)
    assert "moves_key" not in games(out).columns
    assert not (out / "contained_games").exists() and not (out / "contained_games.parquet").exists()
    assert "contained_games" not in json.loads((out / "summary.json").read_text())["duplicates"]
    result = run("analyze", prefixes, "-o", tmp_path / "x", "--contained-games")
    assert result.exit_code == 2 and "--contained-games is part of the duplicate search" in result.output
    assert not (tmp_path / "x").exists()


def test_an_independent_count_of_the_contained_games(tmp_path):
    """python-chess's start FEN and UCI moves, each game against every other: the games whose
    moves are the start of another's from the same FEN, against the contained_games table."""
    cut = tmp_path / "cut.pgn"
    games_ = [g for g in MAGNUS.read_text().split("\n\n[Event ") if g.strip()][:60]
    # The first 60 games of the sample again, cut after 10 + i moves (those longer than that).
    texts = []
    for i, text in enumerate(games_):
        text = text if text.startswith("[Event ") else "[Event " + text
        head, moves = text.split("\n\n", 1)
        tokens = [t for t in moves.split() if not t.startswith(("{", "[%")) and "]" not in t and "}" not in t
                  and t not in ("1-0", "0-1", "1/2-1/2", "*")]
        texts.append(head + "\n\n" + " ".join(tokens[:10 + i]) + " *\n\n")
    cut.write_text("".join(texts))
    out = analyze(tmp_path / "r", MAGNUS, VARIANTS, cut, options=("--duplicates", "--contained-games"))
    theirs = python_chess_games(MAGNUS, VARIANTS, cut)
    theirs["moves"] = theirs.uci.str.split()
    want = set()
    for _, group in theirs.groupby("fen"):
        rows = list(group.itertuples())
        for r in rows:
            if r.moves and any(len(o.moves) > len(r.moves) and o.moves[:len(r.moves)] == r.moves for o in rows):
                want.add((r.source, r.game_index))
    c = table(out, "contained_games").to_pandas()
    assert 30 < len(want) == len(c)
    assert set(zip(c.source.astype(str), c.game_index)) == want
    # Each names a game that continues it.
    uci = theirs.set_index(["source", "game_index"]).moves
    for r in c.itertuples():
        inner, outer = uci[str(r.source), r.game_index], uci[str(r.in_source), r.in_game_index]
        assert len(outer) == r.in_plies > r.plies == len(inner) and outer[:len(inner)] == inner


def test_chessscan_duplicates_lists_the_contained_games_of_reports(tmp_path, prefixes):
    a = tmp_path / "a.pgn"
    a.write_text(pgn(("A", "W", "*", "", MOVES)))
    options = ("--duplicates", "--contained-games")
    ra, rp = analyze(tmp_path / "ra", a, options=options), analyze(tmp_path / "rp", prefixes, options=options)
    result = CliRunner().invoke(main, ["duplicates", "--contained-games", str(ra), str(rp)])
    assert result.exit_code == 0, result.output
    rows = [[v.strip('"') for v in line.split(",")] for line in result.stdout.splitlines()]
    assert rows[0] == ["report", "source", "game_index", "line", "plies", "in_report", "in_source",
                       "in_game_index", "in_line", "in_plies"]
    p = str(prefixes)
    assert rows[1:] == [[str(rp), p, "1", "8", "3", str(rp), p, "8", "60", "9"],
                        [str(rp), p, "2", "15", "3", str(rp), p, "8", "60", "9"],
                        [str(rp), p, "5", "37", "1", str(rp), p, "6", "45", "2"],
                        [str(rp), p, "8", "60", "9", str(rp), p, "3", "22", "10"]]
    assert result.stderr.strip() == "4 games are the start of another game's mainline"
    # A report written without the flag has no moves_key: one line, exit 2.
    plain = analyze(tmp_path / "plain", a, options=())
    result = run("duplicates", "--contained-games", ra, plain)
    assert result.exit_code == 2
    assert result.output.strip() == (f"Error: {plain}: its games table has no moves_key column: run analyze "
                                     "again with --duplicates --contained-games")


def contained_keys_report(folder, n, longest, seed=11):
    """A games table of ``n`` keys of 3 to ``longest`` random moves (distinct in their first
    two) and, after them, a copy of a quarter of them without the last move: (report, the
    games copied in the copies' order)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    moves = rng.integers(1, 1 << 15, size=(n, longest)).astype(">u2")
    moves[:, 0], moves[:, 1] = 1 + (np.arange(n) >> 15), np.arange(n) & 32767
    lengths = rng.integers(3, longest + 1, size=n)
    cut = rng.permutation(n)[:n // 4]
    keys = ["ab" * 8 + moves[i, :lengths[i]].tobytes().hex() for i in range(n)]
    keys += ["ab" * 8 + moves[i, :lengths[i] - 1].tobytes().hex() for i in cut]
    folder.mkdir()
    m = len(keys)
    pq.write_table(pa.table({"source": ["x.pgn"] * m, "game_index": np.arange(m), "line": np.arange(m) * 20 + 1,
                             "plies": np.concatenate([lengths, lengths[cut] - 1]).astype(np.int32),
                             "moves_hash": [hashlib.md5(k.encode()).hexdigest() for k in keys],
                             "moves_key": keys}), folder / "games.parquet", row_group_size=65_536)
    return folder, cut


def check_contained(found, n, cut):
    d = pq.read_table(found).to_pandas()
    assert d.ord.tolist() == list(range(n, n + n // 4))  # the copies, each in the game it was cut from
    assert d.in_ord.tolist() == cut.tolist() and (d.in_plies == d.plies + 1).all()


def test_contained_games_across_batches_within_a_memory_limit(tmp_path):
    """250,000 keys (the neighbours compared across 65,536-row batches) within 128 MB."""
    report, cut = contained_keys_report(tmp_path / "r", 200_000, 80)
    found = tmp_path / "found.parquet"
    with Search([report], "128MB", spill_dir=tmp_path / "spill", contained=True) as search:
        assert search.contained(found) == 50_000
    check_contained(found, 200_000, cut)
    assert list((tmp_path / "spill").iterdir()) == []  # its files removed


@pytest.mark.slow
def test_a_small_memory_limit_still_finds_every_contained_game(tmp_path):
    """1,250,000 keys, 230 MB of them, within 256 MB: DuckDB's sort spills and finds them all."""
    report, cut = contained_keys_report(tmp_path / "r", 1_000_000, 80)
    found = tmp_path / "found.parquet"
    with Search([report], "256MB", spill_dir=tmp_path / "spill", contained=True) as search:
        assert search.contained(found) == 250_000
    check_contained(found, 1_000_000, cut)


def test_chessscan_duplicates_refuses_an_unfinished_report(tmp_path, two_files):
    """A report whose run did not finish (no summary.json: Ctrl-C, a killed run) holds some
    of its games only: one line, exit 2, not a partial answer with exit 0."""
    ra = analyze(tmp_path / "ra", two_files[0], options=())
    rb = analyze(tmp_path / "rb", two_files[1], options=())
    (rb / "summary.json").unlink()
    result = run("duplicates", ra, rb)
    assert result.exit_code == 2
    assert result.output.strip() == (f"Error: {rb} has no summary.json: the run that wrote it did not finish "
                                     "(its tables may hold only some of its games): run it again")
