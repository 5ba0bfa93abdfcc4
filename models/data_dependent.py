"""Data-dependent output shapes in the generated suite (see generate.py): builders, their inputs,
the ops they add.

data_dependent_heads: the four ops whose output size depends on the input values, each as a
graph output (OnePool plans them at a proven bound and reports the actual shape):
  NonZero of Relu(x) [4,16]                 bound [2, 64]
  Compress of x's rows whose max is > 0.9   bound [4, 16]
  Unique of Round(2x) (sorted, 4 outputs)   bound [64]; inverse_indices exactly [64]
  NonMaxSuppression over 40 boxes x 3 classes, at most 20 per class, IoU 0.5, score > 0.3
                                            bound [60, 3]
and their readers: Gather of the selected boxes' corners and classes from NonMaxSuppression's
output, Gather of x's values above 0.5 at NonZero -> Squeeze's positions, and the same values
as PyTorch's x[x > 0.5] exports them (NonZero -> Transpose -> GatherND); and an If on a runtime
condition whose branches yield [4, 16] and [2, 16] (planned at [4, 16]).
The seeded random inputs give each a result strictly inside its bound.
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

OPS = {"NonZero", "Compress", "Unique", "NonMaxSuppression", "Relu", "ReduceMax", "Greater",
       "Round", "Mul", "Sigmoid", "Gather", "Reshape", "Squeeze", "Transpose", "GatherND", "If",
       "Slice"}

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
    selected = "selected_indices"  # renamed by g.output

    # Readers of bounded tensors: the selected boxes' corners and classes (Gather from a bounded
    # tensor along axis 1, then by bounded indices), and x's values above 0.5 (NonZero ->
    # Squeeze -> Gather).
    # (g.const stores a scalar as [1], so these Gathers give [K, 1].)
    box_ids = g.op("Squeeze", [g.op("Gather", [selected, g.const(2, np.int64)], axis=1),
                               g.const([1], np.int64)])
    classes = g.op("Gather", [selected, g.const(1, np.int64)], axis=1)
    flat_boxes = g.op("Reshape", [boxes_in, g.const([40, 4], np.int64)])
    g.output(g.op("Gather", [flat_boxes, box_ids], axis=0), TensorProto.FLOAT, ["selected", 4],
             name="kept_boxes")
    g.output(classes, TensorProto.INT64, ["selected", 1], name="kept_classes")
    flat_x = g.op("Reshape", [x, g.const([64], np.int64)])
    above = g.op("NonZero", [g.op("Greater", [flat_x, g.const(np.float32(0.5))])])
    positions = g.op("Squeeze", [above, g.const([0], np.int64)])
    g.output(g.op("Gather", [flat_x, positions], axis=0), TensorProto.FLOAT, ["above"],
             name="values_above_half")
    # PyTorch's x[x > 0.5] on a 2-D x: NonZero -> Transpose -> GatherND.
    above_2d = g.op("Greater", [x, g.const(np.float32(0.5))])
    mask_positions = g.op("Transpose", [g.op("NonZero", [above_2d])], perm=[1, 0])
    g.output(g.op("GatherND", [x, mask_positions]), TensorProto.FLOAT, ["masked"],
             name="masked_values")
    # An If on a runtime condition whose branches yield different shapes: all of x (Relu) when
    # its largest value exceeds 0.99, else its first two rows; planned at [4, 16].
    cond = g.op("Greater", [g.op("ReduceMax", [x], keepdims=0), g.const(np.float32(0.99))])
    then_branch = helper.make_graph(
        [helper.make_node("Relu", [x], ["all_rows"], name="then.relu")], "then", [],
        [helper.make_tensor_value_info("all_rows", TensorProto.FLOAT, [4, 16])])
    starts, ends = (numpy_helper.from_array(np.array(v, np.int64), n)
                    for v, n in (([0], "else.starts"), ([2], "else.ends")))
    else_branch = helper.make_graph(
        [helper.make_node("Slice", [x, starts.name, ends.name], ["two_rows"], name="else.slice")],
        "else", [], [helper.make_tensor_value_info("two_rows", TensorProto.FLOAT, [2, 16])],
        [starts, ends])
    g.nodes.append(helper.make_node("If", [cond], ["rows"], name="rows_if",
                                    then_branch=then_branch, else_branch=else_branch))
    g.output("rows", TensorProto.FLOAT, ["rows", 16])
    return ("NonZero, Compress, Unique and NonMaxSuppression (bounded tensors) as graph outputs "
            "and read by Gather, Squeeze, Transpose and GatherND; an If whose branches differ in "
            "shape")


INPUTS = {"x": ("float32", [4, 16], [-1, 1]), "boxes": ("float32", [1, 40, 4], None),
          "scores": ("float32", [1, 3, 40], [-3, 3])}
MODELS = {"data_dependent_heads": (data_dependent_heads, INPUTS)}
CPU_ONLY = {"data_dependent_heads": "NonZero, Compress, Unique, NonMaxSuppression and If have no "
                                    "CUDA kernels"}
