#!/usr/bin/env python3
"""Tiny ONNX models for the model commands' tests (golden graph tests and
`lathe run` cases), built with onnx.helper at test time.

    tiny_models.py NAME OUT_DIR

writes OUT_DIR/model.onnx and, where the model can run, OUT_DIR/input_N.pb
and the expected OUT_DIR/expected_N.pb (computed with numpy). Weights come
from a fixed seed.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
rng = np.random.default_rng(7)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def init(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def conv2d(x, w, b, pad):
    """NCHW convolution, stride 1, symmetric pad."""
    n, c, h, wd = x.shape
    k, _, r, s = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - r + 1, wd + 2 * pad - s + 1
    y = np.zeros((n, k, oh, ow), np.float64)
    for i in range(r):
        for j in range(s):
            y += np.einsum("nchw,kc->nkhw", xp[:, :, i:i + oh, j:j + ow],
                           w[:, :, i, j])
    return (y + b.reshape(1, k, 1, 1)).astype(np.float32)


def model(nodes, inputs, outputs, initializers=(), opset=OPSET):
    graph = helper.make_graph(nodes, "tiny", inputs, outputs,
                              initializer=list(initializers))
    m = helper.make_model(graph,
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def conv_bias_add_relu():
    """Conv with bias, a residual Add and Relu: one fused group."""
    x, res = rand(1, 3, 8, 8), rand(1, 4, 8, 8)
    w, b = rand(4, 3, 3, 3), rand(4)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["conv"], name="conv",
                         pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("Add", ["conv", "res"], ["sum"], name="add"),
        helper.make_node("Relu", ["sum"], ["y"], name="relu"),
    ]
    m = model(nodes, [vi("x", [1, 3, 8, 8]), vi("res", [1, 4, 8, 8])],
              [vi("y", [1, 4, 8, 8])], [init("w", w), init("b", b)])
    y = np.maximum(conv2d(x, w, b, 1) + res, 0)
    return m, [x, res], [y]


def winograd_block():
    """A residual block's second convolution, 16 -> 128 channels 3x3 on 8x8
    with bias, a residual Add and Relu: split into Winograd's kernels, the
    Add and Relu fused into the output transform."""
    x, res = rand(1, 16, 8, 8), rand(1, 128, 8, 8)
    w, b = rand(128, 16, 3, 3), rand(128)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["conv"], name="conv",
                         pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("Add", ["conv", "res"], ["sum"], name="add"),
        helper.make_node("Relu", ["sum"], ["y"], name="relu"),
    ]
    m = model(nodes, [vi("x", [1, 16, 8, 8]), vi("res", [1, 128, 8, 8])],
              [vi("y", [1, 128, 8, 8])], [init("w", w), init("b", b)])
    y = np.maximum(conv2d(x, w, b, 1) + res, 0)
    return m, [x, res], [y]


def batchnorm():
    """Conv without bias, BatchNormalization, Relu: the norm folds into the
    convolution's weights and bias."""
    x, w = rand(1, 3, 6, 6), rand(4, 3, 3, 3)
    scale, bias, mean = rand(4), rand(4), rand(4)
    var = (rng.random(4) + 0.5).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["conv"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization",
                         ["conv", "scale", "bias", "mean", "var"], ["bn"],
                         name="bn", epsilon=1e-5),
        helper.make_node("Relu", ["bn"], ["y"], name="relu"),
    ]
    m = model(nodes, [vi("x", [1, 3, 6, 6])], [vi("y", [1, 4, 6, 6])], [
        init("w", w), init("scale", scale), init("bias", bias),
        init("mean", mean), init("var", var)
    ])
    conv = conv2d(x, w, np.zeros(4, np.float32), 1).astype(np.float64)
    s = (scale / np.sqrt(var.astype(np.float64) + 1e-5)).reshape(1, 4, 1, 1)
    bn = (conv - mean.reshape(1, 4, 1, 1)) * s + bias.reshape(1, 4, 1, 1)
    return m, [x], [np.maximum(bn, 0).astype(np.float32)]


def shape_chain():
    """The Shape -> Gather -> Unsqueeze -> Concat -> Reshape chain PyTorch
    exports for a flatten: folded to a constant shape."""
    x = rand(2, 4, 3, 3)
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"], name="shape"),
        helper.make_node("Gather", ["shape", "zero"], ["batch"],
                         name="gather", axis=0),
        helper.make_node("Unsqueeze", ["batch", "axes"], ["batch1"],
                         name="unsqueeze"),
        helper.make_node("Concat", ["batch1", "minus_one"], ["new_shape"],
                         name="concat", axis=0),
        helper.make_node("Reshape", ["x", "new_shape"], ["flat"],
                         name="reshape"),
        helper.make_node("Relu", ["flat"], ["y"], name="relu"),
    ]
    m = model(nodes, [vi("x", [2, 4, 3, 3])], [vi("y", [2, 36])], [
        init("zero", np.array(0, np.int64)),
        init("axes", np.array([0], np.int64)),
        init("minus_one", np.array([-1], np.int64))
    ])
    return m, [x], [np.maximum(x.reshape(2, 36), 0)]


def twin_convs():
    """Two Conv + Relu groups of one shape (different weights): one task
    called twice."""
    x = rand(1, 4, 6, 6)
    w1, b1, w2, b2 = rand(4, 4, 3, 3), rand(4), rand(4, 4, 3, 3), rand(4)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c2"], ["y"], name="relu2"),
    ]
    m = model(nodes, [vi("x", [1, 4, 6, 6])], [vi("y", [1, 4, 6, 6])], [
        init("w1", w1), init("b1", b1), init("w2", w2), init("b2", b2)
    ])
    r1 = np.maximum(conv2d(x, w1, b1, 1), 0)
    return m, [x], [np.maximum(conv2d(r1, w2, b2, 1), 0)]


def add_relu():
    """Two inputs, two outputs: an elementwise chain and a reduction."""
    a, b = rand(2, 3), rand(2, 3)
    nodes = [
        helper.make_node("Add", ["a", "b"], ["sum"], name="add"),
        helper.make_node("Relu", ["sum"], ["y"], name="relu"),
        helper.make_node("ReduceSum", ["y", "axes"], ["total"],
                         name="reduce", keepdims=0),
    ]
    m = model(nodes, [vi("a", [2, 3]), vi("b", [2, 3])],
              [vi("y", [2, 3]), vi("total", [2])],
              [init("axes", np.array([1], np.int64))])
    y = np.maximum(a + b, 0)
    return m, [a, b], [y, y.sum(axis=1).astype(np.float32)]


def symbolic_batch():
    """An input whose first dimension is symbolic ("batch")."""
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    m = model(nodes, [vi("x", ["batch", 3])], [vi("y", ["batch", 3])])
    x = rand(2, 3)
    return m, [x], [np.maximum(x, 0)]


def unsupported_op():
    """An operator Lathe does not have (Det)."""
    nodes = [helper.make_node("Det", ["x"], ["y"], name="det")]
    m = model(nodes, [vi("x", [3, 3])], [vi("y", [])])
    return m, [rand(3, 3)], None


def lathe_own_op():
    """One of Lathe's own operators (WinogradInputTransform), which only
    its graph passes may create: refused in an ONNX file."""
    nodes = [helper.make_node("WinogradInputTransform", ["x", "b"], ["y"],
                              name="wit")]
    m = model(nodes, [vi("x", [1, 1, 4, 4])], [vi("y", [4, 4, 1, 1, 2, 2])],
              [init("b", rand(4, 4, 4, 4))])
    return m, [rand(1, 1, 4, 4)], None


def unsupported_attribute():
    """BatchNormalization in training mode: an attribute value Lathe does
    not run."""
    nodes = [
        helper.make_node("BatchNormalization",
                         ["x", "scale", "bias", "mean", "var"], ["y"],
                         name="bn", training_mode=1),
    ]
    ones = np.ones(2, np.float32)
    m = model(nodes, [vi("x", [1, 2, 3, 3])], [vi("y", [1, 2, 3, 3])], [
        init("scale", ones), init("bias", ones * 0), init("mean", ones * 0),
        init("var", ones)
    ])
    return m, [rand(1, 2, 3, 3)], None


def reshape_by_input():
    """A Reshape whose target shape is an input: its output's shape is known
    only from the input's value."""
    x = rand(2, 6)
    nodes = [
        helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
        helper.make_node("Relu", ["r"], ["y"], name="relu"),
    ]
    m = model(nodes, [vi("x", [2, 6]), vi("shape", [3], TensorProto.INT64)],
              [vi("y", [3, 2, 2])])
    shape = np.array([3, -1, 2], np.int64)
    return m, [x, shape], [np.maximum(x.reshape(3, 2, 2), 0)]


def conv_relu_gemm():
    """Conv + Relu (also an output) -> MaxPool -> Flatten -> Gemm: three
    tasks, an output read by a kernel, an intermediate and its view."""
    x = rand(1, 3, 8, 8)
    w, b = rand(4, 3, 3, 3), rand(4)
    fc_w, fc_b = rand(10, 64), rand(10)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["features"], name="relu"),
        helper.make_node("MaxPool", ["features"], ["pooled"], name="pool",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["pooled"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["y"], name="fc",
                         transB=1),
    ]
    m = model(nodes, [vi("x", [1, 3, 8, 8])],
              [vi("y", [1, 10]), vi("features", [1, 4, 8, 8])], [
                  init("w", w), init("b", b), init("fc_w", fc_w),
                  init("fc_b", fc_b)
              ])
    features = np.maximum(conv2d(x, w, b, 1), 0)
    pooled = features.reshape(1, 4, 4, 2, 4, 2).max(axis=(3, 5))
    y = pooled.reshape(1, 64).astype(np.float64) @ fc_w.T + fc_b
    return m, [x], [y.astype(np.float32), features]


def wide_gemm():
    """Gemm of one row by 640x512 weights, + bias, then Relu: 1.25 MiB of
    constants, enough for a model library to read them from a copy on huge
    pages."""
    x = rand(1, 512)
    w, b = rand(640, 512), rand(640)
    nodes = [
        helper.make_node("Gemm", ["x", "w", "b"], ["g"], name="fc", transB=1),
        helper.make_node("Relu", ["g"], ["y"], name="relu"),
    ]
    m = model(nodes, [vi("x", [1, 512])], [vi("y", [1, 640])],
              [init("w", w), init("b", b)])
    y = np.maximum(x.astype(np.float64) @ w.T + b, 0)
    return m, [x], [y.astype(np.float32)]


def depthwise2d(x, w, b, pad):
    """NCHW depthwise convolution (one filter per channel), stride 1."""
    c = x.shape[1]
    return np.concatenate([
        conv2d(x[:, i:i + 1], w[i:i + 1], b[i:i + 1], pad) for i in range(c)
    ], axis=1)


def inverted_residual(channels=32):
    """MobileNetV2's block: a 1x1 expansion 16 -> `channels` + Relu, a
    depthwise 3x3 + Relu, a 1x1 projection back to 16 + the residual input.
    The two activations between them are stored channel-blocked (by 16, or
    by 8 for 24 channels)."""
    x = rand(1, 16, 6, 6)
    w1, b1 = rand(channels, 16, 1, 1), rand(channels)
    w2, b2 = rand(channels, 1, 3, 3), rand(channels)
    w3, b3 = rand(16, channels, 1, 1), rand(16)
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["e"], name="expand"),
        helper.make_node("Relu", ["e"], ["er"], name="relu1"),
        helper.make_node("Conv", ["er", "w2", "b2"], ["d"], name="depthwise",
                         group=channels, pads=[1, 1, 1, 1],
                         kernel_shape=[3, 3]),
        helper.make_node("Relu", ["d"], ["dr"], name="relu2"),
        helper.make_node("Conv", ["dr", "w3", "b3"], ["p"], name="project"),
        helper.make_node("Add", ["p", "x"], ["y"], name="residual"),
    ]
    m = model(nodes, [vi("x", [1, 16, 6, 6])], [vi("y", [1, 16, 6, 6])], [
        init("w1", w1), init("b1", b1), init("w2", w2), init("b2", b2),
        init("w3", w3), init("b3", b3)
    ])
    er = np.maximum(conv2d(x, w1, b1, 0), 0)
    dr = np.maximum(depthwise2d(er, w2, b2, 1), 0)
    y = conv2d(dr, w3, b3, 0) + x
    return m, [x], [y]


def attention_scores():
    """Attention's scores from heads laid out [sequence, heads, dim]: the
    queries transposed to [heads, sequence, dim] and scaled by 1/8, the keys
    transposed to [heads, dim, sequence], their product. Both transposes
    are the product's prologue: one kernel."""
    q, k = rand(5, 2, 4), rand(6, 2, 4)
    nodes = [
        helper.make_node("Transpose", ["q"], ["qt"], name="q_heads",
                         perm=[1, 0, 2]),
        helper.make_node("Div", ["qt", "eight"], ["qs"], name="scale"),
        helper.make_node("Transpose", ["k"], ["kt"], name="k_heads",
                         perm=[1, 2, 0]),
        helper.make_node("MatMul", ["qs", "kt"], ["s"], name="scores"),
    ]
    m = model(nodes, [vi("q", [5, 2, 4]), vi("k", [6, 2, 4])],
              [vi("s", [2, 5, 6])],
              [init("eight", np.array(8, dtype=np.float32))])
    s = np.matmul(q.transpose(1, 0, 2) / 8, k.transpose(1, 2, 0))
    return m, [q, k], [s]


MODELS = {
    "conv_bias_add_relu": conv_bias_add_relu,
    "batchnorm": batchnorm,
    "winograd_block": winograd_block,
    "shape_chain": shape_chain,
    "twin_convs": twin_convs,
    "add_relu": add_relu,
    "symbolic_batch": symbolic_batch,
    "unsupported_op": unsupported_op,
    "lathe_own_op": lathe_own_op,
    "unsupported_attribute": unsupported_attribute,
    "reshape_by_input": reshape_by_input,
    "conv_relu_gemm": conv_relu_gemm,
    "wide_gemm": wide_gemm,
    "inverted_residual": inverted_residual,
    "inverted_residual_24": lambda: inverted_residual(24),
    "attention_scores": attention_scores,
}


# Models that are not valid ONNX on purpose (onnx.checker would refuse
# them, as Lathe must).
UNCHECKED = {"lathe_own_op"}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in MODELS:
        sys.exit("usage: tiny_models.py {%s} OUT_DIR" % "|".join(MODELS))
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    m, inputs, outputs = MODELS[sys.argv[1]]()
    if sys.argv[1] not in UNCHECKED:
        onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, "model.onnx"))
    names = [i.name for i in m.graph.input]
    for i, array in enumerate(inputs):
        tensor = numpy_helper.from_array(array, names[i])
        with open(os.path.join(out, "input_%d.pb" % i), "wb") as f:
            f.write(tensor.SerializeToString())
    for i, array in enumerate(outputs or []):
        tensor = numpy_helper.from_array(array, m.graph.output[i].name)
        with open(os.path.join(out, "expected_%d.pb" % i), "wb") as f:
            f.write(tensor.SerializeToString())


if __name__ == "__main__":
    main()
