// DeviceArena: one cudaMalloc'd region of the evaluator, exported to runners through CUDA IPC. Buffers
// are handed out by offset (first fit, freed ranges coalesce), so the runner sees nothing else of ours.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "runtime/core/expected.hpp"

namespace kevolve::cuda {

class DeviceArena {
 public:
  DeviceArena() = default;
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;
  ~DeviceArena();

  // Allocates `bytes` of device memory and its IPC handle; an error names the CUDA failure.
  Status create(int64_t bytes);
  // A 256-byte-aligned range; -1 when no free range is large enough.
  int64_t allocate(int64_t bytes);
  void release(int64_t offset);
  char* at(int64_t offset) const { return base_ + offset; }
  int64_t size() const { return size_; }
  int64_t in_use() const { return used_; }
  const std::string& ipc_handle() const { return handle_; }

 private:
  char* base_ = nullptr;
  int64_t size_ = 0, used_ = 0;
  std::string handle_;
  std::map<int64_t, int64_t> free_;   // offset -> length
  std::map<int64_t, int64_t> taken_;  // offset -> length
};

}  // namespace kevolve::cuda
