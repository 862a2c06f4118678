"""Tier 1's build probes (tools/wheelhouse.py probe): a variant configured as its wheel build
configures it, and the sources that make it different compiled through the same toolchain."""

from __future__ import annotations

import platform
from pathlib import Path

import pytest

from tvm_wheels import variants

# Planned variants too: a probe guards a variant's toolchain while the variant is built up.
PROBED = [v.name for v in variants.table() if v.probe_sources]


def test_every_heavy_variant_has_a_probe():
    # a supported variant whose wheel only tier 2 builds must be probed in tier 1
    heavy = [v.name for v in variants.table() if v.supported and v.ci_tier > 1]
    assert [n for n in heavy if n not in PROBED] == []
    assert PROBED, "no variant names TVM_WHEEL_PROBE_SOURCES: the probe machinery would go untested"


@pytest.mark.parametrize("variant", PROBED)
def test_probe_compiles_the_variant_sources_with_its_flags(variant, tmp_path):
    import wheelhouse

    v = variants.load(variant)
    commands = wheelhouse.probe(variant, tmp_path / "build")
    assert sorted(commands) == sorted(v.probe_sources)
    for src, cmd in commands.items():
        assert src in cmd
        if v.march:  # the runtime's sources; libtvm_compiler's (src/target/) keep the baseline
            assert (f"-march={v.march}" in cmd.split()) != ("/src/target/" in src), cmd
        if v.cross(platform.machine()):  # the preset's cross compiler
            assert f"{v.archs[0]}-linux-gnu-g++ " in cmd, cmd
        objects = list((tmp_path / "build").rglob(f"{src.rsplit('/', 1)[-1]}.o"))
        assert len(objects) == 1 and objects[0].stat().st_size > 0
    if v.cuda:
        _check_cuda_commands(v, commands, Path(wheelhouse.cuda_toolkit(v, provision=True)["TVM_WHEELS_CUDA"]))


def _check_cuda_commands(v, commands, toolkit):
    """TVM's CUDA runtime sees the toolkit's headers; the sidecar's kernels go through that toolkit's nvcc,
    for every arch of the preset (flash attention is sm_80 only, as TVM builds it)."""
    for src, cmd in commands.items():
        if src.endswith(".cu"):
            assert f"{toolkit}/bin/nvcc" in cmd, cmd
            archs = ["80"] if "libflash_attn" in src else v.cuda_archs
            for arch in archs:
                assert f"code=[compute_{arch},sm_{arch}]" in cmd, (arch, cmd)
            assert "-Xcompiler=-ffile-prefix-map=" in cmd and " -ffile-prefix-map" not in cmd
        elif "/cuda/" in src:  # TVM's CUDA runtime
            assert f"-isystem {toolkit}/include" in cmd, cmd
        else:  # a variant without a sidecar keeps the toolkit off every other source
            assert str(toolkit) not in cmd, cmd


def test_a_broken_flag_fails_the_probe_with_the_compiler_message(tmp_path):
    import wheelhouse

    with pytest.raises(wheelhouse.ProbeFailed) as e:
        wheelhouse.probe(PROBED[0], tmp_path / "build", extra_env={"CXXFLAGS": "-mno-such-flag-tvm-wheels"})
    assert "-mno-such-flag-tvm-wheels" in str(e.value) and f"build probe of {PROBED[0]}" in str(e.value)
