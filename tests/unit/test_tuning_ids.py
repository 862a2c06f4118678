"""Tuning databases are keyed by target: each preset names the database of its own default target."""

from __future__ import annotations

import json

from cmake_script import ROOT
from tvm_wheels import tuning, variants


def _host_target(v: variants.Variant) -> dict:
    spec = {"kind": "llvm", "mcpu": v.host_target}
    if v.host_mattr:
        spec["mattr"] = list(v.host_mattr)
    return spec


def test_target_id_keeps_what_decides_the_code_and_drops_the_core_count():
    a = {"kind": "llvm", "mcpu": "x86-64-v4", "mattr": ["-prefer-256-bit", "+avx512bf16"], "num-cores": 2}
    b = {"kind": "llvm", "mcpu": "x86-64-v4", "mattr": ["+avx512bf16", "-prefer-256-bit"], "num-cores": 64}
    assert tuning.target_id(a) == tuning.target_id(b) == "llvm-x86-64-v4-+avx512bf16--prefer-256-bit"
    assert tuning.target_id({"kind": "llvm", "mcpu": "x86-64-v3"}) != tuning.target_id(a)
    assert tuning.target_id({"kind": "llvm"}) == "llvm-generic"


def test_each_preset_database_is_the_one_of_its_default_target_and_exists():
    shipping = [v for v in variants.table() if v.tuning_db]
    assert [v.name for v in shipping] == ["cpu-avx512"]
    for v in shipping:
        assert v.host_target not in ("", "native")  # a database fits one CPU target, not "whatever runs it"
        assert v.tuning_db == tuning.target_id(_host_target(v))
        db = ROOT / "tuning" / v.tuning_db
        budget = json.loads((db / "budget.json").read_text())
        assert budget["target_id"] == v.tuning_db and budget["variant"] == v.name
        assert budget["rounds"] and (db / "database_tuning_record.json").stat().st_size > 0


def test_every_database_in_the_tree_belongs_to_a_preset():
    shipped = {v.tuning_db for v in variants.table() if v.tuning_db}
    assert {p.name for p in (ROOT / "tuning").iterdir() if p.is_dir()} == shipped
