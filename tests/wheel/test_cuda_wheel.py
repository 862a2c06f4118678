"""The cuda-cutlass wheel (tier 2) on a machine without a GPU: the cpu wheel's libraries plus a
CUDA sidecar (libtvm_runtime_cuda and the CUTLASS kernel libraries). Its files, what it loads at
`import tvm` with no driver, TVM's NVRTC codegen from the pip CUDA layout, export and reload,
and the error that names the missing driver."""

from __future__ import annotations

import json
import re
import subprocess
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

from models import gpu_mlp
from tvm_wheels import variants

pytestmark = [pytest.mark.wheel, pytest.mark.tier2]

VARIANT = variants.load("cuda-cutlass")
MAJOR = VARIANT.cuda.split(".")[0]
SIDECAR = ["tvm_runtime_cuda", "fpA_intB_gemm", "flash_attn", "tvm_wheels_cutlass"]
# What TVM's Python side calls in the CUTLASS libraries (tvm.relax.backend.cuda.cutlass, the
# fpA_intB offload of tvm.contrib.cutlass): the project's binding, and TVM's own kernels.
CUTLASS_FUNCS = ["fastertransformer.gemm_fp16_int", "fastertransformer.gemm_fp16_int_bias",
                 "fastertransformer.gemm_fp16_int_bias_residual", "fastertransformer.moe_gemm_fp16_fp16",
                 "fastertransformer.moe_gemm_fp16_int", "cutlass.ft_preprocess_weight",
                 "cutlass.group_gemm", "cutlass.group_gemm_e4m3_e4m3_fp16"]


def _elf_dynamic(so: Path) -> tuple[list[str], list[str]]:
    dyn = subprocess.run(["readelf", "-d", str(so)], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\).*\[(.+)\]", dyn), re.findall(r"\((?:RUNPATH|RPATH)\).*\[(.+)\]", dyn)


@pytest.fixture(scope="module")
def unpacked(cuda_wheel, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cuda-wheel")
    with zipfile.ZipFile(cuda_wheel) as z:
        z.extractall(out)
    return out


def test_wheel_has_the_sidecar_and_the_cutlass_headers_and_nothing_of_the_toolkit(cuda_wheel):
    names = zipfile.ZipFile(cuda_wheel).namelist()
    print(f"cuda-cutlass wheel: {cuda_wheel.stat().st_size / 1e6:.1f} MB")
    assert cuda_wheel.name.startswith(f"apache_tvm-0.26.0+{VARIANT.label}-")
    for lib in ["tvm_compiler", "tvm_runtime", "tvm_runtime_extra", *SIDECAR]:
        assert f"tvm/lib/lib{lib}.so" in names, lib
    # what TVM's CUTLASS BYOC compiles its generated kernels against, found next to the package
    for header in ["tvm/3rdparty/cutlass/include/cutlass/cutlass.h",
                   "tvm/3rdparty/cutlass/tools/util/include/cutlass/util/device_memory.h",
                   "tvm/3rdparty/libflash_attn/include/flash.h",
                   "tvm/3rdparty/cutlass_fpA_intB_gemm/cutlass_kernels/fpA_intB_gemm/fpA_intB_gemm.h"]:
        assert header in names, header
    # the driver stub, libcudart and NVRTC come from the system or NVIDIA's wheels, never from this one
    assert [n for n in names if re.search(r"lib(cuda|cudart|nvrtc)[.-]", n.rsplit("/", 1)[-1])] == []
    assert {n.split("/licenses/", 1)[1] for n in names if "tvm/licenses/" in n} >= {
        "LICENSE.cutlass.txt", "LICENSE.cutlass_fpA_intB_gemm.txt", "LICENSE.libflash_attn.txt"}


def test_only_the_cuda_runtime_library_needs_the_driver(unpacked):
    runpath = f"$ORIGIN:$ORIGIN/../../nvidia/cu{MAJOR}/lib"
    for lib in SIDECAR:
        needed, runpaths = _elf_dynamic(unpacked / "tvm" / "lib" / f"lib{lib}.so")
        assert runpaths == [runpath], (lib, runpaths)
        assert (f"libcuda.so.1" in needed) == (lib == "tvm_runtime_cuda"), (lib, needed)
        assert f"libcudart.so.{MAJOR}" in needed, (lib, needed)
    # the cpu libraries stay the cpu wheel's: sort, random & co. load on a machine without a driver
    for lib in ["tvm_runtime", "tvm_runtime_extra", "tvm_compiler"]:
        needed, _ = _elf_dynamic(unpacked / "tvm" / "lib" / f"lib{lib}.so")
        assert not [n for n in needed if "cuda" in n], (lib, needed)


def test_kernels_are_built_for_the_preset_archs(unpacked):
    cuobjdump = Path(sysconfig.get_paths()["purelib"]) / "nvidia" / f"cu{MAJOR}" / "bin" / "cuobjdump"
    assert cuobjdump.exists(), "cuobjdump: pip install -r tests/requirements.txt (nvidia-cuda-cuobjdump)"

    def archs(lib: str) -> set[str]:
        out = subprocess.run([str(cuobjdump), "--list-elf", str(unpacked / "tvm" / "lib" / f"lib{lib}.so")],
                             capture_output=True, text=True, check=True).stdout
        return set(re.findall(r"\.sm_(\d+a?)\.", out))

    assert archs("fpA_intB_gemm") == set(VARIANT.cuda_archs)
    assert archs("flash_attn") == {"80"}  # TVM builds flash attention for sm_80 only
    # the fpA_intB binding for every arch, TVM's Hopper group GEMM for 90a
    assert archs("tvm_wheels_cutlass") == set(VARIANT.cuda_archs)


def test_import_without_a_driver_keeps_every_cpu_feature_and_registers_cutlass(cuda_venv):
    got = cuda_venv.json(f"""
        import json, tvm, tvm_ffi
        from tvm_wheels import backends
        funcs = {CUTLASS_FUNCS!r} + ["tvm.contrib.sort.argsort", "tvm.contrib.random.uniform"]
        print(json.dumps({{"exist": tvm.cuda().exist, "problems": backends.problems(),
                          "missing": [f for f in funcs if tvm_ffi.get_global_func(f, allow_missing=True) is None]}}))
    """)
    assert got["exist"] is False
    assert got["missing"] == []
    # only TVM's CUDA runtime needs the driver; the CUTLASS libraries load and register
    assert list(got["problems"]) == ["tvm_runtime_cuda"] and "libcuda.so.1" in got["problems"]["tvm_runtime_cuda"]


def test_info_and_doctor_name_cuda(cuda_venv, tmp_path):
    info = json.loads(subprocess.run([str(cuda_venv.bin("tvm-wheels")), "info", "--json"], capture_output=True,
                                     text=True, check=True).stdout)
    assert info["variant"] == "cuda-cutlass"
    assert info["cuda_version"].split(".")[:2] == VARIANT.cuda.split(".")
    assert info["cuda_archs"] == list(VARIANT.cuda_archs)
    assert info["sidecar_libs"] == SIDECAR
    assert info["live"]["tvm_version"] == f"0.26.0+{VARIANT.label}"
    # outside a source tree doctor checks the installed wheel's variant
    doctor = subprocess.run([str(cuda_venv.bin("tvm-wheels")), "doctor"], capture_output=True, text=True, cwd=tmp_path)
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr  # a warning: no driver to run with
    assert "no libcuda.so.1: this machine can build but not run CUDA code" in doctor.stdout


def test_nvrtc_compiles_a_model_for_sm80_from_the_pip_layout(cuda_venv, tmp_path):
    """TVM compiles its generated kernels with NVRTC (cuda-bindings, nvidia-cuda-nvrtc), whose
    headers (cuda/std from nvidia-cuda-cccl) the wheel finds in site-packages. Without a driver
    TVM's CUDA codegen keeps the kernels' source in the module (its cross-compile path): the
    exported library carries it, to be compiled where it loads with a GPU; here loading it says
    the driver is missing."""
    got = cuda_venv.json(gpu_mlp.SOURCE + textwrap.dedent(f"""
        import json, os
        import tvm_wheels.target
        from tvm.support import nvcc
        # no GPU here: the wheel's first arch, not TVM's sm_50 (which CUDA 13 cannot target)
        target = tvm_wheels.target.cuda()
        assert str(target.attrs["arch"]) == "sm_{VARIANT.cuda_archs[0]}", target
        ex = tvm.compile(mod, target=target)
        kinds = [m.kind for m in walk(ex.mod)]
        src = next(m for m in walk(ex.mod) if m.kind == "cuda").inspect_source("cuda")
        ex.export_library("{tmp_path}/mlp_cuda.so")
        # NVRTC, as TVM calls it, on the source TVM generated: a cubin for sm_80
        cubin = nvcc.compile_cuda(src, target_format="cubin", arch="sm_80", compiler="nvrtc")
        open("{tmp_path}/mlp.cubin", "wb").write(bytes(cubin))
        print(json.dumps({{"kinds": kinds, "kernels": src.count("__global__"),
                          "cuda_path": os.environ.get("CUDA_PATH", "")}}))
    """))
    assert "cuda" in got["kinds"] and got["kernels"] >= 1
    assert got["cuda_path"].endswith(f"site-packages/nvidia/cu{MAJOR}")
    assert _cubins((tmp_path / "mlp.cubin").read_bytes()) == [80]  # an ELF of NVIDIA's, for sm_80
    assert b"__global__" in (tmp_path / "mlp_cuda.so").read_bytes()  # the kernels' source

    reload = cuda_venv.run(f"""
        import tvm
        tvm.runtime.load_module("{tmp_path}/mlp_cuda.so")
    """, check=False)
    assert reload.returncode == 1
    assert "tvm-wheels: this module has CUDA kernels" in reload.stderr
    assert "libcuda.so.1" in reload.stderr and f"supports CUDA {VARIANT.cuda}" in reload.stderr


def _cubins(blob: bytes) -> list[int]:
    """The sm arch of every CUDA ELF (e_machine 190) embedded in an exported library."""
    archs = []
    for m in re.finditer(rb"\x7fELF\x02\x01", blob):
        header = blob[m.start():m.start() + 64]
        if int.from_bytes(header[18:20], "little") == 190:  # EM_CUDA
            flags = int.from_bytes(header[48:52], "little")
            # CUDA >= 12.8 ELF ABI v2 keeps the arch in bits 8..15, the older one in bits 0..7
            archs.append((flags >> 8) & 0xFF if header[8] >= 8 else flags & 0xFF)
    return archs


def test_the_main_build_compiles_exactly_the_cpu_objects(tmp_path):
    """The main build has the cpu variant's TVM options: each object of the cpu build it compiles
    with the same command from the same unity batch (build directory aside, which ccache's
    base_dir and the ignored prefix maps leave out of the hash), so ccache serves them from the
    cpu build. Its one source more is the CUTLASS code generator."""
    import wheelhouse

    builds = {}
    for variant in ("cpu", "cuda-cutlass"):
        bdir = tmp_path / variant
        wheelhouse.configure(variant, bdir, "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON")
        builds[variant] = {}
        for e in json.loads((bdir / "compile_commands.json").read_text()):
            source = Path(e["file"])
            text = source.read_text() if source.is_relative_to(bdir) else ""  # a unity batch's includes
            builds[variant][e["output"].replace(str(bdir), "<build>")] = (e["command"].replace(str(bdir), "<build>"),
                                                                           text)
    cpu, cuda = builds["cpu"], builds["cuda-cutlass"]
    assert len(cpu) > 50
    assert [o for o in cpu if cuda.get(o) != cpu[o]] == []
    assert [o for o in cuda if o not in cpu] == [next(o for o in cuda if o.endswith("contrib/cutlass/codegen.cc.o"))]


def test_the_wheel_records_its_ccache_hits(cuda_wheel):
    """What the build of this wheel took from ccache, per build tree (the note of the issue that
    made this variant reports it; a wheel built with an empty cache has no hits to show)."""
    record = json.loads((cuda_wheel.parent / "manifest.json").read_text())["ccache"]
    assert set(record) == {".", "cuda-sidecar"}, record
    for tree, r in record.items():
        print(f"{tree}: {r['hits']}/{r['calls']} compiles from ccache")
        assert r["calls"] > 0 and 0 <= r["hits"] <= r["calls"] and len(r["missed"]) == r["calls"] - r["hits"]
