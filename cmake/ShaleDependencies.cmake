# Finds shale's dependencies: Debian 12 packages only, nothing downloaded.
# The installed package config (shaleConfig.cmake.in) finds the same set for consumers of the
# static library.
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(fmt REQUIRED)
pkg_check_modules(xxhash REQUIRED IMPORTED_TARGET libxxhash)
pkg_check_modules(zstd REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(uring REQUIRED IMPORTED_TARGET liburing)
