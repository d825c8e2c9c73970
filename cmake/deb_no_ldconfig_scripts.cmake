# CPACK_POST_BUILD_SCRIPTS: takes the postinst and postrm out of the runtime package. CMake's CPackDeb writes
# both, each calling ldconfig, for every package with a shared library under /usr/lib, and cannot be told not
# to; Debian policy 8.1.1 has ldconfig run by dpkg's trigger instead (cmake/deb/triggers: activate-noawait
# ldconfig), which the package carries, and lintian reports the scripts (maintscript-calls-ldconfig). The
# package is unpacked and built again with dpkg-deb, everything else as CPack made it.
foreach(_fc_deb IN LISTS CPACK_PACKAGE_FILES)
  if(NOT _fc_deb MATCHES "/libfastclock[0-9]+_[^/]*\\.deb$")
    continue()
  endif()
  set(_fc_dir "${CPACK_TOPLEVEL_DIRECTORY}/no-ldconfig-scripts")
  file(REMOVE_RECURSE "${_fc_dir}")
  execute_process(COMMAND dpkg-deb -R "${_fc_deb}" "${_fc_dir}" RESULT_VARIABLE _fc_rc)
  if(NOT _fc_rc EQUAL 0)
    message(FATAL_ERROR "dpkg-deb -R ${_fc_deb} failed (${_fc_rc})")
  endif()
  foreach(_fc_s postinst postrm)
    if(EXISTS "${_fc_dir}/DEBIAN/${_fc_s}")
      file(STRINGS "${_fc_dir}/DEBIAN/${_fc_s}" _fc_lines REGEX "[^ \t]")
      list(FILTER _fc_lines EXCLUDE REGEX "^#!|^[ \t]*(set -e|ldconfig|fi|if .*configure.*|if .*remove.*|exit 0)[ \t;]*(then)?[ \t]*$")
      if(_fc_lines) # anything but CPackDeb's ldconfig call: leave the package as it is
        message(FATAL_ERROR "${_fc_deb}: ${_fc_s} does more than call ldconfig: ${_fc_lines}")
      endif()
      file(REMOVE "${_fc_dir}/DEBIAN/${_fc_s}")
    endif()
  endforeach()
  execute_process(COMMAND dpkg-deb --root-owner-group -b "${_fc_dir}" "${_fc_deb}" OUTPUT_QUIET RESULT_VARIABLE _fc_rc)
  if(NOT _fc_rc EQUAL 0)
    message(FATAL_ERROR "dpkg-deb -b ${_fc_deb} failed (${_fc_rc})")
  endif()
  file(REMOVE_RECURSE "${_fc_dir}")
endforeach()
