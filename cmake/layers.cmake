# The library's modules and the one table of which module may use which. Each module is a static
# library, zerograph_<name> (alias zerograph::<name>), whose link line this table writes; each
# module's folder adds its sources (target_sources(zerograph_<name> PRIVATE ...)). The same table
# is written to ${PROJECT_BINARY_DIR}/layers.json, which tests/layering/check_layering.py reads to
# refuse any #include of a module that is not below the including one.
#
# A lower module calling a higher one is caught twice:
#   - by the include check (a ctest), which names the file, line and forbidden edge;
#   - usually by the linker: libraries are static and linked in layering order (a module before
#     the modules below it), so a lower module's reference to a symbol defined only in a higher
#     module's archive, which the linker has already passed, is an undefined reference. (Not
#     always: the linker keeps what it has pulled in, so a symbol in an object something else had
#     already pulled from the higher archive resolves. The include check is the rule.)
#
# zg_module(NAME PATHS path... [PUBLIC module...] [PRIVATE module...] [SHARED_INTERNALS]
#           [NOT_IN_LIBRARY])
#   PATHS    this module's files: folders or files relative to the source root, its sources under
#            src/ and its public headers under include/zerograph/. A file belongs to the module
#            with the longest path that holds it (src/runtime/cuda/x.cc: runtime_cuda, not
#            runtime).
#   PUBLIC   modules that its public headers include (linked PUBLIC);
#   PRIVATE  modules that only its sources include (linked PRIVATE).
#            A module may include the modules below it: those it names and, in turn, theirs.
#            Modules must be declared after those they use, so the table has no cycle.
#   SHARED_INTERNALS  its internal headers (under src/) may be included by the modules above it;
#            without it they are the module's own, and what other modules need goes in
#            include/zerograph/<module>/.
#   NOT_IN_LIBRARY  not part of zerograph::zerograph (the model builders, used by the generator
#            and the tests).
#
# zg_layering_exception(MODULE USES OTHER FILE path INCLUDE header): a known back-edge, allowed
#   for exactly that #include in that file (and linked PRIVATE) until it is removed. Each one has
#   a TODO naming its issue; the check fails once the include is gone, so the table shrinks.

set_property(GLOBAL PROPERTY ZG_MODULES "")
set_property(GLOBAL PROPERTY ZG_LIBRARY_MODULES "")
set_property(GLOBAL PROPERTY ZG_LAYERING_EXCEPTIONS "")

function(zg_module name)
  cmake_parse_arguments(PARSE_ARGV 1 arg
    "SHARED_INTERNALS;NOT_IN_LIBRARY" "" "PATHS;PUBLIC;PRIVATE")
  if(arg_UNPARSED_ARGUMENTS OR NOT arg_PATHS)
    message(FATAL_ERROR "zg_module(${name}): unknown arguments '${arg_UNPARSED_ARGUMENTS}' "
                        "or no PATHS")
  endif()
  get_property(modules GLOBAL PROPERTY ZG_MODULES)
  foreach(dep IN LISTS arg_PUBLIC arg_PRIVATE)
    if(NOT dep IN_LIST modules)
      message(FATAL_ERROR "zg_module(${name}): '${dep}' is not declared above it "
                          "(declare modules after the ones they use)")
    endif()
  endforeach()

  add_library(zerograph_${name} STATIC)
  add_library(zerograph::${name} ALIAS zerograph_${name})
  target_include_directories(zerograph_${name}
    PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(zerograph_${name} PUBLIC zerograph_options)
  foreach(dep IN LISTS arg_PUBLIC)
    target_link_libraries(zerograph_${name} PUBLIC zerograph_${dep})
  endforeach()
  foreach(dep IN LISTS arg_PRIVATE)
    target_link_libraries(zerograph_${name} PRIVATE zerograph_${dep})
  endforeach()
  if(NOT arg_NOT_IN_LIBRARY)
    set_property(GLOBAL APPEND PROPERTY ZG_LIBRARY_MODULES ${name})
  endif()

  set_property(GLOBAL APPEND PROPERTY ZG_MODULES ${name})
  set_property(GLOBAL PROPERTY ZG_MODULE_${name}_PATHS ${arg_PATHS})
  set_property(GLOBAL PROPERTY ZG_MODULE_${name}_PUBLIC ${arg_PUBLIC})
  set_property(GLOBAL PROPERTY ZG_MODULE_${name}_PRIVATE ${arg_PRIVATE})
  if(arg_SHARED_INTERNALS)
    set_property(GLOBAL PROPERTY ZG_MODULE_${name}_SHARED_INTERNALS true)
  else()
    set_property(GLOBAL PROPERTY ZG_MODULE_${name}_SHARED_INTERNALS false)
  endif()
endfunction()

function(zg_layering_exception name uses other file path include header)
  if(NOT uses STREQUAL "USES" OR NOT file STREQUAL "FILE" OR NOT include STREQUAL "INCLUDE")
    message(FATAL_ERROR "usage: zg_layering_exception(MODULE USES OTHER FILE path INCLUDE header)")
  endif()
  target_link_libraries(zerograph_${name} PRIVATE zerograph_${other})
  set_property(GLOBAL APPEND PROPERTY ZG_LAYERING_EXCEPTIONS "${name}|${other}|${path}|${header}")
endfunction()

# After the table: zerograph::zerograph, every module of the library (highest first, so that its
# link line is in layering order), and the table as JSON for the include check.
function(zg_finish_modules json_path)
  get_property(modules GLOBAL PROPERTY ZG_LIBRARY_MODULES)
  list(REVERSE modules)
  list(TRANSFORM modules PREPEND zerograph_)
  add_library(zerograph INTERFACE)
  add_library(zerograph::zerograph ALIAS zerograph)
  target_link_libraries(zerograph INTERFACE ${modules})
  zg_write_layers_json(${json_path})
endfunction()

function(zg_write_layers_json path)
  get_property(modules GLOBAL PROPERTY ZG_MODULES)
  set(entries)
  foreach(name IN LISTS modules)
    set(fields)
    foreach(field PATHS PUBLIC PRIVATE)
      get_property(items GLOBAL PROPERTY ZG_MODULE_${name}_${field})
      set(quoted)
      foreach(item IN LISTS items)
        list(APPEND quoted "\"${item}\"")
      endforeach()
      list(JOIN quoted ", " quoted)
      string(TOLOWER ${field} key)
      list(APPEND fields "\"${key}\": [${quoted}]")
    endforeach()
    get_property(shared GLOBAL PROPERTY ZG_MODULE_${name}_SHARED_INTERNALS)
    list(APPEND fields "\"shared_internals\": ${shared}")
    list(JOIN fields ", " fields)
    list(APPEND entries "    {\"name\": \"${name}\", ${fields}}")
  endforeach()
  list(JOIN entries ",\n" entries)
  get_property(exceptions GLOBAL PROPERTY ZG_LAYERING_EXCEPTIONS)
  set(allowed)
  foreach(exception IN LISTS exceptions)
    string(REPLACE "|" ";" parts "${exception}")
    list(GET parts 0 name)
    list(GET parts 1 other)
    list(GET parts 2 file)
    list(GET parts 3 header)
    string(CONCAT entry "    {\"module\": \"${name}\", \"uses\": \"${other}\", "
                        "\"file\": \"${file}\", \"include\": \"${header}\"}")
    list(APPEND allowed "${entry}")
  endforeach()
  list(JOIN allowed ",\n" allowed)
  string(CONCAT json "{\n  \"source\": \"cmake/layers.cmake\",\n"
                     "  \"modules\": [\n${entries}\n  ],\n"
                     "  \"exceptions\": [\n${allowed}\n  ]\n}\n")
  file(CONFIGURE OUTPUT ${path} CONTENT "${json}" @ONLY)
endfunction()

# --- The table: lowest first. ---------------------------------------------------------------
# The library's utilities: src/core/ holds the internal ones every module may use.
zg_module(core PATHS src/core include/zerograph/core SHARED_INTERNALS)
zg_module(ir PATHS src/ir include/zerograph/ir PUBLIC core)
# Reading and writing ONNX files.
zg_module(onnx PATHS src/onnx include/zerograph/onnx PUBLIC ir)
# Reading ONNX Runtime's training artifacts (training and optimizer models, flatbuffers checkpoint)
# into a training graph.
zg_module(ort_import PATHS src/ort_import include/zerograph/ort_import PUBLIC ir)
# Graph rewrites.
zg_module(passes PATHS src/passes include/zerograph/passes PUBLIC ir)
# Devices, streams, communicators, kernels (the CPU's) and the executor, which runs a graph on a
# device of either backend through the Device interface. Its internal headers (kernel helpers and
# shape functions, the MPI communicator) are what the CUDA backend implements against.
zg_module(runtime PATHS src/runtime include/zerograph/runtime PUBLIC ir SHARED_INTERNALS)
# The CUDA backend (device, NCCL, kernels); without CUDA, the stub that answers Unimplemented.
zg_module(runtime_cuda
  PATHS src/runtime/cuda src/runtime/kernels/cuda include/zerograph/runtime/cuda.h
  PUBLIC runtime)
# Running an ONNX file once (the ONNX backend tests' protocol).
zg_module(tools PATHS src/tools include/zerograph/tools PUBLIC core PRIVATE onnx runtime)
# Checkpoint files: formats, planning, reading and converting; no executor.
zg_module(ckpt PATHS src/ckpt include/zerograph/ckpt PUBLIC ir)
# Training: the loop, data, schedules, and saving and loading an executor's state.
zg_module(train PATHS src/train include/zerograph/train PUBLIC ckpt runtime)
# The model builders (models/mlp.cc, models/gpt.cc; generate_models.cc is a program, as apps/
# are), used by generate-models and the tests.
zg_module(models
  PATHS models/mlp.cc models/gpt.cc models/uniform_random.h include/zerograph/models
  PUBLIC ir PRIVATE ckpt NOT_IN_LIBRARY)

zg_finish_modules(${PROJECT_BINARY_DIR}/layers.json)
