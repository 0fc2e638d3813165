# Static linking of the third-party libraries (HETSIM_STATIC_DEPS, issue 43). Linked as shared objects,
# hetsim loads 40 of them (37 of them Abseil's) and the dynamic loader resolves every relocation against
# all of them at start: 2-3 ms of a 16 ms `hetsim collective` on 512 GPUs (docs/performance.md, "Process
# start"). Debian ships the same libraries as position-independent static archives beside the shared
# objects (libabsl_*.a, libprotobuf.a, libboost_*.a, libyaml-cpp.a; checked: no R_X86_64_32 relocation),
# so the imported targets are pointed at those archives: the same code, linked into the binary (and the
# Python extension) instead of loaded. toml++ is used header-only (its Debian package ships the headers
# of the same version as its shared object). libstdc++ and libgcc are linked statically into executables.
# glibc stays shared.

# Every imported library target of this directory named by `pattern` whose location is lib<name>.so[.N]
# with a lib<name>.a beside it now names the archive, for every configuration it was imported for.
function(hetsim_prefer_static_archives pattern)
  get_property(imported DIRECTORY PROPERTY IMPORTED_TARGETS)
  foreach(target ${imported})
    if(NOT target MATCHES "${pattern}")
      continue()
    endif()
    get_target_property(type ${target} TYPE)
    if(NOT type STREQUAL "SHARED_LIBRARY" AND NOT type STREQUAL "UNKNOWN_LIBRARY")
      continue()
    endif()
    get_target_property(configs ${target} IMPORTED_CONFIGURATIONS)
    set(properties IMPORTED_LOCATION)
    if(configs)
      foreach(config ${configs})
        list(APPEND properties IMPORTED_LOCATION_${config})
      endforeach()
    endif()
    foreach(property ${properties})
      get_target_property(location ${target} ${property})
      if(location AND location MATCHES "^(.*/lib[^/]+)\\.so(\\.[0-9.]+)?$")
        set(archive "${CMAKE_MATCH_1}.a")  # expanded after the match, not in the same if()
        if(EXISTS "${archive}")
          set_target_properties(${target} PROPERTIES ${property} "${archive}")
        endif()
      endif()
    endforeach()
  endforeach()
endfunction()

if(HETSIM_STATIC_DEPS)
  hetsim_prefer_static_archives("^(absl::|Boost::|protobuf::libprotobuf$|yaml-cpp$)")
  add_library(hetsim_toml INTERFACE)
  target_include_directories(hetsim_toml INTERFACE
                             $<TARGET_PROPERTY:tomlplusplus::tomlplusplus,INTERFACE_INCLUDE_DIRECTORIES>)
  target_compile_definitions(hetsim_toml INTERFACE TOML_HEADER_ONLY=1)
  add_link_options($<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:-static-libstdc++>
                   $<$<STREQUAL:$<TARGET_PROPERTY:TYPE>,EXECUTABLE>:-static-libgcc>)
else()
  add_library(hetsim_toml INTERFACE)
  target_link_libraries(hetsim_toml INTERFACE tomlplusplus::tomlplusplus)
endif()
