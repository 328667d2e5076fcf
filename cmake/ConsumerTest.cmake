# Installs shale into a scratch prefix, then configures, builds and runs an outside project
# that uses find_package(shale CONFIG REQUIRED) and compiles the API example from README.md
# (the ```cpp block after the "## API example" heading), so the README cannot drift.
# Inputs: SHALE_SOURCE_DIR, SHALE_BINARY_DIR, WORK_DIR.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

execute_process(COMMAND ${CMAKE_COMMAND} --install ${SHALE_BINARY_DIR} --prefix ${prefix}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "install failed")
endif()

file(READ ${SHALE_SOURCE_DIR}/README.md readme)
string(FIND "${readme}" "## API example" at)
if(at EQUAL -1)
  message(FATAL_ERROR "README.md has no '## API example' section")
endif()
string(SUBSTRING "${readme}" ${at} -1 readme)
string(FIND "${readme}" "```cpp\n" begin)
string(FIND "${readme}" "\n```\n" end)
if(begin EQUAL -1 OR end EQUAL -1 OR end LESS begin)
  message(FATAL_ERROR "README.md's API example has no ```cpp block")
endif()
math(EXPR begin "${begin} + 7")
math(EXPR length "${end} - ${begin} + 1")
string(SUBSTRING "${readme}" ${begin} ${length} example)

file(MAKE_DIRECTORY ${WORK_DIR}/src)
file(WRITE ${WORK_DIR}/src/main.cc "${example}")
file(WRITE ${WORK_DIR}/src/CMakeLists.txt [=[
cmake_minimum_required(VERSION 3.25)
project(shale_consumer CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(shale CONFIG REQUIRED)
add_executable(consumer main.cc)
target_link_libraries(consumer PRIVATE shale::shale)
]=])

execute_process(COMMAND ${CMAKE_COMMAND} -S ${WORK_DIR}/src -B ${WORK_DIR}/build
  -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer configure failed")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${WORK_DIR}/build RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer build failed")
endif()
execute_process(COMMAND ${WORK_DIR}/build/consumer ${WORK_DIR}/db RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "consumer run failed: ${rc}")
endif()
message(STATUS "consumer project built and ran against the installed shale")
