#!/usr/bin/env bash
# Install the Debian packages sedpack-hpc needs, if any are missing.
# Idempotent and non-interactive: does nothing when everything is present.
set -euo pipefail

PACKAGES=(
  g++ cmake ninja-build pkg-config ccache lld
  zlib1g-dev libbz2-dev liblzma-dev liblz4-dev libzstd-dev libxxhash-dev libssl-dev
  # Fast DEFLATE: ISA-L compresses/decompresses GZIP shards (optional in CMake,
  # zlib otherwise); libdeflate and the tools (igzip, libdeflate-gzip) are for
  # bench/codec_bench and for comparing by hand.
  libisal-dev isal libdeflate-dev libdeflate-tools
  nlohmann-json3-dev libsimdjson-dev libflatbuffers-dev flatbuffers-compiler flatbuffers-compiler-dev
  libprotobuf-dev protobuf-compiler
  python3
  # The Python module sedpack_hpc (python/) and its tests.
  python3-dev python3-numpy pybind11-dev python3-pytest python3-mpi4py python3-mypy
  # sedpack_hpc.torch and its tests (CPU torch); pip install . and wheels (python/install_tests).
  python3-torch python3-build python3-venv python3-setuptools python3-wheel python3-pip
  # Plain readers of the shards with decode points (tests/unit/codecs) and the
  # reference's own LZ4/ZSTD modules.
  python3-lz4 python3-zstandard
  libboost-program-options-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin
  libhdf5-dev
  # Parallel HDF5 (MPI-IO) for builds with MPI, and h5py (serial and MPI) for
  # the export tests that read the files back.
  libhdf5-openmpi-dev python3-h5py python3-h5py-mpi
  # Headless rendering of the `sedpack report` page (tests/report, test stage).
  chromium
  # Fuzzing (scripts/fuzz.sh): clang 14 and its runtimes. libclang-rt-14-dev holds
  # libclang_rt.fuzzer*.a and clang's ASan/UBSan runtimes; it is only a
  # Recommends of clang and so is not pulled in by --no-install-recommends.
  clang libclang-rt-14-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: missing packages (${missing[*]}) and not root; install them and rerun" >&2
    exit 1
  fi
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
