# Writes a model of 10,000 steps over every unary default-domain operator
# the installed onnx knows, every tenth a Reshape to a shape computed at run
# time (Shape, Reshape: the walk notes each), for timing what
# `onnx-doctor model` computes over all releases: python make_wide_model.py OUT.onnx
import sys
import onnx
from onnx import helper, TensorProto, defs

unary = sorted(
    s.name for s in defs.get_all_schemas()
    if s.domain == "" and s.min_input == 1 and s.max_input == 1 and s.min_output == 1 and not s.deprecated
)
nodes, prev = [], "x"
for i in range(10_000):
    if i % 10 == 9:
        nodes.append(helper.make_node("Shape", [prev], [f"s{i}"]))
        nodes.append(helper.make_node("Reshape", [prev, f"s{i}"], [f"h{i}"], name=f"reshape{i}"))
    else:
        nodes.append(helper.make_node(unary[i % len(unary)], [prev], [f"h{i}"]))
    prev = f"h{i}"
nodes.append(helper.make_node("Identity", [prev], ["y"]))
X = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, "height", "width"])
Y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
m = helper.make_model(helper.make_graph(nodes, "wide", [X], [Y]), opset_imports=[helper.make_opsetid("", 21)])
m.ir_version = 10
onnx.save_model(m, sys.argv[1])
print(f"{len(nodes)} nodes, {len(unary)} operator types")
