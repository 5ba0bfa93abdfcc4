#!/usr/bin/env bash
# The GPU checks, in phases that each fit one 10-minute call on a GPU machine (see README.md):
#
#   PHASE=1 bash tests/gpu/check.sh   # configure, build the CLI + parity test (one arch), parity
#   PHASE=2 bash tests/gpu/check.sh   # (re)build if needed, conformance on cuda:0, memcheck on
#                                     # two models, OnePool vs PyTorch
#   PHASE=all ...                     # both, one after the other (no per-call limit)
#
# Run from the repository root. Every step is guarded and time-boxed: a step gets at most its
# own cap and never more than what is left of BUDGET_S (default 540 s: a 600 s call keeps a
# minute), so the phase always ends by itself. As soon as a step finishes, its result is
# appended to ${OUT}/summary.txt and its whole output has already been streamed into
# ${OUT}/phase<N>.log, so a call that is cut short still returns everything done so far
# (OUT defaults to ${BUILD}/check-out when the environment does not set it).
#
# Exit status: 0 when every required step passed; 77 when the parity test found no usable CUDA
# device (it skips); 1 otherwise. Required: the build and parity (phase 1), the build and
# conformance (phase 2). memcheck and the benchmark are reported, never required.
#
# Dependencies: on a machine without OnePool's Debian build dependencies, the .deb files fetched
# beforehand by scripts/fetch_gpu_debs.sh (DEBS, default .gpu-debs) are unpacked with dpkg -x
# (or ar + tar) into a private prefix (DEPS_PREFIX, default ${BUILD}-deps; never into /) and
# CMake is pointed at it. GPU_DEPS=debs uses them at once; system never does; auto (default)
# only when configuring without them fails.
set -uo pipefail

PHASE=${PHASE:-1}
BUILD=${BUILD:-build-gpu}
ARCH=${ARCH:-90}
DEBS=${DEBS:-.gpu-debs}
DEPS_PREFIX=${DEPS_PREFIX:-${BUILD}-deps}
GPU_DEPS=${GPU_DEPS:-auto}
JOBS=${JOBS:-$(nproc)}
BUDGET_S=${BUDGET_S:-540}
BUILD_CAP_S=${BUILD_CAP_S:-420}  # the build step's own cap (raise it on a small machine)
OUT=${OUT:-${BUILD}/check-out}
LOGS="${BUILD}/check-logs"
NODE_DATA=/usr/share/libonnx-testdata/data/node
declare -a CMAKE_ARGS=(-DONEPOOL_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=${ARCH}"
                       -DCMAKE_BUILD_TYPE=Release)
BUILD_ENV=(env)  # extra environment of the build and the runs (set by use_debs)
DEADLINE=$((SECONDS + BUDGET_S))
FAILED=0
PARITY_SKIPPED=0
mkdir -p "${LOGS}" "${OUT}"
SUMMARY="${OUT}/summary.txt"
: > "${SUMMARY}"

# row STEP RESULT SECONDS: one line of the summary table, written out at once.
row() {
  printf 'phase %-3s %-28s %-34s %5s\n' "${PHASE}" "$1" "$2" "$3" | tee -a "${SUMMARY}"
}

# step NAME CAP_S COMMAND...: runs COMMAND (a shell function of this script runs untimed, in
# this shell) with at most min(CAP_S, time left) seconds; streams its output to
# ${LOGS}/NAME.log and ${OUT}/phase${PHASE}.log; appends its summary row. Returns its status.
step() {
  local name=$1 cap=$2
  shift 2
  local slug=${name//[^A-Za-z0-9_.-]/_}
  local log="${LOGS}/${slug}.log" phase_log="${OUT}/phase${PHASE}.log"
  local left=$((DEADLINE - SECONDS - 5))
  local limit=$((cap < left ? cap : left))
  if ((limit < 5)); then
    row "${name}" "skipped: phase budget spent" 0
    return 125
  fi
  printf '\n===== %s (limit %s s) =====\n' "${name}" "${limit}" >> "${phase_log}"
  echo "=== ${name} (limit ${limit} s, log: ${log})"
  local start=${SECONDS} rc=0
  if declare -F "$1" > /dev/null; then
    "$@" > "${log}" 2>&1 || rc=$?
    cat "${log}" >> "${phase_log}"
  else
    timeout --kill-after=10 "${limit}" "${BUILD_ENV[@]}" "$@" 2>&1 | tee -a "${phase_log}" > "${log}"
    rc=${PIPESTATUS[0]}
  fi
  local took=$((SECONDS - start)) result="ok"
  if ((rc == 124 || rc == 137)); then
    result="TIMEOUT after ${limit} s"
  elif ((rc == 77)); then
    result="SKIPPED (exit 77)"
  elif ((rc != 0)); then
    result="FAILED rc=${rc}"
  fi
  row "${name}" "${result}" "${took}"
  if ((rc != 0)); then tail -n 25 "${log}" | sed 's/^/    | /'; fi
  return "${rc}"
}

# shellcheck disable=SC2317  # runs from the EXIT trap
print_summary() {
  echo
  echo "=== summary (${BUILD}, sm_${ARCH}, deps: ${GPU_DEPS}, ${JOBS} jobs, ${SECONDS} s)"
  cat "${SUMMARY}"
  if [[ -s ${OUT}/bench_table.txt ]]; then
    echo
    cat "${OUT}/bench_table.txt"
  fi
}
trap print_summary EXIT

# Step 0. Dependencies: unpack the fetched .deb files into DEPS_PREFIX and point the build at it.
# shellcheck disable=SC2317  # use_debs and configure run through step
use_debs() {
  local multiarch
  multiarch=$(gcc -print-multiarch 2> /dev/null || echo x86_64-linux-gnu)
  if ! compgen -G "${DEBS}/*.deb" > /dev/null; then
    echo "no ${DEBS}/*.deb: run scripts/fetch_gpu_debs.sh on a Debian machine first, and carry" \
      "${DEBS} to this one (it is git-ignored)" >&2
    return 1
  fi
  mkdir -p "${DEPS_PREFIX}"
  local deb
  for deb in "${DEBS}"/*.deb; do
    if command -v dpkg-deb > /dev/null; then
      dpkg-deb -x "${deb}" "${DEPS_PREFIX}" || return 1
    else  # ar (binutils) + tar when dpkg is absent; tar detects the compression of a file
      local member
      member=$(ar t "${deb}" | grep '^data\.tar')
      ar p "${deb}" "${member}" > "${DEPS_PREFIX}/${member}"
      tar -x -f "${DEPS_PREFIX}/${member}" -C "${DEPS_PREFIX}" || return 1
      rm -f "${DEPS_PREFIX}/${member}"
    fi
  done
  echo "unpacked $(find "${DEBS}" -maxdepth 1 -name '*.deb' | wc -l) packages into ${DEPS_PREFIX}"
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
  for candidate in "$(command -v python3)" /usr/bin/python3 /usr/local/bin/python3; do
    if [[ -x ${candidate} ]] && "${candidate}" -c "import onnx, numpy" 2> /dev/null; then
      python=${candidate}
      break
    fi
  done
  if [[ -z ${python} ]]; then
    python=$(command -v python3)
    BUILD_ENV=(env "PYTHONPATH=${usr}/lib/python3/dist-packages"
               "PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION=python")
    "${BUILD_ENV[@]}" "${python}" -c "import onnx, numpy" ||
      echo "warning: ${python} cannot import onnx + numpy, even from the debs" >&2
  fi
  CMAKE_ARGS+=("-DONEPOOL_PYTHON=${python}")
}

# A build configured before with the same dependencies and arch is reused as it is (phase 2 on
# a warm machine); otherwise the cache is dropped (a failed system configure leaves NOTFOUNDs).
# shellcheck disable=SC2317
configure() {
  local marker="${BUILD}/.check-configured" wanted="deps=${GPU_DEPS} arch=${ARCH}"
  if [[ -f ${BUILD}/build.ninja && -f ${marker} && $(cat "${marker}") == "${wanted}" ]]; then
    echo "reusing ${BUILD} (${wanted})"
    return 0
  fi
  rm -f "${BUILD}/CMakeCache.txt" "${marker}"
  local generator=()
  command -v ninja > /dev/null && generator=(-G Ninja)
  "${BUILD_ENV[@]}" cmake -S . -B "${BUILD}" "${generator[@]}" "${CMAKE_ARGS[@]}" || return 1
  echo "${wanted}" > "${marker}"
}

# Dependencies, configure and build: the same for both phases (a warm machine's build is reused:
# ninja finds nothing to do). Returns non-zero when nothing usable was built.
prepare_build() {
  if [[ ${GPU_DEPS} == debs ]]; then
    step "unpack ${DEBS}" 90 use_debs || return 1
  fi
  if ! step "configure" 120 configure; then
    [[ ${GPU_DEPS} == auto ]] || return 1
    GPU_DEPS=debs
    step "unpack ${DEBS}" 90 use_debs || return 1
    step "configure (debs)" 120 configure || return 1
  fi
  # Only what the checks run (gpu_parity_test also builds the generated models), one arch.
  step "build sm_${ARCH} -j${JOBS}" "${BUILD_CAP_S}" cmake --build "${BUILD}" -j "${JOBS}" \
    --target onepool_cli gpu_parity_test
}

CLI="${BUILD}/onepool"
MODELS="${BUILD}/models"

# Phase 1. Parity: every CUDA op family and every generated model, CUDA vs CPU, graph on and off.
# Run directly (not through ctest): exit 77 means "no CUDA device" and ends the script with 77.
phase1() {
  if ! prepare_build; then
    FAILED=1
    return
  fi
  step "parity" 300 env ONEPOOL_MODELS_DIR="${MODELS}" "${BUILD}/tests/gpu_parity_test"
  local rc=$?
  if ((rc == 77)); then
    PARITY_SKIPPED=1
    row "  parity" "$(grep -m1 -o 'no CUDA device.*' "${LOGS}/parity.log" | cut -c1-34)" ""
  elif ((rc != 0)); then
    FAILED=1
  fi
  local counts
  counts=$(grep -E '^\[doctest\] (test cases|assertions)' "${LOGS}/parity.log" 2> /dev/null |
    sed 's/\[doctest\] //; s/  */ /g' | tr '\n' ';')
  [[ -n ${counts} ]] && row "  (parity counts)" "${counts:0:60}" ""
}

# Phase 2. Conformance on cuda:0, compute-sanitizer memcheck on two generated models, OnePool vs
# PyTorch. Rebuilds first when the machine is fresh (within the same budget).
phase2() {
  if ! prepare_build; then
    FAILED=1
    return
  fi
  if [[ -d ${NODE_DATA} ]]; then
    step "conformance cuda:0" 150 "${CLI}" conformance "${NODE_DATA}" --device cuda:0 -q ||
      FAILED=1
    row "  (conformance counts)" "$(grep -Eo '[0-9]+ passed.*' "${LOGS}/conformance_cuda_0.log" |
      tail -1 | cut -c1-34)" ""
  else
    row "conformance cuda:0" "skipped: no node test data" ""
  fi
  local sanitizer
  sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  if [[ -x ${sanitizer} ]]; then
    local model
    for model in mlp resnet18; do
      # Both models have a symbolic "batch" dim (see models/generate.py SYMBOLIC).
      step "memcheck ${model}" 90 "${sanitizer}" --tool memcheck --error-exitcode 3 \
        --leak-check full "${CLI}" run "${MODELS}/${model}.onnx" --dim batch=1 \
        --device cuda:0 --warmup 0 --iterations 2
      if grep -q 'Device not supported' "${LOGS}/memcheck_${model}.log" 2> /dev/null; then
        row "  memcheck ${model}" "sanitizer does not support device" ""
      fi
    done
  else
    row "memcheck" "skipped: no compute-sanitizer" ""
  fi
  if python3 -c "import torch, torchvision, transformers" 2> /dev/null; then
    local left=$((DEADLINE - SECONDS - 40))
    if step "bench vs PyTorch" 280 env PYTHONUNBUFFERED=1 python3 tests/gpu/torch_bench.py --onepool "${CLI}" \
      --out "${BUILD}/torch_bench" --budget-s "$((left < 200 ? left : 200))"; then
      sed -n '/^p50 latency/,$p' "${LOGS}/bench_vs_PyTorch.log" > "${OUT}/bench_table.txt"
    fi
  else
    row "bench vs PyTorch" "skipped: no torch stack" ""
  fi
}

rm -f "${OUT}/phase1.log" "${OUT}/phase2.log" "${OUT}/bench_table.txt"
case ${PHASE} in
  1) phase1 ;;
  2) phase2 ;;
  all)
    PHASE=1 phase1
    PHASE=2 phase2
    ;;
  *)
    echo "PHASE must be 1, 2 or all, got '${PHASE}'" >&2
    exit 2
    ;;
esac

if ((FAILED)); then
  row "RESULT" "FAILED" "${SECONDS}"
  exit 1
fi
if ((PARITY_SKIPPED)); then
  row "RESULT" "parity skipped: no CUDA device" "${SECONDS}"
  exit 77
fi
row "RESULT" "passed" "${SECONDS}"
exit 0
