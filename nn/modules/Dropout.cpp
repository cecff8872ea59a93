// nn::Dropout: the mask is drawn on the host, by the compute threads of a CPU device, from a key
// the module's generator gives each forward (nn/math/Dropout.h); the output is one product of
// the input and the mask (Tensor::cmul_ on the input's device, on its compute threads), and so is
// gradInput of gradOutput and the mask.
#include "nn/modules/Dropout.h"

#include <algorithm>
#include <sstream>

#include "nn/math/Dropout.h"
#include "nn/runtime/ComputeThreads.h"

namespace nn {

NN_REGISTER_MODULE(Dropout);

Dropout::Dropout(const Options& options, const char* module)
    : WithOptions(options), generator_(defaultGenerator().nextU32()) {
  NN_CHECK(options.p >= 0.f && options.p < 1.f, module << ": expected p in [0, 1), got " << options.p);
}

std::string Dropout::toString() const {
  std::ostringstream s;
  s << typeName() << "(" << options_.p << ")";
  return s.str();
}

void Dropout::checkInput(const Tensor&) const {}

void Dropout::drawMask(const Tensor& input, float* mask) {
  const uint32_t k0 = generator_.nextU32(), k1 = generator_.nextU32();
  const float p = options_.p, scale = math::dropoutScale(p);
  // Parts of at least 16384 elements: a smaller one costs less than handing it to a thread.
  // Within a part, runs of indices that share their high 32 bits: the loop over a run is of
  // 32-bit integers only, and vectorises.
  parallelRanges(input.device().isCpu() ? input.device() : Device(), input.numel(), 16384,
                 [&](int64_t begin, int64_t end) {
                   for (int64_t i = begin; i < end;) {
                     const int64_t runEnd = std::min(end, (i | int64_t{0xffffffff}) + 1);
                     const uint32_t blockKey = math::dropoutBlockKey(k1, i), first = static_cast<uint32_t>(i);
                     const uint32_t count = static_cast<uint32_t>(runEnd - i);
                     float* out = mask + i;
                     for (uint32_t j = 0; j < count; ++j)
                       out[j] = math::dropoutFactor(math::dropoutUniformInBlock(k0, blockKey, first + j), p, scale);
                     i = runEnd;
                   }
                 });
}

const Tensor& Dropout::updateOutput(const Tensor& input) {
  checkInput(input);
  if (!train_) {
    output.resize_(input.sizes(), input.device());
    output.copy_(input);
    return output;
  }
  // The mask is drawn on the host whatever the input's device (straight into `noise` on a CPU
  // device), and then copied there: a run on a CUDA device draws the same masks as one on the
  // CPU from the same seed, and gives the same floats. The output is one product.
  noise.resize_(input.sizes(), input.device());
  if (input.device().isCpu()) {
    drawMask(input, noise.data());
  } else {
    hostNoise_.resize_(input.sizes(), Device());
    drawMask(input, hostNoise_.data());
    noise.copy_(hostNoise_);
  }
  if (input.isContiguous()) return output.cmul_(input, noise);
  output.resize_(input.sizes(), input.device());
  output.copy_(input);
  return output.cmul_(noise);
}

const Tensor& Dropout::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  checkInput(input);
  NN_CHECK(gradOutput.sizes() == input.sizes(), toString() << ": expected gradOutput of size " << input.shapeString()
                                                           << ", got " << gradOutput.shapeString());
  NN_CHECK(gradOutput.device() == input.device(),
           toString() << ": expected gradOutput on " << input.device().str() << ", got " << gradOutput.device().str());
  if (!train_) {
    gradInput.resize_(input.sizes(), input.device());
    gradInput.copy_(gradOutput);
    return gradInput;
  }
  NN_CHECK(noise.sizes() == input.sizes() && noise.device() == input.device(),
           toString() << ": backward needs the noise of a training forward on this input (" << input.shapeString()
                      << " on " << input.device().str() << "), found noise of size " << noise.shapeString() << " on "
                      << noise.device().str());
  // One pass, on the device's compute threads, where gradOutput is contiguous.
  if (gradOutput.isContiguous()) return gradInput.cmul_(gradOutput, noise);
  gradInput.resize_(input.sizes(), input.device());
  gradInput.copy_(gradOutput);
  return gradInput.cmul_(noise);
}

void Dropout::clearState() {
  Module::clearState();
  noise.set_(Tensor());
  hostNoise_.set_(Tensor());
}

}  // namespace nn
