# SPDX-License-Identifier: Apache-2.0
"""The stub sedpack_hpc/_sedpack_hpc.pyi against the built extension (ctest
python_stubtest):

1. mypy.stubtest: every public name of the module and of its classes is in
   the stub and vice versa, of the same kind (class, function, property,
   read-only or not, static method), and the stub itself type-checks.
2. The parameters (names, kinds, defaults) of every function and method of
   the stub against the signatures pybind11 writes into the docstrings
   (stubtest cannot see them: the extension's functions have no
   __text_signature__), overload by overload.
3. mypy --strict on usage.py, a typed use of the package (no error), and on
   usage_errors.py, whose lines marked `# error` must each be reported (the
   stub's types catch those mistakes) and no other line.

Usage: check_stubs.py <dir holding the built package sedpack_hpc>. Exits 77
(ctest: skipped) when mypy cannot be imported (Debian: python3-mypy).
"""
import ast
import importlib
import inspect
import os
import pathlib
import re
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
MODULE = "sedpack_hpc._sedpack_hpc"
MPI_NAMES = ["DistributedFiller", "distributed_check", "distributed_filler", "mpi_barrier", "mpi_rank", "mpi_size"]
# Dunders whose parameters pybind11 names itself (arg0) or that the stub
# types as Python does (__eq__(self, other: object)); their presence is
# still checked by stubtest.
UNCHECKED_PARAMETERS = {"__eq__", "__iter__", "__next__", "__repr__"}


def fail(problems):
    for p in problems:
        print("check_stubs:", p)
    print(f"check_stubs: FAILED ({len(problems)} problems)")
    sys.exit(1)


def mypy_env(package_dir, cache):
    env = dict(os.environ)
    env["MYPYPATH"] = str(package_dir)
    env["PYTHONPATH"] = os.pathsep.join([str(package_dir)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env["MYPY_CACHE_DIR"] = str(cache)
    return env


# ---- 1. stubtest --------------------------------------------------------------------

def run_stubtest(package_dir, work, have_mpi):
    cmd = [sys.executable, "-m", "mypy.stubtest", MODULE]
    if not have_mpi:
        allow = work / "allowlist.txt"
        allow.write_text("".join(f"{MODULE}.{n}\n" for n in MPI_NAMES))
        cmd += ["--allowlist", str(allow)]
    r = subprocess.run(cmd, cwd=work, env=mypy_env(package_dir, work / "cache"), capture_output=True, text=True)
    print(r.stdout.strip() or "stubtest: no output")
    return [f"mypy.stubtest failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"] if r.returncode != 0 else []


# ---- 2. parameters --------------------------------------------------------------------

class Param:
    def __init__(self, name, kind, default):
        self.name, self.kind, self.default = name, kind, default

    def __eq__(self, other):
        return (self.name, self.kind, self.default) == (other.name, other.kind, other.default)

    def __repr__(self):
        d = "" if self.default is NO_DEFAULT else f"={self.default!r}"
        return f"{self.kind}:{self.name}{d}"


NO_DEFAULT = "<none>"


def literal(node):
    if node is None:
        return NO_DEFAULT
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return ast.unparse(node)
    return list(value) if isinstance(value, tuple) else value


def params_of(fn, drop_self):
    a = fn.args
    out = []
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for arg, d in zip(positional, defaults):
        out.append(Param(arg.arg, "pos", literal(d)))
    if a.vararg:
        out.append(Param(a.vararg.arg, "*", NO_DEFAULT))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append(Param(arg.arg, "kw", literal(d)))
    if a.kwarg:
        out.append(Param(a.kwarg.arg, "**", NO_DEFAULT))
    if drop_self and out and out[0].name in ("self", "cls"):
        out = out[1:]
    return out


SIGNATURE = re.compile(r"^(?:\d+\. )?([A-Za-z_][A-Za-z_0-9]*)(\(.*\))(?: -> .*)?$")


def runtime_signatures(obj, name):
    """The parameter lists of pybind11's generated signatures in obj's docstring."""
    doc = getattr(obj, "__doc__", None) or ""
    sigs = []
    for line in doc.splitlines():
        m = SIGNATURE.match(line.strip())
        if not m or m.group(1) != name:
            continue
        if m.group(2) == "(*args, **kwargs)" and "Overloaded function." in doc:
            continue  # the overload set's own line
        tree = ast.parse(f"def {name}{m.group(2)}: pass")
        sigs.append(params_of(tree.body[0], drop_self=False))
    return sigs


def is_method(runtime):
    return not isinstance(runtime, staticmethod)


def check_parameters(module, stub_path):
    tree = ast.parse(stub_path.read_text())
    problems, checked = [], 0

    def compare(where, runtime_obj, defs, method):
        nonlocal checked
        name = defs[0].name
        got = runtime_signatures(runtime_obj, name)
        want = [params_of(d, drop_self=method) for d in defs]
        if method:
            got = [g[1:] if g and g[0].name == "self" else g for g in got]
        if not got and name == "__init__" and want == [[Param("args", "*", NO_DEFAULT), Param("kwargs", "**", NO_DEFAULT)]]:
            return  # no constructor: pybind11's own __init__, compared by stubtest
        if not got:
            problems.append(f"{where}: no pybind11 signature in the docstring")
            return
        if got != want:
            problems.append(f"{where}: runtime {got} != stub {want}")
        checked += 1

    def defs_by_name(body):
        out = {}
        for node in body:
            if isinstance(node, ast.FunctionDef):
                decorators = {ast.unparse(d) for d in node.decorator_list}
                if "property" in decorators or any(d.endswith(".setter") for d in decorators):
                    continue
                out.setdefault(node.name, []).append(node)
        return out

    for name, defs in defs_by_name(tree.body).items():
        compare(name, getattr(module, name, None), defs, method=False)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    for cls in classes:
        runtime_cls = getattr(module, cls.name, None)
        if runtime_cls is None or issubclass(runtime_cls, BaseException):
            continue
        for name, defs in defs_by_name(cls.body).items():
            if name in UNCHECKED_PARAMETERS:
                continue
            raw = inspect.getattr_static(runtime_cls, name, None)
            compare(f"{cls.name}.{name}", getattr(runtime_cls, name, None), defs, method=is_method(raw))
    return problems, checked


# ---- 3. mypy on typed uses --------------------------------------------------------------

def run_mypy(package_dir, work):
    problems = []
    base = [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-error-summary",
            "--show-error-codes", "--python-version", f"{sys.version_info[0]}.{sys.version_info[1]}"]
    env = mypy_env(package_dir, work / "cache")
    ok = subprocess.run(base + [str(HERE / "usage.py")], cwd=work, env=env, capture_output=True, text=True)
    if ok.returncode != 0:
        problems.append(f"mypy on usage.py:\n{ok.stdout}{ok.stderr}")
    bad_file = HERE / "usage_errors.py"
    expected = {i for i, line in enumerate(bad_file.read_text().splitlines(), 1) if line.rstrip().endswith("# error")}
    bad = subprocess.run(base + [str(bad_file)], cwd=work, env=env, capture_output=True, text=True)
    reported = {int(m.group(1)) for m in re.finditer(r"usage_errors\.py:(\d+): error", bad.stdout)}
    if reported != expected:
        problems.append(f"mypy on usage_errors.py: errors on lines {sorted(reported)}, expected {sorted(expected)}:\n"
                        f"{bad.stdout}{bad.stderr}")
    return problems, len(expected)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    package_dir = pathlib.Path(sys.argv[1]).resolve()
    try:
        import mypy  # noqa: F401
        import mypy.stubtest  # noqa: F401
    except ImportError as e:
        print(f"check_stubs: skipped, mypy cannot be imported ({e}); Debian: python3-mypy")
        sys.exit(77)
    sys.path.insert(0, str(package_dir))
    module = importlib.import_module(MODULE)
    stub = package_dir / "sedpack_hpc" / "_sedpack_hpc.pyi"
    if not stub.is_file() or not (package_dir / "sedpack_hpc" / "py.typed").is_file():
        fail([f"{stub} or py.typed is not next to the built module"])
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        problems = run_stubtest(package_dir, work, module.HAVE_MPI)
        more, checked = check_parameters(module, stub)
        problems += more
        more, expected_errors = run_mypy(package_dir, work)
        problems += more
    if problems:
        fail(problems)
    stub_tree = ast.parse(stub.read_text())
    names = sum(1 for n in stub_tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AnnAssign)))
    members = len({(c.name, n.name if isinstance(n, ast.FunctionDef) else ast.unparse(n.target))
                   for c in stub_tree.body if isinstance(c, ast.ClassDef) for n in c.body
                   if isinstance(n, (ast.FunctionDef, ast.AnnAssign))})
    print(f"check_stubs: OK: stubtest on {names} module names and {members} class members, "
          f"{checked} signatures compared with pybind11's, usage.py clean, "
          f"{expected_errors} expected errors of usage_errors.py reported")


if __name__ == "__main__":
    main()
