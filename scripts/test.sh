#!/usr/bin/env bash
# Runs the test suite (after scripts/setup.sh): every doctest executable and the ONNX
# conformance run, through CTest.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"
ninja -C build
ctest --test-dir build --output-on-failure -j2 "$@"
