# cmake/viewer.cmake — owns embedding viewer/ into libstrobe_server: a custom
# command runs cmake/embed.cmake whenever a viewer file changes and adds the
# generated viewer_assets.c to strobe_server_objects, so the live server and
# `strobe view` serve the same files. Included from the top-level
# CMakeLists.txt's >>server section after strobe_server_objects exists.
file(GLOB STROBE_VIEWER_FILES CONFIGURE_DEPENDS
     "${PROJECT_SOURCE_DIR}/viewer/*.html" "${PROJECT_SOURCE_DIR}/viewer/*.css"
     "${PROJECT_SOURCE_DIR}/viewer/*.js" "${PROJECT_SOURCE_DIR}/viewer/*.svg"
     "${PROJECT_SOURCE_DIR}/viewer/*.png" "${PROJECT_SOURCE_DIR}/viewer/*.ico"
     "${PROJECT_SOURCE_DIR}/viewer/*.json")
set(STROBE_VIEWER_ASSETS_C "${PROJECT_BINARY_DIR}/generated/viewer_assets.c")
add_custom_command(
  OUTPUT "${STROBE_VIEWER_ASSETS_C}"
  COMMAND "${CMAKE_COMMAND}" -DSRC_DIR=${PROJECT_SOURCE_DIR}/viewer -DOUT=${STROBE_VIEWER_ASSETS_C}
          -P "${PROJECT_SOURCE_DIR}/cmake/embed.cmake"
  DEPENDS ${STROBE_VIEWER_FILES} "${PROJECT_SOURCE_DIR}/cmake/embed.cmake"
  COMMENT "Embedding viewer/ into libstrobe_server"
  VERBATIM)
target_sources(strobe_server_objects PRIVATE "${STROBE_VIEWER_ASSETS_C}")
