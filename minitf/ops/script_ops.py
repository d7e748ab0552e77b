"""``tf.py_func``: a Python function as an op of the graph.

``tf.py_func(func, inp, Tout)`` adds a ``PyFunc`` op whose kernel calls
``func`` on the NumPy values of ``inp`` each time the op runs, and outputs
what it returns::

    def crop_center(image):                # NumPy in, NumPy out
        return image[8:-8, 8:-8]
    y = tf.py_func(crop_center, [x], tf.uint8)

The graph cannot hold a Python function, so, as in TF, the op holds a
*token* (``pyfunc_0``) and the function sits in the graph's function library
under that token (TF keeps a process-wide registry).  The op runs only in
the process that built the graph: an imported GraphDef keeps the op but not
the function, and running it raises ``InvalidArgumentError``.

The values ``func`` receives are NumPy arrays, a NumPy scalar for a scalar
and ``bytes`` for a scalar string.  It returns one array per entry of
``Tout`` (a list or tuple for several); each must have exactly the dtype
declared — a Python float is float64, not float32 — or the op fails with
TF's ``InvalidArgumentError``.  An exception inside ``func`` becomes an
``OpError`` as TF maps it: ``ValueError``/``TypeError`` ->
``InvalidArgumentError``, ``StopIteration`` -> ``OutOfRangeError``,
``NotImplementedError`` -> ``UnimplementedError``, ``MemoryError`` ->
``ResourceExhaustedError``, anything else ``UnknownError``.

Output shapes are unknown (``set_shape`` them if you know better).  A
``PyFunc`` has no gradient; ``Graph.gradient_override_map({"PyFunc": ...})``
gives it one, as in TF.  ``stateful=False`` makes a ``PyFuncStateless`` op,
which the rewrite passes may fold or deduplicate like any pure op.

Mirrors ``tensorflow/python/ops/script_ops.py`` (``py_func``,
``numpy_function``) and ``tensorflow/python/lib/core/py_func.cc``; the kernel
is ``plugins/numpy_cpu/kernels/script.py``.
"""

import itertools

from minitf.framework import dtypes, errors
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import unknown_shape
from minitf.ops.op_def_library import apply_op, define_op, graph_of, not_differentiable

_tokens = itertools.count()


class PyFuncEntry:
    """What the function library holds for a ``PyFunc`` op: the Python callable.

    A wrapper rather than the callable itself, so that the library never
    mistakes it for a traced function (it has no ``graph`` or
    ``to_function_def``).
    """

    def __init__(self, func):
        self.func = func


def _py_func_op(name, stateful, doc):
    return define_op(
        name, inputs=("input*",), attrs={"token": None, "Tin": [], "Tout": None},
        num_outputs=lambda attrs: len(attrs["Tout"]),
        shape_fn=lambda op: [unknown_shape()] * len(op.get_attr("Tout")),
        dtype_fn=lambda op: [dtypes.as_dtype(t) for t in op.get_attr("Tout")],
        stateful=stateful, stacklevel=2, doc=doc)


_py_func = _py_func_op("PyFunc", True, "Calls a Python function on the inputs' values.")
_py_func_stateless = _py_func_op("PyFuncStateless", False,
                                 "PyFunc of a pure function: the passes may fold it.")
not_differentiable("PyFunc", "PyFuncStateless",
                   reason="a Python function; give one with gradient_override_map")


def py_func(func, inp, Tout, stateful=True, name=None):  # noqa: N803 - TF's argument name
    """Wraps the Python function ``func`` as an op (``tf.py_func``).

    Args:
        func: a callable taking one NumPy value per tensor of ``inp`` and
            returning a NumPy value (or a list/tuple of them) of the dtypes ``Tout``.
        inp: the list of input tensors.
        Tout: a dtype (one output) or a list/tuple of dtypes (that many outputs).
        stateful: True (the default): the op may have effects and always runs;
            False: ``func`` is a pure function (a ``PyFuncStateless`` op).
        name: the op name (default ``PyFunc``).

    Returns:
        One tensor for a single dtype ``Tout``; a list of tensors for a list
        (the Operation itself for an empty list).

    Raises:
        InvalidArgumentError, UnknownError, ...: at run time, when ``func``
            raises or returns values of the wrong number or dtype.

    Example:
        >>> y = tf.py_func(lambda a: a * 2, [tf.constant([1.0, 2.0])], tf.float32)
        >>> sess.run(y)
        array([2., 4.], dtype=float32)
    """
    is_list = isinstance(Tout, (list, tuple))
    out_types = [dtypes.as_dtype(t).base_dtype for t in (Tout if is_list else [Tout])]
    values = list(inp) if isinstance(inp, (list, tuple)) else [inp]
    graph = graph_of(values)
    with graph.as_default():
        inputs = [convert_to_tensor(value) for value in values]
        token = "pyfunc_%d" % next(_tokens)
        graph._add_function(token, PyFuncEntry(func))
        op_def = _py_func if stateful else _py_func_stateless
        attrs = {"token": token, "Tin": [t.dtype.base_dtype for t in inputs], "Tout": out_types}
        result = apply_op(op_def, [inputs], attrs=attrs, name=name or op_def.name)
    if not out_types:
        return result  # the Operation: it has no outputs
    outputs = result if isinstance(result, list) else [result]
    return outputs if is_list else outputs[0]


def numpy_function(func, inp, Tout, name=None):  # noqa: N803 - TF's argument name
    """``tf.numpy_function``: :func:`py_func` with ``stateful=True`` (TF 1.14+'s name)."""
    return py_func(func, inp, Tout, stateful=True, name=name)


def lookup(graph, token):
    """The Python function of the ``PyFunc`` op with ``token`` in ``graph`` (for the kernel).

    Raises:
        InvalidArgumentError: when the graph does not hold it (an imported
            graph), with TF's message.
    """
    graph = getattr(graph, "copied_from", None) or graph  # a step's copy of the user's graph
    entry = graph._get_function(token)
    if not isinstance(entry, PyFuncEntry):
        raise errors.InvalidArgumentError(
            None, None, "ValueError: Could not find callback with key=%s in the registry. "
            "(The Python functions of tf.py_func live only in the process that built the "
            "graph.)" % token)
    return entry.func


__all__ = ["lookup", "numpy_function", "py_func"]
