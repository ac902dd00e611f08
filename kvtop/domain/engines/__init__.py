"""Each engine's rules in a package of its own (`sglang/`, `vllm/`), listed by `registry`.

The values every engine exchanges (`MeasuredInputs`, `EngineInputs`, `EngineResult`, the
`EngineRules` protocol) are in `base`; version eras in `versions`. This package imports nothing
on its own, so the registry can be read before any engine is loaded.
"""
