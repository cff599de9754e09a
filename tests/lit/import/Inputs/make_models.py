#!/usr/bin/python3
"""Writes the small ONNX models the import lit tests read into DIR (nothing
binary is committed): identity.onnx (a free batch dimension), unsupported.onnx
(ops and an element type graphvet lacks) and if.onnx (a branch reading an
outer value)."""
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
