// nn::ParallelTable.
#include "nn/modules/ParallelTable.h"

#include "nn/core/Options.h"

namespace nn {

NN_REGISTER_MODULE(ParallelTable);

ModulePtr ParallelTable::create(const Config&, std::vector<ModulePtr> children) {
  auto table = std::make_shared<ParallelTable>();
  for (ModulePtr& child : children) table->add(std::move(child));
  return table;
}

void ParallelTable::setGradInputNeeded(bool needed) {
  Module::setGradInputNeeded(needed);
  for (const ModulePtr& m : modules_) m->setGradInputNeeded(needed);
}

const Table& ParallelTable::checkItems(const Activity& a, const char* what) const {
  const Table& t = tableInput(a, what);
  NN_CHECK(t.size() == modules_.size(), toString() << ": expected " << what << ", a table of " << modules_.size()
                                                   << " items (one per child), got " << a.describe());
  return t;
}

const Activity& ParallelTable::updateOutputActivity(const Activity& input) {
  checkNotEmpty();
  const Table& in = checkItems(input, "input");
  Table& out = outputActivity_.setTable(modules_.size());
  for (size_t i = 0; i < modules_.size(); ++i) out[i] = childUpdateOutput(i, in[i]);
  return outputActivity_;
}

const Activity& ParallelTable::updateGradInputActivity(const Activity& input, const Activity& gradOutput) {
  checkNotEmpty();
  const Table& in = checkItems(input, "input");
  const Table& g = checkItems(gradOutput, "gradOutput");
  Table& gradIn = gradInputActivity_.setTable(modules_.size());
  for (size_t i = 0; i < modules_.size(); ++i) gradIn[i] = childUpdateGradInput(i, in[i], g[i]);
  return gradInputActivity_;
}

void ParallelTable::accGradParametersActivity(const Activity& input, const Activity& gradOutput, float scale) {
  checkNotEmpty();
  const Table& in = checkItems(input, "input");
  const Table& g = checkItems(gradOutput, "gradOutput");
  for (size_t i = 0; i < modules_.size(); ++i) childAccGradParameters(i, in[i], g[i], scale);
}

}  // namespace nn
