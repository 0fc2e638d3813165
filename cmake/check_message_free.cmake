# cmake -DSOURCE_DIR=<repo> -P cmake/check_message_free.cmake
# Fails when a source below the edge sees a protobuf message: a file in base/, base/spec/, topology/ or
# sim/ (every subfolder) or planner/ that includes a proto/ header or a generated *.pb.h, or names v1::. Those
# modules read the typed spec (base/spec/), which proto/resolve*.h makes once from validated messages
# (docs/architecture.md, "Validate once, at the edge"); the planner returns a spec plan, which the edge
# writes as a message (proto/plan_message.h, service/driver/plan_messages.h).
cmake_minimum_required(VERSION 3.25)

set(errors "")
foreach(dir base topology sim planner)
  file(GLOB_RECURSE srcs ${SOURCE_DIR}/${dir}/*.cc ${SOURCE_DIR}/${dir}/*.h)
  foreach(src ${srcs})
    file(RELATIVE_PATH rel ${SOURCE_DIR} ${src})
    file(STRINGS ${src} includes REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<](proto/[^\">]*|[^\">]*\\.pb\\.h)[\">]")
    foreach(line ${includes})
      string(STRIP "${line}" line)
      string(APPEND errors "${rel}: ${line}\n")
    endforeach()
    file(STRINGS ${src} names REGEX "(^|[^A-Za-z0-9_])v1::")
    foreach(line ${names})
      string(STRIP "${line}" line)
      string(APPEND errors "${rel}: names v1:: in \"${line}\"\n")
    endforeach()
  endforeach()
endforeach()

if(errors)
  message(FATAL_ERROR "base/, topology/, sim/ and planner/ must not see protobuf messages (read base/spec/ instead):\n${errors}")
endif()
