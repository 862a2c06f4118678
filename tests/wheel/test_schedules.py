"""tvm_wheels.compile: the shipped tuning database, rules for the rest, `tvm-wheels tune`.

Each compile runs in a wheel's clean venv with TVM_WHEELS_TUNING_DB pointing at an empty (or
the test's own) directory, so a tuning cache of the machine running the tests plays no part.
Correctness is checked against onnxruntime or numpy; which source scheduled each function is
read from the compile's report. Speed is bench/'s business.
"""

from __future__ import annotations

import json

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from models import dense, mobilenet_v2, resnet50, transformer

pytestmark = pytest.mark.wheel

AVX512_DB = "llvm-x86-64-v4--prefer-256-bit"

# Compiles d/model.onnx with tvm_wheels.compile, runs it on d/input.npy, saves d/out.npy and
# prints the report (function -> source; the functions whose weights were laid out for their
# schedule at compile time; for those timed here, how many candidates were timed and the kept
# one's microseconds), where the shipped databases live, the target's id.
COMPILE = """
import json, os, sys, numpy as np, onnx, tvm, tvm_wheels, tvm_wheels.target
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx
from tvm_wheels.compiler import records
from tvm_wheels.target import for_compile
d = os.environ["MODEL_DIR"]
target = json.loads(os.environ["TARGET"]) if os.environ.get("TARGET") else None
mod = from_onnx(onnx.load(os.path.join(d, "model.onnx")), keep_params_in_input=False)
report = []
ex = tvm_wheels.compile(mod, target, report=report)
vm = relax.VirtualMachine(ex, tvm.cpu())
np.save(os.path.join(d, "out.npy"), vm["main"](tvm.runtime.tensor(np.load(os.path.join(d, "input.npy")))).numpy())
used = for_compile(target)
print(json.dumps({"report": {e.function: e.source for e in report}, "shipped": str(records.SHIPPED),
                  "timed": {e.function: [e.measured, e.latency_us] for e in report if e.measured},
                  "prepacked": sorted(e.function for e in report if e.prepacked), "target_id": records.target_id(used)}))
"""


def _compile_and_run(venv, d, model, x, *, db_root, target=None):
    (d / "model.onnx").write_bytes(model.SerializeToString())
    np.save(d / "input.npy", x)
    env = {"MODEL_DIR": str(d), "TVM_WHEELS_TUNING_DB": str(db_root), "TARGET": json.dumps(target) if target else ""}
    result = venv.json(COMPILE, env=env)
    return result, np.load(d / "out.npy")


def _reference(model, x):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"input": x})[0]


def _assert_close(got, expected, label):
    diff = np.abs(got - expected).max()
    print(f"[{label}] max abs diff vs onnxruntime: {diff:.3g} (max |ort| {np.abs(expected).max():.3g})")
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-4 * np.abs(expected).max() + 1e-5)


def _heavy(report):
    """The functions that carry the model's FLOPs."""
    return {f: s for f, s in report.items() if "conv2d" in f or "matmul" in f}


@pytest.mark.avx512_host
@pytest.mark.parametrize("wheel,name", [("cpu-avx512", "resnet50"), ("cpu-avx512", "resnet50_batch_norm"),
                                        ("cpu-avx512", "bert_block"), ("cpu", "resnet50"),
                                        ("cpu", "bert_block_gemm"), ("cpu-avx512", "mobilenet_v2")])
def test_compiles_models_from_the_shipped_database(request, tmp_path, wheel, name):
    """resnet50_batch_norm: the same network with BatchNormalization nodes after bias-free
    convolutions; folded into the weights (rewrites.py), it finds the same records.
    bert_block_gemm: the BERT block with its dense layers as GPT-2's export writes them (2-D
    Gemm between reshapes), rewritten to the tuned [1, seq, K] matmuls with their epilogues.
    mobilenet_v2: depthwise convolutions, tuned since they are an operator of their own; its ReLU6
    (ONNX Clip) fuses into the convolution before it (rewrites._clip_as_ops: TVM's importer made
    it functions of its own, between transposes, when the database was tuned), so those
    convolutions find the records of their anchor blocks. The cpu wheel on this AVX-512 CPU
    targets x86-64-v4 and finds cpu-avx512's records, shipped in it too."""
    venv = request.getfixturevalue({"cpu-avx512": "avx512_venv", "cpu": "cpu_venv"}[wheel])
    module = {"resnet50": resnet50, "resnet50_batch_norm": resnet50, "bert_block": transformer,
              "bert_block_gemm": transformer, "mobilenet_v2": mobilenet_v2}[name]
    extra = {"resnet50_batch_norm": {"batch_norm": True}, "bert_block_gemm": {"gemm": True}}.get(name, {})
    model = module.build(seed=0, **extra)
    x = module.sample_input(seed=1)
    result, got = _compile_and_run(venv, tmp_path, model, x, db_root=tmp_path / "no-user-db")
    _assert_close(got, _reference(model, x), f"{wheel} {name}")
    assert result["target_id"] == AVX512_DB
    shipped = f"database:{result['shipped']}/{AVX512_DB}"
    report = result["report"]
    assert not [f for f, s in report.items() if s.startswith("unscheduled")], report
    heavy = _heavy(report)
    shipped_sources = {shipped, f"anchor:{result['shipped']}/{AVX512_DB}"} if name == "mobilenet_v2" else {shipped}
    assert heavy and all(s in shipped_sources for s in heavy.values()), heavy
    if name == "mobilenet_v2":
        assert not [f for f in report if "maximum" in f and "conv2d" not in f], sorted(report)
    # the tuned schedules read the constant weights in their own order, reordered once at compile
    # time: every convolution, and the BERT block's projections (its attention matmuls have no weight)
    prepacked = set(result["prepacked"])
    assert {f for f in heavy if "conv2d" in f} <= prepacked and prepacked, (sorted(heavy), sorted(prepacked))
    print(f"{wheel} {name}: {sum(s == shipped for s in report.values())} of {len(report)} functions from the "
          f"shipped database, {sum(s == 'rules' for s in report.values())} from rules")


@pytest.mark.avx512_host
def test_a_convolution_with_another_epilogue_gets_the_record_of_its_anchor_block(avx512_venv, tmp_path):
    """ResNet-18's basic block: its first convolution (+ bias + ReLU) is a ResNet-50 workload; its
    second ends in a residual add, a fused function no record has, whose convolution (the anchor
    block) has one: the record's trace schedules it."""
    model = resnet50.basic_block(seed=0)
    x = np.random.default_rng(1).standard_normal((1, 64, 56, 56)).astype(np.float32)
    result, got = _compile_and_run(avx512_venv, tmp_path, model, x, db_root=tmp_path / "no-user-db")
    _assert_close(got, _reference(model, x), "cpu-avx512 basic block")
    convs = sorted(s.split(":")[0] for f, s in result["report"].items() if "conv2d" in f)
    assert convs == ["anchor", "database"], result["report"]
    assert all(s.endswith(f"{result['shipped']}/{AVX512_DB}") for f, s in result["report"].items() if "conv2d" in f)


@pytest.mark.avx512_host
def test_a_convolution_of_untuned_shape_gets_the_nearest_records_trace_refitted(avx512_venv, tmp_path):
    """A 3x3 stride-2 convolution from 64 to 128 channels, a shape no record has: the trace of
    a record of the nearest conv2d, its tilings re-fitted to these extents."""
    model = resnet50.conv_relu(seed=0)
    x = np.random.default_rng(1).standard_normal((1, 64, 56, 56)).astype(np.float32)
    result, got = _compile_and_run(avx512_venv, tmp_path, model, x, db_root=tmp_path / "no-user-db")
    _assert_close(got, _reference(model, x), "cpu-avx512 conv of an untuned shape")
    (conv,) = [s for f, s in result["report"].items() if "conv2d" in f]
    assert conv == f"similar:{result['shipped']}/{AVX512_DB}", result["report"]
    assert [f for f in result["prepacked"] if "conv2d" in f], result  # its weight laid out for it, once


@pytest.mark.avx512_host
def test_where_several_carried_over_schedules_apply_the_fastest_is_kept(avx512_venv, tmp_path):
    """DenseNet-121's 3x3 convolution (128 to 32 channels at 56x56): the traces of several of the
    nearest records apply, and one of them runs ten times slower than another, so each is built
    and timed at compile time (measure.py); the kept one's time is in the report. (The kept one
    still takes over schedules.HEAVY_US, so samples of the rules were timed beside them too.)"""
    model = resnet50.conv_relu(seed=0, cin=128, cout=32, k=3, stride=1, size=56)
    x = np.random.default_rng(1).standard_normal((1, 128, 56, 56)).astype(np.float32)
    result, got = _compile_and_run(avx512_venv, tmp_path, model, x, db_root=tmp_path / "no-user-db")
    _assert_close(got, _reference(model, x), "cpu-avx512 densenet conv")
    ((conv, (measured, us)),) = [(f, t) for f, t in result["timed"].items() if "conv2d" in f]
    assert result["report"][conv] == f"similar:{result['shipped']}/{AVX512_DB}"
    assert measured >= 2 and 0 < us < 1e6, (measured, us)


@pytest.mark.avx512_host
def test_dense_layers_at_a_prime_token_count_are_computed_on_padded_rows(cpu_venv, tmp_path):
    """The BERT block at 197 tokens, ViT-B/16's count: a prime, so no record's tiling of the rows
    fits. Each dense layer is computed on 200 rows, zeros added before it and cut after its bias
    (rewrites.py), with a record's schedule carried over or a faster sample of the rules. Where
    the cut rows meet a residual add, some of those schedules write past the output (measured: a
    corrupted heap); they are turned down (schedules._in_bounds), and the block matches
    onnxruntime."""
    model, x = transformer.build(seed=0, seq=197), transformer.sample_input(seed=1, seq=197)
    result, got = _compile_and_run(cpu_venv, tmp_path, model, x, db_root=tmp_path / "no-user-db")
    _assert_close(got, _reference(model, x), "cpu bert_block at 197 tokens")
    dense = {f: s.split(":")[0] for f, s in result["report"].items() if "matmul" in f and "strided_slice" in f}
    assert len(dense) >= 4 and set(dense.values()) <= {"similar", "rules"}, result["report"]
    # each took HEAVY_US, so its carried-over schedule raced samples of the rules: which won is timing's call
    assert all(result["timed"].get(f, [0])[0] >= 2 for f in dense), result["timed"]


@pytest.mark.parametrize("size", [13, 14])
def test_a_big_1x1_convolution_at_an_odd_size_is_computed_as_a_matmul_on_padded_rows(cpu_venv, tmp_path, size):
    """SqueezeNet's classifier: a 1x1 convolution from 512 to 1000 channels at 13x13, whose height
    and width no record's tiling fits, is the matmul it is, on 176 rows of which it keeps 169
    (rewrites._conv1x1_as_matmul), bias and ReLU fused. At 14x14 (ResNet's size) it stays a
    convolution. Both match onnxruntime."""
    model = resnet50.conv_relu(seed=0, cin=512, cout=1000, k=1, stride=1, size=size)
    x = np.random.default_rng(1).standard_normal((1, 512, size, size)).astype(np.float32)
    result, got = _compile_and_run(cpu_venv, tmp_path, model, x, db_root=tmp_path / "no-user-db")
    _assert_close(got, _reference(model, x), f"cpu 1x1 conv at {size}x{size}")
    heavy = sorted(_heavy(result["report"]))
    if size == 13:
        assert len(heavy) == 1 and all(op in heavy[0] for op in ("matmul", "strided_slice", "add", "relu")), heavy
    else:
        assert len(heavy) == 1 and "conv2d" in heavy[0] and "matmul" not in heavy[0], heavy


@pytest.mark.parametrize("tokens", [197, 16])
def test_a_heavy_function_gets_samples_of_the_rules_timed(cpu_venv, tmp_path, tokens):
    """ViT-B/16's attention scores (Q K^T, 12 heads, 197 tokens) is an operator no record has: the
    first sample of the rules takes over schedules.HEAVY_US, so more samples are timed here and the
    fastest kept (in ViT-B/16, where a dense layer's record was carried over to it: 19 ms; the
    fastest sample: 1.5 ms). At 16 tokens the same function (there a record's trace applies) is
    too small to be worth timing."""
    model, x = transformer.attention_scores(tokens), transformer.attention_input(seed=1, tokens=tokens)
    result, got = _compile_and_run(cpu_venv, tmp_path, model, x, db_root=tmp_path / "no-user-db")
    _assert_close(got, _reference(model, x), f"cpu attention scores at {tokens} tokens")
    ((scores, source),) = [(f, s) for f, s in result["report"].items() if "matmul" in f]
    if tokens == 16:
        assert scores not in result["timed"], (result["report"], result["timed"])
    else:
        assert source == "rules", result["report"]
        measured, us = result["timed"][scores]
        assert measured >= 3 and 0 < us < 1e6, (measured, us)  # the first sample and at least two more


def test_candidates_are_timed_only_where_their_code_runs_here(cpu_venv):
    """Timing runs the compiled code: a target for another CPU (another architecture, a model or
    a feature this one lacks) would die here of SIGILL, so its candidates are not timed."""
    out = cpu_venv.json("""
        import json, tvm
        from tvm_wheels import host
        from tvm_wheels.compiler import measure
        other = "znver1" if tvm.target.codegen.llvm_get_system_cpu() != "znver1" else "haswell"
        targets = {"this level": {"kind": "llvm", "mcpu": host.x86_64_level()},
                   "native": {"kind": "llvm", "mcpu": "native"}, "generic": {"kind": "llvm"},
                   "x86-64-v2": {"kind": "llvm", "mcpu": "x86-64-v2"},
                   "aarch64": {"kind": "llvm", "mtriple": "aarch64-linux-gnu"},
                   "another model": {"kind": "llvm", "mcpu": other},
                   "a feature added": {"kind": "llvm", "mattr": ["+avx512fp16"]}}
        print(json.dumps({name: measure.runs_here(tvm.target.Target(t)) for name, t in targets.items()}))
    """)
    assert out == {"this level": True, "native": True, "generic": True, "x86-64-v2": True, "aarch64": False,
                   "another model": False, "a feature added": False}, out


@pytest.mark.avx512_host
def test_a_model_nobody_tuned_gets_schedules_carried_over_and_matches(avx512_venv, tmp_path):
    """MobileNet v2 at 160x160: the database has it at 224, so every convolution, depthwise and
    pointwise, is a shape no record has; each is scheduled from the nearest record of its own
    operator (`similar`), except where that schedule took over schedules.HEAVY_US and a sample of
    the rules timed beside it ran faster (`rules`, with the candidates timed): no convolution
    gets an untimed sample of the rules."""
    import collections

    model, x = mobilenet_v2.build(seed=0, size=160), mobilenet_v2.sample_input(seed=1, size=160)
    result, got = _compile_and_run(avx512_venv, tmp_path, model, x, db_root=tmp_path / "no-user-db")
    _assert_close(got, _reference(model, x), "cpu-avx512 mobilenet_v2 at 160")
    sources = collections.Counter(s.split(":")[0] for s in result["report"].values())
    print(f"mobilenet_v2 at 160: {dict(sources)}")
    # (its classifier, 1280 -> 1000 whatever the resolution, is the tuned one)
    convs = {f: s.split(":")[0] for f, s in result["report"].items() if "conv2d" in f}
    assert len(convs) >= 30 and set(convs.values()) <= {"similar", "rules"}, result["report"]
    assert sum(s == "similar" for s in convs.values()) >= 20, convs
    assert all(result["timed"].get(f, [0])[0] >= 2 for f, s in convs.items() if s == "rules"), result["timed"]


@pytest.mark.avx512_host
def test_shipped_records_are_not_applied_to_another_target(avx512_venv, tmp_path):
    out = avx512_venv.json("""
        import json
        from tvm_wheels.compiler import records
        from tvm_wheels.target import for_compile
        v4, v3 = for_compile(None), for_compile({"kind": "llvm", "mcpu": "x86-64-v3"})
        shipped = records.Database(records.SHIPPED / records.target_id(v4))
        workloads = [r.workload.mod for r in shipped.ms.get_all_tuning_records()]
        print(json.dumps({"workloads": len(workloads),
                          "v4": sum(shipped.best(w, v4) is not None for w in workloads),
                          "v3": sum(shipped.best(w, v3) is not None for w in workloads),
                          "dbs_v3": [str(d.path) for d in records.for_target(v3)],
                          "dbs_v4": [str(d.path) for d in records.for_target(v4)]}))
    """, env={"TVM_WHEELS_TUNING_DB": str(tmp_path)})
    assert out["workloads"] > 30  # ResNet-50 and the BERT block
    assert out["v4"] == out["workloads"] and out["v3"] == 0
    assert out["dbs_v3"] == [] and len(out["dbs_v4"]) == 1 and out["dbs_v4"][0].endswith(AVX512_DB)


def test_a_target_without_a_database_is_scheduled_by_rules(cpu_venv, tmp_path):
    # x86-64 (v1, no SSE4.2): a level the cpu wheel ships no database for
    model, x = transformer.build(seed=0), transformer.sample_input(seed=1)
    result, got = _compile_and_run(cpu_venv, tmp_path, model, x, db_root=tmp_path / "no-user-db",
                                   target={"kind": "llvm", "mcpu": "x86-64", "mattr": ["-prefer-256-bit"]})
    _assert_close(got, _reference(model, x), "cpu bert_block for x86-64")
    assert result["target_id"] == "llvm-x86-64--prefer-256-bit"
    assert set(result["report"].values()) == {"rules"}, result["report"]


def test_x86_64_v2_gets_its_own_database(cpu_venv, tmp_path):
    """A CPU of level x86-64-v2 (SSE4.2, no AVX) gets the v2 database the cpu wheel ships, tuned
    here for that target: the BERT block's matmuls come from it, and the code (SSE only) matches
    onnxruntime."""
    v2 = "llvm-x86-64-v2--prefer-256-bit"
    model, x = transformer.build(seed=0), transformer.sample_input(seed=1)
    result, got = _compile_and_run(cpu_venv, tmp_path, model, x, db_root=tmp_path / "no-user-db",
                                   target={"kind": "llvm", "mcpu": "x86-64-v2", "mattr": ["-prefer-256-bit"]})
    _assert_close(got, _reference(model, x), "cpu bert_block for x86-64-v2")
    assert result["target_id"] == v2
    heavy = _heavy(result["report"])
    assert heavy and set(heavy.values()) == {f"database:{result['shipped']}/{v2}"}, result["report"]


def _resnet50_head(seed=0):
    """ResNet-50's classifier (global average pool, 2048 -> 1000 dense) on its last feature map:
    a model whose dense is a workload of the shipped databases, small enough to run under qemu."""
    rng = np.random.default_rng(seed)
    w = numpy_helper.from_array((rng.standard_normal((1000, 2048)) / 45).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(1000).astype(np.float32) / 100, "b")
    nodes = [helper.make_node("GlobalAveragePool", ["input"], ["pooled"]),
             helper.make_node("Flatten", ["pooled"], ["flat"], axis=1),
             helper.make_node("Gemm", ["flat", "w", "b"], ["logits"], transB=1)]
    graph = helper.make_graph(nodes, "resnet50_head",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 2048, 7, 7])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1000])], [w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model, rng.standard_normal((1, 2048, 7, 7)).astype(np.float32)


def test_haswell_gets_the_v3_target_its_database_and_code_that_runs_there(cpu_venv, tmp_path):
    """The cpu wheel under an emulated Haswell (AVX2, no AVX-512): its default target is
    x86-64-v3, its database the shipped v3 one; the library compiled for that target (on this
    machine: LLVM under emulation takes minutes) loads and runs there, matching onnxruntime."""
    from conftest import OnX86Model

    haswell = OnX86Model(cpu_venv, "Haswell")
    db_root = tmp_path / "no-user-db"
    seen = haswell.json("""
        import json, tvm_wheels.target as t
        from tvm_wheels.compiler import records
        h = t.host()
        print(json.dumps({"target": {"mcpu": str(h.attrs["mcpu"]), "mattr": [str(a) for a in h.attrs["mattr"]]},
                          "databases": [str(d.path) for d in records.for_target(t.for_compile(h))], "shipped": str(records.SHIPPED)}))
    """, env={"TVM_WHEELS_TUNING_DB": str(db_root)})
    v3 = "llvm-x86-64-v3--prefer-256-bit"
    assert seen["target"] == {"mcpu": "x86-64-v3", "mattr": ["-prefer-256-bit"]}, seen
    assert seen["databases"] == [f"{seen['shipped']}/{v3}"], seen

    model, x = _resnet50_head()
    (tmp_path / "model.onnx").write_bytes(model.SerializeToString())
    report = cpu_venv.json(f"""
        import json, tvm_wheels
        from tvm_wheels.compiler import pipeline
        report = []
        ex = tvm_wheels.compile(pipeline.from_onnx({str(tmp_path / "model.onnx")!r}), {seen["target"] | {"kind": "llvm"}!r},
                                report=report)
        ex.export_library({str(tmp_path / "model.so")!r})
        print(json.dumps({{e.function: e.source for e in report}}))
    """, env={"TVM_WHEELS_TUNING_DB": str(db_root)})
    assert report["fused_matmul_add"] == f"database:{seen['shipped']}/{v3}", report
    np.save(tmp_path / "input.npy", x)
    haswell.run(f"""
        import numpy as np, tvm
        from tvm import relax
        vm = relax.VirtualMachine(tvm.runtime.load_module({str(tmp_path / "model.so")!r}), tvm.cpu())
        out = vm["main"](tvm.runtime.tensor(np.load({str(tmp_path / "input.npy")!r})))
        np.save({str(tmp_path / "out.npy")!r}, out.numpy())
    """)
    _assert_close(np.load(tmp_path / "out.npy"), _reference(model, x), "cpu wheel's v3 code under qemu Haswell")


@pytest.mark.parametrize("variant", ["cpu", "cpu-avx512"])
def test_a_wheel_ships_only_its_own_databases_with_their_budgets(request, variant):
    import zipfile

    from tvm_wheels import variants

    wheel = zipfile.ZipFile(request.getfixturevalue({"cpu": "cpu_wheel", "cpu-avx512": "avx512_wheel"}[variant]))
    names = [n for n in wheel.namelist() if "tvm_wheels/tuning/" in n and n[-1] != "/"]
    ids = variants.load(variant).tuning_db
    assert sorted(n.split("tvm_wheels/tuning/")[1] for n in names) == sorted(
        f"{i}/{f}" for i in ids for f in ("budget.json", "database_tuning_record.json", "database_workload.json"))
    for i in ids:
        budget = json.loads(wheel.read(next(n for n in names if n.endswith(f"{i}/budget.json"))))
        assert budget["target_id"] == i and budget["rounds"], budget


def test_tune_says_what_to_install_when_its_dependencies_are_missing(avx512_venv, tmp_path):
    dense.write(tmp_path / "mlp.onnx")
    proc = avx512_venv.run(f"""
        import sys
        from tvm_wheels.cli import main
        sys.exit(main(["tune", {str(tmp_path / "mlp.onnx")!r}, "--out", {str(tmp_path / "db")!r}]))
    """, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "Fix: pip install psutil cloudpickle xgboost-cpu" in proc.stderr
    assert not (tmp_path / "db").exists()


RESUME_FROM_TUNED = """
import os
from tvm_wheels.compiler import pipeline, records, tuning
db = tuning.tune(pipeline.from_onnx(os.environ["MODEL"]), None, os.environ["OUT"], 4,
                 tuned=records.Database(os.environ["TUNED"]))
print("measured", len(db.ms.get_all_tuning_records()))
"""


@pytest.mark.avx512_host
def test_tune_writes_records_that_compile_uses_for_this_target_only(avx512_wheel, tmp_path_factory):
    from conftest import make_venv

    venv = make_venv(tmp_path_factory.mktemp("venv-tune"), "tvm-wheels cpu-avx512[tune]", f"{avx512_wheel}[tune]")
    d, db = tmp_path_factory.mktemp("tune-model"), tmp_path_factory.mktemp("tune-db")
    model = dense.write(d / "mlp.onnx")
    tune = [str(venv.bin("tvm-wheels")), "tune", str(d / "mlp.onnx"), "--trials", "4", "--out", str(db)]
    import subprocess

    first = subprocess.run(tune, capture_output=True, text=True, timeout=1200)
    assert first.returncode == 0, first.stderr[-3000:]
    assert f"into {db / AVX512_DB}" in first.stdout
    assert "[1/1] fused_matmul_add_relu (x1): 4 trials, best" in first.stdout, first.stdout
    records = (db / AVX512_DB / "database_tuning_record.json").read_text().splitlines()
    assert len(records) == 4
    # Resumes: the records already there count, nothing is tuned again.
    again = subprocess.run(tune, capture_output=True, text=True, timeout=1200)
    assert again.returncode == 0 and "4 trials" in again.stdout, again.stderr[-3000:]
    assert (db / AVX512_DB / "database_tuning_record.json").read_text().splitlines() == records
    # A new machine, without the search history, resumes from a tuned database (tools/tune_db.py:
    # the shipped one): its workloads count as done, nothing is measured.
    fresh = tmp_path_factory.mktemp("tune-fresh")
    resumed = venv.run(RESUME_FROM_TUNED, env={"MODEL": str(d / "mlp.onnx"), "OUT": str(fresh),
                                               "TUNED": str(db / AVX512_DB)})
    lines = resumed.stdout.strip().splitlines()
    assert lines[-1] == "measured 0" and "fused_matmul_add_relu (x1): 1 trials, best" in lines[-2], resumed.stdout

    x = np.random.default_rng(1).standard_normal((64, 256)).astype(np.float32)
    expected = _reference(model, x)
    result, got = _compile_and_run(venv, d, model, x, db_root=db)
    _assert_close(got, expected, "tuned mlp")
    assert result["report"]["fused_matmul_add_relu"] == f"database:{db / AVX512_DB}"
    # The same workload for another CPU: the v4 records stay out, rules schedule it.
    result, got = _compile_and_run(venv, d, model, x, db_root=db, target={"kind": "llvm", "mcpu": "x86-64-v3"})
    _assert_close(got, expected, "mlp for x86-64-v3")
    assert result["target_id"] == "llvm-x86-64-v3"
    assert result["report"]["fused_matmul_add_relu"] == "rules"
