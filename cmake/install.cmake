# What `cmake --install` adds beside the library's own rules (CMakeLists.txt),
# so that an installation is usable as HPC software (issue 32; docs/USAGE.md,
# "Installing").  For this build's MPI (STRATA_MPI), under <libdir>/strata/<mpi>/:
#   bin/strata-run          the installed launcher (packaging/strata-run.in): it
#                           finds the library from where it is installed, where
#                           the build tree's (scripts/strata-run.in) cannot
#   pkgconfig/strata.pc     the same as <libdir>/pkgconfig/strata-<mpi>.pc, under
#                           the name the module's PKG_CONFIG_PATH makes `strata`
# and for every MPI (each MPI's install writes the same files):
#   <bindir>/strata-run, strata-info, strata-bench, strata-calibrate: the
#                           launcher, and wrappers that run the tool of the MPI
#                           in use (packaging/strata-tool.in); strata-report
#   <mandir>/man1/*.1       the tools' man pages (packaging/man)
#   <datadir>/modulefiles/strata/<mpi>.lua and <mpi> (Tcl): the environment
#                           modules (packaging/modules); `module use
#                           <datadir>/modulefiles`, then `module load strata/<mpi>`
# Set STRATA_INSTALL_EXTRAS=OFF for the library's rules alone.
include(GNUInstallDirs)
option(STRATA_INSTALL_EXTRAS "install the launcher on PATH, man pages and environment modules" ON)

# Installed programs find libstrata beside them (<libdir>/strata/<mpi>/bin/..);
# strata-calibrate has had this since libstrata starts it (CMakeLists.txt).
set_target_properties(strata-info strata-bench PROPERTIES INSTALL_RPATH "$ORIGIN/..")

set(STRATA_FULL_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}/strata")
file(RELATIVE_PATH STRATA_REL_LIBDIR "${CMAKE_INSTALL_FULL_BINDIR}" "${STRATA_FULL_LIBDIR}")
set(strata_pkg ${CMAKE_BINARY_DIR}/install)
configure_file(${CMAKE_SOURCE_DIR}/packaging/strata-run.in ${strata_pkg}/strata-run @ONLY)

# The only strata-run installed there: one installed over another of the same
# time stamp would be skipped as up to date (both are configured at once),
# which left MPICH's build-tree copy in a package once.
install(PROGRAMS ${strata_pkg}/strata-run DESTINATION ${CMAKE_INSTALL_LIBDIR}/strata/${STRATA_MPI}/bin)
install(FILES ${CMAKE_BINARY_DIR}/lib/pkgconfig/${STRATA_PC_NAME}.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/strata/${STRATA_MPI}/pkgconfig RENAME strata.pc)

if(STRATA_INSTALL_EXTRAS)
  install(PROGRAMS ${strata_pkg}/strata-run ${CMAKE_SOURCE_DIR}/tools/strata-report
          DESTINATION ${CMAKE_INSTALL_BINDIR})
  foreach(TOOL strata-info strata-bench strata-calibrate)
    configure_file(${CMAKE_SOURCE_DIR}/packaging/strata-tool.in ${strata_pkg}/${TOOL} @ONLY)
    install(PROGRAMS ${strata_pkg}/${TOOL} DESTINATION ${CMAKE_INSTALL_BINDIR})
  endforeach()
  file(GLOB strata_man ${CMAKE_SOURCE_DIR}/packaging/man/*.1)
  install(FILES ${strata_man} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  # The modules name the installation's own paths: configured when installing,
  # so that `cmake --install --prefix DIR` gets DIR in them.
  install(CODE "
    set(STRATA_MPI \"${STRATA_MPI}\")
    set(PROJECT_VERSION \"${PROJECT_VERSION}\")
    set(STRATA_FULL_LIBDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/strata\")
    set(STRATA_FULL_MANDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_MANDIR}\")
    configure_file(\"${CMAKE_SOURCE_DIR}/packaging/modules/strata.lua.in\"
                   \"${strata_pkg}/modulefiles/strata/${STRATA_MPI}.lua\" @ONLY)
    configure_file(\"${CMAKE_SOURCE_DIR}/packaging/modules/strata.tcl.in\"
                   \"${strata_pkg}/modulefiles/strata/${STRATA_MPI}\" @ONLY)")
  install(FILES ${strata_pkg}/modulefiles/strata/${STRATA_MPI}.lua
                ${strata_pkg}/modulefiles/strata/${STRATA_MPI}
          DESTINATION ${CMAKE_INSTALL_DATADIR}/modulefiles/strata)
endif()
