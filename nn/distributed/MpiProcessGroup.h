// nn::mpiProcessGroup: a ProcessGroup over an MPI communicator of the program's own. Only in
// builds with MPI (tools/bazel/mpi_configure.bzl); ProcessGroup::world() needs no MPI header.
#pragma once

#include <mpi.h>

#include <memory>

#include "nn/distributed/ProcessGroup.h"

namespace nn {

/// The processes of `comm` (which the group duplicates, so that its collectives never meet the
/// program's own). MPI must be initialised, with at least MPI_THREAD_SERIALIZED.
std::shared_ptr<ProcessGroup> mpiProcessGroup(MPI_Comm comm);

}  // namespace nn
