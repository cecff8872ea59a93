"""Compiler options for the project's own code: warnings are errors."""

NN_COPTS = [
    "-Wall",
    "-Wextra",
    "-Werror",
]
