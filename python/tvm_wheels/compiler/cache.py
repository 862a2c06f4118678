"""What a compile chose for each function, kept so that the next compile of it is a lookup.

Carrying a trace over (`anchor`, `similar`) or sampling the rules, and timing the candidates,
is most of a compile's time; a second compile of the same model chose the same again. Each
choice is kept here: the scheduled PrimFunc and its report entry, under the function's
structural hash, in a directory keyed by everything that decides it, so that a choice made by
another TVM, tvm-ffi or code of this package, for another target, or with other tuning records,
is never applied:

    $TVM_WHEELS_COMPILE_CACHE (default ~/.cache/tvm-wheels/compiled)
        <TVM>-<tvm-ffi>-<this package's compiler code>/<target id>-<the databases' state>/<hash>.json

TVM_WHEELS_COMPILE_CACHE=off turns it off. An entry that does not load, or whose function is
not the one compiled (a hash collision), is ignored and chosen again: the cache never fails a
compile. Records of a database are not kept here: looking them up is already cheap.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

from . import records

log = logging.getLogger("tvm_wheels.cache")
ENV = "TVM_WHEELS_COMPILE_CACHE"


def root() -> Path | None:
    env = os.environ.get(ENV)
    if env and env.lower() in ("off", "0", "no", "false"):
        return None
    if env:
        return Path(env)
    return records.cache_home() / "compiled"


@functools.lru_cache(maxsize=1)
def _code() -> str:
    """TVM's and tvm-ffi's versions and a digest of the code that makes the choices (this folder)."""
    import tvm
    import tvm_ffi

    digest = hashlib.sha256()
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return f"{tvm.__version__}-ffi{tvm_ffi.__version__}-{digest.hexdigest()[:16]}"


def _databases(databases) -> str:
    """The state of the tuning records a choice was made beside: a record added changes it."""
    digest = hashlib.sha256()
    for db in databases:
        for name in ("database_workload.json", "database_tuning_record.json"):
            path = Path(db.path) / name
            stat = path.stat() if path.exists() else None
            digest.update(f"{path}:{stat.st_size if stat else -1}:{stat.st_mtime_ns if stat else -1}\n".encode())
    return digest.hexdigest()[:16]


def path(work, target, databases) -> Path | None:
    """Where the choice for `work` is kept (None: the cache is off). Computed once per function:
    it hashes the function and reads the databases' state."""
    import tvm_ffi

    base = root()
    if base is None:
        return None
    return (base / _code() / f"{records.target_id(target)}-{_databases(databases)}"
            / f"{tvm_ffi.structural_hash(work) & (2**64 - 1):016x}.json")


def load(path: Path | None, work):
    """(scheduled PrimFunc or None, Entry fields) kept for `work` at `path` (path()), or None."""
    import tvm
    import tvm_ffi

    if path is None or not path.exists():
        return None
    try:
        kept = json.loads(path.read_text())
        if not tvm_ffi.structural_equal(tvm.ir.load_json(kept["workload"]), work):
            return None
        scheduled = tvm.ir.load_json(kept["scheduled"]) if kept["scheduled"] else None
        return scheduled, kept["entry"]
    except Exception as e:  # noqa: BLE001  anything unreadable is chosen again
        log.debug("compile cache: %s not used: %s", path, str(e).strip().splitlines()[-1:] or e)
        return None


def store(path: Path | None, work, scheduled, entry: dict) -> None:
    """Keep a choice at `path` (path()); a cache that cannot be written is no error (the next
    compile chooses again)."""
    import tvm

    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"workload": tvm.ir.save_json(work), "entry": entry,
                           "scheduled": tvm.ir.save_json(scheduled) if scheduled is not None else None})
        with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False) as f:
            f.write(text)
        os.replace(f.name, path)  # whole or not at all: another compile may read it meanwhile
    except Exception as e:  # noqa: BLE001
        log.debug("compile cache: %s not written: %s", path, e)
