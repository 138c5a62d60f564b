"""safety layer."""

__all__: list[str] = []
