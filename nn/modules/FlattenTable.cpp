// nn::FlattenTable.
#include "nn/modules/FlattenTable.h"

#include "nn/core/Options.h"

namespace nn {

NN_REGISTER_MODULE(FlattenTable);

namespace {

// into = `like`'s nesting with the tensors of `flat` from item `next` on, in order.
void nest(Activity& into, const Activity& like, const Table& flat, size_t& next) {
  if (like.isTensor()) {
    into = flat[next++];
    return;
  }
  Table& t = into.setTable(like.size());
  for (size_t i = 0; i < like.size(); ++i) nest(t[i], like[i], flat, next);
}

}  // namespace

const Activity& FlattenTable::updateOutputActivity(const Activity& input) {
  tableInput(input, "input");
  tensors_.clear();
  collectTensors(input, tensors_);
  Table& out = outputActivity_.setTable(tensors_.size());
  for (size_t i = 0; i < tensors_.size(); ++i) out[i] = tensors_[i];
  return outputActivity_;
}

const Activity& FlattenTable::updateGradInputActivity(const Activity& input, const Activity& gradOutput) {
  tableInput(input, "input");
  tensors_.clear();
  collectTensors(input, tensors_);
  const Table& g = tableInput(gradOutput, "gradOutput");
  NN_CHECK(g.size() == tensors_.size(), toString() << ": expected gradOutput, a table of " << tensors_.size()
                                                   << " tensors, got " << gradOutput.describe());
  for (size_t i = 0; i < g.size(); ++i)
    NN_CHECK(g[i].isTensor() && g[i].tensor().sizes() == tensors_[i].sizes(),
             toString() << ": expected gradOutput's item " << i << " of size " << tensors_[i].shapeString() << ", got "
                        << g[i].describe());
  size_t next = 0;
  nest(gradInputActivity_, input, g, next);
  return gradInputActivity_;
}

}  // namespace nn
