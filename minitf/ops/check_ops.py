"""``tf.assert_*``: element-wise checks made of a comparison and an ``Assert``.

``tf.assert_equal(x, y)`` builds ``Assert(reduce_all(equal(x, y)), [...])``
inside a name scope ``assert_equal``; like TF1, when both operands are known
while the graph is built the check is done at once and a failing one raises
``InvalidArgumentError`` at construction.  Use the returned op as a control
dependency::

    with tf.control_dependencies([tf.assert_positive(x)]):
        y = tf.log(x)

Mirrors ``tensorflow/python/ops/check_ops.py``.
"""

import numpy as np

from minitf.framework import errors, graph as graph_lib, tensor_util
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import comparison_ops, control_flow_ops, reduction_ops
from minitf.ops.logging_ops import Assert

_NUMPY_COMPARE = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
                  ">": np.greater, ">=": np.greater_equal}


def _binary_assert(symbol, compare, opname, x, y, data, summarize, message, name):
    with graph_lib.get_default_graph().name_scope(name or opname):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype.base_dtype)
        if data is None:
            data = [message or "", "Condition x %s y did not hold element-wise:" % symbol,
                    "x (%s) = " % x.name, x, "y (%s) = " % y.name, y]
        elif message is not None:
            data = [message] + list(data)
        x_static, y_static = tensor_util.constant_value(x), tensor_util.constant_value(y)
        if x_static is not None and y_static is not None:
            if not np.all(_NUMPY_COMPARE[symbol](x_static, y_static)):
                raise errors.InvalidArgumentError(None, None, "\n".join(
                    _static_text(item, x, y) for item in data))
            return control_flow_ops.no_op()
        condition = reduction_ops.reduce_all(compare(x, y))
        return Assert(condition, data, summarize=summarize)


def _static_text(item, x, y):
    if item is x or item is y:
        return str(tensor_util.constant_value(item))
    return item if isinstance(item, str) else str(item)


def _compare_to_zero(compare_fn, opname, x, zero_first, data, summarize, message, name):
    """``compare_fn(0, x)`` (or ``(x, 0)``) in the scope ``opname``, as TF builds
    ``assert_positive(x)`` from ``assert_less(0, x)``."""
    with graph_lib.get_default_graph().name_scope(name or opname):
        x = convert_to_tensor(x, name="x")
        zero = np.zeros((), dtype=x.dtype.as_numpy_dtype)
        operands = (zero, x) if zero_first else (x, zero)
        return compare_fn(*operands, data=data, summarize=summarize, message=message)


def assert_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Asserts ``x == y`` element-wise (``tf.assert_equal``)."""
    return _binary_assert("==", comparison_ops.equal, "assert_equal", x, y, data, summarize,
                          message, name)


def assert_none_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Asserts ``x != y`` element-wise."""
    return _binary_assert("!=", comparison_ops.not_equal, "assert_none_equal", x, y, data,
                          summarize, message, name)


def assert_less(x, y, data=None, summarize=None, message=None, name=None):
    """Asserts ``x < y`` element-wise."""
    return _binary_assert("<", comparison_ops.less, "assert_less", x, y, data, summarize,
                          message, name)


def assert_less_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Asserts ``x <= y`` element-wise."""
    return _binary_assert("<=", comparison_ops.less_equal, "assert_less_equal", x, y, data,
                          summarize, message, name)


def assert_greater(x, y, data=None, summarize=None, message=None, name=None):
    """Asserts ``x > y`` element-wise."""
    return _binary_assert(">", comparison_ops.greater, "assert_greater", x, y, data, summarize,
                          message, name)


def assert_greater_equal(x, y, data=None, summarize=None, message=None, name=None):
    """Asserts ``x >= y`` element-wise."""
    return _binary_assert(">=", comparison_ops.greater_equal, "assert_greater_equal", x, y, data,
                          summarize, message, name)


def assert_positive(x, data=None, summarize=None, message=None, name=None):
    """Asserts ``x > 0`` element-wise."""
    return _compare_to_zero(assert_less, "assert_positive", x, True,
                            data, summarize, message, name)


def assert_negative(x, data=None, summarize=None, message=None, name=None):
    """Asserts ``x < 0`` element-wise."""
    return _compare_to_zero(assert_less, "assert_negative", x, False,
                            data, summarize, message, name)


def assert_non_negative(x, data=None, summarize=None, message=None, name=None):
    """Asserts ``x >= 0`` element-wise."""
    return _compare_to_zero(assert_less_equal, "assert_non_negative", x, True,
                            data, summarize, message, name)


def assert_non_positive(x, data=None, summarize=None, message=None, name=None):
    """Asserts ``x <= 0`` element-wise."""
    return _compare_to_zero(assert_less_equal, "assert_non_positive", x, False,
                            data, summarize, message, name)


def assert_rank(x, rank, message=None, name=None):
    """Asserts that ``x`` has rank ``rank`` (a Python int, checked while building).

    Raises:
        ValueError: if the static rank of ``x`` is known and differs.
        NotImplementedError: if it is unknown (minitf checks ranks statically only).
    """
    x = convert_to_tensor(x)
    if x.shape.ndims is None:
        raise NotImplementedError("assert_rank of %s: its rank is not known while building the "
                                  "graph; minitf only checks ranks statically" % x.name)
    if x.shape.ndims != rank:
        raise ValueError("%sTensor %s must have rank %d.  Received rank %d, shape %s"
                         % ((message + " ") if message else "", x.name, rank, x.shape.ndims,
                            x.shape))
    return control_flow_ops.no_op(name=name or "assert_rank")


__all__ = ["assert_equal", "assert_greater", "assert_greater_equal", "assert_less",
           "assert_less_equal", "assert_negative", "assert_non_negative", "assert_non_positive",
           "assert_none_equal", "assert_positive", "assert_rank"]
