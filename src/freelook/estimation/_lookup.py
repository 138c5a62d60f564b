"""The likelihood field's bilinear lookup for one beam, eight particles at a time.

A particle filter's time is its lookups: each beam's end point, placed by each particle's pose,
read from the tabulated log-likelihood between the four nearest cell centres. LLVM does not
vectorise that loop by itself (it will not gather from the table), so :func:`lookup_lanes` is
written out as vector instructions: the end points, their cells and weights for eight particles
at once, each row's two neighbouring cells fetched in one 64-bit gather, and the same arithmetic
in the same order as one particle at a time, so every score is the same to the bit. Where the
processor has no gather, LLVM turns it into single loads, with the same results.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from llvmlite import ir
from numba import types
from numba.core import cgutils as _cgutils
from numba.extending import intrinsic

__all__ = ["LANES", "lookup_lanes"]

cgutils: Any = _cgutils  # numba's code-generation helpers carry no annotations

#: particles scored together; arrays handed to :func:`lookup_lanes` hold whole groups of them
LANES = 8

_F64 = ir.DoubleType()
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_DOUBLES = ir.VectorType(_F64, LANES)
_FLOATS = ir.VectorType(ir.FloatType(), LANES)
_INTS = ir.VectorType(_I32, LANES)
_LONGS = ir.VectorType(_I64, LANES)
_MASK = ir.VectorType(ir.IntType(1), LANES)
_POINTERS = ir.VectorType(ir.PointerType(), LANES)


def _splat(builder: ir.IRBuilder, value: ir.Value, vector: ir.VectorType) -> ir.Value:
    """``value`` in every lane."""
    undef = ir.Constant(vector, ir.Undefined)
    first = builder.insert_element(undef, value, ir.Constant(_I32, 0))
    zeros = ir.Constant(ir.VectorType(_I32, LANES), [0] * LANES)
    return builder.shuffle_vector(first, undef, zeros)


def _lanes(vector: ir.VectorType, value: float | int) -> ir.Constant:
    return ir.Constant(vector, [value] * LANES)


def _lookup_lanes_typed(
    typingctx: Any,
    total: Any,
    gx0: Any,
    gy0: Any,
    cos: Any,
    sin: Any,
    first: Any,
    ax: Any,
    ay: Any,
    table: Any,
    rows: Any,
    cols: Any,
    outside: Any,
) -> Any:
    """The intrinsic's typing and its code (over 80 lines: one unit, the generator closes
    over the argument types it checks)."""
    vectors = (total, gx0, gy0, cos, sin)
    if not all(
        isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C" and a.dtype == types.float64
        for a in vectors
    ):
        return None
    if not (
        isinstance(table, types.Array)
        and table.ndim == 2
        and table.layout == "C"
        and table.dtype == types.float32
    ):
        return None
    signature = types.void(
        total, gx0, gy0, cos, sin, types.intp, types.float64, types.float64, table, types.intp,
        types.intp, types.float64,
    )  # fmt: skip

    def codegen(context: Any, builder: ir.IRBuilder, sig: Any, args: Any) -> Any:
        total_a, gx0_a, gy0_a, cos_a, sin_a, p, ax, ay, table_a, rows, cols, outside = args

        def data(index: int, array: ir.Value) -> ir.Value:
            return cgutils.create_struct_proxy(sig.args[index])(context, builder, value=array).data

        def lanes_at(index: int, array: ir.Value) -> ir.Value:
            element = builder.gep(data(index, array), [p], source_etype=_F64)
            return builder.bitcast(element, _DOUBLES.as_pointer())

        there = lanes_at(0, total_a)
        gx0_v, gy0_v, c, s = (
            builder.load(lanes_at(k, a), align=8)
            for k, a in ((1, gx0_a), (2, gy0_a), (3, cos_a), (4, sin_a))
        )
        ax_v, ay_v = _splat(builder, ax, _DOUBLES), _splat(builder, ay, _DOUBLES)
        # the end point in table coordinates: gx0 + c·ax − s·ay, gy0 + s·ax + c·ay
        gx = builder.fsub(builder.fadd(gx0_v, builder.fmul(c, ax_v)), builder.fmul(s, ay_v))
        gy = builder.fadd(builder.fadd(gy0_v, builder.fmul(s, ax_v)), builder.fmul(c, ay_v))
        floor = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(_DOUBLES, [_DOUBLES]), "llvm.floor.v8f64"
        )
        fj, fi = builder.call(floor, [gx]), builder.call(floor, [gy])
        # within the table's cell centres (a NaN is not): the four cells exist
        last_col = builder.sitofp(builder.sub(cols, ir.Constant(_I64, 1)), _F64)
        last_row = builder.sitofp(builder.sub(rows, ir.Constant(_I64, 1)), _F64)
        zero = _lanes(_DOUBLES, 0.0)
        inside = builder.and_(
            builder.and_(
                builder.fcmp_ordered(">=", fi, zero),
                builder.fcmp_ordered("<", fi, _splat(builder, last_row, _DOUBLES)),
            ),
            builder.and_(
                builder.fcmp_ordered(">=", fj, zero),
                builder.fcmp_ordered("<", fj, _splat(builder, last_col, _DOUBLES)),
            ),
        )
        fx, fy = builder.fsub(gx, fj), builder.fsub(gy, fi)
        cols_v = _splat(builder, cols, _LONGS)
        row, col = builder.fptosi(fi, _LONGS), builder.fptosi(fj, _LONGS)
        cell = builder.add(builder.mul(row, cols_v), col)
        origin = _splat(builder, builder.ptrtoint(data(8, table_a), _I64), _LONGS)
        gather = cgutils.get_or_insert_function(
            builder.module,
            ir.FunctionType(_LONGS, [_POINTERS, _I32, _MASK, _LONGS]),
            "llvm.masked.gather.v8i64.v8p0",
        )

        def pair(offset: ir.Value) -> tuple[ir.Value, ir.Value]:
            """A row's two neighbouring cells (float32), widened: the first is the low half."""
            address = builder.add(origin, builder.mul(builder.add(cell, offset), _lanes(_LONGS, 4)))
            pointers = builder.inttoptr(address, _POINTERS)
            both = builder.call(gather, [pointers, ir.Constant(_I32, 4), inside, _lanes(_LONGS, 0)])
            upper = builder.lshr(both, _lanes(_LONGS, 32))
            low = builder.bitcast(builder.trunc(both, _INTS), _FLOATS)
            high = builder.bitcast(builder.trunc(upper, _INTS), _FLOATS)
            return builder.fpext(low, _DOUBLES), builder.fpext(high, _DOUBLES)

        t00, t01 = pair(_lanes(_LONGS, 0))
        t10, t11 = pair(cols_v)
        one = _lanes(_DOUBLES, 1.0)
        # (1 − fy)·((1 − fx)·t00 + fx·t01) + fy·((1 − fx)·t10 + fx·t11)
        near = builder.fadd(builder.fmul(builder.fsub(one, fx), t00), builder.fmul(fx, t01))
        far = builder.fadd(builder.fmul(builder.fsub(one, fx), t10), builder.fmul(fx, t11))
        value = builder.fadd(builder.fmul(builder.fsub(one, fy), near), builder.fmul(fy, far))
        value = builder.select(inside, value, _splat(builder, outside, _DOUBLES))
        builder.store(builder.fadd(builder.load(there, align=8), value), there, align=8)
        return context.get_dummy_value()

    return signature, codegen


#: ``total[first:first + LANES] +=`` the lookups of one beam (``ax, ay``: its end point in the
#: robot frame, in table cells) by the particles whose table coordinates are ``gx0, gy0`` and
#: heading ``cos, sin``; ``outside`` where an end point falls beyond the cell centres. Compiled
#: code only.
lookup_lanes = cast(
    Callable[
        [
            npt.NDArray[np.float64],
            npt.NDArray[np.float64],
            npt.NDArray[np.float64],
            npt.NDArray[np.float64],
            npt.NDArray[np.float64],
            int,
            float,
            float,
            npt.NDArray[np.float32],
            int,
            int,
            float,
        ],
        None,
    ],
    intrinsic(_lookup_lanes_typed),
)
