"""web layer."""

__all__: list[str] = []
