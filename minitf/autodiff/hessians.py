"""``tf.hessians``: second derivatives by differentiating gradients again.

Because :func:`~minitf.autodiff.gradients.gradients` builds ordinary ops, the
Hessian of a scalar ``y`` with respect to ``x`` is the gradient of each
element of ``dy/dx``.  TF1 loops over the elements with ``while_loop``; here
the (statically known) elements are unrolled, which keeps the graph readable
for the small problems Hessians are used on.
"""

from minitf.autodiff.gradients import gradients
from minitf.ops import array_ops, joining_ops


def hessians(ys, xs, name="hessians", colocate_gradients_with_ops=False,
             gate_gradients=False, aggregation_method=None):
    """The Hessian of ``sum(ys)`` with respect to each x, of shape ``x.shape + x.shape``.

    Mirrors TF1's ``tf.hessians``.

    Args:
        ys: a Tensor or list of Tensors to differentiate twice.
        xs: a Tensor or list of Tensors, each of fully defined shape.
        name: the name scope of the gradient ops.
        colocate_gradients_with_ops, gate_gradients, aggregation_method:
            accepted for compatibility, as in :func:`gradients`.

    Returns:
        One Tensor per x (None for an x that ys do not depend on).

    Raises:
        ValueError: if an x's shape is not fully defined.

    Example:
        >>> x = tf.constant([1.0, 2.0])
        >>> (h,) = tf.hessians(tf.reduce_sum(x ** 3), x)
        >>> sess.run(h)              # diag(6 x)
        array([[ 6.,  0.],
               [ 0., 12.]], dtype=float32)
    """
    del colocate_gradients_with_ops, gate_gradients, aggregation_method
    xs = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    grads = gradients(ys, xs, name=name)
    result = []
    for x, grad in zip(xs, grads):
        if grad is None:
            result.append(None)
            continue
        shape = x.shape
        if not shape.is_fully_defined():
            raise ValueError("Cannot compute the Hessian of %s: its shape %s is not fully "
                             "defined." % (x.name, shape))
        size = shape.num_elements()
        flat = array_ops.reshape(grad, [size])
        rows = []
        for i in range(size):
            (row,) = gradients(flat[i], [x], name=name)
            rows.append(array_ops.zeros_like(x) if row is None else row)
        result.append(array_ops.reshape(joining_ops.stack(rows), shape.as_list() * 2))
    return result
