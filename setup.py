# SPDX-License-Identifier: Apache-2.0
"""The build step of pyproject.toml: CMake configures this tree (no tests,
benchmarks or CLI) and builds the `sedpack_hpc_ext` target only; its module is
copied into the wheel next to python/sedpack_hpc/*.py.

Environment: SEDPACK_PIP_BUILD_DIR (default <source>/build-pip, reused by the
next install), SEDPACK_JOBS (parallel compile jobs), SEDPACK_CMAKE_ARGS (more
-D options, split on spaces)."""
import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def project_version():
    text = (ROOT / "CMakeLists.txt").read_text()
    m = re.search(r"project\(\s*sedpack-hpc\s+VERSION\s+([0-9][0-9.]*)", text)
    if not m:
        raise RuntimeError("CMakeLists.txt: no `project(sedpack-hpc VERSION ...)`")
    return m.group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = pathlib.Path(os.environ.get("SEDPACK_PIP_BUILD_DIR") or ROOT / "build-pip")
        args = ["-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                # the flags of scripts/build.sh: a developer's ccache serves both
                "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG",
                "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG",
                "-DSEDPACK_BUILD_TESTS=OFF", "-DSEDPACK_BUILD_BENCH=OFF", "-DSEDPACK_BUILD_CLI=OFF",
                "-DSEDPACK_WITH_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}"]
        args += os.environ.get("SEDPACK_CMAKE_ARGS", "").split()
        if not (build_dir / "CMakeCache.txt").exists():
            gen = ["-G", "Ninja"] if shutil.which("ninja") else []
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build_dir), *gen, *args], check=True)
        else:
            subprocess.run(["cmake", str(build_dir), *args], check=True)
        jobs = os.environ.get("SEDPACK_JOBS") or str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "sedpack_hpc_ext", "-j", jobs], check=True)
        dest = pathlib.Path(self.get_ext_fullpath(ext.name))
        built = build_dir / "python" / "sedpack_hpc" / dest.name
        if not built.exists():
            raise RuntimeError(f"CMake did not produce {built} (another interpreter than {sys.executable}?)")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, dest)


(ROOT / "build-pip").mkdir(exist_ok=True)
setup(version=project_version(),
      ext_modules=[Extension("sedpack_hpc._sedpack_hpc", sources=[])],
      cmdclass={"build_ext": CMakeBuild},
      # setuptools' own staging next to the CMake tree, not in a developer's build/
      options={"build": {"build_base": "build-pip/setuptools"},
               "egg_info": {"egg_base": "build-pip"}})
