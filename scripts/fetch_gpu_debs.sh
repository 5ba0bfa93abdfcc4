#!/usr/bin/env bash
# Downloads the Debian packages that tests/gpu/check.sh needs on a GPU machine without network
# access and without OnePool's build dependencies: ONNX, protobuf (+ protoc), OpenBLAS, CLI11,
# doctest, nlohmann-json, cpp-httplib and the libraries they link, pkgconf, ninja, python3-onnx
# (for models/generate.py) and the ONNX node test data. Run it here (a Debian machine with apt):
#
#   scripts/fetch_gpu_debs.sh [DIR]        # DIR defaults to .gpu-debs (ignored by git)
#
# check.sh unpacks the .deb files with `dpkg -x` into a private prefix (never into /) when CMake
# cannot find the packages on the machine. The C and C++ runtime (libc6, libstdc++6, libgcc-s1,
# libgomp1) are left out on purpose: the GPU machine's compiler brings its own and the unpacked
# libraries must not shadow them. Prints the total size.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${1:-${ROOT}/.gpu-debs}

# Step 1. The packages: build dependencies, then the libraries they need at link and run time.
PACKAGES=(
  # ONNX and protobuf (headers, CMake config, libraries, protoc)
  libonnx-dev libonnx1 libonnxifi
  libprotobuf-dev libprotobuf32 libprotobuf-lite32 protobuf-compiler libprotoc32
  # OpenBLAS (pthread flavour: check.sh points CMake at its directory) and its Fortran runtime
  libopenblas-dev libopenblas-pthread-dev libopenblas0 libopenblas0-pthread libgfortran5
  libquadmath0
  # header-only libraries
  libcli11-dev doctest-dev nlohmann-json3-dev
  # cpp-httplib and what its pkg-config file requires (openssl, zlib, brotli)
  libcpp-httplib-dev libcpp-httplib0.11 libssl-dev libssl3 zlib1g-dev libbrotli-dev libbrotli1
  # tools: pkg-config (pkgconf) and ninja
  pkgconf pkgconf-bin libpkgconf3 ninja-build
  # models/generate.py: onnx for Python (numpy comes from the machine's Python)
  python3-onnx python3-protobuf
  # ONNX node tests for `onepool conformance --device cuda:0`
  libonnx-testdata
)

# Step 2. Download into DIR (apt-get download writes into the current directory).
mkdir -p "${DIR}"
rm -f "${DIR}"/*.deb
(cd "${DIR}" && apt-get download "${PACKAGES[@]}")

# Step 3. Report what came and the total size.
count=$(find "${DIR}" -maxdepth 1 -name '*.deb' | wc -l)
bytes=$(du -cb "${DIR}"/*.deb | tail -1 | cut -f1)
echo "fetch_gpu_debs: ${count} packages, $((bytes / 1024 / 1024)) MiB (${bytes} bytes) in ${DIR}"
