"""tvm-wheels: what this TVM wheel is, which variant fits this host.

    tvm-wheels info [--json]       build info of the installed wheel + live checks
    tvm-wheels variants [--json|--markdown]   the variant table
    tvm-wheels select [--json]     the variant (and install command) for this host
    tvm-wheels doctor [--variant V] [--json]   build requirements / installed wheel vs this host;
                                   exit 0 pass, 1 warnings, 2 failures
    tvm-wheels tune MODEL.onnx [--trials N] [--out DIR]   tune a model for this host; later
                                   tvm_wheels.compile calls use the records
                 [--rpc HOST:PORT --key KEY]   measured on a tracker's servers instead
    tvm-wheels rpc-server --tracker HOST:PORT --key KEY [--host ADDR]   serve this machine to a
                                   tracker (TVM's RPC server; trusted networks only)
"""

from __future__ import annotations

import argparse
import json
import sys

from . import buildinfo, host, variants


def _live() -> dict:
    """Facts from the TVM that `import tvm` actually loads."""
    import tvm

    live = {"tvm_version": tvm.__version__, "tvm_path": tvm.__file__}
    try:
        live["llvm_enabled"] = bool(tvm.runtime.enabled("llvm"))
        from tvm.target import codegen

        live["llvm_version"] = str(codegen.llvm_version_major()) if live["llvm_enabled"] else ""
        if live["llvm_enabled"] and buildinfo.load().get("host_target"):
            from . import target
            from .compiler import records

            # what tvm_wheels.compile targets on this CPU, and the databases it schedules from
            default = target.for_compile(None)
            live["default_target"] = str(target.host())
            live["tuning_databases"] = [str(db.path) for db in records.for_target(default)]
    except Exception as e:  # runtime-only wheels have no codegen
        live["llvm_enabled"] = False
        live["llvm_error"] = str(e).splitlines()[0]
    return live


def cmd_info(args) -> int:
    info = dict(buildinfo.load())
    info["live"] = _live()
    if args.json:
        print(json.dumps(info, indent=2, sort_keys=True))
        return 0
    width = max(map(len, info))
    for key, value in info.items():
        if isinstance(value, dict):
            print(f"{key}:")
            for k, v in value.items():
                print(f"  {k:<{width}} {v}")
        else:
            print(f"{key:<{width}} {value}")
    return 0


def markdown_table() -> str:
    """The README's variant table, made from the presets."""
    lines = ["| variant | version label | status | machines | what it is |", "|---|---|---|---|---|"]
    for v in variants.table():
        lines.append(f"| `{v.name}` | `+{v.label}` | {v.status} | {', '.join(v.archs)} | {v.summary} |")
    return "\n".join(lines)


def cmd_variants(args) -> int:
    rows = variants.table()
    if args.markdown:
        print(markdown_table())
        return 0
    if args.json:
        print(json.dumps([dict(vars(v)) for v in rows], indent=2, default=list))
        return 0
    for v in rows:
        print(f"{v.name:<14} +{v.label:<8} {v.status:<10} {','.join(v.archs):<15} {v.summary}")
    return 0


def cmd_select(args) -> int:
    fits = host.fitting_variants()
    if args.json:
        print(json.dumps({"machine": host.machine(), "variants": [v.name for v in fits]}))
        return 0 if fits else 1
    if not fits:
        print(f"no supported variant runs on this {host.machine()} machine", file=sys.stderr)
        return 1
    best = fits[0]
    print(f"{best.name}: {best.summary}")
    print(f"  TVM_WHEEL_VARIANT={best.name} pip install ./")
    others = ", ".join(v.name for v in fits[1:])
    if others:
        print(f"also runs here: {others}")
    return 0


def cmd_doctor(args) -> int:
    from . import doctor

    checks = doctor.run(args.variant)
    if args.json:
        print(json.dumps([vars(c) for c in checks], indent=2))
    else:
        mark = {doctor.PASS: "ok  ", doctor.INFO: "info", doctor.WARN: "warn", doctor.FAIL: "FAIL"}
        for c in checks:
            print(f"[{mark[c.status]}] {c.name}: {c.detail}")
            if c.fix and c.status in (doctor.WARN, doctor.FAIL):
                print(f"       fix: {c.fix}")
    return doctor.exit_code(checks)


# What `tune` imports beyond the wheel's own dependencies (the wheel's [tune] extra).
TUNE_DEPS = {"onnx": "onnx", "psutil": "psutil", "cloudpickle": "cloudpickle", "xgboost": "xgboost-cpu"}


def cmd_tune(args) -> int:
    import importlib.util
    from pathlib import Path

    from .compiler import pipeline, records, tuning
    from .target import for_compile

    if not buildinfo.load().get("host_target"):
        print("tvm-wheels tune: this is the runtime-only wheel; it cannot compile or tune. "
              "Fix: tune with a compiler variant (TVM_WHEEL_VARIANT=cpu pip install ./) and ship the "
              "exported library to this machine", file=sys.stderr)
        return 2
    missing = [pkg for mod, pkg in TUNE_DEPS.items() if importlib.util.find_spec(mod) is None]
    if missing:
        print(f"tvm-wheels tune needs {', '.join(missing)} (MetaSchedule's cost model and workers). "
              f"Fix: pip install {' '.join(missing)}   (or install the wheel with its [tune] extra)",
              file=sys.stderr)
        return 2
    model = Path(args.model)
    if not model.is_file():
        print(f"tvm-wheels tune: no such file: {model}", file=sys.stderr)
        return 2
    if bool(args.rpc) != bool(args.key):
        print("tvm-wheels tune: --rpc and --key go together: the tracker's address and the key its servers "
              "registered under. Fix: --rpc HOST:PORT --key KEY", file=sys.stderr)
        return 2
    from . import target as targets

    target = for_compile(targets.orin() if args.target == "orin" else
                         json.loads(args.target) if args.target else None)
    servers = None
    if args.rpc:
        from . import remote

        try:  # before anything is written: a server that cannot measure stops the tune here
            targets.cross_compiler(target)
            servers = remote.connect(args.rpc, args.key, target)
        except (remote.RemoteError, RuntimeError) as e:
            print(e, file=sys.stderr)
            return 2
    out = Path(args.out) if args.out else records.user_root()
    mod = pipeline.from_onnx(model)
    print(f"tuning {model.name} for {records.target_id(target)} ({target.attrs['num-cores']} cores), "
          f"{args.trials} measured trials per task, into {out / records.target_id(target)}"
          + (f", measured on {servers}" if servers else ""), flush=True)
    tuning.tune(mod, target, out, args.trials, progress=lambda line: print(line, flush=True), servers=servers)
    print("done. tvm_wheels.compile uses these records for this target"
          + ("" if out == records.user_root() else f" when TVM_WHEELS_TUNING_DB={out}")
          + "; run again with a higher --trials to continue from them")
    return 0


def cmd_rpc_server(args) -> int:
    from . import remote

    try:
        remote.serve(args.tracker, args.key, host=args.host, port=args.port, port_end=args.port_end,
                     custom_addr=args.custom_addr)
    except remote.RemoteError as e:
        print(e, file=sys.stderr, flush=True)
        import os

        os._exit(2)  # TVM's listening thread, if it started, is not a daemon: it would keep this process
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tvm-wheels", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, func in (("info", cmd_info), ("variants", cmd_variants), ("select", cmd_select),
                       ("doctor", cmd_doctor)):
        p = sub.add_parser(name)
        p.add_argument("--json", action="store_true")
        p.set_defaults(func=func)
        if name == "variants":
            p.add_argument("--markdown", action="store_true", help="the README table")
        if name == "doctor":
            p.add_argument("--variant", default=None, help="the variant to check for (default: $TVM_WHEEL_VARIANT; "
                           "outside a source tree the installed wheel's; else cpu)")
    tune = sub.add_parser("tune", help="tune an ONNX model's operators for this host with MetaSchedule")
    tune.add_argument("model", help="ONNX file (static shapes)")
    tune.add_argument("--trials", type=int, default=16,
                      help="measured trials per task (total; records already in the database count)")
    tune.add_argument("--out", default=None,
                      help="database root (default: $TVM_WHEELS_TUNING_DB or ~/.cache/tvm-wheels/tuning)")
    tune.add_argument("--target", default=None, help='target as JSON (default: the variant\'s, e.g. '
                      '\'{"kind": "llvm", "mcpu": "x86-64-v4"}\'), or orin (tvm_wheels.target.orin())')
    tune.add_argument("--rpc", default=None, metavar="HOST:PORT",
                      help="measure on the servers of this RPC tracker (python -m tvm.exec.rpc_tracker) instead of here")
    tune.add_argument("--key", default=None, help="with --rpc: the key the servers registered under")
    tune.set_defaults(func=cmd_tune)
    server = sub.add_parser("rpc-server", help="TVM's RPC server for a tracker: runs the code it is sent, "
                            "so trusted networks only")
    server.add_argument("--tracker", default=None, metavar="HOST:PORT", help="register at this tracker")
    server.add_argument("--key", required=True, help="the key clients ask the tracker for (e.g. orin, x86-v4)")
    server.add_argument("--host", default="127.0.0.1",
                        help="the address to listen on (default: loopback only; a device on a network: its address)")
    server.add_argument("--port", type=int, default=9090, help="first port to try")
    server.add_argument("--port-end", type=int, default=None, help="the first port not to try (default: --port + 100)")
    server.add_argument("--custom-addr", default=None, help="the address the tracker gives clients, if not --host's")
    server.set_defaults(func=cmd_rpc_server)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except variants.UnknownVariant as e:
        print(e, file=sys.stderr)
        return 2
    except buildinfo.NotBuilt as e:
        print(e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
