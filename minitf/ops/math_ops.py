"""Math ops: elementwise arithmetic with broadcasting, reductions, matrices.

Each op is declared with :func:`define_op` next to its Python wrapper and its
gradient.  The Tensor operators (``+``, ``*``, ``<`` ...) are installed at the
end of this module.

Mirrors ``tensorflow/python/ops/math_ops.py``.
"""

from minitf.framework import dtypes
from minitf.framework.tensor import Tensor
from minitf.ops.common_shapes import broadcast_binary_shape
from minitf.ops.op_def_library import apply_op, define_op


def _binary(name, doc, types=dtypes.NUMERIC):
    return define_op(name, inputs=("x", "y"), outputs=("z",), shape_fn=broadcast_binary_shape,
                     type_constraint=types, same_dtype_inputs=("x", "y"), doc=doc)


_add = _binary("Add", "x + y, elementwise with broadcasting.")


def add(x, y, name=None):
    """Returns ``x + y`` elementwise, with NumPy broadcasting (``tf.add``)."""
    return apply_op(_add, [x, y], name=name or "Add")


def _binary_operator(fn, scope_name):
    def forward(x, y):
        return fn(x, y, name=scope_name)

    def reverse(y, x):
        return fn(x, y, name=scope_name)
    return forward, reverse


def _install_operators():
    table = {"add": add}
    for name, fn in table.items():
        forward, reverse = _binary_operator(fn, name)
        Tensor._override_operator("__%s__" % name, forward)
        Tensor._override_operator("__r%s__" % name, reverse)


_install_operators()
