# Every third-party library comes through pkg-config as an imported target.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
pkg_check_modules(NANOMSG REQUIRED IMPORTED_TARGET nanomsg)
pkg_check_modules(LWS REQUIRED IMPORTED_TARGET libwebsockets)
pkg_check_modules(CJSON REQUIRED IMPORTED_TARGET libcjson)
pkg_check_modules(CURL REQUIRED IMPORTED_TARGET libcurl)
# The agent's fingerprint reads links, qdiscs and classes over netlink with it.
pkg_check_modules(LIBNL_ROUTE REQUIRED IMPORTED_TARGET libnl-route-3.0)
pkg_check_modules(SQLITE3 REQUIRED IMPORTED_TARGET sqlite3)
pkg_check_modules(CRYPTO REQUIRED IMPORTED_TARGET libcrypto)
# The built-in HTTP source's TLS: the same OpenSSL that libcurl and libcrypto come from.
pkg_check_modules(SSL REQUIRED IMPORTED_TARGET libssl)
if(SM_TESTS)
  pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka)
endif()
