"""Perft speed of chessscan's move generator against python-chess, in one run (run by hand).

    python benchmarks/perft.py [--depth 4] [--suite FILE.epd [--positions N]]

By default the six positions of the chessprogramming wiki's "Perft Results" page (the start
position, Kiwipete, and positions 3 to 6) at ``--depth`` (4); with ``--suite``, the first
``--positions`` EPD positions of a perft suite. Each side runs in a fresh process and counts
the same leaves; the counts must agree, and the CPU time of the counting alone is compared.

The python-chess side is what a user would write: a recursive ``perft`` over
``board.legal_moves`` with ``push``/``pop``, counting the moves at depth 1 without playing
them (``board.legal_moves.count()``), as chessscan does ("bulk counting").
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

CLASSIC = (
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
)


def side_python_chess(fens: list[str], depth: int) -> dict:
    import chess

    def perft(board: chess.Board, d: int) -> int:
        if d == 1:
            return board.legal_moves.count()
        total = 0
        for move in board.legal_moves:
            board.push(move)
            total += perft(board, d - 1)
            board.pop()
        return total

    boards = [chess.Board(fen) for fen in fens]
    start = time.process_time()
    counts = [perft(b, depth) for b in boards]
    return {"counts": counts, "cpu": time.process_time() - start}


def side_chessscan(fens: list[str], depth: int) -> dict:
    from chessscan import core_mode
    from chessscan.core.fen import parse_fen
    from chessscan.core.movegen import perft

    positions = [parse_fen(fen, chess960=True, strict=False) for fen in fens]
    start = time.process_time()
    counts = [perft(p, depth) for p in positions]
    return {"counts": counts, "cpu": time.process_time() - start, "core": core_mode()}


def suite_fens(path: str, n: int) -> list[str]:
    fens = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.replace("\0", "").strip()
            if line and not line.startswith("#"):
                fens.append(" ".join(line.split(";")[0].split()[:4]) + " 0 1")
            if len(fens) == n:
                break
    return fens


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--suite")
    parser.add_argument("--positions", type=int, default=20)
    parser.add_argument("--side", choices=["python-chess", "chessscan"], help=argparse.SUPPRESS)
    parser.add_argument("--fens", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        fens = json.loads(args.fens)
        run = side_python_chess if args.side == "python-chess" else side_chessscan
        print(json.dumps(run(fens, args.depth)))
        return 0
    fens = suite_fens(args.suite, args.positions) if args.suite else list(CLASSIC)
    results = {}
    for side in ("python-chess", "chessscan"):
        out = subprocess.run([sys.executable, __file__, "--side", side, "--depth", str(args.depth),
                              "--fens", json.dumps(fens)], capture_output=True, text=True, check=True)
        results[side] = json.loads(out.stdout)
    a, b = results["python-chess"], results["chessscan"]
    if a["counts"] != b["counts"]:
        print("COUNTS DIFFER:", a["counts"], b["counts"])
        return 1
    nodes = sum(a["counts"])
    print(f"{len(fens)} positions, depth {args.depth}: {nodes:,} leaves, counts equal")
    print(f"python-chess     {a['cpu']:8.3f} s CPU  {nodes / a['cpu']:14,.0f} leaves/s")
    print(f"chessscan ({b['core']}) {b['cpu']:8.3f} s CPU  {nodes / b['cpu']:14,.0f} leaves/s")
    print(f"ratio: {a['cpu'] / b['cpu']:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
