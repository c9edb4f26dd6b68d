/* kevolve_gpu_portable.h — one kernel source for AMD (HIP: hipcc, hiprtc) and NVIDIA (CUDA: NVRTC, nvcc).
 *
 * The HIP templates (knowledge/templates/hip/<problem>/) are written against the names below, after
 * `#include "kevolve_kernel.h"`; the template library pastes this file into every rendered source (the
 * template's `prelude`), so a rendered candidate is self-contained for both compilers. The HIP build step
 * also offers it as an include for hand- or LLM-written candidates.
 *
 *   KV_WARP_SIZE           lanes of a wavefront / warp, a compile-time constant: 64 on CDNA (gfx9xx),
 *                          32 on RDNA (gfx10xx, gfx11xx: wave32 by default) and on NVIDIA
 *   kv_lanemask            the type of a ballot: 64 bits on HIP (whatever the wave size), 32 on CUDA
 *   kv_shfl_xor/up/down/idx(v, o[, width])   shuffles over the whole wave (CUDA: full mask) or within
 *                          groups of `width` lanes (a power of two <= KV_WARP_SIZE)
 *   kv_ballot(p), kv_ffs(mask)               ballot of a predicate, 1-based first set lane (0: none)
 *   kv_ld_acquire(p) / kv_st_release(p, v)   device-scope acquire load / release store of a u64
 *   kv_ld_coherent(p)      a load that sees other blocks' writes after an acquire (CUDA: ld.cg)
 *   kv_trap()              aborts the kernel (a launch error on the host)
 *   KV_LAUNCH_BOUNDS(n)    the maximal block size (no minimum-blocks hint: its meaning differs)
 *   kv_bf16_to_float(u), kv_float_to_bf16(f) bfloat16 held as unsigned short, round to nearest even
 * Everything else used by the templates has the same name on both: threadIdx/blockIdx/blockDim/gridDim,
 * __syncthreads, __threadfence, __shared__, atomicAdd/atomicExch, expf/__expf/erff/rsqrtf/fmaxf/fmaf,
 * __fdividef, __int_as_float/__uint_as_float/__float_as_uint, float4, longlong2, make_float4.
 */
#ifndef KEVOLVE_GPU_PORTABLE_H
#define KEVOLVE_GPU_PORTABLE_H

#if defined(__HIP__) || defined(__HIPCC__) || defined(__HIPCC_RTC__)
#define KV_HIP 1
#if !defined(__HIPCC_RTC__)
#include <hip/hip_runtime.h>
#endif
#if defined(__AMDGCN_WAVEFRONT_SIZE)
#define KV_WARP_SIZE __AMDGCN_WAVEFRONT_SIZE
#else
#define KV_WARP_SIZE 64 /* the host pass of a non --genco compile: no device code is generated there */
#endif
typedef unsigned long long kv_lanemask;
#define KV_LAUNCH_BOUNDS(n) __launch_bounds__(n)
template <typename T>
__device__ __forceinline__ T kv_shfl_xor(T v, int o, int width = KV_WARP_SIZE) { return __shfl_xor(v, o, width); }
template <typename T>
__device__ __forceinline__ T kv_shfl_up(T v, unsigned int d, int width = KV_WARP_SIZE) { return __shfl_up(v, d, width); }
template <typename T>
__device__ __forceinline__ T kv_shfl_down(T v, unsigned int d, int width = KV_WARP_SIZE) { return __shfl_down(v, d, width); }
template <typename T>
__device__ __forceinline__ T kv_shfl_idx(T v, int src, int width = KV_WARP_SIZE) { return __shfl(v, src, width); }
__device__ __forceinline__ kv_lanemask kv_ballot(int p) { return __ballot(p); }
__device__ __forceinline__ int kv_ffs(kv_lanemask m) { return __ffsll(static_cast<unsigned long long>(m)); }
__device__ __forceinline__ unsigned long long kv_ld_acquire(const unsigned long long* p) {
  return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT);
}
__device__ __forceinline__ void kv_st_release(unsigned long long* p, unsigned long long v) {
  __hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_AGENT);
}
template <typename T>
__device__ __forceinline__ T kv_ld_coherent(const T* p) {  // relaxed device-scope: bypasses the non-coherent L1
  return __hip_atomic_load(p, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
__device__ __forceinline__ void kv_trap() { __builtin_trap(); }

#else /* CUDA */
#define KV_WARP_SIZE 32
typedef unsigned int kv_lanemask;
#define KV_LAUNCH_BOUNDS(n) __launch_bounds__(n)
template <typename T>
__device__ __forceinline__ T kv_shfl_xor(T v, int o, int width = 32) { return __shfl_xor_sync(0xffffffffu, v, o, width); }
template <typename T>
__device__ __forceinline__ T kv_shfl_up(T v, unsigned int d, int width = 32) { return __shfl_up_sync(0xffffffffu, v, d, width); }
template <typename T>
__device__ __forceinline__ T kv_shfl_down(T v, unsigned int d, int width = 32) { return __shfl_down_sync(0xffffffffu, v, d, width); }
template <typename T>
__device__ __forceinline__ T kv_shfl_idx(T v, int src, int width = 32) { return __shfl_sync(0xffffffffu, v, src, width); }
__device__ __forceinline__ kv_lanemask kv_ballot(int p) { return __ballot_sync(0xffffffffu, p); }
__device__ __forceinline__ int kv_ffs(kv_lanemask m) { return __ffs(static_cast<int>(m)); }
__device__ __forceinline__ unsigned long long kv_ld_acquire(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void kv_st_release(unsigned long long* p, unsigned long long v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
template <typename T>
__device__ __forceinline__ T kv_ld_coherent(const T* p) { return __ldcg(p); }
__device__ __forceinline__ void kv_trap() { __trap(); }
#endif

/* bfloat16 as its 16 bits: exact widening; narrowing rounds to nearest even, NaN stays a (quiet) NaN. */
__device__ __forceinline__ float kv_bf16_to_float(unsigned short h) { return __uint_as_float(static_cast<unsigned int>(h) << 16); }
__device__ __forceinline__ unsigned short kv_float_to_bf16(float f) {
  const unsigned int u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((u >> 16) | 0x40u);
  return static_cast<unsigned short>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

#endif /* KEVOLVE_GPU_PORTABLE_H */
