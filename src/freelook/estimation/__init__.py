"""estimation layer."""

__all__: list[str] = []
