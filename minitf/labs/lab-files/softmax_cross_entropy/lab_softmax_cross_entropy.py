"""Lab: the gradient of softmax cross-entropy.

Read README.md first.  You write the body of
:func:`softmax_cross_entropy_grad`; the test file checks it against finite
differences.

:func:`softmax_cross_entropy` builds TF's fused op
``SoftmaxCrossEntropyWithLogits`` inside
``gradient_override_map({...: "LabSoftmaxCrossEntropy"})``, so that
``tf.gradients`` calls the function registered here.
"""

import minitf as tf


@tf.RegisterGradient("LabSoftmaxCrossEntropy")
def softmax_cross_entropy_grad(op, grad_loss, grad_backprop):
    """Builds dL/dlogits and dL/dlabels for ``loss = -sum(labels * log(softmax(logits)), -1)``.

    The op has two outputs, so the function receives two upstream
    gradients.  The second output (``softmax(logits) - labels``, which the
    op computes as a by-product) is not used by anything in this lab, and
    ``grad_backprop`` is all zeros: ignore it.

    Args:
        op: the ``SoftmaxCrossEntropyWithLogits`` operation; ``op.inputs``
            are logits and labels, both of shape [batch, classes].
        grad_loss: dL/dloss, of shape [batch] (one loss per row).
        grad_backprop: dL/d(the second output); zeros here.

    Returns:
        ``[dL/dlogits, dL/dlabels]``, both of shape [batch, classes].
    """
    del grad_backprop  # nothing consumes the op's second output in this lab
    logits, labels = op.inputs
    # BEGIN SOLUTION dL/dlogits: (softmax(logits) - labels), each row scaled by its grad_loss
    row_grad = tf.expand_dims(grad_loss, -1)          # [batch, 1]: broadcasts along classes
    grad_logits = row_grad * (tf.nn.softmax(logits) - labels)
    # END SOLUTION
    # BEGIN SOLUTION dL/dlabels: the loss is linear in labels (hint: tf.nn.log_softmax)
    grad_labels = tf.expand_dims(grad_loss, -1) * -tf.nn.log_softmax(logits)
    # END SOLUTION
    return [grad_logits, grad_labels]


def softmax_cross_entropy(labels, logits, name=None):
    """The cross-entropy between each row of ``labels`` and ``softmax(logits)``,
    differentiated by :func:`softmax_cross_entropy_grad`.

    Args:
        labels: [batch, classes]; each row a probability distribution.
        logits: [batch, classes]; unscaled log-probabilities.

    Returns:
        [batch]: ``-sum(labels * log(softmax(logits)), axis=-1)``.
    """
    override = {"SoftmaxCrossEntropyWithLogits": "LabSoftmaxCrossEntropy"}
    with tf.get_default_graph().gradient_override_map(override):
        return tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits,
                                                          name=name)
