// The modules of examples/CustomModules.h.
#include "examples/CustomModules.h"

#include <memory>

#include "nn/nn.h"

namespace my {

// Registration, at namespace scope in the .cpp that defines the module, linked into the
// program (the library "custom_modules" is alwayslink): clone(), nn::load and
// DataParallelTable find "my.Affine" and "my.Residual" through it.
NN_REGISTER_MODULE_AS(Affine, "my.Affine");
NN_REGISTER_MODULE_AS(Residual, "my.Residual");

Affine::Affine(const Options& options) : WithOptions(options) {
  NN_CHECK(options.features > 0, "my.Affine: expected a positive number of features, got " << options.features);
  weight = nn::Tensor::full({options.features}, 1.f);
  bias = nn::Tensor::zeros({options.features});
  gradWeight = nn::Tensor::zeros({options.features});
  gradBias = nn::Tensor::zeros({options.features});
  // Declared once: parameters(), getParameters(), to(), clone(), stateDict() and nn::save
  // then handle them ("weight", "bias" under the module's place in the tree).
  registerParameter("weight", &weight, &gradWeight);
  registerParameter("bias", &bias, &gradBias);
}

void Affine::checkInput(const nn::Tensor& input) const {
  NN_CHECK(input.dim() == 2 && input.size(1) == options().features,
           toString() << ": expected input of size [batch, " << options().features << "], got " << input.shapeString());
  NN_CHECK(input.device().isCpu(), toString() << ": runs on CPU devices, got input on " << input.device().str());
  checkDevice(input, weight.device(), "input");
}

const nn::Tensor& Affine::updateOutput(const nn::Tensor& input) {
  checkInput(input);
  const nn::Tensor x = input.contiguous();
  output.resize_(input.sizes(), input.device());
  const int64_t batch = x.size(0), features = x.size(1);
  const float *in = x.data(), *w = weight.data(), *b = bias.data();
  float* out = output.data();
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t f = 0; f < features; ++f) out[n * features + f] = in[n * features + f] * w[f] + b[f];
  return output;
}

const nn::Tensor& Affine::updateGradInput(const nn::Tensor& input, const nn::Tensor& gradOutput) {
  checkInput(input);
  checkGradOutput(input, gradOutput);
  const nn::Tensor g = gradOutput.contiguous();
  gradInput.resize_(input.sizes(), input.device());
  const int64_t batch = g.size(0), features = g.size(1);
  const float *go = g.data(), *w = weight.data();
  float* gi = gradInput.data();
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t f = 0; f < features; ++f) gi[n * features + f] = go[n * features + f] * w[f];
  return gradInput;
}

void Affine::accGradParameters(const nn::Tensor& input, const nn::Tensor& gradOutput, float scale) {
  checkInput(input);
  checkGradOutput(input, gradOutput);
  const nn::Tensor x = input.contiguous(), g = gradOutput.contiguous();
  const int64_t batch = x.size(0), features = x.size(1);
  const float *in = x.data(), *go = g.data();
  float *gw = gradWeight.data(), *gb = gradBias.data();
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t f = 0; f < features; ++f) {
      gw[f] += scale * go[n * features + f] * in[n * features + f];
      gb[f] += scale * go[n * features + f];
    }
}

Residual::Residual(nn::ModulePtr inner) { add(std::move(inner)); }

nn::ModulePtr Residual::create(const nn::Config&, std::vector<nn::ModulePtr> children) {
  NN_CHECK(children.size() == 1, "my.Residual: expected one child module, got " << children.size());
  return std::make_shared<Residual>(children[0]);
}

// The container runs its child through childUpdateOutput and the like (nn/core/Container.h): an
// error in the child then names its place, and --profile and --check-numerics see it.
const nn::Tensor& Residual::updateOutput(const nn::Tensor& input) {
  const nn::Tensor& inner = childUpdateOutput(0, input);
  output.resizeAs_(input).copy_(input).add_(inner);
  return output;
}

const nn::Tensor& Residual::updateGradInput(const nn::Tensor& input, const nn::Tensor& gradOutput) {
  const nn::Tensor& inner = childUpdateGradInput(0, input, gradOutput);
  gradInput.resizeAs_(gradOutput).copy_(gradOutput).add_(inner);
  return gradInput;
}

void Residual::accGradParameters(const nn::Tensor& input, const nn::Tensor& gradOutput, float scale) {
  childAccGradParameters(0, input, gradOutput, scale);
}

std::string Residual::toString() const { return describeChildren(typeName(), ""); }

nn::ModulePtr mlp() {
  auto inner = std::make_shared<nn::Sequential>();
  inner->add(std::make_shared<nn::Linear>(128, 128));
  inner->add(std::make_shared<nn::ReLU>());
  return std::make_shared<nn::Sequential>(std::vector<nn::ModulePtr>{
      std::make_shared<nn::View>(std::vector<int64_t>{-1, 784}),
      std::make_shared<nn::Linear>(784, 128),
      std::make_shared<Affine>(128),
      std::make_shared<nn::ReLU>(),
      std::make_shared<Residual>(inner),
      std::make_shared<nn::Linear>(128, 10),
      std::make_shared<nn::LogSoftMax>(),
  });
}

}  // namespace my
