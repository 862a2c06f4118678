"""tvm-wheels: Apache TVM built as pip wheels for the user's hardware.

This package stays import-light: `import tvm` runs tvm_wheels.guard first,
before any native code of the wheel loads. `tvm_wheels.compile` (compiler.pipeline.compile)
loads TVM only when it is used.
"""


def __getattr__(name):
    if name == "compile":
        from .compiler.pipeline import compile

        return compile
    raise AttributeError(f"module 'tvm_wheels' has no attribute {name!r}")
