// Numerics checks: when on, containers stop at the first NaN or Inf a child produces and name
// the child, its place and the pass (forward, backward, accGradParameters).
#pragma once

#include <string>

#include "nn/core/Activity.h"
#include "nn/tensor/Tensor.h"

namespace nn {

class Module;

/// Turns the checks on or off for the whole process (off by default: they read every output).
void setCheckNumerics(bool on);
/// Whether the checks are on (setCheckNumerics); containers read it before each child's pass.
bool checkNumericsEnabled();

/// Throws an nn::Error "`module`: `pass` produced NaN at element i of `what` [sizes]" (or Inf)
/// if `t` holds a NaN or an infinity; i counts the elements in row-major order.
void checkFinite(const Tensor& t, const Module& module, const char* pass, const char* what);
/// checkFinite on every tensor of a table.
void checkFinite(const Activity& a, const Module& module, const char* pass, const char* what);
/// checkFinite on each of the module's parameter gradients, after accGradParameters.
void checkFiniteGradients(Module& module);

}  // namespace nn
