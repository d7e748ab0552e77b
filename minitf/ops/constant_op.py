"""Constants: the ``Const`` op, ``tf.constant`` and Python-value conversion.

A constant's value lives in the graph (attr ``value``), so it is known while
the graph is built — shape functions may read it through
:func:`~minitf.framework.tensor_util.constant_value`.

This module also registers the conversion that turns Python numbers, lists and
NumPy arrays into constants wherever a Tensor is expected.  The dtype rules
are TF's: Python ints become int32 (int64 when too large), floats float32,
NumPy arrays keep their dtype; a requested dtype must hold the value exactly.
"""

import numbers

import numpy as np

from minitf.framework import dtypes, tensor_util
from minitf.framework.tensor_conversion import register_tensor_conversion_function
from minitf.framework.tensor_shape import TensorShape
from minitf.ops.op_def_library import apply_op, define_op, not_differentiable

_const = define_op(
    "Const", outputs=("output",), attrs={"value": None, "dtype": None},
    shape_fn=lambda op: [TensorShape(op.get_attr("value").shape)],
    doc="A constant tensor held in the graph.")
not_differentiable("Const", reason="it has no inputs")


def _infer_dtype(value):
    """TF's dtype for a Python/NumPy value when none is requested."""
    if isinstance(value, (np.ndarray, np.generic)):
        return dtypes.as_dtype(value.dtype)
    flat = list(_flatten(value))
    if any(isinstance(v, (str, bytes)) for v in flat):
        return dtypes.string
    if flat and all(isinstance(v, (bool, np.bool_)) for v in flat):
        return dtypes.bool
    if any(isinstance(v, (float, np.floating)) for v in flat):
        return dtypes.float32
    if any(isinstance(v, complex) for v in flat):
        raise TypeError("complex values are not supported by minitf: %r" % (value,))
    ints = [int(v) for v in flat]
    if ints and (min(ints) < -2 ** 31 or max(ints) >= 2 ** 31):
        return dtypes.int64
    return dtypes.int32


def _flatten(value):
    if isinstance(value, (list, tuple)):
        for v in value:
            yield from _flatten(v)
    elif isinstance(value, np.ndarray):
        yield from value.reshape(-1).tolist()
    else:
        yield value


def to_numpy(value, dtype=None):
    """``value`` as a NumPy array of ``dtype`` (inferred when None).

    Raises:
        TypeError: if a Python value does not fit ``dtype`` exactly (TF's
            "Expected int32, got 1.5 of type 'float' instead.").
    """
    dtype = _infer_dtype(value) if dtype is None else dtypes.as_dtype(dtype).base_dtype
    from_python = not isinstance(value, (np.ndarray, np.generic))
    if from_python:
        _check_python_kinds(value, dtype)
    if dtype == dtypes.string:
        return tensor_util.string_array(value)
    try:
        source = np.asarray(value)
    except ValueError as e:
        raise ValueError("Argument must be a dense tensor: %r - %s" % (value, e)) from None
    if source.dtype.kind in "OUS":
        raise TypeError("Expected %s, got %r of type '%s' instead."
                        % (dtype.name, value, type(value).__name__))
    with np.errstate(all="ignore"):
        result = source.astype(dtype.as_numpy_dtype)
    # Python floats may round (0.1 -> float32); ints and bools must be exact.
    rounds = result.dtype.kind == "f" and source.dtype.kind in "fiu"
    lossy = from_python and not rounds and not np.array_equal(result, source)
    if lossy or (not from_python and not np.can_cast(source.dtype, result.dtype, "same_kind")
                 and not np.array_equal(result, source)):
        raise TypeError("Expected %s, got %r of type '%s' instead."
                        % (dtype.name, value, type(value).__name__))
    return result


def _check_python_kinds(value, dtype):
    """TF's per-element filter: no Python float may become an integer, only
    Python bools may become a bool, only str/bytes a string
    (``tf.constant(2.0, tf.int32)`` is a TypeError even though 2.0 is integral)."""
    for v in _flatten(value):
        if ((dtype.is_integer and isinstance(v, float))
                or (dtype.is_bool and not isinstance(v, (bool, np.bool_)))
                or (dtype == dtypes.string and not isinstance(v, (str, bytes)))):
            raise TypeError("Expected %s, got %r of type '%s' instead."
                            % (dtype.name, v, type(v).__name__))


def constant(value, dtype=None, shape=None, name="Const", verify_shape=False):
    """Creates a constant tensor (``tf.constant``).

    Args:
        value: a Python value or NumPy array.
        dtype: the element type (default: inferred from ``value``).
        shape: optional shape; a scalar is broadcast to it, a shorter list is
            padded with its last element (TF1), a list of the right size is
            reshaped.
        name: op name.
        verify_shape: require ``value``'s own shape to equal ``shape``.

    Example:
        >>> tf.constant([1.0, 2.0])
        Tensor("Const:0", shape=(2,), dtype=float32)

    Raises:
        TypeError: if ``value`` does not fit ``dtype``.
        ValueError: if ``value`` does not fit ``shape``, or is None.
    """
    if value is None:
        raise ValueError("None values not supported.")
    array = to_numpy(value, dtype)
    if shape is not None:
        array = _fit_to_shape(array, shape, verify_shape)
    array = np.array(array, copy=True)
    array.flags.writeable = False
    return apply_op(_const, [], attrs={"value": array, "dtype": dtypes.as_dtype(array.dtype)},
                    name=name)


def _fit_to_shape(array, shape, verify_shape):
    shape = tuple(TensorShape(shape).as_list())
    if array.shape == shape:
        return array
    if verify_shape:
        raise TypeError("Expected Tensor's shape: %s, got %s." % (shape, array.shape))
    count = int(np.prod(shape))
    if array.size == 1:
        return np.broadcast_to(array.reshape(()), shape)
    if array.size > count:
        raise ValueError("Too many elements provided. Needed at most %d, but received %d"
                        % (count, array.size))
    flat = array.reshape(-1)
    padded = np.concatenate([flat, np.repeat(flat[-1:], count - flat.size)])
    return padded.reshape(shape)


def _constant_conversion(value, dtype=None, name=None, as_ref=False):
    del as_ref
    return constant(value, dtype=dtype, name=name or "Const")


register_tensor_conversion_function(
    (numbers.Number, np.ndarray, np.generic, list, tuple, str, bytes), _constant_conversion,
    priority=100)
