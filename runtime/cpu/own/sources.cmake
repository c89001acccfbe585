# gcomp's own CPU kernels (attention, LayerNorm, softmax, pooling, layout, elementwise, ...).
target_sources(gcomp_cpu_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/attention.cc
  ${CMAKE_CURRENT_LIST_DIR}/attention_amx.cc
  ${CMAKE_CURRENT_LIST_DIR}/attention_avx512.cc
  ${CMAKE_CURRENT_LIST_DIR}/elementwise.cc
  ${CMAKE_CURRENT_LIST_DIR}/entries.cc
  ${CMAKE_CURRENT_LIST_DIR}/gather.cc
  ${CMAKE_CURRENT_LIST_DIR}/layernorm.cc
  ${CMAKE_CURRENT_LIST_DIR}/layernorm_avx512.cc
  ${CMAKE_CURRENT_LIST_DIR}/layout.cc
  ${CMAKE_CURRENT_LIST_DIR}/pad.cc
  ${CMAKE_CURRENT_LIST_DIR}/pool.cc
  ${CMAKE_CURRENT_LIST_DIR}/pool_avx512.cc
  ${CMAKE_CURRENT_LIST_DIR}/simd.cc
)
# The AVX-512 forms: only these files are compiled with AVX-512 enabled (simd.h says when they run).
# GCC 12's AVX-512 reduction intrinsics start from _mm512_undefined_ps, which -Wmaybe-uninitialized
# reports inside the compiler's own header.
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/attention_avx512.cc ${CMAKE_CURRENT_LIST_DIR}/layernorm_avx512.cc
  ${CMAKE_CURRENT_LIST_DIR}/pool_avx512.cc
  PROPERTIES COMPILE_OPTIONS "-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx512bf16;-Wno-maybe-uninitialized")
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/attention_amx.cc
  PROPERTIES COMPILE_OPTIONS "-mamx-tile;-mamx-bf16")
