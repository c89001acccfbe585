# Writes OUT (a C++ header) holding the text of every target description in FILES, so that the
# installed gcomp needs no data path. Run at build time by passes/CMakeLists.txt.
string(REPLACE "|" ";" FILES "${FILES}")
set(body "")
foreach(f IN LISTS FILES)
  file(READ "${f}" text)
  get_filename_component(n "${f}" NAME)
  string(APPEND body "    {\"passes/targets/${n}\", R\"gcomp_target(${text})gcomp_target\"},\n")
endforeach()
file(WRITE "${OUT}.tmp" "// Generated from passes/targets/*.target by passes/targets/embed.cmake; do not edit.
#pragma once

namespace gcomp::passes {

struct EmbeddedTarget {
  const char* path;
  const char* text;
};

inline constexpr EmbeddedTarget kEmbeddedTargets[] = {
${body}};

}  // namespace gcomp::passes
")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
