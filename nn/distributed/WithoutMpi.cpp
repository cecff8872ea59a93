// ProcessGroup::world() in a build without MPI: a clear error that says how to get it.
#include "nn/distributed/ProcessGroup.h"
#include "nn/tensor/Error.h"

namespace nn {

std::shared_ptr<ProcessGroup> ProcessGroup::world() {
  throw Error(
      "nn::ProcessGroup::world: this build has no MPI (tools/bazel/mpi_configure.bzl found no mpicxx): install "
      "Debian's openmpi-bin and libopenmpi-dev, or set MPI_HOME, and build again");
}

}  // namespace nn
