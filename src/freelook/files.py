"""Files a user names (robot descriptions, keys, maps, recordings, captures): regular files
only, of bounded size.

A FIFO, a device or a directory given where a file belongs would hang a reader or feed it
without end, so each is refused when it is opened (without blocking: the check and the read
use one descriptor). Refusals are ``OSError``s with ``strerror`` set, so every caller's
existing "cannot read" message names them.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

__all__ = ["ensure_regular", "read_regular"]


def _open_regular(path: str | Path) -> int:
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(mode) else "a FIFO, device or socket"
        raise OSError(errno.EINVAL, f"not a regular file ({kind})", str(path))
    return fd


def ensure_regular(path: str | Path) -> None:
    """Raise ``OSError`` unless ``path`` is a regular file that can be opened for reading."""
    os.close(_open_regular(path))


def read_regular(path: str | Path, max_bytes: int) -> bytes:
    """The whole of a regular file of at most ``max_bytes``; ``OSError`` otherwise."""
    fd = _open_regular(path)
    with os.fdopen(fd, "rb") as stream:
        data = stream.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise OSError(errno.EFBIG, f"larger than {max_bytes} bytes", str(path))
    return data
