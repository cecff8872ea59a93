// PeerCommunicator: reduce by copies to the first device and an add kernel there.
#include "nn/cuda/PeerCommunicator.h"

#include "nn/cuda/CudaBackend.h"
#include "nn/cuda/DeviceGuard.h"
#include "nn/cuda/Kernels.h"

namespace nn {

PeerCommunicator::PeerCommunicator(std::vector<Device> devices) : devices_(std::move(devices)) {
  checkCudaDevices(devices_, "PeerCommunicator");
}

void PeerCommunicator::reduce(const std::vector<Tensor>& tensors) {
  checkCollectiveTensors(tensors, devices_, "PeerCommunicator.reduce");
  const int64_t n = tensors[0].numel();
  if (n == 0 || tensors.size() < 2) return;
  const int root = devices_[0].index();
  CudaBackend& backend = CudaBackend::instance();
  incoming_.resize_({n}, devices_[0]);
  for (size_t r = 1; r < tensors.size(); ++r) {
    // The copy waits for the previous add, which reads incoming_, or is queued behind it on
    // the first device's stream (Note [One stream per device]).
    incoming_.copy_(tensors[r]);
    DeviceGuard guard(root);
    launchAdd(tensors[0].rawData(), incoming_.rawData(), static_cast<size_t>(n), backend.stream(root));
  }
}

void PeerCommunicator::broadcast(const std::vector<Tensor>& tensors) {
  checkCollectiveTensors(tensors, devices_, "PeerCommunicator.broadcast");
  for (size_t r = 1; r < tensors.size(); ++r) {
    Tensor destination = tensors[r];
    destination.copy_(tensors[0]);
  }
}

void PeerCommunicator::scatter(const Tensor& source, const std::vector<Tensor>& parts) {
  checkScatterTensors(source, parts, devices_, "PeerCommunicator.scatter");
  CudaBackend& backend = CudaBackend::instance();
  const float* from = source.rawData();
  for (size_t r = 0; r < parts.size(); ++r) {
    const int64_t n = parts[r].numel();
    const StridedView view = StridedView::contiguous(n);
    backend.copy(parts[r].rawData(), devices_[r], view, from, devices_[0], view, n);
    from += n;
  }
}

void PeerCommunicator::allReduce(const std::vector<Tensor>& tensors) {
  reduce(tensors);
  broadcast(tensors);
}

}  // namespace nn
