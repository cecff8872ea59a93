// The products over a convolution's taps on AMX tiles (nn/cpu/AmxTaps.h) against double sums of
// the same bfloat16 operands, on sizes at and past their tiles' edges (m 16 to 48, pairs of 8 and
// 16 a product, columns of 1 to 45, offsets negative and past a block), and the layouts they read:
// pair planes and bfloat16 planes of stride 1 and 2 for every parity of the padding, the phases
// back to planes, pairs along rows. Each checks that nothing past the asked columns is written.
// Skipped, naming why, where AMX does not run here.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "nn/cpu/AmxGemm.h"
#include "nn/cpu/AmxTaps.h"
#include "nn/math/Half.h"
#include "nn/tensor/Error.h"
#include "tests/reference/Bf16Reference.h"
#include "tests/support/Skip.h"

namespace {

using nn::math::bfloat16ToFloat;
using nn::math::floatToBfloat16;

#define REQUIRE_AMX()                                                \
  do {                                                               \
    if (!nn::cpu::amxGemmRuns()) NN_SKIP(nn::cpu::amxGemmMissing()); \
  } while (0)

// A bfloat16 value drawn from [-1, 1]: its products are exact in float32.
uint16_t draw(std::mt19937& random) {
  return floatToBfloat16(std::uniform_real_distribution<float>(-1.f, 1.f)(random));
}
uint32_t drawPair(std::mt19937& random) { return draw(random) | uint32_t{draw(random)} << 16; }
float low(uint32_t pair) { return bfloat16ToFloat(static_cast<uint16_t>(pair & 0xffffu)); }
float high(uint32_t pair) { return bfloat16ToFloat(static_cast<uint16_t>(pair >> 16)); }

// Whether `got` is the double sum `want` of `terms` products of values within 1, as float32 sums
// of them may round: k terms, each sum off by 2^-24 of at most k.
bool near(float got, double want, int64_t terms) {
  return std::fabs(static_cast<double>(got) - want) <= static_cast<double>(terms) * std::ldexp(1.0, -23) + 1e-30;
}

}  // namespace

TEST_CASE("amxTapsProduct sums each tap's pairs of weights and planes, as double sums of them", "[amx]") {
  REQUIRE_AMX();
  std::mt19937 random(11);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t m : {16, 32, 48})
    for (int64_t pairs : {8, 16, 24})
      for (int64_t n : {1, 17, 32, 45})
        for (int64_t taps : {1, 3}) {
          CAPTURE(m, pairs, n, taps);
          // Offsets below the planes' start and past a block of 32 columns.
          const std::vector<int64_t> offsets{-5, 0, 37};
          const int64_t margin = 8, stride = margin + 37 + (n + 31) / 32 * 32 + 3;
          std::vector<uint32_t> a(static_cast<size_t>(taps * m * pairs)), planes(static_cast<size_t>(pairs * stride));
          for (uint32_t& v : a) v = drawPair(random);
          for (uint32_t& v : planes) v = drawPair(random);
          const uint32_t* b = planes.data() + margin;
          const int64_t ldc = n + 3;
          std::vector<float> c(static_cast<size_t>(m * ldc), nan);
          nn::cpu::amxTapsProduct(m, n, pairs, taps, a.data(), b, stride, offsets.data(), c.data(), ldc);
          int64_t wrong = 0;
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
              double want = 0;
              for (int64_t t = 0; t < taps; ++t)
                for (int64_t p = 0; p < pairs; ++p) {
                  const uint32_t w = a[static_cast<size_t>((t * m + i) * pairs + p)];
                  const uint32_t x = b[p * stride + offsets[static_cast<size_t>(t)] + j];
                  want += static_cast<double>(low(w)) * low(x) + static_cast<double>(high(w)) * high(x);
                }
              wrong += near(c[static_cast<size_t>(i * ldc + j)], want, 2 * taps * pairs) ? 0 : 1;
            }
            for (int64_t j = n; j < ldc; ++j) wrong += std::isnan(c[static_cast<size_t>(i * ldc + j)]) ? 0 : 1;
          }
          CHECK(wrong == 0);
        }
}

TEST_CASE("amxTapsGradient adds each tap's products of bfloat16 planes and paired rows", "[amx]") {
  REQUIRE_AMX();
  std::mt19937 random(12);
  for (int64_t rows : {16, 48})
    for (int64_t cols : {16, 32, 48})
      for (int64_t n : {1, 31, 70}) {
        CAPTURE(rows, cols, n);
        const int64_t taps = 2;
        const std::vector<int64_t> offsets{0, 9};
        const int64_t stride = 9 + (n + 31) / 32 * 32 + 5, ldg = n + 4;
        std::vector<uint16_t> a(static_cast<size_t>(rows * stride));
        for (uint16_t& v : a) v = draw(random);
        // The rows paired from floats already bfloat16, and past n anything (pairColumns zeros it).
        std::vector<float> g(static_cast<size_t>(cols * ldg));
        for (int64_t o = 0; o < cols; ++o)
          for (int64_t j = 0; j < ldg; ++j)
            g[static_cast<size_t>(o * ldg + j)] = j < n ? bfloat16ToFloat(draw(random)) : 7.f;
        std::vector<uint32_t> paired(static_cast<size_t>((n + 31) / 32 * 16 * cols), 0xffffffffu);
        nn::cpu::pairColumns(g.data(), ldg, cols, n, paired.data());
        // Sums added to what is there: 0.5 in every place.
        std::vector<float> sums(static_cast<size_t>(taps * rows * cols), 0.5f);
        nn::cpu::amxTapsGradient(rows, cols, n, taps, a.data(), stride, offsets.data(), paired.data(), sums.data());
        int64_t wrong = 0;
        for (int64_t t = 0; t < taps; ++t)
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t o = 0; o < cols; ++o) {
              double want = 0.5;
              for (int64_t j = 0; j < n; ++j)
                want += static_cast<double>(bfloat16ToFloat(a[static_cast<size_t>(i * stride + offsets[t] + j)])) *
                        g[static_cast<size_t>(o * ldg + j)];
              wrong += near(sums[static_cast<size_t>((t * rows + i) * cols + o)], want, n + 1) ? 0 : 1;
            }
        CHECK(wrong == 0);
      }
}

TEST_CASE("pair planes, bfloat16 planes and phases: each pixel where its stride and padding put it", "[amx]") {
  REQUIRE_AMX();
  std::mt19937 random(13);
  const int64_t planes = 4, height = 5, width = 19;
  std::vector<float> in(static_cast<size_t>(planes * height * width));
  for (float& v : in) v = std::uniform_real_distribution<float>(-2.f, 2.f)(random);
  auto at = [&](int64_t c, int64_t y, int64_t x) { return in[static_cast<size_t>((c * height + y) * width + x)]; };
  for (int64_t d : {1, 2})
    for (int64_t pad : {0, 1, 2}) {
      CAPTURE(d, pad);
      const int64_t ld = (width + 2 * pad + d - 1) / d, rowsOfPhase = (height + 2 * pad + d - 1) / d;
      const nn::cpu::PhasePlanes layout{d, pad, pad, rowsOfPhase * ld + 16, ld};
      const int64_t stride = d * d * layout.phaseLanes;
      // Where pixel (y, x) of a plane lies in the layout.
      auto place = [&](int64_t y, int64_t x) {
        const int64_t yp = y + pad, xp = x + pad;
        return ((yp % d) * d + xp % d) * layout.phaseLanes + yp / d * ld + xp / d;
      };
      std::vector<uint32_t> pairsOut(static_cast<size_t>(planes / 2 * stride), 0xdeadbeefu);
      std::vector<uint16_t> bf16Out(static_cast<size_t>(planes * stride), 0xbeefu);
      nn::cpu::pairPlanes(in.data(), planes, height, width, layout, pairsOut.data(), stride);
      nn::cpu::bf16Planes(in.data(), planes, height, width, layout, bf16Out.data(), stride);
      int64_t wrong = 0, written = 0;
      for (int64_t c = 0; c < planes; ++c)
        for (int64_t y = 0; y < height; ++y)
          for (int64_t x = 0; x < width; ++x) {
            const uint16_t rounded = floatToBfloat16(nn::test::bf16(at(c, y, x)));
            const uint32_t pair = pairsOut[static_cast<size_t>(c / 2 * stride + place(y, x))];
            wrong += (c % 2 == 0 ? pair & 0xffffu : pair >> 16) == rounded ? 0 : 1;
            wrong += bf16Out[static_cast<size_t>(c * stride + place(y, x))] == rounded ? 0 : 1;
          }
      // Nothing but the pixels written: every other lane as it was.
      for (const uint16_t v : bf16Out) written += v != 0xbeefu ? 1 : 0;
      CHECK(wrong == 0);
      CHECK(written == planes * height * width);
      // fromPhases reads the layout back: floats placed as the pixels, read into planes.
      std::vector<float> phases(static_cast<size_t>(planes * stride + 16), -1.f);
      for (int64_t c = 0; c < planes; ++c)
        for (int64_t y = 0; y < height; ++y)
          for (int64_t x = 0; x < width; ++x) phases[static_cast<size_t>(c * stride + place(y, x))] = at(c, y, x);
      std::vector<float> back(in.size(), 0.f);
      nn::cpu::fromPhases(phases.data(), stride, layout, planes, height, width, back.data());
      CHECK(back == in);
    }
}

TEST_CASE("the products over the taps refuse sizes their tiles do not take, naming them", "[amx]") {
  REQUIRE_AMX();
  std::vector<uint32_t> lanes(4096, 0);
  std::vector<uint16_t> values(4096, 0);
  std::vector<float> out(4096, 0.f);
  const int64_t offsets[] = {0};
  CHECK_THROWS_WITH(nn::cpu::amxTapsProduct(8, 16, 8, 1, lanes.data(), lanes.data(), 64, offsets, out.data(), 16),
                    Catch::Contains("nn::cpu::amxTapsProduct") && Catch::Contains("m=8"));
  CHECK_THROWS_WITH(nn::cpu::amxTapsProduct(16, 16, 4, 1, lanes.data(), lanes.data(), 64, offsets, out.data(), 16),
                    Catch::Contains("pairs=4"));
  CHECK_THROWS_WITH(nn::cpu::amxTapsGradient(16, 24, 16, 1, values.data(), 64, offsets, lanes.data(), out.data()),
                    Catch::Contains("nn::cpu::amxTapsGradient") && Catch::Contains("cols=24"));
  const nn::cpu::PhasePlanes three{3, 0, 0, 64, 8};
  CHECK_THROWS_WITH(nn::cpu::pairPlanes(out.data(), 2, 2, 2, three, lanes.data(), 256),
                    Catch::Contains("nn::cpu::pairPlanes") && Catch::Contains("stride 3"));
}
