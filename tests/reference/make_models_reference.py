"""Prints tests/reference/ModelsReference.h: torchvision's resnet18, resnet50 and mobilenet_v2
(num_classes=10) with parameters and buffers of closed formulas, for tests/modules/models_test.cpp: each
state_dict entry's name and shape (num_batches_tracked left out: the library keeps no batch
count), the logits in
evaluation mode of an input of a closed formula, and the gradients of a few parameters of the sum
of the logits weighted by a closed formula (resnet18 in training mode, resnet50 and mobilenet_v2
with their running statistics), as their sums of squares and a few entries.

Run with PyTorch and torchvision (python3 tests/reference/make_models_reference.py > tests/reference/ModelsReference.h);
the test holds the printed numbers, not a dependency on either. The formulas, which the test
computes as well: u(i, s) = ((i * 2654435761 + s * 40503) mod 65536) / 32768 - 1 over an entry's
flat row-major indices i, s the sum of the character codes of its name; a weight of fan-in f is
u * sqrt(3 / f), a batch normalisation's weight 1 + u / 5, bias and running mean u / 10, running
variance 1 + (u + 1) / 4, a linear bias u / 10; the input u(i, 7) over [2, 3, 64, 64], the
logits' weights u(i, 11) over [2, 10].
"""

import math

import torch
import torchvision
from reference_tools import literal


def u(n, salt):
    return torch.tensor([((i * 2654435761 + salt * 40503) % 65536) / 32768 - 1 for i in range(n)], dtype=torch.float64)


def formula_state(model):
    with torch.no_grad():
        for name, t in model.state_dict().items():
            if name.endswith("num_batches_tracked"):
                continue
            v = u(t.numel(), sum(ord(c) for c in name)).reshape(t.shape)
            last = name.rsplit(".", 1)[-1]
            if t.dim() > 1:
                value = v * math.sqrt(3.0 / (t[0].numel()))
            elif last == "weight":
                value = 1 + v / 5
            elif last == "running_var":
                value = 1 + (v + 1) / 4
            else:  # bias, running_mean
                value = v / 10
            t.copy_(value.to(torch.float32))


def strings(name, values):
    return "inline const std::vector<std::string> %s{\n%s\n};\n" % (name, "\n".join('    "%s",' % v for v in values))


def shapes(name, values):
    rows = ["    {%s}," % ", ".join(str(d) for d in s) for s in values]
    return "inline const std::vector<std::vector<int64_t>> %s{\n%s\n};\n" % (name, "\n".join(rows))


def floats(name, values):
    items = [literal(v) for v in values]
    lines = ["    " + ", ".join(items[k:k + 6]) + "," for k in range(0, len(items), 6)]
    return "inline const std::vector<float> %s{\n%s\n};\n" % (name, "\n".join(lines))


GRADIENTS = {
    "ResNet18": ["conv1.weight", "layer1.0.conv1.weight", "layer4.1.bn2.weight", "fc.weight", "fc.bias"],
    "ResNet50": ["conv1.weight", "layer1.0.conv3.weight", "layer4.2.bn3.weight", "fc.weight", "fc.bias"],
    "MobileNetV2": ["features.0.0.weight", "features.2.conv.1.0.weight", "features.17.conv.3.weight",
                    "classifier.1.weight", "classifier.1.bias"],
}
SAMPLES = 16

print("// torchvision %s's resnet18, resnet50 and mobilenet_v2 with parameters of closed formulas: written by"
      % torchvision.__version__.split("+")[0])
print("// tests/reference/make_models_reference.py, which says how. Do not edit.")
print("#pragma once\n\n#include <cstdint>\n#include <string>\n#include <vector>\n\nnamespace nn::test {\n")
x = u(2 * 3 * 64 * 64, 7).reshape(2, 3, 64, 64).to(torch.float32)
gy = u(2 * 10, 11).reshape(2, 10).to(torch.float32)
for label, build in (("ResNet18", torchvision.models.resnet18), ("ResNet50", torchvision.models.resnet50),
                     ("MobileNetV2", torchvision.models.mobilenet_v2)):
    model = build(num_classes=10)
    formula_state(model)
    entries = [(n, list(t.shape)) for n, t in model.state_dict().items() if not n.endswith("num_batches_tracked")]
    print(strings("k%sNames" % label, [n for n, _ in entries]))
    print(shapes("k%sShapes" % label, [s for _, s in entries]))
    model.eval()
    with torch.no_grad():
        print(floats("k%sLogits" % label, model(x).reshape(-1).tolist()))
    # resnet50's batch statistics over 2 x 2 x 2 values in layer4 make its training-mode step
    # ill-conditioned (PyTorch's float32 and float64 differ by 2%): its step, and mobilenet_v2's,
    # run with the running statistics, as fine-tuning with frozen batch normalisation does.
    model.train(label == "ResNet18")
    y = model(x)
    (y * gy).sum().backward()
    parameters = dict(model.named_parameters())
    print(strings("k%sGradientNames" % label, GRADIENTS[label]))
    squares, samples = [], []
    for name in GRADIENTS[label]:
        g = parameters[name].grad.reshape(-1).to(torch.float64)
        squares.append(float((g * g).sum()))
        step = max(1, g.numel() // SAMPLES)
        samples += [float(g[k * step]) for k in range(SAMPLES)] if g.numel() >= SAMPLES else [0.0] * SAMPLES
    print(floats("k%sGradientSquares" % label, squares))
    print(floats("k%sGradientSamples" % label, samples))
print("}  // namespace nn::test")
