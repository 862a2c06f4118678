#!/usr/bin/env python3
"""What a cold wheel build costs, and what each build-cost lever (cmake/compile.cmake) saves.

    python tools/build_cost.py run --label NAME [--ref REF] [--variant cpu]
        a cold build of the project at git REF (default HEAD): a fresh worktree, its submodules
        from the source kit, empty ccache and wheel cache, tools/wheelhouse.py build; while it
        runs, every compiler and linker process's peak memory is sampled. Adds one row to
        bench/results/build_cost.json.
    python tools/build_cost.py collect --label NAME --build-dir DIR --ref REF (--time-log FILE --wheel WHEEL
                                       | --manifest MANIFEST [--peaks PEAKS.json]
                                       | --started EPOCH --stopped EPOCH --steps N)
        the same row from a cold build made by hand under `/usr/bin/time -v` (FILE: its report;
        peak memory is then the largest single process, not per job), or from one stopped before
        its end (a lower bound: `complete` false, the ninja steps it had finished out of N), or
        from a build of tools/wheelhouse.py (MANIFEST: the cache slot's manifest.json, with its
        time) during which `build_cost.py sample` wrote PEAKS.json.
    python tools/build_cost.py sample --until FILE --out PEAKS.json
        samples compile and link processes' peak memory until FILE exists (beside any build).
    python tools/build_cost.py levers --build-dir DIR [--sample 16]
        the levers one at a time on a sample of TVM's compiler sources, with the compile
        commands of DIR (a configured non-unity build): CPU seconds and peak memory per
        setting, in bench/results/build_levers.json.
    python tools/build_cost.py cuda-archs --build-dir DIR [--archs 80,86,89,90a,100a,120]
        what each CUDA arch costs a CUDA variant's sidecar (DIR: a configured sidecar build, e.g.
        `tools/wheelhouse.py probe --variant cuda-cutlass`'s): one source of each kind of kernel
        compiled alone for one arch at a time (CPU seconds, peak memory, object size), scaled by
        how many sources of that kind the build has; bench/results/cuda_arch_cost.json.
    python tools/build_cost.py sidecar --build-dir DIR [--manifest MANIFEST]
        what a CUDA variant's whole sidecar build took (DIR: the wheel's build tree, e.g.
        build/cuda-cutlass after tools/wheelhouse.py build): CPU seconds per kernel library,
        the kernels' wall time at the build's job count, the libraries' sizes, and (MANIFEST: the
        cache slot's manifest.json) the wheel and its build's ccache hits;
        bench/results/cuda_sidecar_build.json and .png.
    python tools/build_cost.py plot
        bench/results/build_cost.png from both files, and cuda_arch_cost.png.

A row keeps the build's wall time, ninja's per-object times (.ninja_log: the 20 slowest), the
link of libtvm_compiler, peak memory per job and the wheel's size.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
COST = RESULTS / "build_cost.json"
LEVERS = RESULTS / "build_levers.json"
CUDA_ARCHS = RESULTS / "cuda_arch_cost.json"
SIDECAR = RESULTS / "cuda_sidecar_build.json"
KIT = ROOT.parent / "shared" / "sources" / "checkout-submodules"


def _load(path: Path) -> list:
    return json.loads(path.read_text()) if path.exists() else []


def _save(path: Path, rows: list) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows, indent=1) + "\n")


def _host() -> dict:
    return {"cores": os.cpu_count(), "machine": platform.machine(),
            "mem_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
            "cxx": subprocess.run(["c++", "--version"], capture_output=True, text=True).stdout.splitlines()[0]}


class PeakSampler(threading.Thread):
    """Peak resident memory (VmHWM) of every compile and link process, keyed by its output file."""

    TOOLS = ("cc1plus", "cc1", "ld", "ld.gold", "ld.lld", "collect2")

    def __init__(self, period: float = 0.5):
        super().__init__(daemon=True)
        self.period, self.peaks, self._done = period, {}, threading.Event()
        self._outputs: dict[int, str] = {}

    def run(self):
        while not self._done.wait(self.period):
            for pid_dir in Path("/proc").glob("[0-9]*"):
                try:
                    status = (pid_dir / "status").read_text()
                    name = re.search(r"^Name:\s+(\S+)", status, re.M).group(1)
                    if name not in self.TOOLS:
                        continue
                    hwm = int(re.search(r"^VmHWM:\s+(\d+)", status, re.M).group(1)) // 1024
                    pid = int(pid_dir.name)
                    if pid not in self._outputs:
                        argv = (pid_dir / "cmdline").read_bytes().split(b"\0")
                        out = next((argv[i + 1].decode() for i, a in enumerate(argv[:-1]) if a == b"-o"), name)
                        self._outputs[pid] = f"{name}:{Path(out).name}"
                    key = self._outputs[pid]
                    self.peaks[key] = max(self.peaks.get(key, 0), hwm)
                except (OSError, AttributeError, ValueError):
                    continue

    def stop(self) -> dict:
        self._done.set()
        self.join()
        return self.peaks


def ninja_log(build_dir: Path) -> list[tuple[str, float, float]]:
    """(output, start s, duration s) of the last build recorded in build_dir/.ninja_log."""
    entries: dict[str, tuple[float, float]] = {}
    for line in (build_dir / ".ninja_log").read_text().splitlines()[1:]:
        start, end, _, out, _ = line.split("\t")
        entries[out] = (int(start) / 1000, (int(end) - int(start)) / 1000)
    return [(out, s, d) for out, (s, d) in entries.items()]


def summarize(build_dir: Path, *, seconds: float, peaks: dict | None, wheel: Path | None, label: str,
              ref: str, variant: str, extra: dict | None = None) -> dict:
    log = ninja_log(build_dir)
    objects = [(o, d) for o, _, d in log if o.endswith(".o")]
    link = [d for o, _, d in log if o.endswith("libtvm_compiler.so")]
    info = json.loads((build_dir / "tvm_wheels_generated" / "_build_info.json").read_text())
    row = {
        "label": label, "ref": ref, "variant": variant, "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "host": _host(), "caches": "empty (no ccache entries, no cached wheel)",
        "wall_s": round(seconds), "ninja_s": round(max(s + d for _, s, d in log) - min(s for _, s, _ in log)),
        "compile_steps": len(objects), "compile_cpu_s": round(sum(d for _, d in objects)),
        "link_libtvm_compiler_s": round(link[0], 1) if link else None,
        "slowest_objects": [{"object": o.split("CMakeFiles/")[-1], "s": round(d, 1)}
                            for o, d in sorted(objects, key=lambda x: -x[1])[:20]],
        "unity_batch": int(info.get("unity_batch") or 0), "opt_level": info.get("opt_level", "-O3 (CMake Release)"),
        "dropped_definitions": info.get("dropped_definitions", []),
        "wheel": wheel.name if wheel else None, "wheel_mb": round(wheel.stat().st_size / 1e6, 1) if wheel else None,
    }
    if peaks:
        compiles = {k: v for k, v in peaks.items() if k.startswith(("cc1plus", "cc1"))}
        links = {k: v for k, v in peaks.items() if not k.startswith(("cc1plus", "cc1"))}
        row["peak_rss_mb"] = {"compile_max": max(compiles.values(), default=None),
                              "compile_median": sorted(compiles.values())[len(compiles) // 2] if compiles else None,
                              "link_max": max(links.values(), default=None),
                              "heaviest_compiles": dict(sorted(compiles.items(), key=lambda x: -x[1])[:5])}
    row.update(extra or {})
    return row


def cmd_run(args) -> None:
    ref = subprocess.run(["git", "-C", str(ROOT), "rev-parse", args.ref], capture_output=True, text=True,
                         check=True).stdout.strip()
    work = Path(tempfile.mkdtemp(prefix="build-cost-"))
    tree = work / "src"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), ref], check=True)
    try:
        subprocess.run([str(KIT), "."] if KIT.exists() else ["git", "submodule", "update", "--init", "--recursive"],
                       cwd=tree, check=True, capture_output=True)
        env = dict(os.environ, CCACHE_DIR=str(work / "ccache"), TVM_WHEELS_CACHE=str(work / "cache"))
        # The build environment (pip's LLVM, cmake, ninja) is made first and not timed: it is a download.
        subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, 'tools'); import wheelhouse; "
                        "wheelhouse.build_env()"], cwd=tree, env=env, check=True)
        sampler = PeakSampler()
        sampler.start()
        started = time.time()
        proc = subprocess.run([sys.executable, "tools/wheelhouse.py", "build", "--variant", args.variant],
                              cwd=tree, env=env, stdout=subprocess.PIPE, text=True)
        seconds = time.time() - started
        peaks = sampler.stop()
        if proc.returncode != 0:
            sys.exit(f"build of {ref[:12]} failed ({proc.returncode})")
        row = summarize(tree / "build" / args.variant, seconds=seconds, peaks=peaks,
                        wheel=Path(proc.stdout.strip().splitlines()[-1]), label=args.label, ref=ref,
                        variant=args.variant)
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    rows = [r for r in _load(COST) if r["label"] != args.label] + [row]
    _save(COST, rows)
    print(json.dumps({k: row[k] for k in ("label", "wall_s", "compile_steps", "compile_cpu_s", "wheel_mb")}))


def cmd_collect(args) -> None:
    wheel = Path(args.wheel) if args.wheel else None
    peaks = json.loads(Path(args.peaks).read_text()) if args.peaks else None
    if args.manifest:
        manifest = json.loads(Path(args.manifest).read_text())
        seconds, wheel = manifest["seconds"], Path(args.manifest).parent / manifest["wheel"]
        extra = {"complete": True}
    elif args.time_log:
        report = Path(args.time_log).read_text()
        elapsed = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", report).group(1)
        h, m, s = ([0] + elapsed.split(":"))[-3:]
        seconds = int(h) * 3600 + int(m) * 60 + float(s)
        peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", report).group(1)) // 1024
        extra = {"complete": True, "peak_rss_mb": {"largest_process": peak}}
    else:
        seconds = int(args.stopped) - int(args.started)
        done = len(ninja_log(Path(args.build_dir)))
        extra = {"complete": False, "steps_done": done, "steps_total": int(args.steps)}
    row = summarize(Path(args.build_dir), seconds=seconds, peaks=peaks, wheel=wheel,
                    label=args.label, ref=args.ref, variant=args.variant, extra=extra)
    _save(COST, [r for r in _load(COST) if r["label"] != args.label] + [row])
    print(json.dumps({k: row[k] for k in ("label", "wall_s", "compile_steps", "compile_cpu_s", "wheel_mb")}))


def cmd_sample(args) -> None:
    sampler = PeakSampler(period=1.0)
    sampler.start()
    while not Path(args.until).exists():
        time.sleep(2)
    Path(args.out).write_text(json.dumps(sampler.stop(), indent=1) + "\n")


def _compile(cmd: list[str]) -> tuple[float, int]:
    """CPU seconds and peak RSS (MB) of one compile."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)  # this compile's own usage, whatever runs beside it
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd[-3:])}: {err[-2000:]}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024


def cmd_levers(args) -> None:
    build = Path(args.build_dir)
    ninja = shutil.which("ninja") or "ninja"
    compdb = json.loads(subprocess.run([ninja, "-C", str(build), "-t", "compdb"], capture_output=True, text=True,
                                       check=True).stdout)
    entries = sorted((e for e in compdb if "tvm_objs.dir" in e["output"] and "-fno-rtti" not in e["command"]),
                     key=lambda e: e["file"])
    step = max(1, len(entries) // args.sample)
    sample = entries[::step][:args.sample]
    tmp = Path(tempfile.mkdtemp(prefix="levers-"))

    def base_cmd(e) -> list[str]:
        words = shlex.split(e["command"])
        words = words[next(i for i, w in enumerate(words) if re.search(r"(^|/)(c\+\+|g\+\+)(-\d+)?$", w)):]
        cut = words.index("-o")
        return words[:cut] + words[cut + 2:]  # output and dependency file set per run

    def strip(words, *drop):
        out, skip = [], False
        for w in words:  # also ninja's dependency-file flags, -MT/-MF with their arguments
            if skip or w in drop or w == "-MD":
                skip = False
                continue
            skip = w in ("-MT", "-MF")
            if not skip:
                out.append(w)
        return out

    settings = {
        "as built (-O3, _DEBUG, _GLIBCXX_ASSERTIONS)": lambda w: w,
        "-O2": lambda w: ["-O2" if x == "-O3" else x for x in w],
        "no _DEBUG/_GLIBCXX_ASSERTIONS": lambda w: strip(w, "-D_DEBUG", "-D_GLIBCXX_ASSERTIONS"),
        "-O2, no assertions": lambda w: ["-O2" if x == "-O3" else x
                                         for x in strip(w, "-D_DEBUG", "-D_GLIBCXX_ASSERTIONS")],
    }
    rows = []
    for name, change in settings.items():
        cmds = [strip(change(base_cmd(e))) + ["-o", str(tmp / f"{i}.o")] for i, e in enumerate(sample)]
        rows.append(_measure(name, cmds, len(sample), build))
    for batch in (8, 16):
        cmds = []
        for b in range(0, len(sample), batch):
            group = sample[b:b + batch]
            unity = tmp / f"unity{batch}_{b}.cc"
            unity.write_text("".join(f'#include "{e["file"]}"\n' for e in group))
            words = ["-O2" if x == "-O3" else x
                     for x in strip(base_cmd(group[0]), "-D_DEBUG", "-D_GLIBCXX_ASSERTIONS")]
            words[words.index(group[0]["file"])] = str(unity)
            cmds.append(words + ["-o", str(tmp / f"unity{batch}_{b}.o")])
        rows.append(_measure(f"-O2, no assertions, unity batch {batch}", cmds, len(sample), build))
    shutil.rmtree(tmp, ignore_errors=True)
    base = rows[0]["cpu_s"]
    for r in rows:
        r["vs_as_built"] = round(r["cpu_s"] / base, 3)
    _save(LEVERS, {"host": _host(), "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
                   "sample": [e["file"].split("/tvm/", 1)[-1] for e in sample], "settings": rows})
    for r in rows:
        print(f"{r['setting']:45s} {r['cpu_s']:7.1f} CPU s  x{r['vs_as_built']:.2f}  peak {r['peak_rss_mb']} MB")


# The sidecar's kinds of CUDA source: (kind, CMake target, path part that selects it, compiled for
# which archs). "list": every arch of the variant's list; "80": flash attention, fixed at sm_80 by
# its CMakeLists; "90a": TVM's Hopper kernels, only when the list has 90a.
CUDA_KINDS = [
    ("fpA_intB GEMM", "fpA_intB_gemm.dir", "/cutlass_kernels/fpA_intB_gemm/", "list"),
    ("MoE GEMM", "fpA_intB_gemm.dir", "/moe_gemm/", "list"),
    ("weight-only GEMV", "fpA_intB_gemm.dir", "/weightOnlyBatchedGemv/", "list"),
    ("fpA_intB binding", "fpA_intB_gemm_tvm.dir", "/sidecar/", "list"),
    ("flash attention", "flash_attn.dir", "/libflash_attn/", "80"),
    ("TVM Hopper CUTLASS", "tvm_cutlass_objs.dir", "/contrib/cutlass/", "90a"),
]


def _nvcc_cmd(entry: dict, arch: str, out: Path) -> list[str]:
    words = shlex.split(entry["command"])
    words = words[next(i for i, w in enumerate(words) if w.endswith("/nvcc")):]
    kept, skip = [], False
    for w in words:
        if skip:
            skip = False
            continue
        if w in ("-o", "-MT", "-MF"):
            skip = True
            continue
        if w == "-MD" or w.startswith(("--generate-code=", "-gencode=")):
            continue
        kept.append(w)
    return kept + [f"--generate-code=arch=compute_{arch},code=[compute_{arch},sm_{arch}]", "-o", str(out)]


def cmd_cuda_archs(args) -> None:
    build = Path(args.build_dir)
    ninja = shutil.which("ninja") or "ninja"
    compdb = json.loads(subprocess.run([ninja, "-C", str(build), "-t", "compdb"], capture_output=True, text=True,
                                       check=True).stdout)
    cu = [e for e in compdb if e["file"].endswith(".cu")]
    archs = args.archs.split(",")
    tmp = Path(tempfile.mkdtemp(prefix="cuda-archs-"))
    jobs, kinds = [], []
    for kind, target, part, when in CUDA_KINDS:
        files = sorted((e for e in cu if f"/{target}/" in e["output"] and part in e["file"]), key=lambda e: e["file"])
        if not files:
            continue
        sample = files[len(files) // 2]  # one representative of the kind
        for arch in (archs if when == "list" else [a for a in archs if a == when] or [when]):
            jobs.append((kind, arch, _nvcc_cmd(sample, arch, tmp / f"{len(jobs)}.o")))
        kinds.append({"kind": kind, "sources": len(files), "sample": sample["file"].split("/tvm/", 1)[-1].split(
            "/main/", 1)[-1], "archs": when})
    with ThreadPoolExecutor(2) as pool:  # the 2 jobs of a build here
        measured = list(pool.map(lambda j: (_compile(j[2]), Path(j[2][-1]).stat().st_size), jobs))
    samples = [{"kind": k, "arch": a, "cpu_s": round(c, 1), "peak_rss_mb": m, "object_kb": size // 1024}
               for (k, a, _), ((c, m), size) in zip(jobs, measured)]
    shutil.rmtree(tmp, ignore_errors=True)
    count = {k["kind"]: k["sources"] for k in kinds}
    when = {k["kind"]: k["archs"] for k in kinds}

    def total(rows):  # scaled to every source of each kind
        return {"cpu_min": round(sum(s["cpu_s"] * count[s["kind"]] for s in rows) / 60, 1),
                "object_mb": round(sum(s["object_kb"] * count[s["kind"]] for s in rows) / 1024, 1),
                "peak_rss_mb": max((s["peak_rss_mb"] for s in rows), default=0)}

    # what putting an arch into the list adds (its Hopper kernels with 90a), and what every list pays
    per_arch = {arch: total([s for s in samples if s["arch"] == arch and when[s["kind"]] in ("list", arch)
                             and when[s["kind"]] != "80"]) for arch in archs}
    fixed = total([s for s in samples if when[s["kind"]] == "80"])
    _save(CUDA_ARCHS, {"host": _host(), "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
                       "method": "one source per kind, compiled alone per arch, CPU seconds scaled by the kind's "
                                 "source count (an estimate of the whole build's cost per arch)",
                       "kinds": kinds, "samples": samples, "per_arch": per_arch, "every_list": fixed})
    print(f"every list (flash attention, sm_80): {fixed['cpu_min']} CPU min")
    for arch, r in per_arch.items():
        print(f"sm_{arch:5s} {r['cpu_min']:6.1f} CPU min  {r['object_mb']:6.1f} MB objects  peak {r['peak_rss_mb']} MB")


def cmd_sidecar(args) -> None:
    build = Path(args.build_dir)
    side = build / "cuda-sidecar"
    info = json.loads((build / "tvm_wheels_generated" / "_build_info.json").read_text())
    log = [(o, s, d) for o, s, d in ninja_log(side) if o.endswith(".o")]
    groups: dict[str, list] = {}
    for o, s, d in log:  # by CMake target: <target>.dir/...
        target = o.split("CMakeFiles/")[-1].split(".dir/")[0] if ".dir/" in o else "other"
        groups.setdefault(target, []).append((s, d, o))
    kernels = [(s, d) for o, s, d in log if o.endswith(".cu.o")]
    row = {
        "host": _host(), "date": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "cuda_version": info.get("cuda_version"), "cuda_archs": info.get("cuda_archs"),
        "jobs": int(re.search(r"^TVM_WHEELS_CUDA_JOBS:\w+=(\d+)$", (side / "CMakeCache.txt").read_text(),
                              re.M).group(1)),
        "cuda_sources": len(kernels),
        "cuda_cpu_s": round(sum(d for _, d in kernels)),
        # the .cu objects ran in one ninja invocation: their span is the kernels' wall time
        "cuda_wall_s": round(max(s + d for s, d in kernels) - min(s for s, _ in kernels)) if kernels else 0,
        "cpu_s_by_target": {t: round(sum(d for _, d, _ in v)) for t, v in sorted(groups.items())},
        "slowest_objects": [{"object": o.split("CMakeFiles/")[-1], "s": round(d, 1)}
                            for o, _, d in sorted(log, key=lambda x: -x[2])[:10]],
        "library_mb": {p.name: round(p.stat().st_size / 1e6, 1) for p in sorted((side / "lib").glob("*.so"))},
    }
    if args.manifest:
        manifest = json.loads(Path(args.manifest).read_text())
        row.update(wheel=manifest["wheel"], wheel_mb=round(manifest["bytes"] / 1e6, 1),
                   wheel_build_s=manifest["seconds"],
                   ccache={t: {k: r[k] for k in ("calls", "hits")} for t, r in manifest.get("ccache", {}).items()})
    _save(SIDECAR, row)
    print(json.dumps({k: v for k, v in row.items() if k not in ("slowest_objects", "host")}))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3.6))
    targets = sorted(row["cpu_s_by_target"], key=lambda t: -row["cpu_s_by_target"][t])
    ax.barh(targets, [row["cpu_s_by_target"][t] / 60 for t in targets], color="#7a4")
    for i, t in enumerate(targets):
        ax.text(row["cpu_s_by_target"][t] / 60, i, f" {row['cpu_s_by_target'][t] / 60:.1f} min", va="center")
    ax.invert_yaxis()
    ax.set_xlabel(f"CPU minutes, archs {';'.join(row['cuda_archs'] or [])} "
                  f"({row['cuda_wall_s'] / 60:.0f} min of kernels at {row['jobs']} jobs)")
    ax.set_title("cuda-cutlass sidecar build, by target")
    ax.set_xlim(0, max(row["cpu_s_by_target"].values()) / 60 * 1.3)
    fig.tight_layout()
    fig.savefig(RESULTS / "cuda_sidecar_build.png", dpi=110)


def _measure(name: str, cmds: list[list[str]], sources: int, cwd: Path) -> dict:
    started = time.time()
    with ThreadPoolExecutor(2) as pool:  # the 2 jobs of a build here
        results = list(pool.map(_compile, cmds))
    return {"setting": name, "sources": sources, "compiles": len(cmds),
            "cpu_s": round(sum(c for c, _ in results), 1), "wall_s": round(time.time() - started, 1),
            "peak_rss_mb": max(m for _, m in results)}


def cmd_plot(_args) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows, levers = _load(COST), _load(LEVERS)
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8))
    ax = axes[0]
    labels = [r["label"] for r in rows]
    ax.barh(labels, [r["wall_s"] / 60 for r in rows], color=["#999" if i == 0 else "#2a7" for i in range(len(rows))])
    for i, r in enumerate(rows):
        ax.text(r["wall_s"] / 60, i, f" {r['wall_s'] / 60:.1f} min, {r['compile_steps']} compiles", va="center")
    ax.set_xlabel("cold build of the wheel, minutes (2 cores, empty caches)")
    ax.set_xlim(0, max(r["wall_s"] for r in rows) / 60 * 1.6)
    ax.invert_yaxis()
    ax.set_title("cold build")
    if levers:
        ax = axes[1]
        settings = levers["settings"]
        ax.barh([s["setting"] for s in settings], [s["vs_as_built"] for s in settings], color="#47a")
        for i, s in enumerate(settings):
            ax.text(s["vs_as_built"], i, f" {s['cpu_s']:.0f} s, {s['peak_rss_mb']} MB", va="center")
        ax.set_xlabel(f"CPU time vs as built, {len(levers['sample'])} compiler sources")
        ax.set_xlim(0, 1.45)
        ax.invert_yaxis()
        ax.set_title("levers, one at a time")
    fig.tight_layout()
    fig.savefig(RESULTS / "build_cost.png", dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("--label", required=True)
    run.add_argument("--ref", default="HEAD")
    run.add_argument("--variant", default="cpu")
    col = sub.add_parser("collect")
    for flag in ("--label", "--build-dir", "--ref"):
        col.add_argument(flag, required=True)
    for flag in ("--time-log", "--wheel", "--manifest", "--peaks", "--started", "--stopped", "--steps"):
        col.add_argument(flag)
    col.add_argument("--variant", default="cpu")
    smp = sub.add_parser("sample")
    smp.add_argument("--until", required=True)
    smp.add_argument("--out", required=True)
    lev = sub.add_parser("levers")
    lev.add_argument("--build-dir", required=True)
    lev.add_argument("--sample", type=int, default=16)
    cua = sub.add_parser("cuda-archs")
    cua.add_argument("--build-dir", required=True)
    cua.add_argument("--archs", default="80,86,89,90a,100a,120")
    sdc = sub.add_parser("sidecar")
    sdc.add_argument("--build-dir", required=True)
    sdc.add_argument("--manifest")
    sub.add_parser("plot")
    args = parser.parse_args()
    {"run": cmd_run, "collect": cmd_collect, "sample": cmd_sample, "levers": cmd_levers, "cuda-archs": cmd_cuda_archs,
     "sidecar": cmd_sidecar, "plot": cmd_plot}[args.command](args)


if __name__ == "__main__":
    main()
