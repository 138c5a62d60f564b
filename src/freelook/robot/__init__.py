"""robot layer."""

__all__: list[str] = []
