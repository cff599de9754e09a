#!/usr/bin/python3
"""Writes the small ONNX models the export lit tests read into DIR (nothing
binary is committed): forms9.onnx (opset 9: the ops whose attributes later
became inputs -- Slice, Squeeze, Unsqueeze, Clip, Pad, Split, ReduceSum --
and Softmax's 2-D coercion on a middle axis), resize10.onnx (opset 10's
two-input Resize, nearest and linear), dtypes.onnx (an initializer of
every element type graphvet has, each reaching an output) and loop.onnx (a
Loop with a carried value and a scan output)."""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def save(graph, name, opset):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="graphvet-lit")
    model.ir_version = 7
    with open(os.path.join(out, name), "wb") as f:
        f.write(model.SerializeToString())


save(helper.make_graph(
    [helper.make_node("Slice", ["x"], ["s"], name="slice", starts=[0, 1], ends=[2, 3], axes=[0, 2]),
     helper.make_node("Clip", ["s"], ["c"], name="clip", min=-0.5, max=0.5),
     helper.make_node("Softmax", ["c"], ["sm"], name="softmax", axis=1),
     helper.make_node("Unsqueeze", ["sm"], ["u"], name="unsqueeze", axes=[0]),
     helper.make_node("Squeeze", ["u"], ["q"], name="squeeze", axes=[0]),
     helper.make_node("Pad", ["q"], ["p"], name="pad", pads=[0, 1, 0, 0, 1, 0], value=2.0),
     helper.make_node("Split", ["p"], ["a", "b"], name="split", axis=1, split=[1, 4]),
     helper.make_node("ReduceSum", ["b"], ["r"], name="sum", axes=[1], keepdims=0)], "forms9",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
    [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 1, 2]),
     helper.make_tensor_value_info("r", TensorProto.FLOAT, [2, 2])]), "forms9.onnx", 9)

scales = numpy_helper.from_array(np.array([1, 1, 2, 3], dtype=np.float32), "scales")
save(helper.make_graph(
    [helper.make_node("Resize", ["x", "scales"], ["n"], name="nearest", mode="nearest"),
     helper.make_node("Resize", ["x", "scales"], ["l"], name="linear", mode="linear")],
    "resize10",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 2, 2])],
    [helper.make_tensor_value_info("n", TensorProto.FLOAT, [1, 2, 4, 6]),
     helper.make_tensor_value_info("l", TensorProto.FLOAT, [1, 2, 4, 6])],
    [scales]), "resize10.onnx", 10)

types = [("f32", np.float32), ("f16", np.float16), ("f64", np.float64), ("i8", np.int8),
         ("u8", np.uint8), ("i16", np.int16), ("u16", np.uint16), ("i32", np.int32),
         ("u32", np.uint32), ("i64", np.int64), ("u64", np.uint64), ("b", np.bool_)]
inits, nodes, outputs = [], [], []
for name, t in types:
    values = np.array([0, 1, 2, 3], dtype=t) if t != np.bool_ else np.array([1, 0, 1, 1], dtype=t)
    inits.append(numpy_helper.from_array(values, "w_" + name))
    nodes.append(helper.make_node("Max" if t != np.bool_ else "Or", ["w_" + name, "w_" + name],
                                  ["o_" + name], name="use_" + name))
    outputs.append(helper.make_tensor_value_info("o_" + name, helper.np_dtype_to_tensor_dtype(
        values.dtype) if hasattr(helper, "np_dtype_to_tensor_dtype") else
        {np.dtype(k): v for k, v in helper.mapping.NP_TYPE_TO_TENSOR_TYPE.items()}[values.dtype],
        [4]))
bf16 = helper.make_tensor("w_bf16", TensorProto.BFLOAT16, [4], [0x3f80, 0x4000, 0xc040, 0x7f80])
inits.append(bf16)
nodes.append(helper.make_node("Identity", ["w_bf16"], ["o_bf16"], name="use_bf16"))
outputs.append(helper.make_tensor_value_info("o_bf16", TensorProto.BFLOAT16, [4]))
nodes.append(helper.make_node("Add", ["x", "w_f32"], ["o_x"], name="use_x"))
outputs.append(helper.make_tensor_value_info("o_x", TensorProto.FLOAT, [4]))
save(helper.make_graph(nodes, "dtypes", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                       outputs, inits), "dtypes.onnx", 13)

# loop.onnx: a Loop of 3 iterations (constant trip count, a condition input)
# carrying a value doubled and shifted each time, with a scan output.
body = helper.make_graph(
    [helper.make_node("Add", ["acc_in", "acc_in"], ["twice"], name="twice"),
     helper.make_node("Cast", ["i"], ["i_f"], name="to_float", to=TensorProto.FLOAT),
     helper.make_node("Add", ["twice", "i_f"], ["acc_out"], name="shift"),
     helper.make_node("Identity", ["cond_in"], ["cond_out"], name="keep_going"),
     helper.make_node("Neg", ["acc_out"], ["scan"], name="negate")],
    "loop_body",
    [helper.make_tensor_value_info("i", TensorProto.INT64, []),
     helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
     helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [2])],
    [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
     helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [2]),
     helper.make_tensor_value_info("scan", TensorProto.FLOAT, [2])])
trip = numpy_helper.from_array(np.array(3, dtype=np.int64), "trip")
save(helper.make_graph(
    [helper.make_node("Loop", ["trip", "go", "x"], ["final", "scans"], name="loop", body=body)],
    "looped",
    [helper.make_tensor_value_info("go", TensorProto.BOOL, []),
     helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
    [helper.make_tensor_value_info("final", TensorProto.FLOAT, [2]),
     helper.make_tensor_value_info("scans", TensorProto.FLOAT, [3, 2])],
    [trip]), "loop.onnx", 13)
