"""mpi_configure: the @mpi repository, made from the MPI this machine has, or empty.

Looks for Open MPI's compiler wrapper (mpicxx: $MPI_HOME/bin, else PATH) and asks it for its
include folders, library folders and libraries (--showme:incdirs, :libdirs, :libs). Where found,
@mpi//:mpi is a cc_library of its headers and libraries and @mpi//:defs.bzl says
MPI_FOUND = True; otherwise MPI_FOUND = False, and nn::ProcessGroup::world() is an nn::Error
that says how to get MPI (nn/distributed). NN_MPI=0 leaves MPI out where it is installed.
@mpi//:summary.txt says which it is.
"""

def _write_without(ctx, reason):
    ctx.file("BUILD", "# No MPI. See summary.txt.\nexports_files([\"summary.txt\"])\n")
    ctx.file("defs.bzl", "MPI_FOUND = False\n")
    ctx.file("summary.txt", "without MPI: " + reason + "\n")

def _showme(ctx, mpicxx, what):
    result = ctx.execute([mpicxx, "--showme:" + what])
    if result.return_code != 0:
        return None
    return [w for w in result.stdout.strip().replace("\n", " ").split(" ") if w]

def _mpi_configure_impl(ctx):
    env = ctx.os.environ
    if env.get("NN_MPI", "") == "0":
        _write_without(ctx, "NN_MPI=0 asks for it")
        return
    mpicxx = None
    if env.get("MPI_HOME") and ctx.path(env["MPI_HOME"] + "/bin/mpicxx").exists:
        mpicxx = ctx.path(env["MPI_HOME"] + "/bin/mpicxx")
    if mpicxx == None:
        mpicxx = ctx.which("mpicxx")
    if mpicxx == None:
        _write_without(ctx, "no mpicxx found (Debian: openmpi-bin and libopenmpi-dev; or set MPI_HOME)")
        return
    incdirs = _showme(ctx, mpicxx, "incdirs")
    libdirs = _showme(ctx, mpicxx, "libdirs")
    libs = _showme(ctx, mpicxx, "libs")
    if incdirs == None or libdirs == None or libs == None:
        _write_without(ctx, str(mpicxx) + " does not answer --showme (not Open MPI?)")
        return
    header_dir = None
    for d in incdirs:
        if ctx.path(d + "/mpi.h").exists:
            header_dir = d
    if header_dir == None:
        _write_without(ctx, "no mpi.h in " + " ".join(incdirs))
        return

    # The C API's headers only (mpi.h and what it includes), not the whole folder.
    for entry in ctx.path(header_dir).readdir():
        if entry.basename.endswith(".h"):
            ctx.symlink(entry, "include/" + entry.basename)
    linkopts = []
    for d in libdirs:
        linkopts += ["-L" + d, "-Wl,-rpath," + d]

    # The C library alone: the C++ bindings (mpi_cxx) are deprecated and unused.
    linkopts += ["-l" + lib for lib in libs if lib != "mpi_cxx"]
    ctx.file("BUILD", """# MPI from {mpicxx} (tools/bazel/mpi_configure.bzl).
package(default_visibility = ["//visibility:public"])

exports_files(["summary.txt"])

cc_library(
    name = "mpi",
    hdrs = glob(["include/*.h"]),
    includes = ["include"],
    # The C API: mpi.h would bring the deprecated C++ bindings into every C++ file.
    defines = ["OMPI_SKIP_MPICXX"],
    linkopts = {linkopts},
)
""".format(mpicxx = mpicxx, linkopts = repr(linkopts)))
    ctx.file("defs.bzl", "MPI_FOUND = True\n")
    ctx.file("summary.txt", "with MPI: " + str(mpicxx) + ", headers " + header_dir + "\n")

mpi_configure = repository_rule(
    implementation = _mpi_configure_impl,
    environ = ["MPI_HOME", "NN_MPI", "PATH"],
    local = True,
    configure = True,
)
