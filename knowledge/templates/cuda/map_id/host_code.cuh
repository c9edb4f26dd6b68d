// Shared by map_id's host-code searches (hash, directory), pasted before their anonymous namespace after
// <cuda_runtime.h>: loads that keep their lines in L2, the SM count, and the call's scratch memory.

// Loads through the read-only path with an L2 evict-last policy (tables read by every lookup stay in L2
// while the ids and outputs stream past with evict-first hints).
__device__ __forceinline__ unsigned long long evict_last_policy() {
  unsigned long long pol;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  return pol;
}
__device__ __forceinline__ unsigned int keep_load(const unsigned int* p) {
  unsigned int r;
  asm("ld.global.nc.L2::cache_hint.u32 %0, [%1], %2;" : "=r"(r) : "l"(p), "l"(evict_last_policy()));
  return r;
}
__device__ __forceinline__ unsigned long long keep_load(const unsigned long long* p) {
  unsigned long long r;
  asm("ld.global.nc.L2::cache_hint.u64 %0, [%1], %2;" : "=l"(r) : "l"(p), "l"(evict_last_policy()));
  return r;
}
__device__ __forceinline__ long long keep_load(const long long* p) {
  return static_cast<long long>(keep_load(reinterpret_cast<const unsigned long long*>(p)));
}
__device__ __forceinline__ ulonglong2 keep_load(const ulonglong2* p) {
  ulonglong2 r;
  asm("ld.global.nc.L2::cache_hint.v2.u64 {%0, %1}, [%2], %3;" : "=l"(r.x), "=l"(r.y) : "l"(p), "l"(evict_last_policy()));
  return r;
}

// The current device's SM count, read once; 0 when it cannot be read.
inline int sm_count() {
  static int n = 0;
  if (n == 0) {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
      n = 0;
  }
  return n;
}

// At least `bytes` of device memory, kept across calls and grown when a call needs more (its contents are
// rebuilt by every call); null when it cannot be allocated.
inline void* scratch(size_t bytes) {
  static void* p = nullptr;
  static size_t have = 0;
  if (bytes > have) {
    if (p) cudaFree(p);
    p = nullptr;
    have = 0;
    if (cudaMalloc(&p, bytes) != cudaSuccess) return nullptr;
    have = bytes;
  }
  return p;
}
