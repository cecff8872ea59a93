// HostCommunicator: collectives for devices whose memory the host reads directly (logical
// CPU devices): sums and copies in rank order, so results do not depend on timing.
#pragma once

#include "cunn/Communicator.h"

namespace nn {

class HostCommunicator : public Communicator {
 public:
  void reduce(const std::vector<Tensor>& tensors) override;
  void broadcast(const std::vector<Tensor>& tensors) override;
  void allReduce(const std::vector<Tensor>& tensors) override;
  std::string name() const override { return "host copies"; }
};

}  // namespace nn
