// nn::ConcatTable.
#include "nn/modules/ConcatTable.h"

#include "nn/core/Options.h"

namespace nn {

NN_REGISTER_MODULE(ConcatTable);

ModulePtr ConcatTable::create(const Config&, std::vector<ModulePtr> children) {
  auto table = std::make_shared<ConcatTable>();
  for (ModulePtr& child : children) table->add(std::move(child));
  return table;
}

void ConcatTable::setGradInputNeeded(bool needed) {
  Module::setGradInputNeeded(needed);
  for (const ModulePtr& m : modules_) m->setGradInputNeeded(needed);
}

const Activity& ConcatTable::updateOutputActivity(const Activity& input) {
  checkNotEmpty();
  Table& out = outputActivity_.setTable(modules_.size());
  for (size_t i = 0; i < modules_.size(); ++i) out[i] = childUpdateOutput(i, input);
  return outputActivity_;
}

const Table& ConcatTable::checkGradOutput(const Activity& gradOutput) const {
  const Table& g = tableInput(gradOutput, "gradOutput");
  NN_CHECK(g.size() == modules_.size(), toString() << ": expected gradOutput, a table of " << modules_.size()
                                                   << " items (one per branch), got " << gradOutput.describe());
  return g;
}

const Activity& ConcatTable::updateGradInputActivity(const Activity& input, const Activity& gradOutput) {
  checkNotEmpty();
  const Table& g = checkGradOutput(gradOutput);
  // The first branch's gradInput, kept to be summed with the second's in one pass where the
  // second's backward cannot write into it: it is none of the gradOutputs or inputs, which
  // modules working in place write into (else copied at once, as Torch7 does).
  const Activity* first = nullptr;
  for (size_t i = 0; i < modules_.size(); ++i) {
    const Activity& branch = childUpdateGradInput(i, input, g[i]);
    // The branches still compute the gradients inside them, for accGradParameters.
    if (!gradInputNeeded()) continue;
    NN_CHECK(sameShape(input, branch), toString() << ": expected the gradInput of (" << i + 1 << ") to be "
                                                  << input.describe() << " as the input, got " << branch.describe());
    if (i == 0) {
      if (modules_.size() > 1 && !sharesStorage(branch, gradOutput) && !sharesStorage(branch, input))
        first = &branch;
      else
        copyActivity(gradInputActivity_, branch);
    } else if (first != nullptr) {
      sumActivity(gradInputActivity_, *first, branch);
      first = nullptr;
    } else {
      addActivity(gradInputActivity_, branch);
    }
  }
  if (!gradInputNeeded()) {
    if (gradInput.numel() != 0) gradInput.set_(Tensor());
    return setGradInput(gradInput);
  }
  return setGradInput(gradInputActivity_);
}

void ConcatTable::accGradParametersActivity(const Activity& input, const Activity& gradOutput, float scale) {
  checkNotEmpty();
  const Table& g = checkGradOutput(gradOutput);
  for (size_t i = 0; i < modules_.size(); ++i) childAccGradParameters(i, input, g[i], scale);
}

}  // namespace nn
