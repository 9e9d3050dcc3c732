# SPDX-License-Identifier: Apache-2.0
# Verilated models as static libraries, built by scripts/verilate.sh (which prints build times),
# sharing one Verilator runtime library.

find_program(VERILATOR verilator REQUIRED)
execute_process(COMMAND ${VERILATOR} --getenv VERILATOR_ROOT
                OUTPUT_VARIABLE VERILATOR_ROOT OUTPUT_STRIP_TRAILING_WHITESPACE)
set(VL_INC ${VERILATOR_ROOT}/include)

# The RTL file list (rtl/rtl.f): every model depends on every listed file and on the Verilator
# configuration files (rtl/*.vlt).
file(STRINGS ${PROJECT_SOURCE_DIR}/rtl/rtl.f _rtl_lines)
set(TPU_RTL_FILES ${PROJECT_SOURCE_DIR}/rtl/rtl.f ${PROJECT_SOURCE_DIR}/rtl/lint_waivers.vlt
                  ${PROJECT_SOURCE_DIR}/rtl/sim.vlt)
foreach(_l IN LISTS _rtl_lines)
  if(_l MATCHES "^\\+incdir\\+(.*)")  # an include directory: every header in it
    file(GLOB _hdrs CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${CMAKE_MATCH_1}/*.svh)
    list(APPEND TPU_RTL_FILES ${_hdrs})
  elseif(_l MATCHES "^[ \t]*([^/ \t][^ \t]*)")
    list(APPEND TPU_RTL_FILES ${PROJECT_SOURCE_DIR}/${CMAKE_MATCH_1})
  endif()
endforeach()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/rtl/rtl.f)

option(TPU_COVERAGE "Build the Verilated RTL models with line and toggle coverage (make coverage)"
       OFF)
option(TPU_COVERAGE_TOGGLE "With TPU_COVERAGE, toggle coverage as well as line coverage" ON)
set(TPU_COVERAGE_LINE_ONLY "" CACHE STRING
    "With TPU_COVERAGE, models (tpu_verilate names) given line coverage only")
set(TPU_COVERAGE_MAX_WIDTH 256 CACHE STRING "Widest signal (bits) given toggle coverage")

# The model-side preprocessor switches must match between the runtime and every model.
# TPU_TRACE adds FST tracing (make waves); TPU_COVERAGE adds line and toggle coverage of the RTL
# models (make coverage; see docs/coverage.md). Both may be on in one build.
set(VL_RT_SRCS ${VL_INC}/verilated.cpp ${VL_INC}/verilated_threads.cpp)
if(TPU_TRACE)
  set(VL_DEFS VM_TRACE=1 VM_TRACE_FST=1 VM_TRACE_VCD=0)
  list(APPEND VL_RT_SRCS ${VL_INC}/verilated_fst_c.cpp)
else()
  set(VL_DEFS VM_TRACE=0 VM_TRACE_FST=0 VM_TRACE_VCD=0)
endif()
if(TPU_COVERAGE)
  list(APPEND VL_DEFS VM_COVERAGE=1 VM_SC=0)
  list(APPEND VL_RT_SRCS ${VL_INC}/verilated_cov.cpp)
else()
  list(APPEND VL_DEFS VM_COVERAGE=0 VM_SC=0)
endif()

add_library(verilated_rt STATIC ${VL_RT_SRCS})
target_include_directories(verilated_rt SYSTEM PUBLIC ${VL_INC} ${VL_INC}/vltstd)
target_compile_definitions(verilated_rt PUBLIC ${VL_DEFS})
target_compile_options(verilated_rt PRIVATE -w)
target_link_libraries(verilated_rt PUBLIC Threads::Threads)
if(TPU_TRACE)
  find_package(ZLIB REQUIRED)
  target_link_libraries(verilated_rt PUBLIC ZLIB::ZLIB)
endif()

# The runtime of SystemC models (`tpu_verilate(... SC)`): the same sources built with VM_SC=1 and
# linked with SystemC. Created on first use, after the SystemC target is known (TPU_SYSTEMC, found
# in tb/CMakeLists.txt). A binary must not take verilated.o from both runtimes (the VM_SC=0 one
# would silently serve the SystemC model): this one is linked whole, so that if a C++ model's
# runtime were also pulled in, the link fails with duplicate symbols instead.
function(_tpu_verilated_rt_sc)
  if(TARGET verilated_rt_sc)
    return()
  endif()
  if(NOT TPU_SYSTEMC)
    message(FATAL_ERROR "tpu_verilate(... SC): set TPU_SYSTEMC (the SystemC target) first")
  endif()
  string(REPLACE "VM_SC=0" "VM_SC=1" defs "${VL_DEFS}")
  set(srcs ${VL_RT_SRCS})
  if(TPU_TRACE)
    list(APPEND srcs ${VL_INC}/verilated_fst_sc.cpp)
  endif()
  add_library(verilated_rt_sc STATIC ${srcs})
  target_include_directories(verilated_rt_sc SYSTEM PUBLIC ${VL_INC} ${VL_INC}/vltstd)
  target_compile_definitions(verilated_rt_sc PUBLIC ${defs})
  target_compile_options(verilated_rt_sc PRIVATE -w)
  target_compile_features(verilated_rt_sc PUBLIC cxx_std_17)  # as libsystemc (sc_api_version)
  target_link_libraries(verilated_rt_sc PUBLIC ${TPU_SYSTEMC} Threads::Threads)
  if(TPU_TRACE)
    target_link_libraries(verilated_rt_sc PUBLIC ZLIB::ZLIB)
  endif()
endfunction()

# tpu_verilate(NAME TOP <top> [SC] [NETLIST <file>] [TB <file>] [OPT -O1|-O2|-O3]
#              [HIER <module>] [THREADS <n>] [PARAMS Name=Value ...])
# Defines target vl_<NAME>: class V<NAME> in header V<NAME>.h. With SC, V<NAME> is a SystemC module
# (`verilator --sc`, port types as in scripts/verilate.sh) on the runtime verilated_rt_sc; code
# including its header is compiled with VM_SC=1 and must not include sim_ctrl.h or link
# verilated_rt's compile definitions (VM_SC=0). TB adds a test-only module (tb/rtl/) to the RTL.
# HIER builds every instance of that module as one hierarchical block (scripts/verilate.sh);
# THREADS makes a multithreaded model (`verilator --threads`).
function(tpu_verilate NAME)
  cmake_parse_arguments(V "SC" "TOP;NETLIST;TB;OPT;HIER;THREADS" "PARAMS" ${ARGN})
  set(dir ${CMAKE_BINARY_DIR}/vl/${NAME})
  set(lib ${dir}/V${NAME}__ALL.a)
  set(args ${NAME} ${V_TOP} ${dir})
  if(TPU_TRACE)
    list(APPEND args --trace)
  endif()
  # Coverage instruments the RTL only: not the gate-level netlists (not rtl/), and not the
  # SystemC models, whose harness (tb/src/accel_sc.cpp) does not write coverage; both still link
  # the coverage runtime, which is harmless.
  if(TPU_COVERAGE AND NOT V_NETLIST AND NOT V_SC)
    if(TPU_COVERAGE_TOGGLE AND NOT NAME IN_LIST TPU_COVERAGE_LINE_ONLY)
      list(APPEND args --coverage --coverage-max-width ${TPU_COVERAGE_MAX_WIDTH})
    else()
      list(APPEND args --coverage-line)
    endif()
  endif()
  set(rt verilated_rt)
  if(V_SC)
    list(APPEND args --sc)
    _tpu_verilated_rt_sc()
    if(CMAKE_VERSION VERSION_LESS 3.24)  # no LINK_LIBRARY before 3.24 (Debian 12 has 3.25)
      set(rt verilated_rt_sc)
    else()
      set(rt "$<LINK_LIBRARY:WHOLE_ARCHIVE,verilated_rt_sc>")
    endif()
  endif()
  if(V_NETLIST)
    list(APPEND args --netlist ${V_NETLIST})
    set(deps ${V_NETLIST})
  else()
    set(deps ${TPU_RTL_FILES})
  endif()
  if(V_TB)
    list(APPEND args --tb ${V_TB})
    list(APPEND deps ${V_TB})
  endif()
  if(V_OPT)
    list(APPEND args --opt ${V_OPT})
  endif()
  if(V_HIER)
    list(APPEND args --hier ${V_HIER})
    list(APPEND deps ${PROJECT_SOURCE_DIR}/scripts/wrap_top.py)
  endif()
  if(V_THREADS)
    list(APPEND args --threads ${V_THREADS})
  endif()
  foreach(p IN LISTS V_PARAMS)
    list(APPEND args -G${p})
  endforeach()
  file(MAKE_DIRECTORY ${dir})
  add_custom_command(
    OUTPUT ${lib}
    COMMAND ${PROJECT_SOURCE_DIR}/scripts/verilate.sh ${args}
    DEPENDS ${deps} ${PROJECT_SOURCE_DIR}/scripts/verilate.sh
    COMMENT "Verilating ${NAME}"
    VERBATIM)
  add_custom_target(vl_${NAME}_build DEPENDS ${lib})
  add_library(vl_${NAME} INTERFACE)
  add_dependencies(vl_${NAME} vl_${NAME}_build)
  target_include_directories(vl_${NAME} SYSTEM INTERFACE ${dir})
  target_link_libraries(vl_${NAME} INTERFACE ${lib} ${rt})
endfunction()

# tpu_synth_netlist(NAME): the Yosys netlist of synthesis configuration NAME
# (rtl/builds.json, synth), as ${CMAKE_BINARY_DIR}/synth/NAME.v, module NAME.
function(tpu_synth_netlist NAME OUT_VAR)
  set(out ${CMAKE_BINARY_DIR}/synth/${NAME}.v)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${PROJECT_SOURCE_DIR}/scripts/synth.sh --out ${CMAKE_BINARY_DIR}/synth ${NAME}
    DEPENDS ${TPU_RTL_FILES} ${PROJECT_SOURCE_DIR}/scripts/synth.sh
            ${PROJECT_SOURCE_DIR}/rtl/builds.json ${PROJECT_SOURCE_DIR}/scripts/builds.py
    COMMENT "Synthesizing ${NAME} (Yosys)"
    VERBATIM)
  set(${OUT_VAR} ${out} PARENT_SCOPE)
endfunction()
