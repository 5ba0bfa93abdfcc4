"""int8 models of the generated suite (see generate.py): builders, their inputs, and the ops they add.

cnn_qdq_int8 is laid out as onnxruntime.quantization.quantize_static writes it (QDQ: uint8
activations, int8 per-channel conv weights, int32 biases with scale x_scale * w_scale);
cnn_dynamic_int8 and transformer_dynamic_int8 as quantize_dynamic writes them
(DynamicQuantizeLinear + ConvInteger / MatMulInteger + Cast + Mul by the product of the scales).
Activation scales come from a float calibration pass in numpy over one uniform [0, 1) input,
so the quantized tensors use their whole range without saturating much.
"""
import math

import numpy as np
from onnx import TensorProto, numpy_helper

OPS = {"QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "ConvInteger",
       "MatMulInteger"}


def _scalar(g, name, value, dtype):
    """A 0-d initializer (g.init and g.const write 1-element 1-D ones): quantize_static writes
    scalar scales and zero points, and ONNX Runtime's QLinearAdd requires them."""
    name = g.unique(name)
    g.inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
    return name


# numpy reference pieces used only for calibration ---------------------------------------------
def _conv_ref(x, w, b, stride, pad):
    """x [C,H,W], w [M,C,k,k] -> [M,Ho,Wo] (float64, for picking scales)."""
    c, h, wd = x.shape
    m, _, k, _ = w.shape
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad)))
    ho, wo = (h + 2 * pad - k) // stride + 1, (wd + 2 * pad - k) // stride + 1
    cols = np.empty((c * k * k, ho * wo))
    for i in range(k):
        for j in range(k):
            patch = xp[:, i:i + stride * ho:stride, j:j + stride * wo:stride]
            cols[np.arange(c) * k * k + i * k + j] = patch.reshape(c, -1)
    return (w.reshape(m, -1) @ cols + b[:, None]).reshape(m, ho, wo)


def _maxpool_ref(x, k):
    c, h, w = x.shape
    return x.reshape(c, h // k, k, w // k, k).max(axis=(2, 4))


def _scale_u8(values):
    """Per-tensor uint8 scale (zero point 0) of a non-negative tensor."""
    return np.float32(max(float(np.max(values)), 1e-3) / 255.0)


def _fake_quant_u8(values, scale):
    return np.clip(np.rint(values / scale), 0, 255) * scale


def _weights_int8_per_channel(w):
    """Symmetric int8 per output channel (axis 0), as quantize_static with per_channel=True."""
    scale = (np.abs(w.reshape(w.shape[0], -1)).max(axis=1) / 127.0).astype(np.float32)
    shape = (-1,) + (1,) * (w.ndim - 1)
    q = np.clip(np.rint(w / scale.reshape(shape)), -127, 127).astype(np.int8)
    return q, scale


# cnn_qdq_int8 ---------------------------------------------------------------------------------
class _Qdq:
    """Writes the QDQ pattern; `ref` tracks each float tensor's calibration value."""

    def __init__(self, g):
        self.g = g
        self.zero_u8 = _scalar(g, "zero_point", 0, np.uint8)

    def quantize(self, x, scale, name):
        """QuantizeLinear(uint8, zero point 0) then DequantizeLinear: returns (q, dq)."""
        s = _scalar(self.g, name + ".scale", scale, np.float32)
        q = self.g.op("QuantizeLinear", [x, s, self.zero_u8], name=name + ".quantize")
        return q, self.g.op("DequantizeLinear", [q, s, self.zero_u8], name=name + ".dequantize")

    def conv(self, x, x_scale, x_ref, cin, cout, k, stride, name):
        """DQ(w int8 per channel), DQ(bias int32, scale x_scale * w_scale) -> Conv -> Relu."""
        g = self.g
        w = g.normal((cout, cin, k, k), math.sqrt(2.0 / (cin * k * k)))
        b = g.uniform((cout,), -0.1, 0.1)
        wq, w_scale = _weights_int8_per_channel(w)
        b_scale = (np.float32(x_scale) * w_scale).astype(np.float32)
        bq = np.rint(b / b_scale).astype(np.int32)
        wd = g.op("DequantizeLinear", [g.init(name + ".weight_quantized", wq),
                                       g.init(name + ".weight_scale", w_scale),
                                       g.init(name + ".weight_zero_point", np.zeros(cout, np.int8))],
                  name=name + ".weight.dequantize", axis=0)
        bd = g.op("DequantizeLinear", [g.init(name + ".bias_quantized", bq),
                                       g.init(name + ".bias_scale", b_scale),
                                       g.init(name + ".bias_zero_point", np.zeros(cout, np.int32))],
                  name=name + ".bias.dequantize", axis=0)
        y = g.op("Conv", [x, wd, bd], name=name, kernel_shape=[k, k], strides=[stride, stride],
                 pads=[k // 2] * 4)
        y_ref = np.maximum(_conv_ref(x_ref, wq * w_scale[:, None, None, None], bq * b_scale,
                                     stride, k // 2), 0)
        return g.op("Relu", [y], name=name + ".relu"), y_ref


def cnn_qdq_int8(g):
    x = g.input("input", TensorProto.FLOAT, [1, 3, 32, 32])
    qdq = _Qdq(g)
    ref = g.uniform((3, 32, 32), 0.0, 1.0)
    scale = np.float32(1.0 / 255.0)
    _, h = qdq.quantize(x, scale, "input")
    ref = _fake_quant_u8(ref, scale)
    # Three conv layers (the second with stride 2), each Relu -> QuantizeLinear -> DQ.
    layers = [("conv1", 3, 16, 1), ("conv2", 16, 32, 2)]
    for name, cin, cout, stride in layers:
        y, y_ref = qdq.conv(h, scale, ref, cin, cout, 3, stride, name)
        scale = _scale_u8(y_ref)
        _, h = qdq.quantize(y, scale, name + ".output")
        ref = _fake_quant_u8(y_ref, scale)
    # MaxPool between a DQ and a Q of the same scale (quantize_static keeps it for MaxPool).
    pooled = g.op("MaxPool", [h], name="pool", kernel_shape=[2, 2], strides=[2, 2])
    _, h = qdq.quantize(pooled, scale, "pool.output")
    ref, skip = _maxpool_ref(ref, 2), h
    y, y_ref = qdq.conv(h, scale, ref, 32, 32, 3, 1, "conv3")
    scale = _scale_u8(y_ref)
    _, h = qdq.quantize(y, scale, "conv3.output")
    # Residual Add of two dequantized tensors, requantized with its own scale.
    add_ref = _fake_quant_u8(y_ref, scale) + ref
    add = g.op("Add", [h, skip], name="residual")
    scale = _scale_u8(add_ref)
    residual_q, h = qdq.quantize(add, scale, "residual.output")
    ref = _fake_quant_u8(add_ref, scale)
    # Flatten keeps its input's scale (DQ -> Flatten -> Q), then the classifier MatMul.
    flat = g.op("Flatten", [h], name="flatten", axis=1)
    _, h = qdq.quantize(flat, scale, "flatten.output")
    features = 32 * 8 * 8
    w = g.normal((features, 10), math.sqrt(1.0 / features))
    w_scale = np.float32(np.abs(w).max() / 127.0)
    wq = np.clip(np.rint(w / w_scale), -127, 127).astype(np.int8)
    wd = g.op("DequantizeLinear", [g.init("fc.weight_quantized", wq),
                                   _scalar(g, "fc.weight_scale", w_scale, np.float32),
                                   _scalar(g, "fc.weight_zero_point", 0, np.int8)],
              name="fc.weight.dequantize")
    logits = g.op("MatMul", [h, wd], name="fc")
    logits_ref = ref.reshape(1, -1) @ (wq * w_scale)
    # Signed logits: uint8 with zero point 128.
    y_scale = np.float32(float(np.abs(logits_ref).max()) * 1.5 / 127.0)
    s = _scalar(g, "logits.scale", y_scale, np.float32)
    zp = _scalar(g, "logits.zero_point", 128, np.uint8)
    q = g.op("QuantizeLinear", [logits, s, zp], name="logits_quantized")
    d = g.op("DequantizeLinear", [q, s, zp], name="logits")
    g.output(q, TensorProto.UINT8, [1, 10])
    # The residual block's uint8 result too: 2048 integers that see every conv's rounding.
    g.output(residual_q, TensorProto.UINT8, [1, 32, 8, 8])
    g.output(d, TensorProto.FLOAT, [1, 10])
    return "QDQ int8 CNN as quantize_static writes it (3 conv, MaxPool, residual Add, MatMul)"


# Dynamic quantization -------------------------------------------------------------------------
def _dynamic_quantize(g, x, name):
    """DynamicQuantizeLinear: returns (uint8 tensor, scale, zero point)."""
    return g.op("DynamicQuantizeLinear", [x], name=name, outputs=3)


def _scaled_product(g, acc, x_scale, w_scale, name):
    """Cast(int32 -> float) * (x_scale * w_scale), quantize_dynamic's output stage."""
    scales = g.op("Mul", [x_scale, w_scale], name=name + ".scales")
    f = g.op("Cast", [acc], name=name + ".cast", to=TensorProto.FLOAT)
    return g.op("Mul", [f, scales], name=name + ".rescale")


def _dynamic_conv(g, x, cin, cout, k, stride, name):
    """ConvInteger with uint8 weights (asymmetric, zero point from the weights' range)."""
    w = g.normal((cout, cin, k, k), math.sqrt(2.0 / (cin * k * k)))
    lo, hi = min(float(w.min()), 0.0), max(float(w.max()), 0.0)
    w_scale = np.float32((hi - lo) / 255.0)
    w_zero = np.uint8(np.clip(np.rint(-lo / w_scale), 0, 255))
    wq = np.clip(np.rint(w / w_scale) + w_zero, 0, 255).astype(np.uint8)
    xq, xs, xz = _dynamic_quantize(g, x, name + ".input.quantize")
    acc = g.op("ConvInteger", [xq, g.init(name + ".weight_quantized", wq), xz,
                               _scalar(g, name + ".weight_zero_point", w_zero, np.uint8)],
               name=name, kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4)
    y = _scaled_product(g, acc, xs, _scalar(g, name + ".weight_scale", w_scale, np.float32),
                        name)
    b = g.init(name + ".bias", g.uniform((1, cout, 1, 1), -0.1, 0.1))
    return g.op("Add", [y, b], name=name + ".bias_add")


def _dynamic_matmul(g, xq, xs, xz, fin, fout, name, std):
    """MatMulInteger(uint8 x, int8 symmetric weights) -> Cast -> Mul -> Add bias."""
    w = g.normal((fin, fout), std)
    w_scale = np.float32(np.abs(w).max() / 127.0)
    wq = np.clip(np.rint(w / w_scale), -127, 127).astype(np.int8)
    acc = g.op("MatMulInteger", [xq, g.init(name + ".weight_quantized", wq), xz,
                                 _scalar(g, name + ".weight_zero_point", 0, np.int8)],
               name=name)
    y = _scaled_product(g, acc, xs, _scalar(g, name + ".weight_scale", w_scale, np.float32),
                        name)
    return g.op("Add", [y, g.init(name + ".bias", g.normal((fout,), 0.02))], name=name + ".bias_add")


def cnn_dynamic_int8(g):
    x = g.input("input", TensorProto.FLOAT, [1, 3, 32, 32])
    h = g.op("Relu", [_dynamic_conv(g, x, 3, 16, 3, 1, "conv1")], name="conv1.relu")
    h = g.op("Relu", [_dynamic_conv(g, h, 16, 32, 3, 2, "conv2")], name="conv2.relu")
    h = g.op("MaxPool", [h], name="pool", kernel_shape=[2, 2], strides=[2, 2])
    h = g.op("Relu", [_dynamic_conv(g, h, 32, 32, 3, 1, "conv3")], name="conv3.relu")
    h = g.op("Flatten", [h], name="flatten", axis=1)
    features = 32 * 8 * 8
    # The classifier's quantized input is an output too: an integer result of the whole chain.
    xq, xs, xz = _dynamic_quantize(g, h, "fc.input.quantize")
    g.output(xq, TensorProto.UINT8, [1, features], "features_quantized")
    xq = "features_quantized"
    logits = _dynamic_matmul(g, xq, xs, xz, features, 10, "fc", math.sqrt(1.0 / features))
    g.output(logits, TensorProto.FLOAT, [1, 10], "logits")
    return "dynamically quantized CNN as quantize_dynamic writes it (ConvInteger, MatMulInteger)"


def transformer_dynamic_int8(g, seq=32, hidden=64, heads=4, ffn=256):
    head_dim = hidden // heads
    x = g.input("input", TensorProto.FLOAT, [1, seq, hidden])

    def linear(h, fin, fout, name):
        xq, xs, xz = _dynamic_quantize(g, h, name + ".input.quantize")
        return _dynamic_matmul(g, xq, xs, xz, fin, fout, name, 0.1)

    def split_heads(t, perm, name):
        r = g.op("Reshape", [t, g.const([1, seq, heads, head_dim], np.int64)], name=name + ".reshape")
        return g.op("Transpose", [r], name=name + ".transpose", perm=perm)

    a = g.layer_norm(x, hidden, "ln_1")
    # quantize_dynamic quantizes the shared input of Q, K and V once.
    aq, as_, az = _dynamic_quantize(g, a, "attn.input.quantize")
    q = split_heads(_dynamic_matmul(g, aq, as_, az, hidden, hidden, "attn.q", 0.1), [0, 2, 1, 3], "q")
    k = split_heads(_dynamic_matmul(g, aq, as_, az, hidden, hidden, "attn.k", 0.1), [0, 2, 3, 1], "k")
    v = split_heads(_dynamic_matmul(g, aq, as_, az, hidden, hidden, "attn.v", 0.1), [0, 2, 1, 3], "v")
    s = g.op("Mul", [g.op("MatMul", [q, k], name="attn.qk"), g.const(1.0 / math.sqrt(head_dim))],
             name="attn.scale")
    p = g.op("Softmax", [s], name="attn.softmax", axis=-1)
    c = g.op("Transpose", [g.op("MatMul", [p, v], name="attn.av")], name="attn.ctx.transpose",
             perm=[0, 2, 1, 3])
    c = g.op("Reshape", [c, g.const([1, seq, hidden], np.int64)], name="attn.ctx.reshape")
    h = g.op("Add", [x, linear(c, hidden, hidden, "attn.proj")], name="attn.residual")
    f = linear(g.layer_norm(h, hidden, "ln_2"), hidden, ffn, "mlp.fc")
    f = g.op("Relu", [f], name="mlp.relu")
    h = g.op("Add", [h, linear(f, ffn, hidden, "mlp.proj")], name="mlp.residual")
    g.output(h, TensorProto.FLOAT, [1, seq, hidden], "output")
    return f"dynamically quantized transformer block (seq {seq}, hidden {hidden}, {heads} heads)"


_IMAGE = {"input": ("float32", [1, 3, 32, 32], None)}
MODELS = {
    "cnn_qdq_int8": (cnn_qdq_int8, _IMAGE),
    "cnn_dynamic_int8": (cnn_dynamic_int8, _IMAGE),
    "transformer_dynamic_int8": (transformer_dynamic_int8,
                                 {"input": ("float32", [1, 32, 64], None)}),
}
# The CUDA backend has no integer kernels yet: it must refuse these, naming their nodes.
CPU_ONLY = {name: "no CUDA kernels for QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, "
                  "ConvInteger, MatMulInteger, QLinearConv, QLinearMatMul"
            for name in MODELS}
