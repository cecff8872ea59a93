// makeNcclGroup in a build without CUDA, which has no CUDA tensors to sum: a clear error.
#include "nn/distributed/NcclGroup.h"
#include "nn/tensor/Error.h"

namespace nn {

std::unique_ptr<NcclGroup> makeNcclGroup(Device device, int, int, FunctionRef<void(void*, size_t)>, NcclDeadline) {
  throw Error("nn.ProcessGroup: a tensor on " + device.str() + " in a build without CUDA");
}

}  // namespace nn
