// Small CUDA helpers for the streaming backend: errors as Status, owning device / pinned
// allocations, streams and events. Included by cuda_backend.cu only.
#pragma once

#include <cuda_runtime.h>
#include <nvcomp/shared_types.h>

#include <memory>
#include <string>

#include "tessera/core/status.h"

namespace tessera::stream::cuda_internal {

inline Status CudaError(cudaError_t err, const std::string& what) {
  const ErrorKind kind = err == cudaErrorMemoryAllocation ? ErrorKind::kOutOfResources : ErrorKind::kIo;
  return Status(kind, "CUDA backend: " + what + ": " + cudaGetErrorString(err));
}

#define TESSERA_CUDA_TRY(expr, what)                         \
  do {                                                       \
    const cudaError_t tessera_cuda_err_ = (expr);            \
    if (tessera_cuda_err_ != cudaSuccess) return CudaError(tessera_cuda_err_, what); \
  } while (0)

#define TESSERA_NVCOMP_TRY(expr, what)                                                            \
  do {                                                                                            \
    const nvcompStatus_t tessera_nvcomp_st_ = (expr);                                             \
    if (tessera_nvcomp_st_ != nvcompSuccess)                                                       \
      return Status(ErrorKind::kIo, std::string("CUDA backend: nvcomp ") + (what) + " failed with status " + \
                                        std::to_string(static_cast<int>(tessera_nvcomp_st_)));    \
  } while (0)

// Owning device / pinned allocations.
struct DeviceFree {
  void operator()(void* p) const { cudaFree(p); }
};
struct PinnedFree {
  void operator()(void* p) const { cudaFreeHost(p); }
};
template <typename T>
using DeviceArray = std::unique_ptr<T, DeviceFree>;
template <typename T>
using PinnedArray = std::unique_ptr<T, PinnedFree>;

template <typename T>
Status AllocDevice(size_t count, DeviceArray<T>* out, const std::string& what) {
  void* p = nullptr;
  TESSERA_CUDA_TRY(cudaMalloc(&p, std::max<size_t>(count, 1) * sizeof(T)), "allocating " + what);
  out->reset(static_cast<T*>(p));
  return Status::Ok();
}
template <typename T>
Status AllocPinned(size_t count, PinnedArray<T>* out, const std::string& what) {
  void* p = nullptr;
  TESSERA_CUDA_TRY(cudaMallocHost(&p, std::max<size_t>(count, 1) * sizeof(T)), "allocating pinned " + what);
  out->reset(static_cast<T*>(p));
  return Status::Ok();
}

struct StreamFree {
  void operator()(CUstream_st* s) const { cudaStreamDestroy(s); }
};
struct EventFree {
  void operator()(CUevent_st* e) const { cudaEventDestroy(e); }
};
using StreamHandle = std::unique_ptr<CUstream_st, StreamFree>;
using EventHandle = std::unique_ptr<CUevent_st, EventFree>;

inline Status MakeStream(StreamHandle* out) {
  cudaStream_t s;
  TESSERA_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "creating a stream");
  out->reset(s);
  return Status::Ok();
}
inline Status MakeEvent(EventHandle* out) {
  cudaEvent_t e;
  TESSERA_CUDA_TRY(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "creating an event");
  out->reset(e);
  return Status::Ok();
}

}  // namespace tessera::stream::cuda_internal
