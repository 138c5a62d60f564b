"""control layer."""

__all__: list[str] = []
