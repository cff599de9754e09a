#!/usr/bin/python3
"""Writes the small ONNX models the import lit tests read into DIR (nothing
binary is committed): identity.onnx (a free batch dimension), unsupported.onnx
(ops and an element type graphvet lacks), if.onnx (a branch reading an outer
value), combined.onnx (an unsupported op, element type and free dimension
together), pair.onnx (two inputs with free dimensions), rates.onnx (an If on
an input whose else branch does not type) and weighted.onnx (a weight over the
inline limit)."""
import os
import sys

from onnx import TensorProto, helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def save(graph, name, opset=13):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="graphvet-lit")
    with open(os.path.join(out, name), "wb") as f:
        f.write(model.SerializeToString())


save(helper.make_graph(
    [helper.make_node("Identity", ["x"], ["y"], name="copy")], "identity",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])]), "identity.onnx")

save(helper.make_graph(
    [helper.make_node("Einsum", ["x"], ["e"], name="e1", equation="ij->ji"),
     helper.make_node("Det", ["x"], ["d1"], name="det_a"),
     helper.make_node("Det", ["x"], ["d2"], name="det_b"),
     helper.make_node("Identity", ["s"], ["t"], name="sid")], "unsupported",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3]),
     helper.make_tensor_value_info("s", TensorProto.STRING, [2])],
    [helper.make_tensor_value_info("e", TensorProto.FLOAT, [3, 3]),
     helper.make_tensor_value_info("d1", TensorProto.FLOAT, []),
     helper.make_tensor_value_info("d2", TensorProto.FLOAT, []),
     helper.make_tensor_value_info("t", TensorProto.STRING, [2])]), "unsupported.onnx")

then_branch = helper.make_graph(
    [helper.make_node("Identity", ["x"], ["t"], name="pass")], "then_body", [],
    [helper.make_tensor_value_info("t", TensorProto.FLOAT, [2])])
else_branch = helper.make_graph(
    [helper.make_node("Identity", ["z"], ["e"], name="other")], "else_body", [],
    [helper.make_tensor_value_info("e", TensorProto.FLOAT, [2])])
save(helper.make_graph(
    [helper.make_node("If", ["c"], ["r"], name="choose", then_branch=then_branch,
                      else_branch=else_branch)], "branches",
    [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
     helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
     helper.make_tensor_value_info("z", TensorProto.FLOAT, [2])],
    [helper.make_tensor_value_info("r", TensorProto.FLOAT, [2])]), "if.onnx")

# Everything at once: a free dimension, an op and an element type graphvet
# lacks.
save(helper.make_graph(
    [helper.make_node("Einsum", ["x"], ["e"], name="e1", equation="ij->ji"),
     helper.make_node("Identity", ["s"], ["t"], name="sid")], "combined",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3]),
     helper.make_tensor_value_info("s", TensorProto.STRING, [2])],
    [helper.make_tensor_value_info("e", TensorProto.FLOAT, [3, "N"]),
     helper.make_tensor_value_info("t", TensorProto.STRING, [2])]), "combined.onnx")

# Two inputs with free dimensions (one --input-shape a=...,b=... fixes both).
save(helper.make_graph(
    [helper.make_node("Add", ["a", "b"], ["y"], name="sum")], "pair",
    [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["N", "C"]),
     helper.make_tensor_value_info("b", TensorProto.FLOAT, ["C"])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", "C"])]), "pair.onnx")

# An If on `sr == 16000` whose else branch does not type for x's shape (a
# Reshape of 4 elements into 3): only freezing sr keeps the branch taken.
then_branch = helper.make_graph(
    [helper.make_node("Neg", ["x"], ["t"], name="negate")], "wide", [],
    [helper.make_tensor_value_info("t", TensorProto.FLOAT, [4])])
else_branch = helper.make_graph(
    [helper.make_node("Reshape", ["x", "three"], ["e"], name="narrow")], "narrow", [],
    [helper.make_tensor_value_info("e", TensorProto.FLOAT, [3])])
save(helper.make_graph(
    [helper.make_node("Equal", ["sr", "rate"], ["is16k"], name="is16k"),
     helper.make_node("If", ["is16k"], ["r"], name="by_rate", then_branch=then_branch,
                      else_branch=else_branch)], "rates",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4]),
     helper.make_tensor_value_info("sr", TensorProto.INT64, [])],
    [helper.make_tensor_value_info("r", TensorProto.FLOAT, ["R"])],
    initializer=[helper.make_tensor("rate", TensorProto.INT64, [], [16000]),
                 helper.make_tensor("three", TensorProto.INT64, [1], [3])]), "rates.onnx")

# Weights over the inline limit (2048 floats): they go to a sidecar.
weights = [float(i % 7) - 3 for i in range(2048)]
save(helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["y"], name="project")], "weighted",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32])],
    initializer=[helper.make_tensor("w", TensorProto.FLOAT, [64, 32], weights)]), "weighted.onnx")
