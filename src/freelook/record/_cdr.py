"""Chosen fields of CDR messages, at offsets worked out from their ``ros2msg`` definitions.

A report reads a few numbers from each of a long run's many small messages (link packets,
odometry, commands). Decoding every message whole is the slow part of reading, so
:class:`CdrFields` reads only the fields asked for: from the definition a recording carries
for its schema (the one the recorder wrote, see ``_schemas.py``) it lays the message out as
runs of fixed-size fields between strings, and reads each run with one ``struct`` unpack (the
fields not asked for as pad bytes). A run's layout depends on where it starts modulo 8 (CDR
aligns every field to its size from the start of the body), so a layout is made once per
start a run is met at.

Sequences (``T[]``) are supported only after the last field asked for; a field the definition
does not have (an older recording) reads as its default.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["CdrFields", "parse_definition"]

#: ros2msg primitive → (struct code, size); CDR aligns each to its size
_PRIMITIVES: dict[str, tuple[str, int]] = {
    "bool": ("?", 1),
    "byte": ("B", 1),
    "char": ("B", 1),
    "int8": ("b", 1),
    "uint8": ("B", 1),
    "int16": ("h", 2),
    "uint16": ("H", 2),
    "int32": ("i", 4),
    "uint32": ("I", 4),
    "int64": ("q", 8),
    "uint64": ("Q", 8),
    "float32": ("f", 4),
    "float64": ("d", 8),
}
_SEPARATOR = re.compile(r"^={10,}\s*$", re.MULTILINE)
#: type (a bounded string's bound dropped), array part, its size, name; a default may follow
_FIELD = re.compile(r"^([A-Za-z0-9_/]+)(?:<=\d+)?(\[(?:<=)?(\d*)\])?\s+([A-Za-z0-9_]+)(?:\s.*)?$")
_U32 = struct.Struct("<I")


def parse_definition(text: str) -> dict[str, list[tuple[str, str]]]:
    """The fields (type, name) of the first message in a concatenated ``ros2msg`` definition
    (under the key ``""``) and of each ``MSG: pkg/Type`` after it; constants are left out."""
    types: dict[str, list[tuple[str, str]]] = {}
    for index, block in enumerate(_SEPARATOR.split(text)):
        lines = block.strip().splitlines()
        name = ""
        if index > 0:
            if not lines or not lines[0].startswith("MSG:"):
                raise ValueError(f"definition block {index} does not start with MSG:")
            name, lines = lines[0][4:].strip(), lines[1:]
        fields = []
        for line in lines:
            line = line.split("#", 1)[0].strip()
            if not line or "=" in line.split(None, 1)[-1]:
                continue  # a blank line, a comment, or a constant (NAME=VALUE)
            match = _FIELD.match(line)
            if match is None:
                raise ValueError(f"not a field definition: {line!r}")
            typename, array, count, fieldname = match.groups()
            fields.append((typename + ("" if array is None else f"[{count}]"), fieldname))
        types[name] = fields
    return types


@dataclass(frozen=True, slots=True)
class _Fixed:
    code: str
    size: int
    wanted: bool


def _layouts(run: list[_Fixed]) -> tuple[struct.Struct, ...]:
    """The ``struct`` that reads a run of fixed-size fields from each body offset modulo 8
    (fields not asked for as pad bytes)."""
    layouts = []
    for start in range(8):
        codes, pos = ["<"], start
        for f in run:
            pad = -pos % f.size
            codes.append("x" * pad + (f.code if f.wanted else "x" * f.size))
            pos += pad + f.size
        layouts.append(struct.Struct("".join(codes)))
    return tuple(layouts)


class CdrFields:
    """Reads the fields named ``paths`` (dotted, e.g. ``pose.pose.position.x``) of messages of
    the schema ``name`` (``pkg/Type``) defined by ``definition`` (its concatenated
    ``ros2msg`` text); a field the definition lacks reads as its entry in ``defaults``, else 0.
    """

    def __init__(
        self,
        name: str,
        definition: str,
        paths: Sequence[str],
        defaults: Mapping[str, Any] | None = None,
    ) -> None:
        self._types = parse_definition(definition)
        self._wanted = set(paths)
        self._found: list[str] = []  # the fields asked for, in the order they are read
        self._steps: list[list[_Fixed] | bool] = []  # a run of fields, or a string (wanted?)
        self._flatten(self._types[""], "", name.partition("/")[0])
        missing = [path for path in paths if path not in self._found]
        self._defaults = tuple((defaults or {}).get(path, 0) for path in missing)
        read_order = self._found + missing
        order = tuple(read_order.index(path) for path in paths)
        self._order = None if order == tuple(range(len(paths))) else order
        #: per step: the run's layouts by start modulo 8, or None for a string, and whether
        #: the string is asked for
        self._plan = tuple(
            (None, step) if isinstance(step, bool) else (_layouts(step), False)
            for step in self._steps
        )

    def _flatten(self, fields: list[tuple[str, str]], prefix: str, package: str) -> None:
        for typename, name in fields:
            if len(self._found) == len(self._wanted):
                return  # everything asked for is placed: the rest is never read
            path = prefix + name
            base, _, array = typename.partition("[")
            count = array.rstrip("]")
            if array and not count:
                raise ValueError(f"{path}: a sequence before the last field asked for")
            for k in range(int(count) if count else 1):
                self._place(base, f"{path}[{k}]" if count else path, package)

    def _place(self, base: str, path: str, package: str) -> None:
        wanted = path in self._wanted
        if wanted and (base == "string" or base in _PRIMITIVES):
            self._found.append(path)
        if base == "string":
            self._steps.append(wanted)
        elif base in _PRIMITIVES:
            if not self._steps or isinstance(self._steps[-1], bool):
                self._steps.append([])
            run = self._steps[-1]
            assert isinstance(run, list)
            run.append(_Fixed(*_PRIMITIVES[base], wanted))
        else:
            nested = _resolve(self._types, base, package)
            self._flatten(self._types[nested], path + ".", nested.partition("/")[0])

    def read(self, data: bytes) -> tuple[Any, ...]:
        """The asked-for fields of one message's CDR bytes, in the order asked."""
        values: tuple[Any, ...] = ()
        pos = 0  # in the body, after the 4-byte encapsulation header
        for layouts, wanted in self._plan:
            if layouts is None:
                pos += -pos % 4
                (n,) = _U32.unpack_from(data, pos + 4)
                if wanted:
                    values += (data[pos + 8 : pos + 7 + n].decode(),)
                pos += 4 + n
            else:
                layout = layouts[pos % 8]
                values += layout.unpack_from(data, pos + 4)
                pos += layout.size
        values += self._defaults
        return values if self._order is None else tuple(values[i] for i in self._order)


def _resolve(types: dict[str, list[tuple[str, str]]], name: str, package: str) -> str:
    """``pkg/Type`` as the definition names it: ``Header`` is ``std_msgs/Header``, another
    bare name is in the package of the message that uses it."""
    if "/" in name:
        candidates = [name, name.replace("/msg/", "/")]
    elif name == "Header":
        candidates = ["std_msgs/Header"]
    else:
        candidates = [f"{package}/{name}"]
    for candidate in candidates:
        if candidate in types:
            return candidate
    raise ValueError(f"the definition has no {name!r}")
