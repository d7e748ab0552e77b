"""Feeds: checking and converting the values passed in ``feed_dict``.

Any tensor may be fed (not only placeholders), by the Tensor itself or by its
name (``"x:0"``), and a nested structure of tensors may be fed a value of the
same structure (:func:`flatten_feed_dict`).  Each fed value is converted to
the tensor's dtype and its shape checked against the tensor's static shape.
As in TF1, a wrong shape is a ``ValueError`` ("Cannot feed value of shape
(3,) for Tensor 'x:0', which has shape '(2,)'"), and conversion follows
``np.asarray(value, dtype)`` — so a float fed to an int32 tensor is
truncated, exactly as TF1 does — while a value of another kind altogether (a
string for a number, a Tensor) or a Python int that overflows the dtype is a
``TypeError``.
"""

import numpy as np

from minitf.framework import dtypes, tensor_util
from minitf.framework.sparse_tensor import SparseTensor
from minitf.framework.tensor import Tensor
from minitf.runtime.resources import FedRef

# Which source kinds (NumPy dtype kinds) convert to which target kinds.
_CONVERTIBLE_KINDS = {"b": "biuf", "i": "biuf", "u": "biuf", "f": "biuf"}


def flatten_feed_dict(feed_dict):
    """``feed_dict`` with one tensor per key, as TF's ``Session.run`` expands it.

    A key may be a nested structure of tensors — a tuple or namedtuple such as
    an ``LSTMStateTuple`` of placeholders — fed a value of the same structure
    (tuples, lists, namedtuples; a dict's values in sorted key order)::

        sess.run(output, {cell_state: (c_value, h_value)})

    TF flattens both sides with ``nest.flatten_dict_items`` and pairs the
    leaves; a SparseTensor key then becomes its three tensors.

    Raises:
        ValueError: if a key and its value have different numbers of leaves,
            or a tensor appears in more than one key.
    """
    for key in feed_dict or ():
        if isinstance(key, (tuple, SparseTensor)):
            return expand_sparse_feeds(_flatten_dict_items(feed_dict))
    return feed_dict


def _flatten_dict_items(feed_dict):
    """TF's ``nest.flatten_dict_items``: nested keys paired leaf by leaf with their values."""
    flat = {}
    for key, value in feed_dict.items():
        keys, values = ([key], [value]) if not isinstance(key, tuple) else \
            (_flatten(key), _flatten(value))
        if len(keys) != len(values):
            raise ValueError("Could not flatten dictionary. Key had %d elements, but value had "
                             "%d elements. Key: %s, value: %s." % (len(keys), len(values),
                                                                  keys, values))
        for leaf_key, leaf_value in zip(keys, values):
            if leaf_key in flat:
                raise ValueError("Cannot flatten dict because this key is not unique: %s"
                                 % (leaf_key,))
            flat[leaf_key] = leaf_value
    return flat


def _flatten(structure):
    """The leaves of nested tuples, lists and dicts (a dict's in sorted key order), as ``nest``."""
    if isinstance(structure, dict):
        return [leaf for k in sorted(structure) for leaf in _flatten(structure[k])]
    if isinstance(structure, (tuple, list)):
        return [leaf for part in structure for leaf in _flatten(part)]
    return [structure]


def expand_sparse_feeds(feed_dict):
    """``feed_dict`` with each SparseTensor key (a ``tf.sparse_placeholder``)
    replaced by its three tensors, fed the three parts of its value — a
    ``SparseTensorValue`` or an ``(indices, values, dense_shape)`` tuple — as
    TF's ``Session`` expands them.

    Raises:
        TypeError: if a SparseTensor's value is not such a triple.
    """
    if not feed_dict or not any(isinstance(k, SparseTensor) for k in feed_dict):
        return feed_dict
    expanded = {}
    for key, value in feed_dict.items():
        if not isinstance(key, SparseTensor):
            expanded[key] = value
            continue
        if not isinstance(value, (tuple, list)) or len(value) != 3:
            raise TypeError("The value fed to a SparseTensor must be a SparseTensorValue or a "
                            "tuple (indices, values, dense_shape), got %r" % (value,))
        expanded.update(zip((key.indices, key.values, key.dense_shape), value))
    return expanded


def expand_sparse_keys(keys):
    """``keys`` with each SparseTensor replaced by its three tensors (``partial_run_setup``)."""
    return [part for key in keys for part in (
        (key.indices, key.values, key.dense_shape) if isinstance(key, SparseTensor) else (key,))]


def feed_tensor(graph, key):
    """The Tensor a ``feed_dict`` key names.

    Raises:
        TypeError: if the key cannot name a tensor, or names one of another
            graph (TF's class for both).
        ValueError: if the tensor may not be fed.
    """
    try:
        tensor = graph.as_graph_element(key, allow_tensor=True, allow_operation=False)
    except (TypeError, KeyError, ValueError) as e:
        if isinstance(e, ValueError) and "not an element of this graph" in str(e):
            raise TypeError("Cannot interpret feed_dict key as Tensor: Tensor %s is not an "
                            "element of this graph." % (key,)) from None
        raise TypeError("Cannot interpret feed_dict key as Tensor: %s"
                        % (e.args[0] if e.args else e)) from None
    if not graph.is_feedable(tensor):
        raise ValueError("Tensor %s may not be fed." % tensor.name)
    return tensor


def make_feed_converter(tensor):
    """Returns ``convert(value) -> array`` for values fed to ``tensor``."""
    np_dtype = np.dtype(tensor.dtype.base_dtype.as_numpy_dtype)
    wrap = FedRef if tensor.dtype.is_ref else None
    scalar_types, low, high = _exact_scalar_feeds(np_dtype)
    own_scalar = np_dtype.type if np_dtype.kind in "biuf" else None
    # Arrays of these kinds cast to a float dtype with nothing to check (as np.asarray).
    exact_casts = "biuf" if np_dtype.kind == "f" else ""
    check_shape, fitting = _shape_checker(tensor)

    def convert(value):
        kind = type(value)
        if kind is np.ndarray and value.dtype == np_dtype:
            array = value
        elif kind is own_scalar:  # np.float32(1) for a float32 tensor
            array = np.array(value)
        elif kind is np.ndarray and value.dtype.kind in exact_casts:  # float64 to float32
            array = value.astype(np_dtype)
        elif kind in scalar_types and low <= value <= high:
            array = np.array(value, np_dtype)
        else:
            array = _to_array(value, np_dtype, tensor)
        if array.shape not in fitting:
            check_shape(array.shape)
        return array if wrap is None else wrap(tensor.op.name, array)
    return convert


def _shape_checker(tensor, remembered=64):
    """``(check_shape, fitting)``: ``check_shape(shape)`` raises TF1's ``ValueError``
    for a shape ``tensor`` cannot take, and adds one it can to the set ``fitting``.

    A program feeds the same few shapes (its batch sizes) again and again, so
    a converter asks ``shape in fitting`` — one set lookup — and checks a
    shape against the tensor's partly known static shape only the first time
    (up to ``remembered`` shapes).
    """
    static = tensor.shape
    rank = static.ndims
    known = [] if rank is None else [(i, d) for i, d in enumerate(static.as_list())
                                     if d is not None]
    fitting = {tuple(static.as_list())} if static.is_fully_defined() else set()
    fixed = static.is_fully_defined()

    def check_shape(shape):
        if fixed or not (rank is None or (len(shape) == rank
                                          and all(shape[i] == d for i, d in known))):
            raise ValueError("Cannot feed value of shape %s for Tensor '%s', which has shape '%s'"
                             % (_shape_str(shape), tensor.name, static))
        if len(fitting) < remembered:
            fitting.add(shape)
    return check_shape, fitting


def _exact_scalar_feeds(np_dtype):
    """``(types, low, high)``: scalars of these exact types within ``[low, high]``
    convert to ``np_dtype`` with one ``np.array`` call.

    This is the fast path for the feeds users write most — ``{x: 1.0}``,
    ``{x: np.float32(1)}``, ``{n: 3}`` — and it is exact: within the range, the
    array and the absence of errors are what :func:`_to_array` gives (no
    overflow, no truncation of a float to an int, no Python int beyond int64).
    Anything else takes the general path with its TF1 checks.
    """
    int64 = np.iinfo(np.int64)
    if np_dtype.kind == "f":
        limit = float(np.finfo(np_dtype).max)
        types = (float, int, bool, np.float16, np.float32, np.float64, np.int32, np.int64,
                 np.bool_)
        return types, max(-limit, int64.min), min(limit, int64.max)
    if np_dtype.kind in "iu":
        info = np.iinfo(np_dtype)
        return (int, bool, np.int32, np.int64, np.bool_, np_dtype.type), info.min, info.max
    if np_dtype.kind == "b":
        return (bool, np.bool_), False, True
    return (), None, None


def _to_array(value, np_dtype, tensor):
    """``value`` as an array of ``np_dtype``, with TF1's checks (see the module docstring)."""
    if type(value) is np.ndarray and np_dtype.kind != "O":
        return _cast(value, value, np_dtype, tensor)  # an array: no conversion to check
    if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
        raise TypeError("The value of a feed cannot be a tf.Tensor object. Acceptable feed values "
                        "include Python scalars, strings, lists, numpy ndarrays, or TensorHandles. "
                        "(fed to '%s')" % tensor.name)
    if tensor.dtype.base_dtype == dtypes.string:
        # Straight to an object array: NumPy's bytes dtype would drop trailing NUL
        # bytes, which end many serialized protos.
        return tensor_util.string_array(value)
    try:
        source = np.asarray(value)
    except ValueError as e:
        raise ValueError("Cannot feed value %r for Tensor '%s': %s" % (value, tensor.name, e)) from None
    if np_dtype.kind == "O":
        return source.astype(object)
    return _cast(value, source, np_dtype, tensor)


def _cast(value, source, np_dtype, tensor):
    """The array ``source`` (made from the fed ``value``) cast to ``np_dtype``."""
    if source.dtype.kind in "US" and np_dtype.kind in "biuf":  # TF1: np.asarray's ValueError
        raise ValueError("Cannot feed value %r to Tensor '%s' of dtype %s: could not convert "
                         "string to %s" % (value, tensor.name, tensor.dtype.base_dtype.name,
                                           tensor.dtype.base_dtype.name))
    if source.dtype.kind not in _CONVERTIBLE_KINDS.get(np_dtype.kind, np_dtype.kind):
        raise TypeError("Cannot feed value of type %s into Tensor '%s' of dtype %s"
                        % (source.dtype, tensor.name, tensor.dtype.base_dtype.name))
    array = source.astype(np_dtype, copy=False)  # NumPy warns of NaN to int, as TF1's asarray
    if source.dtype.kind in "iu" and np_dtype.kind in "iu" and not np.array_equal(array, source):
        raise TypeError("Value fed to Tensor '%s' does not fit its dtype %s"
                        % (tensor.name, tensor.dtype.base_dtype.name))
    return array


def _shape_str(shape):
    return "(%s,)" % shape[0] if len(shape) == 1 else "(%s)" % ", ".join(str(d) for d in shape)
