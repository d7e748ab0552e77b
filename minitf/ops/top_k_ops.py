"""``tf.nn.top_k``, ``tf.nn.in_top_k``, ``tf.sort``: the k largest entries of each row.

``TopKV2`` returns the ``k`` largest values along the last axis and their
indices (ties: the lower index first); its gradient routes each value's
gradient back to the position it came from.  ``InTopKV2`` answers, per row,
"is the target class among the top ``k`` predictions?" — the precision@k of
TF's MNIST tutorial (``tf.nn.in_top_k(logits, labels, 1)``).  ``tf.sort`` and
``tf.argsort`` are ``top_k`` of the whole last axis.

Mirrors ``tf.nn.top_k``/``tf.nn.in_top_k`` (``gen_nn_ops.top_kv2``/``in_top_kv2``).
"""

import collections

from minitf.framework import dtypes, graph as graph_lib, tensor_util
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape, unknown_shape
from minitf.ops import array_ops, gather_ops, reduction_ops, unary_ops
from minitf.ops.op_def_library import apply_op, define_op, gradient, not_differentiable


def _top_k_shape(op):
    shape = op.inputs[0].shape
    if shape.ndims is None:
        return [unknown_shape(), unknown_shape()]
    if shape.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0 for '%s' (op: 'TopKV2')"
                         % op.name)
    k = tensor_util.constant_value(op.inputs[1])
    last = shape.as_list()[-1]
    if k is not None and last is not None and int(k) > last:
        raise ValueError("input must have last dimension >= k = %d but is %d for '%s'"
                         % (int(k), last, op.name))
    out = TensorShape(shape.as_list()[:-1] + [None if k is None else int(k)])
    return [out, out]


_top_k = define_op(
    "TopKV2", inputs=("input", "k"), outputs=("values", "indices"), attrs={"sorted": True},
    shape_fn=_top_k_shape, dtype_fn=lambda op: [op.inputs[0].dtype.base_dtype, dtypes.int32],
    type_constraint=dtypes.NUMERIC, doc="The k largest entries of the last axis and their indices.")


TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


def top_k(input, k=1, sorted=True, name=None):  # noqa: A002 - TF's argument names
    """The ``k`` largest entries of the last axis of ``input`` and their indices.

    Args:
        input: a numeric tensor of rank >= 1.
        k: how many (a scalar int32, at most the last dimension).
        sorted: accepted for TF compatibility; the values are always sorted.
        name: the op name (default ``TopKV2``).

    Returns:
        A ``TopKV2(values, indices)`` named tuple, each of shape ``input.shape[:-1] + [k]``.
    """
    values, indices = apply_op(_top_k, [input, k], attrs={"sorted": bool(sorted)},
                               name=name or "TopKV2")
    return TopKV2(values, indices)


@gradient("TopKV2")
def _top_k_grad(op, grad_values, grad_indices):
    """Each value's gradient goes back to its position: ``sum_j one_hot(idx_j) * g_j``."""
    x, indices = op.inputs[0], op.outputs[1]
    depth = array_ops.shape(x)[-1]
    spread = gather_ops.one_hot(indices, depth, dtype=grad_values.dtype.base_dtype)
    return [reduction_ops.reduce_sum(spread * array_ops.expand_dims(grad_values, -1), axis=-2),
            None]


_in_top_k = define_op(
    "InTopKV2", inputs=("predictions", "targets", "k"),
    shape_fn=lambda op: [TensorShape(op.inputs[0].shape.as_list()[:1])
                         if op.inputs[0].shape.ndims is not None else unknown_shape()],
    dtype_fn=lambda op: [dtypes.bool], type_constraint=(dtypes.float32,),
    doc="Whether targets[i] is among the top k of predictions[i].")
not_differentiable("InTopKV2")


def in_top_k(predictions, targets, k, name=None):
    """Whether each row's target class is among its ``k`` largest predictions.

    A target counts as in the top ``k`` when fewer than ``k`` entries of its
    row are strictly larger (ties are all in); a row with a non-finite
    prediction, or a target out of range, gives False.

    Args:
        predictions: a ``[batch, classes]`` float32 tensor.
        targets: ``[batch]`` int32 or int64 class ids.
        k: a scalar int.
        name: the op name (default ``InTopKV2``).

    Returns:
        A ``[batch]`` bool tensor.
    """
    return apply_op(_in_top_k, [predictions, targets, k], name=name or "InTopKV2")


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """The indices that sort ``values`` along its last axis (``tf.argsort``).

    It is ``top_k`` with ``k`` the whole axis (of ``-values`` for
    ``"ASCENDING"``); equal values keep their order, so the sort is stable.

    Raises:
        ValueError: for an ``axis`` other than the last, or an unknown ``direction``.
    """
    return _sort(values, axis, direction, name or "argsort").indices


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """``values`` sorted along its last axis (``tf.sort``; see :func:`argsort`)."""
    return _sort(values, axis, direction, name or "sort").values


def _sort(values, axis, direction, name):
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError("direction must be 'ASCENDING' or 'DESCENDING', got %r" % direction)
    with graph_lib.get_default_graph().name_scope(name):
        values = convert_to_tensor(values, name="values")
        rank = values.shape.ndims
        if rank is None or axis not in (-1, rank - 1):
            raise ValueError("minitf sorts along the last axis only (axis=-1), got axis=%r"
                             % axis)
        n = array_ops.shape(values)[-1]
        if direction == "DESCENDING":
            return top_k(values, n)
        negated = top_k(unary_ops.negative(values), n)
        return TopKV2(unary_ops.negative(negated.values), negated.indices)


__all__ = ["argsort", "in_top_k", "sort", "top_k"]
