"""CPU kernels of the checkpoint ops ``SaveV2`` and ``RestoreV2``.

They translate between the ops' inputs (string tensors naming the file and
the keys) and :mod:`minitf.train.checkpoint_format`, which owns the bytes on
disk, its checksums and its atomic writes.
"""

import os

import numpy as np

from minitf.plugin import checkpoint_format, errors, parse_shape_and_slice
from minitf_numpy_cpu.kernels.table import kernel


def _string(value):
    value = value.item() if isinstance(value, np.ndarray) else value
    return os.fsdecode(value) if isinstance(value, bytes) else str(value)


def _strings(ctx, array, what, count=None):
    items = [_string(v) for v in np.asarray(array, dtype=object).reshape(-1)]
    if count is not None and len(items) != count:
        raise ctx.invalid_argument("%s has %d entries, expected %d" % (what, len(items), count))
    return items


@kernel("SaveV2")
def save_v2(ctx, prefix, tensor_names, shape_and_slices, *tensors, dtypes):
    names = _strings(ctx, tensor_names, "tensor_names", len(tensors))
    specs = _strings(ctx, shape_and_slices, "shape_and_slices", len(tensors))
    if len(set(names)) != len(names):
        raise ctx.invalid_argument("Duplicate tensor names in SaveV2: %s"
                                   % sorted({n for n in names if names.count(n) > 1}))
    for name, spec, value in zip(names, specs, tensors):
        parsed = parse_shape_and_slice(spec)
        if parsed is not None and (list(np.shape(value)) != parsed[0]
                                   or any(s != (0, -1) for s in parsed[1])):
            raise ctx.error(errors.UnimplementedError,
                            "SaveV2 of a slice (tensor_name = %s, spec %r) is not supported: "
                            "minitf saves whole tensors (shape_and_slices \"\")" % (name, spec))
    checkpoint_format.write_bundle(_string(prefix), dict(zip(names, tensors)))


@kernel("RestoreV2")
def restore_v2(ctx, prefix, tensor_names, shape_and_slices, dtypes):
    names = _strings(ctx, tensor_names, "tensor_names", len(dtypes))
    specs = _strings(ctx, shape_and_slices, "shape_and_slices", len(dtypes))
    reader = checkpoint_format.BundleReader(_string(prefix))
    outputs = []
    for name, spec, dtype, out_dtype in zip(names, specs, dtypes, ctx.output_dtypes):
        stored_dtype = reader.dtype(name)  # NotFoundError "Key ... not found in checkpoint"
        if stored_dtype != dtype.base_dtype:
            raise ctx.invalid_argument(
                "tensor_name = %s; expected dtype %s does not equal original dtype %s"
                % (name, dtype.base_dtype.name, stored_dtype.name))
        value = _slice(ctx, name, spec, reader.shape(name), reader.read(name))
        outputs.append(value if out_dtype is np.object_ else value.astype(out_dtype, copy=False))
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _slice(ctx, name, spec, stored_shape, value):
    try:
        parsed = parse_shape_and_slice(spec)
    except ValueError as e:
        raise ctx.invalid_argument(str(e)) from None
    if parsed is None:
        return value
    shape, slices = parsed
    if shape != stored_shape:
        raise ctx.invalid_argument(
            "tensor_name = %s; shape in shape_and_slice spec %s does not match the shape stored "
            "in checkpoint: %s" % (name, shape, stored_shape))
    index = []
    for dim, (start, length) in zip(shape, slices):
        stop = dim if length == -1 else start + length
        if not 0 <= start <= stop <= dim:
            raise ctx.invalid_argument("tensor_name = %s; slice %r is outside shape %s"
                                       % (name, spec, shape))
        index.append(slice(start, stop))
    return value[tuple(index)]
