// The CUDA table of nn::ConvolutionKernels through cuDNN's convolutions (the legacy API of
// cudnn_cnn.h). For each device and shape a Plan is made once: the descriptors and the
// algorithm of each direction. A steady step then makes one or two cuDNN calls per entry, on
// the device's handle and stream, with the workspace in the module's tensor (so it comes from
// the caching allocator). Part of CudaBackend (nn/cuda/Tables.h).
//
// Note [Reproducible convolutions]
// The results must be the same from run to run and must not depend on the GPU generation:
//  - float32 math on the FMA units (CUDNN_FMA_MATH): CUDNN_DEFAULT_MATH lets Ampere and later
//    GPUs round the inputs to TF32 on tensor cores. At the float32 matmul precisions high and
//    medium (nn/runtime/MatmulPrecision.h) the descriptor has CUDNN_DEFAULT_MATH, as PyTorch's
//    cudnn.allow_tf32 gives it, and the results then depend on the GPU generation; the algorithms
//    stay those of the descriptor's math (never those ranked for CUDNN_TENSOR_OP_MATH, which the
//    descriptor would have to name);
//  - only algorithms that cuDNN reports deterministic (none whose atomic adds vary in order);
//  - chosen by cuDNN's heuristics (cudnnGet*Algorithm_v7), which depend on the shape and the
//    GPU only, not by timing runs (cudnnFind*), whose winner can change from one run to the next;
//  - only algorithms that sum the products themselves (the GEMM and direct ones), not the FFT
//    and Winograd transforms, so that the results differ from the CPU's only in the order of
//    each sum, which bounds the difference (tests/modules/convolution_test.cpp);
//  - where cuDNN offers no such algorithm for a direction of a shape (dilated and transposed
//    convolutions' backward are the likeliest), that direction takes the unfolded route
//    (nn/cuda/UnfoldedConvolution.h: im2col and cuBLAS, likewise deterministic) instead.
#include <algorithm>
#include <array>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>

#include "nn/cuda/Check.h"
#include "nn/cuda/CudaBackend.h"
#include "nn/cuda/DeviceGuard.h"
#include "nn/cuda/Tables.h"
#include "nn/cuda/UnfoldedConvolution.h"
#include "nn/runtime/Autocast.h"
#include "nn/runtime/MatmulPrecision.h"
#include "nn/tensor/Error.h"

namespace nn {

namespace {

// The algorithms that sum the products themselves (Note [Reproducible convolutions]). ALGO_0
// and ALGO_3 of the backward directions add with atomics; cuDNN reports them non-deterministic,
// and choose() passes them over for that.
constexpr cudnnConvolutionFwdAlgo_t kForwardAlgorithms[] = {
    CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
    CUDNN_CONVOLUTION_FWD_ALGO_GEMM, CUDNN_CONVOLUTION_FWD_ALGO_DIRECT};
constexpr cudnnConvolutionBwdDataAlgo_t kBackwardDataAlgorithms[] = {CUDNN_CONVOLUTION_BWD_DATA_ALGO_0,
                                                                     CUDNN_CONVOLUTION_BWD_DATA_ALGO_1};
constexpr cudnnConvolutionBwdFilterAlgo_t kBackwardFilterAlgorithms[] = {
    CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3};

// "input [2, 3, 7, 9], weight [4, 3, 3, 3], stride 2,2, padding 1,1, dilation 1,1, groups 1" for
// messages.
std::string describe(const ConvolutionShape& s) {
  return "input " + shapeString({s.batch, s.inPlanes, s.height, s.width}) + ", weight " +
         shapeString({s.outPlanes, s.inPlanes / s.groups, s.kH, s.kW}) + ", stride " + std::to_string(s.dW) + "," +
         std::to_string(s.dH) + ", padding " + std::to_string(s.padW) + "," + std::to_string(s.padH) +
         ", dilation " + std::to_string(s.dilW) + "," + std::to_string(s.dilH) + ", groups " +
         std::to_string(s.groups);
}

int toInt(int64_t value, const ConvolutionShape& s) {
  NN_CHECK(value >= 0 && value < (int64_t{1} << 31),
           "nn.SpatialConvolution on CUDA: " << describe(s) << " is beyond cuDNN's int sizes");
  return static_cast<int>(value);
}

// One shape's descriptors and algorithms on one device. Plans live as long as the process (the
// cache below is never destroyed, as CudaBackend is not); the destructor only releases what a
// plan that failed half-way had made. Its calls go unchecked: it runs while that failure's
// nn::Error is on its way, and a destructor must not throw.
struct Plan {
  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (input) cudnnDestroyTensorDescriptor(input);
    if (output) cudnnDestroyTensorDescriptor(output);
    if (bias) cudnnDestroyTensorDescriptor(bias);
    if (weight) cudnnDestroyFilterDescriptor(weight);
    if (convolution) cudnnDestroyConvolutionDescriptor(convolution);
  }

  cudnnTensorDescriptor_t input = nullptr, output = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t weight = nullptr;
  cudnnConvolutionDescriptor_t convolution = nullptr;
  cudnnConvolutionFwdAlgo_t forward{};
  cudnnConvolutionBwdDataAlgo_t backwardData{};
  cudnnConvolutionBwdFilterAlgo_t backwardFilter{};
  // The directions that take the unfolded route instead of cuDNN's.
  bool unfoldedForward = false, unfoldedBackwardData = false, unfoldedBackwardFilter = false;
  // The most any of the three directions needs, so that the workspace is sized once.
  size_t workspaceBytes = 0;
};

// Whether the float32 matmul precision in force, or the calling thread's autocast scope
// (nn/runtime/Autocast.h), lets convolutions run on tensor cores. The tensors are float32, so
// cuDNN's tensor cores take them as TF32 inside a scope too.
bool tensorOps() { return autocastEnabled() || float32MatmulPrecision() != MatmulPrecision::highest; }

// The first algorithm of cuDNN's ranking that it can run on this shape, deterministic, not on
// tensor cores, and one of `allowed` (Note [Reproducible convolutions]), in `chosen`; false
// where there is none.
template <typename Perf, typename Algorithm, size_t N>
bool choose(const Perf* ranked, int count, const Algorithm (&allowed)[N], Algorithm& chosen) {
  for (int i = 0; i < count; ++i) {
    const Perf& r = ranked[i];
    const bool summing = std::find(std::begin(allowed), std::end(allowed), r.algo) != std::end(allowed);
    const bool tensorCores = r.mathType == CUDNN_TENSOR_OP_MATH || r.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
    if (r.status == CUDNN_STATUS_SUCCESS && r.determinism == CUDNN_DETERMINISTIC && !tensorCores && summing) {
      chosen = r.algo;
      return true;
    }
  }
  return false;
}

std::unique_ptr<Plan> makePlan(const Device& device, const ConvolutionShape& s, bool tensorCores) {
  auto plan = std::make_unique<Plan>();
  NN_CHECK(std::max(s.batch * s.inPlanes * s.height * s.width, s.batch * s.outPlanes * s.outHeight * s.outWidth) <
               (int64_t{1} << 31),
           "nn.SpatialConvolution on CUDA: " << describe(s) << " has more elements than cuDNN's int sizes count");
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&plan->input));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(plan->input, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, toInt(s.batch, s),
                                         toInt(s.inPlanes, s), toInt(s.height, s), toInt(s.width, s)));
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&plan->output));
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(plan->output, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, toInt(s.batch, s),
                                         toInt(s.outPlanes, s), toInt(s.outHeight, s), toInt(s.outWidth, s)));
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&plan->bias));
  CUDNN_CHECK(
      cudnnSetTensor4dDescriptor(plan->bias, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, toInt(s.outPlanes, s), 1, 1));
  // The filters of a grouped convolution read inPlanes / groups planes each (cuDNN's and
  // PyTorch's layout, the module's).
  CUDNN_CHECK(cudnnCreateFilterDescriptor(&plan->weight));
  CUDNN_CHECK(cudnnSetFilter4dDescriptor(plan->weight, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, toInt(s.outPlanes, s),
                                         toInt(s.inPlanes / s.groups, s), toInt(s.kH, s), toInt(s.kW, s)));
  CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&plan->convolution));
  CUDNN_CHECK(cudnnSetConvolution2dDescriptor(plan->convolution, toInt(s.padH, s), toInt(s.padW, s), toInt(s.dH, s),
                                              toInt(s.dW, s), toInt(s.dilH, s), toInt(s.dilW, s),
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  CUDNN_CHECK(cudnnSetConvolutionGroupCount(plan->convolution, toInt(s.groups, s)));
  CUDNN_CHECK(cudnnSetConvolutionMathType(plan->convolution, tensorCores ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));

  // cuDNN and nn/math/Im2Col.h must agree on the output size.
  int n = 0, c = 0, h = 0, w = 0;
  CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(plan->convolution, plan->input, plan->weight, &n, &c, &h, &w));
  NN_CHECK(n == s.batch && c == s.outPlanes && h == s.outHeight && w == s.outWidth,
           "nn.SpatialConvolution on CUDA: cuDNN's output size "
               << shapeString({n, c, h, w}) << " for " << describe(s) << " is not the module's "
               << shapeString({s.batch, s.outPlanes, s.outHeight, s.outWidth}));

  cudnnHandle_t handle = CudaBackend::instance().cudnn(device.index());
  const bool forced = cuda::unfoldedConvolutionsForced();
  int count = 0;
  cudnnConvolutionFwdAlgoPerf_t forward[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(handle, plan->input, plan->weight, plan->convolution, plan->output,
                                                     CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, forward));
  plan->unfoldedForward = forced || !choose(forward, count, kForwardAlgorithms, plan->forward);
  cudnnConvolutionBwdDataAlgoPerf_t backwardData[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, plan->weight, plan->output, plan->convolution,
                                                          plan->input, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &count,
                                                          backwardData));
  plan->unfoldedBackwardData = forced || !choose(backwardData, count, kBackwardDataAlgorithms, plan->backwardData);
  cudnnConvolutionBwdFilterAlgoPerf_t backwardFilter[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
  CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle, plan->input, plan->output, plan->convolution,
                                                            plan->weight, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                                                            &count, backwardFilter));
  plan->unfoldedBackwardFilter =
      forced || !choose(backwardFilter, count, kBackwardFilterAlgorithms, plan->backwardFilter);

  // The unfolded route's column matrix fits within the limits of convolutionFits.
  const size_t columnBytes = static_cast<size_t>(cuda::unfoldedWorkspaceFloats(s)) * sizeof(float);
  size_t forwardBytes = columnBytes, dataBytes = columnBytes, filterBytes = columnBytes;
  if (!plan->unfoldedForward)
    CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(handle, plan->input, plan->weight, plan->convolution,
                                                        plan->output, plan->forward, &forwardBytes));
  if (!plan->unfoldedBackwardData)
    CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(handle, plan->weight, plan->output, plan->convolution,
                                                             plan->input, plan->backwardData, &dataBytes));
  if (!plan->unfoldedBackwardFilter)
    CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(handle, plan->input, plan->output, plan->convolution,
                                                               plan->weight, plan->backwardFilter, &filterBytes));
  plan->workspaceBytes = std::max({forwardBytes, dataBytes, filterBytes});
  return plan;
}

// The plan of a device, shape and math (tensorOps), made on first use. One lock for all devices:
// a steady step only looks its plan up (no allocation), and a plan is made once per shape.
const Plan& planFor(const Device& device, const ConvolutionShape& s) {
  using Key = std::array<int64_t, 17>;
  struct Cache {
    std::mutex mutex;
    std::map<Key, std::unique_ptr<Plan>> plans;
  };
  static Cache* cache = new Cache();
  const bool tensorCores = tensorOps();
  const Key key{device.index(), s.batch, s.inPlanes, s.height, s.width, s.outPlanes,
                s.kH,           s.kW,    s.dH,       s.dW,     s.padH,  s.padW,    s.dilH, s.dilW,
                s.groups,       cuda::unfoldedConvolutionsForced(), tensorCores};
  std::lock_guard<std::mutex> lock(cache->mutex);
  std::unique_ptr<Plan>& plan = cache->plans[key];
  if (!plan) {
    try {
      plan = makePlan(device, s, tensorCores);
    } catch (...) {
      cache->plans.erase(key);  // so that the next call tries again rather than finding nothing
      throw;
    }
  }
  return *plan;
}

// The module's workspace resized to the plan's need; null where it needs none.
void* workspaceFor(const Device& device, const Plan& plan, Tensor& workspace) {
  const int64_t floats = static_cast<int64_t>((plan.workspaceBytes + sizeof(float) - 1) / sizeof(float));
  workspace.resize_({floats}, device);
  return floats > 0 ? workspace.rawData() : nullptr;
}

cudnnHandle_t handleOf(const Device& device) { return CudaBackend::instance().cudnn(device.index()); }

void updateOutput(const Device& device, const ConvolutionShape& s, const float* input, const float* weight,
                  const float* bias, float* output, Tensor& workspace) {
  if (s.batch == 0) return;
  DeviceGuard guard(device);
  const Plan& plan = planFor(device, s);
  void* scratch = workspaceFor(device, plan, workspace);
  const float one = 1.f, zero = 0.f;
  if (plan.unfoldedForward)
    cuda::unfoldedOutput(device, s, input, weight, output, static_cast<float*>(scratch));
  else
    CUDNN_CHECK(cudnnConvolutionForward(handleOf(device), &one, plan.input, input, plan.weight, weight,
                                        plan.convolution, plan.forward, scratch, plan.workspaceBytes, &zero,
                                        plan.output, output));
  // The bias is added to the finished sums; the CPU starts its sums from it.
  if (bias) CUDNN_CHECK(cudnnAddTensor(handleOf(device), &one, plan.bias, bias, &one, plan.output, output));
}

void updateGradInput(const Device& device, const ConvolutionShape& s, const float* gradOutput, const float* weight,
                     float* gradInput, Tensor& workspace) {
  if (s.batch == 0) return;
  DeviceGuard guard(device);
  const Plan& plan = planFor(device, s);
  void* scratch = workspaceFor(device, plan, workspace);
  if (plan.unfoldedBackwardData) {
    cuda::unfoldedGradInput(device, s, gradOutput, weight, gradInput, static_cast<float*>(scratch));
    return;
  }
  const float one = 1.f, zero = 0.f;
  CUDNN_CHECK(cudnnConvolutionBackwardData(handleOf(device), &one, plan.weight, weight, plan.output, gradOutput,
                                           plan.convolution, plan.backwardData, scratch, plan.workspaceBytes, &zero,
                                           plan.input, gradInput));
}

void accGradParameters(const Device& device, const ConvolutionShape& s, const float* input, const float* gradOutput,
                       float* gradWeight, float* gradBias, float scale, Tensor& workspace) {
  if (s.batch == 0) return;
  DeviceGuard guard(device);
  const Plan& plan = planFor(device, s);
  void* scratch = workspaceFor(device, plan, workspace);
  // alpha = scale, beta = 1: gradient += scale * this batch's gradient, as on the CPU.
  const float one = 1.f;
  if (plan.unfoldedBackwardFilter)
    cuda::unfoldedGradWeight(device, s, input, gradOutput, gradWeight, scale, static_cast<float*>(scratch));
  else
    CUDNN_CHECK(cudnnConvolutionBackwardFilter(handleOf(device), &scale, plan.input, input, plan.output, gradOutput,
                                               plan.convolution, plan.backwardFilter, scratch, plan.workspaceBytes,
                                               &one, plan.weight, gradWeight));
  if (gradBias)
    CUDNN_CHECK(
        cudnnConvolutionBackwardBias(handleOf(device), &scale, plan.output, gradOutput, &one, plan.bias, gradBias));
}

}  // namespace

ConvolutionKernels cuda::convolutionKernels() {
  ConvolutionKernels k{};
  k.updateOutput = &updateOutput;
  k.updateGradInput = &updateGradInput;
  k.accGradParameters = &accGradParameters;
  return k;
}

}  // namespace nn
