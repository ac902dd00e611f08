"""Fakes at the seams: a pynvml module, a process table."""
