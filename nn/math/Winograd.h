// Winograd's minimal filtering F(2x2, 3x3) (Lavin and Gray, "Fast Algorithms for Convolutional
// Neural Networks", 2016): a 3x3 cross-correlation of stride 1 computes each 2x2 block of its
// output from the 4x4 block of input under it, with 16 products per pair of input and output
// planes where the sums of the taps take 36. Each 4x4 input block d becomes v = B^T d B, each
// kernel g becomes u = G g G^T, the products m = u * v (element by element, summed over the input
// planes) become the output block y = A^T m A, with
//
//   B^T = [1  0 -1  0]    G = [ 1    0    0 ]    A^T = [1  1  1  0]
//         [0  1  1  0]        [1/2  1/2  1/2]          [0  1 -1 -1]
//         [0 -1  1  0]        [1/2 -1/2  1/2]
//         [0  1  0 -1]        [ 0    0    1 ]
//
// In one dimension: y0 = d0 g0 + d1 g1 + d2 g2 = m0 + m1 + m2 and y1 = d1 g0 + d2 g1 + d3 g2 =
// m1 - m2 - m3, where m0 = (d0 - d2) g0, m1 = (d1 + d2)(g0 + g1 + g2)/2, m2 = (d2 - d1)(g0 - g1 +
// g2)/2, m3 = (d1 - d3) g2. The results differ from the sums of the taps only by rounding.
//
// The weight gradient uses the same matrices transposed: the 3x3 kernel's gradient from a 4x4
// input block d and the 2x2 block of gradOutput dy over it is G^T [(A dy A^T) * (B^T d B)] G,
// summed over the blocks (in one dimension dg_j = dy0 d_j + dy1 d_(j+1), as the bilinear form
// of y above, differentiated by g, gives).
//
// T is float, or a vector of floats (GCC's vector extension) that holds one value of each of
// several blocks: the CPU transforms eight blocks at a time.
#pragma once

#include "nn/math/HostDevice.h"

namespace nn::math {

/// u = G g G^T: the 3x3 kernel g (row-major) as the 4x4 u (row-major).
template <typename T>
NN_HD inline void winogradKernel(const T* g, T* u) {
  T t[4][3];
  for (int j = 0; j < 3; ++j) {
    t[0][j] = g[j];
    t[1][j] = 0.5f * (g[j] + g[3 + j] + g[6 + j]);
    t[2][j] = 0.5f * (g[j] - g[3 + j] + g[6 + j]);
    t[3][j] = g[6 + j];
  }
  for (int i = 0; i < 4; ++i) {
    u[4 * i] = t[i][0];
    u[4 * i + 1] = 0.5f * (t[i][0] + t[i][1] + t[i][2]);
    u[4 * i + 2] = 0.5f * (t[i][0] - t[i][1] + t[i][2]);
    u[4 * i + 3] = t[i][2];
  }
}

/// v = B^T d B: the 4x4 input block d (row-major) as the 4x4 v.
template <typename T>
NN_HD inline void winogradInput(const T* d, T* v) {
  T t[4][4];
  for (int j = 0; j < 4; ++j) {
    t[0][j] = d[j] - d[8 + j];
    t[1][j] = d[4 + j] + d[8 + j];
    t[2][j] = d[8 + j] - d[4 + j];
    t[3][j] = d[4 + j] - d[12 + j];
  }
  for (int i = 0; i < 4; ++i) {
    v[4 * i] = t[i][0] - t[i][2];
    v[4 * i + 1] = t[i][1] + t[i][2];
    v[4 * i + 2] = t[i][2] - t[i][1];
    v[4 * i + 3] = t[i][1] - t[i][3];
  }
}

/// y = A^T m A: the 4x4 products m as the 2x2 output block y (row-major).
template <typename T>
NN_HD inline void winogradOutput(const T* m, T* y) {
  T t[2][4];
  for (int j = 0; j < 4; ++j) {
    t[0][j] = m[j] + m[4 + j] + m[8 + j];
    t[1][j] = m[4 + j] - m[8 + j] - m[12 + j];
  }
  for (int i = 0; i < 2; ++i) {
    y[2 * i] = t[i][0] + t[i][1] + t[i][2];
    y[2 * i + 1] = t[i][1] - t[i][2] - t[i][3];
  }
}

/// w = A dy A^T: the 2x2 gradOutput block dy (row-major) as the 4x4 w.
template <typename T>
NN_HD inline void winogradGradOutput(const T* dy, T* w) {
  T t[4][2];
  for (int j = 0; j < 2; ++j) {
    t[0][j] = dy[j];
    t[1][j] = dy[j] + dy[2 + j];
    t[2][j] = dy[j] - dy[2 + j];
    t[3][j] = -dy[2 + j];
  }
  for (int i = 0; i < 4; ++i) {
    w[4 * i] = t[i][0];
    w[4 * i + 1] = t[i][0] + t[i][1];
    w[4 * i + 2] = t[i][0] - t[i][1];
    w[4 * i + 3] = -t[i][1];
  }
}

/// dg = G^T m G: the 4x4 sums of products m as the 3x3 kernel gradient dg (row-major).
template <typename T>
NN_HD inline void winogradKernelGradient(const T* m, T* dg) {
  T t[3][4];
  for (int j = 0; j < 4; ++j) {
    t[0][j] = m[j] + 0.5f * (m[4 + j] + m[8 + j]);
    t[1][j] = 0.5f * (m[4 + j] - m[8 + j]);
    t[2][j] = 0.5f * (m[4 + j] + m[8 + j]) + m[12 + j];
  }
  for (int i = 0; i < 3; ++i) {
    dg[3 * i] = t[i][0] + 0.5f * (t[i][1] + t[i][2]);
    dg[3 * i + 1] = 0.5f * (t[i][1] - t[i][2]);
    dg[3 * i + 2] = 0.5f * (t[i][1] + t[i][2]) + t[i][3];
  }
}

}  // namespace nn::math
