# Regenerates the committed models into OUT_DIR and compares them with COMMITTED_DIR byte for byte.
# Usage: cmake -DGENERATOR=... -DCOMMITTED_DIR=... -DOUT_DIR=... -P check_up_to_date.cmake
file(REMOVE_RECURSE "${OUT_DIR}")
execute_process(
  COMMAND "${GENERATOR}" --model small --out-dir "${OUT_DIR}"
  RESULT_VARIABLE result
  OUTPUT_QUIET)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "generate-models failed (exit ${result})")
endif()

file(GLOB generated RELATIVE "${OUT_DIR}" "${OUT_DIR}/*")
if(NOT generated)
  message(FATAL_ERROR "generate-models wrote nothing into ${OUT_DIR}")
endif()
set(stale "")
foreach(name IN LISTS generated)
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -E compare_files "${OUT_DIR}/${name}" "${COMMITTED_DIR}/${name}"
    RESULT_VARIABLE different)
  if(NOT different EQUAL 0)
    list(APPEND stale "models/${name}")
  endif()
endforeach()
if(stale)
  message(FATAL_ERROR "stale or missing: ${stale}. Regenerate with "
                      "'cmake --build <build dir> --target update-models' and commit them.")
endif()
message(STATUS "up to date: ${generated}")
