"""The generated step: an :class:`~minitf.runtime.executors.plan.ExecutorPlan`
compiled to straight-line Python.

Read :mod:`~minitf.runtime.executors.interpreter` first: it runs a plan with a
loop over its nodes.  On one thread a plan's schedule is fixed, so that loop
— looking inputs up in a dict, counting readers — costs more than the small
kernels themselves.  This executor instead turns the plan, once, into a
Python function whose body *is* the schedule, one line per op::

    # constant bound once: v0_0 = Const 'y/shape' int32[2]
    def step(feed_dict, *, deadline=None, trace=None):
        ...
            f0, = feed_dict.values()
            f0 = feed0(f0)
            v1_0 = kernel1(ctx1, f0, v0_0)                # Reshape 'y'
            del f0                                        # (after its last reader)
            return (_unshared(v1_0), )

Print ``step.source`` to read the real thing: a header lists the constants
and the buffers it may forward, and every line names its op.  When a kernel
raises, the line number in the traceback says which op failed; the error is
re-raised as a ``tf.errors`` class naming the op and where the user created it.

Three things make the step faster than the interpreter, and each is visible
in the source:

* **Constants** (``Const`` ops — after the constant-folding pass, also the
  small values it folded) are computed once, when the step is compiled, and
  read as globals.
* **Buffer forwarding.**  An intermediate value that its op is the last to
  read need not survive the op: a kernel may compute its output in that
  buffer instead of allocating a new one (``ReLU(x)`` into ``x``), as TF's
  kernels do with ``forward_input_or_allocate_output``.  A kernel says which
  input it can take over with a ``forwardable_input`` attribute; where that
  input dies at the op, the line passes a second, forwarding context
  (:meth:`~minitf.runtime.kernel_context.KernelContext.forwarding`) when, at
  run time, the step's own variable is the value's only holder::

      v5_0 = kernel5((ctx5_fw if _refcount(v4_0) == 2 else ctx5), v4_0)

  A value the user fed or fetched, a variable's buffer, a constant, or a
  value another variable still names has more holders, so its buffer is
  never written.
* **Floating-point warnings** are silenced once for the whole step (kernels
  with a ``quiet_body`` skip their own ``np.errstate``).

A long step still stops when its deadline passes or its session closes: every
:data:`POLL_EVERY` ops the body calls ``_poll()``, which checks both
(:func:`~minitf.runtime.kernel_context.check_step`).  Checking every few ops
rather than after each keeps the cost per op to a few nanoseconds.
"""

import itertools
import linecache
import sys
import time

import numpy as np

from minitf.runtime.executors.located_errors import located_error
from minitf.runtime.executors.plan import Source
from minitf.runtime.kernel_context import check_step, set_step_deadline
from minitf.runtime.values import as_scalar, own, unshared

_counter = itertools.count()

# Reusing a buffer saves an allocation, which matters for large tensors only:
# below this many elements NumPy's small-block allocator is faster than the
# run-time checks that decide whether a buffer may be reused.
FORWARDING_MIN_ELEMENTS = 1024

#: The generated body checks the step's deadline and cancellation after this many ops.
POLL_EVERY = 16


def compile_plan(plan, traced=False, cancellation=None):
    """Returns ``step(feed_dict, *, deadline=None, trace=None)`` running ``plan``.

    The step returns the fetched values as a tuple.

    Args:
        plan: the ExecutorPlan.
        traced: record ``(op, start, end)`` (``time.perf_counter`` seconds)
            for every op into ``trace[device name]`` when a ``trace`` dict is passed.
        cancellation: the session's
            :class:`~minitf.runtime.kernel_context.Cancellation` (None: none).
    """
    return _StepWriter(plan, traced, cancellation).compile()


class _StepWriter:
    """Writes the source of one plan's step, line by line."""

    def __init__(self, plan, traced, cancellation=None):
        self.plan = plan
        self.traced = traced
        self.namespace = {"_locate": None, "_now": time.perf_counter, "_own": own,
                          "_as_scalar": as_scalar, "_unshared": unshared,
                          "_refcount": sys.getrefcount, "_quiet_fp": _quiet_fp,
                          "_with_deadline": _with_deadline, "_cancellation": cancellation,
                          "_poll": _make_poll(cancellation),
                          "_device": plan.nodes[0].ctx.device.name if plan.nodes else ""}
        self.lines = []
        self.line_ops = {}  # line number -> the op it runs
        self.indent = ""
        self.constants = _bind_constants(plan, self.namespace)

    def emit(self, text, op=None):
        if op is not None:
            text = "%-60s # %s '%s'" % (text, op.type, op.name)
        self.lines.append(self.indent + text)
        self.line_ops[len(self.lines)] = op

    def compile(self):
        self.write_header()
        self.emit("def step(feed_dict, *, deadline=None, trace=None):")
        self.indent = "    "
        self.emit("if deadline is not None:  # run again with the deadline installed")
        self.emit("    return _with_deadline(step, feed_dict, deadline, trace, _cancellation)")
        if self.traced:
            self.emit("records = [] if trace is None else trace.setdefault(_device, [])")
        self.emit("try:")
        self.indent = "        "
        if any(hasattr(node.kernel, "quiet_body") for i, node in enumerate(self.plan.nodes)
               if i not in self.constants):
            self.emit("with _quiet_fp():")
            self.indent += "    "
        self.write_feeds()
        self.write_nodes()
        self.write_return()
        self.indent = "    "
        self.lines += ["    except Exception as e:",
                       "        error = _locate(e)",
                       "        if error is e:",
                       "            raise",
                       "        raise error from e"]
        return self.build()

    def write_header(self):
        """Comment lines saying what was decided when compiling: constants, forwarding."""
        self.emit("# Generated by minitf.runtime.executors.generated from a plan of %d ops."
                  % len(self.plan.nodes))
        for i in sorted(self.constants):
            op = self.plan.nodes[i].op
            out = op.outputs[0]
            self.emit("# constant bound once: %s = %s '%s' %s%s" % (
                _var(Source(i, 0)), op.type, op.name, out.dtype.base_dtype.name,
                list(out.shape.as_list()) if out.shape.ndims is not None else "[?]"))
        for i in range(len(self.plan.nodes)):
            src = _forwarded_input(self.plan, i, self.constants)
            if src is not None:
                self.emit("# may forward: %s into the output of %s '%s'" % (
                    _var(src), self.plan.nodes[i].op.type, self.plan.nodes[i].op.name))

    def write_feeds(self):
        if not self.plan.feeds:
            return
        names = ["f%d" % i for i in range(len(self.plan.feeds))]
        self.emit("%s, = feed_dict.values()" % ", ".join(names))
        for i, convert in enumerate(self.plan.feed_converters):
            self.namespace["feed%d" % i] = convert
            self.emit("f%d = feed%d(f%d)" % (i, i, i))

    def write_nodes(self):
        plan, namespace = self.plan, self.namespace
        frees = {}
        for src, node in plan.last_use.items():
            if src.node not in self.constants:
                frees.setdefault(node, []).append(_var(src))
        used = {src for n in plan.nodes for src in n.inputs} | set(plan.fetches)
        written = 0
        for i, node in enumerate(plan.nodes):
            if i in self.constants:
                continue
            if written and written % POLL_EVERY == 0:
                self.emit("_poll()  # the deadline passed, or the session closed?")
            written += 1
            # Inside the step-wide ``_quiet_fp`` a kernel's own errstate is redundant.
            namespace["kernel%d" % i] = getattr(node.kernel, "quiet_body", node.kernel)
            namespace["ctx%d" % i] = node.ctx
            namespace["op%d" % i] = node.op
            args = ["ctx%d" % i]
            forwarded = _forwarded_input(plan, i, self.constants)
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
            outs = [_var(Source(i, j)) if Source(i, j) in used else "_"
                    for j in range(node.num_outputs)]
            if self.traced:
                self.emit("start = _now()", node.op)
            if node.num_outputs == 0 or all(o == "_" for o in outs):
                self.emit(call, node.op)
            elif node.num_outputs == 1:
                self.emit("%s = %s" % (outs[0], call), node.op)
            else:
                self.emit("%s, = %s" % (", ".join(outs), call), node.op)
            if self.traced:
                self.emit("records.append((op%d, start, _now()))" % i, node.op)
            if i in frees:
                self.emit("del " + ", ".join(sorted(set(frees[i]))), node.op)

    def write_return(self):
        plan = self.plan
        results = []
        for k, (src, deref) in enumerate(zip(plan.fetches, plan.fetch_deref)):
            if deref:  # reading a fetched reference may fail: give it a line of its own
                self.emit("r%d = %s.get()" % (k, _var(src)),
                          None if src.is_feed else plan.nodes[src.node].op)
                results.append("r%d" % k)
            else:
                results.append(_var(src))
            if src.node in self.constants or deref:  # the step keeps these buffers: copy
                results[-1] = "_own(%s)" % results[-1]
            elif _is_scalar(plan, src):
                results[-1] = "_as_scalar(%s)" % results[-1]
            else:
                results[-1] = "_unshared(%s)" % results[-1]
        self.emit("return (%s)" % "".join(r + ", " for r in results))

    def build(self):
        source = "\n".join(self.lines) + "\n"
        filename = "<minitf-step-%d>" % next(_counter)
        self.namespace["_locate"] = _make_locator(filename, self.line_ops)
        code = compile(source, filename, "exec")
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(code, self.namespace)
        step = self.namespace["step"]
        step.source = source
        return step


def _bind_constants(plan, namespace):
    """Computes the values of the plan's ``Const`` ops now; returns their node indices.

    A constant's kernel returns the same value every step, so the generated
    code reads it as a global instead of calling the kernel.  (Which small
    subgraphs become constants is the constant-folding pass's decision, made
    for every executor: :mod:`~minitf.runtime.passes.constant_folding`.)
    """
    constants = set()
    for i, node in enumerate(plan.nodes):
        if node.op.type != "Const":
            continue
        namespace[_var(Source(i, 0))] = node.kernel(node.ctx, **node.attrs)
        constants.add(i)
    return constants


def _with_deadline(step, feed_dict, deadline, trace, cancellation):
    """Runs ``step`` with ``deadline`` installed for its blocking kernels.

    Kept out of the generated code, so that a step without a deadline pays
    for no more than one ``is not None`` test.
    """
    saved = set_step_deadline(deadline, cancellation)
    try:
        return step(feed_dict, trace=trace)
    finally:
        set_step_deadline(*saved)


def _make_poll(cancellation):
    """``_poll()`` of a generated step: raises if its session closed
    (``cancellation``) or the deadline installed for its thread passed."""
    if cancellation is None:
        return check_step

    def poll():
        if cancellation.cancelled:
            raise cancellation.error()
        check_step()
    return poll


def _quiet_fp():
    """NumPy's floating-point warnings off, for a whole step at once.

    TF's kernels follow IEEE rules silently (``1.0 / 0`` is ``inf``).  A kernel
    that would silence NumPy itself, at about 1 µs per ``np.errstate``, may
    carry a ``quiet_body`` attribute: the same kernel without that wrapper.
    A step containing such kernels calls their bodies inside this one
    ``np.errstate`` instead.
    """
    return np.errstate(divide="ignore", invalid="ignore", over="ignore")


def _forwarded_input(plan, i, constants):
    """The Source whose buffer node ``i``'s kernel may take over, or None.

    That is the input the kernel declares in ``forwardable_input``, if this
    node is its last reader and it is an intermediate value of the step (not
    a feed, a constant or a variable read through its reference), passed once.
    """
    node = plan.nodes[i]
    if i in constants:
        return None
    k = getattr(node.kernel, "forwardable_input", None)
    if k is None or k >= len(node.inputs) or node.deref[k]:
        return None
    src = node.inputs[k]
    if src.is_feed or src.node in constants or plan.last_use.get(src) != i:
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
