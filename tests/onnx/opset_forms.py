#!/usr/bin/python3
"""The opset forms of ONNX ops the importer must read alike: small models
written here with python3-onnx (nothing binary is committed), each run by
`graphvet run MODEL.onnx --input NAME=RAW --outputs-dir DIR` and compared with
the result numpy computes, so an attribute form read as something else (or
ignored) fails.

Cases: Squeeze/Unsqueeze axes (attribute before opset 13, input after), Clip
bounds (attributes before 11, inputs after, one of them omitted), Split sizes
(attribute before 13, input after), Pad (attributes before 11, inputs after;
constant and reflect), Slice (attributes before 10, inputs with steps after),
ReduceSum axes (attribute before 13, input after) and ReduceMean's attribute,
Resize (opset 10's (X, scales), 13's (X, roi, scales) and sizes), Softmax (a
2-D coercion before opset 13, one axis after), and a Reshape whose shape is
computed from Shape/Gather/Concat.

Usage: opset_forms.py GRAPHVET WORKDIR. Exit 0 when every case matches, 1
otherwise (each mismatch printed).
"""
import json
import os
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

GRAPHVET, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
RNG = np.random.default_rng(7)
failures = []
CASES = [0]


def f32(*shape):
    return RNG.uniform(-2, 2, size=shape).astype(np.float32)


def init(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def case(name, opset, nodes, inputs, expected, inits=()):
    """Writes the model (graph inputs `inputs`: name -> array, outputs
    `expected`: name -> array), runs it and compares."""
    to_elem = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64}
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(k, to_elem[v.dtype], list(v.shape)) for k, v in inputs.items()],
        [helper.make_tensor_value_info(k, to_elem[v.dtype], list(v.shape))
         for k, v in expected.items()],
        initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="graphvet-opset-forms")
    model.ir_version = 7
    CASES[0] += 1
    path = os.path.join(WORK, name + ".onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    cmd = [GRAPHVET, "run", path, "--outputs-dir", os.path.join(WORK, name)]
    for k, v in inputs.items():
        raw = os.path.join(WORK, f"{name}.{k}.bin")
        v.tofile(raw)
        cmd += ["--input", f"{k}={raw}"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        failures.append(f"{name}: graphvet run exits {run.returncode}: {run.stderr.strip()}")
        return
    with open(os.path.join(WORK, name, "outputs.json")) as f:
        described = json.load(f)
    for k, (out, want) in enumerate(expected.items()):
        got = np.fromfile(os.path.join(WORK, name, f"output_{k}.bin"), dtype=want.dtype)
        shape = described[k]["shape"]
        if list(shape) != list(want.shape):
            failures.append(f"{name}: output '{out}' has shape {shape}, numpy's is {list(want.shape)}")
        elif not np.allclose(got.reshape(want.shape), want, rtol=1e-5, atol=1e-6):
            failures.append(f"{name}: output '{out}' is {got.tolist()}, numpy's is "
                            f"{want.ravel().tolist()}")


x = f32(1, 3, 1, 2)
case("squeeze_attr", 11, [helper.make_node("Squeeze", ["x"], ["y"], axes=[0, 2])], {"x": x},
     {"y": x.reshape(3, 2)})
case("squeeze_input", 13, [helper.make_node("Squeeze", ["x", "axes"], ["y"])], {"x": x},
     {"y": x.reshape(3, 2)}, [init("axes", np.array([0, 2], np.int64))])
x = f32(3, 2)
case("unsqueeze_attr", 11, [helper.make_node("Unsqueeze", ["x"], ["y"], axes=[0, 3])], {"x": x},
     {"y": x.reshape(1, 3, 2, 1)})
case("unsqueeze_input", 13, [helper.make_node("Unsqueeze", ["x", "axes"], ["y"])], {"x": x},
     {"y": x.reshape(1, 3, 2, 1)}, [init("axes", np.array([0, -1], np.int64))])

x = f32(2, 5)
case("clip_attr", 6, [helper.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.75)], {"x": x},
     {"y": np.clip(x, -0.5, 0.75)})
case("clip_input", 11, [helper.make_node("Clip", ["x", "lo", "hi"], ["y"])], {"x": x},
     {"y": np.clip(x, -0.5, 0.75)},
     [init("lo", np.array(-0.5, np.float32)), init("hi", np.array(0.75, np.float32))])
case("clip_max_only", 13, [helper.make_node("Clip", ["x", "", "hi"], ["y"])], {"x": x},
     {"y": np.minimum(x, 0.75)}, [init("hi", np.array(0.75, np.float32))])

x = f32(2, 3)
case("split_attr", 11, [helper.make_node("Split", ["x"], ["a", "b"], axis=1, split=[1, 2])],
     {"x": x}, {"a": x[:, :1], "b": x[:, 1:]})
case("split_input", 13, [helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1)],
     {"x": x}, {"a": x[:, :1], "b": x[:, 1:]}, [init("sizes", np.array([1, 2], np.int64))])

x = f32(2, 3)
padded = np.pad(x, ((1, 0), (2, 1)), constant_values=1.5)
case("pad_attr", 2,
     [helper.make_node("Pad", ["x"], ["y"], pads=[1, 2, 0, 1], value=1.5, mode="constant")],
     {"x": x}, {"y": padded})
case("pad_input", 11, [helper.make_node("Pad", ["x", "pads", "v"], ["y"], mode="constant")],
     {"x": x}, {"y": padded},
     [init("pads", np.array([1, 2, 0, 1], np.int64)), init("v", np.array(1.5, np.float32))])
case("pad_reflect", 13, [helper.make_node("Pad", ["x", "pads"], ["y"], mode="reflect")],
     {"x": x}, {"y": np.pad(x, ((0, 1), (2, 1)), mode="reflect")},
     [init("pads", np.array([0, 2, 1, 1], np.int64))])

x = f32(4, 6)
case("slice_attr", 9,
     [helper.make_node("Slice", ["x"], ["y"], starts=[1, -4], ends=[3, 100], axes=[0, 1])],
     {"x": x}, {"y": x[1:3, -4:]})
case("slice_input", 13, [helper.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"])],
     {"x": x}, {"y": x[3:0:-2, 1:6:2]},
     [init("s", np.array([3, 1], np.int64)), init("e", np.array([0, 6], np.int64)),
      init("a", np.array([0, 1], np.int64)), init("st", np.array([-2, 2], np.int64))])

x = f32(2, 3, 4)
case("reducesum_attr", 11,
     [helper.make_node("ReduceSum", ["x"], ["y"], axes=[0, 2], keepdims=0)], {"x": x},
     {"y": x.sum(axis=(0, 2))})
case("reducesum_input", 13,
     [helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=1)], {"x": x},
     {"y": x.sum(axis=1, keepdims=True)}, [init("axes", np.array([1], np.int64))])
case("reducemean_attr", 13, [helper.make_node("ReduceMean", ["x"], ["y"], axes=[-1])],
     {"x": x}, {"y": x.mean(axis=-1, keepdims=True)})

x = f32(1, 1, 2, 3)
up = x.repeat(2, axis=2).repeat(2, axis=3)
case("resize10", 10, [helper.make_node("Resize", ["x", "scales"], ["y"], mode="nearest")],
     {"x": x}, {"y": up}, [init("scales", np.array([1, 1, 2, 2], np.float32))])
case("resize13_scales", 13,
     [helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest")], {"x": x},
     {"y": up}, [init("scales", np.array([1, 1, 2, 2], np.float32))])
case("resize13_sizes", 13,
     [helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="nearest")], {"x": x},
     {"y": up}, [init("sizes", np.array([1, 1, 4, 6], np.int64))])


def softmax(v, axis):
    e = np.exp(v - v.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


x = f32(2, 3, 4)
case("softmax11", 11, [helper.make_node("Softmax", ["x"], ["y"], axis=1)], {"x": x},
     {"y": softmax(x.reshape(2, 12), 1).reshape(2, 3, 4)})
case("softmax13", 13, [helper.make_node("Softmax", ["x"], ["y"], axis=1)], {"x": x},
     {"y": softmax(x, 1)})

x = f32(2, 3, 4)
case("reshape_computed", 13,
     [helper.make_node("Shape", ["x"], ["s"]),
      helper.make_node("Gather", ["s", "i0"], ["d0"], axis=0),
      helper.make_node("Concat", ["d0", "minus1"], ["shape"], axis=0),
      helper.make_node("Reshape", ["x", "shape"], ["y"])],
     {"x": x}, {"y": x.reshape(2, 12)},
     [init("i0", np.array([0], np.int64)), init("minus1", np.array([-1], np.int64))])

for f in failures:
    print("FAIL", f)
print(f"opset forms: {CASES[0]} cases, {len(failures)} failures")
sys.exit(1 if failures else 0)
