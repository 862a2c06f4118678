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

from models import resnet50, transformer

pytestmark = pytest.mark.wheel

AVX512_DB = "llvm-x86-64-v4--prefer-256-bit"

# Compiles d/model.onnx with tvm_wheels.compile, runs it on d/input.npy, saves d/out.npy and
# prints the report (function -> source; the functions whose weights were laid out for their
# schedule at compile time), where the shipped databases live, the target's id.
COMPILE = """
import json, os, sys, numpy as np, onnx, tvm, tvm_wheels, tvm_wheels.target
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx
from tvm_wheels import tuning
d = os.environ["MODEL_DIR"]
target = json.loads(os.environ["TARGET"]) if os.environ.get("TARGET") else None
mod = from_onnx(onnx.load(os.path.join(d, "model.onnx")), keep_params_in_input=False)
report = []
ex = tvm_wheels.compile(mod, target, report=report)
vm = relax.VirtualMachine(ex, tvm.cpu())
np.save(os.path.join(d, "out.npy"), vm["main"](tvm.runtime.tensor(np.load(os.path.join(d, "input.npy")))).numpy())
used = tuning.tuning_target(target)
print(json.dumps({"report": {e.function: e.source for e in report}, "shipped": str(tuning.SHIPPED),
                  "prepacked": sorted(e.function for e in report if e.prepacked), "target_id": tuning.target_id(used)}))
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
@pytest.mark.parametrize("name", ["resnet50", "resnet50_batch_norm", "bert_block"])
def test_avx512_compiles_models_from_the_shipped_database(avx512_venv, tmp_path, name):
    """resnet50_batch_norm: the same network with BatchNormalization nodes after bias-free
    convolutions; folded into the weights (rewrites.py), it finds the same records."""
    module = {"resnet50": resnet50, "resnet50_batch_norm": resnet50, "bert_block": transformer}[name]
    model = module.build(seed=0, batch_norm=True) if name == "resnet50_batch_norm" else module.build(seed=0)
    x = module.sample_input(seed=1)
    result, got = _compile_and_run(avx512_venv, tmp_path, model, x, db_root=tmp_path / "no-user-db")
    _assert_close(got, _reference(model, x), f"cpu-avx512 {name}")
    assert result["target_id"] == AVX512_DB
    shipped = f"database:{result['shipped']}/{AVX512_DB}"
    report = result["report"]
    assert not [f for f, s in report.items() if s.startswith("unscheduled")], report
    heavy = _heavy(report)
    assert heavy and all(s == shipped for s in heavy.values()), heavy
    # the tuned schedules read the constant weights in their own order, reordered once at compile
    # time: every convolution, and the BERT block's projections (its attention matmuls have no weight)
    prepacked = set(result["prepacked"])
    assert {f for f in heavy if "conv2d" in f} <= prepacked and prepacked, (sorted(heavy), sorted(prepacked))
    print(f"{name}: {sum(s == shipped for s in report.values())} of {len(report)} functions from the shipped "
          f"database, {sum(s == 'rules' for s in report.values())} from rules")


@pytest.mark.avx512_host
def test_shipped_records_are_not_applied_to_another_target(avx512_venv, tmp_path):
    out = avx512_venv.json("""
        import json
        from tvm_wheels import tuning
        v4, v3 = tuning.tuning_target(None), tuning.tuning_target({"kind": "llvm", "mcpu": "x86-64-v3"})
        shipped = tuning.Database(tuning.SHIPPED / tuning.target_id(v4))
        workloads = [r.workload.mod for r in shipped.ms.get_all_tuning_records()]
        print(json.dumps({"workloads": len(workloads),
                          "v4": sum(shipped.best(w, v4) is not None for w in workloads),
                          "v3": sum(shipped.best(w, v3) is not None for w in workloads),
                          "dbs_v3": [str(d.path) for d in tuning.databases(v3)],
                          "dbs_v4": [str(d.path) for d in tuning.databases(v4)]}))
    """, env={"TVM_WHEELS_TUNING_DB": str(tmp_path)})
    assert out["workloads"] > 30  # ResNet-50 and the BERT block
    assert out["v4"] == out["workloads"] and out["v3"] == 0
    assert out["dbs_v3"] == [] and len(out["dbs_v4"]) == 1 and out["dbs_v4"][0].endswith(AVX512_DB)


def test_cpu_wheel_ships_no_database_and_schedules_by_rules(cpu_wheel, cpu_venv, tmp_path):
    import zipfile

    assert not [n for n in zipfile.ZipFile(cpu_wheel).namelist() if "tvm_wheels/tuning/" in n]
    model, x = transformer.build(seed=0), transformer.sample_input(seed=1)
    result, got = _compile_and_run(cpu_venv, tmp_path, model, x, db_root=tmp_path / "no-user-db")
    _assert_close(got, _reference(model, x), "cpu bert_block")
    assert set(result["report"].values()) == {"rules"}, result["report"]


def test_avx512_wheel_ships_only_its_own_database_with_its_budget(avx512_wheel):
    import zipfile

    names = [n for n in zipfile.ZipFile(avx512_wheel).namelist() if "tvm_wheels/tuning/" in n and n[-1] != "/"]
    assert sorted(n.split("tvm_wheels/tuning/")[1] for n in names) == [
        f"{AVX512_DB}/{f}" for f in ("budget.json", "database_tuning_record.json", "database_workload.json")]
    budget = json.loads(zipfile.ZipFile(avx512_wheel).read(next(n for n in names if n.endswith("budget.json"))))
    assert budget["target_id"] == AVX512_DB and budget["rounds"], budget


def _mlp(path, seed=0):
    """A one-task ONNX model: relu(x @ w + b), 64x256 @ 256x128."""
    rng = np.random.default_rng(seed)
    w = numpy_helper.from_array(rng.standard_normal((256, 128)).astype(np.float32) / 16, "w")
    b = numpy_helper.from_array(rng.standard_normal(128).astype(np.float32), "b")
    nodes = [helper.make_node("MatMul", ["input", "w"], ["mm"]), helper.make_node("Add", ["mm", "b"], ["y"]),
             helper.make_node("Relu", ["y"], ["output"])]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [64, 256])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [64, 128])], [w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    path.write_bytes(model.SerializeToString())
    return model


def test_tune_says_what_to_install_when_its_dependencies_are_missing(avx512_venv, tmp_path):
    _mlp(tmp_path / "mlp.onnx")
    proc = avx512_venv.run(f"""
        import sys
        from tvm_wheels.cli import main
        sys.exit(main(["tune", {str(tmp_path / "mlp.onnx")!r}, "--out", {str(tmp_path / "db")!r}]))
    """, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "Fix: pip install psutil cloudpickle xgboost-cpu" in proc.stderr
    assert not (tmp_path / "db").exists()


@pytest.mark.avx512_host
def test_tune_writes_records_that_compile_uses_for_this_target_only(avx512_wheel, tmp_path_factory):
    from conftest import make_venv

    venv = make_venv(tmp_path_factory.mktemp("venv-tune"), "tvm-wheels cpu-avx512[tune]", f"{avx512_wheel}[tune]")
    d, db = tmp_path_factory.mktemp("tune-model"), tmp_path_factory.mktemp("tune-db")
    model = _mlp(d / "mlp.onnx")
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
