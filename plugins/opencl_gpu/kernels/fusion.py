"""The fused elementwise kernel: one generated OpenCL kernel per cluster (XLA in miniature).

The core's fusion pass (``minitf.runtime.passes.xla_fusion``) replaces a
cluster of elementwise ops by one ``_FusedElementwise`` op whose attrs hold a
small program — ``t0 = AddV2(x0, x1) : float32``, ``t1 = Relu(t0) : float32``
— and asks this device which ops may join (:func:`can_fuse`).  Here the
program becomes OpenCL C: each op's element function is made from its own
expression template (:data:`~minitf_opencl_gpu.kernels.elementwise.EXPRESSIONS`,
the text its unfused kernels are made of), and one kernel loads each input
element once, applies the functions in order in registers, and stores only
the cluster's outputs::

    inline float f0(const T a, const T b) { return (float)(a + b); }   // AddV2
    inline float f1(const T a) { return (float)(a < 0 ? 0 : a); }       // Relu
    __kernel void fused(__global float *y0, __global const float *x0,
                        __global const float *x1, const int n) {
        ...
            const float t0 = f0(x0[i], x1[i]);
            const float t1 = f1(t0);
            y0[i] = t1;
    }

**Signature and cache.**  The text depends on the program, the dtypes, and
how each input is read at run time — at the element's own index (same
shape), at 0 (one element), at ``i % m`` (a row repeated along leading axes,
a bias) or through general broadcast strides.  A kernel is generated and
compiled once per such signature and cached (:data:`_kernels`); the OpenCL
program cache and PoCL's disk cache sit below.  Where every input is read at
its own index or at 0, a work item takes four neighbouring elements; where
the rows read are all of one length (a bias), the range is 2-D (column, row),
as the unfused ``_rb`` kernels, so no element pays a division.

**A reduction at the root.**  A cluster may end in a float reduction over
adjacent axes (:data:`REDUCERS`); its kernel (:func:`_reduce_kernel`) computes
each element of the reduced value where it is read and combines it at once,
as ``reduction.cl``'s kernels do, so the values before the reduction never
reach memory.

**Outputs of another shape.**  Broadcasting inside a cluster may leave an
output smaller than the cluster (``t0 = x0 * 2`` of a ``[3]`` input, read
outside, beside ``t1 = t0 + x1`` of ``[2, 3]``).  One kernel over the
cluster's shape cannot store it once per element, so such a step runs the
program op by op with the unfused kernels (:func:`_run_unfused`) — same
results, without the gain.
"""

import hashlib

import numpy as np

from minitf.plugin import parse_fused_expression

from minitf_opencl_gpu import programs
from minitf_opencl_gpu.kernels import elementwise, nn, reduction
from minitf_opencl_gpu.kernels.table import (
    KERNELS, broadcast_strides, empty, i32, on_device, run, strided_args)
from minitf_opencl_gpu.programs import CL_TYPES, cl_type

# Op types fused beyond EXPRESSIONS, with the expression they are computed by.
ALIASES = {"BiasAdd": "Add"}

# Op types fused beyond EXPRESSIONS with an element of their own: the text of
# their unfused kernels in elementwise.cl, over operands a, b, c (AddN: a0,
# a1, ...; Select: a is the condition) and the op's float attrs in capitals.
SPECIAL = {
    "AddN": None,   # a0 + a1 + ... (any number of operands)
    "Select": "a ? b : c",
    "SelectV2": "a ? b : c",
    "LeakyRelu": "a > 0 ? a : a * (T)(ALPHA)",
    "LeakyReluGrad": "b > 0 ? a : a * (T)(ALPHA)",
    "ZerosLike": "(T)0",
    "Identity": "a",
    "StopGradient": "a",
}

# Element types a fused kernel computes in.  int32 is left out: on this device
# it is shape arithmetic kept in host memory (TF's HostMemory), see table.py.
_GROUP_OF = {np.dtype(np.float32): "float", np.dtype(np.float64): "float",
             np.dtype(np.int64): "int", np.dtype(np.bool_): "bool"}
_CAST_TYPES = frozenset(CL_TYPES) - {np.dtype(np.int32)}

# Reductions that may end a cluster (its root, see the core pass's ROOTS):
# identity, combine, final value and the value each element adds, the text of
# reduction.cl's REDUCTION lines (a NaN wins a Max or Min, as in NumPy; a Mean
# is a Sum scaled; L2Loss sums squares and halves; BiasAddGrad sums all axes
# but the channels).
REDUCERS = {
    "Sum": ("(T)0", "(a) + (b)", "v * scale", "e"),
    "Mean": ("(T)0", "(a) + (b)", "v * scale", "e"),
    "Prod": ("(T)1", "(a) * (b)", "v", "e"),
    "Max": ("(T)(-INFINITY)", "((a) > (b) || (a) != (a)) ? (a) : (b)", "v", "e"),
    "Min": ("(T)(INFINITY)", "((a) < (b) || (a) != (a)) ? (a) : (b)", "v", "e"),
    "BiasAddGrad": ("(T)0", "(a) + (b)", "v", "e"),
    "L2Loss": ("(T)0", "(a) + (b)", "v * scale", "e * e"),
}

ITEMS_PER_WORK_ITEM = 4


def fusable_op_types():
    """Every op type a fused kernel can hold: the plugin's elementwise ops, ``Cast``,
    ``BiasAdd``, ``AddN``, ``Select``/``SelectV2`` and ``LeakyRelu`` with its gradient."""
    return sorted(set(elementwise.EXPRESSIONS) | set(ALIASES) | set(SPECIAL) | set(REDUCERS)
                  | {"Cast"})


def can_fuse(op, has_fp64):
    """Whether ``op`` may join a fused kernel on an OpenCL device (``Device.can_fuse``)."""
    dtypes = [np.dtype(t.dtype.base_dtype.as_numpy_dtype) for t in list(op.inputs) + op.outputs]
    if not has_fp64 and np.dtype(np.float64) in dtypes:
        return False
    if op.type == "Cast":
        return len(op.inputs) == 1 and all(d in _CAST_TYPES for d in dtypes)
    if op.type == "BiasAdd" and _as_text(op.get_attr("data_format")) != "NHWC":
        return False
    if op.type in SPECIAL:
        return _can_fuse_special(op, dtypes)
    if op.type in REDUCERS:
        return dtypes[0].kind == "f" and _reduced_axes(op) is not None
    expression = elementwise.EXPRESSIONS.get(ALIASES.get(op.type, op.type))
    if expression is None or len(op.inputs) != expression.arity:
        return False
    group = _GROUP_OF.get(dtypes[0])
    return group in expression.templates and all(d == dtypes[0] for d in dtypes[:-1])


def _can_fuse_special(op, dtypes):
    """``can_fuse`` for the ops of :data:`SPECIAL`: values of one fusable type (a
    condition of bool); TF1's ``Select`` only where it is elementwise."""
    values = dtypes[1:] if op.type.startswith("Select") else dtypes
    if values[0] not in _GROUP_OF or any(d != values[0] for d in values):
        return False
    if op.type.startswith("LeakyRelu"):
        return values[0].kind == "f"
    if op.type == "Select":  # a vector condition picks rows: not elementwise
        rank, value_rank = op.inputs[0].shape.rank, op.inputs[1].shape.rank
        return rank is not None and rank in (0, value_rank)
    return True


def _reduced_axes(op):
    """The axes a reduction reduces, when they are known when the step is planned and
    adjacent (``[outer, R, inner]`` with no transpose); else None."""
    rank = op.inputs[0].shape.rank
    if rank is None or rank == 0:
        return None
    if op.type == "L2Loss":
        return list(range(rank))
    if op.type == "BiasAddGrad":
        return list(range(rank - 1)) if _as_text(op.get_attr("data_format")) == "NHWC" else None
    axes_op = op.inputs[1].op
    if axes_op.type != "Const":
        return None
    axes = sorted({int(a) % rank for a in np.reshape(axes_op.get_attr("value"), -1)})
    return axes if axes and axes == list(range(axes[0], axes[-1] + 1)) else None


def _as_text(value):
    return value.decode() if isinstance(value, bytes) else value


# ---- the program ----------------------------------------------------------------------
class Program:
    """A ``_FusedElementwise``'s expression, read once: per value ``t<k>``, its op
    type, operands and dtype; which values are outputs; the inputs' dtypes."""

    def __init__(self, expression, outputs, in_dtypes):
        self.nodes = [parse_fused_expression(line) for line in expression]
        self.in_dtypes = [np.dtype(d) for d in in_dtypes]
        self.node_dtypes = [np.dtype(dtype.as_numpy_dtype) for _, _, dtype in self.nodes]
        self.outputs = [int(name[1:]) for name in outputs]
        # A reduction ends the cluster: its node is the last; its axes (an
        # input read on the host) take no part in the kernel.
        last = self.nodes[-1]
        self.reduction = last[0] if last[0] in REDUCERS else None
        self.axes_input = int(last[1][1][1:]) if self.reduction and len(last[1]) > 1 else None

    def dtype_of(self, operand):
        """The NumPy dtype of operand ``"x3"`` or ``"t1"``."""
        index = int(operand[1:])
        return self.in_dtypes[index] if operand[0] == "x" else self.node_dtypes[index]


_parsed = {}


def program_of(expression, outputs, in_dtypes):
    key = (tuple(expression), tuple(outputs), tuple(in_dtypes))
    program = _parsed.get(key)
    if program is None:
        program = _parsed[key] = Program(expression, outputs, in_dtypes)
    return program


# ---- generating the source ------------------------------------------------------------
def kernel_source(program, modes, form=None):
    """The OpenCL C text of the kernel ``fused`` computing ``program``.

    Args:
        program: a :class:`Program`.
        modes: per input, how it is read: ``"same"``, ``"scalar"``, ``"row"`` or
            ``"bcast"`` (see the module docstring); ``"host"`` for a reduction's axes.
        form: for a program ending in a reduction, ``"rows"`` or ``"cols"``
            (see :func:`_reduce_kernel`).
    """
    parts = ["// Generated by minitf_opencl_gpu.kernels.fusion from a _FusedElementwise op.",
             "#undef T", "#undef IS_FLOAT", "#undef IS_INT", "#undef IS_BOOL",
             programs.source("elementwise_math")]
    elementwise_nodes = program.nodes[:-1] if program.reduction else program.nodes
    for dtype in sorted({program.dtype_of(a) for _, operands, _ in elementwise_nodes
                         for a in operands}, key=str):
        parts.append(_helpers(dtype))
    for index, node in enumerate(elementwise_nodes):
        parts.append(_element_function(index, node[0], [program.dtype_of(a) for a in node[1]],
                                       program.node_dtypes[index], node.attrs))
    parts.append(_reduce_kernel(program, modes, form) if program.reduction
                 else _kernel(program, modes, form))
    return "\n".join(parts) + "\n"


def _guard(dtype):
    if dtype == np.bool_:
        return "IS_BOOL"
    return "IS_FLOAT" if dtype.kind == "f" else "IS_INT"


def _helpers(dtype):
    """The helpers of ``elementwise_math.cl`` for element type ``dtype``."""
    guard = _guard(dtype)
    return "\n".join(["#define T %s" % cl_type(dtype), "#define %s 1" % guard,
                      programs.source("elementwise_math"), "#undef %s" % guard, "#undef T"])


def _element_function(index, op_type, in_dtypes, out_dtype, attrs):
    """``f<index>``: the value of one element of the op, from its expression template
    (or its text in :data:`SPECIAL`, with the op's float ``attrs`` written in)."""
    out = cl_type(out_dtype)
    names = ["a%d" % i for i in range(len(in_dtypes))] if op_type == "AddN" else "abc"
    if op_type == "Cast":
        body = "a != 0" if out_dtype == np.bool_ else "a"
    elif op_type == "AddN":
        body = " + ".join(names)
    elif op_type in SPECIAL:
        body = SPECIAL[op_type]
        for name, value in attrs.items():
            body = body.replace(name.upper(), repr(value))
    else:
        expression = elementwise.EXPRESSIONS[ALIASES.get(op_type, op_type)]
        body = expression.templates[_GROUP_OF[in_dtypes[0]]]
    params = ", ".join("const %s %s" % (cl_type(d), name) for d, name in zip(in_dtypes, names))
    value_type = in_dtypes[1] if op_type.startswith("Select") else in_dtypes[0]
    return "\n".join([
        "#define T %s" % cl_type(value_type),
        "inline %s f%d(%s) { return (%s)(%s); }  // %s" % (out, index, params, out, body,
                                                           op_type),
        "#undef T"])


_READS = {"same": "x{j}[i]", "scalar": "x{j}[0]", "row": "x{j}[i % m{j}]",
          "bcast": "x{j}[bcast_off(i, shape, s{j})]"}


def _params(program, modes):
    """The kernel's parameters: its outputs, its inputs (not a reduction's axes), the
    element count (of a reduction: the output count), and what the read modes need."""
    params = ["__global %s *y%d" % (cl_type(program.node_dtypes[k]), j)
              for j, k in enumerate(program.outputs)]
    params += ["__global const %s *x%d" % (cl_type(d), j)
               for j, (d, mode) in enumerate(zip(program.in_dtypes, modes)) if mode != "host"]
    params.append("const int n")
    params += ["const int m%d" % j for j, mode in enumerate(modes) if mode == "row"]
    if "bcast" in modes:
        params.append("const int8 shape")
        params += ["const int8 s%d" % j for j, mode in enumerate(modes) if mode == "bcast"]
    return params


def _kernel(program, modes, form=None):
    items = ITEMS_PER_WORK_ITEM if set(modes) <= {"same", "scalar"} else 1
    params, reads = _params(program, modes), _READS
    lines = ["__kernel void fused(%s) {" % ", ".join(params)]
    if form == "grid":
        # Rows repeated along the leading axes (a bias): a 2-D range of (column,
        # row), as the unfused _rb kernels, so no element pays a division.
        row_length = "m%d" % modes.index("row")
        lines += ["    const int col = get_global_id(0);",
                  "    const int i = get_global_id(1) * %s + col;" % row_length]
        grid_reads = dict(reads, row="x{j}[col]")
        lines += _element_lines(program, [grid_reads[m] for m in modes], "", "    ")
    elif items == 1:
        lines += ["    const int i = get_global_id(0);", "    if (i >= n) return;"]
        lines += _element_lines(program, [reads[m] for m in modes], "", "    ")
    else:
        # Four neighbouring elements: vload4/vstore4 move 16 bytes at once (as the
        # unfused _same kernels do), the tail is taken one element at a time.
        lines += ["    const int first = 4 * get_global_id(0);", "    if (first + 4 <= n) {"]
        for j, mode in enumerate(modes):
            vector = "vload4(0, x{j} + first)" if mode == "same" else "(VEC)(x{j}[0])"
            lines.append("        const %s4 w%d = %s;" % (
                cl_type(program.in_dtypes[j]), j,
                vector.format(j=j).replace("VEC", cl_type(program.in_dtypes[j]) + "4")))
        for lane in range(4):
            lines += _element_lines(program, ["w%d.s%d" % (j, lane) for j in range(len(modes))],
                                    "_%d" % lane, "        ", store=False)
        for j, k in enumerate(program.outputs):
            lines.append("        vstore4((%s4)(%s), 0, y%d + first);" % (
                cl_type(program.node_dtypes[k]),
                ", ".join("t%d_%d" % (k, lane) for lane in range(4)), j))
        lines += ["    } else {", "        for (int i = first; i < n; ++i) {"]
        lines += _element_lines(program, [reads[m].format(j=j) for j, m in enumerate(modes)],
                                "", "            ")
        lines += ["        }", "    }"]
    lines.append("}")
    return "\n".join(lines)


def _reduce_kernel(program, modes, form):
    """The kernel of a program ending in a reduction, over ``[outer, R, inner]``
    reducing ``R`` (the reduced axes are adjacent, see ``can_fuse``).

    As ``reduction.cl``'s kernels: the ``rows`` form (``inner == 1``) runs one
    work group of ``WG`` items per output, each item striding over the row,
    then a tree in local memory; the ``cols`` form runs one work item per
    output walking ``R``.  Each element is computed by the cluster's ops where
    it is read — the values before the reduction never reach memory.
    """
    identity, combine, final, element_value = REDUCERS[program.reduction]
    root = program.nodes[-1][1][0]
    value = element_value.replace("e", ("v" if root[0] == "x" else "t") + root[1:])
    params = _params(program, modes) + ["const int R", "const int inner", "const T scale"]
    reads = [_READS.get(mode) for mode in modes]   # None: the axes, not read here
    element = _element_lines(program, reads, "", "        ", store=False, skip_last=True)
    lines = ["#define T %s" % cl_type(program.node_dtypes[-1]),
             "#define COMBINE(a, b) (%s)" % combine, "#define WG %d" % reduction.WG]
    if form == "rows":
        lines += ["__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))",
                  "void fused(%s) {" % ", ".join(params),
                  "    __local T part[WG];",
                  "    const int row = get_group_id(0), l = get_local_id(0);",
                  "    T acc = %s;" % identity,
                  "    for (int r = l; r < R; r += WG) {",
                  "        const int i = row * R + r;"]
        lines += element + ["        acc = COMBINE(acc, %s);" % value, "    }",
                            "    part[l] = acc;",
                            "    barrier(CLK_LOCAL_MEM_FENCE);",
                            "    for (int s = WG / 2; s > 0; s >>= 1) {",
                            "        if (l < s) part[l] = COMBINE(part[l], part[l + s]);",
                            "        barrier(CLK_LOCAL_MEM_FENCE);",
                            "    }",
                            "    if (l == 0) { const T v = part[0]; y0[row] = %s; }" % final,
                            "}"]
    else:
        lines += ["__kernel void fused(%s) {" % ", ".join(params),
                  "    const int g = get_global_id(0);",
                  "    if (g >= n) return;   // n: the number of outputs",
                  "    const int o = g / inner, k = g % inner;",
                  "    T acc = %s;" % identity,
                  "    for (int r = 0; r < R; r++) {",
                  "        const int i = (o * R + r) * inner + k;"]
        lines += element + ["        acc = COMBINE(acc, %s);" % value, "    }",
                            "    { const T v = acc; y0[g] = %s; }" % final, "}"]
    return "\n".join(lines + ["#undef WG", "#undef COMBINE", "#undef T"])


def _element_lines(program, reads, suffix, indent, store=True, skip_last=False):
    """The statements computing one element: the inputs read, each op, the stores
    (``skip_last``: not the last op, a reduction)."""
    lines = []
    for j, read in enumerate(reads):
        if read is None:
            continue
        lines.append("%sconst %s v%d%s = %s;" % (indent, cl_type(program.in_dtypes[j]), j,
                                                 suffix, read.format(j=j)))
    for k, (_, operands, _) in enumerate(program.nodes[:-1] if skip_last else program.nodes):
        args = ", ".join(("v" if a[0] == "x" else "t") + a[1:] + suffix for a in operands)
        lines.append("%sconst %s t%d%s = f%d(%s);" % (indent, cl_type(program.node_dtypes[k]),
                                                      k, suffix, k, args))
    if store:
        lines += ["%sy%d[i] = t%d;" % (indent, j, k) for j, k in enumerate(program.outputs)]
    return lines


# ---- running it -----------------------------------------------------------------------
_kernels = {}   # (target, program, modes) -> pyopencl.Kernel


def _compiled(target, program, modes, form=None):
    key = (target, program, modes, form)
    kernel = _kernels.get(key)
    if kernel is None:
        text = kernel_source(program, modes, form)
        name = "fused_" + hashlib.sha1(text.encode()).hexdigest()[:16]
        programs.register_source(name, text)
        wide = np.dtype(np.float64) in program.node_dtypes + program.in_dtypes
        kernel = programs.get_kernel(target, name, "fused", np.float64 if wide else np.float32)
        _kernels[key] = kernel
    return kernel


def read_mode(shape, full):
    """How an input of ``shape`` is read in a kernel over ``full``."""
    if tuple(shape) == tuple(full):
        return "same"
    if int(np.prod(shape)) == 1:
        return "scalar"
    if elementwise.repeats_along_leading_axes(shape, full):
        return "row"
    return "bcast"


def node_shapes(ctx, program, in_shapes):
    """The shape of each value ``t<k>``, by NumPy broadcasting of its operands (None
    for a reduction, see :func:`_fused_reduction`)."""
    shapes = []
    for op_type, operands, _ in program.nodes:
        if op_type in REDUCERS:
            shapes.append(None)
            continue
        operand_shapes = [in_shapes[int(a[1:])] if a[0] == "x" else shapes[int(a[1:])]
                          for a in operands]
        if op_type == "Select":
            _check_select(ctx, *operand_shapes)
        shapes.append(_broadcast(ctx, op_type, operand_shapes))
    return shapes


def _check_select(ctx, condition, t, e):
    """TF1 ``Select``'s shape rules (a condition of ``t``'s rank or a scalar, see
    ``can_fuse``), with the unfused kernel's errors."""
    if tuple(t) != tuple(e):
        raise ctx.invalid_argument("'then' and 'else' must have the same size.  but received: "
                                   "%s vs. %s" % (list(t), list(e)))
    if len(condition) > 0 and tuple(condition) != tuple(t):
        raise ctx.invalid_argument("'cond' and 'then' must have the same size.  but received: "
                                   "%s vs. %s" % (list(condition), list(t)))


def _broadcast(ctx, op_type, shapes):
    first = tuple(shapes[0])
    if all(tuple(s) == first for s in shapes):
        return first
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ctx.invalid_argument("Incompatible shapes: %s (in the fused %s)" % (
            " vs. ".join("[%s]" % ",".join(map(str, s)) for s in shapes), op_type)) from None


def _cluster_shape(shapes):
    """The broadcast of every value's shape, or None where two values' shapes do not
    broadcast (possible when no op of the cluster combines them)."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None


def fused_elementwise(ctx, *inputs, Tin, Tout, expression, outputs, fused_ops):  # noqa: N803
    """The ``_FusedElementwise`` kernel: the cluster's program in one generated kernel."""
    del Tout, fused_ops
    in_dtypes = [np.dtype(t.as_numpy_dtype) for t in Tin]
    program = program_of(expression, outputs, in_dtypes)
    if program.reduction:
        return _fused_reduction(ctx, program, inputs)
    inputs = [on_device(ctx, x, d) for x, d in zip(inputs, in_dtypes)]
    in_shapes = [tuple(x.shape) for x in inputs]
    shapes = node_shapes(ctx, program, in_shapes)
    full = shapes[program.outputs[0]] if len(set(in_shapes)) == 1 else _cluster_shape(shapes)
    if full is None or any(shapes[k] != full for k in program.outputs):
        return _run_unfused(ctx, program, inputs)
    results = [empty(ctx, full, program.node_dtypes[k]) for k in program.outputs]
    n = int(np.prod(full))
    if n:
        modes = tuple(read_mode(s, full) for s in in_shapes)
        rows = {int(np.prod(s)) for s, m in zip(in_shapes, modes) if m == "row"}
        form = "grid" if len(rows) == 1 and "bcast" not in modes else None
        kernel = _compiled(ctx.device.target, program, modes, form)
        args = [r.data for r in results] + [x.data for x in inputs] + [i32(n)]
        args += [i32(int(np.prod(s))) for s, m in zip(in_shapes, modes) if m == "row"]
        bcast = [s for s, m in zip(in_shapes, modes) if m == "bcast"]
        if bcast:
            args += list(strided_args(full, *(broadcast_strides(s, full) for s in bcast)))
        if form == "grid":
            (m,) = rows
            size = (m, n // m)
        else:
            size = (n if "row" in modes or bcast else elementwise.vector_items(n),)
        programs.launch(ctx.device.queue, kernel, size, args)
    return results[0] if len(results) == 1 else tuple(results)


def _fused_reduction(ctx, program, inputs):
    """A program ending in a reduction, in one kernel (see :func:`_reduce_kernel`), or
    op by op where that kernel cannot serve: another value of the cluster is read
    outside, the axes are not adjacent, or a reduced axis is empty."""
    axes_at = program.axes_input
    inputs = [x if j == axes_at else on_device(ctx, x, d)
              for j, (x, d) in enumerate(zip(inputs, program.in_dtypes))]
    in_shapes = [tuple(x.shape) for x in inputs]
    shapes = node_shapes(ctx, program, in_shapes)
    root = program.nodes[-1][1][0]
    full = in_shapes[int(root[1:])] if root[0] == "x" else shapes[int(root[1:])]
    axes = _axes_at_run_time(ctx, program, full, inputs)
    adjacent = bool(axes) and axes == list(range(axes[0], axes[-1] + 1))
    if program.outputs != [len(program.nodes) - 1] or not adjacent or 0 in full:
        return _run_unfused(ctx, program, inputs)
    outer = int(np.prod(full[:axes[0]]))
    reduced = int(np.prod(full[axes[0]:axes[-1] + 1]))
    inner = int(np.prod(full[axes[-1] + 1:]))
    keep_dims = program.nodes[-1].attrs.get("keep_dims", False)
    out = empty(ctx, [1 if d in axes else size for d, size in enumerate(full)] if keep_dims
                else [size for d, size in enumerate(full) if d not in axes],
                program.node_dtypes[-1])
    modes = tuple("host" if j == axes_at else read_mode(s, full) for j, s in enumerate(in_shapes))
    form = "rows" if inner == 1 else "cols"
    kernel = _compiled(ctx.device.target, program, modes, form)
    args = [out.data] + [x.data for j, x in enumerate(inputs) if j != axes_at]
    args.append(i32(outer * inner))
    args += [i32(int(np.prod(s))) for s, m in zip(in_shapes, modes) if m == "row"]
    bcast = [s for s, m in zip(in_shapes, modes) if m == "bcast"]
    if bcast:
        args += list(strided_args(full, *(broadcast_strides(s, full) for s in bcast)))
    scale = {"Mean": 1.0 / reduced, "L2Loss": 0.5}.get(program.reduction, 1.0)
    args += [i32(reduced), i32(inner), out.dtype.type(scale)]
    if form == "rows":
        programs.launch(ctx.device.queue, kernel, (outer * reduction.WG,), args,
                        (reduction.WG,))
    else:
        programs.launch(ctx.device.queue, kernel, (outer * inner,), args)
    return out


def _axes_at_run_time(ctx, program, shape, inputs):
    """The axes the program's reduction reduces of its operand of ``shape``."""
    if program.reduction == "L2Loss":
        return list(range(len(shape)))
    if program.reduction == "BiasAddGrad":   # NHWC (see can_fuse)
        if len(shape) < 2:
            raise ctx.invalid_argument("Input tensor must be at least 2D: %s" % (list(shape),))
        return list(range(len(shape) - 1))
    return reduction.reduction_axes(ctx, shape, inputs[program.axes_input])


def _run_unfused(ctx, program, inputs):
    """The program op by op with the unfused kernels (outputs of several shapes)."""
    values = {"x%d" % j: x for j, x in enumerate(inputs)}
    for k, node in enumerate(program.nodes):
        op_type, args = node[0], [values[a] for a in node[1]]
        out_dtype = program.node_dtypes[k]
        if op_type == "Cast":
            value = _cast(ctx, args[0], out_dtype)
        elif op_type in _UNFUSED_SPECIAL:
            value = _UNFUSED_SPECIAL[op_type](ctx, *args, **node.attrs)
        elif op_type == "BiasAddGrad":
            value = nn.bias_add_grad(ctx, args[0], "NHWC")
        elif op_type == "L2Loss":
            value = nn.l2_loss(ctx, args[0])
        elif op_type in REDUCERS:
            value = reduction.REDUCTIONS[op_type](ctx, *args, keep_dims=node.attrs["keep_dims"])
        else:
            expression = elementwise.EXPRESSIONS[ALIASES.get(op_type, op_type)]
            bool_out = np.bool_ if expression.bool_output else None
            value = (elementwise.unary(ctx, expression.kernel, *args, bool_out)
                     if expression.arity == 1 else
                     elementwise.binary(ctx, expression.kernel, *args, bool_out))
        values["t%d" % k] = value
    results = [values["t%d" % k] for k in program.outputs]
    return results[0] if len(results) == 1 else tuple(results)


# The unfused kernels of the ops of SPECIAL (their float attrs by name).
_UNFUSED_SPECIAL = {"AddN": elementwise.add_n, "Select": elementwise.select,
                    "SelectV2": elementwise.select, "LeakyRelu": elementwise.leaky_relu,
                    "LeakyReluGrad": elementwise.leaky_relu_grad,
                    "ZerosLike": elementwise.zeros_like,
                    "Identity": lambda ctx, x: x, "StopGradient": lambda ctx, x: x}


def _cast(ctx, x, dtype):
    if x.dtype == dtype:
        return x
    out = empty(ctx, x.shape, dtype)
    defines = {"DST": "uchar", "DST_BOOL": "1"} if dtype == np.bool_ else {"DST": cl_type(dtype)}
    run(ctx, "cast", "cast", x.dtype, out.size, out, x, i32(out.size), **defines)
    return out


def planned_source(op):
    """The kernel source of fused op ``op`` for its inputs' static shapes
    (``Device.fused_kernel_source``); inputs of unknown shape count as broadcast."""
    in_dtypes = [np.dtype(t.as_numpy_dtype) for t in op.get_attr("Tin")]
    program = program_of(op.get_attr("expression"), op.get_attr("outputs"), in_dtypes)
    if program.reduction:
        return _planned_reduction_source(op, program)
    full = op.outputs[0].shape
    modes = []
    for tensor in op.inputs:
        shape = tensor.shape
        if shape.is_fully_defined() and full.is_fully_defined():
            modes.append(read_mode(shape.as_list(), full.as_list()))
        elif shape.is_fully_defined() and shape.num_elements() == 1:
            modes.append("scalar")
        elif shape.rank is not None and full.rank is not None and (
                shape.as_list() == full.as_list()):
            modes.append("same")
        else:
            modes.append("bcast")
    return kernel_source(program, tuple(modes))


def _planned_reduction_source(op, program):
    """:func:`planned_source` of a program ending in a reduction: inputs of the shape
    of the reduced value read at their index, the form from the axes."""
    axes_at = program.axes_input
    shapes = [t.shape for j, t in enumerate(op.inputs) if j != axes_at]
    rank = max((s.rank or 0) for s in shapes)
    if program.reduction == "BiasAddGrad":
        trailing = False
    elif axes_at is None or op.inputs[axes_at].op.type != "Const":
        trailing = True
    else:
        axes = np.reshape(op.inputs[axes_at].op.get_attr("value"), -1)
        trailing = max(int(a) % max(rank, 1) for a in axes) == rank - 1
    modes = tuple("host" if j == axes_at else
                  "same" if t.shape.rank == rank else "bcast" for j, t in enumerate(op.inputs))
    return kernel_source(program, modes, "rows" if trailing else "cols")


# Registered for any input dtypes: the dtypes are the program's, checked by can_fuse.
KERNELS.append(("_FusedElementwise", fused_elementwise, ("float", "int", "small_int", "bool")))
