# SPDX-License-Identifier: Apache-2.0
# Run by the docs_fresh test: both checks run (so one failure does not hide the
# other), and the test fails if either does.
set(_failed "")
foreach(_check "module-graph.py;--check;${SOURCE_DIR}/docs/development.md" "check-doc-links.py")
  list(POP_FRONT _check _script)
  execute_process(COMMAND ${PYTHON} ${SOURCE_DIR}/scripts/${_script} ${_check}
                  WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    list(APPEND _failed "${_script} (exit ${_rc})")
  endif()
endforeach()
if(_failed)
  message(FATAL_ERROR "docs_fresh: failed: ${_failed}")
endif()
