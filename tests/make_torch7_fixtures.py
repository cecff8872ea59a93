"""Writes the Torch7 files (torch.save's binary format) that tests/torch7_test.cpp loads with
nn::loadTorch7, and each model's output on a fixed input, computed by PyTorch:

- tests/data/torch7/convnet.t7: nn.Sequential of SpatialConvolutionMM (a 2-D weight),
  SpatialBatchNormalization (running_var), ReLU(true), SpatialMaxPooling, SpatialConvolution (a
  DoubleTensor weight), SpatialBatchNormalization of version 1 (running_std), ReLU, Dropout, View,
  Linear (weight and bias views into one FloatStorage at offsets, as getParameters leaves them),
  LogSoftMax;
- tests/data/torch7/residual.t7: cudnn's convolution, batch normalisation and ReLU, a residual
  block (ConcatTable of a branch and Identity, CAddTable(true)), average pooling, View with
  setNumInputDims, Linear, SoftMax;
- tests/data/torch7/shared.t7: a Linear in two places (one object referred to twice), a second
  Linear whose weight is the first's tensor (a reference), Reshape, Tanh, Sigmoid;
- tests/data/torch7/data-parallel.t7: nn.DataParallelTable (version 3: its device list, then its
  fields, whose `impl` refers back to the table) of two replicas of Linear (CudaTensor weights)
  and ReLU.

Each NAME.t7 has NAME.io.safetensors beside it: "input" and "output" (evaluation mode). Every file
but data-parallel.t7 (whose DataParallelTable writes a format of its own) is read back with the
torchfile package (PyPI), an independent reader, and compared with what was written.

Run from the repository root with numpy, PyTorch, safetensors and torchfile:
python3 tests/make_torch7_fixtures.py
"""

import os
import struct

import numpy as np
import torch
import torch.nn.functional as F
import torchfile
from safetensors.numpy import save_file

OUT = "tests/data/torch7"
rng = np.random.default_rng(7)


# ---------------------------------------------------------------------------------------------
# The writer: File.lua's writeObject in binary mode.

class Obj:
    """A Torch object: its class, version and fields (a dict written as a table)."""

    def __init__(self, cls, fields, version=1):
        self.cls, self.fields, self.version = cls, fields, version


class Storage:
    def __init__(self, values, cls="torch.FloatStorage", dtype="<f4"):
        self.values, self.cls, self.dtype = np.asarray(values), cls, dtype


class Tensor:
    """A view of a storage: sizes, strides and an offset counted from 0."""

    def __init__(self, storage, sizes, strides=None, offset=0, cls="torch.FloatTensor"):
        if strides is None:
            strides = [int(np.prod(sizes[i + 1:])) for i in range(len(sizes))]
        self.storage, self.sizes, self.strides, self.offset, self.cls = storage, sizes, strides, offset, cls


def tensor(a, cls="torch.FloatTensor", storage_cls="torch.FloatStorage", dtype="<f4"):
    a = np.asarray(a)
    return Tensor(Storage(a.reshape(-1), storage_cls, dtype), list(a.shape), cls=cls)


def empty():
    return Tensor(None, [], [])


class Writer:
    def __init__(self):
        self.out = bytearray()
        self.indices = {}
        self.keep = []

    def int(self, v):
        self.out += struct.pack("<i", v)

    def long(self, v):
        self.out += struct.pack("<q", v)

    def string(self, s):
        b = s.encode() if isinstance(s, str) else s
        self.int(len(b))
        self.out += b

    def reference(self, x):
        """Writes x's index; True where x was written before (only its index then)."""
        key = id(x)
        if key in self.indices:
            self.int(self.indices[key])
            return True
        self.indices[key] = len(self.indices) + 1
        self.keep.append(x)
        self.int(self.indices[key])
        return False

    def value(self, x):
        if x is None:
            self.int(0)
        elif isinstance(x, bool):
            self.int(5)
            self.int(1 if x else 0)
        elif isinstance(x, (int, float)):
            self.int(1)
            self.out += struct.pack("<d", float(x))
        elif isinstance(x, (str, bytes)):
            self.int(2)
            self.string(x)
        elif isinstance(x, (dict, list)):
            self.int(3)
            if self.reference(x):
                return
            items = list(x.items()) if isinstance(x, dict) else [(i + 1, v) for i, v in enumerate(x)]
            self.int(len(items))
            for k, v in items:
                self.value(k)
                self.value(v)
        else:
            self.int(4)
            if self.reference(x):
                return
            self.string("V %d" % getattr(x, "version", 1))
            self.string(x.cls)
            if isinstance(x, Storage):
                self.long(x.values.size)
                self.out += x.values.astype(x.dtype).tobytes()
            elif isinstance(x, Tensor):
                self.int(len(x.sizes))
                for s in x.sizes:
                    self.long(s)
                for s in x.strides:
                    self.long(s)
                self.long(x.offset + 1)
                self.value(x.storage)
            elif x.cls == "nn.DataParallelTable":
                self.value(x.fields["gpuAssignments"])
                self.value(x.fields)
            else:
                self.value(x.fields)


def save(name, model):
    w = Writer()
    w.value(model)
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(w.out)


# ---------------------------------------------------------------------------------------------
# Modules as Torch7 writes them: their fields, as nn's constructors set them.

def module(cls, version=1, **fields):
    base = {"output": empty(), "gradInput": empty(), "train": False, "_type": "torch.FloatTensor"}
    base.update(fields)
    return Obj(cls, base, version)


def sequential(cls, modules):
    return module(cls, modules=list(modules))


def conv_fields(w, b, stride, pad):
    n_out, n_in, kh, kw = w.shape
    return dict(nInputPlane=n_in, nOutputPlane=n_out, kW=kw, kH=kh, dW=stride, dH=stride, padW=pad, padH=pad)


def uniform(*shape, scale=0.5):
    return rng.uniform(-scale, scale, size=shape).astype(np.float32)


def batch_norm_state(n):
    return (uniform(n, scale=1.0) + 1, uniform(n), uniform(n), rng.uniform(0.5, 2.0, size=n).astype(np.float32))


def expect(name, x, y):
    save_file({"input": np.ascontiguousarray(x), "output": np.ascontiguousarray(y.detach().numpy())},
              os.path.join(OUT, name + ".io.safetensors"))


def t(a):
    return torch.from_numpy(np.asarray(a, dtype=np.float32))


def bn(x, weight, bias, mean, var, eps):
    return F.batch_norm(x, t(mean), t(var), None if weight is None else t(weight),
                        None if bias is None else t(bias), False, 0.0, eps)


def check(name, f):
    """torchfile's reading of `name` passed to f, which compares it with what was written."""
    f(torchfile.load(os.path.join(OUT, name)))


# ---------------------------------------------------------------------------------------------
# convnet.t7

def convnet():
    w1, b1 = uniform(4, 1, 3, 3), uniform(4)
    g1, h1, m1, v1 = batch_norm_state(4)
    w2, b2 = uniform(6, 4, 3, 3).astype(np.float64), uniform(6).astype(np.float64)
    g2, h2, m2, v2 = batch_norm_state(6)
    eps2 = 1e-3
    std2 = (1 / np.sqrt(v2.astype(np.float64) + eps2)).astype(np.float32)
    w3, b3 = uniform(5, 24), uniform(5)
    # Linear's weight and bias in one storage, bias first, as getParameters leaves them.
    flat = Storage(np.concatenate([np.zeros(3, np.float32), b3, w3.reshape(-1)]))
    model = sequential("nn.Sequential", [
        module("nn.SpatialConvolutionMM", weight=tensor(w1.reshape(4, 9)), bias=tensor(b1), **conv_fields(w1, b1, 1, 1)),
        module("nn.SpatialBatchNormalization", 2, weight=tensor(g1), bias=tensor(h1), running_mean=tensor(m1),
               running_var=tensor(v1), eps=1e-5, momentum=0.1, affine=True),
        module("nn.ReLU", threshold=0, val=0, inplace=True),
        module("nn.SpatialMaxPooling", kW=2, kH=2, dW=2, dH=2, padW=0, padH=0, ceil_mode=False,
               indices=tensor(np.zeros(0, np.int64), "torch.LongTensor", "torch.LongStorage", "<i8")),
        module("nn.SpatialConvolution", weight=tensor(w2, "torch.DoubleTensor", "torch.DoubleStorage", "<f8"),
               bias=tensor(b2, "torch.DoubleTensor", "torch.DoubleStorage", "<f8"), **conv_fields(w2, b2, 1, 0)),
        module("nn.SpatialBatchNormalization", 1, weight=tensor(g2), bias=tensor(h2), running_mean=tensor(m2),
               running_std=tensor(std2), eps=eps2, momentum=0.1, affine=True),
        module("nn.ReLU", threshold=0, val=0, inplace=False),
        module("nn.Dropout", p=0.25, v2=True, noise=empty()),
        module("nn.View", size=Storage(np.array([24]), "torch.LongStorage", "<i8"), numElements=24),
        module("nn.Linear", weight=Tensor(flat, [5, 24], [24, 1], 8), bias=Tensor(flat, [5], [1], 3)),
        module("nn.LogSoftMax"),
    ])
    save("convnet.t7", model)

    x = uniform(2, 1, 8, 8, scale=1.0)
    y = F.conv2d(t(x), t(w1), t(b1), padding=1)
    y = F.relu(bn(y, g1, h1, m1, v1, 1e-5))
    y = F.max_pool2d(y, 2, 2)
    y = F.conv2d(y, t(w2), t(b2))
    y = F.relu(bn(y, g2, h2, m2, 1 / std2.astype(np.float64) ** 2 - eps2, eps2))
    y = F.log_softmax(F.linear(y.reshape(2, 24), t(w3), t(b3)), 1)
    expect("convnet", x, y)

    def compare(m):
        mods = m.modules
        assert m.torch_typename() == b"nn.Sequential" and len(mods) == 11
        assert np.array_equal(mods[0].weight, w1.reshape(4, 9))
        assert np.array_equal(mods[4].weight, w2)
        assert np.array_equal(mods[5].running_std, std2)
        assert np.array_equal(mods[9].weight, w3) and np.array_equal(mods[9].bias, b3)
        assert list(mods[8].size) == [24]
    check("convnet.t7", compare)


# ---------------------------------------------------------------------------------------------
# residual.t7

def residual():
    def conv_bn(n_in, n_out):
        w, b = uniform(n_out, n_in, 3, 3), uniform(n_out)
        g, h, m, v = batch_norm_state(n_out)
        mods = [module("cudnn.SpatialConvolution", weight=tensor(w), bias=tensor(b), groups=1, **conv_fields(w, b, 1, 1)),
                module("cudnn.SpatialBatchNormalization", 2, weight=tensor(g), bias=tensor(h), running_mean=tensor(m),
                       running_var=tensor(v), eps=1e-5, momentum=0.1, affine=True)]
        return mods, lambda y: bn(F.conv2d(y, t(w), t(b), padding=1), g, h, m, v, 1e-5)

    stem, stem_f = conv_bn(3, 4)
    a, a_f = conv_bn(4, 4)
    b, b_f = conv_bn(4, 4)
    w, bias = uniform(3, 4), uniform(3)
    branch = sequential("nn.Sequential", a + [module("cudnn.ReLU", inplace=True)] + b)
    model = sequential("nn.Sequential", stem + [
        module("cudnn.ReLU", inplace=True),
        sequential("nn.ConcatTable", [branch, module("nn.Identity")]),
        module("nn.CAddTable", inplace=True),
        module("cudnn.ReLU", inplace=True),
        module("cudnn.SpatialAveragePooling", kW=4, kH=4, dW=1, dH=1, padW=0, padH=0, ceil_mode=False,
               count_include_pad=True),
        module("nn.View", size=Storage(np.array([4]), "torch.LongStorage", "<i8"), numElements=4, numInputDims=3),
        module("nn.Linear", weight=tensor(w), bias=tensor(bias)),
        module("cudnn.SoftMax"),
    ])
    save("residual.t7", model)

    x = uniform(2, 3, 4, 4, scale=1.0)
    y = F.relu(stem_f(t(x)))
    y = F.relu(b_f(F.relu(a_f(y))) + y)
    y = F.avg_pool2d(y, 4, 1).reshape(2, 4)
    y = F.softmax(F.linear(y, t(w), t(bias)), 1)
    expect("residual", x, y)

    def compare(m):
        assert m.modules[3].torch_typename() == b"nn.ConcatTable"
        assert np.array_equal(m.modules[8].weight, w)
    check("residual.t7", compare)


# ---------------------------------------------------------------------------------------------
# shared.t7

def shared():
    w1, b1 = uniform(4, 4), uniform(4)
    b2 = uniform(4)
    first = module("nn.Linear", weight=tensor(w1), bias=tensor(b1))
    second = module("nn.Linear", weight=first.fields["weight"], bias=tensor(b2))
    model = sequential("nn.Sequential", [
        module("nn.Reshape", size=Storage(np.array([4]), "torch.LongStorage", "<i8"), nelement=4,
               batchsize=Storage(np.array([0, 4]), "torch.LongStorage", "<i8")),
        first, module("nn.Tanh"), first, module("nn.Tanh"), second, module("nn.Sigmoid"),
    ])
    save("shared.t7", model)

    x = uniform(3, 4, scale=1.0)
    y = torch.tanh(F.linear(torch.tanh(F.linear(t(x), t(w1), t(b1))), t(w1), t(b1)))
    y = torch.sigmoid(F.linear(y, t(w1), t(b2)))
    expect("shared", x, y)

    def compare(m):
        mods = m.modules
        assert mods[1] is mods[3]
        assert mods[5].weight is mods[1].weight
    check("shared.t7", compare)


# ---------------------------------------------------------------------------------------------
# data-parallel.t7

def data_parallel():
    w, b = uniform(3, 5), uniform(3)

    def replica():
        return sequential("nn.Sequential", [
            module("nn.Linear", weight=tensor(w, "torch.CudaTensor", "torch.CudaStorage"),
                   bias=tensor(b, "torch.CudaTensor", "torch.CudaStorage")),
            module("nn.ReLU", threshold=0, val=0, inplace=False),
        ])

    table = Obj("nn.DataParallelTable", {"modules": [replica(), replica()], "gpuAssignments": [1, 2],
                                         "dimension": 1, "train": False, "usenccl": False}, 3)
    table.fields["impl"] = Obj("nn.DataParallelTable.Basic", {"dpt": table})
    save("data-parallel.t7", table)

    x = uniform(2, 5, scale=1.0)
    expect("data-parallel", x, F.relu(F.linear(t(x), t(w), t(b))))


# ---------------------------------------------------------------------------------------------
# grouped.t7

def grouped():
    # cudnn's grouped convolution without a bias (noBias() drops the field), then a depthwise one.
    w1 = uniform(4, 2, 3, 3)
    w2, b2 = uniform(4, 1, 3, 3), uniform(4)
    model = sequential("nn.Sequential", [
        module("cudnn.SpatialConvolution", weight=tensor(w1), groups=2, **conv_fields(w1, None, 1, 1)),
        module("cudnn.ReLU", inplace=True),
        module("cudnn.SpatialConvolution", weight=tensor(w2), bias=tensor(b2), groups=4, **conv_fields(w2, b2, 1, 0)),
    ])
    model.fields["modules"][0].fields["nInputPlane"] = 4
    model.fields["modules"][2].fields["nInputPlane"] = 4
    save("grouped.t7", model)

    x = uniform(2, 4, 5, 5, scale=1.0)
    y = F.relu(F.conv2d(t(x), t(w1), None, padding=1, groups=2))
    y = F.conv2d(y, t(w2), t(b2), groups=4)
    expect("grouped", x, y)

    def compare(m):
        assert m.modules[0].groups == 2 and m.modules[0].bias is None
    check("grouped.t7", compare)


if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    convnet()
    residual()
    shared()
    data_parallel()
    grouped()
