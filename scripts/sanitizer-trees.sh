# Sourced by run-hardening.sh and fuzz.sh: how the sanitizer build trees are
# configured, in one place.
#
#   configure_asan_tree DIR [ARGS]  clang, ASan+UBSan and libFuzzer
#                             instrumentation: the library tests and the fuzz
#                             targets share this one tree (build-asan/)
#   configure_tsan_tree DIR [ARGS]  gcc, ThreadSanitizer, MPI off (build-tsan/)
#
# ARGS go to cmake after these (run-hardening.sh adds -DSEDPACK_WERROR=ON).
#
# Both use -O1 and line tables only: they compile in about half the time of
# -O2 -g, and reports still name file and line. They build the library tests
# (SEDPACK_TEST_SET=library) and neither the command-line tool nor the
# benchmarks: the tool is argument parsing and printing over the library, whose
# code those tests run; its end-to-end tests run in the optimized tree.
SAN_GEN=()
command -v ninja > /dev/null 2>&1 && SAN_GEN=(-G Ninja)
SAN_FLAGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"
           -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DSEDPACK_BUILD_BENCH=OFF
           -DSEDPACK_BUILD_CLI=OFF -DSEDPACK_TEST_SET=library)

_san_configure() {  # _san_configure DIR CMAKE_ARGS...
  local dir=$1
  shift
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S . -B "$dir" "${SAN_GEN[@]}" "$@"
  else
    cmake "$dir" "$@" > /dev/null
  fi
}
configure_asan_tree() {
  # The compiler of a tree is fixed when it is first configured.
  CC=clang CXX=clang++ _san_configure "$1" "${SAN_FLAGS[@]}" -DSEDPACK_SANITIZE=ON -DSEDPACK_FUZZ=ON \
    -DSEDPACK_BUILD_TESTS=ON "${@:2}"
}
configure_tsan_tree() {
  _san_configure "$1" "${SAN_FLAGS[@]}" -DSEDPACK_TSAN=ON -DSEDPACK_WITH_MPI=OFF "${@:2}"
}
