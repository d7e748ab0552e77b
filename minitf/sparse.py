"""``tf.sparse``: the sparse-tensor functions under their TF 1.13+ names.

``tf.sparse.to_dense`` is ``tf.sparse_tensor_to_dense``,
``tf.sparse.placeholder`` ``tf.sparse_placeholder``,
``tf.sparse.sparse_dense_matmul`` ``tf.sparse_tensor_dense_matmul`` and
``tf.sparse.reduce_sum`` ``tf.sparse_reduce_sum``
(:mod:`minitf.ops.sparse_ops`); this module only gives them the
``tf.compat.v1.sparse`` spelling.
"""

from minitf.framework.sparse_tensor import SparseTensor  # noqa: F401 - the public API
from minitf.ops.sparse_ops import sparse_placeholder as placeholder  # noqa: F401
from minitf.ops.sparse_ops import sparse_reduce_sum as reduce_sum  # noqa: F401
from minitf.ops.sparse_ops import sparse_tensor_dense_matmul as sparse_dense_matmul  # noqa: F401
from minitf.ops.sparse_ops import sparse_tensor_to_dense as to_dense  # noqa: F401

matmul = sparse_dense_matmul  # TF1's tf.sparse.matmul

__all__ = ["SparseTensor", "matmul", "placeholder", "reduce_sum", "sparse_dense_matmul",
           "to_dense"]
