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

#include <stdint.h>

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

/* Number of elements of a tensor descriptor. */
static inline int64_t kv_numel(const kv_tensor* t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
  return n;
}

#ifdef __cplusplus
}
#endif

#endif /* KEVOLVE_KERNEL_H */
