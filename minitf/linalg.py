"""``tf.linalg``: the linear-algebra functions under their TF 1.13+ names.

Every function here is also a top-level ``tf.*`` function (``tf.linalg.inv``
is ``tf.matrix_inverse``); this module only gives them the
``tf.compat.v1.linalg`` spelling.
"""

from minitf.ops.linalg_ops import (  # noqa: F401 - the public API
    diag_part, eye, matmul, norm, tensordot, trace)
from minitf.ops.einsum_ops import einsum  # noqa: F401
from minitf.ops.linalg_ops import matrix_determinant as det  # noqa: F401
from minitf.ops.linalg_ops import matrix_inverse as inv  # noqa: F401
from minitf.ops.transpose_ops import matrix_transpose as transpose  # noqa: F401
