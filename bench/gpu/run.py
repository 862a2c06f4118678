#!/usr/bin/env python3
"""The cuda-cutlass wheel on a GPU, in one run (the device machine: one H100/H200, < 8 min):

1. fpA_intB GEMM (`fastertransformer.gemm_fp16_int`, the project's binding in
   libtvm_wheels_cutlass): fp16 activations x int8 weights with per-column scales, the weights
   prepared by `cutlass.ft_preprocess_weight`; checked against numpy, timed;
2. flash attention through TVM's CUTLASS BYOC (`partition_for_cutlass`, libflash_attn; the
   kernel glue is compiled with nvcc, the wheel's `cutlass` extra); checked against numpy, timed;
3. ResNet-50 FP16 (tools/models/resnet50, batch 1, NHWC), compiled by TVM's CUDA pipeline with
   and without the CUTLASS offload of its convolutions; checked against each other, timed;
4. the same ResNet-50 with the official apache-tvm 0.26.0 wheel's CUDA path, when a Python with
   that wheel is named (--official-python).

It runs in the Python it is started with, which must have the cuda-cutlass wheel installed
(`pip install "apache_tvm-0.26.0+cu130-...whl[cutlass]" onnx`). Without a GPU (--compile-only) it
compiles and exports everything and runs nothing: the check that the script itself works.

    python bench/gpu/run.py [--arch sm_90a] [--official-python PY] [--out bench/results/gpu.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))  # tools/models: the workload models


def _timed(fn, sync, repeat: int) -> float:
    """Median milliseconds of fn() over `repeat` runs, after one warm-up; sync waits for the GPU."""
    fn()
    sync()
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        sync()
        runs.append((time.perf_counter() - start) * 1e3)
    return float(np.median(runs))


def fpa_intb_gemm(args, dev) -> dict:
    import tvm
    import tvm_ffi

    m, n, k = 16, 4096, 4096
    rng = np.random.default_rng(0)
    x = rng.standard_normal((m, k)).astype("float16")
    w = rng.integers(-127, 128, (k, n), dtype=np.int8)
    scale = (rng.random(n) * 0.01 + 0.001).astype("float16")
    ref = x.astype("float32") @ (w.astype("float32") * scale.astype("float32"))
    sm = int(args.arch.removeprefix("sm_").rstrip("a"))
    packed = tvm_ffi.get_global_func("cutlass.ft_preprocess_weight")(tvm.runtime.tensor(w), sm, False)
    row = {"what": "fpA_intB GEMM fp16 x int8 (per-column scale)", "shape": [m, n, k]}
    if dev is None:
        row["preprocessed_bytes"] = int(np.prod(packed.shape))
        return row
    gemm = tvm_ffi.get_global_func("fastertransformer.gemm_fp16_int")
    xs, ws, ss = (tvm.runtime.tensor(a, dev) for a in (x, packed.numpy(), scale))
    out = tvm.runtime.empty((m, n), "float16", dev)

    def call():
        gemm(xs, ws, ss, "identity", m, n, k, k, out)

    row["ms"] = _timed(call, dev.sync, args.repeat)
    row["max_abs_err"] = float(np.abs(out.numpy().astype("float32") - ref).max())
    row["max_abs_ref"] = float(np.abs(ref).max())
    row["ok"] = row["max_abs_err"] <= 2e-2 * row["max_abs_ref"]
    return row


def _relax_vm(mod, args, work: Path, name: str, cutlass: bool):
    """Compile mod for the GPU (CUTLASS offload first if asked), export it; the VM if a GPU is here."""
    import tvm
    from tvm import relax

    sm = int(args.arch.removeprefix("sm_").rstrip("a"))
    target = tvm.target.Target({"kind": "cuda", "arch": args.arch}, host="llvm")
    started = time.perf_counter()
    offloaded = 0
    if cutlass:
        from tvm.relax.backend.cuda.cutlass import partition_for_cutlass

        mod = partition_for_cutlass(mod)
        offloaded = sum(1 for _, f in mod.functions_items() if f.attrs and f.attrs.get("Codegen") == "cutlass")
        mod = relax.transform.RunCodegen({"cutlass": {"sm": sm, "find_first_valid": True}})(mod)
    ex = tvm.compile(mod, target)
    compile_s = time.perf_counter() - started
    path = work / f"{name}.so"
    ex.export_library(str(path))
    return path, compile_s, offloaded


def _run_vm(path: Path, dev, inputs, args) -> tuple[np.ndarray, float]:
    import tvm
    from tvm import relax

    vm = relax.VirtualMachine(tvm.runtime.load_module(str(path)), dev)
    xs = [tvm.runtime.tensor(a, dev) for a in inputs]
    out = vm["main"](*xs)
    ms = _timed(lambda: vm["main"](*xs), dev.sync, args.repeat)
    return out.numpy(), ms


def flash_attention(args, dev, work: Path) -> dict:
    from tvm import relax
    from tvm.script import relax as R

    b, s, n, h = 4, 1024, 16, 64
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((b, s, n, h)).astype("float16") * 0.5 for _ in range(3))
    bb = relax.BlockBuilder()
    vs = [relax.Var(name, R.Tensor((b, s, n, h), "float16")) for name in "qkv"]
    with bb.function("main", vs):
        with bb.dataflow():
            out = bb.emit_output(relax.op.nn.attention(*vs))
        bb.emit_func_output(out)
    path, compile_s, _ = _relax_vm(bb.get(), args, work, "attention", cutlass=True)
    row = {"what": "attention (CUTLASS BYOC: flash attention)", "shape": [b, s, n, h], "compile_s": compile_s}
    if dev is None:
        return row
    got, row["ms"] = _run_vm(path, dev, [q, k, v], args)
    qf, kf, vf = (a.astype("float32").transpose(0, 2, 1, 3) for a in (q, k, v))
    p = qf @ kf.transpose(0, 1, 3, 2) / np.sqrt(h)
    p = np.exp(p - p.max(-1, keepdims=True))
    ref = ((p / p.sum(-1, keepdims=True)) @ vf).transpose(0, 2, 1, 3)
    row["max_abs_err"] = float(np.abs(got.astype("float32") - ref).max())
    row["ok"] = row["max_abs_err"] <= 1e-2
    return row


def resnet50_fp16(args, dev, work: Path, engine: str) -> dict:
    """engine: "tvm-wheels" (with and without CUTLASS) or "official" (TVM's own pipeline only)."""
    from models import resnet50
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx

    mod = from_onnx(resnet50.build(), keep_params_in_input=False)
    mod = relax.transform.ConvertLayout({"relax.nn.conv2d": ["NHWC", "OHWI"]})(mod)
    mod = relax.transform.ToMixedPrecision(out_dtype="float16")(mod)
    x = resnet50.sample_input()
    rows = []
    for cutlass in ([False, True] if engine == "tvm-wheels" else [False]):
        path, compile_s, offloaded = _relax_vm(mod, args, work, f"resnet50_{engine}_{cutlass}", cutlass)
        row = {"what": f"ResNet-50 FP16 batch 1, {engine}" + (", CUTLASS offload" if cutlass else ", TVM CUDA pipeline"),
               "compile_s": compile_s, "cutlass_functions": offloaded}
        if dev is not None:
            out, row["ms"] = _run_vm(path, dev, [x], args)
            row["output"] = out.astype("float32").ravel()[:1000].tolist()
        rows.append(row)
    if dev is not None and len(rows) == 2:  # the offload computes what TVM's own kernels compute
        a, b = (np.array(r.pop("output")) for r in rows)
        rows[1]["max_abs_diff_vs_tvm"] = float(np.abs(a - b).max())
        rows[1]["ok"] = rows[1]["max_abs_diff_vs_tvm"] <= 5e-2 * max(1.0, float(np.abs(a).max()))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arch", default="sm_90a", help="CUDA arch to compile for (the H100/H200: sm_90a)")
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--compile-only", action="store_true", help="no GPU: compile and export, run nothing")
    parser.add_argument("--official-python", help="a Python with the official apache-tvm 0.26.0 wheel")
    parser.add_argument("--engine", default="tvm-wheels", choices=["tvm-wheels", "official"], help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "gpu.json")
    args = parser.parse_args(argv)

    import tvm

    dev = None if args.compile_only else tvm.cuda(0)
    if dev is not None and not dev.exist:
        print("bench/gpu: no CUDA device here; use --compile-only to check the compile side", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.engine == "official":  # a child run in the official wheel's Python: ResNet-50 only
            print(json.dumps(resnet50_fp16(args, dev, work, "official")))
            return 0
        rows = [fpa_intb_gemm(args, dev), flash_attention(args, dev, work), *resnet50_fp16(args, dev, work, "tvm-wheels")]
        if args.official_python:
            cmd = [args.official_python, __file__, "--engine", "official", "--arch", args.arch,
                   "--repeat", str(args.repeat), *(["--compile-only"] if args.compile_only else [])]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
            rows += json.loads(out.strip().splitlines()[-1])
    result = {"machine": platform.node(), "device": None if dev is None else tvm.cuda(0).device_name,
              "arch": args.arch, "tvm": tvm.__version__, "compile_only": args.compile_only, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    for row in rows:
        print(json.dumps(row))
    return 0 if all(r.get("ok", True) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
