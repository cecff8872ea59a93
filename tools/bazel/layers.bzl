"""The layers of nn and the arrows between them (ARCHITECTURE.md), in one place.

Each folder of nn/ is one layer, one cc_library made by nn_layer(), whose deps are its entry in
LAYER_DEPS: a file of a layer can include only the headers of the layers below it, and the build
fails on any other include ("undeclared inclusion", or no such file in the sandbox). The CPU
backend (//nn/cpu) is visible to the library (//nn) alone, so no layer can list it either.
tools/check-layers.sh shows both failures with the targets of tests/layering.
"""

load("//tools/bazel:copts.bzl", "NN_COPTS", "NN_GCC_COPTS")

LAYER_DEPS = {
    # The formulas: nothing of the library.
    "math": [],
    # The tensor: what a tensor is (element type, sizes, strides, views), devices, errors.
    "tensor": ["//nn/math"],
    # The backend interface: the kernel tables and backends over tensors, and what a tensor's
    # methods do on its device (TensorMethods.cpp).
    "backend": [
        "//nn/math",
        "//nn/tensor",
    ],
    # The runtime: compute and worker threads, which tell the backends their thread counts.
    "runtime": [
        "//nn/backend",
        "//nn/tensor",
    ],
    # The core: the module contract; modules call the kernels through the interface.
    "core": [
        "//nn/backend",
        "//nn/math",
        "//nn/runtime",
        "//nn/tensor",
    ],
    # The CPU backend implements the interface, on the core's tensors and threads.
    "cpu": [
        "//nn/backend",
        "//nn/core",
        "//nn/math",
    ],
    # The modules, criterions and optimizers call kernels through the interface, never a backend.
    "modules": [
        "//nn/backend",
        "//nn/core",
        "//nn/math",
    ],
    "criterions": [
        "//nn/backend",
        "//nn/core",
    ],
    "optim": [
        "//nn/backend",
        "//nn/core",
        "//nn/math",
    ],
    # Data sets read files into tensors.
    "data": ["//nn/core"],
    # Networks built from the modules, with torchvision's names.
    "models": [
        "//nn/core",
        "//nn/modules",
    ],
    # Files of modules, optimizers' state and data: above the layers whose state they hold.
    "io": [
        "//nn/core",
        "//nn/data",
        "//nn/math",
        "//nn/optim",
    ],
}

def nn_layer(name, srcs = None, hdrs = None, extra_deps = [], linkopts = [], visibility = ["//visibility:public"]):
    """The cc_library of the layer `name` (its folder's .cpp and .h files by default) and the
    filegroup `headers` of its headers, for tools/install.sh. Every layer is linked whole: modules,
    criterions and backends register themselves at static initialisation."""
    native.cc_library(
        name = name,
        srcs = native.glob(["*.cpp"]) if srcs == None else srcs,
        hdrs = native.glob(["*.h"]) if hdrs == None else hdrs,
        copts = NN_COPTS + NN_GCC_COPTS,
        linkopts = linkopts,
        alwayslink = 1,
        visibility = visibility,
        deps = LAYER_DEPS[name] + extra_deps,
    )
    native.filegroup(
        name = "headers",
        srcs = native.glob(["*.h"]),
        visibility = ["//nn:__pkg__"],
    )
