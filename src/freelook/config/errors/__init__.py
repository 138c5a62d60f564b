"""Error models of the built-in robots: how each simulated robot differs from its description."""
