#!/usr/bin/env python3
"""Checks that each test builds against its own layer (ARCHITECTURE.md, Tests).

Bazel 4 gives a compilation every header of its dependencies' dependencies, so a test in
tests/modules/ that depends on //tests/support (which links the whole library) could include any
header of the library. This checks what the build cannot: each project header a test's sources
include ("nn/...", "cunn/...") must be a header of the targets the test lists beside
//tests/support (its layer, and the extra libraries its folder's BUILD names for it) or of what
those reach. Prints each include that is not, naming the test; exits 1 if there is any.
Run from the repository root (tools/check-layers.sh runs it); extra arguments go to bazel query.
"""
import re
import subprocess
import sys

SUPPORT = "//tests/support:support"
INCLUDE = re.compile(r'^\s*#\s*include\s+"((?:nn|cunn)/[^"]+)"', re.M)


def query(expression):
    out = subprocess.run(["bazel", "query", *sys.argv[1:], expression, "--output=label"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"tools/check-test-layers.py: bazel query {expression!r} failed:\n{out.stderr}")
    return [line for line in out.stdout.split("\n") if line]


def path_of(label):
    """//nn/modules:Linear.h -> nn/modules/Linear.h (this workspace's files only)."""
    if not label.startswith("//"):
        return None
    package, _, name = label[2:].partition(":")
    return f"{package}/{name}" if package else name


def main():
    tests = query('kind("cc_test|cc_binary", //tests/...) except //tests/fuzz/...')
    allowed_by_deps = {}
    problems = []
    for test in tests:
        deps = tuple(sorted(d for d in query(f"labels(deps, {test})") if d != SUPPORT))
        if deps not in allowed_by_deps:
            headers = query(f"labels(hdrs, deps(set({' '.join(deps)})))") if deps else []
            allowed_by_deps[deps] = {path_of(h) for h in headers}
        allowed = allowed_by_deps[deps]
        for src in query(f"labels(srcs, {test})"):
            path = path_of(src)
            if path is None or not path.endswith((".cpp", ".h", ".cu")):
                continue
            with open(path, encoding="utf-8") as f:
                for header in INCLUDE.findall(f.read()):
                    if header not in allowed:
                        problems.append(f"{test}: {path} includes {header}, which none of "
                                        f"{', '.join(deps) or 'its deps'} reaches (add the layer to its BUILD)")
    for p in problems:
        print(f"test layers: {p}")
    print(f"test layers: {len(tests)} tests and programs, {len(problems)} includes outside their deps")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
