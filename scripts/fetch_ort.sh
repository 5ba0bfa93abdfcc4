#!/usr/bin/env bash
# Installs ONNX Runtime for Node (CPU) into .cache/ort, for bench/compare_ort.
# Idempotent: does nothing when the pinned version already loads from there.
# Needs only node and npm (the npm registry must be reachable).
set -euo pipefail

ORT_VERSION="1.30.0"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="${ROOT}/.cache/ort"

check_ort() {
  (cd "${PREFIX}" && node -e "
    const ort = require('onnxruntime-node');
    const v = require('onnxruntime-node/package.json').version;
    if (v !== '${ORT_VERSION}') { console.error('found onnxruntime-node ' + v); process.exit(2); }
    if (typeof ort.InferenceSession?.create !== 'function') process.exit(3);
    console.log('onnxruntime-node ' + v + ' loads from ' + require.resolve('onnxruntime-node'));
  ")
}

if [[ -d "${PREFIX}/node_modules/onnxruntime-node" ]] && check_ort 2>/dev/null; then
  exit 0
fi

mkdir -p "${PREFIX}"
# The package's postinstall downloads CUDA/TensorRT binaries from outside the npm registry
# (unreachable here, and not needed: the CPU library ships inside the npm tarball).
# ONNXRUNTIME_NODE_INSTALL=skip is what its install script honours; --ignore-scripts is the
# fallback should a later version rename it.
if ! ONNXRUNTIME_NODE_INSTALL=skip ONNXRUNTIME_NODE_INSTALL_CUDA=skip \
     npm install --no-audit --no-fund --prefix "${PREFIX}" "onnxruntime-node@${ORT_VERSION}"; then
  echo "fetch_ort: npm install with scripts failed; retrying with --ignore-scripts" >&2
  npm install --no-audit --no-fund --ignore-scripts --prefix "${PREFIX}" "onnxruntime-node@${ORT_VERSION}"
fi
check_ort
