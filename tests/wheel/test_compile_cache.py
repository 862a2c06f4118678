"""Compile once (compiler/cache.py): a second compile of the same model takes each function's
schedule as the first chose it, with the same report and the same output; a cache that is
unreadable, or that another TVM, tvm-ffi or compiler code wrote, is not applied and breaks
nothing; TVM_WHEELS_COMPILE_CACHE=off keeps nothing."""

from __future__ import annotations

import json
import shutil

import pytest

pytestmark = pytest.mark.wheel

# A small CNN (convolutions, a depthwise one, pooling, a dense layer): compiled N times in one
# process, each compile's report (function -> source, cached) and seconds, and whether every
# output equals the first's.
COMPILE_TWICE = """
import json, os, time, numpy as np, tvm, tvm_wheels
from tvm import relax
from tvm.script import relax as R
rng = np.random.default_rng(0)
def const(*shape):
    return relax.const(rng.standard_normal(shape).astype("float32") / shape[-1])
bb = relax.BlockBuilder()
x = relax.Var("x", R.Tensor((1, 16, 28, 28), "float32"))
with bb.function("main", [x]):
    with bb.dataflow():
        y = bb.emit(relax.op.nn.relu(relax.op.nn.conv2d(x, const(32, 16, 3, 3), padding=1)))
        y = bb.emit(relax.op.nn.conv2d(y, const(32, 1, 3, 3), padding=1, groups=32))
        y = bb.emit(relax.op.nn.max_pool2d(y, pool_size=2, strides=2))
        y = bb.emit(relax.op.reshape(y, (1, 32 * 14 * 14)))
        out = bb.emit_output(relax.op.matmul(y, const(32 * 14 * 14, 10)))
    bb.emit_func_output(out)
mod = bb.get()
data = tvm.runtime.tensor(rng.standard_normal((1, 16, 28, 28)).astype("float32"))
runs, first = [], None
for _ in range(int(os.environ["TIMES"])):
    report, t = [], time.monotonic()
    ex = tvm_wheels.compile(mod, report=report)
    seconds = time.monotonic() - t
    out = relax.VirtualMachine(ex, tvm.cpu())["main"](data).numpy()
    first = out if first is None else first
    runs.append({"seconds": seconds, "same": bool(np.array_equal(out, first)),
                 "report": {e.function: [e.source, e.cached] for e in report}})
print(json.dumps(runs))
"""


def _compile(venv, cache, times, **env):
    return venv.json(COMPILE_TWICE, env={"TVM_WHEELS_COMPILE_CACHE": str(cache), "TIMES": str(times), **env})


def _kept(cache):
    return sorted(p for p in cache.rglob("*.json"))


def test_a_second_compile_takes_what_the_first_chose(cpu_venv, tmp_path):
    cache = tmp_path / "compiled"
    first, second = _compile(cpu_venv, cache, 2)
    print(f"first compile {first['seconds']:.1f} s, second {second['seconds']:.1f} s")
    chosen = {f: source for f, (source, cached) in first["report"].items()}
    assert not any(cached for _, cached in first["report"].values()), first
    # the same source for every function, now from the cache, except a database's records (a lookup already)
    assert {f: source for f, (source, _) in second["report"].items()} == chosen, second
    assert {f for f, (source, cached) in second["report"].items() if cached} == \
        {f for f, source in chosen.items() if not source.startswith("database:")}, second
    assert sum(cached for _, cached in second["report"].values()) >= 3, second
    assert second["same"], "the second compile's output differs from the first's"

    # kept under <TVM>-<tvm-ffi>-<code digest>/<target id>-<databases>/: a directory another
    # version of either, or of this package's compiler, wrote is not this one, and is not read
    (keyed,) = [d for d in cache.iterdir() if d.is_dir()]
    assert keyed.name.startswith("0.26.0+cpu-ffi0.1.14"), keyed.name
    keyed.rename(cache / "0.26.0+cpu-ffi0.1.14.post1-0000000000000000")
    (third,) = _compile(cpu_venv, cache, 1)
    assert not any(cached for _, cached in third["report"].values()), third
    assert {f: source for f, (source, _) in third["report"].items()} == chosen


def test_an_unreadable_cache_is_chosen_again_and_off_keeps_nothing(cpu_venv, tmp_path):
    cache = tmp_path / "compiled"
    (first,) = _compile(cpu_venv, cache, 1)
    kept = _kept(cache)
    texts = [p.read_text() for p in kept]
    assert len(texts) >= 2
    for i, path in enumerate(kept):  # not JSON, or another function's entry (a hash that collided)
        path.write_text("{not json" if i % 2 == 0 else texts[(i + 1) % len(texts)])
    again, third = _compile(cpu_venv, cache, 2)
    assert not any(cached for _, cached in again["report"].values()), again
    assert again["report"] == first["report"]
    assert all(cached for source, cached in third["report"].values() if not source.startswith("database:")), third

    # off: nothing kept, not even where the cache would be by default
    (off,) = _compile(cpu_venv, "off", 1, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    assert not any(cached for _, cached in off["report"].values())
    assert not (tmp_path / "xdg" / "tvm-wheels" / "compiled").exists()
