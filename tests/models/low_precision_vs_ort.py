#!/usr/bin/python3
"""The generated float16 / bfloat16 models against ONNX Runtime (bench/compare_ort) and against
their float32 twins (same rounded weights, float32 compute); the int8 models against ONNX Runtime.

  low_precision_vs_ort.py SOURCE_DIR MODELS_DIR CLI WORK_DIR

Checks, on the same seeded inputs: cnn_fp16 matches ONNX Runtime at atol = rtol = 1e-2; each
float32 twin matches ONNX Runtime at the float32 tolerances (atol 1e-4, rtol 1e-3); each half
model's outputs are within atol = rtol = 1e-2 of its twin's. ONNX Runtime's CPU provider has no
bfloat16 kernels, so mlp_bf16 is compared with its twin only. Prints each model's max error
against its twin next to ONNX Runtime's. The QDQ and dynamically quantized CNNs must match ONNX
Runtime exactly (atol = rtol = 0, integer and float outputs); the quantized transformer block's
float output at the float32 tolerances (its LayerNormalization rounds differently from ONNX
Runtime's in the last bit). Exits 77 (skipped) without node or onnxruntime-node.
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np

HALF_TOLERANCE = 1e-2
TWINS = {"cnn_fp16": "cnn_fp16_twin32", "mlp_bf16": "mlp_bf16_twin32"}
ORT_RUNS = {"cnn_fp16"}  # the half models ONNX Runtime's CPU provider can run
EXACT_INT8 = ["cnn_dynamic_int8", "cnn_qdq_int8"]
CLOSE_INT8 = ["transformer_dynamic_int8"]


def read_outputs(directory):
    with open(os.path.join(directory, "outputs.json")) as f:
        entries = json.load(f)
    return {e["name"]: np.fromfile(os.path.join(directory, e["file"]), dtype=e["dtype"])
            for e in entries}


def max_error(ours, reference):
    """Largest |a - b| and whether every element is within atol + rtol * |b| (1e-2 each)."""
    worst, within = 0.0, True
    for name, expected in reference.items():
        actual = ours[name].astype(np.float64)
        diff = np.abs(actual - expected.astype(np.float64))
        worst = max(worst, float(diff.max()))
        within &= bool(np.all(diff <= HALF_TOLERANCE + HALF_TOLERANCE * np.abs(expected)))
    return worst, within


def compare_ort(source, models_dir, cli, work, models, atol, rtol):
    command = ["node", os.path.join(source, "bench/compare_ort/compare_ort.js"),
               "--manifest", os.path.join(models_dir, "manifest.json"), "--cli", cli, "--work", work,
               "--iterations", "3", "--warmup", "1", "--atol", str(atol), "--rtol", str(rtol)]
    result = subprocess.run(command + models, text=True, capture_output=True)
    print(result.stdout + result.stderr)
    return result.returncode == 0


def run_ours(models_dir, cli, work, model, inputs_from):
    """Our CLI on `model` with the inputs compare_ort wrote for `inputs_from`."""
    out = os.path.join(work, model, "ours")
    inputs = os.path.join(work, inputs_from, "inputs")
    flags = [arg for name in sorted(os.listdir(inputs))
             for arg in ("--inputs", f"{os.path.splitext(name)[0]}:{os.path.join(inputs, name)}")]
    subprocess.run([cli, "run", os.path.join(models_dir, model + ".onnx"), *flags,
                    "--save-outputs", out, "--save-format", "bin"],
                   check=True, capture_output=True)
    return read_outputs(out)


def main():
    source, models_dir, cli, work = sys.argv[1:5]
    if shutil.which("node") is None or not os.path.isdir(
            os.path.join(source, ".cache/ort/node_modules/onnxruntime-node")):
        print("skipped: node or onnxruntime-node (scripts/fetch_ort.sh) is missing")
        return 77
    ok = compare_ort(source, models_dir, cli, work, sorted(ORT_RUNS), HALF_TOLERANCE,
                     HALF_TOLERANCE)
    ok &= compare_ort(source, models_dir, cli, work, sorted(TWINS.values()), 1e-4, 1e-3)
    ok &= compare_ort(source, models_dir, cli, work, EXACT_INT8, 0, 0)
    ok &= compare_ort(source, models_dir, cli, work, CLOSE_INT8, 1e-4, 1e-3)
    print(f"{'model':10s} {'ours vs twin':>14s} {'ORT vs twin':>14s}  within 1e-2")
    for half, twin in sorted(TWINS.items()):
        reference = read_outputs(os.path.join(work, twin, "ort"))
        ours_error, ours_within = max_error(run_ours(models_dir, cli, work, half, twin), reference)
        ort_text = "no CPU kernels"
        if half in ORT_RUNS:
            ort_text = f"{max_error(read_outputs(os.path.join(work, half, 'ort')), reference)[0]:.2e}"
        print(f"{half:10s} {ours_error:14.2e} {ort_text:>14s}  {'yes' if ours_within else 'NO'}")
        ok &= ours_within
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
