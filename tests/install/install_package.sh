#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Driver of the install_package test (see CMakeLists.txt next to it).
# Usage: install_package.sh CMAKE BUILD_DIR SOURCE_DIR WORK_DIR CXX GENERATOR PKG_CONFIG LIBDIR HAVE_HDF5 [MPIEXEC]
# Everything it writes goes under WORK_DIR (inside the build tree), which it
# empties first; it reads only the build tree, the repository and WORK_DIR (plus
# the compiler's and the dependencies' system files). Any failed step fails it.
set -euo pipefail
CMAKE=$1 BUILD=$2 SRC=$3 WORK=$4 CXX=$5 GENERATOR=$6 PKG_CONFIG=$7 LIBDIR=$8 HAVE_HDF5=$9 MPIEXEC=${10:-}
HERE=$SRC/tests/install
PREFIX=$WORK/prefix

step() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

rm -rf "$WORK"
mkdir -p "$WORK"

step "install $BUILD into $PREFIX"
"$CMAKE" --install "$BUILD" --prefix "$PREFIX" > "$WORK/install.log" || { cat "$WORK/install.log"; fail "cmake --install"; }
for f in bin/sedpack include/sedpack/status.h include/sedpack/dataset/filler.h include/sedpack/config.h \
         "$LIBDIR/libsedpack_core.a" "$LIBDIR/cmake/sedpack/sedpackConfig.cmake" \
         "$LIBDIR/cmake/sedpack/sedpackConfigVersion.cmake" "$LIBDIR/cmake/sedpack/sedpackTargets.cmake" \
         "$LIBDIR/pkgconfig/sedpack.pc" share/bash-completion/completions/sedpack share/man/man1/sedpack.1; do
  [ -e "$PREFIX/$f" ] || fail "not installed: $f"
done
# A package that points back into the source or build tree only works on this machine.
if grep -rlF -e "$SRC/" -e "$BUILD/" "$PREFIX/$LIBDIR/cmake" "$PREFIX/$LIBDIR/pkgconfig"; then
  fail "the installed package refers to the source or build tree (files above)"
fi

# The find_package probe: no user package registry, nothing but the prefix.
CMAKE_ARGS=(-G "$GENERATOR" -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_PREFIX_PATH="$PREFIX"
            -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
probe_n=0
probe() {  # probe EXPECT(ok|fail) VERSION COMPONENTS [MESSAGE that a failure must print]
  local expect=$1 version=$2 components=$3 message=${4:-}
  probe_n=$((probe_n + 1))
  local dir=$WORK/probe$probe_n log=$WORK/probe$probe_n.log
  step "find_package(sedpack $version COMPONENTS $components): expect $expect"
  if "$CMAKE" -S "$HERE/probe" -B "$dir" "${CMAKE_ARGS[@]}" -DPROBE_VERSION="$version" \
       "-DPROBE_COMPONENTS=$components" > "$log" 2>&1; then
    [ "$expect" = ok ] || { cat "$log"; fail "find_package should have failed"; }
  else
    [ "$expect" = fail ] || { cat "$log"; fail "find_package failed"; }
    if [ -n "$message" ] && ! grep -qF "$message" "$log"; then
      cat "$log"; fail "the failure does not say: $message"
    fi
  fi
}
probe ok "" "core;dataset;distributed"
probe ok "0.1" ""
probe fail "1" "" "version"
probe fail "" "nosuchmodule" "has no component 'nosuchmodule'"
if [ -n "$MPIEXEC" ]; then probe ok "" "mpi"; else probe fail "" "mpi" "has no component 'mpi'"; fi
if [ "$HAVE_HDF5" = ON ]; then probe ok "" "hdf5"; else probe fail "" "hdf5" "has no component 'hdf5'"; fi

step "examples/ as a separate project"
EX=$WORK/examples
"$CMAKE" -S "$SRC/examples" -B "$EX" "${CMAKE_ARGS[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo
grep -qxF "sedpack_DIR:PATH=$PREFIX/$LIBDIR/cmake/sedpack" "$EX/CMakeCache.txt" \
  || fail "examples did not find the installed package"
"$CMAKE" --build "$EX" -j 1

step "write_traces / read_traces"
"$EX/write_traces" "$WORK/traces"
"$EX/read_traces" "$WORK/traces"
# write_traces refuses to overwrite a dataset, with a Status message and exit 1.
if "$EX/write_traces" "$WORK/traces" 2> "$WORK/again.err"; then fail "write_traces overwrote a dataset"; fi
grep -q "Already exists" "$WORK/again.err" || { cat "$WORK/again.err"; fail "no "Already exists" status"; }

step "installed sedpack verify"
"$PREFIX/bin/sedpack" verify --deep "$WORK/traces"

if [ -n "$MPIEXEC" ]; then
  [ -x "$EX/mpi_capture" ] || fail "MPI was built but examples/ did not build mpi_capture"
  step "mpi_capture under mpirun -n 2"
  "$MPIEXEC" -n 2 --oversubscribe "$EX/mpi_capture" "$WORK/mpi_traces"
  "$PREFIX/bin/sedpack" verify "$WORK/mpi_traces"
fi

step "pkg-config"
export PKG_CONFIG_PATH=$PREFIX/$LIBDIR/pkgconfig
unset PKG_CONFIG_LIBDIR
"$PKG_CONFIG" --exists --print-errors sedpack
[ "$("$PKG_CONFIG" --modversion sedpack)" = "$(sed -n 's/^Version: //p' "$PREFIX/$LIBDIR/pkgconfig/sedpack.pc")" ]
# shellcheck disable=SC2046  # the flags are meant to be split
"$CXX" -std=c++20 -o "$WORK/pkgconfig_prog" "$HERE/pkgconfig_prog.cc" \
  $("$PKG_CONFIG" --cflags --libs sedpack)
"$WORK/pkgconfig_prog" "$WORK/traces" 300
if [ -n "$MPIEXEC" ]; then
  "$WORK/pkgconfig_prog" "$WORK/mpi_traces" 200  # 2 ranks x 100 captures
fi

echo "install_package: all steps passed"
