"""Headless subcommands, one module each; `kvtop.cli` wires them together."""
