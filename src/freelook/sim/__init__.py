"""sim layer."""

__all__: list[str] = []
