// nn::DistributedDataParallelTable: the module's passes, with the processes' collectives around
// them: at construction a check that every rank has the same model and rank 0's state for all;
// at each training forward rank 0's buffers; after each backward the gradients' sum.
#include "cunn/distributed/DistributedDataParallelTable.h"

#include <algorithm>
#include <sstream>

#include "nn/Error.h"

namespace nn {

namespace {

// The number of the first line where a and b differ, and those lines.
std::string firstDifference(const std::string& a, const std::string& b, int rankA, int rankB) {
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool moreA = static_cast<bool>(std::getline(sa, la));
    const bool moreB = static_cast<bool>(std::getline(sb, lb));
    if (!moreA && !moreB) return "";
    if (!moreA) la = "(nothing)";
    if (!moreB) lb = "(nothing)";
    if (la != lb || !moreA || !moreB) {
      std::ostringstream out;
      out << "line " << line << ": rank " << rankA << " has '" << la << "' where rank " << rankB << " has '" << lb
          << "'";
      return out.str();
    }
  }
}

}  // namespace

DistributedDataParallelTable::DistributedDataParallelTable(ModulePtr module, std::shared_ptr<ProcessGroup> group,
                                                           Options options)
    : group_(std::move(group)), options_(options) {
  NN_CHECK(module != nullptr, "nn.DistributedDataParallelTable: expected a module, got nullptr");
  NN_CHECK(group_ != nullptr, "nn.DistributedDataParallelTable: expected a process group, got nullptr");
  NN_CHECK(options_.bucketMegabytes > 0,
           "nn.DistributedDataParallelTable: expected a bucket size above 0 MB, got " << options_.bucketMegabytes);
  Container::add(std::move(module));
  checkSameModel();
  takeGradients();
  buffers_ = this->module()->buffers();
  broadcastState();
  meta_ = Tensor::zeros({3});
}

std::string DistributedDataParallelTable::describeForCheck(Module& module) {
  std::ostringstream out;
  out << module.toString() << "\n";
  for (const NamedTensor& t : module.stateDict()) out << t.name << " " << t.value.shapeString() << "\n";
  return out.str();
}

void DistributedDataParallelTable::checkSameModel() {
  const std::vector<std::string> models = group_->allGather(describeForCheck(*module()));
  for (size_t r = 1; r < models.size(); ++r)
    NN_CHECK(models[r] == models[0], "nn.DistributedDataParallelTable: rank "
                                         << r << "'s model differs from rank 0's, "
                                         << firstDifference(models[0], models[r], 0, static_cast<int>(r))
                                         << "; every rank must build the same model");
}

void DistributedDataParallelTable::takeGradients() {
  Tensor values;
  std::tie(values, flatGradients_) = getParameters();
  const auto [parameters, gradients] = this->parameters();
  firstGradient_ = gradients.empty() ? Tensor() : gradients[0];
  buckets_.clear();
  const auto bucket = std::max<int64_t>(1, static_cast<int64_t>(options_.bucketMegabytes * (1 << 20) / sizeof(float)));
  for (int64_t end = flatGradients_.numel(); end > 0; end -= bucket) {
    const int64_t start = std::max<int64_t>(0, end - bucket);
    buckets_.push_back(flatGradients_.narrow(0, start, end - start));
  }
}

void DistributedDataParallelTable::broadcastState() {
  Tensor values = getParameters().first;
  if (values.numel() > 0) group_->broadcast(values, 0);
  for (Tensor& b : buffers_)
    if (b.numel() > 0) group_->broadcast(b, 0);
}

const Activity& DistributedDataParallelTable::updateOutputActivity(const Activity& input) {
  if (isTraining()) {
    ++steps_;
    const Tensor& first = input.isTensor() ? input.tensor() : input[0].tensor();
    batch_ = first.dim() > 0 ? first.size(0) : 1;
    if (options_.buffers == BufferPolicy::BroadcastFirst)
      for (Tensor& b : buffers_)
        if (b.numel() > 0) group_->broadcast(b, 0);
  }
  return setOutput(childUpdateOutput(0, input));
}

const Activity& DistributedDataParallelTable::updateGradInputActivity(const Activity& input,
                                                                      const Activity& gradOutput) {
  return setGradInput(childUpdateGradInput(0, input, gradOutput));
}

void DistributedDataParallelTable::accGradParametersActivity(const Activity& input, const Activity& gradOutput,
                                                             float scale) {
  childAccGradParameters(0, input, gradOutput, scale);
  reduceGradients();
  if (options_.buffers == BufferPolicy::Average)
    for (Tensor& b : buffers_)
      if (b.numel() > 0) {
        group_->allReduceSum(b);
        b.mul_(1.f / static_cast<float>(group_->size()));
      }
}

void DistributedDataParallelTable::reduceGradients() {
  // Every rank at the same step, and the global batch: one small sum first.
  const auto step = static_cast<float>(steps_ % 1024);
  float* meta = meta_.data();
  meta[0] = static_cast<float>(batch_);
  meta[1] = step;
  meta[2] = step * step;
  group_->allReduceSum(meta_);
  const auto ranks = static_cast<float>(group_->size());
  NN_CHECK(meta[1] == ranks * step && meta[2] == ranks * step * step,
           "nn.DistributedDataParallelTable: rank " << group_->rank() << " is at training step " << steps_
                                                    << ", and another rank is not: every rank must call forward "
                                                       "and backward once per step");
  if (firstGradient_.numel() > 0 && firstGradient_.storage() != flatGradients_.storage()) takeGradients();
  if (flatGradients_.numel() == 0) return;
  // Averaged: rank r's gradient is the mean over its batch of n_r samples; weighted by
  // n_r / sum(n), their sum is the mean over the global batch.
  if (options_.average) flatGradients_.mul_(static_cast<float>(batch_) / meta[0]);
  for (Tensor& bucket : buckets_) group_->allReduceSum(bucket);
}

void DistributedDataParallelTable::setGradInputNeeded(bool needed) {
  Module::setGradInputNeeded(needed);
  module()->setGradInputNeeded(needed);
}

std::string DistributedDataParallelTable::toString() const {
  std::ostringstream header;
  header << typeName() << "(rank " << group_->rank() << " of " << group_->size() << ")";
  return describeChildren(header.str(), "");
}

}  // namespace nn
