"""``_FusedElementwise``: a cluster of elementwise ops computed by one generated kernel.

Users never create it.  The fusion pass (:mod:`minitf.runtime.passes.xla_fusion`)
puts one in the step graph in place of each cluster of elementwise ops that a
device can fuse, as TF's XLA puts an ``_XlaCompile``/``_XlaRun`` pair in place
of a cluster.  The core says only *what* the cluster computes, as a small
program over the cluster's inputs ``x0, x1, ...`` — one line per fused op,
in a topological order, each naming its value ``t<k>``::

    expression = ["t0 = AddV2(x0, x1) : float32",
                  "t1 = Relu(t0) : float32",
                  "t2 = ReluGrad(x2, t1) : float32"]
    outputs = ["t1", "t2"]         # the values read outside the cluster
    fused_ops = ["add", "Relu", "gradients/Relu_grad/ReluGrad"]

An op with a float or bool among its attrs (``LeakyRelu``'s ``alpha``, a
reduction's ``keep_dims``) carries it at the end of its line, as the kernel
must compile it in::

    "t3 = LeakyRelu(t2) : float32 {alpha=0.2}"
    "t4 = Sum(t3, x2) : float32 {keep_dims=False}"   # x2: the axes

The device's plugin turns the program into a kernel (the OpenCL backend:
``minitf_opencl_gpu.kernels.fusion``) and may attach the source it generated
as the attr ``_kernel_source``.  :func:`parse_expression` reads a line back.
"""

import re

from minitf.framework import dtypes
from minitf.ops.op_def_library import define_op, not_differentiable

fused_elementwise = define_op(
    "_FusedElementwise", inputs=("inputs*",),
    attrs={"Tin": None, "Tout": None, "expression": None, "outputs": None, "fused_ops": ()},
    num_outputs=lambda attrs: len(attrs["outputs"]),
    dtype_fn=lambda op: [dtypes.as_dtype(t) for t in op.get_attr("Tout")],
    doc="A cluster of elementwise ops computed by one generated kernel (XLA in miniature).")
not_differentiable("_FusedElementwise",
                   reason="made by the fusion pass in a step graph, after gradients are built")

_LINE = re.compile(r"^(t\d+) = (\w+)\(([^)]*)\) : (\w+)(?: \{([^}]*)\})?$")


class ExpressionLine(tuple):
    """``(op_type, operands, dtype)`` of one line, with its numeric attrs as ``.attrs``."""

    attrs = {}

    def __new__(cls, op_type, operands, dtype, attrs=None):
        line = super().__new__(cls, (op_type, operands, dtype))
        line.attrs = dict(attrs or {})
        return line


def numeric_attrs(op):
    """The attrs of ``op`` that a fused kernel compiles in: its floats (``alpha``)
    and bools (``keep_dims``)."""
    return {name: value for name, value in sorted(op._attrs.items())
            if isinstance(value, (float, bool))}


def expression_line(index, op_type, operands, dtype, attrs=None):
    """The line of fused value ``t<index>``: ``op_type`` of ``operands`` (names
    such as ``"x0"``, ``"t3"``), of ``dtype``, with the float and bool ``attrs``."""
    line = "t%d = %s(%s) : %s" % (index, op_type, ", ".join(operands),
                                  dtypes.as_dtype(dtype).name)
    if attrs:
        line += " {%s}" % ", ".join(
            "%s=%r" % (k, v if isinstance(v, bool) else float(v)) for k, v in sorted(attrs.items()))
    return line


def parse_expression(line):
    """The :class:`ExpressionLine` ``(op_type, operands, dtype)`` (``.attrs``: a dict)
    of one line of a ``_FusedElementwise``'s expression.

    Raises:
        ValueError: for a line :func:`expression_line` cannot have written.
    """
    match = _LINE.match(line)
    if match is None:
        raise ValueError("Not a line of a fused expression: %r" % (line,))
    operands = tuple(name.strip() for name in match.group(3).split(",") if name.strip())
    attrs = {}
    for item in filter(None, (match.group(5) or "").split(", ")):
        name, _, value = item.partition("=")
        try:
            attrs[name] = {"True": True, "False": False}.get(value) if value in (
                "True", "False") else float(value)
        except ValueError:
            raise ValueError("Not a line of a fused expression: %r" % (line,)) from None
    return ExpressionLine(match.group(2), operands, dtypes.as_dtype(match.group(4)), attrs)
