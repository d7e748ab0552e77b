"""CPU kernel of ``PyFunc``/``PyFuncStateless``: call the op's Python function.

The kernel finds the function by the op's ``token``
(:func:`minitf.ops.script_ops.lookup`), calls it on the input values, and
checks what comes back against ``Tout`` exactly as TF's ``py_func.cc``: the
number of values, then each one's dtype.  An exception raised by the
function becomes the ``OpError`` TF maps its class to, its message the
exception and its traceback.
"""

import traceback

import numpy as np

from minitf.plugin import dtypes, errors, lookup_py_func
from minitf_numpy_cpu.kernels.table import kernel

# TF's mapping of a Python exception raised by the function (py_func.cc).
_ERROR_CLASSES = ((ValueError, errors.InvalidArgumentError),
                  (TypeError, errors.InvalidArgumentError),
                  (StopIteration, errors.OutOfRangeError),
                  (MemoryError, errors.ResourceExhaustedError),
                  (NotImplementedError, errors.UnimplementedError))
# TF's DataTypeString names, for its "is double, but expects float" message.
_TF_TYPE_NAMES = {dtypes.float16: "half", dtypes.float32: "float", dtypes.float64: "double"}


def _argument(value):
    """What the function receives: an array, a NumPy scalar, or ``bytes`` for a scalar string."""
    return np.asarray(value)[()] if np.ndim(value) == 0 else value


def _as_array(value):
    """TF's ``FuncRegistry._convert``: text becomes an object array of ``bytes``."""
    result = np.asarray(value, order="C")
    if result.dtype.char == "U":
        return np.vectorize(lambda x: x.encode("utf8"), otypes=[object])(result)
    if result.dtype.char == "S":
        return np.asarray(value, dtype=object)
    return result


def _results(ret):
    """The list of returned values (None: none, for an op without outputs)."""
    if isinstance(ret, bytes):
        ret = [ret]
    if isinstance(ret, (list, tuple)):
        return [_as_array(x) for x in ret]
    return [] if ret is None else [_as_array(ret)]


def _dtype_of(array):
    return dtypes.string if array.dtype == object else dtypes.as_dtype(array.dtype)


def _type_name(dtype):
    return _TF_TYPE_NAMES.get(dtype, dtype.name)


@kernel("PyFunc", "PyFuncStateless")
def py_func(ctx, *inputs, token, Tin, Tout):
    func = lookup_py_func(ctx.op.graph, token)
    try:
        ret = func(*[_argument(x) for x in inputs])
    except Exception as error:  # pylint: disable=broad-except - every error is reported
        error_class = next((tf_class for py_class, tf_class in _ERROR_CLASSES
                            if isinstance(error, py_class)), errors.UnknownError)
        raise ctx.error(error_class, "%s: %s\n%s" % (type(error).__name__, error,
                                                     traceback.format_exc())) from error
    results = _results(ret)
    if len(results) != len(Tout):
        raise ctx.invalid_argument("%s returns %d values, but expects to see %d values."
                                   % (token, len(results), len(Tout)))
    for i, (value, expected) in enumerate(zip(results, Tout)):
        got, expected = _dtype_of(value), dtypes.as_dtype(expected)
        if got != expected:
            raise ctx.invalid_argument("%d-th value returned by %s is %s, but expects %s"
                                       % (i, token, _type_name(got), _type_name(expected)))
    outputs = [value if value.shape else value[()] for value in results]
    if not outputs:
        return None
    return outputs[0] if len(outputs) == 1 else tuple(outputs)
