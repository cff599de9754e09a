#!/usr/bin/python3
# Prints what an exported ONNX model holds, for FileCheck: ONNX's checker
# verdict (onnx.checker.check_model with full_check, i.e. strict shape
# inference too), the opset, the inputs and outputs with their types, the
# initializers' count, and every node as `TYPE(inputs) -> outputs` in graph
# order (an If's branches indented under it).
import sys

import onnx
from onnx import TensorProto


def type_text(vi):
    t = vi.type.tensor_type
    dims = "x".join(str(d.dim_value) for d in t.shape.dim)
    return "%s[%s]" % (TensorProto.DataType.Name(t.elem_type), dims)


def nodes(graph, indent):
    for n in graph.node:
        attrs = []
        for a in n.attribute:
            if a.type == onnx.AttributeProto.INTS:
                attrs.append("%s=%s" % (a.name, list(a.ints)))
            elif a.type == onnx.AttributeProto.INT:
                attrs.append("%s=%d" % (a.name, a.i))
            elif a.type == onnx.AttributeProto.STRING:
                attrs.append("%s=%s" % (a.name, a.s.decode()))
        print("%s%s(%s) -> %s%s" % (indent, n.op_type, ", ".join(n.input), ", ".join(n.output),
                                    " {%s}" % ", ".join(attrs) if attrs else ""))
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                print("%s  %s %s:" % (indent, a.name, a.g.name))
                nodes(a.g, indent + "    ")
                for o in a.g.output:
                    print("%s    output %s" % (indent, o.name))


model = onnx.load(sys.argv[1])
onnx.checker.check_model(model, full_check=True)
print("checker: ok")
print("opset: %s" % ", ".join("%s:%d" % (o.domain or "ai.onnx", o.version)
                              for o in model.opset_import))
for vi in model.graph.input:
    print("input %s: %s" % (vi.name, type_text(vi)))
for vi in model.graph.output:
    print("output %s: %s" % (vi.name, type_text(vi)))
print("initializers: %d" % len(model.graph.initializer))
nodes(model.graph, "")
