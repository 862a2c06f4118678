"""Tuning databases: where they live, which target they belong to, and how to fill them.

A database is a directory with MetaSchedule's two JSON files. It belongs to one target:
its directory is named by `target_id` (kind, mcpu, mattr; not the core count), and a record
is used only when its own target has the same id, so records tuned for x86-64-v4 never reach
a cpu wheel compiling for another CPU.

Looked up, first hit wins:
  1. $TVM_WHEELS_TUNING_DB/<target id>/  (default ~/.cache/tvm-wheels/tuning/): `tvm-wheels tune`
  2. tvm_wheels/tuning/<target id>/ in the wheel: shipped (the preset's TVM_WHEEL_TUNING_DB),
     made by tools/tune_db.py
"""

from __future__ import annotations

import logging
import os
import re
import time
from pathlib import Path

from . import host, rewrites

log = logging.getLogger("tvm_wheels.tuning")

SHIPPED = Path(__file__).resolve().parent / "tuning"
# MetaSchedule's 30 s builder timeout fails candidates when the machine is busy (measured: a
# 64x256x128 matmul, 2 cores shared with another tuning run); a failed candidate is a lost trial.
BUILD_TIMEOUT_S = 300
FAILED_SECS = 1e9  # MetaSchedule records a failed build or run as 1e10 s
# Convolutions in NHWC: the output channels are the innermost axis, so a schedule vectorizes
# them 16 wide on AVX-512 even where the image is 7x7 or read with stride 2. Measured here with
# 32 trials each (convs of ResNet-50): NCHW 28-62 GFLOP/s, NHWC with prepacked weights 95-164.
LAYOUTS = {"relax.nn.conv2d": ["NHWC", "OHWI"]}


def user_root() -> Path:
    env = os.environ.get("TVM_WHEELS_TUNING_DB")
    if env:
        return Path(env)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "tvm-wheels" / "tuning"


def tuning_target(target=None):
    """The target as MetaSchedule needs it: the variant's default when None, with num-cores set."""
    import tvm

    from . import target as default

    target = default.host() if target is None else tvm.target.Target(target)
    spec = dict(target.export())
    if "num-cores" not in spec or int(spec["num-cores"]) <= 0:
        spec["num-cores"] = host.physical_cores()
        target = tvm.target.Target(spec)
    return target


def target_id(target) -> str:
    """The part of a target that decides which code is right: kind, mcpu, mattr."""
    spec = dict(target if isinstance(target, dict) else target.export())
    parts = [str(spec.get("kind", "")), str(spec.get("mcpu", "") or "generic")]
    parts += sorted(str(a) for a in (spec.get("mattr") or []))
    return re.sub(r"[^A-Za-z0-9_.+-]+", "_", "-".join(parts)).strip("_")


class Database:
    """A MetaSchedule JSON database restricted to one target id."""

    def __init__(self, path: Path, writable: bool = False):
        from tvm.s_tir import meta_schedule as ms

        self.path = Path(path)
        if writable:
            self.path.mkdir(parents=True, exist_ok=True)
        self.ms = ms.database.JSONDatabase(
            path_workload=str(self.path / "database_workload.json"),
            path_tuning_record=str(self.path / "database_tuning_record.json"),
            allow_missing=writable,
        )

    def records(self, mod, target, top: int = 1):
        """Best measured records of `mod` tuned for this target id (never commits a workload)."""
        if not self.ms.has_workload(mod):
            return []
        tid = target_id(target)
        found = self.ms.get_top_k(self.ms.commit_workload(mod), 1 << 20)
        return [r for r in found if r.target is not None and target_id(r.target) == tid][:top]

    def in_order(self):
        """Every record in the order it was measured (the JSON files are append-only logs;
        MetaSchedule's own listing is sorted by latency)."""
        import json

        from tvm.s_tir import meta_schedule as ms

        workloads = [ms.database.Workload.from_json(json.loads(line))
                     for line in (self.path / "database_workload.json").read_text().splitlines() if line.strip()]
        for line in (self.path / "database_tuning_record.json").read_text().splitlines():
            if line.strip():
                index, record = json.loads(line)
                yield ms.database.TuningRecord.from_json(record, workloads[index])

    def best(self, mod, target):
        found = self.records(mod, target)
        return found[0] if found else None


def databases(target) -> list[Database]:
    """The databases a compile for `target` consults, in order."""
    tid = target_id(target)
    found = []
    for root in (user_root(), SHIPPED):
        path = root / tid
        if (path / "database_tuning_record.json").is_file():
            found.append(Database(path))
    return found


def _mark_constant_weights(mod):
    """relax.transform.AttachAttrLayoutFreeBuffers for constants only, keeping each function's
    name: that pass also marks weights passed as parameters, and renames every function it touches."""
    import tvm
    from tvm import relax

    call_tir = tvm.ir.Op.get("relax.call_tir")
    found = {}

    def visit(expr):
        if isinstance(expr, relax.Call) and expr.op.same_as(call_tir) and isinstance(expr.args[1], relax.Tuple):
            consts = tuple(i for i, a in enumerate(expr.args[1].fields) if isinstance(a, relax.Constant))
            found.setdefault(expr.args[0], set()).add(consts)

    for func in mod.functions.values():
        if isinstance(func, relax.Function):
            relax.analysis.post_order_visit(func, visit)
    mod = mod.clone()
    for gv, uses in found.items():
        if len(uses) == 1 and next(iter(uses)):  # the same arguments are constants at every call
            mod[gv] = mod[gv].with_attr("layout_free_buffers", list(next(iter(uses))))
    return mod


def front_passes(target) -> list:
    """The CPU pipeline up to fusion, the stage at which tasks are extracted and schedules applied.

    TVM's cpu_generic passes. When the weights are constants (from_onnx(...,
    keep_params_in_input=False), as `tvm-wheels tune` reads models), the graph gets the
    rewrites.for_inference rewrites, convolutions are converted to LAYOUTS and, after fusion, the weights are marked layout-free: a schedule (tuned or
    from the rules) may then store a weight in the order its loops read it, and
    schedules.pipeline folds both reorderings into the constants at compile time. Weights passed
    as parameters are left as they are: reordering them would cost time on every call.
    """
    import tvm
    from tvm import relax
    from tvm.relax.backend.cpu_generic import pipeline as cpu

    @tvm.transform.module_pass(opt_level=0, name="tvm_wheels.FrontPasses")
    def _front(mod, _ctx):
        passes = cpu.library_dispatch_passes(target) + cpu.legalize_passes(target)
        params = any(isinstance(f, relax.Function) and f.attrs and "num_input" in f.attrs
                     and len(f.params) > int(f.attrs["num_input"]) for f in mod.functions.values())
        if params:
            return tvm.transform.Sequential(passes)(mod)
        mod = rewrites.for_inference()(mod)
        try:
            converted = relax.transform.ConvertLayout(LAYOUTS)(mod)
        except (RuntimeError, ValueError) as e:  # tvm.error.InternalError is a RuntimeError
            # A graph TVM's layout conversion cannot handle still compiles, as TVM's own
            # pipeline does: convolutions stay NCHW (slower; tuned records do not match).
            log.warning("convolutions stay NCHW: TVM's ConvertLayout failed (%s)", str(e).strip().splitlines()[-1])
            converted = mod
        return _mark_constant_weights(tvm.transform.Sequential(passes)(converted))

    return [_front]


def legalize(mod, target):
    """`mod` through front_passes: the functions that get scheduled (and tuned)."""
    import tvm

    with target:
        return tvm.transform.Sequential(front_passes(target))(mod)


def from_onnx(path):
    import onnx

    return from_onnx_model(onnx.load(str(path)))


def from_onnx_model(model):
    """Relax module with the weights as constants (they fold into the compiled code)."""
    from tvm.relax.frontend.onnx import from_onnx as convert

    return convert(model, keep_params_in_input=False)


def tasks(mod, target):
    """MetaSchedule tasks of a (not yet legalized) Relax module, heaviest first."""
    from tvm.s_tir import meta_schedule as ms

    found = ms.relax_integration.extract_tasks(legalize(mod, target), target)
    return sorted(found, key=lambda t: (-t.weight * _flops(t.dispatched[0]), t.task_name))


def _flops(mod) -> float:
    from tvm.s_tir.analysis import estimate_tir_flops

    try:
        return float(estimate_tir_flops(mod))
    except Exception:  # ops the estimator does not know count as cheap
        return 0.0


def _search():
    """MetaSchedule's evolutionary search, sized for budgets of tens of trials per task: its
    defaults (population 512, 4 generations) spend ~40 s per task per round on 2 cores before
    the first measurement; this population finds the same kind of candidates in a third of it."""
    from tvm.s_tir import meta_schedule as ms

    return ms.search_strategy.EvolutionarySearch(population_size=128, init_min_unmeasured=32,
                                                 genetic_num_iters=2)


def tune(mod, target, out: Path, trials: int, *, progress=print, seed: int = 0, logs: Path | None = None) -> Database:
    """Tune each task of `mod` until it has `trials` measured records in `out`/<target id>.

    Resumable: records already in the database count toward `trials`, so a run that was
    stopped continues where it was, and raising `trials` adds to what is there.
    """
    from tvm.s_tir import meta_schedule as ms
    from tvm.s_tir.meta_schedule.tune_context import _normalize_mod

    target = tuning_target(target)
    db = Database(Path(out) / target_id(target), writable=True)
    todo = [(task, _normalize_mod(task.dispatched[0])) for task in tasks(mod, target)]
    left = [max(0, trials - len(db.records(work, target, top=trials))) for _, work in todo]
    start = time.monotonic()
    done_trials = 0
    for i, (task, work) in enumerate(todo):
        if left[i]:
            have = trials - left[i]
            ctx = ms.TuneContext(mod=work, target=target, space_generator="post-order-apply",
                                 search_strategy=_search(), task_name=task.task_name,
                                 rand_state=seed + have, num_threads="physical")
            ms.tune.tune_tasks(tasks=[ctx], task_weights=[1.0], work_dir=str(logs or db.path / "logs"),
                               max_trials_global=left[i], num_trials_per_iter=min(left[i], 16), database=db.ms,
                               builder=ms.builder.LocalBuilder(timeout_sec=BUILD_TIMEOUT_S))
            done_trials += left[i]
        found = db.records(work, target, top=trials)
        elapsed = time.monotonic() - start
        eta = elapsed / done_trials * sum(left[i + 1:]) if done_trials else 0.0
        progress(f"[{i + 1}/{len(todo)}] {task.task_name} (x{task.weight}): {len(found)} trials, best "
                 + (f"{float(found[0].run_secs[0]) * 1e6:.0f} us" if found else "none")
                 + f", elapsed {elapsed / 60:.1f} min, ETA {eta / 60:.1f} min")
    return db


def export(sources, dest: Path, top: int = 1, first: int | None = None) -> Database:
    """Copy the best `top` records of each workload of `sources` (one Database or several, e.g.
    the shipped one and a user's) into a fresh database at `dest`: what ships in a wheel, without
    the search history. `first`: consider only each workload's first N valid measurements, so a
    budget's result can be reproduced from a history that went on to larger budgets."""
    import tvm_ffi
    from tvm.s_tir import meta_schedule as ms

    sources = [sources] if isinstance(sources, Database) else list(sources)
    found = {}  # workload hash -> (workload mod, [valid records in measurement order])
    for src in sources:
        for record in src.in_order():
            if record.run_secs and all(float(t) < FAILED_SECS for t in record.run_secs):
                key = tvm_ffi.structural_hash(record.workload.mod)
                found.setdefault(key, (record.workload.mod, []))[1].append(record)
    for name in ("database_workload.json", "database_tuning_record.json"):
        (Path(dest) / name).unlink(missing_ok=True)
    out = Database(dest, writable=True)
    for _, (mod, records) in sorted(found.items(), key=lambda kv: kv[0]):
        entry = out.ms.commit_workload(mod)
        considered = sorted(records[:first], key=lambda r: sum(float(t) for t in r.run_secs) / len(r.run_secs))
        for r in considered[:top]:
            out.ms.commit_tuning_record(ms.database.TuningRecord(
                r.trace, entry, run_secs=r.run_secs, target=r.target, args_info=r.args_info))
    return out
