"""Lab: the gradients of a dense layer, ``y = bias_add(matmul(x, W), b)``.

Read README.md first.  You write the bodies of :func:`matmul_grad` and
:func:`bias_add_grad`; the test file checks them, alone and composed in
:func:`dense`, against finite differences.

The wrappers build their ops inside ``gradient_override_map``, so that
``tf.gradients`` calls the functions registered here (``LabMatMul``,
``LabBiasAdd``) instead of the built-in gradients.
"""

import minitf as tf


@tf.RegisterGradient("LabMatMul")
def matmul_grad(op, grad):
    """Builds dL/da and dL/db for ``y = matmul(a, b)``, given ``grad`` = dL/dy.

    Only the plain product is built by :func:`matmul` below (its
    ``transpose_a`` and ``transpose_b`` attrs are False).

    Args:
        op: the ``MatMul`` operation; ``op.inputs`` are a, of shape [n, k],
            and b, of shape [k, m].
        grad: dL/dy, of shape [n, m].

    Returns:
        ``[dL/da, dL/db]``, of the shapes of a and b.
    """
    a, b = op.inputs
    # BEGIN SOLUTION return [dL/da, dL/db]: each one matmul (see its transpose_a, transpose_b)
    grad_a = tf.matmul(grad, b, transpose_b=True)    # [n, m] x [m, k]
    grad_b = tf.matmul(a, grad, transpose_a=True)    # [k, n] x [n, m]
    return [grad_a, grad_b]
    # END SOLUTION


@tf.RegisterGradient("LabBiasAdd")
def bias_add_grad(op, grad):
    """Builds dL/dvalue and dL/dbias for ``y = bias_add(value, bias)``.

    ``bias_add`` adds the 1-D ``bias`` to every row of ``value`` (to every
    position of a rank-3 or rank-4 value): the bias is broadcast along all
    dimensions but the last.

    Args:
        op: the ``BiasAdd`` operation; ``op.inputs`` are value, of any rank
            >= 2, and bias, of shape [channels] (value's last dimension).
        grad: dL/dy, of value's shape.

    Returns:
        ``[dL/dvalue, dL/dbias]``, of the shapes of value and bias.
    """
    value = op.inputs[0]
    # BEGIN SOLUTION return [dL/dvalue, dL/dbias]: sum grad over the axes bias was broadcast along
    broadcast_axes = list(range(value.shape.ndims - 1))
    return [grad, tf.reduce_sum(grad, axis=broadcast_axes)]
    # END SOLUTION


def matmul(a, b, name=None):
    """The matrix product of two rank-2 tensors, differentiated by :func:`matmul_grad`.

    Raises:
        ValueError: if a or b is not of rank 2 (other ranks make a
            ``BatchMatMulV2`` op, which this lab does not cover).
    """
    for operand in (a, b):
        if operand.shape.ndims != 2:
            raise ValueError("lab_dense.matmul takes rank-2 tensors, got %s" % operand)
    with tf.get_default_graph().gradient_override_map({"MatMul": "LabMatMul"}):
        return tf.matmul(a, b, name=name)


def bias_add(value, bias, name=None):
    """``value + bias`` with bias broadcast along the last axis (``tf.nn.bias_add``),
    differentiated by :func:`bias_add_grad`.

    Raises:
        ValueError: if value's rank is unknown (bias_add_grad needs it).
    """
    if value.shape.ndims is None:
        raise ValueError("lab_dense.bias_add needs a value of known rank, got %s" % value)
    with tf.get_default_graph().gradient_override_map({"BiasAdd": "LabBiasAdd"}):
        return tf.nn.bias_add(value, bias, name=name)


def dense(x, W, b):
    """The dense (fully connected) layer without activation: ``x @ W + b``.

    Args:
        x: inputs, [batch, in_features].
        W: weights, [in_features, units].
        b: biases, [units].

    Returns:
        [batch, units].
    """
    return bias_add(matmul(x, W), b)
