// The last-level cache one core of this machine can fill: how much data the CPU timing must rotate through
// so that no timed call finds its data warm. Pure rules plus one probe of the machine.
#pragma once
#include <cstdint>

namespace kevolve::harness {

// On AMD the L3 is per core complex (CCD): 32 MB, 96 MB with 3D V-Cache; no core reaches another CCD's. A
// virtual machine may report the socket's whole L3 (16 CCDs: 512 MB), so for AMD the reported size is
// bounded by the largest L3 of one CCD that exists, rounded up (kAmdCcdL3Max). Intel's L3 is shared by
// every core of a socket, so its reported size stands. `reported` <= 0 (unknown) gives 32 MiB.
inline constexpr int64_t kAmdCcdL3Max = int64_t(128) << 20;
int64_t reachable_llc_bytes(int64_t reported, bool amd);

// reachable_llc_bytes() of this machine: sysconf's L3 (else L2) and the CPU's vendor.
int64_t last_level_cache_bytes();

}  // namespace kevolve::harness
