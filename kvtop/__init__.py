"""kvtop: how many tokens of KV cache each GPU rank holds, and where the rest went."""

__version__ = "0.1.0"
