# gcomp's own CPU kernels (runtime/cpu/own/) against the op table's reference kernels.
add_executable(own_kernel_tests ${CMAKE_CURRENT_LIST_DIR}/own_kernels_test.cc)
target_link_libraries(own_kernel_tests PRIVATE gcomp_cpu_kernels gcomp_graph GTest::gtest_main)
gtest_discover_tests(own_kernel_tests DISCOVERY_TIMEOUT 60)
if(GCOMP_SANITIZE)
  target_compile_definitions(own_kernel_tests PRIVATE GCOMP_TIMING_RUNS=1)
endif()
