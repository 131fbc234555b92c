"""Peak memory of `chessscan` on stress inputs: the whole process tree, sampled.

Generates the inputs (in a temporary folder, or `--work DIR` to keep them between runs):
  * 200 MB of NUL bytes on stdin,
  * a `.gz` of 4 GiB of NUL bytes (a decompression bomb, ~4 MB on disk),
  * a `.zst` of one game repeated to 1 GiB (237,336 games, ~100 KB on disk), run with
    `validate` and with `analyze --jobs 2`,
  * one 100 MB line of `e4 e4 e4 ...`,
  * 1M games without tags (`e4 *`, one per line, no blank line between), run with `--jobs 2`,
  * one game of 3M plies (knights going out and back, 16 moves a line),
  * 1M diagnostics as `validate --format json` (the 1M tagless games: one missing-tags
    warning each),
and runs `chessscan analyze` or `validate` on each, sampling the resident set size of the
process and all its children every 20 ms. Prints one row per case: peak RSS (MiB), exit
status, wall time, and the first line of stderr, then checks every peak against the bound
documented in docs/explanation/speed-and-scale.md, "Memory" (`--bound`, MiB).

    python benchmarks/memory_stress.py [--only NAME] [--work DIR] [--bound 400]

Exit status 1 if a peak is over the bound or an exit status is not the expected one.
"""

from __future__ import annotations

import argparse
import gzip
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

CHESSSCAN = [sys.executable, "-m", "chessscan"]
MIB = 1 << 20


def tree_memory(proc: psutil.Process) -> tuple[int, int]:
    """(RSS, PSS) bytes summed over ``proc`` and every descendant (those gone meanwhile
    count 0). The RSS sum counts pages shared between processes (the workers' libraries,
    forked from one server) in each of them; PSS shares them out."""
    rss = pss = 0
    try:
        procs = [proc] + proc.children(recursive=True)
    except psutil.Error:
        return 0, 0
    for p in procs:
        try:
            info = p.memory_full_info()
        except psutil.Error:
            continue
        rss += info.rss
        pss += getattr(info, "pss", info.rss)
    return rss, pss


def run_sampled(argv: list[str], stdin_path: Path | None, out: Path) -> tuple[int, float, int, int, str]:
    """Run ``argv``; return (exit status, seconds, peak tree RSS, peak tree PSS (bytes), first
    stderr line)."""
    err_path = out / "stderr.txt"
    with open(err_path, "wb") as err, open(os.devnull, "wb") as devnull:
        stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        t0 = time.perf_counter()
        child = subprocess.Popen(argv, stdin=stdin, stdout=devnull, stderr=err)
        proc = psutil.Process(child.pid)
        peak = peak_pss = 0
        while child.poll() is None:
            rss, pss = tree_memory(proc)
            peak, peak_pss = max(peak, rss), max(peak_pss, pss)
            time.sleep(0.02)
        seconds = time.perf_counter() - t0
        if stdin_path:
            stdin.close()
    lines = [ln for ln in err_path.read_text(errors="replace").splitlines()
             if ln.strip() and not ln.startswith(("analyze", "validate", "\r"))]
    return child.returncode, seconds, peak, peak_pss, (lines[0] if lines else "")[:100]


def make_inputs(work: Path, only: str | None) -> dict[str, Path]:
    paths = {
        "zeros": work / "zeros-200M.bin",
        "gzbomb": work / "nul-4G.pgn.gz",
        "zstbomb": work / "game-1G.pgn.zst",
        "line": work / "one-line-100M.pgn",
        "tagless": work / "tagless-1M.pgn",
        "longgame": work / "one-game-3M-plies.pgn",
    }
    need = {
        "zeros": ("zeros",), "gzbomb": ("gzbomb",), "zstbomb": ("zstbomb",), "line": ("line",),
        "tagless": ("tagless",),
        "longgame": ("longgame",), "json": ("tagless",),
    }
    wanted = {p for name, ps in need.items() if only in (None, name) for p in ps}
    for name in wanted:
        path = paths[name]
        if path.exists():
            continue
        print(f"writing {path.name} ...", file=sys.stderr)
        if name == "zeros":
            with open(path, "wb") as f:
                f.truncate(200 * 10**6)
        elif name == "gzbomb":
            block = bytes(MIB)
            with gzip.open(path, "wb", compresslevel=1) as f:
                for _ in range(4096):
                    f.write(block)
        elif name == "zstbomb":
            # The first game of the magnus sample (4,528 bytes, clock comments), repeated.
            import zstandard

            sample = (Path(__file__).resolve().parents[1] / "data" / "samples" / "lichess-magnus-300.pgn").read_bytes()
            game = sample[: sample.index(b"[Event", 1)]
            block = game * (MIB // len(game) + 1)
            co = zstandard.ZstdCompressor(level=3).compressobj()
            with open(path, "wb") as f:
                for _ in range((1 << 30) // len(block) + 1):
                    f.write(co.compress(block))
                f.write(co.flush())
        elif name == "line":
            with open(path, "wb") as f:
                f.write(b"e4 " * (100 * 10**6 // 3))
        elif name == "tagless":
            with open(path, "wb") as f:
                f.write(b"e4 *\n" * 10**6)
        elif name == "longgame":
            # 1.Nf3 Nf6 2.Ng1 Ng8 ...: 3M plies, every position legal.
            shuffle = ("Nf3", "Nf6", "Ng1", "Ng8")
            with open(path, "w") as f:
                f.write('[Event "long"]\n[Result "*"]\n\n')
                line = []
                for ply in range(3 * 10**6):
                    if ply % 2 == 0:
                        line.append(f"{ply // 2 + 1}.")
                    line.append(shuffle[ply % 4])
                    if len(line) == 24:
                        f.write(" ".join(line) + "\n")
                        line = []
                f.write(" ".join(line + ["*"]) + "\n")
    return paths


def cases(paths: dict[str, Path], out: Path) -> list[tuple[str, list[str], Path | None, set[int]]]:
    """(name, argv, stdin file, accepted exit statuses)."""
    a = CHESSSCAN + ["analyze", "--silent", "-o", str(out / "tables")]
    return [
        ("zeros", a + ["--format", "csv", "-"], paths["zeros"], {1, 2}),
        ("zeros-validate", CHESSSCAN + ["validate", "--silent", "-"], paths["zeros"], {1, 2}),
        ("gzbomb", a + ["--format", "csv", str(paths["gzbomb"])], None, {1, 2}),
        ("gzbomb-validate", CHESSSCAN + ["validate", "--silent", str(paths["gzbomb"])], None, {1, 2}),
        ("zstbomb", a + ["--jobs", "2", "--positions", "none", str(paths["zstbomb"])], None, {0}),
        ("zstbomb-validate", CHESSSCAN + ["validate", "--silent", str(paths["zstbomb"])], None, {0}),
        ("line", a + ["--format", "csv", str(paths["line"])], None, {0}),
        ("line-validate", CHESSSCAN + ["validate", "--silent", str(paths["line"])], None, {1}),
        ("tagless", a + ["--jobs", "2", str(paths["tagless"])], None, {0, 1}),
        ("longgame", a + [str(paths["longgame"])], None, {0}),
        ("longgame-validate", CHESSSCAN + ["validate", "--silent", str(paths["longgame"])], None, {1}),
        ("json", CHESSSCAN + ["validate", "--silent", "--format", "json", str(paths["tagless"])], None, {0, 1}),
    ]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="run the cases whose name starts with this")
    ap.add_argument("--work", type=Path, help="folder for the generated inputs (kept)")
    ap.add_argument("--bound", type=float, default=512.0, help="peak RSS bound, MiB")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        out = Path(tmp) / "out"
        out.mkdir()
        only = args.only.split("-")[0] if args.only else None
        paths = make_inputs(work, only)
        failed = 0
        print(f"{'case':<16} {'RSS MiB':>8} {'PSS MiB':>8} {'exit':>4} {'seconds':>8}  first stderr line")
        for name, argv, stdin, statuses in cases(paths, out):
            if args.only and not name.startswith(args.only):
                continue
            status, seconds, peak, pss, err = run_sampled(argv, stdin, out)
            bad = peak / MIB > args.bound or status not in statuses
            failed += bad
            print(f"{name:<16} {peak / MIB:>8.1f} {pss / MIB:>8.1f} {status:>4} {seconds:>8.1f}  {err}"
                  + ("   <-- over the bound or unexpected exit" if bad else ""), flush=True)
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
