# GEMM and convolution kernels on oneDNN / OpenBLAS.
target_sources(gcomp_cpu_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/entries.cc
  ${CMAKE_CURRENT_LIST_DIR}/fused_params.cc
  ${CMAKE_CURRENT_LIST_DIR}/onednn_kernels.cc
  ${CMAKE_CURRENT_LIST_DIR}/openblas_kernels.cc
)
