"""Array ops: creating, feeding, reshaping, slicing and combining tensors.

Each op is declared with :func:`define_op` next to its Python wrapper and its
gradient.  Kernels live in the backends (``plugins/numpy_cpu``).

Mirrors ``tensorflow/python/ops/array_ops.py``.
"""

from minitf.framework import dtypes
from minitf.framework.tensor_shape import TensorShape, as_shape
from minitf.ops.common_shapes import unchanged_shape
from minitf.ops.op_def_library import apply_op, define_op, gradient, not_differentiable


# ---- Placeholder -----------------------------------------------------------------
def _placeholder_shape(op):
    return [as_shape(op.get_attr("shape"))]


_placeholder = define_op(
    "Placeholder", attrs={"dtype": None, "shape": None}, shape_fn=_placeholder_shape,
    doc="A value that must be fed; running it unfed is an InvalidArgumentError.")
not_differentiable("Placeholder")


def placeholder(dtype, shape=None, name=None):
    """A tensor whose value is fed at run time (``tf.placeholder``).

    Args:
        dtype: the element type.
        shape: the shape, possibly partial (``[None, 784]``); None: any shape.
        name: op name (default ``Placeholder``).

    Example:
        >>> x = tf.placeholder(tf.float32, shape=[None, 3])
        >>> sess.run(x * 2, feed_dict={x: [[1, 2, 3]]})
        array([[2., 4., 6.]], dtype=float32)
    """
    shape = TensorShape(shape)
    return apply_op(_placeholder, [], attrs={"dtype": dtypes.as_dtype(dtype), "shape": shape},
                    name=name or "Placeholder")


_placeholder_with_default = define_op(
    "PlaceholderWithDefault", inputs=("input",), attrs={"shape": None},
    shape_fn=_placeholder_shape,
    doc="Passes its input through unless a value is fed.")


def placeholder_with_default(input, shape, name=None):  # noqa: A002 - TF's argument name
    """A placeholder that passes ``input`` through when not fed.

    Raises:
        ValueError: if ``shape`` is incompatible with ``input``'s shape.
    """
    from minitf.framework.tensor_conversion import convert_to_tensor
    from minitf.framework import graph as graph_lib
    shape = TensorShape(shape)
    graph = graph_lib.get_default_graph()
    with graph.name_scope(name or "PlaceholderWithDefault") as scope:
        value = convert_to_tensor(input, name="input")
        if not value.shape.is_compatible_with(shape):
            raise ValueError("Shapes %s and %s are incompatible" % (value.shape, shape))
        return apply_op(_placeholder_with_default, [value], attrs={"shape": shape}, name=scope)


@gradient("PlaceholderWithDefault")
def _placeholder_with_default_grad(op, grad):
    return [grad]


# ---- Identity -------------------------------------------------------------------------
_identity = define_op("Identity", inputs=("input",), shape_fn=unchanged_shape,
                      doc="Returns its input (reading a variable's value, for instance).")


def identity(input, name=None):  # noqa: A002
    """Returns a tensor with the same value as ``input`` (``tf.identity``)."""
    return apply_op(_identity, [input], name=name or "Identity")


@gradient("Identity")
def _identity_grad(op, grad):
    return [grad]
