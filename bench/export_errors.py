# The torch 1.x notes' export cases, exported with the installed torch's TorchScript
# exporter (dynamo=False where torch has it): each block is what a user
# would paste. On the GPU machine: python bench/export_errors.py > out.txt,
# then each block through `onnx-doctor diagnose -`.
import io, sys, warnings, contextlib, traceback
import torch, torch.nn as nn, torch.nn.functional as F
print("torch", torch.__version__)
class IndexPut(nn.Module):
    def forward(self, data, index, new):
        data[index] = new
        return data
class Grid(nn.Module):
    def forward(self, x, g):
        return F.grid_sample(x, g, align_corners=False)
class Adaptive(nn.Module):
    def forward(self, x):
        return F.adaptive_avg_pool2d(x, (3, 3))
class Bilinear(nn.Module):
    def forward(self, x):
        return F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=True)
cases = [
    ("index_put opset 9", IndexPut(), (torch.zeros(4, 3), torch.tensor([1, 2]), torch.ones(2, 3)), 9),
    ("grid_sample opset 11", Grid(), (torch.zeros(1, 1, 4, 4), torch.zeros(1, 2, 2, 2)), 11),
    ("adaptive pool 7->3 opset 9", Adaptive(), (torch.zeros(1, 1, 7, 7),), 9),
    ("bilinear align_corners opset 9", Bilinear(), (torch.zeros(1, 1, 4, 4),), 9),
]
for name, m, args, opset in cases:
    print("=== " + name)
    buf = io.BytesIO()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            kw = {"dynamo": False} if "dynamo" in torch.onnx.export.__code__.co_varnames else {}
            torch.onnx.export(m, args, buf, opset_version=opset, **kw)
            print("exported")
        except Exception as e:
            for x in w:
                print(f"{x.filename}:{x.lineno}: {x.category.__name__}: {x.message}")
            print("".join(traceback.format_exception_only(type(e), e)).strip())
