// The unfolded route of a convolution on CUDA (nn/cuda/UnfoldedConvolution.h): an im2col
// kernel, cuBLAS products, and a col2im kernel in which each input cell gathers its taps.
#include "nn/cuda/UnfoldedConvolution.h"

#include <atomic>

#include "nn/cuda/Check.h"
#include "nn/cuda/CudaBackend.h"
#include "nn/cuda/Gemm.h"
#include "nn/cuda/Launch.h"
#include "nn/math/Im2Col.h"

namespace nn::cuda {

namespace {

std::atomic<bool> gForced{false};
std::atomic<int64_t> gPasses{0};

constexpr const char* kWho = "nn.SpatialConvolution (unfolded)";

// Rows of the column matrix (input plane, kernel row, kernel column) and its columns (output
// positions).
NN_HD int64_t columnRows(const ConvolutionShape& s) { return s.inPlanes * s.kH * s.kW; }
NN_HD int64_t positions(const ConvolutionShape& s) { return s.outHeight * s.outWidth; }
// A group's rows of the column matrix (the length of its filters, the weight's rows) and its
// output planes: group g multiplies its own block of rows by its own filters (PyTorch's groups).
int64_t groupRows(const ConvolutionShape& s) { return columnRows(s) / s.groups; }
int64_t groupPlanes(const ConvolutionShape& s) { return s.outPlanes / s.groups; }

// columns[row(c, ky, kx)][oy * outWidth + ox] = the input cell that tap reads there, 0 in the
// padding.
__global__ void im2colKernel(ConvolutionShape s, const float* input, float* columns) {
  const int64_t cells = columnRows(s) * positions(s);
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < cells; e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t row = e / positions(s), p = e % positions(s);
    const int64_t c = row / (s.kH * s.kW), ky = row / s.kW % s.kH, kx = row % s.kW;
    const int64_t y = math::convInputCoord(p / s.outWidth, ky * s.dilH, s.dH, s.padH);
    const int64_t x = math::convInputCoord(p % s.outWidth, kx * s.dilW, s.dW, s.padW);
    const bool inside = y >= 0 && y < s.height && x >= 0 && x < s.width;
    columns[e] = inside ? input[(c * s.height + y) * s.width + x] : 0.f;
  }
}

// gradInput[c][y][x] = the sum of the column entries that read cell (c, y, x), over the taps
// (ky, kx) in row-major order: one thread a cell, so each sum has one order and no atomics.
__global__ void col2imKernel(ConvolutionShape s, const float* columns, float* gradInput) {
  const int64_t cells = s.inPlanes * s.height * s.width;
  for (int64_t e = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; e < cells; e += int64_t{gridDim.x} * blockDim.x) {
    const int64_t c = e / (s.height * s.width), y = e / s.width % s.height, x = e % s.width;
    float sum = 0.f;
    for (int64_t ky = 0; ky < s.kH; ++ky) {
      const int64_t rowSpan = y + s.padH - ky * s.dilH;  // oy * dH where this tap reads row y
      if (rowSpan < 0 || rowSpan % s.dH != 0 || rowSpan / s.dH >= s.outHeight) continue;
      for (int64_t kx = 0; kx < s.kW; ++kx) {
        const int64_t colSpan = x + s.padW - kx * s.dilW;
        if (colSpan < 0 || colSpan % s.dW != 0 || colSpan / s.dW >= s.outWidth) continue;
        const int64_t row = math::im2colRow(c, ky, kx, s.kH, s.kW);
        sum += columns[row * positions(s) + rowSpan / s.dH * s.outWidth + colSpan / s.dW];
      }
    }
    gradInput[e] = sum;
  }
}

cudaStream_t streamOf(const Device& device) { return CudaBackend::instance().stream(device.index()); }

void unfold(const Device& device, const ConvolutionShape& s, const float* sample, float* columns) {
  im2colKernel<<<blocksFor(static_cast<size_t>(columnRows(s) * positions(s))), kThreads, 0, streamOf(device)>>>(
      s, sample, columns);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

int64_t unfoldedWorkspaceFloats(const ConvolutionShape& s) { return columnRows(s) * positions(s); }

void unfoldedOutput(const Device& device, const ConvolutionShape& s, const float* input, const float* weight,
                    float* output, float* columns) {
  ++gPasses;
  const int64_t rows = groupRows(s), planes = groupPlanes(s), p = positions(s);
  for (int64_t n = 0; n < s.batch; ++n) {
    unfold(device, s, input + n * s.inPlanes * s.height * s.width, columns);
    // output_n [outPlanes, p] = weight [outPlanes, rows] x columns [rows, p], group by group
    for (int64_t g = 0; g < s.groups; ++g)
      gemm(device, false, false, planes, p, rows, 1.f, weight + g * planes * rows, rows, columns + g * rows * p, p,
           0.f, output + (n * s.outPlanes + g * planes) * p, p, kWho);
  }
}

void unfoldedGradInput(const Device& device, const ConvolutionShape& s, const float* gradOutput, const float* weight,
                       float* gradInput, float* columns) {
  ++gPasses;
  const int64_t rows = groupRows(s), planes = groupPlanes(s), p = positions(s);
  const int64_t cells = s.inPlanes * s.height * s.width;
  for (int64_t n = 0; n < s.batch; ++n) {
    // columns [rows, p] = weight^T [rows, outPlanes] x gradOutput_n [outPlanes, p], group by group
    for (int64_t g = 0; g < s.groups; ++g)
      gemm(device, true, false, rows, p, planes, 1.f, weight + g * planes * rows, rows,
           gradOutput + (n * s.outPlanes + g * planes) * p, p, 0.f, columns + g * rows * p, p, kWho);
    col2imKernel<<<blocksFor(static_cast<size_t>(cells)), kThreads, 0, streamOf(device)>>>(s, columns,
                                                                                           gradInput + n * cells);
    CUDA_CHECK(cudaGetLastError());
  }
}

void unfoldedGradWeight(const Device& device, const ConvolutionShape& s, const float* input, const float* gradOutput,
                        float* gradWeight, float scale, float* columns) {
  ++gPasses;
  const int64_t rows = groupRows(s), planes = groupPlanes(s), p = positions(s);
  for (int64_t n = 0; n < s.batch; ++n) {
    unfold(device, s, input + n * s.inPlanes * s.height * s.width, columns);
    // gradWeight [outPlanes, rows] += scale gradOutput_n [outPlanes, p] x columns^T [p, rows], group by group
    for (int64_t g = 0; g < s.groups; ++g)
      gemm(device, false, true, planes, rows, p, scale, gradOutput + (n * s.outPlanes + g * planes) * p, p,
           columns + g * rows * p, p, 1.f, gradWeight + g * planes * rows, rows, kWho);
  }
}

void forceUnfoldedConvolutions(bool force) { gForced = force; }
bool unfoldedConvolutionsForced() { return gForced; }
int64_t unfoldedConvolutionPasses() { return gPasses.load(); }

}  // namespace nn::cuda
