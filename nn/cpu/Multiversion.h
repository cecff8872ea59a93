// widest(f): a hot loop of our own compiled twice, for AVX-512 (x86-64-v4) and for the build's
// baseline (x86-64-v3: AVX2 and FMA, tools/bazel/copts.bzl), run in its AVX-512 form where the
// kernels' level is avx512 (Isa.h, which NN_CPU_ISA lowers), so that the widest vectors of the
// machine serve our loops, not only OpenBLAS's GEMMs. Both forms give the same floats: nothing is
// contracted into a fused multiply-add (-ffp-contract=off, tools/bazel/copts.bzl) and reductions
// add a fixed number of lanes. Compiled once: off x86 and by Clang 14 (the fuzz build).
//
//   void relu(const float* in, float* out, int64_t n) {
//     widest([&]() NN_CPU_INLINE { for (int64_t i = 0; i < n; ++i) out[i] = in[i] > 0 ? in[i] : 0.f; });
//   }
#pragma once

#include "nn/cpu/Isa.h"
#include "nn/cpu/Routes.h"

// NN_CPU_INLINE: the lambda given to widest, and any helper (a function template, a lambda) whose
// loops run inside it. Only widest's AVX-512 instance is compiled for AVX-512: a helper GCC does not
// inline is compiled once, for the baseline, and that instance would call the baseline's copy.
// Always inlined, the helper becomes part of each form.
#if defined(__GNUC__)
#define NN_CPU_INLINE __attribute__((always_inline))
#else
#define NN_CPU_INLINE
#endif

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define NN_CPU_TWO_FORMS 1
#else
#define NN_CPU_TWO_FORMS 0
#endif

namespace nn::cpu {

#if NN_CPU_TWO_FORMS
/// f() compiled for AVX-512: f, inlined, becomes this function's code.
template <typename F>
__attribute__((target("arch=x86-64-v4"))) auto onAvx512(const F& f) {
  return f();
}
#endif

/// f() in its AVX-512 form at the level avx512, else in the baseline's; f is marked NN_CPU_INLINE.
template <typename F>
auto widest(const F& f) {
#if NN_CPU_TWO_FORMS
  if (isaAtLeast(Isa::avx512)) {
    countForm(Isa::avx512);
    return onAvx512(f);
  }
#endif
  countForm(Isa::generic);
  return f();
}

// NN_CPU_FORM(call): returns `call` of the kernels written in an AVX-512 and an AVX2 form
// (namespaces avx512 and avx2): avx512's at the level avx512, else avx2's, the form counted. The
// callers' Fits functions keep every call off CPUs with neither (isa() is generic there).
#if NN_CPU_TWO_FORMS
#define NN_CPU_FORM(call)                                \
  do {                                                   \
    if (::nn::cpu::isaAtLeast(::nn::cpu::Isa::avx512)) { \
      ::nn::cpu::countForm(::nn::cpu::Isa::avx512);      \
      return avx512::call;                               \
    }                                                    \
    ::nn::cpu::countForm(::nn::cpu::Isa::avx2);          \
    return avx2::call;                                   \
  } while (0)
#else
#define NN_CPU_FORM(call)                       \
  do {                                          \
    ::nn::cpu::countForm(::nn::cpu::Isa::avx2); \
    return avx2::call;                          \
  } while (0)
#endif

}  // namespace nn::cpu
