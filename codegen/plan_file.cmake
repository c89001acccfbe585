# The plan file: protobuf header and program, hashed 64-byte aligned sections, mmap.
# plan.proto is compiled with the source root as import path, so it is "codegen/plan.proto" in the
# descriptor pool and its header is included as "codegen/plan.pb.h" (from the build root).
set(GCOMP_PLAN_PROTO ${CMAKE_SOURCE_DIR}/codegen/plan.proto)
set(GCOMP_PLAN_PB_SRCS ${CMAKE_BINARY_DIR}/codegen/plan.pb.cc ${CMAKE_BINARY_DIR}/codegen/plan.pb.h)
add_custom_command(
  OUTPUT ${GCOMP_PLAN_PB_SRCS}
  COMMAND protobuf::protoc --cpp_out=${CMAKE_BINARY_DIR} -I ${CMAKE_SOURCE_DIR} ${GCOMP_PLAN_PROTO}
  DEPENDS ${GCOMP_PLAN_PROTO} protobuf::protoc
  COMMENT "Running protoc on codegen/plan.proto"
  VERBATIM)

add_library(gcomp_plan_file STATIC ${CMAKE_CURRENT_LIST_DIR}/plan_file.cc ${GCOMP_PLAN_PB_SRCS})
target_include_directories(gcomp_plan_file PUBLIC ${CMAKE_SOURCE_DIR} ${XXHASH_INCLUDE_DIR})
target_include_directories(gcomp_plan_file PRIVATE ${CMAKE_BINARY_DIR})
target_link_libraries(gcomp_plan_file PUBLIC gcomp_graph ${XXHASH_LIBRARY} PRIVATE protobuf::libprotobuf)
