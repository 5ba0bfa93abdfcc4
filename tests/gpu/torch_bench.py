#!/usr/bin/env python3
"""OnePool (CUDA, with and without CUDA graph) vs PyTorch eager and torch.compile.

Models: ResNet-50 (torchvision, weights=None) and a BERT-base encoder (transformers BertModel
built from BertConfig(), no downloads), at batch 1 and 8. Each is exported to ONNX (opset 17)
here so OnePool runs the same graph. Float32 on both sides: TF32 is disabled in PyTorch (printed)
and OnePool's cuBLAS math is exact float32 by default.

Prints one table; writes bench.json into --out. Every row is guarded: a failure becomes an
"error: ..." cell, never a crash of the whole script.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def p50_ms(fn, warmup, iterations, torch):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(iterations):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - start) * 1e3)
    return statistics.median(samples)


def build_model(name, batch, torch):
    if name == "resnet50":
        import torchvision
        model = torchvision.models.resnet50(weights=None)
        inputs = (torch.randn(batch, 3, 224, 224),)
        names = ["input"]
    else:
        from transformers import BertConfig, BertModel
        model = BertModel(BertConfig())
        ids = torch.randint(0, 30522, (batch, 128), dtype=torch.int64)
        mask = torch.ones(batch, 128, dtype=torch.int64)
        inputs = (ids, mask)
        names = ["input_ids", "attention_mask"]
    return model.eval(), inputs, names


def export(model, inputs, names, path, torch):
    kwargs = dict(opset_version=17, input_names=names, do_constant_folding=True)
    try:
        torch.onnx.export(model, inputs, path, dynamo=False, **kwargs)
    except TypeError:  # older torch: no `dynamo` argument (TorchScript exporter is the default)
        torch.onnx.export(model, inputs, path, **kwargs)


def onepool_bench(cli, path, graph, out_dir, tag):
    report = os.path.join(out_dir, f"{tag}.json")
    cmd = [cli, "bench", path, "--device", "cuda:0", "--warmup", "20", "--iterations", "100",
           "--report", report]
    if not graph:
        cmd.append("--no-cuda-graph")
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-1:]
        return {"error": tail[0] if tail else f"exit {result.returncode}"}
    with open(report) as f:
        data = json.load(f)
    return {"p50": data["latency_ms"]["p50"], "pool_bytes": data.get("pool_bytes"),
            "weights_bytes": data.get("weights_bytes")}


def guarded(fn):
    try:
        return fn()
    except Exception as error:  # noqa: BLE001 - each cell reports its own failure
        return {"error": f"{type(error).__name__}: {str(error).splitlines()[0][:80] if str(error) else ''}"}


def torch_rows(model, inputs, torch, compile_ok):
    """Peak memory and eager / compiled p50 of one model on the GPU."""
    model = model.cuda()
    args = tuple(t.cuda() for t in inputs)
    rows = {}
    with torch.inference_mode():
        torch.cuda.reset_peak_memory_stats()
        model(*args)
        torch.cuda.synchronize()
        rows["peak_bytes"] = torch.cuda.max_memory_allocated()
        rows["eager"] = guarded(lambda: {"p50": p50_ms(lambda: model(*args), 10, 100, torch)})
        if compile_ok:
            compiled = torch.compile(model)
            rows["compile"] = guarded(lambda: {"p50": p50_ms(lambda: compiled(*args), 5, 100, torch)})
        else:
            rows["compile"] = {"error": "skipped"}
    return rows


def cell(entry):
    if entry is None:
        return "-"
    if "error" in entry:
        return "ERR"
    return f"{entry['p50']:.3f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--onepool", required=True, help="path to the onepool CLI")
    parser.add_argument("--out", required=True, help="folder for ONNX files and reports")
    parser.add_argument("--models", default="resnet50,bert")
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    parser.add_argument("--budget-s", type=float, default=1e9,
                        help="skip torch.compile for rows that start after 60%% of this budget")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"torch {torch.__version__}, device {torch.cuda.get_device_name(0)}")
    print(f"torch.backends.cuda.matmul.allow_tf32 = {torch.backends.cuda.matmul.allow_tf32}")
    print(f"torch.backends.cudnn.allow_tf32 = {torch.backends.cudnn.allow_tf32}")
    torch.manual_seed(0)

    results = []
    started = time.monotonic()
    for name in args.models.split(","):
        for batch in [int(b) for b in args.batches.split(",")]:
            tag = f"{name}_b{batch}"
            row = {"model": name, "batch": batch}
            print(f"--- {tag}", flush=True)
            try:
                model, inputs, names = build_model(name, batch, torch)
                path = os.path.join(args.out, tag + ".onnx")
                export(model, inputs, names, path, torch)
                row["onepool_graph"] = guarded(lambda: onepool_bench(args.onepool, path, True, args.out, tag + "_graph"))
                row["onepool_nograph"] = guarded(lambda: onepool_bench(args.onepool, path, False, args.out, tag + "_nograph"))
                in_budget = time.monotonic() - started < 0.6 * args.budget_s
                row.update(torch_rows(model, inputs, torch, not args.no_compile and in_budget))
            except Exception as error:  # noqa: BLE001
                row["error"] = f"{type(error).__name__}: {error}"
            for key in ("onepool_graph", "onepool_nograph", "eager", "compile"):
                if isinstance(row.get(key), dict) and "error" in row[key]:
                    print(f"{tag} {key}: {row[key]['error']}")
            if "error" in row:
                print(f"{tag}: {row['error']}")
            results.append(row)
            # One line per row as soon as it is measured: a run cut short keeps what it had.
            print(f"row {tag}: onepool+graph {cell(row.get('onepool_graph'))} "
                  f"onepool {cell(row.get('onepool_nograph'))} eager {cell(row.get('eager'))} "
                  f"compile {cell(row.get('compile'))} ms", flush=True)
            torch.cuda.empty_cache()

    with open(os.path.join(args.out, "bench.json"), "w") as f:
        json.dump(results, f, indent=2)
    print()
    print("p50 latency in ms (OnePool includes host<->device copies of inputs and outputs)")
    header = f"{'model':10s} {'batch':>5s} {'onepool+graph':>14s} {'onepool':>9s} {'eager':>9s} " \
             f"{'compile':>9s} {'pool MiB':>9s} {'torch peak MiB':>15s}"
    print(header)
    print("-" * len(header))
    for row in results:
        pool = row.get("onepool_graph", {}).get("pool_bytes") if isinstance(row.get("onepool_graph"), dict) else None
        peak = row.get("peak_bytes")
        print(f"{row['model']:10s} {row['batch']:5d} {cell(row.get('onepool_graph')):>14s} "
              f"{cell(row.get('onepool_nograph')):>9s} {cell(row.get('eager')):>9s} "
              f"{cell(row.get('compile')):>9s} "
              f"{(f'{pool / 2**20:.1f}' if pool else '-'):>9s} "
              f"{(f'{peak / 2**20:.1f}' if peak else '-'):>15s}")
    print("pool = OnePool's activation pool only (weights separate); torch peak = "
          "max_memory_allocated (weights + activations)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
