# The library's layers, bottom up, and the build rule that keeps dependencies pointing down.
#
#   util      src/util, src/monitoring, src/cache  bytes, coding, hashing, locks, statistics, cache
#   env       src/env                               file systems, io_uring
#   base      src/base                              internal keys, internal iterator, lookup
#                                                   contexts, file names, async reads, MultiGet keys
#   wal       wal/        memtable  memtable/       table  table/     (siblings: base and below)
#   db        src/db                                versions, write path, flush, compaction, reads
#
# Each layer is one OBJECT library compiled against an include root of its own in the build tree
# (layers/<name>/), which holds symbolic links to its own folders and to those of the layers
# below it, and nothing else. An #include that reaches a higher or sibling layer names a file
# that is not there, so it does not compile. The layering_<layer> tests (tests/CMakeLists.txt, LayerProbe.cmake)
# prove this for every layer.
# The installed library, shale::shale, is the objects of all layers in one archive.

set(SHALE_LAYERS util env base wal memtable table db)

set(SHALE_LAYER_util_DIRS src/util src/monitoring src/cache)
set(SHALE_LAYER_util_BELOW "")
set(SHALE_LAYER_env_DIRS src/env)
set(SHALE_LAYER_env_BELOW util)
set(SHALE_LAYER_base_DIRS src/base)
set(SHALE_LAYER_base_BELOW util env)
set(SHALE_LAYER_wal_DIRS wal)
set(SHALE_LAYER_wal_BELOW util env base)
set(SHALE_LAYER_memtable_DIRS memtable)
set(SHALE_LAYER_memtable_BELOW util env base)
set(SHALE_LAYER_table_DIRS table)
set(SHALE_LAYER_table_BELOW util env base)
set(SHALE_LAYER_db_DIRS src/db)
set(SHALE_LAYER_db_BELOW util env base wal memtable table)

# Third-party libraries every layer may compile against (usage requirements only; the final
# archive links them).
set(SHALE_LAYER_DEPS Threads::Threads fmt::fmt-header-only PkgConfig::xxhash PkgConfig::zstd
    PkgConfig::uring)

# shale_layer_root(<layer> <out-var>): makes layers/<layer>/ and returns its path.
function(shale_layer_root layer out)
  set(root ${PROJECT_BINARY_DIR}/layers/${layer})
  file(REMOVE_RECURSE ${root})
  foreach(visible ${layer} ${SHALE_LAYER_${layer}_BELOW})
    foreach(dir ${SHALE_LAYER_${visible}_DIRS})
      get_filename_component(parent ${root}/${dir} DIRECTORY)
      file(MAKE_DIRECTORY ${parent})
      file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${dir} ${root}/${dir} SYMBOLIC)
    endforeach()
  endforeach()
  set(${out} ${root} PARENT_SCOPE)
endfunction()

set(SHALE_LAYER_OBJECTS "")
foreach(layer ${SHALE_LAYERS})
  set(globs "")
  foreach(dir ${SHALE_LAYER_${layer}_DIRS})
    list(APPEND globs ${PROJECT_SOURCE_DIR}/${dir}/*.cc)
  endforeach()
  file(GLOB sources CONFIGURE_DEPENDS ${globs})
  shale_layer_root(${layer} root)
  add_library(shale_${layer} OBJECT ${sources})
  target_include_directories(shale_${layer} PRIVATE ${root} ${PROJECT_SOURCE_DIR}/include)
  target_compile_options(shale_${layer} PRIVATE ${SHALE_WARNINGS} ${SHALE_FUZZ_COVERAGE}
                                                ${SHALE_LIBRARY_OPTIONS})
  target_link_libraries(shale_${layer} PRIVATE ${SHALE_LAYER_DEPS})
  target_compile_definitions(shale_${layer} PRIVATE SHALE_VERSION_STRING="${PROJECT_VERSION}")
  set_target_properties(shale_${layer} PROPERTIES SHALE_LAYER_ROOT ${root})
  list(APPEND SHALE_LAYER_OBJECTS $<TARGET_OBJECTS:shale_${layer}>)
endforeach()

# One header per layer, for the layering tests (tests/CMakeLists.txt).
set(SHALE_LAYER_util_PROBE src/util/coding.h)
set(SHALE_LAYER_env_PROBE src/env/io_uring_reader.h)
set(SHALE_LAYER_base_PROBE src/base/dbformat.h)
set(SHALE_LAYER_wal_PROBE wal/log_writer.h)
set(SHALE_LAYER_memtable_PROBE memtable/memtable.h)
set(SHALE_LAYER_table_PROBE table/table_reader.h)
set(SHALE_LAYER_db_PROBE src/db/db_impl.h)
