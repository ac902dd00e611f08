"""Each engine's rules in a package of its own (`sglang/`, `vllm/`), listed by `registry`.

The values every engine exchanges (`MeasuredInputs`, `EngineInputs`, `EngineResult`) are in `base`, the
protocols it implements (`EngineRules`…) in `protocols`, the defaults it inherits (`EngineBase`) in
`modules`; version eras in `versions`. This package imports nothing on its own, so the catalogue of
engines can be read before any engine is loaded.
"""
