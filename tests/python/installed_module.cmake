# ctest script: install LieMBS into a scratch prefix and run tests/python/test_installed.py
# with the interpreter the module was built for and only the prefix on PYTHONPATH: the
# module must import from there, load the plugins installed beside it and run the tutorial.
cmake_minimum_required(VERSION 3.22)
file(REMOVE_RECURSE ${SCRATCH_DIR})
set(prefix ${SCRATCH_DIR}/prefix)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${LIEMBS_BUILD_DIR} --prefix ${prefix}
                RESULT_VARIABLE status OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${status}):\n${err}")
endif()
if(NOT EXISTS ${prefix}/${PYTHON_INSTALL_DIR})
  message(FATAL_ERROR "cmake --install put no Python module into ${prefix}/${PYTHON_INSTALL_DIR}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env --unset=LIEMBS_PLUGIN_PATH
                        PYTHONPATH=${prefix}/${PYTHON_INSTALL_DIR}:${LIEMBS_SOURCE_DIR}/tests/python
                        LIEMBS_INSTALLED_PREFIX=${prefix} LIEMBS_SOURCE_DIR=${LIEMBS_SOURCE_DIR} PYTHONDONTWRITEBYTECODE=1
                        ${PYTHON} -m pytest -q -p no:cacheprovider ${LIEMBS_SOURCE_DIR}/tests/python/test_installed.py
                WORKING_DIRECTORY ${SCRATCH_DIR}
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the installed module's tests failed (${status})")
endif()
if(out MATCHES "skipped")
  message(FATAL_ERROR "the installed module's tests were skipped")
endif()
