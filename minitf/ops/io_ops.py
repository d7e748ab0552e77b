"""Checkpoint ops: ``SaveV2`` writes tensors to a checkpoint, ``RestoreV2`` reads them.

A ``tf.train.Saver`` is made of these ops (see :mod:`minitf.train.saver`):
saving is running a ``SaveV2`` op, restoring is running ``RestoreV2`` and
assigning its outputs to the variables.  Like every op they are declared
here and run by a device's kernels (the CPU plugin's ``kernels/io.py``, which
writes the format described in :mod:`minitf.train.checkpoint_format`).

``shape_and_slices`` says, per tensor, which part of it to save or restore:
``""`` means the whole tensor; otherwise ``"dim0 dim1 ... slice"`` gives the
full shape and a ``:``-separated slice per dimension, each ``-`` (all of it)
or ``start,length`` — TF's ``TensorSlice`` spec (e.g. ``"4 3 0,2:-"`` is rows
0-1 of a 4x3 tensor).

Mirrors ``tensorflow/python/ops/io_ops.py`` and ``gen_io_ops.save_v2``/
``restore_v2``.
"""

from minitf.framework import dtypes
from minitf.framework import tensor_util
from minitf.framework.tensor_shape import TensorShape, unknown_shape
from minitf.ops.op_def_library import apply_op, define_op, not_differentiable


def parse_shape_and_slice(spec):
    """Parses one ``shape_and_slices`` entry.

    Returns:
        None for ``""`` (the whole tensor), else ``(full_shape, slices)``
        where ``slices`` is a list of ``(start, length)`` per dimension
        (``length`` -1: to the end).

    Raises:
        ValueError: if ``spec`` is malformed.
    """
    spec = spec.decode("utf-8") if isinstance(spec, bytes) else str(spec)
    if not spec:
        return None
    parts = spec.split(" ")
    try:
        shape = [int(d) for d in parts[:-1]]
        slices = []
        for item in parts[-1].split(":") if parts[-1] else []:
            if item == "-":
                slices.append((0, -1))
            else:
                start, length = item.split(",")
                slices.append((int(start), int(length)))
    except ValueError:
        raise ValueError("Invalid shape_and_slice spec %r: expected 'dim0 dim1 ... slice', e.g. "
                         "'4 3 0,2:-'" % spec) from None
    if len(slices) != len(shape):
        raise ValueError("Invalid shape_and_slice spec %r: %d dimensions but %d slices"
                         % (spec, len(shape), len(slices)))
    return shape, slices


def _sliced_shape(shape, slices):
    return [dim if length == -1 else length for dim, (_, length) in zip(shape, slices)]


# ---- SaveV2 ------------------------------------------------------------------------------------
_save_v2 = define_op(
    "SaveV2", inputs=("prefix", "tensor_names", "shape_and_slices", "tensors*"), outputs=(),
    attrs={"dtypes": None}, shape_fn=lambda op: [], type_constraint=(dtypes.string,),
    stateful=True,
    doc="Writes tensors to the checkpoint <prefix>.index/.data-00000-of-00001.")
not_differentiable("SaveV2")


def save_v2(prefix, tensor_names, shape_and_slices, tensors, name=None):
    """Saves ``tensors`` under ``tensor_names`` in the checkpoint ``prefix``.

    Args:
        prefix: a scalar string tensor, the checkpoint prefix (``model.ckpt-100``).
        tensor_names: the names (keys) to save them under.
        shape_and_slices: per tensor, ``""`` (the only form ``SaveV2`` writes).
        tensors: the tensors (a variable's reference is read at run time).
        name: the op name (default ``SaveV2``).

    Returns:
        The ``SaveV2`` Operation (it has no outputs).
    """
    tensors = list(tensors)
    if not (len(tensor_names) == len(shape_and_slices) == len(tensors)):
        raise ValueError("SaveV2 needs as many tensor_names (%d) and shape_and_slices (%d) as "
                         "tensors (%d)" % (len(tensor_names), len(shape_and_slices), len(tensors)))
    return apply_op(_save_v2, [prefix, list(tensor_names), list(shape_and_slices), tensors],
                    attrs={"dtypes": [t.dtype.base_dtype for t in tensors]},
                    name=name or "SaveV2")


# ---- RestoreV2 -------------------------------------------------------------------------------
def _restore_shapes(op):
    """Known shapes where ``shape_and_slices`` is a constant with full specs."""
    count = len(op.get_attr("dtypes"))
    specs = tensor_util.constant_value(op.inputs[2])
    if specs is None:
        return [unknown_shape()] * count
    shapes = []
    for spec in list(specs.reshape(-1)) + [""] * max(0, count - specs.size):
        parsed = parse_shape_and_slice(spec)
        shapes.append(unknown_shape() if parsed is None else TensorShape(_sliced_shape(*parsed)))
    return shapes[:count]


_restore_v2 = define_op(
    "RestoreV2", inputs=("prefix", "tensor_names", "shape_and_slices"), outputs=("tensors",),
    attrs={"dtypes": None}, shape_fn=_restore_shapes,
    dtype_fn=lambda op: [dtypes.as_dtype(d) for d in op.get_attr("dtypes")],
    num_outputs=lambda attrs: len(attrs["dtypes"]), type_constraint=(dtypes.string,),
    stateful=True, doc="Reads tensors from the checkpoint <prefix>.")
not_differentiable("RestoreV2")


def restore_v2(prefix, tensor_names, shape_and_slices, dtypes, name=None):  # noqa: A002
    """Reads ``tensor_names`` from the checkpoint ``prefix``.

    Args:
        prefix: a scalar string tensor, the checkpoint prefix.
        tensor_names: the keys to read.
        shape_and_slices: per key, ``""`` for the whole tensor or a slice spec.
        dtypes: the dtype of each tensor (a mismatch is an ``InvalidArgumentError``
            at run time).
        name: the op name (default ``RestoreV2``).

    Returns:
        A list of tensors, one per name.
    """
    if len(tensor_names) != len(shape_and_slices) or len(tensor_names) != len(dtypes):
        raise ValueError("RestoreV2 needs as many shape_and_slices (%d) and dtypes (%d) as "
                         "tensor_names (%d)" % (len(shape_and_slices), len(dtypes),
                                                len(tensor_names)))
    outputs = apply_op(_restore_v2, [prefix, list(tensor_names), list(shape_and_slices)],
                       attrs={"dtypes": [_as_base_dtype(d) for d in dtypes]},
                       name=name or "RestoreV2")
    return outputs if isinstance(outputs, list) else [outputs]


def _as_base_dtype(dtype):
    return dtypes.as_dtype(dtype).base_dtype


__all__ = ["parse_shape_and_slice", "restore_v2", "save_v2"]
