"""Tuning databases are keyed by target: each preset names the database of its own default target."""

from __future__ import annotations

import json

from cmake_script import ROOT
from tvm_wheels import host, target, variants
from tvm_wheels.compiler import records


def _host_targets(v: variants.Variant) -> list[dict]:
    """Every default host target the variant's wheel can pick (one per x86-64 level for "x86-64-level")."""
    mcpus = list(host.X86_64_LEVELS) if v.host_target == target.LEVEL else [v.host_target]
    return [{"kind": "llvm", "mcpu": m, **({"mattr": list(v.host_mattr)} if v.host_mattr else {})} for m in mcpus]


def test_target_id_keeps_what_decides_the_code_and_drops_the_core_count():
    a = {"kind": "llvm", "mcpu": "x86-64-v4", "mattr": ["-prefer-256-bit", "+avx512bf16"], "num-cores": 2}
    b = {"kind": "llvm", "mcpu": "x86-64-v4", "mattr": ["+avx512bf16", "-prefer-256-bit"], "num-cores": 64}
    assert records.target_id(a) == records.target_id(b) == "llvm-x86-64-v4-+avx512bf16--prefer-256-bit"
    assert records.target_id({"kind": "llvm", "mcpu": "x86-64-v3"}) != records.target_id(a)
    assert records.target_id({"kind": "llvm"}) == "llvm-generic"


def test_each_preset_database_is_the_one_of_a_default_target_and_exists():
    shipping = [v for v in variants.table() if v.tuning_db]
    # cuda-cutlass includes the cpu preset: its host code gets the cpu wheel's levels and databases
    assert [v.name for v in shipping] == ["cpu", "cpu-avx512", "cuda-cutlass"]
    for v in shipping:
        assert v.host_target not in ("", target.NATIVE)  # a database fits one CPU target, not "whatever runs it"
        ids = [records.target_id(t) for t in _host_targets(v)]
        for db_id in v.tuning_db:
            assert db_id in ids, (v.name, db_id, ids)
            db = ROOT / "tuning" / db_id
            budget = json.loads((db / "budget.json").read_text())
            assert budget["target_id"] == db_id and budget["variant"] in {"cpu", "cpu-avx512"}
            assert budget["rounds"] and (db / "database_tuning_record.json").stat().st_size > 0


def test_the_cpu_wheel_ships_a_database_for_each_x86_64_level():
    assert variants.load("cpu").tuning_db == ("llvm-x86-64-v4--prefer-256-bit", "llvm-x86-64-v3--prefer-256-bit",
                                              "llvm-x86-64-v2--prefer-256-bit")
    assert variants.load("cpu-avx512").tuning_db == ("llvm-x86-64-v4--prefer-256-bit",)


def test_every_database_in_the_tree_belongs_to_a_preset():
    shipped = {db for v in variants.table() for db in v.tuning_db}
    assert {p.name for p in (ROOT / "tuning").iterdir() if p.is_dir()} == shipped
