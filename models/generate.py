#!/usr/bin/python3
"""Writes OnePool's generated model suite: architecture-faithful ONNX models with random weights.

Every model is deterministic (seeded numpy), uses opset 17 / IR 8, only ops the runtime supports,
and initializers instead of Constant nodes. Each passes onnx.checker and strict shape inference
with static shapes, except the main input's "batch" dim of mlp and resnet18 (use --dim batch=1).
--out DIR also gets manifest.json: per model its file, input names/shapes (batch=1) and dtypes.

  /usr/bin/python3 models/generate.py --out build/models [--only mlp,resnet18]
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8
SEED = 20240601
# Initializer dtypes counted as parameters (not shapes, axes or int32 biases).
PARAMETER_TYPES = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.INT8,
                   TensorProto.UINT8)
SUPPORTED_OPS = set("""Add Sub Mul Div Pow Sqrt Neg Abs Log Exp Erf Tanh Relu LeakyRelu Sigmoid
HardSigmoid HardSwish Clip Max Min Equal Less Greater Where Cast Conv ConvTranspose MaxPool
AveragePool GlobalAveragePool BatchNormalization LayerNormalization InstanceNormalization MatMul
Gemm Softmax ReduceMean ReduceMax ReduceSum ArgMax Reshape Flatten Squeeze Unsqueeze Transpose
Concat Split Slice Gather Pad Resize Expand Tile Shape ConstantOfShape Range Identity""".split())


class Graph:
    """Accumulates nodes and initializers; every helper returns its output tensor's name."""

    def __init__(self, name, seed):
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.counts = {}
        self.consts = {}

    def unique(self, base):
        n = self.counts.get(base, 0)
        self.counts[base] = n + 1
        return base if n == 0 else f"{base}_{n}"

    def input(self, name, dtype, shape):
        self.inputs.append(helper.make_tensor_value_info(name, dtype, shape))
        return name

    def output(self, tensor, dtype, shape, name=None):
        """Declares `tensor` a graph output, renaming it (and its producer) to `name`."""
        if name and name != tensor:
            node = next(n for n in self.nodes if tensor in n.output)
            node.output[list(node.output).index(tensor)] = name
            tensor = name
        self.outputs.append(helper.make_tensor_value_info(tensor, dtype, shape))

    def init(self, name, array):
        name = self.unique(name)
        self.inits.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def const(self, value, dtype=np.float32):
        """Small shared constants (scalars, shapes, axes), deduplicated by value."""
        array = np.array(value, dtype=dtype)
        key = (array.dtype.str, array.shape, array.tobytes())
        if key not in self.consts:
            self.consts[key] = self.init("const", array)
        return self.consts[key]

    def op(self, op_type, inputs, name=None, outputs=1, **attrs):
        assert op_type in SUPPORTED_OPS, op_type
        base = self.unique(name or op_type.lower())
        outs = [base] if outputs == 1 else [f"{base}_out{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=base, **attrs))
        return outs[0] if outputs == 1 else outs

    # Random weights ---------------------------------------------------------------------------
    def normal(self, shape, std):
        a = self.rng.standard_normal(shape, dtype=np.float32)
        a *= np.float32(std)
        return a

    def uniform(self, shape, lo, hi):
        return self.rng.uniform(lo, hi, shape).astype(np.float32)

    # Layers -----------------------------------------------------------------------------------
    def conv(self, x, cin, cout, k, stride=1, pad=None, group=1, bias=False, name="conv"):
        pad = (k - 1) // 2 if pad is None else pad
        fan_in = cin // group * k * k
        w = self.init(f"{name}.weight", self.normal((cout, cin // group, k, k), math.sqrt(2.0 / fan_in)))
        ins = [x, w]
        if bias:
            ins.append(self.init(f"{name}.bias", self.uniform((cout,), -0.1, 0.1)))
        return self.op("Conv", ins, name=name, kernel_shape=[k, k], strides=[stride, stride],
                       pads=[pad] * 4, group=group, dilations=[1, 1])

    def bn(self, x, c, gamma=(0.5, 1.0), eps=1e-5, name="bn"):
        # Non-trivial running stats so that folding BN into the conv is actually tested.
        scale = self.init(f"{name}.weight", self.uniform((c,), *gamma))
        shift = self.init(f"{name}.bias", self.uniform((c,), -0.1, 0.1))
        mean = self.init(f"{name}.running_mean", self.uniform((c,), -0.1, 0.1))
        var = self.init(f"{name}.running_var", self.uniform((c,), 0.5, 1.5))
        return self.op("BatchNormalization", [x, scale, shift, mean, var], name=name, epsilon=eps)

    def conv_bn(self, x, cin, cout, k, stride=1, pad=None, group=1, relu=True, gamma=(0.5, 1.0),
                name="conv"):
        y = self.bn(self.conv(x, cin, cout, k, stride, pad, group, name=name), cout, gamma,
                    name=name + ".bn")
        return self.op("Relu", [y], name=name + ".relu") if relu else y

    def gemm(self, x, fin, fout, name="fc", std=None):
        # PyTorch layout: weight [out, in], transB=1.
        w = self.init(f"{name}.weight", self.normal((fout, fin), std or math.sqrt(1.0 / fin)))
        b = self.init(f"{name}.bias", self.uniform((fout,), -0.05, 0.05))
        return self.op("Gemm", [x, w, b], name=name, transB=1)

    def linear(self, x, fin, fout, name, std=0.02):
        # Transformer layout: MatMul with weight [in, out], then Add bias.
        w = self.init(f"{name}.weight", self.normal((fin, fout), std))
        b = self.init(f"{name}.bias", self.normal((fout,), 0.02))
        return self.op("Add", [self.op("MatMul", [x, w], name=name + ".matmul"), b], name=name + ".add")

    def layer_norm(self, x, c, name, eps=1e-5):
        g = self.init(f"{name}.weight", self.uniform((c,), 0.8, 1.2))
        b = self.init(f"{name}.bias", self.uniform((c,), -0.05, 0.05))
        return self.op("LayerNormalization", [x, g, b], name=name, axis=-1, epsilon=eps)

    def build(self, doc):
        graph = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits)
        model = helper.make_model(graph, producer_name="onepool-models-generate", producer_version="1",
                                  opset_imports=[helper.make_opsetid("", OPSET)], doc_string=doc)
        model.ir_version = IR_VERSION
        return model


def batch_dim(dynamic):
    return "batch" if dynamic else 1


# Models ----------------------------------------------------------------------------------------
def mlp(g):
    x = g.input("x", TensorProto.FLOAT, ["batch", 784])
    h = g.op("Relu", [g.gemm(x, 784, 512, "fc1", math.sqrt(2 / 784))])
    h = g.op("Relu", [g.gemm(h, 512, 256, "fc2", math.sqrt(2 / 512))])
    y = g.op("Softmax", [g.gemm(h, 256, 10, "fc3")], name="probs", axis=-1)
    g.output(y, TensorProto.FLOAT, ["batch", 10])
    return "3-layer MLP (MNIST-sized)"


def resnet(g, depth):
    bottleneck = depth == 50
    layers = {18: [2, 2, 2, 2], 50: [3, 4, 6, 3]}[depth]
    b = batch_dim(depth == 18)
    x = g.input("input", TensorProto.FLOAT, [b, 3, 224, 224])
    h = g.conv_bn(x, 3, 64, 7, 2, name="conv1")
    h = g.op("MaxPool", [h], name="maxpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin, expansion = 64, 4 if bottleneck else 1
    for stage, (blocks, width) in enumerate(zip(layers, [64, 128, 256, 512])):
        for i in range(blocks):
            stride = 2 if stage > 0 and i == 0 else 1
            cout = width * expansion
            p = f"layer{stage + 1}.{i}"
            # Small gamma on the last BN of each block keeps the residual sum's variance in check.
            if bottleneck:
                y = g.conv_bn(h, cin, width, 1, name=p + ".conv1")
                y = g.conv_bn(y, width, width, 3, stride, name=p + ".conv2")
                y = g.conv_bn(y, width, cout, 1, relu=False, gamma=(0.1, 0.3), name=p + ".conv3")
            else:
                y = g.conv_bn(h, cin, width, 3, stride, name=p + ".conv1")
                y = g.conv_bn(y, width, cout, 3, relu=False, gamma=(0.1, 0.3), name=p + ".conv2")
            skip = h
            if stride != 1 or cin != cout:
                skip = g.conv_bn(h, cin, cout, 1, stride, relu=False, name=p + ".downsample")
            h = g.op("Relu", [g.op("Add", [y, skip], name=p + ".add")], name=p + ".relu")
            cin = cout
    h = g.op("GlobalAveragePool", [h], name="avgpool")
    h = g.op("Flatten", [h], name="flatten", axis=1)
    y = g.gemm(h, cin, 1000, "fc")
    g.output(y, TensorProto.FLOAT, [b, 1000], "logits")
    return f"torchvision resnet{depth}"


def mobilenetv2(g):
    x = g.input("input", TensorProto.FLOAT, [1, 3, 224, 224])
    lo, hi = g.const(0.0), g.const(6.0)

    def cbr6(h, cin, cout, k, stride=1, group=1, name="conv"):
        y = g.conv_bn(h, cin, cout, k, stride, group=group, relu=False, name=name)
        return g.op("Clip", [y, lo, hi], name=name + ".relu6")

    h = cbr6(x, 3, 32, 3, 2, name="features.0")
    cin, idx = 32, 1
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                       (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            stride = s if i == 0 else 1
            hidden = cin * t
            p = f"features.{idx}"
            y = h if t == 1 else cbr6(h, cin, hidden, 1, name=p + ".expand")
            y = cbr6(y, hidden, hidden, 3, stride, group=hidden, name=p + ".dw")
            y = g.conv_bn(y, hidden, c, 1, relu=False, gamma=(0.3, 0.6), name=p + ".project")
            h = g.op("Add", [h, y], name=p + ".add") if stride == 1 and cin == c else y
            cin, idx = c, idx + 1
    h = cbr6(h, cin, 1280, 1, name=f"features.{idx}")
    h = g.op("Flatten", [g.op("GlobalAveragePool", [h], name="avgpool")], name="flatten", axis=1)
    y = g.gemm(h, 1280, 1000, "classifier")
    g.output(y, TensorProto.FLOAT, [1, 1000], "logits")
    return "torchvision mobilenet_v2"


def attention_heads(g, x, seq, heads, head_dim, perm, name):
    """[1,S,H*D] -> [1,H,S,D] (perm 0,2,1,3) or [1,H,D,S] (perm 0,2,3,1)."""
    r = g.op("Reshape", [x, g.const([1, seq, heads, head_dim], np.int64)], name=name + ".reshape")
    return g.op("Transpose", [r], name=name + ".transpose", perm=perm)


def merge_heads(g, x, seq, hidden, name):
    t = g.op("Transpose", [x], name=name + ".transpose", perm=[0, 2, 1, 3])
    return g.op("Reshape", [t, g.const([1, seq, hidden], np.int64)], name=name + ".reshape")


def bert_encoder(g, layers=12, hidden=768, heads=12, ffn=3072, seq=128, vocab=8192):
    head_dim = hidden // heads
    ids = g.input("input_ids", TensorProto.INT64, [1, seq])
    mask = g.input("attention_mask", TensorProto.INT64, [1, seq])
    word = g.init("embeddings.word_embeddings.weight", g.normal((vocab, hidden), 0.02))
    pos = g.init("embeddings.position_embeddings.weight", g.normal((512, hidden), 0.02))
    pos_ids = g.init("embeddings.position_ids", np.arange(seq, dtype=np.int64).reshape(1, seq))
    h = g.op("Add", [g.op("Gather", [word, ids], name="embeddings.word", axis=0),
                     g.op("Gather", [pos, pos_ids], name="embeddings.position", axis=0)],
             name="embeddings.add")
    h = g.layer_norm(h, hidden, "embeddings.LayerNorm", 1e-12)
    # Additive mask bias [1,1,1,S]: 0 where attended, -10000 where masked.
    m = g.op("Cast", [mask], name="mask.cast", to=TensorProto.FLOAT)
    m = g.op("Mul", [g.op("Sub", [g.const(1.0), m], name="mask.invert"), g.const(-10000.0)], name="mask.scale")
    mask_bias = g.op("Unsqueeze", [m, g.const([1, 2], np.int64)], name="mask.unsqueeze")
    scale = g.const(math.sqrt(head_dim))
    half, one, sqrt2 = g.const(0.5), g.const(1.0), g.const(math.sqrt(2.0))
    for i in range(layers):
        p = f"encoder.layer.{i}"
        q = attention_heads(g, g.linear(h, hidden, hidden, p + ".attention.query"), seq, heads, head_dim,
                            [0, 2, 1, 3], p + ".attention.q")
        k = attention_heads(g, g.linear(h, hidden, hidden, p + ".attention.key"), seq, heads, head_dim,
                            [0, 2, 3, 1], p + ".attention.k")
        v = attention_heads(g, g.linear(h, hidden, hidden, p + ".attention.value"), seq, heads, head_dim,
                            [0, 2, 1, 3], p + ".attention.v")
        s = g.op("Div", [g.op("MatMul", [q, k], name=p + ".attention.qk"), scale], name=p + ".attention.scale")
        s = g.op("Add", [s, mask_bias], name=p + ".attention.mask")
        a = g.op("Softmax", [s], name=p + ".attention.softmax", axis=-1)
        c = merge_heads(g, g.op("MatMul", [a, v], name=p + ".attention.av"), seq, hidden, p + ".attention.ctx")
        o = g.linear(c, hidden, hidden, p + ".attention.output.dense")
        h = g.layer_norm(g.op("Add", [o, h], name=p + ".attention.residual"), hidden,
                         p + ".attention.output.LayerNorm", 1e-12)
        f = g.linear(h, hidden, ffn, p + ".intermediate.dense")
        erf = g.op("Erf", [g.op("Div", [f, sqrt2], name=p + ".gelu.div")], name=p + ".gelu.erf")
        f = g.op("Mul", [g.op("Mul", [f, g.op("Add", [erf, one], name=p + ".gelu.add")], name=p + ".gelu.mul"),
                         half], name=p + ".gelu.half")
        o = g.linear(f, ffn, hidden, p + ".output.dense")
        h = g.layer_norm(g.op("Add", [o, h], name=p + ".output.residual"), hidden,
                         p + ".output.LayerNorm", 1e-12)
    g.output(h, TensorProto.FLOAT, [1, seq, hidden], "last_hidden_state")
    return f"BERT-base encoder ({layers} layers, vocab {vocab})"


def gpt2_decoder(g, layers=12, hidden=768, heads=12, seq=128, vocab=8192, positions=1024):
    head_dim = hidden // heads
    ids = g.input("input_ids", TensorProto.INT64, [1, seq])
    wte = g.init("wte.weight", g.normal((vocab, hidden), 0.02))
    wpe = g.init("wpe.weight", g.normal((positions, hidden), 0.01))
    pos_ids = g.init("position_ids", np.arange(seq, dtype=np.int64).reshape(1, seq))
    h = g.op("Add", [g.op("Gather", [wte, ids], name="wte.gather", axis=0),
                     g.op("Gather", [wpe, pos_ids], name="wpe.gather", axis=0)], name="embeddings.add")
    causal = g.init("causal_mask", np.tril(np.ones((seq, seq), dtype=bool)).reshape(1, 1, seq, seq))
    masked, scale = g.const(-10000.0), g.const(math.sqrt(head_dim))
    split = g.const([hidden, hidden, hidden], np.int64)
    half, one = g.const(0.5), g.const(1.0)
    cubic, three, root = g.const(0.044715), g.const(3.0), g.const(math.sqrt(2.0 / math.pi))
    proj_std = 0.02 / math.sqrt(2 * layers)
    for i in range(layers):
        p = f"h.{i}"
        a = g.layer_norm(h, hidden, p + ".ln_1")
        qkv = g.linear(a, hidden, 3 * hidden, p + ".attn.c_attn")
        q, k, v = g.op("Split", [qkv, split], name=p + ".attn.split", outputs=3, axis=-1)
        q = attention_heads(g, q, seq, heads, head_dim, [0, 2, 1, 3], p + ".attn.q")
        k = attention_heads(g, k, seq, heads, head_dim, [0, 2, 3, 1], p + ".attn.k")
        v = attention_heads(g, v, seq, heads, head_dim, [0, 2, 1, 3], p + ".attn.v")
        s = g.op("Div", [g.op("MatMul", [q, k], name=p + ".attn.qk"), scale], name=p + ".attn.scale")
        s = g.op("Where", [causal, s, masked], name=p + ".attn.causal")
        w = g.op("Softmax", [s], name=p + ".attn.softmax", axis=-1)
        c = merge_heads(g, g.op("MatMul", [w, v], name=p + ".attn.av"), seq, hidden, p + ".attn.ctx")
        h = g.op("Add", [h, g.linear(c, hidden, hidden, p + ".attn.c_proj", proj_std)], name=p + ".attn.residual")
        m = g.linear(g.layer_norm(h, hidden, p + ".ln_2"), hidden, 4 * hidden, p + ".mlp.c_fc")
        inner = g.op("Add", [m, g.op("Mul", [g.op("Pow", [m, three], name=p + ".gelu.pow"), cubic],
                                     name=p + ".gelu.cubic")], name=p + ".gelu.inner")
        t = g.op("Tanh", [g.op("Mul", [inner, root], name=p + ".gelu.scale")], name=p + ".gelu.tanh")
        m = g.op("Mul", [g.op("Mul", [m, g.op("Add", [t, one], name=p + ".gelu.add")], name=p + ".gelu.mul"),
                         half], name=p + ".gelu.half")
        h = g.op("Add", [h, g.linear(m, 4 * hidden, hidden, p + ".mlp.c_proj", proj_std)], name=p + ".mlp.residual")
    h = g.layer_norm(h, hidden, "ln_f")
    # Tied LM head: logits = h @ wte^T (the Gather and the Transpose share one initializer).
    wte_t = g.op("Transpose", [wte], name="lm_head.transpose", perm=[1, 0])
    y = g.op("MatMul", [h, wte_t], name="logits")
    g.output(y, TensorProto.FLOAT, [1, seq, vocab])
    return f"GPT-2 small decoder ({layers} layers, vocab {vocab})"


def unet(g, size=128, base=32, classes=2):
    x = g.input("input", TensorProto.FLOAT, [1, 3, size, size])

    def double_conv(h, cin, cout, name):
        return g.conv_bn(g.conv_bn(h, cin, cout, 3, name=name + ".conv1"), cout, cout, 3, name=name + ".conv2")

    widths = [base * 2 ** i for i in range(4)]
    skips, h, cin = [], x, 3
    for i, w in enumerate(widths):
        h = double_conv(h, cin, w, f"down{i + 1}")
        skips.append((h, w))
        h = g.op("MaxPool", [h], name=f"pool{i + 1}", kernel_shape=[2, 2], strides=[2, 2])
        cin = w
    h = double_conv(h, cin, cin * 2, "bottleneck")
    cin *= 2
    for i, (skip, w) in reversed(list(enumerate(skips))):
        p = f"up{i + 1}"
        wt = g.init(p + ".upconv.weight", g.normal((cin, w, 2, 2), math.sqrt(2.0 / cin)))
        bt = g.init(p + ".upconv.bias", g.uniform((w,), -0.1, 0.1))
        u = g.op("ConvTranspose", [h, wt, bt], name=p + ".upconv", kernel_shape=[2, 2], strides=[2, 2])
        h = double_conv(g.op("Concat", [skip, u], name=p + ".concat", axis=1), 2 * w, w, p)
        cin = w
    y = g.conv(h, cin, classes, 1, bias=True, name="outc")
    g.output(y, TensorProto.FLOAT, [1, classes, size, size], "logits")
    return f"U-Net ({size}x{size}, widths {widths}, bottleneck {widths[-1] * 2})"


def inception(g):
    x = g.input("input", TensorProto.FLOAT, [1, 3, 224, 224])

    def maxpool(h, k, s, pad, name):
        return g.op("MaxPool", [h], name=name, kernel_shape=[k, k], strides=[s, s], pads=[pad] * 4)

    def cbr(h, cin, cout, k, s=1, name="conv"):
        return g.conv_bn(h, cin, cout, k, s, name=name)

    def module(h, cin, c1, c3r, c3, c5r, c5, cp, name):
        b1 = cbr(h, cin, c1, 1, name=name + ".branch1")
        b2 = cbr(cbr(h, cin, c3r, 1, name=name + ".branch2.0"), c3r, c3, 3, name=name + ".branch2.1")
        b3 = cbr(cbr(h, cin, c5r, 1, name=name + ".branch3.0"), c5r, c5, 5, name=name + ".branch3.1")
        b4 = cbr(maxpool(h, 3, 1, 1, name + ".branch4.pool"), cin, cp, 1, name=name + ".branch4.1")
        return g.op("Concat", [b1, b2, b3, b4], name=name + ".concat", axis=1), c1 + c3 + c5 + cp

    h = cbr(x, 3, 64, 7, 2, "conv1")                       # 112
    h = maxpool(h, 3, 2, 1, "maxpool1")                      # 56
    h = cbr(h, 64, 64, 1, name="conv2")
    h = cbr(h, 64, 192, 3, name="conv3")
    h = maxpool(h, 3, 2, 1, "maxpool2")                      # 28
    c = 192
    table = [("3a", 64, 96, 128, 16, 32, 32), ("3b", 128, 128, 192, 32, 96, 64), "pool",
             ("4a", 192, 96, 208, 16, 48, 64), ("4b", 160, 112, 224, 24, 64, 64),
             ("4c", 128, 128, 256, 24, 64, 64), ("4d", 112, 144, 288, 32, 64, 64),
             ("4e", 256, 160, 320, 32, 128, 128), "pool",
             ("5a", 256, 160, 320, 32, 128, 128), ("5b", 384, 192, 384, 48, 128, 128)]
    pools = 2
    for row in table:
        if row == "pool":
            pools += 1
            h = maxpool(h, 3, 2, 1, f"maxpool{pools}")
            continue
        h, c = module(h, c, *row[1:], name="inception" + row[0])
    h = g.op("Flatten", [g.op("GlobalAveragePool", [h], name="avgpool")], name="flatten", axis=1)
    y = g.gemm(h, c, 1000, "fc")
    g.output(y, TensorProto.FLOAT, [1, 1000], "logits")
    return "GoogLeNet / Inception-v1 (torchvision layout, true 5x5 branch, BN)"


def dyn_fpn(g):
    # Symbolic height and width: one file serves every even image size (dynamic-shape tests).
    x = g.input("input", TensorProto.FLOAT, [1, 3, "height", "width"])
    c1 = g.op("Relu", [g.conv(x, 3, 8, 3, bias=True, name="conv1")], name="relu1")
    p1 = g.op("MaxPool", [c1], name="pool1", kernel_shape=[2, 2], strides=[2, 2])
    c2 = g.op("Relu", [g.conv(p1, 8, 8, 3, bias=True, name="conv2")], name="relu2")
    up = g.op("Resize", [c2, "", g.const([1.0, 1.0, 2.0, 2.0])], name="up", mode="nearest")
    y = g.op("Sigmoid", [g.op("Add", [up, c1], name="merge")], name="probs")
    g.output(y, TensorProto.FLOAT, [1, 8, "height", "width"])
    return "two-level conv pyramid with symbolic height and width (dynamic-shape tests)"


# name -> (builder, {input: (dtype, shape at batch=1, value range for integer inputs)})
MODELS = {
    "mlp": (mlp, {"x": ("float32", [1, 784], None)}),
    "resnet18": (lambda g: resnet(g, 18), {"input": ("float32", [1, 3, 224, 224], None)}),
    "resnet50": (lambda g: resnet(g, 50), {"input": ("float32", [1, 3, 224, 224], None)}),
    "mobilenetv2": (mobilenetv2, {"input": ("float32", [1, 3, 224, 224], None)}),
    "bert_encoder": (bert_encoder, {"input_ids": ("int64", [1, 128], [0, 8192]),
                                    "attention_mask": ("int64", [1, 128], [0, 2])}),
    "gpt2_decoder": (gpt2_decoder, {"input_ids": ("int64", [1, 128], [0, 8192])}),
    "unet": (unet, {"input": ("float32", [1, 3, 128, 128], None)}),
    "inception": (inception, {"input": ("float32", [1, 3, 224, 224], None)}),
    "dyn_fpn": (dyn_fpn, {"input": ("float32", [1, 3, 64, 64], None)}),
}
SYMBOLIC = {"mlp": {"batch": 1}, "resnet18": {"batch": 1}, "dyn_fpn": {"height": 64, "width": 64}}
SPATIAL_SYMBOLIC = {"dyn_fpn"}  # inferred shapes stay symbolic beyond the batch dim


def if_folded_head(g):
    # An If whose condition depends only on a static shape (Shape(x)[1] == 64): import folds the
    # condition and inlines the chosen branch, so no If is left to plan or run. Each branch holds
    # its own weights as branch initializers.
    x = g.input("x", TensorProto.FLOAT, [1, 64])
    h = g.op("Relu", [g.gemm(x, 64, 32, "fc1", math.sqrt(2 / 64))], name="relu1")
    features = g.op("Gather", [g.op("Shape", [x], name="x_shape"), g.const(1, np.int64)],
                    name="features", axis=0)
    is_wide = g.op("Equal", [features, g.const(64, np.int64)], name="is_wide")

    def branch(name, softmax):
        w = numpy_helper.from_array(g.normal((10, 32), math.sqrt(1 / 32)), f"{name}.weight")
        b = numpy_helper.from_array(g.uniform((10,), -0.05, 0.05), f"{name}.bias")
        nodes = [helper.make_node("Gemm", [h, w.name, b.name], [f"{name}.gemm"], name=f"{name}.gemm",
                                  transB=1)]
        out = f"{name}.gemm"
        if softmax:
            nodes.append(helper.make_node("Softmax", [out], [f"{name}.probs"], name=f"{name}.probs",
                                          axis=-1))
            out = f"{name}.probs"
        return helper.make_graph(nodes, name, [],
                                 [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, 10])],
                                 [w, b])

    g.nodes.append(helper.make_node("If", [is_wide], ["probs"], name="head_if",
                                    then_branch=branch("head", True),
                                    else_branch=branch("fallback", False)))
    g.output("probs", TensorProto.FLOAT, [1, 10])
    return "MLP head behind an If on a static shape (the If is inlined at load)"


MODELS["if_folded_head"] = (if_folded_head, {"x": ("float32", [1, 64], None)})

# Reduced-precision models (float16/bfloat16 and int8), each in its own module. A builder takes a
# Graph and returns its description, like the ones above; each module lists the ops it adds.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import low_precision  # noqa: E402
import quantized  # noqa: E402
import control_flow  # noqa: E402
import data_dependent  # noqa: E402

SEED_NAMES = {}  # name -> the model whose seed (weights, compare_ort inputs) it shares
PARITY_TOLERANCES = {}  # name -> (atol, rtol) of the GPU parity test (default 1e-3, 1e-3)
CPU_ONLY = {}  # name -> why the CUDA backend must refuse it (the GPU parity test checks it does)
BOUNDS = {}  # name -> {tensor: N}: the --bound flags its runs need (LoadOptions::bounds)
for module in (low_precision, quantized, control_flow, data_dependent):
    SUPPORTED_OPS |= module.OPS
    MODELS.update(module.MODELS)
    SEED_NAMES.update(getattr(module, "SEED_NAMES", {}))
    PARITY_TOLERANCES.update(getattr(module, "PARITY_TOLERANCES", {}))
    CPU_ONLY.update(getattr(module, "CPU_ONLY", {}))
    BOUNDS.update(getattr(module, "BOUNDS", {}))


def check(model):
    onnx.checker.check_model(model, full_check=False)
    # Shape inference only needs the weights' shapes: give it a copy in which every large
    # initializer is a graph input instead (saves seconds per transformer).
    small = [t for t in model.graph.initializer if np.prod(t.dims) <= 4096]
    large = [helper.make_tensor_value_info(t.name, t.data_type, list(t.dims))
             for t in model.graph.initializer if np.prod(t.dims) > 4096]
    light = helper.make_model(
        helper.make_graph(model.graph.node, model.graph.name, list(model.graph.input) + large,
                          model.graph.output, small),
        opset_imports=model.opset_import)
    light.ir_version = model.ir_version
    inferred = onnx.shape_inference.infer_shapes(light, check_type=True, strict_mode=True)
    known = {vi.name: vi for vi in list(inferred.graph.value_info) + list(inferred.graph.output)}
    for node in inferred.graph.node:
        if node.op_type in data_dependent.DATA_DEPENDENT_OPS or \
                model.graph.name in data_dependent.MODELS or model.graph.name in BOUNDS:
            continue  # sizes that depend on the input values (OnePool plans a bound)
        for out in node.output:
            vi = known.get(out)
            if vi is None or not vi.type.tensor_type.HasField("shape"):
                raise RuntimeError(f"{node.name}: no inferred shape for '{out}'")
            for d in vi.type.tensor_type.shape.dim:
                if not d.HasField("dim_value") and d.dim_param != "batch" and \
                        model.graph.name not in SPATIAL_SYMBOLIC:
                    raise RuntimeError(f"{node.name}: '{out}' has a non-static dim {d}")


def generate(name, out_dir):
    start = time.perf_counter()
    builder, inputs = MODELS[name]
    seed_name = SEED_NAMES.get(name, name)  # a float32 twin draws its half model's weights
    g = Graph(name, SEED + sum(map(ord, seed_name)))
    doc = builder(g)
    model = g.build(doc)
    check(model)
    path = os.path.join(out_dir, name + ".onnx")
    with open(path + ".tmp", "wb") as f:
        f.write(model.SerializeToString())
    os.replace(path + ".tmp", path)
    params = sum(int(np.prod(t.dims)) for t in model.graph.initializer
                 if t.data_type in PARAMETER_TYPES)
    entry = {
        "name": name, "file": name + ".onnx", "description": doc,
        "inputs": {k: v[1] for k, v in inputs.items()},
        "input_dtypes": {k: v[0] for k, v in inputs.items()},
        "input_ranges": {k: v[2] for k, v in inputs.items() if v[2] is not None},
        "dims": SYMBOLIC.get(name, {}),
        "input_seed": seed_name,  # bench/compare_ort seeds the inputs with it
        "outputs": [o.name for o in model.graph.output],
        "nodes": len(model.graph.node), "params": params, "bytes": os.path.getsize(path),
    }
    if name in PARITY_TOLERANCES:
        entry["parity_tolerance"] = list(PARITY_TOLERANCES[name])
    if name in CPU_ONLY:
        entry["cpu_only"] = CPU_ONLY[name]
    if name in BOUNDS:
        entry["bounds"] = BOUNDS[name]
    seconds = time.perf_counter() - start
    print(f"{name:14s} nodes {entry['nodes']:5d}  params {params / 1e6:7.2f} M  "
          f"{entry['bytes'] / 2**20:7.1f} MB  {seconds:5.1f} s", flush=True)
    return entry


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--only", default="", help="comma-separated subset of: " + ",".join(MODELS))
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {unknown}; known: {list(MODELS)}")
    os.makedirs(args.out, exist_ok=True)
    start = time.perf_counter()
    entries = {n: generate(n, args.out) for n in names}
    # With --only, keep the manifest entries of models generated earlier into the same folder.
    manifest_path = os.path.join(args.out, "manifest.json")
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            for old in json.load(f).get("models", []):
                if old.get("name") in MODELS and old["name"] not in entries and \
                        os.path.exists(os.path.join(args.out, old["file"])):
                    entries[old["name"]] = old
    manifest = {"generator": "models/generate.py", "opset": OPSET, "ir_version": IR_VERSION,
                "seed": SEED, "models": [entries[n] for n in MODELS if n in entries]}
    with open(manifest_path + ".tmp", "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    os.replace(manifest_path + ".tmp", manifest_path)
    print(f"generated {len(names)} models in {time.perf_counter() - start:.1f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
