"""The outside world: each module owns one outside library or surface."""
