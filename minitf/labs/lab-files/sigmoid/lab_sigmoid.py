"""Lab: the gradient of sigmoid.

Read README.md first.  You write the body of :func:`sigmoid_grad`; the test
file checks it against finite differences.

How your function gets called: ``tf.RegisterGradient("LabSigmoid")``
registers it under the name ``LabSigmoid``, and :func:`sigmoid` builds its
``Sigmoid`` op inside ``gradient_override_map({"Sigmoid": "LabSigmoid"})``.
When ``tf.gradients`` walks back through that op, it looks up the gradient
registered as ``LabSigmoid`` — yours — instead of the built-in one.
"""

import minitf as tf


@tf.RegisterGradient("LabSigmoid")
def sigmoid_grad(op, grad):
    """Builds dL/dx for ``y = sigmoid(x)``, given ``grad`` = dL/dy.

    Args:
        op: the ``Sigmoid`` operation.  ``op.inputs[0]`` is x and
            ``op.outputs[0]`` is y (both are Tensors: you build ops on them,
            you do not get numbers).
        grad: dL/dy, a Tensor of y's shape.

    Returns:
        A list with one Tensor, dL/dx, of x's shape.
    """
    # BEGIN SOLUTION return [dL/dx] built from y = op.outputs[0] and grad (see README.md)
    y = op.outputs[0]
    return [grad * y * (1.0 - y)]
    # END SOLUTION


def sigmoid(x, name=None):
    """``1 / (1 + exp(-x))`` elementwise, differentiated by :func:`sigmoid_grad`.

    Example::

        x = tf.placeholder(tf.float64, [3])
        y = sigmoid(x)
        [dx] = tf.gradients(y, [x])     # calls sigmoid_grad
    """
    with tf.get_default_graph().gradient_override_map({"Sigmoid": "LabSigmoid"}):
        return tf.sigmoid(x, name=name)
