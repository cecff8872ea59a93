// Which route of the CPU backend ran each pass of a convolution or a Linear layer, counted for
// the tests: a route's results often equal another route's (the Winograd and the unfolded
// convolution give the same sums to rounding), so only the count tells that the route ran.
#pragma once

#include <cstdint>

#include "nn/cpu/Isa.h"

namespace nn::cpu {

enum class Route {
  convolutionUnfolded,  // im2col + OpenBLAS
  convolutionWinograd,  // WinogradConvolution.h
  convolutionDirect,    // DirectConvolution.h
  convolutionShallow,   // ShallowConvolution.h
  linearBlas,           // OpenBLAS
  linearDirect,         // DirectLinear.h, the tiles
  linearNarrow,         // DirectLinear.h, 16 outputs or fewer
};
constexpr int kRoutes = 7;

enum class Pass { forward, gradInput, gradParameters };
constexpr int kPasses = 3;

/// Counts one pass of `route` (a relaxed atomic increment).
void countRoute(Route route, Pass pass);
/// The passes of `route` counted since the program started.
int64_t routeCount(Route route, Pass pass);

/// Counts one call of a kernel's form (Multiversion.h): widest() counts avx512 for its AVX-512
/// form and generic for the baseline's; the kernels written per level (NN_CPU_FORM) avx512 or
/// avx2. Forms give the same floats, so only the count tells which ran.
void countForm(Isa form);
/// The calls of `form` counted since the program started.
int64_t formCount(Isa form);

}  // namespace nn::cpu
