"""Fuzzing every outside input through the CLI's own entry points (issue #17).

`atoms` holds the values and document mutations every kind shares, `runner` runs one input under a
watchdog and sorts the outcome, `text` mangles logs and pages line by line, and `kinds_*` build
one kind of input each. The CI tests (`test_fuzz_inputs.py`) and `benchmarks/fuzz_inputs.py`
draw from the same strategies.
"""
