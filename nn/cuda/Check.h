// Check macros for every CUDA runtime, cuBLAS, cuDNN and NCCL call: a failure is an
// nn::Error naming the call, the file and line, the current device and the library's message.
#pragma once

#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <nccl.h>

#include <string>

/// CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream));
#define CUDA_CHECK(call) ::nn::checkCuda((call), #call, __FILE__, __LINE__)
#define CUBLAS_CHECK(call) ::nn::checkCublas((call), #call, __FILE__, __LINE__)
#define CUDNN_CHECK(call) ::nn::checkCudnn((call), #call, __FILE__, __LINE__)
#define NCCL_CHECK(call) ::nn::checkNccl((call), #call, __FILE__, __LINE__)

namespace nn {

/// Throw the nn::Error for a failed call: "<library> error on cuda:N: <call> failed at
/// <file>:<line>: <the library's message>". The macros above call them through the checks.
[[noreturn]] void throwCudaError(cudaError_t status, const char* call, const char* file, int line);
[[noreturn]] void throwCublasError(cublasStatus_t status, const char* call, const char* file, int line);
[[noreturn]] void throwCudnnError(cudnnStatus_t status, const char* call, const char* file, int line);
[[noreturn]] void throwNcclError(ncclResult_t status, const char* call, const char* file, int line);

/// Throw unless `status` is success. Inline so that a successful call costs one comparison;
/// the message is built out of line.
inline void checkCuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) throwCudaError(status, call, file, line);
}
inline void checkCublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) throwCublasError(status, call, file, line);
}
inline void checkCudnn(cudnnStatus_t status, const char* call, const char* file, int line) {
  if (status != CUDNN_STATUS_SUCCESS) throwCudnnError(status, call, file, line);
}
inline void checkNccl(ncclResult_t status, const char* call, const char* file, int line) {
  if (status != ncclSuccess) throwNcclError(status, call, file, line);
}

/// "cuda:1" for the calling thread's current device, or why it cannot be read.
std::string currentDeviceName();

}  // namespace nn
