"""Release configuration, checked without Docker: matrix = table, workflow schema, cibuildwheel, index."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tomllib

import pytest

from cmake_script import ROOT
from tvm_wheels import variants

sys.path.insert(0, str(ROOT / "tools"))
import ci_matrix  # noqa: E402
import make_index  # noqa: E402

WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


def test_matrix_is_the_table():
    expected = {(v.name, a) for v in variants.table() if v.supported for a in v.archs}
    assert {(e["variant"], e["arch"]) for e in ci_matrix.matrix()["include"]} == expected


def test_workflow_builds_the_generated_matrix_and_is_schema_valid():
    text = WORKFLOW.read_text()
    assert "python tools/ci_matrix.py" in text and "fromJSON(needs.matrix.outputs.matrix)" in text
    assert "TVM_WHEEL_VARIANT: ${{ matrix.variant }}" in text
    assert "bash .ci/run --full" in text  # the release runs CI tier 2 before it builds
    check = shutil.which("check-jsonschema") or os.path.join(os.path.dirname(sys.executable), "check-jsonschema")
    r = subprocess.run([check, "--builtin-schema", "vendor.github-workflows", str(WORKFLOW)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("variant", [v.name for v in variants.table() if v.supported])
def test_cibuildwheel_builds_one_wheel_per_variant(variant):
    env = dict(os.environ, TVM_WHEEL_VARIANT=variant, CIBW_ARCHS="x86_64")
    r = subprocess.run([sys.executable, "-m", "cibuildwheel", "--platform", "linux", "--print-build-identifiers",
                        str(ROOT)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["cp312-manylinux_x86_64"]


def test_cibuildwheel_repairs_with_the_project_command():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["cibuildwheel"]
    assert cfg["repair-wheel-command"].startswith("python {project}/tools/wheelhouse.py repair")
    assert "--plat manylinux_2_28_" in cfg["repair-wheel-command"]
    assert "TVM_WHEEL_VARIANT" in cfg["environment-pass"]


def test_index_per_variant(tmp_path):
    wheels = tmp_path / "dist"
    wheels.mkdir()
    for label in ("cpu", "avx512", "runtime"):
        (wheels / f"apache_tvm-0.26.0+{label}-py3-none-manylinux_2_28_x86_64.whl").write_bytes(label.encode())
    placed = make_index.build(wheels, tmp_path / "index")
    assert placed == {"cpu": ["apache_tvm-0.26.0+cpu-py3-none-manylinux_2_28_x86_64.whl"],
                      "cpu-avx512": ["apache_tvm-0.26.0+avx512-py3-none-manylinux_2_28_x86_64.whl"],
                      "runtime": ["apache_tvm-0.26.0+runtime-py3-none-manylinux_2_28_x86_64.whl"]}
    page = (tmp_path / "index" / "cpu-avx512" / "apache-tvm" / "index.html").read_text()
    assert 'href="apache_tvm-0.26.0+avx512-py3-none-manylinux_2_28_x86_64.whl#sha256=' in page
    meta = json.loads((tmp_path / "index" / "apache-tvm-variants.json").read_text())
    assert meta["variants"]["avx512"] == {"x86_64": {"level": ["v4"]}}
    assert meta["variants"]["cu130"] == {"nvidia": {"cuda_version_lower_bound": ["13.0"]}}
    assert "cpu" not in meta["variants"]  # no properties: a plain wheel
    assert meta["default-priorities"]["namespace"] == ["nvidia", "x86_64"]
    # for variant-aware installers: PEP 825 file names and the per-version metadata beside them
    variant_index = tmp_path / "index" / "variants" / "apache-tvm"
    labelled = "apache_tvm-0.26.0+avx512-py3-none-manylinux_2_28_x86_64-avx512.whl"
    assert (variant_index / labelled).read_bytes() == b"avx512"
    assert json.loads((variant_index / "apache_tvm-0.26.0+avx512-variants.json").read_text())["variants"] == {
        "avx512": {"x86_64": {"level": ["v4"]}}}
    page = (variant_index / "index.html").read_text()
    assert f'href="{labelled}#sha256=' in page and 'href="apache_tvm-0.26.0+avx512-variants.json#sha256=' in page
    assert 'href="apache_tvm-0.26.0+cpu-py3-none-manylinux_2_28_x86_64.whl#sha256=' in page  # plain fallback


def test_variant_metadata_follows_pep_825_and_refuses_bad_properties():
    from tvm_wheels_build import wheel_variant

    avx = variants.load("cpu-avx512")
    assert wheel_variant.metadata([avx]) == {
        "$schema": wheel_variant.SCHEMA, "default-priorities": {"namespace": ["x86_64"]},
        "variants": {"avx512": {"x86_64": {"level": ["v4"]}}}}
    bad = dataclasses.replace(avx, properties=("x86_64 : level : v4",))
    with pytest.raises(ValueError, match="not a PEP 825 property"):
        wheel_variant.metadata([bad])
