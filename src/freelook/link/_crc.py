"""CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, no final XOR (check 0x29B1).

That is the CRC ``binascii.crc_hqx`` computes (XMODEM's, whose initial value is the caller's),
in C: a capture of a radio is checked at hundreds of megabytes a second, not one.
"""

from __future__ import annotations

import binascii

__all__ = ["crc16_ccitt_false"]


def crc16_ccitt_false(data: bytes | bytearray | memoryview, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE of ``data`` (``crc``: the value to go on from)."""
    return binascii.crc_hqx(data, crc)
