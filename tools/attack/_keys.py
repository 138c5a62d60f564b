"""The campaign's key-strength probe, in-process: the keys a user might give (the weak ones a
person types, seeded variations of them, and strong random ones as the control) through the
checks every command applies to ``--key``, ``FREELOOK_LINK_KEY`` and a keys file, and keys
files whose permissions let others read them. An unauthorised effect is a weak key accepted
(by :func:`freelook.link.strong_key` or in a keys file) or a keys file others may read loaded;
a crash is an exception that is not freelook's own error. The control: every strong key is
accepted, so a check that refused everything would be seen.
"""

from __future__ import annotations

import os
import random
import string
import tempfile
from pathlib import Path

from freelook.errors import FreelookError
from tools.attack._tally import Tally

__all__ = ["WEAK_KEYS", "attack_keys"]

#: keys a person types for a link key; each must be refused
WEAK_KEYS = (
    "0" * 64,
    "f" * 64,
    "a" * 28,
    "password" * 4,
    "robot1!" * 4,
    "Aa1!" * 6,
)


def _variants(draw: random.Random, count: int) -> list[str]:
    """Weak keys of the same kinds: a short run of characters repeated to 24 … 64 characters,
    a word repeated, a keyboard walk or a sequence."""
    words = ("password", "robot", "freelook", "letmein", "qwerty", "admin", "dragon")
    walks = ("qwertyuiop", "asdfghjkl", "1234567890", "abcdefghijklmnopqrstuvwxyz")
    out: list[str] = []
    while len(out) < count:
        length = draw.randint(24, 64)
        pick = draw.random()
        if pick < 0.4:
            alphabet = string.ascii_letters + string.digits + "!@#$%"
            unit = "".join(draw.choice(alphabet) for _ in range(draw.randint(1, 4)))
        elif pick < 0.8:
            unit = draw.choice(words) + draw.choice(("", "1", "!", "123", "2026"))
        else:
            unit = draw.choice(walks)
        out.append((unit * (length // len(unit) + 1))[:length])
    return out


def _keys_file(folder: Path, name: str, key: str, mode: int) -> Path:
    path = Path(folder) / name
    path.write_text(f'[stations.1]\nkey = "{key}"\n')
    os.chmod(path, mode)
    return path


def attack_keys(count: int, seed: int) -> Tally:
    """The six weak keys and ``count`` seeded weak variations through ``strong_key`` and a
    keys file (each must be refused), strong keys (each must be accepted), and a strong keys
    file readable or writable by the group or others (each must be refused)."""
    from freelook.link import KeyRing, key_bits, strong_key

    tally = Tally("key strength")
    draw = random.Random(seed)
    weak = [*WEAK_KEYS, *_variants(draw, count)]
    strongest_weak = 0.0
    with tempfile.TemporaryDirectory(prefix="freelook-attack-") as folder:
        for i, key in enumerate(weak):
            kind = "one of the six weak keys" if i < len(WEAK_KEYS) else "weak variation"
            tally.tried(kind)
            try:
                strongest_weak = max(strongest_weak, key_bits(key))
                strong_key(key)
            except FreelookError:
                pass
            except Exception as err:  # not freelook's own error: the check broke
                tally.crash(f"strong_key({key[:16]!r}…): {type(err).__name__}: {err}"[:200])
            else:
                tally.effect(f"the weak key {key!r} was accepted ({key_bits(key):.0f} bits)")
            if i < len(WEAK_KEYS):  # the six in a keys file too (others' variations alike)
                tally.tried("weak key in a keys file")
                path = _keys_file(Path(folder), f"weak{i}.toml", key, 0o600)
                try:
                    KeyRing.load(path)
                except FreelookError:
                    pass
                except Exception as err:
                    tally.crash(f"keys file with {key[:16]!r}…: {type(err).__name__}: {err}")
                else:
                    tally.effect(f"a keys file with the weak key {key!r} was loaded")
        refused_strong = 0
        for i in range(max(4, count // 10)):
            key = draw.randbytes(32).hex()
            tally.tried("strong key (control)")
            try:
                strong_key(key)
            except FreelookError:
                refused_strong += 1
            for mode in (0o640, 0o604, 0o660, 0o666):
                if i:  # the permissions once, with the first strong key
                    break
                tally.tried("keys file others may read or write")
                path = _keys_file(Path(folder), f"open{mode:o}.toml", key, mode)
                try:
                    KeyRing.load(path)
                except FreelookError:
                    pass
                except Exception as err:
                    tally.crash(f"keys file mode {mode:04o}: {type(err).__name__}: {err}")
                else:
                    tally.effect(f"a keys file of mode {mode:04o} was loaded")
            if i == 0:
                tally.tried("private keys file (control)")
                try:
                    KeyRing.load(_keys_file(Path(folder), "private.toml", key, 0o600))
                except FreelookError as err:
                    tally.notes.append(f"a private keys file with a strong key refused: {err}")
                    refused_strong += 1
    strong = tally.kinds["strong key (control)"]
    if refused_strong:
        tally.effect(f"{refused_strong} strong keys refused: the check refuses every key")
    else:
        tally.notes.append(f"all {strong} strong keys and the private keys file accepted")
    tally.notes.append(f"the strongest weak key tried rates {strongest_weak:.0f} bits (128 needed)")
    return tally
