"""Lab: the gradient of max pooling over non-overlapping windows.

Read README.md first.  You write the bodies of :func:`upsample` and
:func:`max_pool_grad`; the test file checks them against finite differences.

You do not use the fused ``MaxPoolGrad`` op that minitf's own gradient
builds: you build the gradient from simpler ops (reshape, tile, equal, cast,
multiply).  That is possible because
:func:`max_pool` below only pools over *non-overlapping* k x k windows
(strides equal to the window, ``VALID`` padding, height and width divisible
by k): every input element lies in exactly one window.

:func:`max_pool` builds its ``MaxPool`` op inside
``gradient_override_map({"MaxPool": "LabMaxPool"})``, so that
``tf.gradients`` calls :func:`max_pool_grad`.
"""

import minitf as tf


def upsample(t, k):
    """Repeats every element of ``t`` over a k x k block: the inverse layout of pooling.

    ``upsample(t, k)[n, i, j, c] == t[n, i // k, j // k, c]``.

    Args:
        t: [batch, height, width, channels]; height, width and channels
            known when the graph is built (batch may be unknown).
        k: the block size (an int).

    Returns:
        [batch, height * k, width * k, channels].

    Example: with k = 2, the 2 x 2 image ``[[1, 2], [3, 4]]`` becomes
    ``[[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]]``.
    """
    _, height, width, channels = t.shape.as_list()
    # BEGIN SOLUTION return the upsampled tensor: tf.reshape to rank 6, tf.tile, tf.reshape back
    blocks = tf.reshape(t, [-1, height, 1, width, 1, channels])
    blocks = tf.tile(blocks, [1, 1, k, 1, k, 1])
    return tf.reshape(blocks, [-1, height * k, width * k, channels])
    # END SOLUTION


@tf.RegisterGradient("LabMaxPool")
def max_pool_grad(op, grad):
    """Builds dL/dx for ``y = max_pool(x)`` over non-overlapping k x k windows.

    Args:
        op: the ``MaxPool`` operation; ``op.inputs[0]`` is x,
            [batch, height, width, channels]; ``op.outputs[0]`` is y,
            [batch, height / k, width / k, channels];
            ``op.get_attr("ksize")`` is ``[1, k, k, 1]``.
        grad: dL/dy, of y's shape.

    Returns:
        A list with one Tensor, dL/dx, of x's shape.
    """
    x, y = op.inputs[0], op.outputs[0]
    k = op.get_attr("ksize")[1]
    # BEGIN SOLUTION return [dL/dx]: grad goes to where x equals its window's max, 0 elsewhere
    is_max = tf.cast(tf.equal(x, upsample(y, k)), grad.dtype)
    return [is_max * upsample(grad, k)]
    # END SOLUTION


def max_pool(x, k=2, name=None):
    """The maximum of each non-overlapping k x k window of ``x``, differentiated by
    :func:`max_pool_grad`.

    ``tf.nn.max_pool(x, ksize=k, strides=k, padding="VALID")``.

    Args:
        x: [batch, height, width, channels], height and width divisible by k.
        k: the window size.

    Raises:
        ValueError: if height, width or channels are unknown, or height or
            width is not divisible by k.
    """
    _, height, width, channels = x.shape.as_list()
    if None in (height, width, channels) or height % k or width % k:
        raise ValueError("lab_max_pool.max_pool needs a known height and width divisible by "
                         "k=%d and known channels, got shape %s" % (k, x.shape))
    with tf.get_default_graph().gradient_override_map({"MaxPool": "LabMaxPool"}):
        return tf.nn.max_pool(x, ksize=k, strides=k, padding="VALID", name=name)
