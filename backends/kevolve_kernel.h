/* kevolve candidate ABI — the one header generated kernels include.
 *
 * A candidate is a shared object exporting one C entry point (default name `kevolve_kernel`, a problem
 * may name another) with this signature:
 *
 *     int kevolve_kernel(const kv_args* args);
 *
 * It reads args->inputs, writes every element of args->outputs, and returns 0 on success (any other
 * value is reported as a runtime error carrying that code). Inputs and outputs come in the order the
 * problem spec lists them; scalar parameters (eps, K, ...) come in args->params in the order of the
 * spec's [[params]] entries. Output buffers arrive filled with a poison pattern; inputs must not be
 * modified. Shapes and strides are in elements; tensors are contiguous unless the strides say otherwise.
 * The candidate may use OpenMP (its thread count is set by the evaluator), must not start processes,
 * open files for writing, use the network or generate code at run time.
 */
#ifndef KEVOLVE_KERNEL_H
#define KEVOLVE_KERNEL_H

#if defined(__CUDACC_RTC__) || defined(__HIPCC_RTC__)
/* NVRTC and hiprtc have no C library headers */
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#else
#include <stdint.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define KV_ABI_VERSION 1
#define KV_MAX_DIMS 8

typedef enum kv_dtype {
  KV_FLOAT32 = 0,
  KV_FLOAT64 = 1,
  KV_INT32 = 2,
  KV_INT64 = 3,
  KV_BFLOAT16 = 4,
  KV_FLOAT16 = 5
} kv_dtype;

typedef struct kv_tensor {
  void* data;
  int32_t dtype; /* a kv_dtype */
  int32_t ndim;
  int64_t shape[KV_MAX_DIMS];
  int64_t strides[KV_MAX_DIMS]; /* in elements */
} kv_tensor;

typedef struct kv_args {
  const kv_tensor* inputs;
  int32_t n_inputs;
  kv_tensor* outputs;
  int32_t n_outputs;
  const double* params;
  int32_t n_params;
  void* stream; /* GPU backends: the stream to launch on; NULL on the CPU */
} kv_args;

/* CUDA kernel-only candidates (the preferred CUDA form: compiled with NVRTC for the device's own
 * architecture, no candidate host code runs). The source defines one `extern "C" __global__` function
 * taking kv_cuda_args BY VALUE (data pointers are device pointers) and describes its launch in comment
 * lines:
 *
 *     // @kevolve kernel  <function name>
 *     // @kevolve grid    <expr>      grid_y, grid_z: optional, default 1
 *     // @kevolve block   <expr>      block_y, block_z: optional, default 1
 *     // @kevolve smem    <expr>      dynamic shared memory in bytes, optional, default 0
 *
 * Expressions are integer arithmetic over the problem's shape symbols (T, H, N, ...) and SMS (the
 * device's multiprocessor count): + - * / ( ), cdiv(a, b) (rounds up), min(a, b), max(a, b); the value is
 * rounded down to an integer (use cdiv for grids). The harness launches it on its own stream.
 *
 * CUDA candidates that need host code (several kernels, a launch computed at run time) instead export
 * `int kevolve_kernel(const kv_args*)` and launch on (cudaStream_t)args->stream only; they are built
 * with nvcc into a shared object. */
#define KV_MAX_TENSORS 8
#define KV_MAX_PARAMS 8

typedef struct kv_cuda_args {
  kv_tensor inputs[KV_MAX_TENSORS];
  kv_tensor outputs[KV_MAX_TENSORS];
  double params[KV_MAX_PARAMS];
  int32_t n_inputs;
  int32_t n_outputs;
  int32_t n_params;
} kv_cuda_args;

/* Number of elements of a tensor descriptor. */
#if defined(__CUDACC__) || defined(__HIP__)
__host__ __device__
#endif
    static inline int64_t
    kv_numel(const kv_tensor* t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

#ifdef __cplusplus
}
#endif

#endif /* KEVOLVE_KERNEL_H */
