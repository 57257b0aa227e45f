"""Small compiled operations the pattern-database builder's layers share (push
layers in :mod:`.pdb_build`, pull layers in :mod:`.pdb_pull`): atomic OR and ADD
on array elements, unranking a placement's first digits, and carrying a square mask
through a square map."""

from __future__ import annotations

import numba
import numpy as np
from numba.core import cgutils
from numba.extending import intrinsic

from harness import kernels


def atomic_rmw_codegen(op: str):
    """Code for ``array[index] <op>= value`` as one LLVM atomicrmw; returns the
    old value."""

    def codegen(context, builder, signature, args):
        arrty = signature.args[0]
        ary, idx, val = args
        struct = context.make_array(arrty)(context, builder, ary)
        ptr = cgutils.get_item_pointer(context, builder, arrty, struct, [idx])
        val = context.cast(builder, val, signature.args[2], arrty.dtype)
        return builder.atomic_rmw(op, ptr, val, "monotonic")

    return codegen


@intrinsic
def atomic_or(typingctx, array, index, value):
    """``array[index] |= value`` atomically; returns the old value."""
    return array.dtype(array, index, value), atomic_rmw_codegen("or")


@intrinsic
def atomic_add(typingctx, array, index, value):
    """``array[index] += value`` atomically; returns the old value."""
    return array.dtype(array, index, value), atomic_rmw_codegen("add")


_jit = numba.njit(cache=kernels.CACHE_ENABLED, nogil=True)


@_jit
def map_mask(mask, mmask):
    """A square mask carried through a square map, one byte at a time
    (``mmask[ch, byte]``: the image of byte ``ch``'s squares)."""
    out = np.int64(0)
    for ch in range(mmask.shape[0]):
        out |= mmask[ch, (mask >> (8 * ch)) & 0xFF]
    return out


@_jit
def unrank_squares(index, count, mult, slots, out):
    """Squares (as ranks among ``slots`` free slots) of the first ``count`` digits."""
    used = np.int64(0)
    rest = index
    for i in range(count):
        digit = rest // mult[i]
        rest -= digit * mult[i]
        # the digit-th slot not used yet
        seen = -1
        for s in range(slots):
            if not (used >> s) & 1:
                seen += 1
                if seen == digit:
                    out[i] = s
                    used |= np.int64(1) << s
                    break
