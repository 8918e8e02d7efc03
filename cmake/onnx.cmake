# ONNX's protobuf messages, the only part of ONNX the library uses, as zerograph::onnx_proto.
#
# By default they come from Debian's libonnx_proto (linked to the shared libprotobuf). With
# ZG_STATIC_PROTOBUF the schema installed with ONNX is compiled here and linked with the static
# libprotobuf, so the binaries need neither library at run time: for machines that have none of our
# Debian packages (scripts/build_portable.sh). Both must not meet in one process: two copies of
# protobuf would each register onnx.proto.
option(ZG_STATIC_PROTOBUF "Link protobuf statically and compile ONNX's schema into the library" OFF)

add_library(zerograph_onnx_proto INTERFACE)
add_library(zerograph::onnx_proto ALIAS zerograph_onnx_proto)

if(NOT ZG_STATIC_PROTOBUF)
  find_package(Protobuf REQUIRED)
  find_package(ONNX REQUIRED)
  target_link_libraries(zerograph_onnx_proto INTERFACE onnx_proto protobuf::libprotobuf)
  return()
endif()

# The tests use ONNX's own library (its model text parser), which links the shared protobuf.
if(ZG_BUILD_TESTS)
  message(FATAL_ERROR "ZG_STATIC_PROTOBUF builds the programs only: the tests need libonnx, which "
                      "links the shared protobuf. Add -DZG_BUILD_TESTS=OFF.")
endif()
set(Protobuf_USE_STATIC_LIBS ON)
find_package(Protobuf REQUIRED)
find_file(ZG_ONNX_SCHEMA onnx/onnx.proto REQUIRED DOC "ONNX's schema, installed by libonnx-dev")

# Debian's libonnx_proto is built with ONNX_ML, and <onnx/onnx_pb.h> then includes
# "onnx/onnx-ml.pb.h": generate under that name, in a folder searched before the system's.
set(zg_onnx_gen ${CMAKE_BINARY_DIR}/generated)
add_custom_command(
  OUTPUT ${zg_onnx_gen}/onnx/onnx-ml.pb.cc ${zg_onnx_gen}/onnx/onnx-ml.pb.h
  COMMAND ${CMAKE_COMMAND} -E make_directory ${zg_onnx_gen}/onnx
  COMMAND ${CMAKE_COMMAND} -E copy ${ZG_ONNX_SCHEMA} ${zg_onnx_gen}/onnx/onnx-ml.proto
  COMMAND protobuf::protoc --cpp_out=${zg_onnx_gen} -I${zg_onnx_gen} onnx/onnx-ml.proto
  DEPENDS ${ZG_ONNX_SCHEMA}
  COMMENT "Compiling ONNX's schema for the static build")
add_library(zerograph_onnx_schema STATIC ${zg_onnx_gen}/onnx/onnx-ml.pb.cc)
set_target_properties(zerograph_onnx_schema PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_include_directories(zerograph_onnx_schema BEFORE PUBLIC ${zg_onnx_gen})
target_compile_definitions(zerograph_onnx_schema PUBLIC ONNX_NAMESPACE=onnx ONNX_ML=1)
target_link_libraries(zerograph_onnx_schema PUBLIC protobuf::libprotobuf)
target_link_libraries(zerograph_onnx_proto INTERFACE zerograph_onnx_schema)
