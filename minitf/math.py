"""``tf.math``: the math functions under their TF 1.13+ names (``tf.math.log``...).

Every name here is also a top-level ``tf.*`` function; this module only gives
them the ``tf.compat.v1.math`` spelling that later TF1 programs use.
"""

from minitf.ops.comparison_ops import (  # noqa: F401 - the public API
    equal, greater, greater_equal, is_finite, is_inf, is_nan, less, less_equal, logical_and,
    logical_not, logical_or, logical_xor, not_equal)
from minitf.ops.math_ops import (  # noqa: F401
    add, add_n, divide, floordiv, floormod, maximum, minimum, multiply, pow, realdiv,
    squared_difference, subtract, truediv)
from minitf.ops.reduction_ops import (  # noqa: F401
    argmax, argmin, count_nonzero, reduce_all, reduce_any, reduce_logsumexp, reduce_max,
    reduce_mean, reduce_min, reduce_prod, reduce_std, reduce_sum, reduce_variance)
from minitf.ops.scan_ops import cumprod, cumsum  # noqa: F401
from minitf.ops.nn_ops import softplus, softsign  # noqa: F401
from minitf.ops.softmax_ops import log_softmax, softmax  # noqa: F401
from minitf.ops.unary_ops import (  # noqa: F401
    abs, ceil, cos, exp, expm1, floor, log, log1p, negative, reciprocal, round, rsqrt, sigmoid,
    sign, sin, sqrt, square, tan, tanh)
from minitf.ops.top_k_ops import argsort, in_top_k, sort, top_k  # noqa: F401
from minitf.ops.gather_ops import unsorted_segment_sum  # noqa: F401
from minitf.ops.math_ops import scalar_mul  # noqa: F401
from minitf.ops.nn_impl import l2_normalize  # noqa: F401
from minitf.ops.transpose_ops import invert_permutation  # noqa: F401

mod = floormod
