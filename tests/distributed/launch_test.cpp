// nn::launchPlace, the process group's timeout from the environment, and the checksums of a
// build and of data (nn/distributed/Launch.h): each launcher's variables, in its order of
// precedence, and bad values refused naming the variable.
#include "nn/distributed/Launch.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "nn/distributed/ProcessGroup.h"
#include "nn/tensor/Error.h"

namespace {

const std::vector<const char*> kVariables{"OMPI_COMM_WORLD_RANK",
                                          "OMPI_COMM_WORLD_SIZE",
                                          "OMPI_COMM_WORLD_LOCAL_RANK",
                                          "OMPI_COMM_WORLD_LOCAL_SIZE",
                                          "SLURM_PROCID",
                                          "SLURM_NTASKS",
                                          "SLURM_LOCALID",
                                          "SLURM_NTASKS_PER_NODE",
                                          "PMI_RANK",
                                          "PMI_SIZE",
                                          "MPI_LOCALRANKID",
                                          "MPI_LOCALNRANKS",
                                          "NN_PROCESS_GROUP_TIMEOUT"};

// Clears the launchers' variables for a test case and puts back those it found.
class CleanEnvironment {
 public:
  CleanEnvironment() {
    for (const char* name : kVariables) {
      const char* value = std::getenv(name);
      saved_.push_back(value ? std::string(value) : std::string(1, '\0'));
      unsetenv(name);
    }
  }
  ~CleanEnvironment() {
    for (size_t i = 0; i < kVariables.size(); ++i)
      if (saved_[i] == std::string(1, '\0'))
        unsetenv(kVariables[i]);
      else
        setenv(kVariables[i], saved_[i].c_str(), 1);
  }

 private:
  std::vector<std::string> saved_;
};

void set(const char* name, const char* value) { setenv(name, value, 1); }

}  // namespace

TEST_CASE("launchPlace: none, Open MPI's mpirun, Slurm's srun, MPICH's Hydra", "[launch]") {
  CleanEnvironment clean;
  nn::LaunchPlace p = nn::launchPlace();
  CHECK(p.rank == 0);
  CHECK(p.size == 1);
  CHECK(p.localRank == 0);
  CHECK(p.localSize == 1);
  CHECK(p.launcher.empty());

  set("PMI_RANK", "5");
  set("PMI_SIZE", "8");
  set("MPI_LOCALRANKID", "1");
  set("MPI_LOCALNRANKS", "2");
  p = nn::launchPlace();
  CHECK(p.launcher == "PMI");
  CHECK((p.rank == 5 && p.size == 8 && p.localRank == 1 && p.localSize == 2));

  // srun (PMIx or PMI-2) sets Slurm's variables, which come before PMI's.
  set("SLURM_PROCID", "3");
  set("SLURM_NTASKS", "4");
  set("SLURM_LOCALID", "1");
  set("SLURM_NTASKS_PER_NODE", "4");
  p = nn::launchPlace();
  CHECK(p.launcher == "Slurm");
  CHECK((p.rank == 3 && p.size == 4 && p.localRank == 1 && p.localSize == 4));

  // mpirun inside a Slurm allocation: Open MPI's own numbering, not the allocation's.
  set("OMPI_COMM_WORLD_RANK", "6");
  set("OMPI_COMM_WORLD_SIZE", "12");
  set("OMPI_COMM_WORLD_LOCAL_RANK", "2");
  set("OMPI_COMM_WORLD_LOCAL_SIZE", "3");
  p = nn::launchPlace();
  CHECK(p.launcher == "Open MPI");
  CHECK((p.rank == 6 && p.size == 12 && p.localRank == 2 && p.localSize == 3));

  // Without a local rank, the first place of its host; without a local size, alone on it.
  unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  CHECK(nn::launchPlace().localRank == 0);
  CHECK(nn::launchPlace().localSize == 1);
}

TEST_CASE("launchPlace: a value that is not a number in range is refused, naming the variable", "[launch]") {
  CleanEnvironment clean;
  set("OMPI_COMM_WORLD_SIZE", "4");
  for (const char* rank : {"x", "", "1x", "-1", "4", "99999999999"}) {
    CAPTURE(rank);
    set("OMPI_COMM_WORLD_RANK", rank);
    CHECK_THROWS_WITH(nn::launchPlace(), Catch::Contains("OMPI_COMM_WORLD_RANK"));
  }
  set("OMPI_COMM_WORLD_RANK", "1");
  set("OMPI_COMM_WORLD_LOCAL_RANK", "4");
  CHECK_THROWS_WITH(nn::launchPlace(), Catch::Contains("OMPI_COMM_WORLD_LOCAL_RANK to be a whole number from 0 to 3"));
  set("OMPI_COMM_WORLD_LOCAL_SIZE", "0");
  CHECK_THROWS_WITH(nn::launchPlace(), Catch::Contains("OMPI_COMM_WORLD_LOCAL_SIZE to be a whole number from 1"));
  set("OMPI_COMM_WORLD_LOCAL_SIZE", "2");
  CHECK_THROWS_WITH(nn::launchPlace(), Catch::Contains("OMPI_COMM_WORLD_LOCAL_RANK to be a whole number from 0 to 1"));
  // More processes a host than the job has (a count asked for per node): the job's.
  unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  set("OMPI_COMM_WORLD_LOCAL_SIZE", "8");
  CHECK(nn::launchPlace().localSize == 4);
  unsetenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  unsetenv("OMPI_COMM_WORLD_SIZE");
  CHECK_THROWS_WITH(nn::launchPlace(), Catch::Contains("OMPI_COMM_WORLD_RANK is set but OMPI_COMM_WORLD_SIZE is not"));
  set("OMPI_COMM_WORLD_SIZE", "0");
  CHECK_THROWS_WITH(nn::launchPlace(), Catch::Contains("OMPI_COMM_WORLD_SIZE to be a whole number from 1"));
}

TEST_CASE("timeoutFromEnvironment: NN_PROCESS_GROUP_TIMEOUT in seconds, positive and finite", "[launch]") {
  CleanEnvironment clean;
  CHECK_FALSE(nn::timeoutFromEnvironment().has_value());
  set("NN_PROCESS_GROUP_TIMEOUT", "2.5");
  CHECK(nn::timeoutFromEnvironment().value() == 2.5);
  for (const char* bad : {"0", "-3", "inf", "nan", "", "10s"}) {
    CAPTURE(bad);
    set("NN_PROCESS_GROUP_TIMEOUT", bad);
    CHECK_THROWS_WITH(
        nn::timeoutFromEnvironment(),
        Catch::Contains("NN_PROCESS_GROUP_TIMEOUT to be a positive number of seconds, got '" + std::string(bad) + "'"));
  }
}

TEST_CASE("A process group starts with NN_PROCESS_GROUP_TIMEOUT's seconds, else 600", "[launch]") {
  // A group of this process alone, whose collectives have nothing to do.
  struct Alone : nn::ProcessGroup {
    int rank() const override { return 0; }
    int size() const override { return 1; }
    void startAllReduceSum(nn::Tensor&) override {}
    void progress() override {}
    void wait() override {}
    void broadcast(nn::Tensor&, int) override {}
    std::vector<std::string> allGather(const std::string& text) override { return {text}; }
    void barrier() override {}
  };
  CleanEnvironment clean;
  CHECK(Alone().timeoutSeconds() == 600);
  set("NN_PROCESS_GROUP_TIMEOUT", "7.5");
  CHECK(Alone().timeoutSeconds() == 7.5);
  set("NN_PROCESS_GROUP_TIMEOUT", "soon");
  CHECK_THROWS_WITH(Alone(), Catch::Contains("NN_PROCESS_GROUP_TIMEOUT"));
}

TEST_CASE("checksum64: the same bytes give the same value; a bit, a length or a seed changes it", "[launch]") {
  // 100 bytes: three rounds of the four 8-byte lanes and a tail of 4.
  std::vector<unsigned char> bytes(100);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 7 + 1);
  const uint64_t sum = nn::checksum64(bytes.data(), bytes.size());
  CHECK(nn::checksum64(bytes.data(), bytes.size()) == sum);
  CHECK(nn::checksum64(bytes.data(), bytes.size(), 1) != sum);
  CHECK(nn::checksum64(bytes.data(), bytes.size() - 1) != sum);
  CHECK(nn::checksum64(nullptr, 0) != nn::checksum64(nullptr, 0, 1));
  // Every single bit flipped, in the lanes and in the tail, gives another value.
  int same = 0;
  for (size_t i = 0; i < bytes.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      bytes[i] ^= static_cast<unsigned char>(1 << bit);
      same += nn::checksum64(bytes.data(), bytes.size()) == sum;
      bytes[i] ^= static_cast<unsigned char>(1 << bit);
    }
  CHECK(same == 0);
  // Two words swapped between lanes, and within a lane's order of words.
  std::swap(bytes[0], bytes[8]);
  CHECK(nn::checksum64(bytes.data(), bytes.size()) != sum);
}

TEST_CASE("buildIdentity: the program file's checksum, 16 hex digits, the same at each call", "[launch]") {
  const std::string& identity = nn::buildIdentity();
  REQUIRE(identity.size() == 16);
  CHECK(identity.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(nn::buildIdentity() == identity);
  CHECK(identity != "0000000000000000");
}
