"""float16 and bfloat16 models of the generated suite (see generate.py): builders, their inputs,
and the ops they add. Each has float32 inputs and outputs with a Cast at both ends, as a model
converted to half precision for deployment does; weights are stored in the narrow type."""
import math

import numpy as np
from onnx import TensorProto

OPS = {"Cast"}

FLOAT16 = TensorProto.FLOAT16
BFLOAT16 = TensorProto.BFLOAT16


def to_float16(array):
    return array.astype(np.float16)


def to_bfloat16_bits(array):
    """float32 -> bfloat16 bits (round to nearest even) as uint16, for a raw-data initializer."""
    bits = np.ascontiguousarray(array, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    return rounded.astype(np.uint16)


class Precision:
    """The dtype a model computes in and the one its weights' values are rounded to. A float32
    twin of a half model (`twin=True`) computes in float32 on the very same (rounded) weights, so
    comparing the two isolates the error of half-precision compute."""

    def __init__(self, narrow, twin=False):
        self.narrow = narrow
        self.compute = TensorProto.FLOAT if twin else narrow

    def weight(self, g, name, array):
        if self.narrow == FLOAT16:
            rounded = to_float16(array)
            return g.init(name, rounded if self.compute == FLOAT16 else rounded.astype(np.float32))
        bits = to_bfloat16_bits(array)
        if self.compute == TensorProto.FLOAT:
            return g.init(name, (bits.astype(np.uint32) << 16).view(np.float32))
        # numpy has no bfloat16: write the bits, then retype the initializer.
        name = g.init(name, bits)
        g.inits[-1].data_type = BFLOAT16
        return name


def half_conv(g, p, x, cin, cout, k, stride=1, name="conv"):
    w = p.weight(g, f"{name}.weight", g.normal((cout, cin, k, k), math.sqrt(2.0 / (cin * k * k))))
    b = p.weight(g, f"{name}.bias", g.uniform((cout,), -0.1, 0.1))
    pad = (k - 1) // 2
    return g.op("Conv", [x, w, b], name=name, kernel_shape=[k, k], strides=[stride, stride],
                pads=[pad] * 4)


def half_bn(g, p, x, c, name):
    params = [p.weight(g, f"{name}.weight", g.uniform((c,), 0.5, 1.0)),
              p.weight(g, f"{name}.bias", g.uniform((c,), -0.1, 0.1)),
              p.weight(g, f"{name}.running_mean", g.uniform((c,), -0.1, 0.1)),
              p.weight(g, f"{name}.running_var", g.uniform((c,), 0.5, 1.5))]
    return g.op("BatchNormalization", [x] + params, name=name, epsilon=1e-5)


def cnn_fp16(g, p=Precision(FLOAT16)):
    # A small segmentation net exported in float16: encoder of two levels, nearest upsampling,
    # skip Concat, a 1x1 head with Sigmoid, and an image-level class head (GlobalAveragePool,
    # Gemm, Softmax). Casts at the input and at both outputs.
    x = g.input("input", TensorProto.FLOAT, [1, 3, 64, 64])
    h = g.op("Cast", [x], name="to_half", to=p.compute)
    c1 = g.op("Relu", [half_conv(g, p, h, 3, 16, 3, name="enc1")], name="enc1.relu")
    c1 = g.op("Relu", [half_bn(g, p, half_conv(g, p, c1, 16, 16, 3, name="enc1b"), 16, "enc1b.bn")],
              name="enc1b.relu")
    p1 = g.op("MaxPool", [c1], name="pool1", kernel_shape=[2, 2], strides=[2, 2])
    c2 = g.op("HardSwish", [half_conv(g, p, p1, 16, 32, 3, name="enc2")], name="enc2.act")
    c2 = g.op("Add", [half_conv(g, p, c2, 32, 32, 3, name="enc2b"), c2], name="enc2.residual")
    up = g.op("Resize", [c2, "", g.const([1.0, 1.0, 2.0, 2.0])], name="up", mode="nearest")
    merged = g.op("Concat", [up, c1], name="skip", axis=1)
    d1 = g.op("Relu", [half_conv(g, p, merged, 48, 16, 3, name="dec1")], name="dec1.relu")
    mask = g.op("Sigmoid", [half_conv(g, p, d1, 16, 1, 1, name="head")], name="head.sigmoid")
    g.output(g.op("Cast", [mask], name="mask_float", to=TensorProto.FLOAT), TensorProto.FLOAT,
             [1, 1, 64, 64], name="mask")
    pooled = g.op("Flatten", [g.op("GlobalAveragePool", [c2], name="gap")], name="flatten")
    fc_w = p.weight(g, "cls.weight", g.normal((4, 32), math.sqrt(1.0 / 32)))
    fc_b = p.weight(g, "cls.bias", g.uniform((4,), -0.05, 0.05))
    logits = g.op("Gemm", [pooled, fc_w, fc_b], name="cls", transB=1)
    probs = g.op("Softmax", [logits], name="cls.softmax", axis=-1)
    g.output(g.op("Cast", [probs], name="probs_float", to=TensorProto.FLOAT), TensorProto.FLOAT,
             [1, 4], name="probs")
    return "float16 segmentation CNN: Conv/BN/Relu/HardSwish encoder, Resize up, skip Concat, " \
           "Sigmoid mask and a Softmax class head; Cast at the input and both outputs"


def mlp_bf16(g, p=Precision(BFLOAT16)):
    # A bfloat16 MLP classifier: MatMul + Add bias, Relu, LayerNormalization, Sigmoid, Softmax.
    # Cast at both ends.
    x = g.input("x", TensorProto.FLOAT, [4, 256])
    h = g.op("Cast", [x], name="to_bfloat", to=p.compute)

    def linear(v, fin, fout, name):
        w = p.weight(g, f"{name}.weight", g.normal((fin, fout), math.sqrt(2.0 / fin)))
        b = p.weight(g, f"{name}.bias", g.uniform((fout,), -0.05, 0.05))
        return g.op("Add", [g.op("MatMul", [v, w], name=name + ".matmul"), b], name=name + ".add")

    h = g.op("Relu", [linear(h, 256, 128, "fc1")], name="fc1.relu")
    h = linear(h, 128, 128, "fc2")
    scale = p.weight(g, "ln.weight", g.uniform((128,), 0.8, 1.2))
    shift = p.weight(g, "ln.bias", g.uniform((128,), -0.05, 0.05))
    h = g.op("LayerNormalization", [h, scale, shift], name="ln", axis=-1, epsilon=1e-5)
    logits = linear(g.op("Sigmoid", [h], name="act"), 128, 10, "fc3")
    probs = g.op("Softmax", [logits], name="softmax", axis=-1)
    g.output(g.op("Cast", [probs], name="probs_float", to=TensorProto.FLOAT), TensorProto.FLOAT,
             [4, 10], name="probs")
    return "bfloat16 MLP: MatMul+Add, Relu, LayerNormalization, Sigmoid, Softmax; Cast at both ends"


def twin(builder, narrow):
    def build_twin(g):
        return "float32 twin (same rounded weights) of the " + builder(g, Precision(narrow, True))
    return build_twin


CNN_INPUTS = {"input": ("float32", [1, 3, 64, 64], None)}
MLP_INPUTS = {"x": ("float32", [4, 256], None)}
# A twin is generated with the seed of its half model, so both draw the same weights.
MODELS = {
    "cnn_fp16": (cnn_fp16, CNN_INPUTS),
    "cnn_fp16_twin32": (twin(cnn_fp16, FLOAT16), CNN_INPUTS),
    "mlp_bf16": (mlp_bf16, MLP_INPUTS),
    "mlp_bf16_twin32": (twin(mlp_bf16, BFLOAT16), MLP_INPUTS),
}
SEED_NAMES = {"cnn_fp16_twin32": "cnn_fp16", "mlp_bf16_twin32": "mlp_bf16"}
# CPU and CUDA round each node's float32 result to the half type; their float32 results differ
# in the last bits (summation order), which moves some roundings by one half-type ulp.
PARITY_TOLERANCES = {"cnn_fp16": (1e-2, 1e-2), "mlp_bf16": (2e-2, 2e-2)}
