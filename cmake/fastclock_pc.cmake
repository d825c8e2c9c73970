# Writes fastclock.pc at install time (CMakeLists.txt's install(CODE) sets _fc_pc_in, _fc_pc_out, _fc_pc_libdir,
# _fc_pc_includedir, _fc_pc_version), for the prefix installed into (CMAKE_INSTALL_PREFIX, as cpack sets it):
#   /usr or /usr/local  literal paths (prefix=/usr, libdir=${prefix}/lib/<multiarch>): pkg-config then drops
#                       -I/usr/include and -L of the system library directory and prints plain -lfastclock
#   any other prefix    relocatable, prefix=${pcfiledir}/../.. (the tarball, cmake --install --prefix DIR)
# An absolute libdir or includedir (distribution builds pass /usr/lib64) is written as given.
string(REGEX REPLACE "(.)/+$" "\\1" _fc_pc_p "${CMAKE_INSTALL_PREFIX}")
if(_fc_pc_p MATCHES "^/usr(/local)?$")
  set(FASTCLOCK_PC_PREFIX "${_fc_pc_p}")
else()
  file(RELATIVE_PATH _fc_up "/p/${_fc_pc_libdir}/pkgconfig" "/p") # ../.. for lib
  string(REGEX REPLACE "/$" "" _fc_up "${_fc_up}")
  set(FASTCLOCK_PC_PREFIX "\${pcfiledir}/${_fc_up}")
endif()
if(IS_ABSOLUTE "${_fc_pc_libdir}")
  set(FASTCLOCK_PC_LIBDIR "${_fc_pc_libdir}")
  if(NOT _fc_pc_p MATCHES "^/usr(/local)?$")
    set(FASTCLOCK_PC_PREFIX "${_fc_pc_p}") # the relative path would climb from an absolute libdir
  endif()
else()
  set(FASTCLOCK_PC_LIBDIR "\${prefix}/${_fc_pc_libdir}")
endif()
if(IS_ABSOLUTE "${_fc_pc_includedir}")
  set(FASTCLOCK_PC_INCLUDEDIR "${_fc_pc_includedir}")
else()
  set(FASTCLOCK_PC_INCLUDEDIR "\${prefix}/${_fc_pc_includedir}")
endif()
set(PROJECT_VERSION "${_fc_pc_version}")
configure_file("${_fc_pc_in}" "${_fc_pc_out}" @ONLY)
