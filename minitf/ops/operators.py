"""Python's operators on Tensors: ``a + b``, ``a @ b``, ``-a``, ``a < b``, ``a & b`` ...

TF1 makes Tensors feel like NumPy arrays by overloading their operators; each
builds the op of the matching wrapper (``+`` is :func:`~minitf.ops.math_ops.add`,
``@`` is :func:`~minitf.ops.linalg_ops.matmul`).  The wrappers come from every
math family, so they are installed here, once all of those modules are loaded
(:mod:`minitf.ops` imports this module last).  ``x[...]`` is installed by
:mod:`~minitf.ops.array_ops`.

Mirrors ``_OverrideBinaryOperatorHelper`` in ``tensorflow/python/ops/math_ops.py``.
"""

from minitf.framework.tensor import Tensor
from minitf.ops.comparison_ops import (
    greater, greater_equal, less, less_equal, logical_and, logical_not, logical_or, logical_xor)
from minitf.ops.linalg_ops import matmul
from minitf.ops.math_ops import (  # noqa: A004 - pow shadows the built-in, as in TF
    add, floordiv, floormod, multiply, pow, subtract, truediv)
from minitf.ops.unary_ops import abs, negative  # noqa: A004 - as in TF


def _binary_operator(fn, scope_name):
    """The forward and reflected operator methods for ``fn``.

    The op is named after the Python operator (``a + b`` is op ``add``,
    ``tf.add(a, b)`` is op ``Add``).  In ``1 - x`` Python calls
    ``x.__rsub__(1)``; the constant 1 takes ``x``'s dtype, as it would on the left.
    """
    def forward(x, y):
        return fn(x, y, name=scope_name)

    def reflected(y, x):
        return fn(x, y, name=scope_name)
    return forward, reflected


def _install_operators():
    """Makes Python's operators on Tensors build ops, with TF1's op names.

    The arithmetic and logical operators name their op after the operator
    (``add``, ``truediv``, ``and``); negation, ``abs()`` and the comparisons
    keep the op's own name (``Neg``, ``Abs``, ``Less``), as in TF1.
    ``==`` and ``!=`` are left alone: Tensors compare by identity so that
    they can be dict keys.  Comparisons need no reflected form: Python
    turns ``1 < x`` into ``x > 1``.
    """
    binary = {"add": add, "sub": subtract, "mul": multiply, "truediv": truediv,
              "floordiv": floordiv, "mod": floormod, "pow": pow, "matmul": matmul,
              "and": logical_and, "or": logical_or, "xor": logical_xor}
    for name, fn in binary.items():
        forward, reflected = _binary_operator(fn, name)
        Tensor._override_operator("__%s__" % name, forward)
        Tensor._override_operator("__r%s__" % name, reflected)
    named_after_op = {"__neg__": negative, "__abs__": abs, "__invert__": logical_not,
                      "__lt__": less, "__le__": less_equal, "__gt__": greater,
                      "__ge__": greater_equal}
    for operator, fn in named_after_op.items():
        Tensor._override_operator(operator, fn)


_install_operators()
