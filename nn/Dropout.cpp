// nn::Dropout on the CPU: the mask is drawn element by element from the module's generator.
#include "nn/Dropout.h"

#include <sstream>

#include "nn/math/Dropout.h"

namespace nn {

NN_REGISTER_MODULE(Dropout);

Dropout::Dropout(float p) : p_(p), generator_(defaultGenerator().nextU32()) {
  NN_CHECK(p >= 0.f && p < 1.f, "nn.Dropout: expected p in [0, 1), got " << p);
}

ModulePtr Dropout::create(const Config& c, std::vector<ModulePtr>) {
  return std::make_shared<Dropout>(static_cast<float>(c.number("p")));
}

Config Dropout::config() const { return Config().set("p", p_); }

std::string Dropout::toString() const {
  std::ostringstream s;
  s << typeName() << "(" << p_ << ")";
  return s.str();
}

const Tensor& Dropout::updateOutput(const Tensor& input) {
  output.resize_(input.sizes(), input.device());
  if (!train_) {
    output.copy_(input);
    return output;
  }
  const Tensor x = input.contiguous();
  noise.resize_(input.sizes(), input.device());
  const float* in = x.data();
  float* mask = noise.data();
  float* out = output.data();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) {
    mask[i] = math::dropoutNoise(generator_.uniform(), p_);
    out[i] = in[i] * mask[i];
  }
  return output;
}

const Tensor& Dropout::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  NN_CHECK(gradOutput.sizes() == input.sizes(), toString() << ": expected gradOutput of size " << input.shapeString()
                                                           << ", got " << gradOutput.shapeString());
  gradInput.resize_(input.sizes(), input.device());
  if (!train_) {
    gradInput.copy_(gradOutput);
    return gradInput;
  }
  NN_CHECK(noise.sizes() == input.sizes(), toString() << ": backward needs the noise of a training forward on this "
                                                      << "input (" << input.shapeString() << "), found noise of size "
                                                      << noise.shapeString());
  const Tensor g = gradOutput.contiguous();
  const float* gout = g.data();
  const float* mask = noise.data();
  float* gin = gradInput.data();
  for (int64_t i = 0, n = g.numel(); i < n; ++i) gin[i] = gout[i] * mask[i];
  return gradInput;
}

void Dropout::clearState() {
  Module::clearState();
  noise.set_(Tensor());
}

}  // namespace nn
