#!/usr/bin/python3
"""The control-flow models against ONNX Runtime (bench/compare_ort), on the same seeded inputs.

  control_flow_vs_ort.py SOURCE_DIR MODELS_DIR CLI WORK_DIR

Generated: if_runtime (two Ifs with runtime conditions, LSTM / GRU branches, a nested runtime If)
loop_runtime (a scanning for-loop and a while loop), loop_bounded (a runtime trip count and an
early stop: a scan output planned at --bound h_all=6) and scan_runtime (a reversed Scan over
columns with two scan outputs on different axes) and data_dependent_heads (NonZero, Compress,
Unique and NonMaxSuppression: outputs of data-dependent size, same shapes as ONNX Runtime's).
Fetched, when the setup script's cache
has them: silero_vad_legacy and silero_vad_v5 (an If on the sample rate input). Every output
within atol 1e-4 + rtol 1e-3 of ONNX Runtime's. Exits 77 (skipped) without node or
onnxruntime-node.
"""
import os
import shutil
import subprocess
import sys

GENERATED = ["if_runtime", "loop_runtime", "scan_runtime", "loop_bounded", "data_dependent_heads"]
FETCHED = ["silero_vad_legacy", "silero_vad_v5"]


def main():
    source, models_dir, cli, work = sys.argv[1:5]
    ort = os.path.join(source, ".cache", "ort", "node_modules", "onnxruntime-node")
    if shutil.which("node") is None or not os.path.isdir(ort):
        print("skipped: node or onnxruntime-node (.cache/ort) is missing")
        return 77
    command = ["node", os.path.join(source, "bench/compare_ort/compare_ort.js"),
               "--manifest", os.path.join(models_dir, "manifest.json"), "--cli", cli,
               "--work", work, "--iterations", "3", "--warmup", "1",
               "--atol", "1e-4", "--rtol", "1e-3"]
    models = list(GENERATED)
    fetched_manifest = os.path.join(source, ".cache", "models", "manifest.json")
    if os.path.exists(fetched_manifest):
        command += ["--manifest", fetched_manifest]
        models += [m for m in FETCHED
                   if os.path.exists(os.path.join(source, ".cache", "models", m + ".onnx"))]
    result = subprocess.run(command + models, text=True, capture_output=True)
    print(result.stdout + result.stderr)
    return 0 if result.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
