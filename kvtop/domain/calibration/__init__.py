"""Figures a plan needs before the engine starts, fitted on a corpus of real startup logs (docs/calibration.md)."""
