// The steps of data-parallel training: scatter, gather, reduce gradients, broadcast parameters.
#include "nn/parallel/DataParallelSteps.h"

#include <algorithm>

#include "nn/tensor/Error.h"

namespace nn {

namespace {

// Scratch for the sizes handed to resize_, one per thread: each device's thread scatters its
// own slice, and after the first step the vector has the capacity it needs, so a steady step
// allocates nothing.
std::vector<int64_t>& sizesScratch() {
  thread_local std::vector<int64_t> sizes;
  return sizes;
}

}  // namespace

// --- scatter -------------------------------------------------------------------------

void splitBatch(int64_t rows, size_t deviceCount, std::vector<Slice>& slices) {
  NN_CHECK(rows > 0 && deviceCount > 0,
           "nn::splitBatch: expected rows and devices, got " << rows << " rows over " << deviceCount << " devices");
  const int64_t parts = std::min<int64_t>(rows, static_cast<int64_t>(deviceCount));
  const int64_t base = rows / parts;
  const int64_t remainder = rows % parts;
  slices.resize(static_cast<size_t>(parts));
  int64_t start = 0;
  for (int64_t i = 0; i < parts; ++i) {
    Slice& s = slices[static_cast<size_t>(i)];
    s.start = start;
    s.length = base + (i < remainder ? 1 : 0);
    start += s.length;
  }
}

const Tensor& scatterSlice(const Tensor& src, int dim, Slice slice, const Device& device, Tensor& into) {
  std::vector<int64_t>& sizes = sizesScratch();
  sizes = src.sizes();
  sizes[dim] = slice.length;
  into.resize_(sizes, device);
  copyAlong(into, 0, src, slice.start, dim, slice.length);
  return into;
}

const Activity& scatterActivity(const Activity& src, int dim, Slice slice, const Device& device, Activity& into) {
  if (src.isTensor() && src.tensor().numel() == 0) {
    // An empty tensor of a table goes to every replica as it is (Torch7's DataParallelTable).
    into.setTensor().resize_(src.tensor().sizes(), device);
    return into;
  }
  if (src.isTensor()) {
    scatterSlice(src.tensor(), dim, slice, device, into.setTensor());
    return into;
  }
  Table& t = into.setTable(src.size());
  for (size_t i = 0; i < src.size(); ++i) scatterActivity(src[i], dim, slice, device, t[i]);
  return into;
}

bool scattersInOneCall(const Activity& src, int dim, const Device& first) {
  return dim == 0 && src.isTensor() && src.tensor().numel() > 0 && src.tensor().device() == first;
}

void scatterInOneCall(const Tensor& src, const std::vector<Slice>& slices, const std::vector<Device>& devices,
                      Communicator& communicator, std::vector<Activity>& into, std::vector<Tensor>& parts) {
  std::vector<int64_t>& sizes = sizesScratch();
  sizes = src.sizes();
  parts.clear();
  for (size_t i = 0; i < devices.size(); ++i) {
    sizes[0] = i < slices.size() ? slices[i].length : 0;
    Tensor& part = into[i].setTensor();
    part.resize_(sizes, devices[i]);
    parts.push_back(part);
  }
  communicator.scatter(src, parts);
}

namespace {

// The rows of the first tensor of `a` (-1 where it has none yet), checked against every other.
// An empty tensor inside a table is not split: every replica gets it.
void checkRows(const Activity& a, int dim, int64_t& rows, const Activity& whole) {
  if (a.isTable()) {
    for (const Activity& item : a.table())
      if (item.isTable() || item.tensor().numel() > 0) checkRows(item, dim, rows, whole);
    return;
  }
  const Tensor& t = a.tensor();
  NN_CHECK(t.dim() > dim && t.size(dim) > 0,
           "expected input with a non-empty dimension " << dim << " to split, got " << whole.describe());
  if (rows < 0) rows = t.size(dim);
  NN_CHECK(t.size(dim) == rows, "expected every tensor of the input to have " << rows << " rows along dimension " << dim
                                                                              << ", got " << whole.describe());
}

}  // namespace

int64_t rowsOf(const Activity& input, int dim) {
  int64_t rows = -1;
  checkRows(input, dim, rows, input);
  NN_CHECK(rows > 0, "expected a tensor in the input to split, got " << input.describe());
  return rows;
}

void contiguousActivity(const Activity& a, Activity& into) {
  if (a.isTensor()) {
    into = a.tensor().contiguous();
    return;
  }
  Table& t = into.setTable(a.size());
  for (size_t i = 0; i < a.size(); ++i) contiguousActivity(a[i], t[i]);
}

// --- gather --------------------------------------------------------------------------

void gatherParts(const std::vector<const Tensor*>& parts, int dim, const std::vector<Device>& devices, Tensor& into) {
  joinAlong(parts, dim, devices[0], into, sizesScratch(),
            [&](size_t i) { return "nn::gatherParts: the part from " + devices[i].str(); });
}

void ActivityGather::operator()(const std::vector<const Activity*>& parts, int dim, const std::vector<Device>& devices,
                                Activity& into) {
  if (levels_.empty()) levels_.resize(1);
  levels_[0].assign(parts.begin(), parts.end());
  gatherAt(0, dim, devices, into);
}

void ActivityGather::gatherAt(size_t depth, int dim, const std::vector<Device>& devices, Activity& into) {
  const std::vector<const Activity*>& parts = levels_[depth];
  const Activity& first = *parts[0];
  for (size_t r = 1; r < parts.size(); ++r)
    NN_CHECK(parts[r]->isTable() == first.isTable() && (first.isTensor() || parts[r]->size() == first.size()),
             "nn::gatherParts: the part from " << devices[r].str() << " is " << parts[r]->describe()
                                               << ", which is not alike " << first.describe());
  if (first.isTensor() && std::all_of(parts.begin(), parts.end(), [](const Activity* p) {
        return p->isTensor() && p->tensor().numel() == 0;
      })) {
    // What the replicas made of an empty tensor they each got whole: empty.
    into.setTensor().resize_(first.tensor().sizes(), devices[0]);
    return;
  }
  if (first.isTensor()) {
    tensors_.clear();
    for (const Activity* p : parts) tensors_.push_back(&p->tensor());
    gatherParts(tensors_, dim, devices, into.setTensor());
    return;
  }
  if (levels_.size() <= depth + 1) levels_.resize(depth + 2);
  Table& t = into.setTable(first.size());
  for (size_t i = 0; i < first.size(); ++i) {
    // Indexed afresh each time: a deeper call may grow levels_, moving the lists.
    std::vector<const Activity*>& below = levels_[depth + 1];
    below.clear();
    for (const Activity* p : levels_[depth]) below.push_back(&(*p)[i]);
    gatherAt(depth + 1, dim, devices, t[i]);
  }
}

// --- the replicas' tensors -----------------------------------------------------------

void ReplicaTensors::flatten(const std::vector<ModulePtr>& replicas) {
  replicas_.resize(replicas.size());
  for (size_t r = 0; r < replicas.size(); ++r) {
    auto [values, gradients] = replicas[r]->getParameters();
    replicas_[r].flatValues = values;
    replicas_[r].flatGradients = gradients;
  }
}

// The lists are collected again at every call: a replica's parameters may have been rebound
// since the last (flattened by an outer module, moved, loaded).
void ReplicaTensors::collect(const std::vector<ModulePtr>& replicas) {
  replicas_.resize(replicas.size());
  for (size_t r = 0; r < replicas.size(); ++r) {
    Replica& t = replicas_[r];
    t.values.clear();
    t.gradients.clear();
    t.buffers.clear();
    replicas[r]->collectParameters(t.values, t.gradients);
    // A module used in two places (so in each replica, clone() keeping it one) is summed once.
    dropRepeatedParameters(t.values, t.gradients);
    NN_CHECK(t.values.size() == replicas_[0].values.size(),
             "DataParallelTable: replica " << r << " has " << t.values.size() << " parameter tensors, the first "
                                           << replicas_[0].values.size()
                                           << "; the replicas' modules must match the first's, shared ones included");
    replicas[r]->collectBuffers(t.buffers);
    // Without parameters the flat buffers are empty tensors on the default device, not the
    // replica's; the lists, empty too, make no call at all.
    t.flat = !t.values.empty() && isFlatView(t.values, t.flatValues) && isFlatView(t.gradients, t.flatGradients);
  }
}

void ReplicaTensors::forEachGroup(const std::vector<ModulePtr>& replicas, Kind kind,
                                  FunctionRef<void(const std::vector<Tensor>&)> collective) {
  collect(replicas);
  const size_t count = replicas.size();
  group_.resize(count);
  bool flat = kind != Kind::Buffers;
  for (size_t r = 0; r < count; ++r) flat = flat && replicas_[r].flat;
  if (flat) {
    for (size_t r = 0; r < count; ++r)
      group_[r] = kind == Kind::Values ? replicas_[r].flatValues : replicas_[r].flatGradients;
    collective(group_);
    return;
  }
  auto list = [&](size_t r) -> const std::vector<Tensor>& {
    return kind == Kind::Values      ? replicas_[r].values
           : kind == Kind::Gradients ? replicas_[r].gradients
                                     : replicas_[r].buffers;
  };
  for (size_t k = 0; k < list(0).size(); ++k) {
    for (size_t r = 0; r < count; ++r) group_[r] = list(r)[k];
    collective(group_);
  }
}

// --- reduce gradients, broadcast parameters ------------------------------------------

void reduceGradients(const std::vector<ModulePtr>& replicas, Communicator& communicator, ReplicaTensors& tensors) {
  if (replicas.size() < 2) return;
  tensors.forEachGroup(replicas, ReplicaTensors::Kind::Gradients,
                       [&](const std::vector<Tensor>& group) { communicator.reduce(group); });
}

void broadcastParameters(const std::vector<ModulePtr>& replicas, Communicator& communicator, ReplicaTensors& tensors,
                         BufferPolicy buffers) {
  if (replicas.size() < 2) return;
  auto broadcast = [&](const std::vector<Tensor>& group) { communicator.broadcast(group); };
  tensors.forEachGroup(replicas, ReplicaTensors::Kind::Values, broadcast);
  if (buffers == BufferPolicy::Average)
    averageBuffers(replicas, communicator, tensors);
  else
    tensors.forEachGroup(replicas, ReplicaTensors::Kind::Buffers, broadcast);
}

void averageBuffers(const std::vector<ModulePtr>& replicas, Communicator& communicator, ReplicaTensors& tensors) {
  if (replicas.size() < 2) return;
  const float share = 1.0f / static_cast<float>(replicas.size());
  tensors.forEachGroup(replicas, ReplicaTensors::Kind::Buffers, [&](const std::vector<Tensor>& group) {
    communicator.allReduce(group);
    for (const Tensor& t : group) Tensor(t).mul_(share);
  });
}

}  // namespace nn
