"""The transformer corpus: six families beyond BERT and GPT-2 (tools/export_corpus.py says what
each brings), each exported by torch from `transformers` with random weights, at a static
shape and with its axes symbolic. tvm_wheels.compile in the cpu wheel compiles every one
without raising, and its outputs match onnxruntime's at the exported shape and, for the
dynamic exports, at shorter and longer sequences and a batch of two, from one compile. Tier 1
runs the dynamic exports, tier 2 the static ones too.

T5's relative positions and LLaMA's dynamic rotary embedding stop TVM 0.26's ONNX importer,
in the official wheel as well: patches/0004-*.patch mends both, and these tests are where it
shows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest
from export_corpus import FAMILIES, STATIC_ONLY

pytestmark = pytest.mark.wheel
CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"

# In the wheel's venv: one compile, run at every input of the npz whose key is in $KEYS; the
# outputs saved beside, the report and the warning lines printed.
RUN = """
import json, logging, os, numpy as np, tvm, tvm_wheels
from tvm import relax
from tvm_wheels.compiler import pipeline
warnings = []
class Lines(logging.Handler):
    def emit(self, record):
        if record.levelno >= logging.WARNING:
            warnings.append(record.getMessage())
logging.getLogger("tvm_wheels").addHandler(Lines())
report = []
ex = tvm_wheels.compile(pipeline.from_onnx(os.environ["MODEL"]), report=report)
vm = relax.VirtualMachine(ex, tvm.cpu())
inputs = np.load(os.environ["INPUTS"])
np.savez(os.environ["OUT"], **{k: vm["main"](tvm.runtime.tensor(inputs[k])).numpy() for k in os.environ["KEYS"].split(",")})
print(json.dumps({"report": [[e.function, e.source] for e in report], "warnings": warnings}))
"""


def test_every_family_is_there():
    """The exported files are those tools/export_corpus.py writes: nothing missing, nothing stale."""
    expected = {f"{f}{s}" for f in FAMILIES for s in (".onnx", "_dynamic.onnx", ".npz")}
    expected |= {f"{f}{s}" for f in STATIC_ONLY for s in (".onnx", ".npz")}
    assert {p.name for p in CORPUS.iterdir()} == expected


def _compiled_and_compared(venv, tmp_path, path: Path, keys: list[str]) -> dict:
    """RUN in `venv` on the model at `path`, at each key of its family's npz; each output
    checked against onnxruntime's on the same file. RUN's result (report and warnings)."""
    npz = CORPUS / f"{path.stem.removesuffix('_dynamic')}.npz"
    result = venv.json(RUN, env={"MODEL": str(path), "INPUTS": str(npz), "OUT": str(tmp_path / "out.npz"),
                                 "KEYS": ",".join(keys)})
    arrays, got = np.load(npz), np.load(tmp_path / "out.npz")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for key in keys:
        expected = session.run(None, {key.split("@")[0]: arrays[key]})[0]
        assert got[key].shape == expected.shape, key
        np.testing.assert_allclose(got[key], expected, rtol=1e-3, atol=1e-4 * float(np.abs(expected).max()),
                                   err_msg=f"{path.name} at {key}")
    return result


# tier 1 runs the dynamic exports (each also at its static size); tier 2 adds the static ones,
# whose path every other compile test takes too
@pytest.mark.parametrize("dynamic", [pytest.param(False, marks=pytest.mark.tier2), True], ids=["static", "dynamic"])
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family_compiles_and_matches_onnxruntime(cpu_venv, tmp_path, family, dynamic):
    path = CORPUS / f"{family}{'_dynamic' if dynamic else ''}.onnx"
    keys = [k for k in np.load(CORPUS / f"{family}.npz").files if dynamic or "@" not in k]  # name@<batch>x<length>: other shapes
    result = _compiled_and_compared(cpu_venv, tmp_path, path, keys)
    assert result["report"], "no function went through the scheduler"
    # what could not be scheduled is said once per function, with its reason, never silently
    unscheduled = [f for f, source in result["report"] if source.startswith("unscheduled")]
    assert len([w for w in result["warnings"] if "default lowering" in w]) <= len(unscheduled), result
    assert not any("default pipeline" in w for w in result["warnings"]), result["warnings"]


def test_swin_imports_with_the_importer_patch_compiles_and_matches_onnxruntime(cpu_venv, tmp_path):
    """Swin as torch's legacy exporter writes it computes F.pad's pads and the attention scale
    from shapes, which TVM 0.26's ONNX importer could not fold ("Reshape expects the input
    tensor to have known shape"), nor could the official wheel's, and whose folded scale then
    crashed TVM's ConvertLayout (a segmentation fault): patches/0005-*.patch. At its static shape
    only: with its batch symbolic, TVM's own tvm.compile returns NaN (export_corpus.STATIC_ONLY)."""
    result = _compiled_and_compared(cpu_venv, tmp_path, CORPUS / "swin.onnx", ["pixel_values"])
    assert not any("default pipeline" in w for w in result["warnings"]), result["warnings"]
    assert sum(not s.startswith("unscheduled") for _, s in result["report"]) >= 20, result["report"]
