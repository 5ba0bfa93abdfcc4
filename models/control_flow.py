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

OPS = {"Scan", "If", "LSTM", "GRU", "Not", "Greater", "ReduceSum", "ReduceMax", "Identity", "Loop",
       "Less", "Gather", "Tanh", "MatMul", "Add", "Mul", "Unsqueeze"}

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


def _scalar(g, name, value, dtype):
    """A 0-d main-graph initializer (g.init makes arrays of at least one dimension)."""
    g.inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
    return name


def loop_runtime(g, steps=5, width=8):
    """Two Loops. A: M = 5 (a constant), no cond; carries h [1, 8] through
    h = Tanh(h @ W + x[i]) (x read from outside, W a main-graph weight), and scans every h.
    B: no M, a runtime cond (ReduceSum(x) > -1e9); carries a counter k and s = s * 0.5 + h_final,
    and stops when k reaches 3 (the body's own condition)."""
    x = g.input("x", TensorProto.FLOAT, [steps, width])
    h0 = g.input("h0", TensorProto.FLOAT, [1, width])
    w = g.init("w", g.normal((width, width), 1 / math.sqrt(width)))
    trip = _scalar(g, "trip", steps, np.int64)
    zero_axis = numpy_helper.from_array(np.array([0], dtype=np.int64), "a_axis")
    body_a = helper.make_graph(
        [helper.make_node("Gather", [x, "a_i"], ["a_row"], name="a_row", axis=0),
         helper.make_node("Unsqueeze", ["a_row", "a_axis"], ["a_row2"], name="a_row2"),
         helper.make_node("MatMul", ["a_h", w], ["a_hw"], name="a_hw"),
         helper.make_node("Add", ["a_hw", "a_row2"], ["a_pre"], name="a_pre"),
         helper.make_node("Tanh", ["a_pre"], ["a_h_next"], name="a_h_next"),
         helper.make_node("Identity", ["a_h_next"], ["a_scan"], name="a_scan"),
         helper.make_node("Identity", ["a_cond"], ["a_cond_out"], name="a_cond_out")],
        "loop_a_body",
        [helper.make_tensor_value_info("a_i", TensorProto.INT64, []),
         helper.make_tensor_value_info("a_cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("a_h", TensorProto.FLOAT, [1, width])],
        [helper.make_tensor_value_info("a_cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("a_h_next", TensorProto.FLOAT, [1, width]),
         helper.make_tensor_value_info("a_scan", TensorProto.FLOAT, [1, width])],
        [zero_axis])
    g.nodes.append(helper.make_node("Loop", [trip, "", h0], ["h_final", "h_all"], name="loop_a",
                                    body=body_a))
    total = g.op("ReduceSum", [x], name="x_total", keepdims=0)
    go = g.op("Greater", [total, _scalar(g, "low", -1e9, np.float32)], name="go")
    k0 = _scalar(g, "k0", 0, np.int64)
    s0 = g.init("s0", np.zeros((1, width), dtype=np.float32))
    one = numpy_helper.from_array(np.array(1, dtype=np.int64), "b_one")
    three = numpy_helper.from_array(np.array(3, dtype=np.int64), "b_three")
    half = numpy_helper.from_array(np.array(0.5, dtype=np.float32), "b_half")
    body_b = helper.make_graph(
        [helper.make_node("Add", ["b_k", "b_one"], ["b_k_next"], name="b_k_next"),
         helper.make_node("Mul", ["b_s", "b_half"], ["b_s_half"], name="b_s_half"),
         helper.make_node("Add", ["b_s_half", "h_final"], ["b_s_next"], name="b_s_next"),
         helper.make_node("Less", ["b_k_next", "b_three"], ["b_more"], name="b_more")],
        "loop_b_body",
        [helper.make_tensor_value_info("b_i", TensorProto.INT64, []),
         helper.make_tensor_value_info("b_cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("b_k", TensorProto.INT64, []),
         helper.make_tensor_value_info("b_s", TensorProto.FLOAT, [1, width])],
        [helper.make_tensor_value_info("b_more", TensorProto.BOOL, []),
         helper.make_tensor_value_info("b_k_next", TensorProto.INT64, []),
         helper.make_tensor_value_info("b_s_next", TensorProto.FLOAT, [1, width])],
        [one, three, half])
    g.nodes.append(helper.make_node("Loop", ["", go, k0, s0], ["k_final", "s_final"],
                                    name="loop_b", body=body_b))
    g.output("h_final", TensorProto.FLOAT, [1, width])
    g.output("h_all", TensorProto.FLOAT, [steps, 1, width])
    g.output("k_final", TensorProto.INT64, [])
    g.output("s_final", TensorProto.FLOAT, [1, width])
    return "two Loops: a constant trip count with a scan output, and a while loop on a runtime cond"


INPUTS = {"x": ("float32", [SEQ, BATCH, INPUT], None), "h0": ("float32", [1, BATCH, HIDDEN], None)}
def scan_runtime(g, rows=4, steps=3):
    """A Scan over the columns of x [4, 3] in reverse (scan_input_axes 1, direction 1), carrying
    s [4]: s = s + column * w (w a main-graph weight read inside the body); scan output Tanh(s)
    stacked along axis 1 in reverse and s stacked along axis 0 forward."""
    x = g.input("x", TensorProto.FLOAT, [rows, steps])
    s0 = g.input("s0", TensorProto.FLOAT, [rows])
    w = g.init("w", g.uniform((rows,), 0.5, 1.5))
    body = helper.make_graph(
        [helper.make_node("Mul", ["c_col", w], ["c_scaled"], name="c_scaled"),
         helper.make_node("Add", ["c_s", "c_scaled"], ["c_s_next"], name="c_s_next"),
         helper.make_node("Tanh", ["c_s_next"], ["c_squashed"], name="c_squashed"),
         helper.make_node("Identity", ["c_s_next"], ["c_s_row"], name="c_s_row")],
        "scan_body",
        [helper.make_tensor_value_info("c_s", TensorProto.FLOAT, [rows]),
         helper.make_tensor_value_info("c_col", TensorProto.FLOAT, [rows])],
        [helper.make_tensor_value_info("c_s_next", TensorProto.FLOAT, [rows]),
         helper.make_tensor_value_info("c_squashed", TensorProto.FLOAT, [rows]),
         helper.make_tensor_value_info("c_s_row", TensorProto.FLOAT, [rows])])
    g.nodes.append(helper.make_node("Scan", [s0, x], ["s_final", "squashed", "sums"], name="scan",
                                    body=body, num_scan_inputs=1, scan_input_axes=[1],
                                    scan_input_directions=[1], scan_output_axes=[1, 0],
                                    scan_output_directions=[1, 0]))
    g.output("s_final", TensorProto.FLOAT, [rows])
    g.output("squashed", TensorProto.FLOAT, [rows, steps])
    g.output("sums", TensorProto.FLOAT, [steps, rows])
    return "a Scan over columns in reverse with a state, two scan outputs on different axes"


def loop_bounded(g, rows=6, width=4, stop_after=5):
    """A Loop whose trip count M is a graph input (seeded in [1, 7)) and whose body also stops
    after iteration 4 (cond = i < 4): carries h [1, 4] through h = Tanh(h @ W + x[i]) and scans
    every h. The scan output's length is only known at run time: min(M, 5) rows, planned at the
    bound --bound h_all=6 (the manifest's "bounds")."""
    x = g.input("x", TensorProto.FLOAT, [rows, width])
    m = g.input("m", TensorProto.INT64, [])
    h0 = g.input("h0", TensorProto.FLOAT, [1, width])
    w = g.init("w", g.normal((width, width), 1 / math.sqrt(width)))
    axis = numpy_helper.from_array(np.array([0], dtype=np.int64), "c_axis")
    last = numpy_helper.from_array(np.array(stop_after - 1, dtype=np.int64), "c_last")
    body = helper.make_graph(
        [helper.make_node("Gather", [x, "c_i"], ["c_row"], name="c_row", axis=0),
         helper.make_node("Unsqueeze", ["c_row", "c_axis"], ["c_row2"], name="c_row2"),
         helper.make_node("MatMul", ["c_h", w], ["c_hw"], name="c_hw"),
         helper.make_node("Add", ["c_hw", "c_row2"], ["c_pre"], name="c_pre"),
         helper.make_node("Tanh", ["c_pre"], ["c_h_next"], name="c_h_next"),
         helper.make_node("Identity", ["c_h_next"], ["c_scan"], name="c_scan"),
         helper.make_node("Less", ["c_i", "c_last"], ["c_more"], name="c_more")],
        "loop_bounded_body",
        [helper.make_tensor_value_info("c_i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c_cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("c_h", TensorProto.FLOAT, [1, width])],
        [helper.make_tensor_value_info("c_more", TensorProto.BOOL, []),
         helper.make_tensor_value_info("c_h_next", TensorProto.FLOAT, [1, width]),
         helper.make_tensor_value_info("c_scan", TensorProto.FLOAT, [1, width])],
        [axis, last])
    g.nodes.append(helper.make_node("Loop", [m, "", h0], ["h_final", "h_all"], name="loop_c",
                                    body=body))
    g.output("h_final", TensorProto.FLOAT, [1, width])
    g.output("h_all", TensorProto.FLOAT, ["rows", 1, width])
    return "a Loop with a runtime trip count and an early stop: a scan output planned at a bound"


LOOP_INPUTS = {"x": ("float32", [5, 8], None), "h0": ("float32", [1, 8], None)}
SCAN_INPUTS = {"x": ("float32", [4, 3], None), "s0": ("float32", [4], None)}
BOUNDED_INPUTS = {"x": ("float32", [6, 4], None), "m": ("int64", [], [1, 7]),
                  "h0": ("float32", [1, 4], None)}
MODELS = {"if_runtime": (if_runtime, INPUTS), "loop_runtime": (loop_runtime, LOOP_INPUTS),
          "scan_runtime": (scan_runtime, SCAN_INPUTS),
          "loop_bounded": (loop_bounded, BOUNDED_INPUTS)}
BOUNDS = {"loop_bounded": {"h_all": 6}}  # name -> --bound entries its runs need
CPU_ONLY = {"if_runtime": "If with a runtime condition has no CUDA kernel",
            "loop_runtime": "Loop has no CUDA kernel", "scan_runtime": "Scan has no CUDA kernel",
            "loop_bounded": "Loop has no CUDA kernel"}
