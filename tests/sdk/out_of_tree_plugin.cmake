# ctest script: install LieMBS into a scratch prefix, build sdk/plugin-template and
# sdk/representation-template out of tree with find_package(LieMBS), load them through the
# installed liembs and use them. The template's Lie-Euler steps must reproduce rkmk with the
# euler tableau; the template representation runs in a study next to the built-in ones and
# must agree with body-fixed on every algorithm of it.
cmake_minimum_required(VERSION 3.22)
file(REMOVE_RECURSE ${SCRATCH_DIR})
set(prefix ${SCRATCH_DIR}/prefix)

function(run_checked)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "command failed (${status}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run_checked(${CMAKE_COMMAND} --install ${LIEMBS_BUILD_DIR} --prefix ${prefix})
run_checked(${CMAKE_COMMAND} -S ${LIEMBS_SOURCE_DIR}/sdk/plugin-template -B ${SCRATCH_DIR}/build
            -G ${CMAKE_GENERATOR} -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix}
            # the plugin ABI check refuses a plugin from another compiler (cxx_abi: GCC 1017, clang 1002)
            -DCMAKE_CXX_COMPILER=${LIEMBS_CXX_COMPILER})
run_checked(${CMAKE_COMMAND} --build ${SCRATCH_DIR}/build)

set(liembs ${prefix}/bin/liembs)
run_checked(${CMAKE_COMMAND} -E env LIEMBS_PLUGIN_PATH=${SCRATCH_DIR}/build ${liembs} plugins)
foreach(expected "integrator +lie-euler" "integrator +rkmk" "group +SE3" "group +SO3xR3")
  if(NOT last_output MATCHES "${expected}")
    message(FATAL_ERROR "'liembs plugins' does not list '${expected}':\n${last_output}")
  endif()
endforeach()

set(config ${LIEMBS_SOURCE_DIR}/tests/data/free-body.toml)
run_checked(${CMAKE_COMMAND} -E env LIEMBS_PLUGIN_PATH=${SCRATCH_DIR}/build
            ${liembs} run ${config} --quiet --output ${SCRATCH_DIR}/template
            --set integrator.name=lie-euler --set integrator.substeps=1)
run_checked(${liembs} run ${config} --quiet --output ${SCRATCH_DIR}/rkmk
            --set integrator.name=rkmk --set integrator.tableau=euler)
file(READ ${SCRATCH_DIR}/template/trajectory.csv template_trajectory)
file(READ ${SCRATCH_DIR}/rkmk/trajectory.csv rkmk_trajectory)
if(NOT template_trajectory STREQUAL rkmk_trajectory)
  message(FATAL_ERROR "the template's Lie-Euler trajectory differs from rkmk/euler")
endif()
string(LENGTH "${template_trajectory}" length)
if(length LESS 1000)
  message(FATAL_ERROR "trajectory unexpectedly short (${length} characters)")
endif()
message(STATUS "out-of-tree plugin built, loaded and equal to rkmk/euler")

# The out-of-tree representation: a policy and one instantiation line.
run_checked(${CMAKE_COMMAND} -S ${LIEMBS_SOURCE_DIR}/sdk/representation-template -B ${SCRATCH_DIR}/representation
            -G ${CMAKE_GENERATOR} -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=${prefix}
            -DCMAKE_CXX_COMPILER=${LIEMBS_CXX_COMPILER})
run_checked(${CMAKE_COMMAND} --build ${SCRATCH_DIR}/representation)
run_checked(${CMAKE_COMMAND} -E env LIEMBS_PLUGIN_PATH=${SCRATCH_DIR}/representation ${liembs} plugins)
if(NOT last_output MATCHES "representation +spatial-formed")
  message(FATAL_ERROR "'liembs plugins' does not list the template representation:\n${last_output}")
endif()
run_checked(${CMAKE_COMMAND} -E env LIEMBS_PLUGIN_PATH=${SCRATCH_DIR}/representation
            ${liembs} study ${LIEMBS_SOURCE_DIR}/tests/data/sdk-representation-study.toml --output ${SCRATCH_DIR}/study)
file(STRINGS ${SCRATCH_DIR}/study/results.csv rows)
set(template_rows 0)
foreach(row IN LISTS rows)
  if(row MATCHES ",failed,")
    message(FATAL_ERROR "a study case failed: ${row}")
  endif()
  if(row MATCHES ",spatial-formed,ok,.*,spatial-formed,.*,body-fixed,")
    math(EXPR template_rows "${template_rows} + 1")
  endif()
endforeach()
if(NOT template_rows EQUAL 10)  # 5 algorithms x 2 models, each compared with body-fixed
  message(FATAL_ERROR "expected 10 checked cases of the template representation, found ${template_rows}:\n${rows}")
endif()
message(STATUS "out-of-tree representation built, loaded and in agreement with body-fixed in a study")
