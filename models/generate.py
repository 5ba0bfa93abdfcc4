#!/usr/bin/env python3
"""Placeholder generator."""
import argparse, os
p = argparse.ArgumentParser(); p.add_argument("--out", required=True); a = p.parse_args()
os.makedirs(a.out, exist_ok=True)
