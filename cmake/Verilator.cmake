# SPDX-License-Identifier: Apache-2.0
# Verilated models as static libraries, built by scripts/verilate.sh (which prints build times),
# sharing one Verilator runtime library.

find_program(VERILATOR verilator REQUIRED)
execute_process(COMMAND ${VERILATOR} --getenv VERILATOR_ROOT
                OUTPUT_VARIABLE VERILATOR_ROOT OUTPUT_STRIP_TRAILING_WHITESPACE)
set(VL_INC ${VERILATOR_ROOT}/include)

# The RTL file list (rtl/rtl.f): every model depends on every listed file.
file(STRINGS ${PROJECT_SOURCE_DIR}/rtl/rtl.f _rtl_lines)
set(TPU_RTL_FILES ${PROJECT_SOURCE_DIR}/rtl/rtl.f)
foreach(_l IN LISTS _rtl_lines)
  if(_l MATCHES "^[ \t]*([^/ \t][^ \t]*)")
    list(APPEND TPU_RTL_FILES ${PROJECT_SOURCE_DIR}/${CMAKE_MATCH_1})
  endif()
endforeach()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/rtl/rtl.f)

# The model-side preprocessor switches must match between the runtime and every model.
if(TPU_TRACE)
  set(VL_DEFS VM_TRACE=1 VM_TRACE_FST=1 VM_TRACE_VCD=0 VM_COVERAGE=0 VM_SC=0)
  set(VL_RT_SRCS ${VL_INC}/verilated.cpp ${VL_INC}/verilated_threads.cpp
                 ${VL_INC}/verilated_fst_c.cpp)
else()
  set(VL_DEFS VM_TRACE=0 VM_TRACE_FST=0 VM_TRACE_VCD=0 VM_COVERAGE=0 VM_SC=0)
  set(VL_RT_SRCS ${VL_INC}/verilated.cpp ${VL_INC}/verilated_threads.cpp)
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

# tpu_verilate(NAME TOP <top> [NETLIST <file>] [OPT -O1|-O2|-O3] [PARAMS Name=Value ...])
# Defines target vl_<NAME>: class V<NAME> in header V<NAME>.h.
function(tpu_verilate NAME)
  cmake_parse_arguments(V "" "TOP;NETLIST;OPT" "PARAMS" ${ARGN})
  set(dir ${CMAKE_BINARY_DIR}/vl/${NAME})
  set(lib ${dir}/V${NAME}__ALL.a)
  set(args ${NAME} ${V_TOP} ${dir})
  if(TPU_TRACE)
    list(APPEND args --trace)
  endif()
  if(V_NETLIST)
    list(APPEND args --netlist ${V_NETLIST})
    set(deps ${V_NETLIST})
  else()
    set(deps ${TPU_RTL_FILES})
  endif()
  if(V_OPT)
    list(APPEND args --opt ${V_OPT})
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
  target_link_libraries(vl_${NAME} INTERFACE ${lib} verilated_rt)
endfunction()

# tpu_synth_netlist(NAME): the Yosys netlist of synthesis configuration NAME
# (scripts/synth/configs.txt), as ${CMAKE_BINARY_DIR}/synth/NAME.v, module NAME.
function(tpu_synth_netlist NAME OUT_VAR)
  set(out ${CMAKE_BINARY_DIR}/synth/${NAME}.v)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${PROJECT_SOURCE_DIR}/scripts/synth.sh --out ${CMAKE_BINARY_DIR}/synth ${NAME}
    DEPENDS ${TPU_RTL_FILES} ${PROJECT_SOURCE_DIR}/scripts/synth.sh
            ${PROJECT_SOURCE_DIR}/scripts/synth/configs.txt
    COMMENT "Synthesizing ${NAME} (Yosys)"
    VERBATIM)
  set(${OUT_VAR} ${out} PARENT_SCOPE)
endfunction()
