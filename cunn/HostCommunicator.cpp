// HostCommunicator: rank-ordered sums and copies in host memory.
#include "cunn/HostCommunicator.h"

#include <algorithm>

#include "nn/Error.h"

namespace nn {

namespace {

void check(const std::vector<Tensor>& tensors, const char* what) {
  NN_CHECK(!tensors.empty(), "HostCommunicator." << what << ": expected at least one tensor");
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    NN_CHECK(t.device().isCpu(), "HostCommunicator." << what << ": tensor " << i << " lives on " << t.device().str()
                                                     << "; host copies need CPU devices");
    NN_CHECK(t.isContiguous() && t.sizes() == tensors[0].sizes(),
             "HostCommunicator." << what << ": tensor " << i << " has sizes " << t.shapeString()
                                 << ", expected contiguous " << tensors[0].shapeString());
  }
}

}  // namespace

void HostCommunicator::reduce(const std::vector<Tensor>& tensors) {
  check(tensors, "reduce");
  float* root = tensors[0].data();
  const int64_t n = tensors[0].numel();
  for (size_t r = 1; r < tensors.size(); ++r) {
    const float* other = tensors[r].data();
    for (int64_t i = 0; i < n; ++i) root[i] += other[i];
  }
}

void HostCommunicator::broadcast(const std::vector<Tensor>& tensors) {
  check(tensors, "broadcast");
  const float* root = tensors[0].data();
  const int64_t n = tensors[0].numel();
  for (size_t r = 1; r < tensors.size(); ++r) std::copy(root, root + n, tensors[r].data());
}

void HostCommunicator::allReduce(const std::vector<Tensor>& tensors) {
  reduce(tensors);
  broadcast(tensors);
}

}  // namespace nn
