// The CUDA driver calls of the GPU runner (backends/cuda/runner/main.cpp: loading a kernel image and
// launching it), named by their HIP module-API equivalents. See cuda_runtime_api.h beside this file.
#pragma once
#include "cuda_runtime_api.h"

using CUresult = hipError_t;
using CUmodule = hipModule_t;
using CUfunction = hipFunction_t;
using CUstream = hipStream_t;
using CUdeviceptr = hipDeviceptr_t;  // void* on AMD (an integer on CUDA): the runner converts with casts only
#define CUDA_SUCCESS hipSuccess

#define cuModuleLoadData hipModuleLoadData  // a code object (.hsaco) instead of a cubin
#define cuModuleGetFunction hipModuleGetFunction
// Same arguments: f, grid xyz, block xyz, LDS bytes, stream, params, extra.
#define cuLaunchKernel hipModuleLaunchKernel
#define cuMemsetD16Async hipMemsetD16Async
#define cuMemsetD32Async hipMemsetD32Async
#define cuMemcpyDtoDAsync hipMemcpyDtoDAsync

#define CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES

// HIP has no driver-style error strings: the runtime's name and text of the same code.
inline hipError_t cuGetErrorName(hipError_t e, const char** s) {
  *s = hipGetErrorName(e);
  return hipSuccess;
}
inline hipError_t cuGetErrorString(hipError_t e, const char** s) {
  *s = hipGetErrorString(e);
  return hipSuccess;
}

// CUDA needs an opt-in above 48 KiB of dynamic shared memory; ROCm 5.2 has no attribute setter for a module's
// function and none is needed: a workgroup may use the LDS its static allocation leaves (64 KiB in all on
// CDNA) without one. So "setting" it checks the request against what the kernel may have (the runtime's
// answer: the LDS less the kernel's static use) and refuses more, as the launch would, but with a reason.
inline hipError_t cuFuncSetAttribute(hipFunction_t f, hipFunction_attribute attr, int bytes) {
  int most = 64 * 1024;
  if (hipError_t e = hipFuncGetAttribute(&most, attr, f); e != hipSuccess) return e;
  return bytes <= most ? hipSuccess : hipErrorInvalidValue;
}
