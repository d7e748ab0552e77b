"""``tf.convert_to_tensor``: turning Python values, arrays and variables into Tensors.

Every op constructor accepts "tensor-like" arguments.  Conversion functions are
registered per Python type (TF's ``register_tensor_conversion_function``): the
constant op registers one for numbers, lists and NumPy arrays, ``Variable``
registers one that reads the variable.  The framework itself knows none of
them.

The dtype rule: a Python number converts to the *requested* dtype if it fits
exactly (``1`` into float32 is fine, ``1.5`` into int32 is a ``TypeError``),
which is how ``x_float32 + 1`` works while ``x_int32 + x_float32`` does not.
"""

from minitf.framework import dtypes as dtypes_lib
from minitf.framework.tensor import Tensor

_conversion_functions = []  # (priority, base_type, fn)


def register_tensor_conversion_function(base_type, conversion_func, priority=100):
    """Registers ``conversion_func(value, dtype=None, name=None, as_ref=False)``.

    Lower priorities are tried first.
    """
    _conversion_functions.append((priority, base_type, conversion_func))
    _conversion_functions.sort(key=lambda entry: entry[0])


def convert_to_tensor(value, dtype=None, name=None, preferred_dtype=None, as_ref=False):
    """Converts ``value`` to a Tensor of ``dtype`` (when given).

    Args:
        value: a Tensor, Variable, Python number/list, or NumPy array.
        dtype: the required dtype; a Tensor of another dtype is a ``ValueError``
            (TF1's message), a Python value that does not fit is a ``TypeError``.
        name: name of a newly created constant.
        preferred_dtype: tried first when ``dtype`` is None, silently dropped
            if the value does not fit it.
        as_ref: return a variable's reference rather than its value.

    Raises:
        TypeError: if no conversion exists or the value does not fit ``dtype``.
        ValueError: if a Tensor's dtype differs from ``dtype``.
    """
    dtype = None if dtype is None else dtypes_lib.as_dtype(dtype)
    if isinstance(value, Tensor):
        if dtype is not None and not dtype.is_compatible_with(value.dtype):
            raise ValueError("Tensor conversion requested dtype %s for Tensor with dtype %s: %r"
                             % (dtype.name, value.dtype.name, value))
        return value
    if dtype is None and preferred_dtype is not None:
        try:
            return convert_to_tensor(value, preferred_dtype, name, as_ref=as_ref)
        except (TypeError, ValueError):
            pass
    for _, base_type, fn in _conversion_functions:
        if isinstance(value, base_type):
            result = fn(value, dtype=dtype, name=name, as_ref=as_ref)
            if result is NotImplemented:
                continue
            if dtype is not None and not dtype.is_compatible_with(result.dtype):
                raise ValueError("Tensor conversion requested dtype %s for Tensor with dtype "
                                 "%s: %r" % (dtype.name, result.dtype.name, result))
            return result
    raise TypeError("Failed to convert object of type %s to Tensor. Contents: %r. Consider "
                    "casting elements to a supported type." % (type(value), value))


def convert_n_to_tensor(values, dtype=None, name=None):
    return [convert_to_tensor(v, dtype, None if name is None else "%s_%d" % (name, i))
            for i, v in enumerate(values)]
