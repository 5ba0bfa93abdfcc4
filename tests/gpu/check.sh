#!/usr/bin/env bash
# One command for a GPU machine: build with its nvcc, CUDA-vs-CPU parity, ONNX node conformance
# on cuda:0, compute-sanitizer memcheck on two generated models, then OnePool vs PyTorch latency
# and memory. Run from the repository root:  bash tests/gpu/check.sh
# Every step is guarded (a failure is reported and the next step still runs); the exit status is
# non-zero when the build or parity failed. Budget: under 8 minutes on one H100/H200-class GPU.
#
# On a machine without OnePool's Debian build dependencies, the .deb files fetched beforehand by
# scripts/fetch_gpu_debs.sh (DEBS, default .gpu-debs) are unpacked with `dpkg -x` into a private
# prefix (DEPS_PREFIX, default ${BUILD}-deps; never into /) and CMake is pointed at it.
# GPU_DEPS=system|debs|auto (default auto: the debs only when configuring without them fails).
# Each step's output goes to ${BUILD}/check-logs/ (and to $OUT/check-logs when OUT is set); the
# console shows one summary table at the end, followed by the benchmark table.
set -euo pipefail

BUILD=${BUILD:-build-gpu}
ARCH=${ARCH:-90}
DEBS=${DEBS:-.gpu-debs}
DEPS_PREFIX=${DEPS_PREFIX:-${BUILD}-deps}
GPU_DEPS=${GPU_DEPS:-auto}
JOBS=${JOBS:-$(nproc)}
LOGS="${BUILD}/check-logs"
declare -a SUMMARY=()
declare -a CMAKE_ARGS=(-DONEPOOL_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=${ARCH}" -DCMAKE_BUILD_TYPE=Release)
BUILD_ENV=()  # extra environment of the build only (PYTHONPATH for models/generate.py)
PARITY_RC=1
mkdir -p "${LOGS}"

row() {  # row STEP RESULT SECONDS
  SUMMARY+=("$(printf '%-26s %-28s %6s' "$1" "$2" "$3")")
}

step() {  # step NAME TIMEOUT_S COMMAND...: runs guarded, output in ${LOGS}/NAME.log
  local name=$1 limit=$2
  shift 2
  local log="${LOGS}/${name//[^A-Za-z0-9_.-]/_}.log"
  echo "=== ${name} (log: ${log})"
  local start=${SECONDS} rc=0
  if declare -F "$1" > /dev/null; then  # a function of this script: in this shell, untimed
    "$@" > "${log}" 2>&1 || rc=$?
  else
    timeout --kill-after=10 "${limit}" "$@" > "${log}" 2>&1 || rc=$?
  fi
  local took=$((SECONDS - start))
  if [[ ${rc} -eq 0 ]]; then
    row "${name}" "ok" "${took}"
  else
    local result="FAILED rc=${rc}"
    [[ ${rc} -eq 124 ]] && result="TIMEOUT after ${limit} s"
    row "${name}" "${result}" "${took}"
    tail -n 25 "${log}" | sed 's/^/    | /'
  fi
  return ${rc}
}

finish() {  # finish EXIT_CODE: copies the logs out, prints the table(s), exits
  if [[ -n ${OUT:-} && -d ${OUT} ]]; then
    cp -r "${LOGS}" "${OUT}/" 2>/dev/null || true
  fi
  echo
  echo "=== summary (${BUILD}, sm_${ARCH}, deps: ${GPU_DEPS})"
  printf '%-26s %-28s %6s\n' "step" "result" "s"
  printf '%s\n' "------------------------------------------------------------------"
  printf '%s\n' "${SUMMARY[@]}"
  if [[ -s "${LOGS}/table.txt" ]]; then
    echo
    cat "${LOGS}/table.txt"
  fi
  exit "$1"
}

# Step 0. Dependencies: unpack the fetched .deb files into DEPS_PREFIX and point the build at it.
# shellcheck disable=SC2317  # use_debs and configure run through step
use_debs() {
  local multiarch
  multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
  if ! compgen -G "${DEBS}/*.deb" > /dev/null; then
    echo "no ${DEBS}/*.deb: run scripts/fetch_gpu_debs.sh on a Debian machine first" >&2
    return 1
  fi
  mkdir -p "${DEPS_PREFIX}"
  local deb
  for deb in "${DEBS}"/*.deb; do
    if command -v dpkg-deb > /dev/null; then
      dpkg-deb -x "${deb}" "${DEPS_PREFIX}"
    else  # ar (binutils) + tar when dpkg is absent; tar detects the compression of a file
      local member
      member=$(ar t "${deb}" | grep '^data\.tar')
      ar p "${deb}" "${member}" > "${DEPS_PREFIX}/${member}"
      tar -x -f "${DEPS_PREFIX}/${member}" -C "${DEPS_PREFIX}"
      rm -f "${DEPS_PREFIX}/${member}"
    fi
  done
  local usr lib
  usr=$(cd "${DEPS_PREFIX}/usr" && pwd)
  lib="${usr}/lib/${multiarch}"
  export PATH="${usr}/bin:${PATH}"
  export LD_LIBRARY_PATH="${lib}:${lib}/openblas-pthread${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}"
  # pkg-config sees only the prefix; the sysroot maps its /usr paths into the prefix.
  export PKG_CONFIG_LIBDIR="${lib}/pkgconfig:${usr}/share/pkgconfig"
  export PKG_CONFIG_SYSROOT_DIR
  PKG_CONFIG_SYSROOT_DIR=$(cd "${DEPS_PREFIX}" && pwd)
  CMAKE_ARGS+=("-DCMAKE_PREFIX_PATH=${usr}"
               "-DProtobuf_PROTOC_EXECUTABLE=${usr}/bin/protoc"
               "-DPKG_CONFIG_EXECUTABLE=${usr}/bin/pkgconf"
               "-DONEPOOL_CBLAS_INCLUDE=${usr}/include/${multiarch}/openblas-pthread"
               "-DONEPOOL_OPENBLAS_LIBRARY=${lib}/openblas-pthread/libopenblas.so")
  NODE_DATA="${usr}/share/libonnx-testdata/data/node"
  # models/generate.py needs numpy and onnx: a Python that has both, else one with numpy plus
  # the unpacked python3-onnx (its extension is built for Debian's Python version).
  local python="" candidate
  for candidate in /usr/bin/python3 "$(command -v python3)" /usr/local/bin/python3; do
    if [[ -x ${candidate} ]] && "${candidate}" -c "import onnx, numpy" 2> /dev/null; then
      python=${candidate}
      break
    fi
  done
  if [[ -z ${python} ]]; then
    python=$(command -v python3)
    BUILD_ENV=("PYTHONPATH=${usr}/lib/python3/dist-packages"
               "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python")
    env "${BUILD_ENV[@]}" "${python}" -c "import onnx, numpy" ||
      echo "warning: ${python} cannot import onnx + numpy, even from the debs" >&2
  fi
  CMAKE_ARGS+=("-DONEPOOL_PYTHON=${python}")
}

# shellcheck disable=SC2317
configure() {
  rm -f "${BUILD}/CMakeCache.txt"
  local generator=()
  command -v ninja > /dev/null && generator=(-G Ninja)
  cmake -S . -B "${BUILD}" "${generator[@]}" "${CMAKE_ARGS[@]}"
}

NODE_DATA=/usr/share/libonnx-testdata/data/node
if [[ ${GPU_DEPS} == debs ]]; then
  step "unpack ${DEBS}" 120 use_debs || finish 1
fi
if ! step "configure" 120 configure; then
  if [[ ${GPU_DEPS} != auto ]]; then finish 1; fi
  GPU_DEPS=debs
  step "unpack ${DEBS}" 120 use_debs || finish 1
  step "configure (debs)" 120 configure || finish 1
fi

# Step 1. Build only what the checks run, with this machine's nvcc (one arch keeps it short).
step "build (sm_${ARCH})" 330 env "${BUILD_ENV[@]}" cmake --build "${BUILD}" -j "${JOBS}" \
    --target onepool_cli gpu_parity_test onepool_models || finish 1
CLI="${BUILD}/onepool"
MODELS="${BUILD}/models"

# Step 2. Parity: every op family and every generated model, CUDA vs CPU (exit 77 = no device).
# Run directly (not through ctest) so that exit 77 "no CUDA device" counts as a failure here.
if step "parity" 180 env ONEPOOL_MODELS_DIR="${MODELS}" "${BUILD}/tests/gpu_parity_test"; then
  PARITY_RC=0
fi

# Step 3. ONNX node conformance on the GPU, when the test data is here (system or debs).
if [[ -d ${NODE_DATA} ]]; then
  step "conformance cuda:0" 120 "${CLI}" conformance "${NODE_DATA}" --device cuda:0 -q || true
  row "  (conformance counts)" "$(grep -Eo '[0-9]+ passed.*' "${LOGS}/conformance_cuda_0.log" |
    tail -1 | cut -c1-28 || true)" ""
else
  row "conformance cuda:0" "skipped: no node test data" ""
fi

# Step 4. compute-sanitizer memcheck on two generated models (out-of-bounds, misaligned, leaks).
SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
if [[ -x ${SANITIZER} ]]; then
  for model in mlp resnet18; do
    # Both models have a symbolic "batch" dim (see models/generate.py SYMBOLIC).
    step "memcheck ${model}" 120 "${SANITIZER}" --tool memcheck --error-exitcode 3 \
        --leak-check full "${CLI}" run "${MODELS}/${model}.onnx" --dim batch=1 --device cuda:0 \
        --warmup 0 --iterations 2 || true
  done
else
  row "memcheck" "skipped: no compute-sanitizer" ""
fi

# Step 5. Benchmarks vs PyTorch (needs torch, torchvision, transformers on this machine). The
# script skips torch.compile for the remaining rows once its budget is spent.
if python3 -c "import torch, torchvision, transformers" 2> /dev/null; then
  if step "bench vs PyTorch" 260 python3 tests/gpu/torch_bench.py --onepool "${CLI}" \
      --out "${BUILD}/torch_bench" --budget-s 200; then
    sed -n '/^p50 latency/,$p' "${LOGS}/bench_vs_PyTorch.log" > "${LOGS}/table.txt"
  fi
else
  row "bench vs PyTorch" "skipped: no torch stack" ""
fi

if [[ ${PARITY_RC} -ne 0 ]]; then
  row "RESULT" "parity FAILED" ""
  finish 1
fi
row "RESULT" "parity passed" ""
finish 0
