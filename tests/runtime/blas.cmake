# oneDNN/OpenBLAS kernel tests: each kernel against the reference op on random data.
add_executable(blas_kernel_tests ${CMAKE_CURRENT_LIST_DIR}/blas_test.cc)
target_link_libraries(blas_kernel_tests PRIVATE gcomp_cpu_kernels gcomp_graph GTest::gtest_main)
gtest_discover_tests(blas_kernel_tests DISCOVERY_TIMEOUT 60)
