"""The tests of one layer: one cc_test per *_test.cpp of the calling package.

Each folder of tests/ holds the tests of one layer of the library (ARCHITECTURE.md) and lists
that layer among its deps, beside //tests/support (Catch2's main, the test-case counter, one body
on every device type, the gradient checker), which links the library and both backends so that
a test body runs on every device type there is. tools/check-layers.sh checks that a folder's
tests include only headers of their layer and the layers below it.
"""

load("//tools/bazel:copts.bzl", "NN_COPTS", "NN_GCC_COPTS")
load("//tools/bazel:cuda.bzl", "HAS_CUDA")

def nn_tests(deps, extra_deps = {}, extra_data = {}, large = [], threaded = [], cuda_build_only = [], linked_as_programs = []):
    """One cc_test per *_test.cpp here, named for its file.

    Args:
      deps: the layer the tests test (and what all of them need beyond //tests/support).
      extra_deps: file -> libraries that one test needs beyond `deps`.
      extra_data: file -> files that one test reads.
      large: files whose tests train an example for a few epochs: Bazel's long time limit.
      threaded: files whose tests run threads, tagged "threads": ThreadSanitizer's run
        (.ci/run) takes these alone.
      cuda_build_only: files that need the CUDA toolkit, left out of the CPU build.
      linked_as_programs: files linked as a program is (linkstatic), where the order of the
        library's static constructors matters (nn/cpu/Isa.cpp's check runs first).
    """
    for src in native.glob(["*_test.cpp"], exclude = [] if HAS_CUDA else cuda_build_only):
        native.cc_test(
            name = src[:-len(".cpp")],
            size = "large" if src in large else "medium",
            srcs = [src],
            tags = ["threads"] if src in threaded else [],
            data = extra_data.get(src, []),
            copts = NN_COPTS + NN_GCC_COPTS,
            linkstatic = src in linked_as_programs,
            deps = ["//tests/support"] + deps + extra_deps.get(src, []),
        )
