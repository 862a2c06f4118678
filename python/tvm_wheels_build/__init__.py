"""Build-time code of tvm-wheels: what scikit-build-core and CMake run while a wheel is made.

Not shipped (pyproject.toml's wheel.packages names tvm_wheels only): nothing at run time reads
it. metadata: the version/dependencies provider (pyproject.toml, provider-path = "python");
wheel_variant: the wheel-variant metadata CMake writes into the wheel (cmake/modules/Install.cmake)
and tools/make_index.py writes for an index. Both read the variant table through tvm_wheels.variants
and tvm_wheels.cmakedata, which do ship: `tvm-wheels variants`, `select`, `doctor` and `info`
read the presets at run time.
"""
