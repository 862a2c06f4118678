"""Tuning: MetaSchedule's search over a model's tasks, into a database of records.py.

`tvm-wheels tune MODEL.onnx` (the user's database) and tools/tune_db.py (the databases shipped
in the wheels) call tune(); tvm_wheels.compile then finds the records (schedules.py). With
servers (remote.connect), candidates are built here and measured on the tracker's devices.
"""

from __future__ import annotations

import functools
import os
import tempfile
import time
from pathlib import Path

from . import pipeline, records
from ..target import for_compile

# MetaSchedule's 30 s builder timeout fails candidates when the machine is busy (measured: a
# 64x256x128 matmul, 2 cores shared with another tuning run); a failed candidate is a lost trial.
BUILD_TIMEOUT_S = 300


def tasks(mod, target):
    """MetaSchedule tasks of a (not yet legalized) Relax module, heaviest first."""
    from tvm.s_tir import meta_schedule as ms

    found = ms.relax_integration.extract_tasks(pipeline.legalize(mod, target), target)
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


def export_shared(compiler: str | None, mod) -> str:
    """A candidate as a shared library a server loads without a compiler (MetaSchedule's default
    export is a tar of objects, which the server links itself): linked here by `compiler`
    (target.cross_compiler) or this machine's."""
    from tvm.support import cc

    path = os.path.join(tempfile.mkdtemp(prefix="tvm-wheels-candidate-"), "candidate.so")
    mod.export_library(path, fcompile=cc.cross_compiler(compiler) if compiler else cc.create_shared)
    return path


def tune(mod, target, out: Path, trials: int, *, progress=print, seed: int = 0, logs: Path | None = None,
         tuned=None, servers=None) -> records.Database:
    """Tune each task of `mod` until it has `trials` measured records in `out`/<target id>.

    Resumable: records already in the database count toward `trials`, so a run that was
    stopped continues where it was, and raising `trials` adds to what is there. `tuned`: a
    Database whose workloads count as done (tools/tune_db.py: the shipped one, tuned to this
    budget already), so a new machine without the search history resumes from it. `servers`:
    remote.Servers, checked for this target, that measure instead of this machine.
    """
    from tvm.s_tir import meta_schedule as ms
    from tvm.s_tir.meta_schedule.tune_context import _normalize_mod

    from ..target import cross_compiler

    target = for_compile(target)
    export = None if servers is None else functools.partial(export_shared, cross_compiler(target))
    where = "" if servers is None else f" on {servers}"
    runner = "local" if servers is None else servers.runner()
    db = records.Database(Path(out) / records.target_id(target), writable=True)
    todo = [(task, _normalize_mod(task.dispatched[0])) for task in tasks(mod, target)]
    left = [0 if tuned is not None and tuned.best(work, target) is not None
            else max(0, trials - len(db.records(work, target, top=trials))) for _, work in todo]
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
                               builder=ms.builder.LocalBuilder(timeout_sec=BUILD_TIMEOUT_S, f_export=export),
                               runner=runner)
            done_trials += left[i]
        found = db.records(work, target, top=trials) or (tuned.records(work, target) if tuned is not None else [])
        elapsed = time.monotonic() - start
        eta = elapsed / done_trials * sum(left[i + 1:]) if done_trials else 0.0
        progress(f"[{i + 1}/{len(todo)}] {task.task_name} (x{task.weight}): {len(found)} trials, best "
                 + (f"{float(found[0].run_secs[0]) * 1e6:.0f} us" if found else "none")
                 + f", elapsed {elapsed / 60:.1f} min, ETA {eta / 60:.1f} min{where}")
    return db
