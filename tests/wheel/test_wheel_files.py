"""Every built variant wheel as a file: auditwheel's verdict, its libraries, check-wheel-contents."""

from __future__ import annotations

import fnmatch
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.wheel
ROOT = Path(__file__).resolve().parents[2]
# What a wheel's ELF files may need: each other, libtvm_ffi (from apache-tvm-ffi), and the
# C/C++ runtime every manylinux system provides. Anything else would have to be bundled.
ALLOWED_NEEDED = re.compile(r"^(libtvm_runtime\.so|libtvm_ffi\.so|libstdc\+\+\.so\.6|libgcc_s\.so\.1|libc\.so\.6|"
                            r"libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|ld-linux-x86-64\.so\.2|"
                            r"ld-linux-aarch64\.so\.1)$")


@pytest.fixture(params=["cpu", "cpu-avx512", "runtime", pytest.param("cuda-cutlass", marks=pytest.mark.tier2),
                        pytest.param("aarch64-orin", marks=pytest.mark.tier2)])
def wheel(request):
    return request.getfixturevalue({"cpu": "cpu_wheel", "cpu-avx512": "avx512_wheel", "runtime": "runtime_wheel",
                                    "cuda-cutlass": "cuda_wheel", "aarch64-orin": "orin_wheel"}[request.param])


def _allowed(variant, needed: str, bundled: set[str]) -> bool:
    """ALLOWED_NEEDED, a library of the wheel's own tvm/lib (the CUTLASS binding needs the
    fpA_intB kernels next to it), and what the variant's repair step leaves to the system or
    other wheels (a CUDA variant: the driver, libcudart and NVRTC), as long as the wheel does
    not bundle it."""
    return (bool(ALLOWED_NEEDED.match(needed)) or needed in bundled
            or any(fnmatch.fnmatch(needed, p) for p in variant.repair_exclude))


def test_auditwheel_policy_is_the_tag_and_nothing_unexpected_is_needed(wheel, tmp_path):
    show = subprocess.run([sys.executable, "-m", "auditwheel", "show", str(wheel)], capture_output=True, text=True,
                          check=True).stdout
    flat = " ".join(show.split())
    tag = re.search(r'This constrains the platform tag to "([^"]+)"', flat).group(1)
    assert wheel.name.endswith(f"-py3-none-{tag}.whl"), (wheel.name, tag)
    glibc = max((tuple(map(int, v.split("."))) for v in re.findall(r"GLIBC_(\d+\.\d+)", flat)))
    assert tag.startswith("manylinux_") and glibc <= tuple(map(int, tag.split("_")[1:3]))
    from tvm_wheels import variants

    variant = next(v for v in variants.table() if f"+{v.label}-" in wheel.name)
    with zipfile.ZipFile(wheel) as z:
        z.extractall(tmp_path)
    assert not (tmp_path / "apache_tvm.libs").exists()  # auditwheel grafted nothing in
    bundled = {so.name for so in tmp_path.glob("tvm/lib/*.so")}
    for so in tmp_path.glob("tvm/lib/*.so"):
        dyn = subprocess.run(["readelf", "-d", str(so)], capture_output=True, text=True, check=True).stdout
        needed = re.findall(r"\(NEEDED\).*\[(.+)\]", dyn)
        assert [n for n in needed if not _allowed(variant, n, bundled)] == [], (so.name, needed)
        runpaths = re.findall(r"\((?:RUNPATH|RPATH)\).*\[(.+)\]", dyn)
        assert all(p.startswith("$ORIGIN") for r in runpaths for p in r.split(":")), (so.name, runpaths)


def test_check_wheel_contents_is_clean(wheel):
    r = subprocess.run([sys.executable, "-m", "check_wheel_contents", str(wheel)], capture_output=True, text=True,
                       cwd=ROOT)  # reads [tool.check-wheel-contents]
    assert r.returncode == 0, r.stdout + r.stderr


def test_licenses_of_what_is_bundled(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    licenses = {n.split("/licenses/", 1)[1] for n in names if ".dist-info/licenses/" in n}
    assert {"LICENSE", "tvm/NOTICE"} <= licenses
    assert ("LICENSE.llvm.txt" in licenses) == ("tvm/lib/libtvm_compiler.so" in names)


def test_variant_metadata_only_where_the_preset_has_properties(wheel):
    from tvm_wheels import variants
    from tvm_wheels_build import wheel_variant

    names = zipfile.ZipFile(wheel).namelist()
    found = [n for n in names if n.endswith(".dist-info/variant.json")]
    variant = next(v for v in variants.table() if f"+{v.label}-" in wheel.name)
    if variant.properties:
        assert len(found) == 1
        assert json.loads(zipfile.ZipFile(wheel).read(found[0])) == wheel_variant.metadata([variant])
    else:
        assert found == []


def test_tvm_objects_carry_no_libstdcxx_debug_assertions(wheel, tmp_path):
    # The PyPI LLVM's `llvm-config --cxxflags` hands -D_GLIBCXX_ASSERTIONS (and -D_DEBUG) to every
    # TVM object; cmake/compile.cmake drops them. Compiled in, libstdc++'s checks run on every
    # container access and call std::__glibcxx_assert_fail (measured: the runtime of fb0abb0 did).
    # (libtvm_compiler also holds LLVM's own objects, built with assertions: not checked here.)
    with zipfile.ZipFile(wheel) as z:
        z.extractall(tmp_path)
        info = json.loads(z.read("tvm_wheels/_build_info.json"))
    assert "_GLIBCXX_ASSERTIONS" in info["dropped_definitions"]
    for name in ("libtvm_runtime.so", "libtvm_runtime_extra.so"):
        undefined = subprocess.run(["nm", "-D", "--undefined-only", str(tmp_path / "tvm" / "lib" / name)],
                                   capture_output=True, text=True, check=True).stdout
        assert "__glibcxx_assert_fail" not in undefined, name
