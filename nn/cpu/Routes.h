// Which route of the CPU backend ran each pass of a convolution or a Linear layer, counted for
// the tests: a route's results often equal another route's (the Winograd and the unfolded
// convolution give the same sums to rounding), so only the count tells that the route ran.
#pragma once

#include <cstdint>

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

}  // namespace nn::cpu
