"""operator layer."""

__all__: list[str] = []
