"""CPU kernels of the array ops: constants, shapes, reshaping, slicing, joining,
and the scatters their gradients build (``StridedSliceGrad``, ``MirrorPadGrad``,
``UnsortedSegmentSum``).

Most kernels are one NumPy call, preceded by the checks TF's kernels make on
values only known at run time, with TF's messages (``Input to reshape is a
tensor with 6 values, but the requested shape has 4``).  NumPy often returns
views; that is safe because no kernel writes into its inputs.
"""

import math

import numpy as np

from minitf.plugin import errors, sliced_shape, strided_slice_index

from minitf_numpy_cpu.kernels.table import kernel


def _shape_string(shape):
    return "[%s]" % ",".join(str(d) for d in shape)


def _outputs(arrays):
    """The result of an op with a dynamic output count: one output is returned bare."""
    arrays = tuple(arrays)
    return arrays[0] if len(arrays) == 1 else arrays


# ---- constants, placeholders, identity ------------------------------------------------
@kernel("Const")
def const(ctx, value, dtype):
    return value


@kernel("Placeholder")
def placeholder(ctx, dtype, shape):
    # Only runs when the placeholder was not fed.
    raise errors.InvalidArgumentError(
        ctx.op.node_def, ctx.op,
        "You must feed a value for placeholder tensor '%s' with dtype %s%s"
        % (ctx.op.name, dtype.name, "" if shape.ndims is None else
           " and shape [%s]" % ",".join("?" if d is None else str(d) for d in shape.as_list())))


@kernel("PlaceholderWithDefault", "Identity", "StopGradient")
def identity(ctx, x, **attrs):
    return x


@kernel("IdentityN")
def identity_n(ctx, *inputs, T):
    return _outputs(inputs)


@kernel("NoOp")
def no_op(ctx):
    return None


# ---- shapes ----------------------------------------------------------------------------
@kernel("Shape")
def shape(ctx, x, out_type):
    return np.array(np.shape(x), dtype=ctx.output_dtypes[0])


@kernel("ShapeN")
def shape_n(ctx, *inputs, N, out_type):
    return _outputs(np.array(np.shape(x), dtype=ctx.output_dtypes[0]) for x in inputs)


@kernel("Size")
def size(ctx, x, out_type):
    return np.array(np.size(x), dtype=ctx.output_dtypes[0])


@kernel("Rank")
def rank(ctx, x):
    return np.array(np.ndim(x), dtype=np.int32)


# ---- creating --------------------------------------------------------------------------
@kernel("Fill")
def fill(ctx, dims, value):
    for d in dims:
        if d < 0:
            raise ctx.invalid_argument("Dimension %d must be >= 0" % d)
    return np.full(tuple(dims), value, dtype=ctx.output_dtypes[0])


@kernel("ZerosLike")
def zeros_like(ctx, x):
    return np.zeros_like(x)


@kernel("OneHot")
def one_hot(ctx, indices, depth, on_value, off_value, axis):
    if depth < 0:
        raise ctx.invalid_argument("depth must be non-negative, got: %d" % depth)
    hot = indices[..., np.newaxis] == np.arange(depth)  # out-of-range indices match nothing
    hot = np.moveaxis(hot, -1, axis)
    return np.where(hot, on_value, off_value).astype(ctx.output_dtypes[0])


# ---- reshaping ---------------------------------------------------------------------------
@kernel("Reshape")
def reshape(ctx, tensor, shape):
    return np.reshape(tensor, _reshape_sizes(ctx, np.shape(tensor), [int(d) for d in shape]))


def _reshape_sizes(ctx, in_shape, sizes):
    """``sizes`` with its -1 inferred, checked against the input's element count.

    As in TF, a requested 0 makes the -1 count only the input's nonzero
    dimensions, so ``[0, 3]`` reshapes to ``[0, -1]`` as ``[0, 3]``.
    """
    unknown = [i for i, d in enumerate(sizes) if d == -1]
    if len(unknown) > 1:
        raise ctx.invalid_argument("Only one input size may be -1, not both %d and %d"
                                   % tuple(unknown[:2]))
    for i, d in enumerate(sizes):
        if d < -1:
            raise ctx.invalid_argument("Size %d must be non-negative, not %d" % (i, d))
    count = math.prod(in_shape)
    if unknown:
        has_zero = 0 in sizes
        product = math.prod(d for d in sizes if d > 0)
        counted = math.prod(d for d in in_shape if d > 0 or not has_zero)
        if counted % product and not (has_zero and 0 in in_shape):
            raise ctx.invalid_argument(
                "Input to reshape is a tensor with %d values, but the requested shape requires "
                "a multiple of %d" % (count, product))
        sizes[unknown[0]] = counted // product
    if math.prod(sizes) != count:
        raise ctx.invalid_argument("Input to reshape is a tensor with %d values, but the "
                                   "requested shape has %d" % (count, math.prod(sizes)))
    return sizes


@kernel("Transpose")
def transpose(ctx, x, perm):
    perm = [int(p) for p in perm]
    if len(perm) != x.ndim:
        raise ctx.invalid_argument("transpose expects a vector of size %d. But input(1) is a "
                                   "vector of size %d" % (x.ndim, len(perm)))
    for d in range(x.ndim):
        if d not in perm:
            raise ctx.invalid_argument("%d is missing from {%s}."
                                       % (d, ",".join(str(p) for p in perm)))
    return np.transpose(x, perm)


@kernel("InvertPermutation")
def invert_permutation(ctx, x):
    n = len(x)
    inverse = np.full(n, -1, dtype=x.dtype)
    for i, d in enumerate(x):
        if not 0 <= d < n:
            raise ctx.invalid_argument("%d is not between 0 and %d" % (d, n))
        if inverse[d] != -1:
            raise ctx.invalid_argument("%d is duplicated in the input." % d)
        inverse[d] = i
    return inverse


@kernel("ReverseV2")
def reverse_v2(ctx, tensor, axis):
    axes = []
    for i, a in enumerate(np.reshape(axis, -1)):
        if not -tensor.ndim <= a < tensor.ndim:
            raise ctx.invalid_argument("'axis'[%d] = %d is out of valid range [%d, %d)"
                                       % (i, a, -tensor.ndim, tensor.ndim))
        if a % tensor.ndim in axes:
            raise ctx.invalid_argument("axis %d specified more than once." % a)
        axes.append(int(a) % tensor.ndim)
    return np.flip(tensor, axis=tuple(axes))


@kernel("ReverseSequence")
def reverse_sequence(ctx, input, seq_lengths, seq_dim, batch_dim):
    if seq_dim == batch_dim:
        raise ctx.invalid_argument("batch_dim == seq_dim == %d" % seq_dim)
    output = np.array(input, copy=True)
    for b, length in enumerate(seq_lengths):
        if length < 0:
            raise ctx.invalid_argument("seq_lens(%d) < 0" % b)
        if length > input.shape[seq_dim]:
            raise ctx.invalid_argument("seq_lens(%d) > input.dims(%d)" % (b, seq_dim))
        row = [slice(None)] * input.ndim
        row[batch_dim] = b
        row[seq_dim] = slice(0, length)
        output[tuple(row)] = np.flip(input[tuple(row)], axis=seq_dim - (batch_dim < seq_dim))
    return output


@kernel("ExpandDims")
def expand_dims(ctx, x, dim):
    axis = int(np.reshape(dim, -1)[0])
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise ctx.invalid_argument("Tried to expand dim index %d for tensor with %d dimensions."
                                   % (axis, x.ndim))
    axis %= x.ndim + 1
    return x.reshape(x.shape[:axis] + (1,) + x.shape[axis:])


@kernel("Squeeze")
def squeeze(ctx, x, squeeze_dims):
    axes = tuple(a % x.ndim for a in squeeze_dims) if squeeze_dims else tuple(
        i for i, d in enumerate(x.shape) if d == 1)
    for a in axes:
        if x.shape[a] != 1:
            raise ctx.invalid_argument("Can not squeeze dim[%d], expected a dimension of 1, got %d"
                                       % (a, x.shape[a]))
    return np.squeeze(x, axis=axes)


# ---- joining and splitting ----------------------------------------------------------------------
@kernel("Pack")
def pack(ctx, *values, axis):
    for i, v in enumerate(values[1:], 1):
        if v.shape != values[0].shape:
            raise ctx.invalid_argument(
                "Shapes of all inputs must match: values[0].shape = %s != values[%d].shape = %s"
                % (_shape_string(values[0].shape), i, _shape_string(v.shape)))
    return np.stack(values, axis=axis)


@kernel("Unpack")
def unpack(ctx, value, num, axis):
    if value.shape[axis] != num:
        raise ctx.invalid_argument("Input shape axis %d must equal %d, got shape %s"
                                   % (axis, num, _shape_string(value.shape)))
    return _outputs(np.moveaxis(value, axis, 0))


@kernel("ConcatV2")
def concat_v2(ctx, *values_and_axis):
    *values, axis = values_and_axis
    rank = values[0].ndim
    if not -rank <= axis < rank:
        raise ctx.invalid_argument("ConcatOp : Expected concatenating dimensions in the range "
                                   "[%d, %d), but got %d" % (-rank, rank, axis))
    axis = int(axis) % rank
    first = values[0].shape
    for i, v in enumerate(values[1:], 1):
        if v.ndim != rank:
            raise ctx.invalid_argument(
                "ConcatOp : Ranks of all input tensors should match: shape[0] = %s vs. "
                "shape[%d] = %s" % (_shape_string(first), i, _shape_string(v.shape)))
        for d in range(rank):
            if d != axis and v.shape[d] != first[d]:
                raise ctx.invalid_argument(
                    "ConcatOp : Dimension %d in both shapes must be equal: shape[0] = %s vs. "
                    "shape[%d] = %s" % (d, _shape_string(first), i, _shape_string(v.shape)))
    return np.concatenate(values, axis=axis)


def _split_axis(ctx, value, split_dim):
    rank = value.ndim
    if not -rank <= split_dim < rank:
        raise ctx.invalid_argument("-%d <= split_dim < %d, but got %d" % (rank, rank, split_dim))
    return int(split_dim) % rank


@kernel("Split")
def split(ctx, split_dim, value, num_split):
    axis = _split_axis(ctx, value, split_dim)
    if value.shape[axis] % num_split:
        raise ctx.invalid_argument(
            "Number of ways to split should evenly divide the split dimension, but got "
            "split_dim %d (size = %d) and num_split %d" % (axis, value.shape[axis], num_split))
    return _outputs(np.split(value, num_split, axis=axis))


@kernel("SplitV")
def split_v(ctx, value, size_splits, split_dim, num_split):
    axis = _split_axis(ctx, value, split_dim)
    sizes = [int(s) for s in size_splits]
    dim = value.shape[axis]
    known = sum(s for s in sizes if s != -1)
    if sizes.count(-1) > 1 or (-1 in sizes and known > dim) or (-1 not in sizes and known != dim):
        raise ctx.invalid_argument(
            "Determined shape must either match input shape along split_dim exactly if fully "
            "specified, or be less than the size of the input along split_dim if not fully "
            "specified.  Got: %d" % known)
    sizes = [dim - known if s == -1 else s for s in sizes]
    return _outputs(np.split(value, np.cumsum(sizes)[:-1], axis=axis))


# ---- repeating and padding --------------------------------------------------------------------
@kernel("Tile")
def tile(ctx, x, multiples):
    if len(multiples) != x.ndim:
        raise ctx.invalid_argument("Expected multiples argument to be a vector of length %d but "
                                   "got length %d" % (x.ndim, len(multiples)))
    multiples = multiples.tolist()  # Python ints: several times faster to check than NumPy's
    for i, m in enumerate(multiples):
        if m < 0:
            raise ctx.invalid_argument("Expected multiples[%d] >= 0, but got %d" % (i, m))
    return np.tile(x, multiples)


def _check_paddings(ctx, x, paddings):
    if paddings.shape != (x.ndim, 2):
        raise ctx.invalid_argument("The first dimension of paddings must be the rank of inputs"
                                   "%s %s" % (_shape_string(paddings.shape),
                                              _shape_string(x.shape)))
    for before, after in paddings:
        if before < 0 or after < 0:
            raise ctx.invalid_argument("Paddings must be non-negative: %d %d" % (before, after))


@kernel("Pad")
def pad(ctx, x, paddings):
    _check_paddings(ctx, x, paddings)
    return _np_pad(x, paddings, mode="constant")


@kernel("PadV2")
def pad_v2(ctx, x, paddings, constant_values):
    _check_paddings(ctx, x, paddings)
    return _np_pad(x, paddings, mode="constant", constant_values=constant_values)


@kernel("MirrorPad")
def mirror_pad(ctx, x, paddings, mode):
    """REFLECT mirrors around the edge element, SYMMETRIC includes it, so each
    padding may be at most dim - 1 (REFLECT) or dim (SYMMETRIC)."""
    _check_paddings(ctx, x, paddings)
    for dim, (before, after) in zip(x.shape, paddings):
        if mode == "REFLECT" and max(before, after) >= dim:
            raise ctx.invalid_argument("paddings must be less than the dimension size: %d, %d "
                                       "not less than %d" % (before, after, dim))
        if mode == "SYMMETRIC" and max(before, after) > dim:
            raise ctx.invalid_argument("paddings must be no greater than the dimension size: "
                                       "%d, %d greater than %d" % (before, after, dim))
    return _np_pad(x, paddings, mode=mode.lower())


def _np_pad(x, paddings, **kwargs):
    """``np.pad``, which rejects the ``[0, 2]`` paddings of a scalar: padding a
    scalar changes nothing."""
    return np.array(x) if x.ndim == 0 else np.pad(x, paddings, **kwargs)


@kernel("MirrorPadGrad")
def mirror_pad_grad(ctx, grad, paddings, mode):
    """Folds each mirrored copy's gradient back onto its source element.

    Along each dimension, ``np.pad(np.arange(n), (before, after), mode)`` says
    which source element every padded position copies; ``np.add.at`` sums the
    gradients of the copies into their sources."""
    _check_paddings(ctx, grad, paddings)
    for axis, (before, after) in enumerate(paddings):
        n = grad.shape[axis] - before - after
        if mode == "REFLECT" and max(before, after) >= n:
            raise ctx.invalid_argument("paddings must be less than the output dimension size: "
                                       "%d, %d not less than %d" % (before, after, n))
        if mode == "SYMMETRIC" and max(before, after) > n:
            raise ctx.invalid_argument("paddings must be no greater than the output dimension "
                                       "size: %d, %d greater than %d" % (before, after, n))
        source = np.pad(np.arange(n), (int(before), int(after)), mode=mode.lower())
        folded = np.zeros((n,) + grad.shape[:axis] + grad.shape[axis + 1:], dtype=grad.dtype)
        np.add.at(folded, source, np.moveaxis(grad, axis, 0))
        grad = np.moveaxis(folded, 0, axis)
    return grad


# ---- gathering and slicing ----------------------------------------------------------------------
@kernel("GatherV2")
def gather_v2(ctx, params, indices, axis):
    axis = int(axis) % params.ndim
    dim = params.shape[axis]
    bad = np.argwhere((indices < 0) | (indices >= dim))
    if len(bad):
        position = tuple(bad[0])
        raise ctx.invalid_argument("indices%s = %d is not in [0, %d)"
                                   % (_shape_string(position), indices[position], dim))
    return np.take(params, indices, axis=axis)


@kernel("UnsortedSegmentSum")
def unsorted_segment_sum(ctx, data, segment_ids, num_segments):
    """``np.add.at`` into zeros: slices with the same id add up, negative ids are dropped."""
    if data.shape[:segment_ids.ndim] != segment_ids.shape:
        raise ctx.invalid_argument("data.shape = %s does not start with segment_ids.shape = %s"
                                   % (_shape_string(data.shape), _shape_string(segment_ids.shape)))
    bad = np.argwhere(segment_ids >= num_segments)
    if len(bad):
        position = tuple(bad[0])
        raise ctx.invalid_argument("segment_ids%s = %d is out of range [0, %d)"
                                   % (_shape_string(position), segment_ids[position],
                                      num_segments))
    out = np.zeros((int(num_segments),) + data.shape[segment_ids.ndim:], dtype=data.dtype)
    kept = segment_ids >= 0
    np.add.at(out, segment_ids[kept], data[kept])
    return out


@kernel("Slice")
def slice_(ctx, x, begin, size):
    if not len(begin) == len(size) == x.ndim:
        raise ctx.invalid_argument(
            "Expected begin and size arguments to be 1-D tensors of size %d, but got shapes %s "
            "and %s instead." % (x.ndim, _shape_string(begin.shape), _shape_string(size.shape)))
    index = []
    for i, (dim, start, extent) in enumerate(zip(x.shape, begin, size)):
        if not 0 <= start <= dim:
            raise ctx.invalid_argument("Expected begin[%d] in [0, %d], but got %d"
                                       % (i, dim, start))
        extent = dim - start if extent == -1 else extent
        if not 0 <= extent <= dim - start:
            raise ctx.invalid_argument("Expected size[%d] in [0, %d], but got %d"
                                       % (i, dim - start, extent))
        index.append(slice(int(start), int(start + extent)))
    return x[tuple(index)]


@kernel("StridedSlice")
def strided_slice(ctx, x, begin, end, strides, **masks):
    """``x[index]``, where the index is decoded from the inputs and masks exactly
    as the op's shape function decodes it (see ``strided_slice_index``)."""
    try:
        index = strided_slice_index(begin.tolist(), end.tolist(), strides.tolist(), **masks)
        sliced_shape(list(x.shape), index)  # TF's errors for out-of-range indices
    except ValueError as e:
        raise ctx.invalid_argument(str(e)) from None
    return np.asarray(x[index])


@kernel("StridedSliceGrad")
def strided_slice_grad(ctx, shape, begin, end, strides, dy, **masks):
    """``zeros(shape)`` with ``dy`` written where ``StridedSlice`` reads: the same
    index, decoded the same way.  A strided slice reads each element at most
    once, so plain assignment (no adding up) is the whole scatter."""
    try:
        index = strided_slice_index(begin.tolist(), end.tolist(), strides.tolist(), **masks)
        sliced_shape([int(d) for d in shape], index)
    except ValueError as e:
        raise ctx.invalid_argument(str(e)) from None
    dx = np.zeros(tuple(int(d) for d in shape), dtype=dy.dtype)
    if dx[index].shape != dy.shape:
        raise ctx.invalid_argument("shape of dy was %s instead of %s"
                                   % (_shape_string(dy.shape), _shape_string(dx[index].shape)))
    dx[index] = dy
    return dx


def _coordinates(ctx, indices, shape):
    """``indices``'s last axis as a tuple of index arrays, checked against ``shape``."""
    depth = indices.shape[-1]
    if depth > len(shape):
        raise ctx.invalid_argument("indices.shape[-1] = %d > rank %d" % (depth, len(shape)))
    bad = np.argwhere((indices < 0) | (indices >= np.array(shape[:depth], dtype=np.int64)))
    if len(bad):
        position = tuple(bad[0][:-1])
        raise ctx.invalid_argument("indices%s = %s does not index into shape %s"
                                   % (_shape_string(position), indices[position].tolist(),
                                      list(shape)))
    return tuple(np.moveaxis(indices, -1, 0))


@kernel("GatherNd")
def gather_nd(ctx, params, indices):
    return params[_coordinates(ctx, indices, params.shape)]


@kernel("ScatterNd")
def scatter_nd(ctx, indices, updates, shape):
    output = np.zeros([int(d) for d in shape], dtype=updates.dtype)
    np.add.at(output, _coordinates(ctx, indices, output.shape), updates)
    return output
