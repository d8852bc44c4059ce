# Two Debian packages from the install rules (make package): sockmatrix-agent (the agent and
# its unit) and sockmatrix-coordinator (the coordinator, the CLI, the dashboard and its unit).
# Their dependencies are the runtime libraries dpkg-shlibdeps finds in the binaries, never a
# -dev package; /etc/default files are conffiles, so an upgrade keeps a lab's settings.
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL agent coordinator)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "sockmatrix maintainers <sockmatrix@localhost>")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_AGENT_PACKAGE_NAME sockmatrix-agent)
set(CPACK_DEBIAN_COORDINATOR_PACKAGE_NAME sockmatrix-coordinator)
set(CPACK_COMPONENT_AGENT_DESCRIPTION
    "sockmatrix agent: measures this machine's network transports for the lab's coordinator")
set(CPACK_COMPONENT_COORDINATOR_DESCRIPTION
    "sockmatrix coordinator: fleet, matrix runs, store, anomalies, dashboard, and the CLI")
file(WRITE ${CMAKE_BINARY_DIR}/deb-agent/conffiles "/etc/default/sockmatrix-agent\n")
file(WRITE ${CMAKE_BINARY_DIR}/deb-coordinator/conffiles "/etc/default/sockmatrix-coordinator\n")
set(CPACK_DEBIAN_AGENT_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/deb-agent/conffiles)
set(CPACK_DEBIAN_COORDINATOR_PACKAGE_CONTROL_EXTRA ${CMAKE_BINARY_DIR}/deb-coordinator/conffiles)
include(CPack)
