"""Size TVM's CPU thread pool to the cores this process may use; `import tvm` runs use_all_cores() first.

When neither TVM_NUM_THREADS nor OMP_NUM_THREADS is set, TVM starts hardware_concurrency() / 2
threads on x86-64 (src/runtime/threading_backend.cc, MaxConcurrency), assuming two hyper-threads
per core. Where cores have one thread each (many cloud VMs, SMT turned off) that leaves half of
them idle: ResNet-50 compiled with the cpu-avx512 wheel's database ran in 87 ms on one thread of
a 2-core host and in 51 ms on two. The pool reads the variable once, when it starts, so it is set
before TVM's native library loads; a value the user set is kept.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

from . import host

VARIABLES = ("TVM_NUM_THREADS", "OMP_NUM_THREADS")  # the ones TVM reads, in its order
set_on_import = False  # whether use_all_cores chose the size (doctor tells the user's setting apart)


def use_all_cores(environ: MutableMapping[str, str] = os.environ) -> None:
    global set_on_import
    if not any(environ.get(v) for v in VARIABLES):
        environ["TVM_NUM_THREADS"] = str(host.physical_cores())
        set_on_import = environ is os.environ
