// Arena: one shared-memory region (memfd) mapped by the evaluator and the runner at their own addresses.
// Buffers are handed out by offset and never reused within one evaluation, so every trial sees fresh
// addresses; released ranges give their pages back (hole punching) without moving anything.
#pragma once
#include <cstdint>
#include <string>

#include "runtime/core/expected.hpp"

namespace kevolve::cpu {

class Arena {
 public:
  // Reserves `reserve_bytes` of address space (pages are only allocated when touched).
  static Status create(Arena& a, int64_t reserve_bytes);
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena();

  // A fresh 64-byte-aligned range; -1 when the reservation is exhausted.
  int64_t allocate(int64_t bytes);
  // Frees the pages of [offset, offset+bytes); the offsets stay unused.
  void release(int64_t offset, int64_t bytes);
  char* at(int64_t offset) const { return base_ + offset; }
  int fd() const { return fd_; }
  int64_t size() const { return size_; }

 private:
  int fd_ = -1;
  char* base_ = nullptr;
  int64_t size_ = 0, next_ = 0;
};

}  // namespace kevolve::cpu
