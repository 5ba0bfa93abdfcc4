"""Data-dependent output shapes in the generated suite (see generate.py): builders, their inputs,
the ops they add.

data_dependent_heads: the four ops whose output size depends on the input values, each as a
graph output (OnePool plans them at a proven bound and reports the actual shape):
  NonZero of Relu(x) [4,16]                 bound [2, 64]
  Compress of x's rows whose max is > 0.9   bound [4, 16]
  Unique of Round(2x) (sorted, 4 outputs)   bound [64]; inverse_indices exactly [64]
  NonMaxSuppression over 40 boxes x 3 classes, at most 20 per class, IoU 0.5, score > 0.3
                                            bound [60, 3]
The seeded random inputs give each a result strictly inside its bound.
"""
import numpy as np
from onnx import TensorProto

OPS = {"NonZero", "Compress", "Unique", "NonMaxSuppression", "Relu", "ReduceMax", "Greater",
       "Round", "Mul", "Sigmoid"}

# Outputs whose dims ONNX shape inference leaves unknown (generate.py's check allows them).
DATA_DEPENDENT_OPS = {"NonZero", "Compress", "Unique", "NonMaxSuppression"}


def data_dependent_heads(g):
    x = g.input("x", TensorProto.FLOAT, [4, 16])
    g.output(g.op("NonZero", [g.op("Relu", [x])]), TensorProto.INT64, [2, "nonzero_count"], name="nonzero")

    row_max = g.op("ReduceMax", [x], axes=[1], keepdims=0)
    keep = g.op("Greater", [row_max, g.const(np.float32(0.9))])
    g.output(g.op("Compress", [x, keep], axis=0), TensorProto.FLOAT, ["kept", 16], name="kept_rows")

    rounded = g.op("Round", [g.op("Mul", [x, g.const(np.float32(2.0))])])
    outs = g.op("Unique", [rounded], outputs=4, sorted=1)
    for out, name, dtype in zip(outs, ["unique_values", "unique_indices", "unique_inverse",
                                       "unique_counts"],
                                [TensorProto.FLOAT] + [TensorProto.INT64] * 3):
        g.output(out, dtype, [64 if name == "unique_inverse" else "unique_count"], name=name)

    # Boxes as corners from centre + size (sizes kept positive), scores through a Sigmoid.
    boxes_in = g.input("boxes", TensorProto.FLOAT, [1, 40, 4])
    scores_in = g.input("scores", TensorProto.FLOAT, [1, 3, 40])
    selected = g.op("NonMaxSuppression",
                    [boxes_in, g.op("Sigmoid", [scores_in]), g.const([20], np.int64),
                     g.const([0.5]), g.const([0.3])],
                    center_point_box=0)
    g.output(selected, TensorProto.INT64, ["selected", 3], name="selected_indices")
    return "NonZero, Compress, Unique and NonMaxSuppression as graph outputs (bounded tensors)"


INPUTS = {"x": ("float32", [4, 16], [-1, 1]), "boxes": ("float32", [1, 40, 4], None),
          "scores": ("float32", [1, 3, 40], [-3, 3])}
MODELS = {"data_dependent_heads": (data_dependent_heads, INPUTS)}
CPU_ONLY = {"data_dependent_heads": "NonZero, Compress, Unique, NonMaxSuppression have no CUDA "
                                    "kernels"}
