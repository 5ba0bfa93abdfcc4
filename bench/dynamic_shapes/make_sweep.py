#!/usr/bin/python3
"""Writes a --shapes-sweep file: N random image sizes (seeded), multiples of STEP in [LO, HI].

  /usr/bin/python3 bench/dynamic_shapes/make_sweep.py --input x --count 200 > sweep.txt
"""
import argparse
import random


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--input", default="x")
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--lo", type=int, default=320)
    parser.add_argument("--hi", type=int, default=1280)
    parser.add_argument("--step", type=int, default=32)
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    sides = range(args.lo, args.hi + 1, args.step)
    for _ in range(args.count):
        print(f"{args.input}:1x3x{rng.choice(sides)}x{rng.choice(sides)}")


if __name__ == "__main__":
    main()
