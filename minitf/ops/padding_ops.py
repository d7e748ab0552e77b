"""Growing a tensor: ``tf.pad`` surrounds it (with a constant or its mirror
image) and ``tf.tile`` repeats it.

Each gradient gathers the incoming gradient back onto the input's elements:
``Pad`` slices the input's block out of it; ``MirrorPad`` also adds each
mirrored copy's gradient onto the element it copied (a ``MirrorPadGrad`` op);
``Tile`` adds up the gradients of all the copies of each element
(``reduce_sum`` over the repeats).

Mirrors ``tensorflow/python/ops/array_ops.py`` and ``array_grad.py``.
"""

import numpy as np

from minitf.framework.tensor_shape import TensorShape, unknown_shape
from minitf.framework.tensor_util import constant_value
from minitf.ops import math_ops, slicing_ops
from minitf.ops.array_ops import reshape, shape, size
from minitf.ops.array_util import is_tensor_like, like_input, with_rank
from minitf.ops.gradient_util import sum_over
from minitf.ops.joining_ops import stack
from minitf.ops.op_def_library import apply_op, define_op, gradient


# ---- Pad, PadV2, MirrorPad ----------------------------------------------------------------
def _pad_shape(op):
    """Each dimension grows by its ``paddings`` row, ``[before, after]``."""
    return _resized_shape(op, grow=True)


def _resized_shape(op, grow):
    """The input's shape grown (or, for ``MirrorPadGrad``, shrunk) by ``paddings``."""
    x, paddings = op.inputs[:2]
    paddings_shape = with_rank(paddings.shape, 2)
    if paddings_shape[1].value not in (None, 2):
        raise ValueError("Dimension must be 2 but is %d" % paddings_shape[1].value)
    rank = paddings_shape[0].value
    rank = x.shape.ndims if rank is None else rank
    if rank is None:
        return [unknown_shape()]
    dims = with_rank(x.shape, rank).as_list()
    pads = constant_value(paddings)
    if pads is None:
        return [unknown_shape(rank)]
    if (pads < 0).any():
        raise ValueError("Paddings must be non-negative")
    sign = 1 if grow else -1
    return [TensorShape([None if d is None else d + sign * (int(before) + int(after))
                         for d, (before, after) in zip(dims, pads)])]


_pad = define_op("Pad", inputs=("input", "paddings"), shape_fn=_pad_shape,
                 dtype_fn=like_input(0, {1: "paddings"}),
                 doc="Pads with zeros: paddings[i] = [before, after] for dimension i.")
_pad_v2 = define_op("PadV2", inputs=("input", "paddings", "constant_values"),
                    shape_fn=_pad_shape, same_dtype_inputs=("input", "constant_values"),
                    dtype_fn=like_input(0, {1: "paddings"}),
                    doc="Pads with constant_values: paddings[i] = [before, after].")
_mirror_pad = define_op("MirrorPad", inputs=("input", "paddings"), attrs={"mode": None},
                        shape_fn=_pad_shape, dtype_fn=like_input(0, {1: "paddings"}),
                        doc="Pads with a mirror image of the input (REFLECT or SYMMETRIC).")


def pad(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """Pads ``tensor`` (``tf.pad``).

    ``paddings`` is an integer ``[rank, 2]`` list or tensor: dimension i gets
    ``paddings[i][0]`` values before and ``paddings[i][1]`` after.

    Args:
        tensor: the tensor to pad.
        paddings: the amounts, non-negative.
        mode: ``"CONSTANT"`` (fill with ``constant_values``), ``"REFLECT"``
            (mirror without the edge: ``[1, 2, 3]`` padded by 2 before is
            ``[3, 2, 1, 2, 3]``) or ``"SYMMETRIC"`` (mirror with the edge:
            ``[2, 1, 1, 2, 3]``); case-insensitive.
        name: op name (default: the op type, ``Pad``, ``PadV2`` or ``MirrorPad``).
        constant_values: the fill value for ``"CONSTANT"``; a nonzero value
            builds ``PadV2`` instead of ``Pad``, as TF1 does.

    Raises:
        ValueError: for an unknown mode or negative constant paddings.
        InvalidArgumentError: when running, if a mirror padding is larger than
            the dimension allows.
    """
    mode = mode.upper()
    if mode == "CONSTANT":
        if not is_tensor_like(constant_values) and np.all(np.equal(constant_values, 0)):
            return apply_op(_pad, [tensor, paddings], name=name or "Pad")
        return apply_op(_pad_v2, [tensor, paddings, constant_values], name=name or "PadV2")
    if mode in ("REFLECT", "SYMMETRIC"):
        return apply_op(_mirror_pad, [tensor, paddings], attrs={"mode": mode},
                        name=name or "MirrorPad")
    raise ValueError("Unknown padding mode: %s" % mode)


def _pad_grad(op, grad):
    """The input's block of ``grad``: ``begin`` is the ``before`` column of
    ``paddings``, the size the input's shape.  ``paddings`` (and PadV2's
    ``constant_values``, as in TF1) get None."""
    x, paddings = op.inputs[:2]
    begin = paddings[:, 0]
    grad_x = slicing_ops.slice(grad, begin, shape(x, out_type=paddings.dtype.base_dtype))
    return [grad_x] + [None] * (len(op.inputs) - 1)


gradient("Pad")(_pad_grad)
gradient("PadV2")(_pad_grad)


@gradient("MirrorPad")
def _mirror_pad_gradient(op, grad):
    return [mirror_pad_grad(grad, op.inputs[1], op.get_attr("mode")), None]


# ---- MirrorPadGrad ------------------------------------------------------------------------
def _mirror_pad_grad_shape(op):
    return _resized_shape(op, grow=False)


_mirror_pad_grad = define_op(
    "MirrorPadGrad", inputs=("input", "paddings"), attrs={"mode": None},
    shape_fn=_mirror_pad_grad_shape, dtype_fn=like_input(0, {1: "paddings"}),
    doc="The gradient of MirrorPad: each mirrored element's gradient added onto its source.")


def mirror_pad_grad(input, paddings, mode, name=None):  # noqa: A002
    """The gradient of a ``MirrorPad``: ``input`` (of the padded shape) folded
    back onto the unpadded shape.

    Each element of the result is the sum of the gradients of its copies:
    itself, and its mirror images in the padding.  With REFLECT padding by 2,
    ``[a, b, c, d, e]`` (the gradient of ``[3, 2, 1, 2, 3]``) folds to
    ``[c, b + d, a + e]``.

    Args:
        input: the gradient of the padded tensor.
        paddings: the ``[rank, 2]`` paddings of the ``MirrorPad``.
        mode: its mode, ``"REFLECT"`` or ``"SYMMETRIC"``.
        name: op name (default ``MirrorPadGrad``).
    """
    return apply_op(_mirror_pad_grad, [input, paddings], attrs={"mode": mode.upper()},
                    name=name or "MirrorPadGrad")


@gradient("MirrorPadGrad")
def _mirror_pad_grad_gradient(op, grad):
    """Folding is linear, and its transpose is mirroring: pad ``grad`` again."""
    return [pad(grad, op.inputs[1], mode=op.get_attr("mode")), None]


# ---- Tile ---------------------------------------------------------------------------------
def _tile_shape(op):
    x, multiples = op.inputs
    length = with_rank(multiples.shape, 1)[0].value
    rank = x.shape.ndims if x.shape.ndims is not None else length
    if rank is None:
        return [unknown_shape()]
    if length is not None and length != rank:
        raise ValueError("Shape must be rank %d but is rank %d" % (rank, length))
    times = constant_value(multiples)
    if times is None:
        return [unknown_shape(rank)]
    dims = unknown_shape(rank).merge_with(x.shape).as_list()
    return [TensorShape([None if d is None else d * int(m) for d, m in zip(dims, times)])]


_tile = define_op("Tile", inputs=("input", "multiples"), shape_fn=_tile_shape,
                  dtype_fn=like_input(0, {1: "multiples"}),
                  doc="Repeats its input multiples[i] times along dimension i.")


def tile(input, multiples, name=None):  # noqa: A002
    """Repeats ``input`` ``multiples[i]`` times along each dimension i (``tf.tile``).

    Example: ``tf.tile([[1, 2]], [2, 2])`` is ``[[1, 2, 1, 2], [1, 2, 1, 2]]``.
    """
    return apply_op(_tile, [input, multiples], name=name or "Tile")


@gradient("Tile")
def _tile_grad(op, grad):
    """Each input element has ``prod(multiples)`` copies; its gradient is their sum.

    Reshaping ``grad`` to ``[m0, d0, m1, d1, ...]`` (``multiples`` interleaved
    with the input's shape) puts copy k of element i at index
    ``[k0, i0, k1, i1, ...]``, so summing over the even axes adds the copies.
    """
    x, multiples = op.inputs
    x_shape = shape(x, out_type=multiples.dtype.base_dtype)
    split_shape = reshape(stack([multiples, x_shape], axis=1), [-1])
    repeat_axes = math_ops.range(0, size(split_shape), 2)
    return [sum_over(reshape(grad, split_shape), repeat_axes), None]
