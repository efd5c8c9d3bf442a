# Writes two ~2 GB models for the model-check benchmark: one with inline
# weights (just under protobuf's 2 GB limit) and one with external data.
import os, sys
import numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
n = 7  # 7 x 256 MiB = 1.75 GiB inline
inits, nodes = [], []
prev = 'x'
for i in range(n):
    w = numpy_helper.from_array(np.zeros((64 * 1024 * 1024,), dtype=np.float32), f'w{i}')
    inits.append(w)
    nodes.append(helper.make_node('Add', [prev, f'w{i}'], [f'h{i}']))
    prev = f'h{i}'
nodes.append(helper.make_node('Identity', [prev], ['y']))
X = helper.make_tensor_value_info('x', TensorProto.FLOAT, [64 * 1024 * 1024])
Y = helper.make_tensor_value_info('y', TensorProto.FLOAT, [64 * 1024 * 1024])
m = helper.make_model(helper.make_graph(nodes, 'big', [X], [Y], initializer=inits), opset_imports=[helper.make_opsetid('', 17)])
m.ir_version = 8
onnx.save_model(m, os.path.join(out, 'inline.onnx'))
# 8 x 256 MiB = 2 GiB external
inits.append(numpy_helper.from_array(np.zeros((64 * 1024 * 1024,), dtype=np.float32), 'w7'))
nodes[-1] = helper.make_node('Add', [prev, 'w7'], ['y'])
m = helper.make_model(helper.make_graph(nodes, 'big', [X], [Y], initializer=inits), opset_imports=[helper.make_opsetid('', 17)])
m.ir_version = 8
onnx.save_model(m, os.path.join(out, 'external.onnx'), save_as_external_data=True, all_tensors_to_one_file=True, location='external.data')
