# SPDX-License-Identifier: Apache-2.0
# Run the built tool to print its bash completion and man page (both made from
# the commands' option tables, src/cli/cli_docs.cc). Used at build time:
#   cmake -DSEDPACK=<tool> -DOUT_DIR=<dir> -P GenerateCliDocs.cmake
foreach(doc completion man)
  if(doc STREQUAL "completion")
    set(out "${OUT_DIR}/sedpack.bash")
  else()
    set(out "${OUT_DIR}/sedpack.1")
  endif()
  execute_process(COMMAND "${SEDPACK}" --dump-${doc} OUTPUT_FILE "${out}.tmp" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${SEDPACK} --dump-${doc} failed (${rc})")
  endif()
  file(RENAME "${out}.tmp" "${out}")
endforeach()
