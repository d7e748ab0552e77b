"""``tf.map_fn``, ``tf.scan``, ``tf.foldl``, ``tf.foldr``: higher-order functions as loops.

Each is a ``tf.while_loop`` over the first dimension of ``elems``: the
elements are unstacked into a :class:`~minitf.ops.tensor_array_ops.TensorArray`
read once per iteration, and results (for ``map_fn`` and ``scan``) are written
into another one that is stacked after the loop.  Gradients therefore come
from the loop and TensorArray gradients — nothing here is special.

``elems`` may be a nested structure of tensors with the same first dimension;
``fn`` then receives the same structure of slices.

Mirrors ``tensorflow/python/ops/functional_ops.py`` and ``map_fn.py`` (TF1).
"""

from minitf.framework import dtypes as dtypes_lib
from minitf.framework.graph import get_default_graph
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.ops import array_ops
from minitf.ops import control_flow_context as cfc
from minitf.ops.tensor_array_ops import TensorArray
from minitf.ops.while_loop import while_loop


def _elements(elems):
    """The flat element tensors, their TensorArrays (unstacked) and their common length."""
    flat = [convert_to_tensor(e, name="elem") for e in cfc.flatten(elems)]
    if not flat:
        raise ValueError("elems must be a tensor or a non-empty structure of tensors")
    for e in flat:
        if e.shape.ndims == 0:
            raise ValueError("elems must be 1+ dimensional, got a scalar %s" % e.name)
    n = array_ops.shape(flat[0])[0]
    static_n = flat[0].shape.as_list()[0] if flat[0].shape.ndims else None
    arrays = [TensorArray(e.dtype, size=n, element_shape=e.shape[1:] if e.shape.ndims else None,
                          name="TensorArrayUnstack").unstack(e) for e in flat]
    return flat, arrays, n, static_n


def _read(elems, arrays, i):
    return cfc.pack_sequence_as(elems, [a.read(i) for a in arrays])


def _set_leading_dim(tensors, static_n):
    for t in tensors:
        if t.shape.ndims is not None and t.shape.ndims > 0:
            t.set_shape([static_n] + [None] * (t.shape.ndims - 1))
    return tensors


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True, swap_memory=False,
           infer_shape=True, name=None):
    """Applies ``fn`` to the elements of ``elems`` (along axis 0), stacks the results (``tf.map_fn``).

    Args:
        fn: ``fn(element) -> result`` (nested structures allowed).
        elems: a tensor or structure of tensors, unpacked along axis 0.
        dtype: the structure of dtypes of ``fn``'s result, when it differs
            from ``elems``'.
        parallel_iterations: iterations that may run at once (default 10).
        back_prop: allow gradients through the loop.
        swap_memory, infer_shape: accepted for compatibility.
        name: the name scope (default ``map``).

    Returns:
        The results stacked along a new axis 0, in ``fn``'s result structure.

    Example:
        >>> tf.map_fn(lambda x: x * x, tf.constant([1.0, 2.0, 3.0]))   # [1, 4, 9]
    """
    del swap_memory, infer_shape
    if not callable(fn):
        raise TypeError("fn must be callable.")
    graph = get_default_graph()
    with graph.name_scope(name or "map"):
        flat, arrays, n, static_n = _elements(elems)
        out_dtypes = (cfc.flatten(dtype) if dtype is not None
                      else [e.dtype.base_dtype for e in flat])
        outputs = [TensorArray(dtypes_lib.as_dtype(d), size=n, name="TensorArray")
                   for d in out_dtypes]
        structure = [dtype if dtype is not None else elems]

        def body(i, outs):
            result = fn(_read(elems, arrays, i))
            flat_result = cfc.flatten(result)
            if len(flat_result) != len(outs):
                raise ValueError("The structure of fn's result %s does not match the "
                                 "structure of dtype %s" % (result, structure[0]))
            structure[0] = result
            return i + 1, [ta.write(i, r) for ta, r in zip(outs, flat_result)]

        _, outputs = while_loop(lambda i, _: i < n, body, (0, outputs),
                                parallel_iterations=parallel_iterations or 10,
                                back_prop=back_prop)
        stacked = _set_leading_dim([ta.stack() for ta in outputs], static_n)
        return cfc.pack_sequence_as(structure[0], stacked)


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
         swap_memory=False, infer_shape=True, reverse=False, name=None):
    """Running accumulation ``a_k = fn(a_{k-1}, x_k)``, every ``a_k`` stacked (``tf.scan``).

    Args:
        fn: ``fn(accumulator, element) -> accumulator``.
        elems: a tensor or structure of tensors, unpacked along axis 0.
        initializer: the initial accumulator (default: the first element,
            which then starts the output).
        reverse: scan from the last element to the first.
        parallel_iterations, back_prop, swap_memory, infer_shape, name: as
            for :func:`map_fn` (name default ``scan``).

    Example:
        >>> tf.scan(lambda a, x: a + x, tf.constant([1, 2, 3, 4]))   # [1, 3, 6, 10]
    """
    del swap_memory, infer_shape
    if not callable(fn):
        raise TypeError("fn must be callable.")
    graph = get_default_graph()
    with graph.name_scope(name or "scan"):
        flat, arrays, n, static_n = _elements(elems)
        if initializer is None:
            first = n - 1 if reverse else 0
            acc = _read(elems, arrays, first)
            start = 1
        else:
            acc = initializer
            start = 0
        flat_acc = [convert_to_tensor(a) for a in cfc.flatten(acc)]
        outputs = [TensorArray(a.dtype, size=n, name="TensorArray") for a in flat_acc]
        if initializer is None:
            outputs = [ta.write(n - 1 if reverse else 0, a) for ta, a in zip(outputs, flat_acc)]

        def body(i, a, outs):
            index = n - 1 - i if reverse else i
            new = fn(cfc.pack_sequence_as(acc, a), _read(elems, arrays, index))
            flat_new = [convert_to_tensor(v) for v in cfc.flatten(new)]
            return i + 1, flat_new, [ta.write(index, v) for ta, v in zip(outs, flat_new)]

        _, _, outputs = while_loop(lambda i, a, outs: i < n, body, (start, flat_acc, outputs),
                                   parallel_iterations=parallel_iterations, back_prop=back_prop)
        stacked = _set_leading_dim([ta.stack() for ta in outputs], static_n)
        return cfc.pack_sequence_as(acc, stacked)


def _fold(fn, elems, initializer, parallel_iterations, back_prop, reverse, name):
    if not callable(fn):
        raise TypeError("fn must be callable.")
    graph = get_default_graph()
    with graph.name_scope(name):
        flat, arrays, n, _ = _elements(elems)
        if initializer is None:
            acc, start = _read(elems, arrays, n - 1 if reverse else 0), 1
        else:
            acc, start = initializer, 0
        flat_acc = [convert_to_tensor(a) for a in cfc.flatten(acc)]

        def body(i, a):
            index = n - 1 - i if reverse else i
            new = fn(cfc.pack_sequence_as(acc, a), _read(elems, arrays, index))
            return i + 1, [convert_to_tensor(v) for v in cfc.flatten(new)]

        _, result = while_loop(lambda i, a: i < n, body, (start, flat_acc),
                               parallel_iterations=parallel_iterations, back_prop=back_prop)
        return cfc.pack_sequence_as(acc, result)


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """``fn(...fn(fn(initializer, x_0), x_1)..., x_n-1)`` (``tf.foldl``).

    Without ``initializer`` the first element is the initial accumulator.

    Example:
        >>> tf.foldl(lambda a, x: a + x, tf.constant([1, 2, 3]))   # 6
    """
    del swap_memory
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, False, name or "foldl")


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """Like :func:`foldl`, from the last element to the first (``tf.foldr``)."""
    del swap_memory
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, True, name or "foldr")


__all__ = ["map_fn", "scan", "foldl", "foldr"]
