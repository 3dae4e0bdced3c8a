# kf_embed_files(<target> NAMESPACE <ns> BASE_DIR <dir> FILES <f>...)
# Generates a translation unit holding each file as a char array, regenerated when a file
# changes, plus `std::span<const kf::EmbeddedFile> <ns>::files()`. Used for the prelude headers
# that NVRTC receives in memory, so no include path on the user's disk is needed for them.
set(_KF_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/KfEmbedGenerate.cmake)

function(kf_embed_files target)
  cmake_parse_arguments(E "" "NAMESPACE;BASE_DIR" "FILES" ${ARGN})
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${target}_embedded.cpp)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DNS=${E_NAMESPACE} -DBASE=${E_BASE_DIR}
            "-DFILES=${E_FILES}" -P ${_KF_EMBED_SCRIPT}
    DEPENDS ${E_FILES} ${_KF_EMBED_SCRIPT}
    COMMENT "Embedding ${target} (${E_NAMESPACE})" VERBATIM)
  target_sources(${target} PRIVATE ${out})
endfunction()
