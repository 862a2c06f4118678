"""tvm-wheels: Apache TVM built as pip wheels for the user's hardware.

This package stays import-light: `import tvm` runs tvm_wheels.guard first,
before any native code of the wheel loads.
"""
