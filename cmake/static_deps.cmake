# Static linking of the third-party libraries into executables (HETSIM_STATIC_DEPS, issue 43). Linked as
# shared objects, hetsim loads 40 of them (37 of them Abseil's) and the dynamic loader resolves every
# relocation against all of them at start: 3-4 ms of a 16 ms `hetsim collective` on 512 GPUs
# (docs/performance.md). Debian ships the same libraries as position-independent static archives beside
# the shared objects (libabsl_*.a, libprotobuf.a, libboost_*.a, libyaml-cpp.a), so every executable
# (hetsim, the tests, the benchmarks) links those archives, and hetsim libstdc++ and libgcc too; glibc
# stays shared. The Python extension, a shared object, keeps the shared libraries: protobuf's and some of
# Abseil's archives use the local-exec TLS model, which a shared object cannot hold. toml++ is used
# header-only in both (its Debian headers, the version of its shared object).
#
# How: each imported library of HETSIM_STATIC_PATTERN gets a static twin (hetsim_static_<name>, the
# archive, its usage requirements, and its dependencies' twins), and HetsimDeps() names a library as
# "the twin when the target being linked is an executable, else the library".
set(HETSIM_STATIC_PATTERN "^(absl::|Boost::|protobuf::libprotobuf$|yaml-cpp$)")

# The archive beside an imported library's shared object (lib<name>.a for lib<name>.so[.N]), or "".
function(hetsim_static_archive target out)
  get_target_property(configs ${target} IMPORTED_CONFIGURATIONS)
  set(properties IMPORTED_LOCATION)
  if(configs)
    foreach(config ${configs})
      list(APPEND properties IMPORTED_LOCATION_${config})
    endforeach()
  endif()
  set(${out} "" PARENT_SCOPE)
  foreach(property ${properties})
    get_target_property(location ${target} ${property})
    if(location AND location MATCHES "^(.*/lib[^/]+)\\.so(\\.[0-9.]+)?$")
      set(archive "${CMAKE_MATCH_1}.a")  # expanded after the match, not in the same if()
      if(EXISTS "${archive}")
        set(${out} "${archive}" PARENT_SCOPE)
        return()
      endif()
    endif()
  endforeach()
endfunction()

# `out`: the static twin of `target`, created on first use, or `target` itself when it is not an imported
# library of HETSIM_STATIC_PATTERN, has no archive, or (an interface library) no dependency with a twin.
function(hetsim_static_twin target out)
  string(MAKE_C_IDENTIFIER "hetsim_static_${target}" twin)
  set(${out} ${target} PARENT_SCOPE)
  if(TARGET ${twin})
    set(${out} ${twin} PARENT_SCOPE)
    return()
  endif()
  if(NOT TARGET ${target} OR NOT target MATCHES "${HETSIM_STATIC_PATTERN}")
    return()
  endif()
  get_target_property(type ${target} TYPE)
  set(archive "")
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    hetsim_static_archive(${target} archive)
    if(NOT archive)
      return()
    endif()
  endif()
  get_target_property(deps ${target} INTERFACE_LINK_LIBRARIES)
  set(twin_deps "")
  set(changed FALSE)
  if(deps)
    foreach(dep ${deps})
      set(mapped ${dep})
      if(NOT dep MATCHES "\\$<")
        hetsim_static_twin(${dep} mapped)
      endif()
      if(NOT mapped STREQUAL dep)
        set(changed TRUE)
      endif()
      list(APPEND twin_deps ${mapped})
    endforeach()
  endif()
  if(type STREQUAL "INTERFACE_LIBRARY")
    if(NOT changed)
      return()
    endif()
    add_library(${twin} INTERFACE IMPORTED GLOBAL)
  else()
    add_library(${twin} STATIC IMPORTED GLOBAL)
    set_target_properties(${twin} PROPERTIES IMPORTED_LOCATION "${archive}")
  endif()
  foreach(property INTERFACE_INCLUDE_DIRECTORIES INTERFACE_SYSTEM_INCLUDE_DIRECTORIES INTERFACE_COMPILE_DEFINITIONS
                   INTERFACE_COMPILE_OPTIONS INTERFACE_COMPILE_FEATURES INTERFACE_LINK_OPTIONS)
    get_target_property(value ${target} ${property})
    if(value)
      set_target_properties(${twin} PROPERTIES ${property} "${value}")
    endif()
  endforeach()
  if(twin_deps)
    set_target_properties(${twin} PROPERTIES INTERFACE_LINK_LIBRARIES "${twin_deps}")
  endif()
  set(${out} ${twin} PARENT_SCOPE)
endfunction()

# `out`: `libs`, each library with a static twin named as "$<IF:executable,twin,library>".
function(HetsimDeps out)
  set(result "")
  foreach(lib ${ARGN})
    set(twin ${lib})
    if(HETSIM_STATIC_DEPS)
      hetsim_static_twin(${lib} twin)
    endif()
    if(twin STREQUAL lib)
      list(APPEND result ${lib})
    else()
      list(APPEND result "$<IF:$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>,${twin},${lib}>")
    endif()
  endforeach()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

# toml++ header-only (no shared object to load), or its shared library with HETSIM_STATIC_DEPS off.
add_library(hetsim_toml INTERFACE)
if(HETSIM_STATIC_DEPS)
  target_include_directories(hetsim_toml INTERFACE
                             $<TARGET_PROPERTY:tomlplusplus::tomlplusplus,INTERFACE_INCLUDE_DIRECTORIES>)
  target_compile_definitions(hetsim_toml INTERFACE TOML_HEADER_ONLY=1)
  # For hetsim itself (CMakeLists.txt): the benchmarks link Google Benchmark's shared object, which
  # needs the shared libstdc++.
  set(HETSIM_STATIC_RUNTIME -static-libstdc++ -static-libgcc)
else()
  target_link_libraries(hetsim_toml INTERFACE tomlplusplus::tomlplusplus)
endif()
