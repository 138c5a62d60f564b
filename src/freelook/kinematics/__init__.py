"""kinematics layer."""

__all__: list[str] = []
