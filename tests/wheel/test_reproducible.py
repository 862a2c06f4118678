"""Two builds of the same inputs give byte-identical wheels (runtime variant: the cheap one).

Built from scratch twice (no ccache, no wheel cache), in two build trees at
different paths: SOURCE_DATE_EPOCH, sorted archives and -ffile-prefix-map make
the bytes independent of when and where the build ran.
"""

from __future__ import annotations

import hashlib
import zipfile

import pytest

pytestmark = pytest.mark.wheel


def test_runtime_wheel_builds_byte_identical(tmp_path):
    import wheelhouse

    key, _ = wheelhouse.content_key("runtime", wheelhouse.build_env())
    wheels = []
    for name in ("a", "b"):
        out = tmp_path / f"out-{name}"
        out.mkdir()
        wheels.append(wheelhouse.make_wheel("runtime", out, key=key, build_dir=str(tmp_path / f"build-{name}"),
                                            verbose=False, extra_env={"TVM_WHEELS_CCACHE": "0"}))
    digests = [hashlib.sha256(w.read_bytes()).hexdigest() for w in wheels]
    if digests[0] != digests[1]:
        a, b = (zipfile.ZipFile(w) for w in wheels)
        differ = [n for n in a.namelist() if n not in b.namelist() or a.read(n) != b.read(n)]
        pytest.fail(f"wheels differ in {differ[:10]}")
    assert wheels[0].name == wheels[1].name
