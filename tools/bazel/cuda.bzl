"""cuda_library: a native cc_library whose .cu sources nvcc compiles, one action per file.

The .cu objects join the library's .cpp files in a plain cc_library, so everything downstream
is ordinary Bazel C++. Host code inside a .cu is compiled by the C++ toolchain's own compiler
(-ccbin) with the project's flags (NN_COPTS: -O2, the instruction set, warnings) and the --copt
flags, as the project's .cpp files are.
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")
load("@cuda//:defs.bzl", "CUDA_FOUND", "NVCC")
load("//tools/bazel:copts.bzl", "NN_COPTS", "NN_GCC_COPTS")

# The toolkit of the @cuda repository (tools/bazel/cuda_configure.bzl). nvcc runs from there,
# not through Bazel's symlinks: it finds cicc, ptxas and its headers relative to its own location.
_NVCC = NVCC

# Whether this build has the CUDA backend: BUILD files choose CUDA-only targets with it.
HAS_CUDA = CUDA_FOUND

# Machine code for Turing, Ampere and Hopper, and PTX of the newest, which the driver
# compiles for later GPUs.
_GENCODE = [
    "arch=compute_75,code=sm_75",
    "arch=compute_80,code=sm_80",
    "arch=compute_90,code=[sm_90,compute_90]",
]

_NVCC_FLAGS = [
    "-std=c++17",
    # No --use_fast_math, and no contraction of a * b + c into one fused multiply-add: a
    # fused result is rounded once where the CPU rounds twice, so the same NN_HD formula
    # would give different floats on the two devices (the CPU side is built with
    # -ffp-contract=off for the same reason, see copts.bzl). Division and sqrt stay
    # IEEE-rounded (nvcc's defaults -prec-div=true -prec-sqrt=true without fast-math).
    "--fmad=false",
    "-Werror",
    "all-warnings",
]

def _objects_impl(ctx):
    cc_toolchain = find_cpp_toolchain(ctx)
    context = cc_common.merge_cc_infos(cc_infos = [d[CcInfo] for d in ctx.attr.deps]).compilation_context
    host_flags = [
        f
        for f in ["-fPIC"] + ctx.attr.nn_copts + ctx.fragments.cpp.copts + ctx.fragments.cpp.cxxopts + ctx.attr.copts
        if not f.startswith("-std=")  # nvcc passes its own -std to the host compiler
    ]

    # nvcc splits -Xcompiler values at commas, which would break "-fsanitize=address,undefined";
    # the sanitizers instrument the .cpp files, and the .cu files (kernels and their launchers)
    # are compiled without them.
    host_flags = [f for f in host_flags if not f.startswith("-fsanitize") and not f.startswith("-fno-sanitize")]
    inputs = depset(ctx.files.srcs + ctx.files.hdrs, transitive = [context.headers, cc_toolchain.all_files])
    objects = []
    for src in ctx.files.srcs:
        name = src.basename[:-len(".cu")]
        obj = ctx.actions.declare_file("_objs/%s/%s.o" % (ctx.label.name, name))
        args = ctx.actions.args()
        args.add("-ccbin", cc_toolchain.compiler_executable)
        args.add_all(_NVCC_FLAGS)
        for flag in host_flags:
            args.add("-Xcompiler", flag)
        for code in _GENCODE:
            args.add("-gencode", code)
        args.add_all(context.defines, format_each = "-D%s")
        args.add_all(context.local_defines, format_each = "-D%s")
        args.add_all(context.includes, format_each = "-I%s")
        args.add_all(context.quote_includes, format_each = "-I%s")
        args.add_all(context.system_includes, before_each = "-isystem")
        args.add("-c", src)
        args.add("-o", obj)
        ctx.actions.run(
            executable = _NVCC,
            arguments = [args],
            inputs = inputs,
            outputs = [obj],
            mnemonic = "CudaCompile",
            progress_message = "Compiling CUDA %s" % src.short_path,
            use_default_shell_env = True,
        )
        objects.append(obj)
    return [DefaultInfo(files = depset(objects))]

_cuda_objects = rule(
    implementation = _objects_impl,
    attrs = {
        "srcs": attr.label_list(allow_files = [".cu"]),
        "hdrs": attr.label_list(allow_files = [".h", ".cuh"]),
        "deps": attr.label_list(providers = [CcInfo]),
        "copts": attr.string_list(),
        # NN_COPTS, given by cuda_library: its instruction set is a select() by the target CPU.
        "nn_copts": attr.string_list(),
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
    },
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
)

_CUDA_LIBRARIES = [
    "@cuda//:cudart",
    "@cuda//:cublas",
    "@cuda//:cudnn",
    "@cuda//:nccl",
]

def cuda_library(name, srcs, hdrs = [], deps = [], copts = [], **kwargs):
    """A cc_library of .cu and .cpp files, linked with the CUDA libraries.

    Both kinds of source are compiled with NN_COPTS (warnings are errors). In a build without
    a CUDA toolkit (HAS_CUDA false) it defines nothing: depend on it only under HAS_CUDA.

    Args:
      name: the cc_library's name.
      srcs: .cu files (nvcc, one action each) and .cpp files (the C++ toolchain, as in any
        cc_library); the .cpp files may include CUDA headers but not launch kernels.
      hdrs: headers of this library, seen by both kinds of source and by dependents.
      deps: C++ libraries this one uses; the CUDA libraries are added.
      copts: extra flags for the host compiler, for both kinds of source.
      **kwargs: passed to cc_library (visibility, testonly, alwayslink, ...).
    """
    if not HAS_CUDA:
        return
    cu_srcs = [s for s in srcs if s.endswith(".cu")]
    _cuda_objects(
        name = name + "_cu",
        srcs = cu_srcs,
        hdrs = hdrs,
        deps = deps + _CUDA_LIBRARIES,
        copts = copts,
        nn_copts = NN_COPTS,
        testonly = kwargs.get("testonly", False),
        visibility = ["//visibility:private"],
    )
    native.cc_library(
        name = name,
        srcs = [s for s in srcs if not s.endswith(".cu")] + [":" + name + "_cu"],
        hdrs = hdrs,
        copts = NN_COPTS + NN_GCC_COPTS + copts,
        deps = deps + _CUDA_LIBRARIES,
        **kwargs
    )
