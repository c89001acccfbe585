# Plan file tests: round trip, byte-identical output across two processes (write_plan), and the
# refusals of truncated, corrupt, newer-version and invalid plans.
add_executable(write_plan ${CMAKE_CURRENT_LIST_DIR}/write_plan_main.cc
                          ${CMAKE_CURRENT_LIST_DIR}/plan_file_test_util.cc)
target_link_libraries(write_plan PRIVATE gcomp_plan_file)

add_executable(plan_file_tests ${CMAKE_CURRENT_LIST_DIR}/plan_file_test.cc
                               ${CMAKE_CURRENT_LIST_DIR}/plan_file_test_util.cc)
target_link_libraries(plan_file_tests PRIVATE gcomp_plan_file GTest::gtest_main)
target_compile_definitions(plan_file_tests PRIVATE WRITE_PLAN_EXE="$<TARGET_FILE:write_plan>")
add_dependencies(plan_file_tests write_plan)
gtest_discover_tests(plan_file_tests DISCOVERY_TIMEOUT 60)
