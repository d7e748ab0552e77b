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

_LINE = re.compile(r"^(t\d+) = (\w+)\(([^)]*)\) : (\w+)$")


def expression_line(index, op_type, operands, dtype):
    """The line of fused value ``t<index>``: ``op_type`` of ``operands`` (names
    such as ``"x0"``, ``"t3"``), of ``dtype``."""
    return "t%d = %s(%s) : %s" % (index, op_type, ", ".join(operands), dtypes.as_dtype(dtype).name)


def parse_expression(line):
    """``(op_type, operands, dtype)`` of one line of a ``_FusedElementwise``'s expression.

    Raises:
        ValueError: for a line :func:`expression_line` cannot have written.
    """
    match = _LINE.match(line)
    if match is None:
        raise ValueError("Not a line of a fused expression: %r" % (line,))
    operands = tuple(name.strip() for name in match.group(3).split(",") if name.strip())
    return match.group(2), operands, dtypes.as_dtype(match.group(4))
