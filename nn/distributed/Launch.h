// What a launcher tells the process it starts (Open MPI's mpirun, Slurm's srun, MPICH's Hydra):
// its rank, the number of processes, its place on its host (the GPU a rank takes), read from the
// environment before MPI starts; the process group's timeout from NN_PROCESS_GROUP_TIMEOUT; and
// the checksums that let the ranks of one job check that they run one build on the same data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace nn {

/// This process's place in a job, as its launcher's environment gives it.
struct LaunchPlace {
  /// 0 .. size - 1.
  int rank = 0;
  /// The number of processes of the job; 1 where no launcher started this process.
  int size = 1;
  /// The place among the job's processes on this host, 0 .. : the GPU a rank of a host takes.
  int localRank = 0;
  /// The number of the job's processes on this host: 1 where the launcher does not say, at most size.
  int localSize = 1;
  /// Which environment said so: "Open MPI", "Slurm", "PMI" or "" (none).
  std::string launcher;
};

/// Reads the launcher's environment: Open MPI's OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK and
/// _LOCAL_SIZE (mpirun), else Slurm's SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID and
/// SLURM_NTASKS_PER_NODE (srun, PMIx or PMI-2), else PMI_RANK, PMI_SIZE, MPI_LOCALRANKID and
/// MPI_LOCALNRANKS (MPICH's Hydra). A process no launcher started gets {0, 1, 0, 1, ""}. A value
/// that is not a number in range is an nn::Error naming the variable.
LaunchPlace launchPlace();

/// NN_PROCESS_GROUP_TIMEOUT, the seconds a collective waits for the other ranks (every
/// ProcessGroup starts with it), where it is set; an nn::Error unless it is a positive, finite
/// number.
std::optional<double> timeoutFromEnvironment();

/// A 64-bit checksum of `size` bytes, chained through `seed` (a previous checksum): the same bytes
/// give the same value on every host of one byte order. Not a cryptographic hash: it tells
/// accidentally different data apart, at several GB/s.
uint64_t checksum64(const void* data, size_t size, uint64_t seed = 0);

/// The running program's build: the checksum of its executable file (/proc/self/exe), as 16 hex
/// digits, computed once. The file itself, not a commit stamped at build time: it tells apart
/// builds of one commit with other compilers, flags or uncommitted changes, needs no version
/// control at build time, and is read offline. "unknown" where the file cannot be read.
const std::string& buildIdentity();

}  // namespace nn
