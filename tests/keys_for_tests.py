"""Fixed random link keys for tests (64 hex digits, as ``freelook keys new`` writes them):
strong by the key check, and the same every run."""

from __future__ import annotations

from pathlib import Path

KEY_A = "76d6fd6e4b311bf0119e972a2e501b747a54dd2fa90e754537d1795b4b2611e3"
KEY_B = "8ffa3022425e61dff9641e2d9e416b1288d79ed9a9217bfeb1360afe9ec63736"
KEY_C = "66bf775ee3e79c9e6008791532bb462ea5636ce561b6c227b3bf8a3c8c91f339"
KEY_D = "c0abf1f734322c0ce516a6e23ec2979ccbb8be2da95bdd81af4e318d97d15ffe"
KEY_E = "ed6be8b8a23bbf0899176e35c28fb3b1f06d2d79a00bebef5226b0bb306072fe"
KEY_F = "90d9809e2dcff9b9ce6664f714149f2a7e54cfe815b6f99a7139f199018e2329"
KEY_G = "1e05d87fef84adefca8c6a64178703cdb42e02a5f081157f541d59bb4b47fede"


def write_keys_file(path: Path, text: str) -> Path:
    """``text`` written to ``path`` readable by its owner only, as a keys file must be."""
    path.write_text(text)
    path.chmod(0o600)
    return path
