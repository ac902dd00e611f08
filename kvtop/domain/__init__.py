"""The pure core: frozen values and functions over them (stdlib + pydantic only)."""
