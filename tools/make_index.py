#!/usr/bin/env python3
"""A PEP 503 simple index per variant (the PyTorch habit), from a folder of built wheels.

    python tools/make_index.py WHEELS_DIR INDEX_DIR

INDEX_DIR/<variant>/apache-tvm/index.html lists that variant's wheels (by the local
version label), so `pip install apache-tvm --index-url <base>/<variant>/` picks it.
INDEX_DIR/apache-tvm-variants.json is the PEP 825 (draft) variant metadata of every variant
label with its properties, the same data as the wheels' .dist-info/variant.json.
INDEX_DIR/variants/apache-tvm/ is the index for variant-aware installers: every wheel, those of
variants with properties under PEP 825 names (`<wheel>-<variant label>.whl`), each version with
its `{name}-{version}-variants.json`.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import json
import shutil
import sys
from pathlib import Path

from packaging.utils import parse_wheel_filename

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
from tvm_wheels import variants  # noqa: E402
from tvm_wheels_build import wheel_variant  # noqa: E402


def build(wheels: Path, index: Path) -> dict[str, list[str]]:
    by_label = {v.label: v for v in variants.table()}
    placed: dict[str, list[str]] = {}
    for whl in sorted(wheels.glob("*.whl")):
        name, version, _, _ = parse_wheel_filename(whl.name)
        variant = by_label[version.local]
        project = index / variant.name / name
        project.mkdir(parents=True, exist_ok=True)
        shutil.copy2(whl, project / whl.name)
        placed.setdefault(variant.name, []).append(whl.name)
    _variant_index(wheels, index / "variants" / "apache-tvm", by_label)
    for variant, files in [*placed.items(), ("variants", None)]:
        if files:
            _links(index / variant / "apache-tvm", files)
        (index / variant / "index.html").write_text(
            '<!DOCTYPE html>\n<html><body>\n<a href="apache-tvm/">apache-tvm</a>\n</body></html>\n')
    (index / "apache-tvm-variants.json").write_text(json.dumps(
        wheel_variant.metadata([by_label[label] for label in sorted(by_label)]), indent=2, sort_keys=True) + "\n")
    return placed


def _links(project: Path, files: list[str]) -> None:
    links = "\n".join(
        f'<a href="{html.escape(f)}#sha256={hashlib.sha256((project / f).read_bytes()).hexdigest()}">'
        f"{html.escape(f)}</a><br>" for f in files)
    (project / "index.html").write_text(f"<!DOCTYPE html>\n<html><body>\n{links}\n</body></html>\n")


def _variant_index(wheels: Path, project: Path, by_label: dict) -> None:
    project.mkdir(parents=True, exist_ok=True)
    files = []
    for whl in sorted(wheels.glob("*.whl")):
        name, version, _, _ = parse_wheel_filename(whl.name)
        variant = by_label[version.local]
        if not variant.properties:  # a plain wheel: listed as it is, the non-variant fallback
            shutil.copy2(whl, project / whl.name)
            files.append(whl.name)
            continue
        labelled = f"{whl.name[:-len('.whl')]}-{variant.label}.whl"
        shutil.copy2(whl, project / labelled)
        meta = f"{whl.name.split('-')[0]}-{whl.name.split('-')[1]}-variants.json"
        (project / meta).write_text(json.dumps(wheel_variant.metadata([variant]), indent=2, sort_keys=True) + "\n")
        files += [labelled, meta]
    _links(project, sorted(files))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("wheels", type=Path, help="a folder of built wheels")
    parser.add_argument("index", type=Path, help="where to write the index")
    args = parser.parse_args()
    print(json.dumps(build(args.wheels, args.index), indent=1))
