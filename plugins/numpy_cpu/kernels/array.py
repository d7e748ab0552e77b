"""CPU kernels of the array ops (constants, placeholders, shapes, slicing)."""

from minitf.framework import errors

from minitf_numpy_cpu.kernels.table import kernel


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


@kernel("PlaceholderWithDefault", "Identity")
def identity(ctx, x, **attrs):
    return x


@kernel("NoOp")
def no_op(ctx):
    return None
