"""cuda_configure: the @cuda repository, made from the CUDA toolkit this machine has, or empty.

Looks for nvcc, the CUDA runtime, cuBLAS, cuDNN and NCCL: the toolkit at $CUDA_PATH, else
$CUDA_HOME, else /usr/local/cuda, else the folder above the nvcc on PATH; cuDNN and NCCL inside
the toolkit or where Debian's and NVIDIA's packages put them (/usr/include, /usr/lib/x86_64-linux-gnu).
Where all are found, @cuda holds their headers and one cc_library per library, and
@cuda//:defs.bzl says CUDA_FOUND = True; otherwise CUDA_FOUND = False and the build is the CPU
build (nn/cuda is left out). NN_CUDA=0 (--config=cpu) asks for the CPU build on a machine with
a toolkit. @cuda//:summary.txt says which build this is, and why.
"""

_SYSTEM_INCLUDES = ["/usr/include", "/usr/include/x86_64-linux-gnu"]
_SYSTEM_LIBS = ["/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"]

def _first_with(ctx, folders, name):
    for folder in folders:
        if ctx.path(folder + "/" + name).exists:
            return folder
    return None

def _toolkit_root(ctx):
    env = ctx.os.environ
    for key in ["CUDA_PATH", "CUDA_HOME"]:
        if env.get(key):
            return env[key]
    if ctx.path("/usr/local/cuda/bin/nvcc").exists:
        return "/usr/local/cuda"
    nvcc = ctx.which("nvcc")
    if nvcc:
        return str(nvcc.dirname.dirname)
    return "/usr/local/cuda"

def _write_cpu_build(ctx, reason):
    ctx.file("BUILD", "# No CUDA toolkit: the CPU build. See summary.txt.\nexports_files([\"summary.txt\"])\n")
    ctx.file("defs.bzl", "CUDA_FOUND = False\nNVCC = \"\"\n")
    ctx.file("summary.txt", "CPU build (no CUDA backend): " + reason + "\n")

def _cuda_configure_impl(ctx):
    if ctx.os.environ.get("NN_CUDA", "") == "0":
        _write_cpu_build(ctx, "NN_CUDA=0 asks for it")
        return
    root = _toolkit_root(ctx)
    if not ctx.path(root + "/bin/nvcc").exists:
        _write_cpu_build(ctx, "no CUDA toolkit found (no nvcc at " + root + "/bin; set CUDA_PATH to its folder)")
        return
    toolkit_libs = [root + "/lib64", root + "/lib", root + "/targets/x86_64-linux/lib"]
    includes = [root + "/include"] + _SYSTEM_INCLUDES
    libs = toolkit_libs + _SYSTEM_LIBS
    wanted = [
        ("cudart", "cuda_runtime_api.h"),
        ("cublas", "cublas_v2.h"),
        ("cudnn", "cudnn.h"),
        ("nccl", "nccl.h"),
    ]
    header_dirs = {}
    lib_dirs = {}
    missing = []
    for lib, header in wanted:
        header_dir = _first_with(ctx, includes, header)
        lib_dir = _first_with(ctx, libs, "lib" + lib + ".so")
        if header_dir == None:
            missing.append(header)
        if lib_dir == None:
            missing.append("lib" + lib + ".so")
        header_dirs[lib] = header_dir
        lib_dirs[lib] = lib_dir
    if missing:
        _write_cpu_build(ctx, "the CUDA toolkit at " + root + " lacks " + ", ".join(missing))
        return

    ctx.symlink(root + "/include", "include")

    # cuDNN's and NCCL's headers from outside the toolkit, one by one: the whole system include
    # folder would be too much for Bazel to track.
    for lib, prefix in [("cudnn", "cudnn"), ("nccl", "nccl")]:
        if header_dirs[lib] == root + "/include":
            continue
        for entry in ctx.path(header_dirs[lib]).readdir():
            if entry.basename.startswith(prefix) and entry.basename.endswith(".h"):
                ctx.symlink(entry, "extra_include/" + entry.basename)

    rules = []
    for lib, _ in wanted:
        d = lib_dirs[lib]
        rules.append("""cc_library(
    name = "{lib}",
    linkopts = ["-L{d}", "-Wl,-rpath,{d}", "-l{lib}"],
    deps = [":headers"],
)
""".format(lib = lib, d = d))
    ctx.file("BUILD", """# The CUDA toolkit at {root} (tools/bazel/cuda_configure.bzl).
package(default_visibility = ["//visibility:public"])

exports_files(["summary.txt"])

cc_library(
    name = "headers",
    hdrs = glob(["include/**", "extra_include/**"]),
    includes = ["include", "include/cccl", "extra_include"],
)

""".format(root = root) + "\n".join(rules))
    ctx.file("defs.bzl", "CUDA_FOUND = True\nNVCC = \"{}\"\n".format(root + "/bin/nvcc"))
    ctx.file("summary.txt", "CUDA build: the CUDA backend is built from the toolkit at " + root + "\n")

cuda_configure = repository_rule(
    implementation = _cuda_configure_impl,
    environ = ["CUDA_PATH", "CUDA_HOME", "NN_CUDA", "PATH"],
    local = True,
    configure = True,
)
