"""The compile path behind `tvm_wheels.compile`: TVM's Relax pipeline with this project's
rewrites (rewrites), schedules from tuning records, carried-over traces and MetaSchedule's rules
(schedules, records, measure, fast_math), and `tvm-wheels tune` (tuning). Loaded only when
used: nothing here runs at `import tvm`.
"""
