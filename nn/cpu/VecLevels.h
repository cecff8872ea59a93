// Compiles a kernel written once over `Vec` (Vec.h) once for each level of Isa.h, as Highway's
// foreach_target.h does: the source that NN_VEC_SOURCE names is included again in namespace
// nn::cpu::avx512, with Vec = Vec512 and every function compiled for AVX-512 (GCC's target pragma
// gives each function defined under it the attribute), then in nn::cpu::avx2 with Vec = Vec256 at
// the build's baseline (x86-64-v3). NN_VEC_LEVEL names the namespace while it is included, and the
// source's kernel half opens `namespace nn::cpu::NN_VEC_LEVEL`. A kernel file includes this header
// once, after everything the kernels include (a header first included under the pragma would
// compile its inline functions for AVX-512 alone), and calls the level's form with NN_CPU_FORM
// (Multiversion.h).
//
// Functions are compiled without predictive commoning: GCC 12 at -O2 keeps one tap's input values
// in registers for the next tap's overlapping reads, which spills the tiles' accumulators.

#include "nn/cpu/Vec.h"

#if !defined(NN_VEC_SOURCE)
#error "VecLevels.h: define NN_VEC_SOURCE, the file to compile once per level"
#endif

#if NN_VEC512
namespace nn::cpu::avx512 {
using Vec = Vec512;
}
#pragma GCC push_options
#pragma GCC target("avx512f")
#pragma GCC optimize("no-predictive-commoning")
#define NN_VEC_LEVEL avx512
#include NN_VEC_SOURCE
#undef NN_VEC_LEVEL
#pragma GCC pop_options
#endif

#if NN_VEC256
namespace nn::cpu::avx2 {
using Vec = Vec256;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("no-predictive-commoning")
#endif
#define NN_VEC_LEVEL avx2
#include NN_VEC_SOURCE
#undef NN_VEC_LEVEL
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
#endif

#undef NN_VEC_SOURCE
