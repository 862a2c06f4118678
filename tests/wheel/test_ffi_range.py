"""The apache-tvm-ffi range the wheel declares is the range that works.

Every apache-tvm-ffi release on the index that the wheel's requirement admits
is installed in turn and must serialize/deserialize IR and export/load a
module; a release outside it must be refused at import with the fix, not crash.
"""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

pytestmark = pytest.mark.wheel

SERIALIZE_AND_EXPORT = """
    import json, os, numpy as np, tvm
    from tvm import te
    from tvm.script import relax as R, ir as I
    # IR <-> JSON (tvm::ffi::ToJSONGraph): MetaSchedule's database and every IR dump use it.
    c = tvm.ir.load_json(tvm.ir.save_json(tvm.tirx.const(1)))
    assert int(c.value) == 1
    @I.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor((4,), "float32")):
            return R.add(x, x)
    tvm.ir.assert_structural_equal(tvm.ir.load_json(tvm.ir.save_json(Mod)), Mod)
    # export a compiled module, load it back, run it
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    path = os.path.join(os.environ["OUT_DIR"], "inc.so")
    tvm.build(te.create_prim_func([A, B]), target="llvm").export_library(path)
    f = tvm.runtime.load_module(path)
    b = tvm.runtime.tensor(np.zeros(8, "float32"))
    f["main"](tvm.runtime.tensor(np.arange(8, dtype="float32")), b)
    np.testing.assert_allclose(b.numpy(), np.arange(8) + 1.0)
    import tvm_ffi
    print(json.dumps({"ffi": tvm_ffi.__version__}))
"""


def ffi_requirement(wheel) -> Requirement:
    with zipfile.ZipFile(wheel) as z:
        meta = z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    reqs = [Requirement(line.split(":", 1)[1]) for line in meta.splitlines() if line.startswith("Requires-Dist:")]
    return next(r for r in reqs if r.name == "apache-tvm-ffi")


def released_versions() -> list[Version]:
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "apache-tvm-ffi"],
                         capture_output=True, text=True, check=True).stdout
    listed = re.search(r"Available versions: (.*)", out).group(1)
    return sorted(Version(v.strip()) for v in listed.split(","))


@pytest.fixture(scope="module")
def ffi_venv(cpu_wheel, tmp_path_factory):
    from conftest import make_venv

    return make_venv(tmp_path_factory.mktemp("venv-ffi"), "cpu wheel, ffi range", str(cpu_wheel))


def test_every_admitted_release_works(ffi_venv, cpu_wheel, tmp_path):
    req = ffi_requirement(cpu_wheel)
    admitted = [v for v in released_versions() if req.specifier.contains(v, prereleases=True)]
    print(f"{req} admits {[str(v) for v in admitted]}")
    assert Version("0.1.14.post1") in admitted  # the release the official 0.26.0 wheel works with
    for v in admitted:
        ffi_venv.pip(f"apache-tvm-ffi=={v}")
        out = ffi_venv.json(SERIALIZE_AND_EXPORT, env={"OUT_DIR": str(tmp_path)})
        assert out["ffi"] == str(v)


def test_release_outside_range_is_refused_with_the_fix(ffi_venv, cpu_wheel):
    req = ffi_requirement(cpu_wheel)
    outside = [v for v in released_versions() if not req.specifier.contains(v) and v > Version("0.1.13")]
    newest = max(outside)
    ffi_venv.pip(f"apache-tvm-ffi=={newest}")
    try:
        proc = ffi_venv.run("import tvm", check=False)
    finally:
        ffi_venv.pip(f"apache-tvm-ffi=={max(v for v in released_versions() if req.specifier.contains(v))}")
    assert proc.returncode == 1, proc.stderr  # an exception, not a signal
    assert "ImportError" in proc.stderr
    assert f"apache-tvm-ffi {newest} is installed" in proc.stderr
    assert f"pip install '{req}'" in proc.stderr
