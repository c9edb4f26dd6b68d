#include "backends/cuda/evaluator/device_arena.hpp"

#include <cuda_runtime_api.h>

#include "backends/cuda/device_names.hpp"

namespace kevolve::cuda {

DeviceArena::~DeviceArena() {
  if (base_) cudaFree(base_);
}

Status DeviceArena::create(int64_t bytes) {
  void* p = nullptr;
  if (cudaError_t e = cudaMalloc(&p, static_cast<size_t>(bytes)); e != cudaSuccess)
    return Status::failure(Errc::unavailable, "cannot allocate a " + std::to_string(bytes >> 20) +
                                                  " MiB device arena: " + cudaGetErrorString(e) +
                                                  " (KEVOLVE_CUDA_ARENA_MB sets its size)");
  cudaIpcMemHandle_t h;
  if (cudaError_t e = cudaIpcGetMemHandle(&h, p); e != cudaSuccess) {
    cudaFree(p);
    return Status::failure(Errc::unavailable,
                           std::string(kGpuApi) + " IPC is not available here: " + cudaGetErrorString(e) + kIpcHint);
  }
  base_ = static_cast<char*>(p);
  size_ = bytes;
  handle_.assign(reinterpret_cast<const char*>(&h), sizeof h);
  free_ = {{0, bytes}};
  return Status::success();
}

int64_t DeviceArena::allocate(int64_t bytes) {
  const int64_t need = (std::max<int64_t>(bytes, 1) + 255) / 256 * 256;
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < need) continue;
    const int64_t off = it->first, len = it->second;
    free_.erase(it);
    if (len > need) free_[off + need] = len - need;
    taken_[off] = need;
    used_ += need;
    return off;
  }
  return -1;
}

void DeviceArena::release(int64_t offset) {
  auto t = taken_.find(offset);
  if (t == taken_.end()) return;
  int64_t off = offset, len = t->second;
  used_ -= len;
  taken_.erase(t);
  auto next = free_.lower_bound(off);
  if (next != free_.end() && off + len == next->first) {
    len += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == off) {
      off = prev->first;
      len += prev->second;
      free_.erase(prev);
    }
  }
  free_[off] = len;
}

}  // namespace kevolve::cuda
