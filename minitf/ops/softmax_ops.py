"""Softmax, log-softmax and the losses built on them (``tf.nn``).

``softmax_cross_entropy_with_logits`` is one op whose second output is the
gradient with respect to the logits (``softmax - labels``), computed in the
forward pass as TF does: the backward pass then only scales it.  The sparse
and sigmoid cross-entropies and ``l2_loss`` sit beside it.

Mirrors the softmax and loss parts of ``tensorflow/python/ops/nn_ops.py``
and ``nn_grad.py``.
"""

import numpy as np

from minitf.framework import dtypes
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_util import constant_value
from minitf.framework.tensor_shape import TensorShape, unknown_shape
from minitf.ops import (
    array_ops, joining_ops, reduction_ops, slicing_ops, transpose_ops, unary_ops)
from minitf.ops.common_shapes import merge_dims, scalar_shape
from minitf.ops.op_def_library import (
    apply_op, define_op, deprecated_alias, gradient, graph_of)



# ---- Softmax ----------------------------------------------------------------------
def _rank_at_least_1(op):
    shape = op.inputs[0].shape
    if shape.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    return [shape]


_softmax = define_op("Softmax", inputs=("logits",), outputs=("softmax",),
                     shape_fn=_rank_at_least_1, type_constraint=dtypes.FLOATING,
                     doc="exp(logits) / sum(exp(logits)) along the last axis.")
_log_softmax = define_op("LogSoftmax", inputs=("logits",), outputs=("logsoftmax",),
                         shape_fn=_rank_at_least_1, type_constraint=dtypes.FLOATING,
                         doc="logits - log(sum(exp(logits))) along the last axis.")


def softmax(logits, axis=None, name=None, dim=None):
    """``exp(logits) / reduce_sum(exp(logits), axis)`` (``tf.nn.softmax``).

    The kernel subtracts the maximum first, so large logits do not overflow.

    Args:
        logits: a floating-point tensor of rank >= 1.
        axis: the class axis (default -1, the last).  Another axis is moved
            to the end and back with ``tf.transpose``, as TF does.
        name: op name (default ``Softmax``).
        dim: deprecated alias of ``axis``.

    Example:
        >>> sess.run(tf.nn.softmax([1.0, 1.0]))
        array([0.5, 0.5], dtype=float32)
    """
    axis = deprecated_alias("axis", axis, "dim", dim)
    return _along_axis(_softmax, logits, axis, name)


def log_softmax(logits, axis=None, name=None, dim=None):
    """``logits - log(reduce_sum(exp(logits), axis))`` (``tf.nn.log_softmax``).

    More accurate than ``log(softmax(x))``: it never takes the log of an
    underflowed zero.  Arguments as for :func:`softmax`.
    """
    axis = deprecated_alias("axis", axis, "dim", dim)
    return _along_axis(_log_softmax, logits, axis, name)


def _softmax_backward(grad, softmax):
    """The softmax Jacobian ``diag(y) - y y^T`` applied to ``grad`` along the last axis.

    ``(grad - sum(grad * y, -1)) * y`` (``nn_grad._SoftmaxGrad``).
    """
    return (grad - reduction_ops.reduce_sum(grad * softmax, -1, keepdims=True)) * softmax


@gradient("Softmax")
def _softmax_gradient(op, grad):
    # The ops work on the last axis; for another axis the wrapper's transposes
    # carry the gradient there and back.
    return [_softmax_backward(grad, op.outputs[0])]


@gradient("LogSoftmax")
def _log_softmax_gradient(op, grad):
    # d log_softmax / dx = I - softmax: grad - sum(grad) * exp(log_softmax).
    softmax = unary_ops.exp(op.outputs[0])
    return [grad - reduction_ops.reduce_sum(grad, -1, keepdims=True) * softmax]


def _along_axis(op_def, x, axis, name):
    """Applies ``op_def``, an op over the last axis, along ``axis`` of ``x``.

    TF's softmax kernels work on the last axis only; for another axis the
    wrapper swaps it with the last one, applies the op and swaps back, the
    result taking ``name`` (``nn_ops._softmax``).  minitf needs the rank to be
    known to build the permutation.
    """
    if axis is None or axis == -1:
        return apply_op(op_def, [x], name=name or op_def.name)
    graph = graph_of([x])
    with graph.as_default():
        x = convert_to_tensor(x, name="logits")
    perm = _swap_with_last(x, axis)
    if perm is None:
        return apply_op(op_def, [x], name=name or op_def.name)
    result = apply_op(op_def, [transpose_ops.transpose(x, perm)])
    return transpose_ops.transpose(result, perm, name=name or "transpose")


def _swap_with_last(x, axis):
    """The permutation swapping ``axis`` and the last axis of ``x`` (None: it is last).

    Raises:
        ValueError: if the rank of ``x`` is unknown or ``axis`` is out of range.
    """
    rank = x.shape.ndims
    if rank is None:
        raise ValueError("minitf needs the rank of %s to work along axis %d" % (x.name, axis))
    if not -rank <= axis < rank:
        raise ValueError("axis %d is out of range for a tensor of rank %d" % (axis, rank))
    axis %= rank
    if axis == rank - 1:
        return None
    perm = list(range(rank))
    perm[axis], perm[-1] = rank - 1, axis
    return perm


# ---- Losses -----------------------------------------------------------------------
_l2_loss = define_op("L2Loss", inputs=("t",), shape_fn=scalar_shape,
                     type_constraint=dtypes.FLOATING, doc="sum(t ** 2) / 2.")


def l2_loss(t, name=None):
    """``sum(t ** 2) / 2``, the usual weight-decay penalty (``tf.nn.l2_loss``).

    Returns:
        A scalar of ``t``'s dtype.
    """
    return apply_op(_l2_loss, [t], name=name or "L2Loss")


@gradient("L2Loss")
def _l2_loss_gradient(op, grad):
    return [op.inputs[0] * grad]


def _xent_shape(op):
    features, labels = op.inputs[0].shape, op.inputs[1].shape
    if features.ndims is None or labels.ndims is None:
        return [unknown_shape(), unknown_shape()]
    if features.ndims != labels.ndims:
        raise ValueError("Shapes must be equal rank, but are %d and %d"
                         % (features.ndims, labels.ndims))
    if features.ndims == 0:
        raise ValueError("Shape must be at least rank 1 but is rank 0")
    shape = TensorShape([merge_dims(a, b) for a, b in zip(features, labels)])
    return [shape[:-1], shape]


_softmax_xent = define_op(
    "SoftmaxCrossEntropyWithLogits", inputs=("features", "labels"),
    outputs=("loss", "backprop"), shape_fn=_xent_shape, type_constraint=dtypes.FLOATING,
    same_dtype_inputs=("features", "labels"),
    doc="-sum(labels * log_softmax(features)) along the last axis, and softmax - labels.")


def softmax_cross_entropy_with_logits_v2(labels, logits, axis=None, name=None, dim=None):
    """Cross-entropy between ``labels`` (a distribution per row) and ``softmax(logits)``.

    ``loss = -reduce_sum(labels * log_softmax(logits), axis)``
    (``tf.nn.softmax_cross_entropy_with_logits_v2``).  The op has a second
    output, ``softmax(logits) - labels``, which is the gradient with respect
    to ``logits``; the wrapper returns only the loss.

    As in TF, ``labels`` are cast to the logits' dtype, the class axis is
    moved last, and labels and logits are each flattened to a matrix
    ``[-1, num_classes]`` on their own (TF's ``_flatten_outer_dims``) for the
    ``SoftmaxCrossEntropyWithLogits`` op; the loss is then reshaped to the
    logits' shape without the class axis.  So ``[batch, 7]`` labels go with
    ``[1, batch, 7]`` logits (and the reverse), as long as the number of rows
    agrees.

    Args:
        labels: probabilities, the logits' number of entries per class axis.
        logits: unscaled log-probabilities, rank >= 1.
        axis: the class axis (default -1).
        name: the name scope, and the op's name (default
            ``softmax_cross_entropy_with_logits``).
        dim: deprecated alias of ``axis``.

    Returns:
        The loss, of ``logits``'s shape without the class axis.

    Raises:
        ValueError: if the flattened labels and logits have different shapes.
    """
    axis = deprecated_alias("axis", axis, "dim", dim)
    graph = graph_of([labels, logits])
    with graph.as_default(), graph.name_scope(name or "softmax_cross_entropy_with_logits") as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        if labels.dtype.base_dtype != logits.dtype.base_dtype:
            labels = unary_ops.cast(labels, logits.dtype.base_dtype)
        static_shape = logits.shape
        if axis not in (None, -1):
            perm = _swap_with_last(logits, axis)
            if perm is not None:
                logits = transpose_ops.transpose(logits, perm)
                labels = transpose_ops.transpose(labels, perm)
        input_shape = array_ops.shape(logits)
        input_rank = array_ops.rank(logits)
        cost = apply_op(_softmax_xent, [_flatten_outer_dims(logits), _flatten_outer_dims(labels)],
                        name=scope)[0]
        output_shape = slicing_ops.slice(input_shape, [0], joining_ops.stack([input_rank - 1]))
        cost = array_ops.reshape(cost, output_shape)
        if static_shape.ndims is not None:
            dims = static_shape.as_list()
            del dims[-1 if axis is None else axis]
            cost.set_shape(dims)
        return cost


def _flatten_outer_dims(x):
    """``x`` reshaped to ``[-1, last dimension]`` (TF's ``_flatten_outer_dims``).

    The static shape says the number of rows when all outer dimensions are known.
    """
    rank = array_ops.rank(x)
    last_dim_size = slicing_ops.slice(array_ops.shape(x), joining_ops.stack([rank - 1]), [1])
    output = array_ops.reshape(x, joining_ops.concat([[-1], last_dim_size], 0))
    shape = x.shape
    if shape.ndims is not None:
        dims = shape.as_list()
        rows = None if None in dims[:-1] else int(np.prod(dims[:-1], dtype=np.int64))
        output.set_shape([rows, dims[-1]])
    return output


def _is_zeros(grad):
    """Whether ``grad`` is known to be zero when the graph is built.

    ``tf.gradients`` stands in zeros (a constant, or ``ZerosLike`` when the
    shape is unknown) for an output no y depends on: the usual case for
    ``backprop`` when only the loss is differentiated.
    """
    if grad.op.type == "ZerosLike":
        return True
    value = constant_value(grad)
    return value is not None and not np.any(value)


def _xent_logits_gradient(op, grad_loss, grad_backprop):
    """The gradient of a softmax cross-entropy op with respect to its logits.

    The loss's gradient is the op's second output, ``backprop = softmax -
    labels``, scaled per row.  When ``backprop`` itself is differentiated (a
    second derivative of the loss), its gradient goes through the softmax too.
    """
    grad = array_ops.expand_dims(grad_loss, -1) * op.outputs[1]
    if not _is_zeros(grad_backprop):
        grad += _softmax_backward(grad_backprop, softmax(op.inputs[0]))
    return grad


@gradient("SoftmaxCrossEntropyWithLogits")
def _softmax_xent_gradient(op, grad_loss, grad_backprop):
    # d loss / d labels = -log_softmax(logits); and backprop = softmax - labels
    # gives -grad_backprop (TF leaves that second term out).
    grad_labels = array_ops.expand_dims(grad_loss, -1) * -log_softmax(op.inputs[0])
    if not _is_zeros(grad_backprop):
        grad_labels -= grad_backprop
    return [_xent_logits_gradient(op, grad_loss, grad_backprop), grad_labels]


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1,
                                      name=None):
    """TF1's deprecated form of :func:`softmax_cross_entropy_with_logits_v2`.

    Same math, but it must be called with named arguments, and ``labels``
    go through ``tf.stop_gradient``: no gradient reaches them.

    Raises:
        ValueError: if called with positional arguments, or if the shapes differ.
    """
    _ensure_xent_args("softmax_cross_entropy_with_logits", _sentinel, labels, logits)
    graph = graph_of([labels, logits])
    with graph.as_default(), graph.name_scope(
            name or "softmax_cross_entropy_with_logits_sg") as scope:
        labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=dim,
                                                name=scope)


def _ensure_xent_args(name, sentinel, labels, logits):
    """TF1 requires the cross-entropy losses to be called with keyword arguments."""
    if sentinel is not None:
        raise ValueError("Only call `%s` with named arguments (labels=..., logits=..., ...)"
                         % name)
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")


def _sparse_xent_shape(op):
    features, labels = op.inputs[0].shape, op.inputs[1].shape
    if features.ndims is None:
        return [labels, unknown_shape()]
    if features.ndims == 0:
        raise ValueError("Logits cannot be scalars")
    if labels.ndims is not None and labels.ndims != features.ndims - 1:
        raise ValueError("Rank mismatch: Rank of labels (received %d) should equal rank of "
                         "logits minus 1 (received %d)." % (labels.ndims, features.ndims))
    if labels.ndims is None:
        labels = unknown_shape(features.ndims - 1)
    try:
        batch = features[:-1].merge_with(labels)
    except ValueError:
        raise ValueError("Shape mismatch: The shape of labels (received %s) should equal the "
                         "shape of logits except for the last dimension (received %s)."
                         % (labels, features)) from None
    return [batch, batch.concatenate([features[-1]])]


_sparse_softmax_xent = define_op(
    "SparseSoftmaxCrossEntropyWithLogits", inputs=("features", "labels"),
    outputs=("loss", "backprop"), shape_fn=_sparse_xent_shape, type_constraint=dtypes.FLOATING,
    doc="-log_softmax(features)[labels]; labels are class indices.")


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None,
                                             name=None):
    """Cross-entropy of integer class ``labels`` against ``softmax(logits)``.

    ``loss[i] = -log_softmax(logits)[i, labels[i]]``
    (``tf.nn.sparse_softmax_cross_entropy_with_logits``): the dense version
    with one-hot labels, without building them.

    Args:
        _sentinel: catches positional use; pass arguments by name.
        labels: int32 or int64 class indices in ``[0, num_classes)``, of
            ``logits``'s shape without the last axis.
        logits: unscaled log-probabilities, ``[..., num_classes]``.
        name: op name (default ``SparseSoftmaxCrossEntropyWithLogits``).

    Returns:
        The loss, of ``labels``'s shape and ``logits``'s dtype.

    Raises:
        ValueError: if called positionally, or if the ranks or shapes do not fit.
        TypeError: if ``labels`` is not int32 or int64.
        InvalidArgumentError: when run with a label outside ``[0, num_classes)``.
    """
    _ensure_xent_args("sparse_softmax_cross_entropy_with_logits", _sentinel, labels, logits)
    graph = graph_of([labels, logits])
    with graph.as_default(), graph.name_scope(
            name or "SparseSoftmaxCrossEntropyWithLogits") as scope:
        labels = convert_to_tensor(labels, name="labels")
        if labels.dtype.base_dtype not in (dtypes.int32, dtypes.int64):
            raise TypeError("Value passed to parameter 'labels' has DataType %s not in list of "
                            "allowed values: int32, int64" % labels.dtype.base_dtype.name)
        return apply_op(_sparse_softmax_xent, [logits, labels], name=scope)[0]


@gradient("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_softmax_xent_gradient(op, grad_loss, grad_backprop):
    return [_xent_logits_gradient(op, grad_loss, grad_backprop), None]  # integer labels


def _sigmoid_xent_shape(op):
    logits, labels = op.inputs[0].shape, op.inputs[1].shape
    try:
        return [logits.merge_with(labels)]
    except ValueError:
        raise ValueError("logits and labels must have the same shape (%s vs %s)"
                         % (logits, labels)) from None


_sigmoid_xent = define_op(
    "SigmoidCrossEntropyWithLogits", inputs=("logits", "labels"), shape_fn=_sigmoid_xent_shape,
    type_constraint=dtypes.FLOATING, same_dtype_inputs=("logits", "labels"),
    doc="max(x, 0) - x * z + log(1 + exp(-abs(x))), elementwise.")


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """Elementwise logistic loss ``-z log(sigmoid(x)) - (1 - z) log(1 - sigmoid(x))``.

    With ``x = logits`` and ``z = labels`` (each entry an independent
    yes/no probability), the loss is computed in the stable form
    ``max(x, 0) - x * z + log(1 + exp(-abs(x)))``, which never overflows
    (``tf.nn.sigmoid_cross_entropy_with_logits``).

    TF1 builds this formula from nine elementwise ops; minitf declares it as
    one op, ``SigmoidCrossEntropyWithLogits``, so the graph stays readable.

    Raises:
        ValueError: if called positionally, or if the shapes differ.
    """
    _ensure_xent_args("sigmoid_cross_entropy_with_logits", _sentinel, labels, logits)
    return apply_op(_sigmoid_xent, [logits, labels], name=name or "logistic_loss")


@gradient("SigmoidCrossEntropyWithLogits")
def _sigmoid_xent_gradient(op, grad):
    # d/dx = sigmoid(x) - z and d/dz = -x: the derivatives of TF1's formula.
    logits, labels = op.inputs
    return [grad * (unary_ops.sigmoid(logits) - labels), grad * -logits]


