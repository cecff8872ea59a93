"""Writes the safetensors files of PyTorch's own writer that tests/serialize_test.cpp reads:

- tests/data/torch-dtypes.safetensors: one tensor per dtype PyTorch writes, of values whose
  bits the test knows from the formats alone (F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL);
- tests/data/torch-bn-net.safetensors: the state_dict of a small network in BF16 (convolution,
  batch normalisation with its I64 num_batches_tracked, ReLU, flatten, linear), with running
  statistics of its own;
- tests/data/torch-bn-net-io.safetensors: an input and that network's logits in evaluation mode,
  computed in float32 from the BF16 weights.

Run with PyTorch and the safetensors package (python3 tests/make_safetensors_fixtures.py from the
repository root); the test reads the files, not PyTorch.
"""

import torch
from safetensors.torch import save_file

torch.manual_seed(7)

save_file(
    {
        "f64": torch.tensor([1.5, -2.25, 0.1, 1e300, -1e-50, 3.4028235e38, 3.4028235677973366e38], dtype=torch.float64),
        "f32": torch.tensor([0.5, -3.0, float("inf")], dtype=torch.float32),
        "f16": torch.tensor([1.0, -2.0, 65504.0, 2.0**-24, 2.0**-14, float("-inf"), -0.0], dtype=torch.float16),
        "bf16": torch.tensor([1.0, -5.0, 3.3895313892515355e38, 2.0**-133, float("inf")], dtype=torch.bfloat16),
        "i64": torch.tensor([0, -1, 2**53 + 1, -(2**63), 16777217], dtype=torch.int64),
        "i32": torch.tensor([-(2**31), 123], dtype=torch.int32),
        "i16": torch.tensor([-32768, 7], dtype=torch.int16),
        "i8": torch.tensor([-128, 127], dtype=torch.int8),
        "u8": torch.tensor([255, 0], dtype=torch.uint8),
        "bool": torch.tensor([False, True, True], dtype=torch.bool),
    },
    "tests/data/torch-dtypes.safetensors",
)

net = torch.nn.Sequential(
    torch.nn.Conv2d(1, 2, 3),
    torch.nn.BatchNorm2d(2),
    torch.nn.ReLU(),
    torch.nn.Flatten(),
    torch.nn.Linear(2 * 4 * 4, 3),
)
with torch.no_grad():
    net[1].weight.uniform_(0.5, 1.5)
    net[1].bias.uniform_(-0.5, 0.5)
    net[1].running_mean.uniform_(-0.2, 0.2)
    net[1].running_var.uniform_(0.5, 2.0)
    net[1].num_batches_tracked.fill_(1234)
state = {name: (t.to(torch.bfloat16) if t.is_floating_point() else t) for name, t in net.state_dict().items()}
save_file(state, "tests/data/torch-bn-net.safetensors")

net.load_state_dict({name: t.to(torch.float32) if t.is_floating_point() else t for name, t in state.items()})
net.eval()
x = torch.randn(2, 1, 6, 6)
with torch.no_grad():
    y = net(x)
save_file({"input": x, "logits": y}, "tests/data/torch-bn-net-io.safetensors")
