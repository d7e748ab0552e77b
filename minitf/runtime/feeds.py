"""Feeds: checking and converting the values passed in ``feed_dict``.

Any tensor may be fed (not only placeholders), by the Tensor itself or by its
name (``"x:0"``).  Each fed value is converted to the tensor's dtype and its
shape checked against the tensor's static shape.  As in TF1, a wrong shape is
a ``ValueError`` ("Cannot feed value of shape (3,) for Tensor 'x:0', which has
shape '(2,)'"), and conversion follows ``np.asarray(value, dtype)`` — so a
float fed to an int32 tensor is truncated, exactly as TF1 does — while a value
of another kind altogether (a string for a number, a Tensor) or a Python int
that overflows the dtype is a ``TypeError``.
"""

import numpy as np

from minitf.framework import dtypes, tensor_util
from minitf.framework.tensor import Tensor
from minitf.runtime.resources import FedRef

# Which source kinds (NumPy dtype kinds) convert to which target kinds.
_CONVERTIBLE_KINDS = {"b": "biuf", "i": "biuf", "u": "biuf", "f": "biuf"}


def feed_tensor(graph, key):
    """The Tensor a ``feed_dict`` key names.

    Raises:
        TypeError: if the key cannot name a tensor.
        ValueError: if the tensor is of another graph or may not be fed.
    """
    try:
        tensor = graph.as_graph_element(key, allow_tensor=True, allow_operation=False)
    except (TypeError, KeyError, ValueError) as e:
        if isinstance(e, ValueError) and "not an element of this graph" in str(e):
            raise ValueError("Cannot interpret feed_dict key as Tensor: Tensor %s is not an "
                             "element of this graph." % (key,)) from None
        raise TypeError("Cannot interpret feed_dict key as Tensor: %s"
                        % (e.args[0] if e.args else e)) from None
    if not graph.is_feedable(tensor):
        raise ValueError("Tensor %s may not be fed." % tensor.name)
    return tensor


def make_feed_converter(tensor):
    """Returns ``convert(value) -> array`` for values fed to ``tensor``."""
    np_dtype = np.dtype(tensor.dtype.base_dtype.as_numpy_dtype)
    shape = tensor.shape
    fixed = tuple(shape.as_list()) if shape.is_fully_defined() else None
    # A partly known shape (a batch of any size) is checked against its known
    # sizes directly, without building a TensorShape on every run.
    rank = shape.ndims
    known = [] if rank is None else [(i, d) for i, d in enumerate(shape.as_list()) if d is not None]
    wrap = FedRef if tensor.dtype.is_ref else None

    def fits(array_shape):
        return rank is None or (len(array_shape) == rank
                                and all(array_shape[i] == d for i, d in known))

    def convert(value):
        if type(value) is np.ndarray and value.dtype == np_dtype:
            array = value
        else:
            array = _to_array(value, np_dtype, tensor)
        if array.shape != fixed and (fixed is not None or not fits(array.shape)):
            raise ValueError("Cannot feed value of shape %s for Tensor '%s', which has shape '%s'"
                             % (_shape_str(array.shape), tensor.name, shape))
        return array if wrap is None else wrap(tensor.op.name, array)
    return convert


def _to_array(value, np_dtype, tensor):
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        raise TypeError("The value of a feed cannot be a tf.Tensor object. Acceptable feed values "
                        "include Python scalars, strings, lists, numpy ndarrays, or TensorHandles. "
                        "(fed to '%s')" % tensor.name)
    try:
        source = np.asarray(value)
    except ValueError as e:
        raise ValueError("Cannot feed value %r for Tensor '%s': %s" % (value, tensor.name, e)) from None
    if tensor.dtype.base_dtype == dtypes.string:
        return tensor_util.string_array(source)
    if np_dtype.kind == "O":
        return source.astype(object)
    if source.dtype.kind in "US" and np_dtype.kind in "biuf":  # TF1: np.asarray's ValueError
        raise ValueError("Cannot feed value %r to Tensor '%s' of dtype %s: could not convert "
                         "string to %s" % (value, tensor.name, tensor.dtype.base_dtype.name,
                                           tensor.dtype.base_dtype.name))
    if source.dtype.kind not in _CONVERTIBLE_KINDS.get(np_dtype.kind, np_dtype.kind):
        raise TypeError("Cannot feed value of type %s into Tensor '%s' of dtype %s"
                        % (source.dtype, tensor.name, tensor.dtype.base_dtype.name))
    with np.errstate(all="ignore"):
        array = source.astype(np_dtype, copy=False)
    if source.dtype.kind in "iu" and np_dtype.kind in "iu" and not np.array_equal(array, source):
        raise TypeError("Value fed to Tensor '%s' does not fit its dtype %s"
                        % (tensor.name, tensor.dtype.base_dtype.name))
    return array


def _shape_str(shape):
    return "(%s,)" % shape[0] if len(shape) == 1 else "(%s)" % ", ".join(str(d) for d in shape)
