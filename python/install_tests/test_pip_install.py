# SPDX-License-Identifier: Apache-2.0
"""`pip install --no-build-isolation .` from a clean clone of the checkout into
a venv with the system site packages, the installed copy imported from `/` and
part of the pytest suite run against it, a wheel built with
`python3 -m build --no-isolation --wheel`, and `pip uninstall` removing it.
Slow (a build of the library and module): the ctest `python_pip_install`, in
the full test set only (label e2e)."""
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

SOURCE = pathlib.Path(os.environ.get("SEDPACK_SOURCE_DIR") or pathlib.Path(__file__).resolve().parents[2])
# Under the build tree (and so under ccache's base_dir in CI) unless told otherwise.
WORK = pathlib.Path(os.environ.get("SEDPACK_PIP_TEST_DIR") or SOURCE / "build" / "pip_install.tmp")


def run(*cmd, cwd="/", env=None, timeout=1200):
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} failed ({r.returncode}):\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    return r.stdout


def clean_env():
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def test_pip_install_from_a_clean_clone():
    if shutil.which("git") is None or not (SOURCE / ".git").exists():
        pytest.skip(f"cannot run pip install here: {SOURCE} is not a git checkout or git is missing")
    try:
        import venv  # noqa: F401
        import build  # noqa: F401
    except ImportError as e:
        pytest.skip(f"cannot run pip install here: {e} (Debian: python3-venv, python3-build)")
    shutil.rmtree(WORK, ignore_errors=True)
    WORK.mkdir(parents=True)
    clone, env_dir = WORK / "clone", WORK / "venv"
    run("git", "clone", "--quiet", SOURCE, clone)
    run(sys.executable, "-m", "venv", "--system-site-packages", env_dir)
    py = env_dir / "bin" / "python"
    env = clean_env()
    env.setdefault("SEDPACK_JOBS", "2")
    # --no-index: nothing from the network; the build needs only what is installed.
    run(py, "-m", "pip", "install", "--no-index", "--no-build-isolation", clone, env=env)
    where = run(py, "-c", "import sedpack_hpc, sedpack_hpc.torch; print(sedpack_hpc.__file__)", env=env).strip()
    assert pathlib.Path(where).is_relative_to(env_dir), where
    typed = pathlib.Path(where).parent
    assert (typed / "_sedpack_hpc.pyi").is_file() and (typed / "py.typed").is_file(), sorted(typed.iterdir())
    tests = clone / "python" / "tests"
    env["SEDPACK_GOLDEN_DIR"] = str(clone / "tests" / "data" / "golden")
    out = run(py, "-m", "pytest", "-q", "-p", "no:cacheprovider", tests / "test_order.py", tests / "test_golden.py",
              tests / "test_torch.py", "-k", "not ddp and not spawn", env=env)
    print(out[-600:])
    # A wheel from the same tree (the CMake build directory is reused).
    run(py, "-m", "build", "--no-isolation", "--wheel", "--outdir", WORK / "dist", clone, env=env)
    wheels = list((WORK / "dist").glob("sedpack_hpc-*.whl"))
    assert len(wheels) == 1, wheels
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert "sedpack_hpc/torch.py" in names and any(n.startswith("sedpack_hpc/_sedpack_hpc") for n in names), names
    assert "sedpack_hpc/_sedpack_hpc.pyi" in names and "sedpack_hpc/py.typed" in names, names
    run(py, "-m", "pip", "uninstall", "-y", "sedpack-hpc", env=env)
    r = subprocess.run([py, "-c", "import sedpack_hpc"], cwd="/", env=clean_env(), capture_output=True, text=True)
    assert r.returncode != 0 and "No module named 'sedpack_hpc'" in r.stderr, r.stderr
    site = run(py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", env=env).strip()
    left = [p.name for p in pathlib.Path(site).iterdir() if p.name.lower().startswith("sedpack")]
    assert not left, left
    shutil.rmtree(WORK, ignore_errors=True)
