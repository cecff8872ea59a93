"""nn_deps: the repositories the library needs, declared by this project's WORKSPACE and by any
workspace that uses the library from outside:

    local_repository(name = "nn", path = "/path/to/this/repo")
    load("@nn//tools/bazel:deps.bzl", "nn_deps")
    nn_deps()

They are the offline stand-ins for the three repositories Bazel 4 would download (rules_cc,
rules_java, remote_coverage_tools; see their folders here), @cuda, the CUDA toolkit or an
empty CPU build (cuda_configure.bzl), and @mpi, MPI for multi-process training or nothing
(mpi_configure.bzl). The library's BUILD files refer to @cuda and @mpi by those names.
.bazelignore keeps the stand-ins' folders out of this workspace's own packages.
"""

load(":cuda_configure.bzl", "cuda_configure")
load(":mpi_configure.bzl", "mpi_configure")

def _stand_in_impl(ctx):
    # A label in a .bzl file names this file's repository, so the folder is found whether this
    # project is the main workspace or an external repository of any name. local_repository
    # would not do: its path is relative to the main workspace.
    folder = ctx.path(Label("//tools/bazel:BUILD")).dirname.get_child(ctx.attr.folder)
    for entry in folder.readdir():
        ctx.symlink(entry, entry.basename)

# A repository made of a folder of this one, linked entry by entry as local_repository does.
_stand_in = repository_rule(
    implementation = _stand_in_impl,
    attrs = {"folder": attr.string(mandatory = True)},
    local = True,
)

def nn_deps():
    """Declares @rules_cc, @rules_java, @remote_coverage_tools (unless declared before), @cuda and @mpi."""

    # Declared before Bazel's own WORKSPACE suffix, they keep it from downloading them. A
    # workspace that brings the real ones first keeps those.
    for name in ["rules_cc", "rules_java", "remote_coverage_tools"]:
        if not native.existing_rule(name):
            _stand_in(name = name, folder = name)

    # The CUDA toolkit where this machine has one, else an empty @cuda and a CPU build.
    cuda_configure(name = "cuda")

    # MPI where this machine has it (Open MPI's mpicxx), else an empty @mpi: multi-process
    # training (nn/distributed) then says how to get it.
    mpi_configure(name = "mpi")
