"""link layer."""

__all__: list[str] = []
