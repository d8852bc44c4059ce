# Build options of sockmatrix, all in one place.
option(SM_TESTS "Build the unit and integration tests" ON)
option(SM_BENCH "Build and register the benchmarks (bench/)" OFF)
# Off by default: whoever builds the released source (a packager, a newer compiler) is not
# stopped by a warning. The Makefile's builds turn it on, and so does the Release build of the
# packages in the tests (tests/integration/debs.py).
option(SM_WERROR "Treat compiler warnings as errors" OFF)
set(SM_SANITIZER "none" CACHE STRING "Sanitizer build: none, address (ASan+UBSan), thread")
set_property(CACHE SM_SANITIZER PROPERTY STRINGS none address thread)

set(SM_WARN_FLAGS -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
    -Wformat=2 -Wvla -Wpointer-arith)
if(SM_WERROR)
  list(APPEND SM_WARN_FLAGS -Werror)
endif()

if(SM_SANITIZER STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  # With clang, the sanitizer build also builds the fuzz targets (tests/fuzz): the code they
  # call is instrumented for libFuzzer's coverage feedback.
  if(CMAKE_C_COMPILER_ID STREQUAL "Clang")
    set(SM_FUZZ ON)
    add_compile_options(-fsanitize=fuzzer-no-link)
  endif()
elseif(SM_SANITIZER STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT SM_SANITIZER STREQUAL "none")
  message(FATAL_ERROR "SM_SANITIZER must be none, address or thread, not '${SM_SANITIZER}'")
endif()

# Applies the project's warning flags to one target.
function(sm_warnings target)
  target_compile_options(${target} PRIVATE ${SM_WARN_FLAGS})
endfunction()

# The tests and benchmarks run on the system's python3, the one `make deps` installs, unless a
# Python3_EXECUTABLE is given. A version manager's shim found first on PATH (pyenv's is a shell
# script that resolves the version on every start) costs seconds per start on a busy machine,
# and the suite starts Python a few hundred times.
if(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "The interpreter of the tests")
endif()
