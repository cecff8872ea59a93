// nn::DistributedDataParallelTable: the module's passes, with the processes' collectives around
// them: at construction a check that every rank has the same model and rank 0's state for all;
// at each training forward rank 0's buffers; in each backward the gradients' sum, bucket by
// bucket as the module's children finish their gradients.
//
// Note [One wait per step]
// A rank waits for the others once a step, after backward, for the gradients' last sums. The
// step's check (every rank at the same step, the global batch) is a sum started with backward
// and waited for with the gradients': averaging needs no global batch before the sums, since
// each rank multiplies its gradients by its own batch size before them and the sum is divided
// by the global batch after them (for shards of a power of two, the floats of weighting each
// rank by its share first). Waiting for the check before the first bucket, as this table once
// did, made every rank wait for the slowest at that point too: a second meeting a step. A rank
// out of step is still an nn::Error on every rank, after the sums and before any optimizer
// step.
#include "nn/distributed/DistributedDataParallelTable.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "nn/distributed/Launch.h"
#include "nn/parallel/DataParallelTable.h"
#include "nn/tensor/Error.h"

namespace nn {

namespace {

// The most the last bucket holds (Note [The last bucket]).
constexpr int64_t kLastBucketBytes = int64_t{1} << 20;

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
  NN_CHECK(options_.reduceType == DType::Float32 || options_.reduceType == DType::BFloat16,
           "nn.DistributedDataParallelTable: expected gradients reduced in float32 or bfloat16, got "
               << dtypeName(options_.reduceType));
  Container::add(std::move(module));
  checkSameRun();
  takeGradients();
  buffers_ = this->module()->buffers();
  broadcastState();
  meta_ = Tensor::zeros({3});
  statistics_ = std::make_unique<RankStatistics>(*group_, options_);
}

std::string DistributedDataParallelTable::describeForCheck(Module& module) {
  std::ostringstream out;
  out << module.toString() << "\n";
  // The kind of device decides how the sums run (MPI or NCCL), which must be the same on every
  // rank; the device's number may differ (one GPU per rank of a host).
  for (const NamedTensor& t : module.stateDict())
    out << t.name << " " << t.value.shapeString() << " on " << deviceTypeName(t.value.device().type()) << "\n";
  return out.str();
}

void DistributedDataParallelTable::checkSameRun() {
  // The program's file first: ranks of another build (other code, compiler or flags) may compute
  // other floats or lay their messages out otherwise.
  const std::vector<std::string> configurations =
      group_->allGather("program file checksum " + buildIdentity() + "\n" + options_.configuration);
  for (size_t r = 1; r < configurations.size(); ++r)
    NN_CHECK(configurations[r] == configurations[0],
             "nn.DistributedDataParallelTable: rank "
                 << r << "'s configuration differs from rank 0's, "
                 << firstDifference(configurations[0], configurations[r], 0, static_cast<int>(r))
                 << "; every rank must be started with the same");
  const std::vector<std::string> models = group_->allGather(describeForCheck(*module()));
  for (size_t r = 1; r < models.size(); ++r)
    NN_CHECK(models[r] == models[0], "nn.DistributedDataParallelTable: rank "
                                         << r << "'s model differs from rank 0's, "
                                         << firstDifference(models[0], models[r], 0, static_cast<int>(r))
                                         << "; every rank must build the same model");
}

namespace {

// How often each module occurs in the tree under `m` (a DataParallelTable's replicas are its own).
void countUses(Module& m, std::unordered_map<Module*, int>& uses) {
  ++uses[&m];
  if (dynamic_cast<DataParallelTable*>(&m) != nullptr) return;
  for (const ModulePtr& child : m.children()) countUses(*child, uses);
}

}  // namespace

void DistributedDataParallelTable::takeGradients() {
  Tensor values;
  std::tie(values, flatGradients_) = getParameters();
  const auto [parameters, gradients] = this->parameters();
  firstGradient_ = gradients.empty() ? Tensor() : gradients[0];

  // Note [The last bucket]
  // The first parameters' gradients, which backward finishes last, up to the last parameter's end
  // within kLastBucketBytes (or the bucket size, where smaller), are a bucket of their own, cut off
  // before the rest is cut into buckets from the end: no backward overlaps the sum of the last
  // bucket, so it had better be small. Cut from the end alone, the last bucket was whatever was left
  // over: all of LeNet's 431,080 gradients in one bucket of 25 MB, summed after its whole backward,
  // where now its Linear layers' 405,510 are summed during the convolutions' backward and 25,570
  // after it.
  const auto size = std::max<int64_t>(1, static_cast<int64_t>(options_.bucketMegabytes * (1 << 20) / sizeof(float)));
  const int64_t lastLimit = std::min<int64_t>(size, kLastBucketBytes / static_cast<int64_t>(sizeof(float)));
  int64_t last = 0;  // the last bucket's end: a parameter's end in the flat gradient, or 0
  for (const Tensor& g : gradients) {
    const int64_t end = g.storageOffset() - flatGradients_.storageOffset() + g.numel();
    if (g.storage() == flatGradients_.storage() && end <= lastLimit) last = std::max(last, end);
  }
  buckets_.clear();
  for (int64_t end = flatGradients_.numel(); end > last; end -= size) {
    const int64_t start = std::max<int64_t>(last, end - size);
    buckets_.push_back({flatGradients_.narrow(0, start, end - start), start, 0});
  }
  if (last > 0) buckets_.push_back({flatGradients_.narrow(0, 0, last), 0, 0});

  // Each parameter's place in the flat gradient, and its pieces in the buckets.
  std::map<int64_t, size_t> parameterAt;  // offset -> index
  pieces_.clear();
  pieceStart_.assign(1, 0);
  int64_t covered = 0;  // every element once: else no bucket starts before the end
  for (size_t p = 0; p < gradients.size(); ++p) {
    const int64_t offset = gradients[p].storageOffset() - flatGradients_.storageOffset();
    const int64_t end = offset + gradients[p].numel();
    parameterAt[offset] = p;
    covered += gradients[p].numel();
    for (size_t b = 0; b < buckets_.size(); ++b) {
      const int64_t bucketEnd = buckets_[b].start + buckets_[b].gradients.numel();
      const int64_t count = std::min(end, bucketEnd) - std::max(offset, buckets_[b].start);
      if (count > 0) pieces_.push_back({b, count});
    }
    pieceStart_.push_back(pieces_.size());
  }
  parameterDone_.assign(gradients.size(), 0);

  // The modules whose accGradParameters finishes their parameters' gradients.
  parametersOf_.clear();
  if (parameterAt.size() != gradients.size() || covered != flatGradients_.numel()) return;
  std::unordered_map<Module*, int> uses;
  countUses(*module(), uses);
  for (const auto& [m, count] : uses) {
    if (count != 1) continue;
    std::vector<size_t>& indices = parametersOf_[m];
    for (const Tensor& g : m->parameters().second) {
      const auto at = parameterAt.find(g.storageOffset() - flatGradients_.storageOffset());
      if (g.storage() != flatGradients_.storage() || at == parameterAt.end()) {
        parametersOf_.erase(m);
        break;
      }
      indices.push_back(at->second);
    }
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
    const int64_t samples = first.dim() > 0 ? first.size(0) : 1;
    batch_ = accumulating_ ? batch_ + samples : samples;
    statistics_->setSamples(samples);
    if (options_.buffers == BufferPolicy::BroadcastFirst)
      for (Tensor& b : buffers_)
        if (b.numel() > 0) group_->broadcast(b, 0);
  }
  ScopedStatisticsGroup ranks(statistics_.get());
  return setOutput(childUpdateOutput(0, input));
}

const Activity& DistributedDataParallelTable::updateGradInputActivity(const Activity& input,
                                                                      const Activity& gradOutput) {
  // The step's check goes on while the module computes its gradInput.
  if (isTraining() && sync_) beginStep();
  ScopedStatisticsGroup ranks(statistics_.get());
  return setGradInput(childUpdateGradInput(0, input, gradOutput));
}

void DistributedDataParallelTable::accGradParametersActivity(const Activity& input, const Activity& gradOutput,
                                                             float scale) {
  if (!sync_) {
    // A micro-batch of a step still to come: this rank's gradients alone, no collective.
    childAccGradParameters(0, input, gradOutput, scale);
    accumulating_ = true;
    return;
  }
  accumulating_ = false;
  if (!stepBegun_) beginStep();
  stepBegun_ = false;
  {
    // Told of each child whose gradients are done (and last of the module itself).
    ScopedGradientObserver observer(this);
    childAccGradParameters(0, input, gradOutput, scale);
  }
  // Whatever no module reported (parameters used twice): now final.
  for (Bucket& bucket : buckets_) bucket.remaining = 0;
  startReadyBuckets();
  {
    ScopedTimer timer(sumWait_);
    group_->wait();
  }
  checkStep();
  if (options_.average && flatGradients_.numel() > 0) flatGradients_.mul_(1.f / meta_.data()[0]);
  if (options_.buffers == BufferPolicy::Average)
    for (Tensor& b : buffers_)
      if (b.numel() > 0) {
        group_->allReduceSum(b);
        b.mul_(1.f / static_cast<float>(group_->size()));
      }
}

void DistributedDataParallelTable::RankStatistics::allReduceSum(double* values, size_t n) {
  stage_.resize_({2 * static_cast<int64_t>(n)});
  float* stage = stage_.data();
  for (size_t k = 0; k < n; ++k) {
    stage[k] = static_cast<float>(values[k]);
    stage[n + k] = static_cast<float>(values[k] - static_cast<double>(stage[k]));
  }
  group_.allReduceSum(stage_);
  for (size_t k = 0; k < n; ++k) values[k] = static_cast<double>(stage[k]) + static_cast<double>(stage[n + k]);
}

void DistributedDataParallelTable::RankStatistics::allReduceGradientSum(double* values, size_t n) {
  if (!options_.average) {
    allReduceSum(values, n);
    return;
  }
  // A rank of no samples has no gradient sums (and no backward through them).
  const auto weight = static_cast<double>(std::max<int64_t>(samples_, 1));
  for (size_t k = 0; k < n; ++k) values[k] *= weight;
  allReduceSum(values, n);
  for (size_t k = 0; k < n; ++k) values[k] /= weight;
}

void DistributedDataParallelTable::beginStep() {
  if (firstGradient_.numel() > 0 && firstGradient_.storage() != flatGradients_.storage()) takeGradients();
  for (Bucket& bucket : buckets_) bucket.remaining = bucket.gradients.numel();
  nextBucket_ = 0;
  std::fill(parameterDone_.begin(), parameterDone_.end(), 0);
  const auto step = static_cast<float>(steps_ % 1024);
  float* meta = meta_.data();
  meta[0] = static_cast<float>(batch_);
  meta[1] = step;
  meta[2] = step * step;
  group_->startAllReduceSum(meta_);
  stepBegun_ = true;
}

void DistributedDataParallelTable::checkStep() {
  const float* meta = meta_.data();
  const auto step = static_cast<float>(steps_ % 1024);
  const auto ranks = static_cast<float>(group_->size());
  NN_CHECK(meta[1] == ranks * step && meta[2] == ranks * step * step,
           "nn.DistributedDataParallelTable: rank " << group_->rank() << " is at training step " << steps_
                                                    << ", and another rank is not: every rank must call forward "
                                                       "and backward once per step");
  // Every rank sees the same sum, so every rank refuses alike: a step of no samples has no
  // gradient to average (0 / 0), as a DataParallelTable refuses an empty batch.
  NN_CHECK(meta[0] > 0, "nn.DistributedDataParallelTable: the batch of every rank is empty (0 samples over "
                            << group_->size() << " ranks) at training step " << steps_
                            << ": a step needs a sample on some rank");
}

void DistributedDataParallelTable::gradientsDone(const Module& m) {
  const auto found = parametersOf_.find(&m);
  if (found == parametersOf_.end()) return;
  for (const size_t p : found->second) {
    if (parameterDone_[p]) continue;
    parameterDone_[p] = 1;
    for (size_t i = pieceStart_[p]; i < pieceStart_[p + 1]; ++i)
      buckets_[pieces_[i].bucket].remaining -= pieces_[i].count;
  }
  startReadyBuckets();
  group_->progress();
}

void DistributedDataParallelTable::startReadyBuckets() {
  for (; nextBucket_ < buckets_.size() && buckets_[nextBucket_].remaining == 0; ++nextBucket_) {
    Tensor& gradients = buckets_[nextBucket_].gradients;
    // Averaged: rank r's gradient is the mean over its batch of n_r samples; their sum
    // weighted by n_r, divided by sum(n) after the sums, is the mean over the global batch.
    if (options_.average && batch_ != 1) gradients.mul_(static_cast<float>(batch_));
    if (options_.reduceType == DType::BFloat16)
      group_->startAllReduceSumBfloat16(gradients);
    else
      group_->startAllReduceSum(gradients);
  }
}

void DistributedDataParallelTable::setGradInputNeeded(bool needed) {
  Module::setGradInputNeeded(needed);
  module()->setGradInputNeeded(needed);
}

std::string DistributedDataParallelTable::profileDetail(const PassTime& step) const {
  if (sumWait_.calls == 0) return {};
  const double perStep = 1e3 / static_cast<double>(std::max<int64_t>(step.calls, 1));
  char line[256];
  std::snprintf(line, sizeof line, "%s(rank %d of %d), ms per step: %.3f waiting after backward ", typeName().c_str(),
                group_->rank(), group_->size(), perStep * sumWait_.seconds);
  return std::string(line) + "for the gradients' last sums (the other ranks' backward, then the sums)\n";
}

void DistributedDataParallelTable::resetProfileDetail() { sumWait_ = PassTime(); }

std::string DistributedDataParallelTable::toString() const {
  std::ostringstream header;
  header << typeName() << "(rank " << group_->rank() << " of " << group_->size() << ")";
  return describeChildren(header.str(), "");
}

}  // namespace nn
