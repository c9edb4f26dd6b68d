#include "backends/cpu/evaluator/arena.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <unistd.h>

namespace kevolve::cpu {

Status Arena::create(Arena& a, int64_t reserve_bytes) {
  a.fd_ = memfd_create("kevolve-arena", 0);
  if (a.fd_ < 0) return Status::failure(Errc::unavailable, std::string("memfd_create: ") + std::strerror(errno));
  if (ftruncate(a.fd_, reserve_bytes) != 0)
    return Status::failure(Errc::unavailable, std::string("ftruncate: ") + std::strerror(errno));
  void* p =
      mmap(nullptr, static_cast<size_t>(reserve_bytes), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, a.fd_, 0);
  if (p == MAP_FAILED) return Status::failure(Errc::unavailable, std::string("mmap arena: ") + std::strerror(errno));
  a.base_ = static_cast<char*>(p);
  a.size_ = reserve_bytes;
  return Status::success();
}

Arena::~Arena() {
  if (base_) munmap(base_, static_cast<size_t>(size_));
  if (fd_ >= 0) close(fd_);
}

int64_t Arena::allocate(int64_t bytes) {
  const int64_t page = 4096;
  const int64_t off = next_;
  const int64_t rounded = (std::max<int64_t>(bytes, 1) + page - 1) / page * page;
  if (off + rounded > size_) return -1;
  next_ = off + rounded;
  return off;
}

void Arena::release(int64_t offset, int64_t bytes) {
  if (bytes > 0) fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset, bytes);
}

}  // namespace kevolve::cpu
