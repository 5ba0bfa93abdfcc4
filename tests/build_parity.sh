#!/usr/bin/env bash
# Two builds of the same sources must give the same output bits on the same machine: a native
# Release build and a generic Debug sanitizer build, say. Runs each model of the generated suite
# (and the line-detection model from the real-model cache, when fetched) through both CLIs on
# the same seeded inputs and compares the saved outputs byte for byte.
#   tests/build_parity.sh CLI_A CLI_B [MODEL_NAME ...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cli_a="$1"
cli_b="$2"
shift 2
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(mlp mobilenetv2 resnet18 unet mlsd_tiny_320)
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

# "name:AxBxC ..." for --shapes, from the manifest that lists the model.
shapes_of() {
  python3 - "$1" "${ROOT}/build/models/manifest.json" "${ROOT}/.cache/models/manifest.json" <<'PY'
import json, os, sys
name = sys.argv[1]
for manifest in sys.argv[2:]:
    if not os.path.exists(manifest):
        continue
    for model in json.load(open(manifest))["models"]:
        if model["name"] == name:
            folder = os.path.dirname(manifest)
            shapes = ",".join(f"{k}:{'x'.join(map(str, v))}" for k, v in model["inputs"].items())
            print(os.path.join(folder, model["file"]), shapes)
            sys.exit(0)
sys.exit(1)
PY
}

failures=0
for model in "${models[@]}"; do
  if ! read -r path shapes < <(shapes_of "${model}"); then
    echo "build parity: ${model}: not in any manifest, skipped"
    continue
  fi
  for side in a b; do
    cli="cli_${side}"
    "${!cli}" run "${path}" --shapes "${shapes}" --seed 7 --threads 2 \
      --save-outputs "${work}/${model}_${side}" >"${work}/${model}_${side}.log" 2>&1 || {
      echo "build parity: ${model}: ${!cli} failed:"; tail -5 "${work}/${model}_${side}.log"
      failures=$((failures + 1)); continue 2; }
  done
  if diff -r "${work}/${model}_a" "${work}/${model}_b" >/dev/null; then
    echo "build parity: ${model}: identical outputs"
  else
    echo "build parity: ${model}: OUTPUTS DIFFER between ${cli_a} and ${cli_b}"
    failures=$((failures + 1))
  fi
done
exit $((failures > 0))
