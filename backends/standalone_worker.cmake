# The libraries a GPU worker needs when it is built on its own on a GPU node (backends/cuda and backends/hip
# as top-level projects, against the node's pip or ROCm torch), without the main build: the records, the
# harness, the references (libtorch), the runner's identity and the runner-process handle.
# Include it from the standalone branch with KV_ROOT (the repository root), TORCH_ROOT and KV_TORCH_GPU_LIBS
# (the torch libraries of that GPU: libtorch_cuda + libc10_cuda, or libtorch_hip + libc10_hip) set.
if(NOT TORCH_ROOT)
  message(FATAL_ERROR "set -DTORCH_ROOT to the installed torch package folder (python3 -c 'import torch,os;print(os.path.dirname(torch.__file__))')")
endif()
if(NOT DEFINED TORCH_CXX11_ABI)
  set(TORCH_CXX11_ABI 1)
endif()
add_compile_definitions(_GLIBCXX_USE_CXX11_ABI=${TORCH_CXX11_ABI})
# As in the main build: a dropped Status or Expected is an error.
add_compile_options(-Werror=unused-result)
add_library(kv_torch INTERFACE)
target_include_directories(kv_torch SYSTEM INTERFACE ${TORCH_ROOT}/include ${TORCH_ROOT}/include/torch/csrc/api/include)
# --no-as-needed: the GPU library of torch registers its kernels when loaded, nothing references it by symbol.
target_link_libraries(kv_torch INTERFACE -Wl,--no-as-needed ${KV_TORCH_GPU_LIBS} ${TORCH_ROOT}/lib/libtorch.so
  ${TORCH_ROOT}/lib/libtorch_cpu.so ${TORCH_ROOT}/lib/libc10.so -Wl,--as-needed)
add_library(kevolve_records STATIC ${KV_ROOT}/runtime/records/records.cpp ${KV_ROOT}/runtime/records/backend_kind.cpp
  ${KV_ROOT}/runtime/records/operation.cpp ${KV_ROOT}/runtime/core/expr.cpp ${KV_ROOT}/runtime/core/wire.cpp
  ${KV_ROOT}/runtime/core/status.cpp ${KV_ROOT}/runtime/records/records_codec.cpp)
target_include_directories(kevolve_records PUBLIC ${KV_ROOT})
add_library(kevolve_harness STATIC ${KV_ROOT}/backends/harness/verify.cpp ${KV_ROOT}/backends/harness/stats.cpp
  ${KV_ROOT}/backends/harness/judge.cpp ${KV_ROOT}/backends/harness/cache_size.cpp)
target_link_libraries(kevolve_harness PUBLIC kevolve_records)
add_library(kevolve_reference STATIC ${KV_ROOT}/backends/reference/generators.cpp ${KV_ROOT}/backends/reference/references.cpp
  ${KV_ROOT}/backends/reference/reference_data.cpp)
target_link_libraries(kevolve_reference PUBLIC kevolve_records kv_torch)
add_library(kevolve_identity STATIC ${KV_ROOT}/backends/process/identity.cpp ${KV_ROOT}/backends/process/syscall_filter.cpp
  ${KV_ROOT}/backends/process/memory_cgroup.cpp ${KV_ROOT}/backends/process/eval_cgroup.cpp)
target_include_directories(kevolve_identity PUBLIC ${KV_ROOT})
add_library(kevolve_runner_process STATIC ${KV_ROOT}/backends/process/runner_process.cpp)
target_link_libraries(kevolve_runner_process PUBLIC kevolve_records kevolve_identity)
set(KV_WORKER_RPATH ${TORCH_ROOT}/lib)
