"""Matrices: ``matmul`` (ops ``MatMul``, ``BatchMatMulV2``), ``matrix_inverse``,
``matrix_determinant``.

``MatMul`` multiplies two matrices, either of them transposed first;
``BatchMatMulV2`` multiplies the last two dimensions of its operands and
broadcasts the leading "batch" dimensions like ``add`` does.  The inverse and
determinant work on ``[..., n, n]`` batches of square matrices.

The gradients are matrix identities (see Giles, "An extended collection of
matrix derivative results", 2008):

* ``C = A B``: ``dA = dC Bᵀ``, ``dB = Aᵀ dC`` — with the transposes moved
  around when ``A`` or ``B`` was transposed, and for batches summed over the
  batch dimensions an operand was broadcast along;
* ``C = A⁻¹``: ``dA = -Cᵀ dC Cᵀ``;
* ``d = det(A)``: ``dA = dd · d · A⁻ᵀ``.

Mirrors ``matmul`` in ``tensorflow/python/ops/math_ops.py`` and
``linalg_ops.py``, with gradients from ``math_grad.py`` and ``linalg_grad.py``.
"""

import builtins

from minitf.framework import dtypes
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape, unknown_shape
from minitf.ops import (
    array_ops, gather_ops, joining_ops, math_ops, padding_ops, reduction_ops, transpose_ops,
    unary_ops)
from minitf.ops.constant_op import constant
from minitf.ops.common_shapes import broadcast_shapes
from minitf.ops.gradient_util import broadcast_gradient_args, sum_to_shape
from minitf.ops.math_util import (
    REAL_INDEX, convert_operands, merge_dims, op_scope, with_rank, with_rank_at_least)
from minitf.ops.op_def_library import apply_op, define_op, gradient

_MATMUL_TYPES = dtypes.FLOATING + REAL_INDEX


def _mat_mul_shape(op):
    """``[m, k] x [k, n] -> [m, n]``, reading ``k`` from the transposed side if asked."""
    a = with_rank(op.inputs[0].shape, 2).as_list()
    b = with_rank(op.inputs[1].shape, 2).as_list()
    if op.get_attr("transpose_a"):
        a = a[::-1]
    if op.get_attr("transpose_b"):
        b = b[::-1]
    merge_dims(a[1], b[0])
    return [TensorShape([a[0], b[1]])]


def _batch_mat_mul_shape(op):
    """``[..., m, k] x [..., k, n] -> [..., m, n]``; the batch dimensions broadcast."""
    a = with_rank_at_least(op.inputs[0].shape, 2)
    b = with_rank_at_least(op.inputs[1].shape, 2)
    if a.ndims is None or b.ndims is None:
        return [unknown_shape()]
    rows, inner_a = a.as_list()[-2:]
    inner_b, cols = b.as_list()[-2:]
    if op.get_attr("adj_x"):
        rows, inner_a = inner_a, rows
    if op.get_attr("adj_y"):
        inner_b, cols = cols, inner_b
    merge_dims(inner_a, inner_b)
    batch = broadcast_shapes(a[:-2], b[:-2])
    return [batch.concatenate([rows, cols])]


_mat_mul = define_op(
    "MatMul", inputs=("a", "b"), outputs=("product",),
    attrs=("transpose_a: bool = false", "transpose_b: bool = false"), shape_fn=_mat_mul_shape,
    type_constraint=_MATMUL_TYPES, same_dtype_inputs=("a", "b"),
    doc="The matrix product of two matrices, either transposed first.")
_batch_mat_mul = define_op(
    "BatchMatMulV2", inputs=("x", "y"), attrs=("adj_x: bool = false", "adj_y: bool = false"),
    shape_fn=_batch_mat_mul_shape, type_constraint=_MATMUL_TYPES, same_dtype_inputs=("x", "y"),
    doc="Matrix products over the last two dimensions; batch dimensions broadcast.")


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, name=None):
    """The matrix product ``a @ b`` (``tf.matmul``, operator ``@``).

    Rank-2 operands make a ``MatMul`` op.  Operands of higher (or unknown)
    rank make a ``BatchMatMulV2``, the op TF 1.15 emits: it multiplies the
    last two dimensions and broadcasts the leading "batch" dimensions.
    minitf's dtypes are all real, so an adjoint is a transpose.

    Args:
        a, b: tensors of rank >= 2 and one dtype.
        transpose_a, transpose_b: transpose the operand's last two dimensions first.
        adjoint_a, adjoint_b: the same, for real matrices.
        a_is_sparse, b_is_sparse: TF1 performance hints; minitf multiplies
            densely and accepts them for compatibility.
        name: op name (default ``MatMul``).

    Example:
        >>> tf.matmul(tf.ones([2, 3]), tf.ones([3, 4]))
        Tensor("MatMul:0", shape=(2, 4), dtype=float32)
        >>> tf.matmul(tf.ones([5, 2, 3]), tf.ones([3, 4]))    # batch of 5
        Tensor("MatMul_1:0", shape=(5, 2, 4), dtype=float32)

    Raises:
        ValueError: if a rank is below 2, the inner dimensions differ ("Dimensions
            must be equal, but are 3 and 4"), or both transpose and adjoint are asked.
        TypeError: if the dtypes differ or are not float16/32/64 or int32/64.
    """
    del a_is_sparse, b_is_sparse
    if transpose_a and adjoint_a:
        raise ValueError("Only one of transpose_a and adjoint_a can be True.")
    if transpose_b and adjoint_b:
        raise ValueError("Only one of transpose_b and adjoint_b can be True.")
    with op_scope(name, "MatMul", [a, b]) as scope:
        a, b = convert_operands(a, b, names=("a", "b"))
        ranks = (a.shape.ndims, b.shape.ndims)
        if None in ranks or builtins.max(ranks) > 2:
            attrs = {"adj_x": transpose_a or adjoint_a, "adj_y": transpose_b or adjoint_b}
            return apply_op(_batch_mat_mul, [a, b], attrs=attrs, name=scope)
        attrs = {"transpose_a": transpose_a or adjoint_a, "transpose_b": transpose_b or adjoint_b}
        return apply_op(_mat_mul, [a, b], attrs=attrs, name=scope)


@gradient("MatMul")
def _mat_mul_grad(op, grad):
    """``C = A B`` gives ``dA = dC Bᵀ`` and ``dB = Aᵀ dC``; a transposed operand
    swaps the roles, so that each gradient has its input's (stored) layout."""
    a, b = op.inputs
    transpose_a, transpose_b = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    if not transpose_a and not transpose_b:
        grad_a = matmul(grad, b, transpose_b=True)
        grad_b = matmul(a, grad, transpose_a=True)
    elif not transpose_a and transpose_b:
        grad_a = matmul(grad, b)
        grad_b = matmul(grad, a, transpose_a=True)
    elif transpose_a and not transpose_b:
        grad_a = matmul(b, grad, transpose_b=True)
        grad_b = matmul(a, grad)
    else:
        grad_a = matmul(b, grad, transpose_a=True, transpose_b=True)
        grad_b = matmul(grad, a, transpose_a=True, transpose_b=True)
    return [grad_a, grad_b]


@gradient("BatchMatMulV2")
def _batch_mat_mul_grad(op, grad):
    """MatMul's rule on the last two dimensions; then each gradient is summed
    over the batch dimensions its operand was broadcast along."""
    x, y = op.inputs
    adj_x, adj_y = op.get_attr("adj_x"), op.get_attr("adj_y")
    if not adj_x and not adj_y:
        grad_x = matmul(grad, y, adjoint_b=True)
        grad_y = matmul(x, grad, adjoint_a=True)
    elif not adj_x and adj_y:
        grad_x = matmul(grad, y)
        grad_y = matmul(grad, x, adjoint_a=True)
    elif adj_x and not adj_y:
        grad_x = matmul(y, grad, adjoint_b=True)
        grad_y = matmul(x, grad)
    else:
        grad_x = matmul(y, grad, adjoint_a=True, adjoint_b=True)
        grad_y = matmul(grad, x, adjoint_a=True, adjoint_b=True)
    batch_x, batch_y = x.shape[:-2], y.shape[:-2]
    if batch_x.is_fully_defined() and batch_x == batch_y:  # no broadcasting to undo
        return [grad_x, grad_y]
    sx, sy = array_ops.shape(x), array_ops.shape(y)
    rx, ry = broadcast_gradient_args(sx[:-2], sy[:-2])
    return [sum_to_shape(grad_x, rx, sx), sum_to_shape(grad_y, ry, sy)]


def _square_matrices_shape(shape):
    """Checks ``shape`` is ``[..., n, n]``; returns the batch shape ``[...]``."""
    shape = with_rank_at_least(shape, 2)
    if shape.ndims is None:
        return unknown_shape()
    merge_dims(shape[-2].value, shape[-1].value)
    return shape[:-2]


def _matrix_inverse_shape(op):
    shape = op.inputs[0].shape
    _square_matrices_shape(shape)
    return [shape]


def _matrix_determinant_shape(op):
    return [_square_matrices_shape(op.inputs[0].shape)]


_LINALG_TYPES = (dtypes.float32, dtypes.float64)
_matrix_inverse = define_op(
    "MatrixInverse", inputs=("input",), attrs={"adjoint": False},
    shape_fn=_matrix_inverse_shape, type_constraint=_LINALG_TYPES,
    doc="The inverse of each square matrix in [..., n, n]; singular is an error.")
_matrix_determinant = define_op(
    "MatrixDeterminant", inputs=("input",), shape_fn=_matrix_determinant_shape,
    type_constraint=_LINALG_TYPES, doc="The determinant of each square matrix in [..., n, n].")


def matrix_inverse(input, adjoint=False, name=None):  # noqa: A002 - TF's argument name
    """The inverse of each square matrix in ``input`` (``tf.matrix_inverse``).

    Args:
        input: float32 or float64, shape ``[..., n, n]``.
        adjoint: invert the (conjugate) transpose instead.
        name: op name (default ``MatrixInverse``).

    Raises:
        ValueError: at construction, if the matrices are not square.
        tf.errors.InvalidArgumentError: at run time, "Input is not invertible."
            when a matrix is singular.
    """
    return apply_op(_matrix_inverse, [input], attrs={"adjoint": adjoint},
                    name=name or "MatrixInverse")


@gradient("MatrixInverse")
def _matrix_inverse_grad(op, grad):
    """``C = A⁻¹`` gives ``dA = -Cᵀ dC Cᵀ``; with ``adjoint`` the output is
    ``B = A⁻ᵀ`` and the same identity reads ``dA = -B dBᵀ B``."""
    inverse = op.outputs[0]
    adjoint = op.get_attr("adjoint")
    product = matmul(grad, inverse, adjoint_a=adjoint, adjoint_b=not adjoint)
    return [-matmul(inverse, product, adjoint_a=not adjoint)]


def matrix_determinant(input, name=None):  # noqa: A002 - TF's argument name
    """The determinant of each square matrix in ``input`` (``tf.matrix_determinant``).

    A ``[..., n, n]`` input gives a ``[...]`` output.
    """
    return apply_op(_matrix_determinant, [input], name=name or "MatrixDeterminant")


@gradient("MatrixDeterminant")
def _matrix_determinant_grad(op, grad):
    """d det(A) / dA = det(A) · A⁻ᵀ (Jacobi's formula), one scalar per matrix."""
    a, det = op.inputs[0], op.outputs[0]
    per_matrix_shape = joining_ops.concat([array_ops.shape(det), [1, 1]], 0)  # [..., 1, 1]
    multipliers = array_ops.reshape(grad * det, per_matrix_shape)
    return [multipliers * matrix_inverse(a, adjoint=True)]


def eye(num_rows, num_columns=None, batch_shape=None, dtype=dtypes.float32, name=None):
    """The ``num_rows x num_columns`` identity matrix (``tf.eye``).

    Built as ``one_hot(range(num_rows), num_columns)``, so the sizes may be
    tensors.  ``batch_shape`` stacks copies in front: ``[*batch_shape, rows, cols]``.

    Example:
        >>> sess.run(tf.eye(2, 3))
        array([[1., 0., 0.],
               [0., 1., 0.]], dtype=float32)
    """
    with op_scope(name, "eye", [num_rows, num_columns]):
        columns = num_rows if num_columns is None else num_columns
        matrix = gather_ops.one_hot(math_ops.range(num_rows), columns, dtype=dtype)
        if batch_shape is None:
            return matrix
        batch_shape = list(batch_shape)
        matrix = array_ops.reshape(matrix, [1] * len(batch_shape) + [num_rows, columns])
        return padding_ops.tile(matrix, batch_shape + [1, 1])


# ---- composites: diagonals, traces, norms, tensor contractions --------------------------------
def _eye_like(x):
    """The identity of ``x``'s last two dimensions, in ``x``'s dtype (broadcasts over batches)."""
    shape = array_ops.shape(x)
    return eye(shape[-2], shape[-1], dtype=x.dtype.base_dtype)


def diag(diagonal, name=None):
    """The square matrix with ``diagonal`` on its diagonal (``tf.diag``, 1-D input only).

    Raises:
        NotImplementedError: for a ``diagonal`` of rank other than 1.
    """
    with op_scope(name, "Diag", [diagonal]):
        diagonal = convert_to_tensor(diagonal, name="diagonal")
        if diagonal.shape.ndims != 1:
            raise NotImplementedError("minitf's tf.diag takes a 1-D diagonal, got shape %s"
                                      % diagonal.shape)
        n = array_ops.size(diagonal)
        return array_ops.expand_dims(diagonal, -1) * eye(n, dtype=diagonal.dtype.base_dtype)


def diag_part(input, name=None):  # noqa: A002 - TF's name
    """The diagonal of the matrix ``input`` (``tf.diag_part``; ``tf.linalg.diag_part``)."""
    with op_scope(name, "DiagPart", [input]):
        x = convert_to_tensor(input, name="input")
        with_rank(x.shape, 2)
        return reduction_ops.reduce_sum(x * _eye_like(x), axis=-1)


def trace(x, name=None):
    """The sum of the diagonal of each matrix in ``x`` (``tf.trace``; ``[..., M, N]``)."""
    with op_scope(name, "Trace", [x]):
        x = convert_to_tensor(x, name="x")
        with_rank_at_least(x.shape, 2)
        return reduction_ops.reduce_sum(x * _eye_like(x), axis=[-2, -1])


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None,  # noqa: A002
         keep_dims=None):
    """The vector norm of ``tensor`` over ``axis`` (``tf.norm``).

    ``ord`` is ``"euclidean"``/``"fro"``/2 (square root of the sum of squares;
    over a pair of axes that is the Frobenius norm), 1 (sum of absolute
    values) or ``np.inf`` (the largest absolute value).  ``axis`` None: the
    whole tensor as one vector.

    Raises:
        ValueError: for another ``ord``, or a spectral matrix norm (``ord=2``
            over two axes), which minitf does not compute.
    """
    keepdims = keep_dims if keepdims is None else keepdims
    pair = isinstance(axis, (list, tuple)) and len(axis) == 2
    with op_scope(name, "norm", [tensor]):
        x = convert_to_tensor(tensor, name="tensor")
        if ord in ("euclidean", "fro") or (ord == 2 and not pair):
            return unary_ops.sqrt(reduction_ops.reduce_sum(x * x, axis, keepdims=keepdims))
        if ord == 1 and not pair:
            return reduction_ops.reduce_sum(unary_ops.abs(x), axis, keepdims=keepdims)
        if ord == float("inf") and not pair:
            return reduction_ops.reduce_max(unary_ops.abs(x), axis, keepdims=keepdims)
        raise ValueError("minitf's tf.norm supports ord 'euclidean', 'fro', 1, 2 and np.inf "
                         "(vector norms and the Frobenius norm), got ord=%r, axis=%r" % (ord, axis))


def tensordot(a, b, axes, name=None):
    """Sums ``a`` and ``b`` over paired axes (``tf.tensordot``): ``np.tensordot``.

    Built as TF does: transpose each operand so the summed axes meet,
    reshape both to matrices, one ``matmul``, reshape to the free dimensions.

    Args:
        a, b: tensors of known rank.
        axes: N (the last N axes of ``a`` with the first N of ``b``) or a pair
            of lists ``[a_axes, b_axes]``.
        name: the name scope (default ``Tensordot``).

    Raises:
        ValueError: if a rank is unknown or the axes do not pair up.
    """
    with op_scope(name, "Tensordot", [a, b]) as scope:
        a, b = convert_operands(a, b, names=("a", "b"))
        if a.shape.ndims is None or b.shape.ndims is None:
            raise ValueError("tensordot needs operands of known rank, got %s and %s"
                             % (a.shape, b.shape))
        if isinstance(axes, int):
            a_axes = list(builtins.range(a.shape.ndims - axes, a.shape.ndims))
            b_axes = list(builtins.range(axes))
        else:
            a_axes, b_axes = ([axes_i] if isinstance(axes_i, int) else list(axes_i)
                              for axes_i in axes)
        a_axes = [i % a.shape.ndims for i in a_axes]
        b_axes = [i % b.shape.ndims for i in b_axes]
        if len(a_axes) != len(b_axes):
            raise ValueError("tensordot axes must pair up, got %s and %s" % (a_axes, b_axes))
        a_free = [i for i in builtins.range(a.shape.ndims) if i not in a_axes]
        b_free = [i for i in builtins.range(b.shape.ndims) if i not in b_axes]
        a_matrix, a_free_dims = _as_matrix(a, a_free, a_axes, free_first=True)
        b_matrix, b_free_dims = _as_matrix(b, b_free, b_axes, free_first=False)
        product = matmul(a_matrix, b_matrix)
        result = array_ops.reshape(product, joining_ops.concat([a_free_dims, b_free_dims], 0),
                                   name=scope)
        static = [a.shape[i].value for i in a_free] + [b.shape[i].value for i in b_free]
        result.set_shape(TensorShape(static))
        return result


def _as_matrix(x, free, summed, free_first):
    """``x`` transposed and reshaped to ``[prod(free), prod(summed)]`` (or the reverse)."""
    order = free + summed if free_first else summed + free
    shape = array_ops.shape(x)
    free_dims = gather_ops.gather(shape, constant(free, dtypes.int32))
    summed_dims = gather_ops.gather(shape, constant(summed, dtypes.int32))
    rows, cols = reduction_ops.reduce_prod(free_dims), reduction_ops.reduce_prod(summed_dims)
    moved = transpose_ops.transpose(x, order)
    matrix_shape = joining_ops.stack([rows, cols] if free_first else [cols, rows])
    return array_ops.reshape(moved, matrix_shape), free_dims
