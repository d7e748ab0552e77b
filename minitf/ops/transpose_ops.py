"""Reordering a tensor's dimensions or elements: ``tf.transpose``,
``tf.matrix_transpose``, ``tf.reverse``, ``tf.reverse_sequence`` and
``tf.invert_permutation``.

These ops move elements without changing or combining them, so each one's
gradient applies the inverse move to the incoming gradient: a transpose by
the inverse permutation (``InvertPermutation``), a reverse along the same axes.

Mirrors ``tensorflow/python/ops/array_ops.py`` and ``array_grad.py``.
"""

import numpy as np

from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape, unknown_shape
from minitf.framework.tensor_util import constant_value
from minitf.ops import math_ops
from minitf.ops.array_ops import rank
from minitf.ops.array_util import canonical_axis, like_input, op_scope, with_rank
from minitf.ops.common_shapes import merge_dims
from minitf.ops.joining_ops import concat
from minitf.ops.op_def_library import apply_op, define_op, gradient, not_differentiable


# ---- InvertPermutation, Transpose, matrix_transpose ---------------------------------------
def _invert_permutation_shape(op):
    return [with_rank(op.inputs[0].shape, 1)]


_invert_permutation = define_op(
    "InvertPermutation", inputs=("x",), shape_fn=_invert_permutation_shape,
    dtype_fn=like_input(0, {0: "x"}),
    doc="The inverse of a permutation of range(n): y[x[i]] = i.")
not_differentiable("InvertPermutation", reason="integer permutations")


def invert_permutation(x, name=None):
    """The inverse of the permutation ``x`` of ``range(n)`` (``tf.invert_permutation``).

    ``y[x[i]] = i``: transposing by ``x`` and then by ``y`` changes nothing,
    which is how the gradient of ``Transpose`` undoes it.

    Example: ``tf.invert_permutation([3, 4, 0, 2, 1])`` is ``[2, 4, 3, 0, 1]``.

    Raises:
        InvalidArgumentError: when running, if ``x`` is not a permutation
            (``0 is duplicated in the input.``).
    """
    return apply_op(_invert_permutation, [x], name=name or "InvertPermutation")


def _transpose_shape(op):
    x, perm = op.inputs
    perm_length = with_rank(perm.shape, 1)[0].value
    rank = x.shape.ndims if x.shape.ndims is not None else perm_length
    if rank is None:
        return [unknown_shape()]
    if perm_length is not None and perm_length != rank:
        raise ValueError("Dimension must be %d but is %d" % (rank, perm_length))
    order = constant_value(perm)
    if order is None or x.shape.ndims is None:
        return [unknown_shape(rank)]
    for p in order:
        if not 0 <= p < rank:
            raise ValueError("perm dim %d is out of range of input rank %d" % (p, rank))
    dims = x.shape.as_list()
    return [TensorShape([dims[p] for p in order])]


_transpose = define_op("Transpose", inputs=("x", "perm"), shape_fn=_transpose_shape,
                       dtype_fn=like_input(0, {1: "perm"}),
                       doc="Permutes the dimensions: output dim i is input dim perm[i].")


def transpose(a, perm=None, name="transpose", conjugate=False):
    """Permutes the dimensions of ``a`` (``tf.transpose``).

    Output dimension ``i`` is input dimension ``perm[i]``; by default the
    dimensions are reversed (a matrix is transposed).

    Args:
        a: a tensor.
        perm: a permutation of ``range(rank)``; None: ``[rank-1, ..., 0]``.
        name: op name (default ``transpose``).
        conjugate: for complex tensors in TF; minitf has no complex dtypes, so
            it changes nothing.

    Example:
        >>> tf.transpose(tf.zeros([2, 3, 4]), perm=[0, 2, 1])
        Tensor("transpose:0", shape=(2, 4, 3), dtype=float32)

    Raises:
        ValueError: if ``perm`` is known not to fit ``a``'s rank.
    """
    del conjugate  # no complex dtypes
    with op_scope(name, [a]) as scope:
        a = convert_to_tensor(a, name="a")
        if perm is None:
            perm = _reversed_dims(a)
        return apply_op(_transpose, [a, perm], name=scope)


@gradient("Transpose")
def _transpose_grad(op, grad):
    """Output dim i is input dim perm[i], so input dim j is output dim inverse[j]."""
    return [transpose(grad, invert_permutation(op.inputs[1])), None]


def _reversed_dims(a):
    """``[rank - 1, ..., 1, 0]``: a constant when ``a``'s rank is static, else ops."""
    if a.shape.ndims is not None:
        return np.arange(a.shape.ndims - 1, -1, -1, dtype=np.int32)
    return math_ops.range(rank(a) - 1, -1, -1)


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """Transposes the last two dimensions of ``a`` (``tf.matrix_transpose``).

    A batch of matrices ``[..., M, N]`` becomes ``[..., N, M]``.

    Raises:
        ValueError: if ``a`` is known to have rank below 2.
    """
    with op_scope(name, [a]):
        a = convert_to_tensor(a, name="a")
        ndims = a.shape.ndims
        if ndims is None:
            a_rank = rank(a)
            perm = concat([math_ops.range(0, a_rank - 2, 1), [a_rank - 1, a_rank - 2]], 0)
        elif ndims < 2:
            raise ValueError("Argument 'a' should be a (batch) matrix, with rank >= 2.  Found: "
                             "%s" % a.shape)
        else:
            perm = list(range(ndims - 2)) + [ndims - 1, ndims - 2]
        return transpose(a, perm=perm, conjugate=conjugate)


# ---- ReverseV2 --------------------------------------------------------------------------


def _reverse_shape(op):
    x, axis = op.inputs
    axes = constant_value(axis)
    rank = x.shape.ndims
    if axes is not None and rank is not None:
        seen = set()
        for i, a in enumerate(axes.reshape(-1)):
            a = canonical_axis(a, rank, "'axis'[%d] = %d is out of valid range [%d, %d)"
                               % (i, a, -rank, rank))
            if a in seen:
                raise ValueError("axis %d specified more than once." % a)
            seen.add(a)
    return [x.shape]


_reverse_v2 = define_op("ReverseV2", inputs=("tensor", "axis"), shape_fn=_reverse_shape,
                        dtype_fn=like_input(0, {1: "axis"}),
                        doc="Reverses the order of elements along the given axes.")


def reverse(tensor, axis, name=None):
    """Reverses ``tensor`` along each dimension in ``axis`` (``tf.reverse``).

    Example: ``tf.reverse([[1, 2], [3, 4]], [1])`` is ``[[2, 1], [4, 3]]``.
    """
    return apply_op(_reverse_v2, [tensor, axis], name=name or "ReverseV2")


@gradient("ReverseV2")
def _reverse_grad(op, grad):
    return [reverse(grad, op.inputs[1]), None]


# ---- ReverseSequence ----------------------------------------------------------------------
def _reverse_sequence_shape(op):
    x, seq_lengths = op.inputs
    lengths_shape = with_rank(seq_lengths.shape, 1)
    rank = x.shape.ndims
    if rank is None:
        return [x.shape]
    for attr in ("batch_dim", "seq_dim"):
        if op.get_attr(attr) >= rank:
            raise ValueError("%s must be < input rank: %d vs. %d" % (attr, op.get_attr(attr), rank))
    dims = list(x.shape.dims)
    batch_dim = op.get_attr("batch_dim")
    dims[batch_dim] = merge_dims(dims[batch_dim], lengths_shape[0])
    return [TensorShape(dims)]


_reverse_sequence = define_op(
    "ReverseSequence", inputs=("input", "seq_lengths"), attrs={"seq_dim": None, "batch_dim": 0},
    shape_fn=_reverse_sequence_shape, dtype_fn=like_input(0, {1: "seq_lengths"}),
    doc="Reverses the first seq_lengths[b] elements along seq_dim of each batch row b.")


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name=None, seq_dim=None,
                     batch_dim=None):
    """Reverses each sequence of a batch up to its own length (``tf.reverse_sequence``).

    Row ``b`` (along ``batch_axis``) has its first ``seq_lengths[b]``
    elements along ``seq_axis`` reversed; the rest — the padding past the
    sequence's end — stays where it is.  This is how a backward RNN reads a
    batch of padded sequences from each one's true end::

        x = [[1, 2, 3, 0],      reverse_sequence(x, [3, 2], seq_axis=1, batch_axis=0)
             [4, 5, 0, 0]]      == [[3, 2, 1, 0], [5, 4, 0, 0]]

    ``seq_dim``/``batch_dim`` are TF1's deprecated names of the two axes.

    Raises:
        ValueError: if an axis is not below the input's rank, or the batch
            size and ``len(seq_lengths)`` differ.
        TypeError: if ``seq_lengths`` is not int32 or int64.
        errors.InvalidArgumentError: when run, for a length below 0 or past
            the sequence axis.
    """
    seq_axis = seq_axis if seq_axis is not None else seq_dim
    batch_axis = batch_axis if batch_axis is not None else (batch_dim or 0)
    return apply_op(_reverse_sequence, [input, seq_lengths],
                    attrs={"seq_dim": seq_axis, "batch_dim": batch_axis},
                    name=name or "ReverseSequence")


@gradient("ReverseSequence")
def _reverse_sequence_grad(op, grad):
    return [reverse_sequence(grad, op.inputs[1], seq_axis=op.get_attr("seq_dim"),
                             batch_axis=op.get_attr("batch_dim")), None]
