// nn::Concat. A tensor of sizes [a..., n, b...] is seen as [outer, n, inner] for the joined
// dimension n, so each child's part is `outer` contiguous runs of n_i * inner elements, copied
// by ConcatKernels on the tensors' device.
#include "nn/modules/Concat.h"

#include "nn/backend/Backend.h"
#include "nn/tensor/Checked.h"

namespace nn {

NN_REGISTER_MODULE(Concat);

namespace {

int64_t outerOf(const Tensor& t, int dim) {
  int64_t n = 1;
  for (int d = 0; d < dim; ++d) n *= t.size(d);
  return n;
}

int64_t innerOf(const Tensor& t, int dim) {
  int64_t n = 1;
  for (int d = dim + 1; d < t.dim(); ++d) n *= t.size(d);
  return n;
}

// True when a and b have the same sizes except along `dim`.
bool matchOutside(const Tensor& a, const Tensor& b, int dim) {
  if (a.dim() != b.dim()) return false;
  for (int d = 0; d < a.dim(); ++d)
    if (d != dim && a.size(d) != b.size(d)) return false;
  return true;
}

// "[4, *, 3]": the sizes a tensor needs to be joined with t along `dim`.
std::string joinableShape(const Tensor& t, int dim) {
  std::string s = "[";
  for (int d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + (d == dim ? std::string("*") : std::to_string(t.size(d)));
  return s + "]";
}

}  // namespace

Concat::Concat(const Options& options) : WithOptions(options) {
  NN_CHECK(options.dim >= 0, "nn.Concat: expected a dimension >= 0 (dimensions count from 0), got " << options.dim);
}

ModulePtr Concat::create(const Config& c, std::vector<ModulePtr> children) {
  auto concat = std::make_shared<Concat>(fromConfig<Options>(c, "nn.Concat"));
  for (ModulePtr& child : children) concat->add(std::move(child));
  return concat;
}

const Tensor& Concat::updateOutput(const Tensor& input) {
  checkNotEmpty();
  for (size_t i = 0; i < modules_.size(); ++i) childUpdateOutput(i, input);
  const Tensor& first = modules_[0]->output;
  NN_CHECK(options_.dim < first.dim(), typeName()
                                           << ": cannot join along dimension " << options_.dim << " outputs of size "
                                           << first.shapeString() << " (dimensions count from 0)");
  int64_t joined = 0;
  for (size_t i = 0; i < modules_.size(); ++i) {
    const Tensor& out = modules_[i]->output;
    NN_CHECK(matchOutside(out, first, options_.dim), typeName() << ": expected the output of (" << i + 1 << ") to be "
                                                                << joinableShape(first, options_.dim)
                                                                << " to join along dimension " << options_.dim
                                                                << " with that of (1), got " << out.shapeString());
    NN_CHECK(out.device() == first.device(), typeName() << ": expected the output of (" << i + 1 << ") on "
                                                        << first.device().str() << " as that of (1), got "
                                                        << out.device().str());
    NN_CHECK(addInto(joined, out.size(options_.dim), joined),
             typeName() << ": the outputs' sizes along dimension " << options_.dim << " add up beyond 64-bit integers");
  }
  sizes_.assign(first.sizes().begin(), first.sizes().end());
  sizes_[options_.dim] = joined;
  output.resize_(sizes_, first.device());

  const int64_t outer = outerOf(first, options_.dim);
  const int64_t inner = innerOf(first, options_.dim);
  const ConcatKernels& kernels = kernelsOf(output.device()).concat;
  int64_t offset = 0;  // of child i's part within one run of joined * inner elements
  for (const ModulePtr& child : modules_) {
    const Tensor part = child->output.contiguous();
    const int64_t run = part.size(options_.dim) * inner;
    kernels.copyRuns(output.device(), output.rawData() + offset, joined * inner, part.rawData(), run, outer, run);
    offset += run;
  }
  return output;
}

void Concat::splitGradOutput(const Tensor& gradOutput) {
  NN_CHECK(gradOutput.sizes() == output.sizes(), typeName() << ": expected gradOutput of size " << output.shapeString()
                                                            << ", got " << gradOutput.shapeString());
  int64_t joined = 0;
  for (const ModulePtr& child : modules_) {
    const Tensor& out = child->output;
    NN_CHECK(matchOutside(out, gradOutput, options_.dim),
             typeName() << ": backward needs the outputs of a forward that gave " << gradOutput.shapeString()
                        << ", found a child output of " << out.shapeString());
    NN_CHECK(addInto(joined, out.size(options_.dim), joined),
             typeName() << ": the outputs' sizes along dimension " << options_.dim << " add up beyond 64-bit integers");
  }
  NN_CHECK(joined == gradOutput.size(options_.dim),
           typeName() << ": backward needs the outputs of a forward that gave " << gradOutput.shapeString()
                      << ", found children's outputs of " << joined << " along dimension " << options_.dim);
  if (gradOutputParts_.size() != modules_.size()) gradOutputParts_.resize(modules_.size());

  const Tensor g = gradOutput.contiguous();
  const int64_t outer = outerOf(g, options_.dim);
  const int64_t inner = innerOf(g, options_.dim);
  const ConcatKernels& kernels = kernelsOf(g.device()).concat;
  sizes_.assign(g.sizes().begin(), g.sizes().end());
  int64_t offset = 0;
  for (size_t i = 0; i < modules_.size(); ++i) {
    sizes_[options_.dim] = modules_[i]->output.size(options_.dim);
    Tensor& part = gradOutputParts_[i];
    part.resize_(sizes_, g.device());
    const int64_t run = sizes_[options_.dim] * inner;
    kernels.copyRuns(g.device(), part.rawData(), run, g.rawData() + offset, joined * inner, outer, run);
    offset += run;
  }
}

void Concat::setGradInputNeeded(bool needed) {
  Module::setGradInputNeeded(needed);
  for (const ModulePtr& m : modules_) m->setGradInputNeeded(needed);
}

const Tensor& Concat::updateGradInput(const Tensor& input, const Tensor& gradOutput) {
  checkNotEmpty();
  splitGradOutput(gradOutput);
  if (!gradInputNeeded()) {
    // The branches still compute the gradients inside them, for accGradParameters.
    for (size_t i = 0; i < modules_.size(); ++i) childUpdateGradInput(i, input, gradOutputParts_[i]);
    if (gradInput.numel() != 0) gradInput.set_(Tensor());
    return gradInput;
  }
  gradInput.resize_(input.sizes(), input.device());
  for (size_t i = 0; i < modules_.size(); ++i) {
    const Tensor& g = childUpdateGradInput(i, input, gradOutputParts_[i]);
    NN_CHECK(g.sizes() == input.sizes() && g.device() == input.device(),
             typeName() << ": expected the gradInput of (" << i + 1 << ") of size " << input.shapeString() << " on "
                        << input.device().str() << ", got " << g.shapeString() << " on " << g.device().str());
    if (i == 0)
      gradInput.copy_(g);
    else
      gradInput.add_(g.contiguous());
  }
  return gradInput;
}

void Concat::accGradParameters(const Tensor& input, const Tensor& gradOutput, float scale) {
  checkNotEmpty();
  splitGradOutput(gradOutput);
  for (size_t i = 0; i < modules_.size(); ++i) childAccGradParameters(i, input, gradOutputParts_[i], scale);
}

void Concat::clearState() {
  Module::clearState();
  gradOutputParts_.clear();
}

}  // namespace nn
