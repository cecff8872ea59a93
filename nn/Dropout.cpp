// nn::Dropout: the mask is drawn on the host element by element from the module's generator,
// and applied with Tensor::cmul_ on the input's device.
#include "nn/Dropout.h"

#include <sstream>

#include "nn/math/Dropout.h"

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
  for (int64_t i = 0, n = input.numel(); i < n; ++i) mask[i] = math::dropoutNoise(generator_.uniform(), options_.p);
}

const Tensor& Dropout::updateOutput(const Tensor& input) {
  checkInput(input);
  output.resize_(input.sizes(), input.device());
  output.copy_(input);
  if (!train_) return output;
  // The mask is drawn on the host, element by element from the module's generator, whatever
  // the input's device, and then copied there: a run on a CUDA device draws the same masks
  // as one on the CPU from the same seed, and gives the same floats.
  hostNoise_.resize_(input.sizes(), Device());
  drawMask(input, hostNoise_.data());
  noise.resize_(input.sizes(), input.device());
  noise.copy_(hostNoise_);
  output.cmul_(noise);
  return output;
}

const Tensor& Dropout::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  checkInput(input);
  NN_CHECK(gradOutput.sizes() == input.sizes(), toString() << ": expected gradOutput of size " << input.shapeString()
                                                           << ", got " << gradOutput.shapeString());
  NN_CHECK(gradOutput.device() == input.device(),
           toString() << ": expected gradOutput on " << input.device().str() << ", got " << gradOutput.device().str());
  gradInput.resize_(input.sizes(), input.device());
  gradInput.copy_(gradOutput);
  if (!train_) return gradInput;
  NN_CHECK(noise.sizes() == input.sizes() && noise.device() == input.device(),
           toString() << ": backward needs the noise of a training forward on this input (" << input.shapeString()
                      << " on " << input.device().str() << "), found noise of size " << noise.shapeString() << " on "
                      << noise.device().str());
  gradInput.cmul_(noise);
  return gradInput;
}

void Dropout::clearState() {
  Module::clearState();
  noise.set_(Tensor());
  hostNoise_.set_(Tensor());
}

}  // namespace nn
