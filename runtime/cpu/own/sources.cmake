# gcomp's own CPU kernels (attention, LayerNorm, softmax, pooling, layout, elementwise, ...).
target_sources(gcomp_cpu_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/attention.cc
  ${CMAKE_CURRENT_LIST_DIR}/attention_amx.cc
  ${CMAKE_CURRENT_LIST_DIR}/attention_avx512.cc
  ${CMAKE_CURRENT_LIST_DIR}/attention_avx512bf16.cc
  ${CMAKE_CURRENT_LIST_DIR}/conv_avx2.cc
  ${CMAKE_CURRENT_LIST_DIR}/elementwise.cc
  ${CMAKE_CURRENT_LIST_DIR}/entries.cc
  ${CMAKE_CURRENT_LIST_DIR}/gather.cc
  ${CMAKE_CURRENT_LIST_DIR}/gelu_avx512.cc
  ${CMAKE_CURRENT_LIST_DIR}/gemm.cc
  ${CMAKE_CURRENT_LIST_DIR}/gemm_amx.cc
  ${CMAKE_CURRENT_LIST_DIR}/gemm_avx2.cc
  ${CMAKE_CURRENT_LIST_DIR}/layernorm.cc
  ${CMAKE_CURRENT_LIST_DIR}/layernorm_avx512.cc
  ${CMAKE_CURRENT_LIST_DIR}/layout.cc
  ${CMAKE_CURRENT_LIST_DIR}/pad.cc
  ${CMAKE_CURRENT_LIST_DIR}/pool.cc
  ${CMAKE_CURRENT_LIST_DIR}/pool_avx512.cc
  ${CMAKE_CURRENT_LIST_DIR}/simd.cc
  ${CMAKE_CURRENT_LIST_DIR}/winograd.cc
  ${CMAKE_CURRENT_LIST_DIR}/winograd_avx2.cc
  ${CMAKE_CURRENT_LIST_DIR}/winograd4_avx512.cc
  ${CMAKE_CURRENT_LIST_DIR}/winograd_avx512.cc
)
# The wider forms (simd.h says when they run): only these files are compiled with AVX-512 (and
# BF16, which runs only on CPUs that have it) or AMX enabled. GCC 12's AVX-512 reduction intrinsics
# start from _mm512_undefined_ps, which -W(maybe-)uninitialized reports inside the compiler's header.
set(GCOMP_AVX512 -mavx512f -mavx512bw -mavx512vl -mavx512dq -Wno-maybe-uninitialized -Wno-uninitialized)
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/attention_avx512.cc ${CMAKE_CURRENT_LIST_DIR}/pool_avx512.cc
  ${CMAKE_CURRENT_LIST_DIR}/winograd4_avx512.cc
  PROPERTIES COMPILE_OPTIONS "${GCOMP_AVX512}")
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/attention_avx512bf16.cc ${CMAKE_CURRENT_LIST_DIR}/gelu_avx512.cc
  ${CMAKE_CURRENT_LIST_DIR}/layernorm_avx512.cc
  ${CMAKE_CURRENT_LIST_DIR}/winograd_avx512.cc
  PROPERTIES COMPILE_OPTIONS "${GCOMP_AVX512};-mavx512bf16")
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/attention_amx.cc
  PROPERTIES COMPILE_OPTIONS "-mamx-tile;-mamx-bf16")
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/gemm_amx.cc
  PROPERTIES COMPILE_OPTIONS "${GCOMP_AVX512};-mavx512bf16;-mamx-tile;-mamx-bf16")
