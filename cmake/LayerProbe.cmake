# Proves one layer's include root (cmake/ShaleLayers.cmake): each probe header of a layer at or
# below LAYER must compile there, and each probe header of any other layer must fail to, because
# the file is not found. Inputs: COMPILER, ROOT (the layer's include root), PUBLIC_INCLUDE, WORK,
# ALLOWED and FORBIDDEN (;-lists of headers, passed with | as the separator).
string(REPLACE "|" ";" allowed "${ALLOWED}")
string(REPLACE "|" ";" forbidden "${FORBIDDEN}")
file(MAKE_DIRECTORY ${WORK})
set(failures "")
foreach(header ${allowed} ${forbidden})
  string(MAKE_C_IDENTIFIER ${header} id)
  set(src ${WORK}/${id}.cc)
  file(WRITE ${src} "#include \"${header}\"\n")
  execute_process(
    COMMAND ${COMPILER} -std=c++20 -fsyntax-only -I${ROOT} -I${PUBLIC_INCLUDE} ${src}
    WORKING_DIRECTORY ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  list(FIND allowed ${header} at)
  if(NOT at EQUAL -1)
    if(NOT rc EQUAL 0)
      string(APPEND failures "  ${header} is at or below this layer but did not compile:\n${out}\n")
    endif()
  elseif(rc EQUAL 0)
    string(APPEND failures "  ${header} belongs to another layer but compiled\n")
  elseif(NOT out MATCHES "${header}")
    string(APPEND failures "  ${header} failed for another reason than a missing file:\n${out}\n")
  else()
    message(STATUS "refused as expected: ${header}")
  endif()
endforeach()
if(failures)
  message(FATAL_ERROR "layer root ${ROOT}:\n${failures}")
endif()
