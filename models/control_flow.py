"""Control-flow models of the generated suite (see generate.py): builders, their inputs, the ops
they add.

if_runtime: two If nodes whose conditions are computed from the input's values (so they are only
known at run time), one the negation of the other, so that every run takes the then branch of
one and the else branch of the other. Each If holds an LSTM in one branch and a GRU in the
other, with the branch weights as branch initializers, reads outer values (x, h0, a main-graph
weight), passes an outer value straight through as an output, and nests a second runtime If in
its LSTM branch. A node after the Ifs reads both. (ONNX Runtime refuses a branch output that is
an outer value itself, so the LSTM branch copies h0 through an Identity.)
"""
import math

import numpy as np
from onnx import TensorProto, helper, numpy_helper

OPS = {"If", "LSTM", "GRU", "Not", "Greater", "ReduceSum", "ReduceMax", "Identity"}

SEQ, BATCH, INPUT, HIDDEN = 4, 1, 8, 16


def _init(g, name, array):
    return numpy_helper.from_array(np.ascontiguousarray(array, dtype=np.float32), name)


def _lstm_branch(g, prefix, x, h0, scale):
    """LSTM over x from h0; its last hidden state through a nested runtime If (Relu when the
    input's largest value exceeds 2, else Sigmoid); output 1 is h0 (through an Identity)."""
    std = 1 / math.sqrt(HIDDEN)
    inits = [_init(g, f"{prefix}.W", g.normal((1, 4 * HIDDEN, INPUT), std)),
             _init(g, f"{prefix}.R", g.normal((1, 4 * HIDDEN, HIDDEN), std)),
             _init(g, f"{prefix}.B", g.uniform((1, 8 * HIDDEN), -0.1, 0.1)),
             numpy_helper.from_array(np.array(2.0, dtype=np.float32), f"{prefix}.two")]
    shape = [1, BATCH, HIDDEN]
    inner_then = helper.make_graph(
        [helper.make_node("Relu", [f"{prefix}.h_last"], [f"{prefix}.relu"], name=f"{prefix}.relu")],
        f"{prefix}.inner_then", [],
        [helper.make_tensor_value_info(f"{prefix}.relu", TensorProto.FLOAT, shape)])
    inner_else = helper.make_graph(
        [helper.make_node("Sigmoid", [f"{prefix}.h_last"], [f"{prefix}.sigmoid"],
                          name=f"{prefix}.sigmoid")],
        f"{prefix}.inner_else", [],
        [helper.make_tensor_value_info(f"{prefix}.sigmoid", TensorProto.FLOAT, shape)])
    nodes = [
        helper.make_node("LSTM", [x, f"{prefix}.W", f"{prefix}.R", f"{prefix}.B", "", h0],
                         [f"{prefix}.Y", f"{prefix}.h_last"], name=f"{prefix}.lstm",
                         hidden_size=HIDDEN),
        helper.make_node("ReduceMax", [x], [f"{prefix}.x_max"], name=f"{prefix}.x_max",
                         keepdims=0),
        helper.make_node("Greater", [f"{prefix}.x_max", f"{prefix}.two"], [f"{prefix}.peaked"],
                         name=f"{prefix}.peaked"),
        helper.make_node("If", [f"{prefix}.peaked"], [f"{prefix}.activated"],
                         name=f"{prefix}.inner_if", then_branch=inner_then,
                         else_branch=inner_else),
        helper.make_node("Mul", [f"{prefix}.activated", scale], [f"{prefix}.out"],
                         name=f"{prefix}.scale"),
        helper.make_node("Identity", [h0], [f"{prefix}.h0"], name=f"{prefix}.h0"),
    ]
    outputs = [helper.make_tensor_value_info(f"{prefix}.out", TensorProto.FLOAT, shape),
               helper.make_tensor_value_info(f"{prefix}.h0", TensorProto.FLOAT, shape)]
    return helper.make_graph(nodes, prefix, [], outputs, inits)


def _gru_branch(g, prefix, x, h0):
    """GRU over x from h0 (linear_before_reset); output 1 is h0 + 1."""
    std = 1 / math.sqrt(HIDDEN)
    inits = [_init(g, f"{prefix}.W", g.normal((1, 3 * HIDDEN, INPUT), std)),
             _init(g, f"{prefix}.R", g.normal((1, 3 * HIDDEN, HIDDEN), std)),
             _init(g, f"{prefix}.B", g.uniform((1, 6 * HIDDEN), -0.1, 0.1)),
             numpy_helper.from_array(np.array(1.0, dtype=np.float32), f"{prefix}.one")]
    shape = [1, BATCH, HIDDEN]
    nodes = [
        helper.make_node("GRU", [x, f"{prefix}.W", f"{prefix}.R", f"{prefix}.B", "", h0],
                         ["", f"{prefix}.h_last"], name=f"{prefix}.gru", hidden_size=HIDDEN,
                         linear_before_reset=1),
        helper.make_node("Add", [h0, f"{prefix}.one"], [f"{prefix}.h_next"],
                         name=f"{prefix}.h_next"),
    ]
    outputs = [helper.make_tensor_value_info(f"{prefix}.h_last", TensorProto.FLOAT, shape),
               helper.make_tensor_value_info(f"{prefix}.h_next", TensorProto.FLOAT, shape)]
    return helper.make_graph(nodes, prefix, [], outputs, inits)


def if_runtime(g):
    x = g.input("x", TensorProto.FLOAT, [SEQ, BATCH, INPUT])
    h0 = g.input("h0", TensorProto.FLOAT, [1, BATCH, HIDDEN])
    scale = g.init("scale", g.uniform((HIDDEN,), 0.5, 1.5))  # read by the LSTM branches
    total = g.op("ReduceSum", [x], name="x_sum", keepdims=0)
    positive = g.op("Greater", [total, g.const(0.0)], name="positive")
    negative = g.op("Not", [positive], name="negative")
    results = []
    for name, condition in (("a", positive), ("b", negative)):
        outs = [f"{name}_state", f"{name}_carry"]
        g.nodes.append(helper.make_node(
            "If", [condition], outs, name=f"if_{name}",
            then_branch=_lstm_branch(g, f"{name}_lstm", x, h0, scale),
            else_branch=_gru_branch(g, f"{name}_gru", x, h0)))
        results.append(outs)
    shape = [1, BATCH, HIDDEN]
    mixed = g.op("Add", [results[0][0], results[1][0]], name="mixed")
    g.output(mixed, TensorProto.FLOAT, shape)
    for outs in results:
        for out in outs:
            g.output(out, TensorProto.FLOAT, shape)
    return "two runtime Ifs (LSTM / GRU branches, a nested runtime If, outer values read)"


INPUTS = {"x": ("float32", [SEQ, BATCH, INPUT], None), "h0": ("float32", [1, BATCH, HIDDEN], None)}
MODELS = {"if_runtime": (if_runtime, INPUTS)}
CPU_ONLY = {"if_runtime": "If with a runtime condition has no CUDA kernel"}
