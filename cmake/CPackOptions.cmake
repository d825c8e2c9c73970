# CPack per-generator settings (CPACK_PROJECT_CONFIG_FILE): the .deb installs into /usr; the tarball is a
# relocatable prefix (bin/, lib/, include/, share/ at its top), as cmake --install --prefix makes.
if(CPACK_GENERATOR STREQUAL "TGZ")
  set(CPACK_PACKAGING_INSTALL_PREFIX "")
endif()
