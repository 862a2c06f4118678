"""The cpu wheel's default target: the x86-64 level of the CPU, from numpy's CPUID table."""

from __future__ import annotations

from tvm_wheels import host, target, variants

# numpy >= 2.4's table on three CPUs (the groups and the features the guard reads)
HASWELL = {"AVX2": True, "FMA3": True, "X86_V2": True, "X86_V3": True, "AVX512F": False, "X86_V4": False}
SKYLAKE_X = {**HASWELL, "AVX512F": True, "AVX512CD": True, "AVX512BW": True, "AVX512DQ": True,
             "AVX512VL": True, "X86_V4": True}
NEHALEM = {"SSE42": True, "POPCNT": True, "X86_V2": True, "X86_V3": False, "X86_V4": False}


def test_the_level_is_the_highest_group_the_cpu_has():
    assert host.x86_64_level(SKYLAKE_X) == "x86-64-v4"
    assert host.x86_64_level(HASWELL) == "x86-64-v3"
    assert host.x86_64_level(NEHALEM) == "x86-64-v2"
    assert host.x86_64_level({"SSE2": True, "X86_V2": False, "X86_V3": False, "X86_V4": False}) == "x86-64"


def test_a_numpy_without_level_groups_gives_no_level():
    assert host.x86_64_level({"AVX2": True, "AVX512F": True}) is None


def test_level_target_resolves_per_cpu_and_named_targets_stay():
    assert target.mcpu(target.LEVEL, HASWELL) == "x86-64-v3"
    assert target.mcpu(target.LEVEL, SKYLAKE_X) == "x86-64-v4"
    assert target.mcpu("cortex-a78ae", HASWELL) == "cortex-a78ae"


def test_this_cpu_is_v4_exactly_when_it_has_the_avx512_wheels_features():
    # numpy's X86_V4 group and the cpu-avx512 guard's feature list agree on the CPU running this
    level = host.x86_64_level()
    assert level is not None, "numpy >= 2.4 is needed for its x86-64 level groups"
    if host.machine() == "x86_64":
        assert (level == "x86-64-v4") == (not host.missing_features(variants.load("cpu-avx512").cpu_features))
