# gcomp's own CPU kernels (attention, LayerNorm, softmax, pooling, layout, elementwise, ...).
target_sources(gcomp_cpu_kernels PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/attention.cc
  ${CMAKE_CURRENT_LIST_DIR}/elementwise.cc
  ${CMAKE_CURRENT_LIST_DIR}/entries.cc
  ${CMAKE_CURRENT_LIST_DIR}/gather.cc
  ${CMAKE_CURRENT_LIST_DIR}/layernorm.cc
  ${CMAKE_CURRENT_LIST_DIR}/layout.cc
  ${CMAKE_CURRENT_LIST_DIR}/pad.cc
  ${CMAKE_CURRENT_LIST_DIR}/pool.cc
)
