"""The cpu wheel as a user gets it: identity, build info, ELF hygiene."""

from __future__ import annotations

import json
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from tvm_wheels import cmakedata, host

pytestmark = pytest.mark.wheel
ROOT = Path(__file__).resolve().parents[2]
REQ = cmakedata.read(ROOT / "cmake" / "requirements.cmake")


def cli(venv, *args: str) -> str:
    return subprocess.run([str(venv.bin("tvm-wheels")), *args], capture_output=True, text=True, check=True).stdout


def shared_objects(venv) -> list[Path]:
    return sorted((venv.tvm_dir() / "lib").glob("*.so*"))


def test_version_carries_the_variant_label(cpu_wheel, cpu_venv):
    assert cpu_wheel.name.startswith("apache_tvm-0.26.0+cpu-py3-none-")
    out = cpu_venv.json("""
        import json, tvm
        from importlib.metadata import version
        print(json.dumps([tvm.__version__, version("apache-tvm")]))
    """)
    assert out == ["0.26.0+cpu", "0.26.0+cpu"]


def test_info_tells_the_truth(cpu_venv):
    info = json.loads(cli(cpu_venv, "info", "--json"))
    assert info["variant"] == "cpu" and info["label"] == "cpu" and info["version"] == "0.26.0+cpu"
    assert info["tvm_commit"] == REQ["TVM_WHEELS_TVM_COMMIT"]
    assert info["llvm_linkage"] == "static" and info["llvm_version"].startswith("22.1")
    assert info["llvm_source"].startswith("pip (xtc-llvm-dev==22.1.8.2")
    assert info["cmake_options"]["USE_LLVM"] == "llvm-config --link-static"
    assert info["cmake_options"]["HIDE_PRIVATE_SYMBOLS"] == "ON"
    assert info["compiler"].startswith("GNU ")
    assert re.fullmatch(r"[0-9a-f]{64}", info["content_key"])
    import datetime

    epoch = datetime.datetime.fromtimestamp(int(REQ["TVM_WHEELS_SOURCE_DATE_EPOCH"]), datetime.timezone.utc)
    assert info["build_date"] == epoch.strftime("%Y-%m-%dT%H:%M:%SZ")  # built by tools/wheelhouse.py: reproducible
    assert info["build_date_source"].startswith("SOURCE_DATE_EPOCH")
    assert info["live"]["llvm_enabled"] is True and info["live"]["llvm_version"] == "22"
    assert info["live"]["tvm_version"] == "0.26.0+cpu"
    # the default target is this CPU's x86-64 level (numpy's CPUID table, read here too), with its database
    level = host.x86_64_level()
    assert info["host_target"] == "x86-64-level" and json.loads(info["live"]["default_target"])["mcpu"] == level
    if level in ("x86-64-v3", "x86-64-v4"):
        assert info["live"]["tuning_databases"][-1].endswith(f"/tvm_wheels/tuning/llvm-{level}--prefer-256-bit")
    text = cli(cpu_venv, "info")
    assert re.search(r"^variant\s+cpu$", text, re.M) and re.search(r"llvm_source\s+pip", text)


def test_wheel_ships_tvm_libs_but_not_tvm_ffi(cpu_wheel):
    names = zipfile.ZipFile(cpu_wheel).namelist()
    libs = sorted(n for n in names if ".so" in n)
    assert libs == ["tvm/lib/libtvm_compiler.so", "tvm/lib/libtvm_runtime.so", "tvm/lib/libtvm_runtime_extra.so"]
    assert not any("tvm_ffi" in n for n in names)
    assert "tvm_wheels/_build_info.json" in names and "tvm/_version.py" in names


def test_llvm_is_linked_statically(cpu_venv):
    # (NEEDED allow-list and RUNPATHs of every variant: test_wheel_files.py)
    for so in shared_objects(cpu_venv):
        dyn = subprocess.run(["readelf", "-d", str(so)], capture_output=True, text=True, check=True).stdout
        needed = re.findall(r"\(NEEDED\).*\[(.+)\]", dyn)
        assert not [n for n in needed if "LLVM" in n], (so.name, needed)
    syms = subprocess.run(["nm", "-D", "--defined-only", str(cpu_venv.tvm_dir() / "lib" / "libtvm_compiler.so")],
                          capture_output=True, text=True, check=True).stdout
    assert "LLVMContext" not in syms  # LLVM is inside, with its symbols hidden (HIDE_PRIVATE_SYMBOLS)


def test_no_build_machine_paths_in_the_binaries(cpu_venv):
    import wheelhouse

    forbidden = [str(ROOT), str(wheelhouse.cache_root()), "/tmp/pip-", "site-packages/llvm"]
    # an absolute path into TVM's sources, wherever the wheel was built (a cached wheel came from another clone)
    # (relative paths such as ../../tvm/src/... are fine: that is what the prefix maps and ccache leave)
    absolute_src = re.compile(r"(?:^|[^\w./+-])(?:/[\w.+-]+)+/tvm/(?:src|include|3rdparty)/")
    for so in shared_objects(cpu_venv):
        strings = subprocess.run(["strings", "-n", "8", str(so)], capture_output=True, text=True, check=True).stdout
        hits = sorted({line for line in strings.splitlines()
                       if any(f in line for f in forbidden) or absolute_src.search(line)})
        assert not hits, (so.name, hits[:5])


def test_guard_passes_on_this_host_and_select_names_an_x86_variant(cpu_venv):
    assert cpu_venv.json("import json, tvm_wheels.guard as g; print(json.dumps(g.problems()))") == []
    out = cli(cpu_venv, "select")
    assert re.match(r"cpu(-avx512)?: ", out) and "pip install ./" in out
