# GEMM and convolution kernels on oneDNN / OpenBLAS.
target_sources(gcomp_cpu_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/entries.cc
  ${CMAKE_CURRENT_LIST_DIR}/fused_params.cc
  ${CMAKE_CURRENT_LIST_DIR}/onednn_kernels.cc
  ${CMAKE_CURRENT_LIST_DIR}/openblas_kernels.cc
)
# The epilogue loops (GELU's clamped rational erf) vectorize only when FP compares may be assumed
# not to trap; results are unchanged (gcomp never reads FP exception flags).
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/fused_params.cc PROPERTIES COMPILE_OPTIONS -fno-trapping-math)
