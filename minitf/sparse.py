"""``tf.sparse``: the sparse-tensor functions under their TF 1.13+ names.

``tf.sparse.to_dense`` is ``tf.sparse_tensor_to_dense`` and
``tf.sparse.placeholder`` ``tf.sparse_placeholder``
(:mod:`minitf.ops.sparse_ops`); this module only gives them the
``tf.compat.v1.sparse`` spelling.
"""

from minitf.framework.sparse_tensor import SparseTensor  # noqa: F401 - the public API
from minitf.ops.sparse_ops import sparse_placeholder as placeholder  # noqa: F401
from minitf.ops.sparse_ops import sparse_tensor_to_dense as to_dense  # noqa: F401

__all__ = ["SparseTensor", "placeholder", "to_dense"]
