"""Compiling an :class:`~minitf.runtime.executor.ExecutorPlan` to straight-line Python.

A plan's schedule is fixed, so a step on one thread is just a sequence of
kernel calls.  Interpreting the plan (looking up inputs in dicts, counting
pending inputs) would cost more than the small kernels themselves; instead the
plan is turned once into a Python function whose body *is* the schedule::

    def step(feed_dict):
        try:
            f0, f1 = feed_dict.values()
            f0 = feed0(f0)
            f1 = feed1(f1)
            v2_0 = kernel2(ctx2, f0, f1)
            del f0, f1            # released after their last consumer
            return v2_0
        except Exception as e:
            ...                   # find the failing op from the line number

Each line runs one op, so when a kernel raises, the line number in the
traceback says which op failed; the error is re-raised as a ``tf.errors``
class naming the op and the ``file:line`` where the user created it.  Print
``step.source`` to read the generated code.

**Constant folding.**  Values that cannot change between steps are computed
once, when the step is compiled, and the generated code reads them as
globals: every ``Const``, and the small results of pure shape and array ops
(:data:`FOLDABLE_OPS`) whose inputs are all such constants, as grappler's
constant folding does in TF.  A gradient, for instance, starts from
``Fill(shape, 1.0)``: that op and the ``Reshape`` of its result never run in
the step.

**Buffer forwarding.**  An intermediate value that its op is the last to read
need not survive the op: a kernel may compute its output in that buffer
instead of allocating a new one (``ReLU(x)`` into ``x``), as TF's kernels do
with ``forward_input_or_allocate_output``.  A kernel function says which input
it can take over with a ``forwardable_input`` attribute; where that input dies
at the op, the line passes the op a second, forwarding context
(:meth:`~minitf.runtime.kernel_context.KernelContext.forwarding`) when, at run
time, the step's own variable is the value's only holder::

    v5_0 = kernel5((ctx5_fw if _refcount(v4_0) == 2 else ctx5), v4_0)

A value the user fed or fetched, a variable's buffer, a constant, or a value
another variable still names (an ``Identity`` passes its input through) has
more holders, so its buffer is never written.
"""

import itertools
import linecache
import sys
import time

import numpy as np

from minitf.framework import errors
from minitf.runtime.executor import Source

_counter = itertools.count()

# Reusing a buffer saves an allocation, which matters for large tensors only:
# below this many elements NumPy's small-block allocator is faster than the
# run-time checks that decide whether a buffer may be reused.
FORWARDING_MIN_ELEMENTS = 1024

# Pure ops that the compiler runs once, when all their inputs are constants,
# and the largest result it keeps for the step's lifetime (a folded value is
# held as long as the step, so large ones are left to run in the step).
FOLDABLE_OPS = frozenset({"Cast", "ExpandDims", "Fill", "Pack", "Rank", "Reshape", "Shape",
                          "Size", "Squeeze"})
FOLDING_MAX_ELEMENTS = 1 << 16


def compile_plan(plan, feed_converters, single_fetch, traced=False):
    """Returns ``step(feed_dict)`` running ``plan``.

    Args:
        plan: the ExecutorPlan.
        feed_converters: per feed, ``convert(value) -> array`` (validates it).
        single_fetch: return the one fetched value instead of a tuple.
        traced: compile ``step(feed_dict, trace)`` instead, which appends
            ``(node index, start, end)`` (``time.perf_counter`` seconds) to
            the list ``trace`` for every op it runs.
    """
    namespace = {"_locate": None, "_now": time.perf_counter, "_own": own,
                 "_as_scalar": as_scalar, "_unshared": _unshared, "_refcount": sys.getrefcount,
                 "_quiet_fp": _quiet_fp}
    lines = ["def step(feed_dict%s):" % (", trace" if traced else ""), "    try:"]
    line_ops = {}
    # Constants are computed once, now, rather than in every step (TF's constant
    # folding); the generated code refers to their values as globals.
    folded = _fold_constants(plan, namespace)
    quiet = any(hasattr(node.kernel, "quiet_body")
                for i, node in enumerate(plan.nodes) if i not in folded)
    indent = "        "
    if quiet:
        lines.append(indent + "with _quiet_fp():")
        indent += "    "

    def emit(text, op=None):
        lines.append(indent + text)
        line_ops[len(lines)] = op

    if plan.feeds:
        names = ["f%d" % i for i in range(len(plan.feeds))]
        emit("%s, = feed_dict.values()" % ", ".join(names))
        for i, convert in enumerate(feed_converters):
            namespace["feed%d" % i] = convert
            emit("f%d = feed%d(f%d)" % (i, i, i))

    frees = {}
    for src, node in plan.last_use.items():
        if src.node not in folded:
            frees.setdefault(node, []).append(_var(src))
    used = {src for n in plan.nodes for src in n.inputs} | set(plan.fetches)

    for i, node in enumerate(plan.nodes):
        if i in folded:
            continue
        # Inside the step-wide ``_quiet_fp`` a kernel's own errstate is redundant.
        namespace["kernel%d" % i] = getattr(node.kernel, "quiet_body", node.kernel)
        namespace["ctx%d" % i] = node.ctx
        args = ["ctx%d" % i]
        forwarded = _forwarded_input(plan, i, folded)
        if forwarded is not None:
            namespace["ctx%d_fw" % i] = node.ctx.forwarding()
            args[0] = "(ctx%d_fw if _refcount(%s) == %d else ctx%d)" % (
                i, _var(forwarded), _SOLE_HOLDER, i)
        for src, deref in zip(node.inputs, node.deref):
            args.append(_var(src) + (".get()" if deref else ""))
        for name, value in node.attrs.items():
            namespace["attr%d_%s" % (i, name)] = value
            args.append("%s=attr%d_%s" % (name, i, name))
        call = "kernel%d(%s)" % (i, ", ".join(args))
        outs = [_var(Source(i, j)) if Source(i, j) in used else "_" for j in range(node.num_outputs)]
        if traced:
            emit("start = _now()", node.op)
        if node.num_outputs == 0 or all(o == "_" for o in outs):
            emit(call, node.op)
        elif node.num_outputs == 1:
            emit("%s = %s" % (outs[0], call), node.op)
        else:
            emit("%s, = %s" % (", ".join(outs), call), node.op)
        if traced:
            emit("trace.append((%d, start, _now()))" % i, node.op)
        if i in frees:
            emit("del " + ", ".join(sorted(set(frees[i]))), node.op)

    results = []
    for k, (src, deref) in enumerate(zip(plan.fetches, plan.fetch_deref)):
        if deref:  # reading a fetched reference may fail: give it a line of its own
            emit("r%d = %s.get()" % (k, _var(src)), plan.nodes[src.node].op if not src.is_feed else None)
            results.append("r%d" % k)
        else:
            results.append(_var(src))
        if src.node in folded or deref:  # the session keeps these buffers: copy
            results[-1] = "_own(%s)" % results[-1]
        elif _is_scalar(plan, src):
            results[-1] = "_as_scalar(%s)" % results[-1]
        else:
            results[-1] = "_unshared(%s)" % results[-1]
    if single_fetch:
        emit("return " + results[0])
    else:
        emit("return (%s)" % "".join(r + ", " for r in results))
    lines += ["    except Exception as e:",
              "        error = _locate(e)",
              "        if error is e:",
              "            raise",
              "        raise error from e"]
    source = "\n".join(lines) + "\n"
    filename = "<minitf-step-%d>" % next(_counter)
    namespace["_locate"] = _make_locator(filename, line_ops)
    code = compile(source, filename, "exec")
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(code, namespace)
    step = namespace["step"]
    step.source = source
    return step


def _fold_constants(plan, namespace):
    """Computes the step's constant values now; returns the indices of their nodes.

    Those are the ``Const`` ops, and the small results of pure ops in
    :data:`FOLDABLE_OPS` whose inputs are all constants (grappler's constant
    folding): the ``Fill`` of ones that starts a gradient and its ``Reshape``
    need not run in every step.  An op that fails here is left to the step, so
    that its error is raised when it runs, as in TF.
    """
    folded = set()
    for i, node in enumerate(plan.nodes):
        if node.op.type != "Const" and not _foldable(node, folded):
            continue
        values = [namespace[_var(src)] for src in node.inputs]
        try:
            outputs = node.kernel(node.ctx, *values, **node.attrs)
        except Exception:  # pylint: disable=broad-except
            continue
        if node.num_outputs == 1:
            outputs = (outputs,)
        for j, value in enumerate(outputs):
            namespace[_var(Source(i, j))] = value
        folded.add(i)
    return folded


def _foldable(node, folded):
    """Whether ``node`` is a small pure op reading only folded constants."""
    if node.op.type not in FOLDABLE_OPS or node.op.control_inputs or any(node.deref):
        return False
    if any(src.is_feed or src.node not in folded for src in node.inputs):
        return False
    sizes = [out.shape.num_elements() for out in node.op.outputs]
    return all(size is not None and size <= FOLDING_MAX_ELEMENTS for size in sizes)


def _quiet_fp():
    """NumPy's floating-point warnings off, for a whole step at once.

    TF's kernels follow IEEE rules silently (``1.0 / 0`` is ``inf``).  A kernel
    that would silence NumPy itself, at about 1 µs per ``np.errstate``, may
    carry a ``quiet_body`` attribute: the same kernel without that wrapper.
    A step containing such kernels calls their bodies inside this one
    ``np.errstate`` instead.
    """
    return np.errstate(divide="ignore", invalid="ignore", over="ignore")


def _forwarded_input(plan, i, folded):
    """The Source whose buffer node ``i``'s kernel may take over, or None.

    That is the input the kernel declares in ``forwardable_input``, if this
    node is its last reader and it is an intermediate value of the step (not
    a feed, a constant or a variable read through its reference), passed once.
    """
    node = plan.nodes[i]
    k = getattr(node.kernel, "forwardable_input", None)
    if k is None or k >= len(node.inputs) or node.deref[k]:
        return None
    src = node.inputs[k]
    if src.is_feed or src.node in folded or plan.last_use.get(src) != i:
        return None
    size = plan.nodes[src.node].op.outputs[src.index].shape.num_elements()
    if size is not None and size < FORWARDING_MIN_ELEMENTS:
        return None  # known to be small: allocating is cheaper than checking
    return src if node.inputs.count(src) == 1 else None


def _sole_holder_refcount():
    """``sys.getrefcount`` of a value that one local variable alone holds (2 on CPython)."""
    value = object()
    return sys.getrefcount(value)


_SOLE_HOLDER = _sole_holder_refcount()


def _is_scalar(plan, src):
    """Whether a fetched value is statically 0-d (TF returns those as NumPy scalars)."""
    tensor = plan.feeds[src.index] if src.is_feed else plan.nodes[src.node].op.outputs[src.index]
    return tensor.shape.ndims == 0


def as_scalar(value):
    """A 0-d array as a NumPy scalar, as ``Session.run`` returns it in TF."""
    return value[()] if type(value) is np.ndarray and value.ndim == 0 else value


def _fetch_refcount():
    """``sys.getrefcount`` seen by :func:`_unshared` for an array that only the
    calling step's one local name holds (measured: it differs between Pythons)."""
    def probe(value):
        return sys.getrefcount(value)
    value = np.zeros(1)
    return probe(value)


_FETCH_REFCOUNT = _fetch_refcount()


def _unshared(value):
    """A fetched array the caller may mutate without touching session state.

    A kernel may return a view (``Reshape``, ``StridedSlice``) or the very
    buffer of a variable (``Identity`` of a read): writing into the fetched
    array would then change the variable.  Such an array, a view or one that
    something besides the step still holds, is copied, as TF hands out a
    buffer only when it is the sole owner.  A 0-d array becomes a NumPy scalar.
    """
    if type(value) is not np.ndarray:
        return value
    if value.ndim == 0:
        return value[()]
    if not value.flags.owndata or sys.getrefcount(value) > _FETCH_REFCOUNT:
        return value.copy()
    return value


def own(value):
    """A fetched constant, as the caller's own value (the folded one is shared).

    A device buffer is returned as is: its device's ``to_host`` copies it out.
    """
    if type(value) is not np.ndarray:
        return value
    return value[()] if value.ndim == 0 else value.copy()


def _var(src):
    return "f%d" % src.index if src.is_feed else "v%d_%d" % (src.node, src.index)


def _make_locator(filename, line_ops):
    def locate(error):
        tb = error.__traceback__
        op = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == filename:
                op = line_ops.get(tb.tb_lineno)
            tb = tb.tb_next
        if op is None:
            return error  # a feed that failed its checks: raise it unchanged
        return located_error(error, op)
    return locate


def located_error(error, op):
    """``error`` as a ``tf.errors`` class whose message names ``op`` and its origin.

    For an op of a device's partition, the error is about the op of the
    user's graph it was copied from (see ``partition.py``).
    """
    op = getattr(op, "_original_op", op)
    where = "\n\t [[node %s (defined at %s:%d) ]]" % ((op.name,) + tuple(op.traceback))
    if isinstance(error, errors.OpError):
        if error.op is not None and "[[node" in error.message:
            return error
        return type(error)(op.node_def, op, error.message + where)
    if isinstance(error, (ValueError, IndexError, ArithmeticError, np.linalg.LinAlgError)):
        cls = errors.InvalidArgumentError
    elif isinstance(error, MemoryError):
        cls = errors.ResourceExhaustedError
    else:
        cls = errors.InternalError
    message = "%s: %s" % (type(error).__name__, error)
    return cls(op.node_def, op, "%s (op '%s' of type %s)%s" % (message, op.name, op.type, where))
