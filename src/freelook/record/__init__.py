"""record layer."""

__all__: list[str] = []
