"""experiments layer."""

__all__: list[str] = []
