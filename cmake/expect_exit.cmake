# Runs EXE with ARGS and checks its exit code (EXPECT_RC) and that its combined
# output contains EXPECT_OUT. Used for command-line tests.
execute_process(COMMAND ${EXE} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL EXPECT_RC)
  message(FATAL_ERROR "exit code ${rc}, expected ${EXPECT_RC}")
endif()
string(FIND "${out}${err}" "${EXPECT_OUT}" pos)
if(pos EQUAL -1)
  message(FATAL_ERROR "output does not contain '${EXPECT_OUT}'")
endif()
