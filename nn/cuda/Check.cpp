// The messages of the CUDA check macros.
#include "nn/cuda/Check.h"

#include <sstream>
#include <string>

#include "nn/tensor/Error.h"

namespace nn {

namespace {

[[noreturn]] void raise(const char* library, const char* call, const char* file, int line, const std::string& what) {
  std::ostringstream message;
  message << library << " error on " << currentDeviceName() << ": " << call << " failed at " << file << ":" << line
          << ": " << what;
  throw Error(message.str());
}

}  // namespace

std::string currentDeviceName() {
  int device = -1;
  const cudaError_t status = cudaGetDevice(&device);
  if (status != cudaSuccess) {
    // Reading the device must not leave its own failure behind as the thread's last error.
    cudaGetLastError();
    return std::string("no current device (") + cudaGetErrorName(status) + ")";
  }
  return "cuda:" + std::to_string(device);
}

void throwCudaError(cudaError_t status, const char* call, const char* file, int line) {
  // Clears the error if it is not sticky, so that later calls do not report it again.
  cudaGetLastError();
  raise("CUDA", call, file, line,
        std::string(cudaGetErrorString(status)) + " (" + cudaGetErrorName(status) + ", " +
            std::to_string(static_cast<int>(status)) + ")");
}

void throwCublasError(cublasStatus_t status, const char* call, const char* file, int line) {
  raise("cuBLAS", call, file, line,
        std::string(cublasGetStatusString(status)) + " (" + cublasGetStatusName(status) + ")");
}

void throwCudnnError(cudnnStatus_t status, const char* call, const char* file, int line) {
  char detail[1024] = "";
  cudnnGetLastErrorString(detail, sizeof(detail));
  std::string what = cudnnGetErrorString(status);
  if (detail[0] != '\0') what += std::string(": ") + detail;
  raise("cuDNN", call, file, line, what);
}

void throwNcclError(ncclResult_t status, const char* call, const char* file, int line) {
  std::string what = ncclGetErrorString(status);
  // The last error's details, when NCCL kept any (for instance which peer failed).
  const char* detail = ncclGetLastError(nullptr);
  if (detail != nullptr && detail[0] != '\0') what += std::string(": ") + detail;
  raise("NCCL", call, file, line, what);
}

}  // namespace nn
