"""``opcheck``: one call that checks that an op's parts agree with each other.

An op is declared once but implemented many times: a shape function, a
kernel per device type and dtype, a gradient, and a form that survives a
``GraphDef``.  Each part is written by hand, and each can disagree with the
others without any single unit test noticing.  :func:`opcheck` builds the op
from ``op_fn`` on placeholders, feeds ``inputs`` and checks, in turn:

``shape``
    The shape function against the kernels: each output's static shape is
    compatible with the value the CPU kernel returns and its static dtype is
    the value's dtype — with the input shapes known, and again with them
    unknown (a shape function must cope with ``None`` dimensions), the two
    runs giving the same values.
``devices``
    Every registered device type that has a kernel for the op (``/gpu:0``
    when OpenCL is present, a plugin's own device) gives the CPU kernel's
    result, to the tolerance of the dtype (exact for integers and booleans).
``dtypes``
    Every dtype of the op's type constraint that has a kernel somewhere runs:
    the result has that dtype and the static shape, agrees with the result in
    the given dtype (floating dtypes, at the lower precision's tolerance) and
    on every device with a kernel for it agrees with the CPU.
``gradients``
    The registered gradient against central differences, for every floating
    input (:func:`~minitf.test.check_gradients`), in float64 when a float64
    kernel exists.
``gradgrad``
    The gradient of the gradient against central differences of the
    gradient (:func:`~minitf.test.gradgradcheck`) — what training with a
    gradient penalty or a Hessian-vector product needs.
``graph_def``
    The graph exported with ``as_graph_def`` and imported into a new graph
    computes exactly the same values (attrs and dtypes survive the trip).

All checks run, then one ``AssertionError`` names every check that failed and
why; with ``raise_on_failure=False`` the :class:`OpCheckReport` is returned
instead.  Mirrors ``torch.library.opcheck``; TF has no single equivalent
(its ``OpsTestBase``, ``gradient_checker`` and ``GraphDef`` tests are separate).

Example::

    from minitf.test import opcheck

    def test_softplus():
        x = np.linspace(-2.0, 2.0, 6, dtype=np.float32).reshape(2, 3)
        opcheck(tf.nn.softplus, [x])
"""

import dataclasses

import numpy as np

from minitf.framework import dtypes as dtypes_lib
from minitf.framework.graph import Graph
from minitf.framework.graph_def import import_graph_def
from minitf.framework.tensor import Tensor
from minitf.ops import array_ops
from minitf.registry import get_registry
from minitf.runtime.session import Session
from minitf.test.gradient_checker import check_gradients, gradgradcheck

CHECKS = ("shape", "devices", "dtypes", "gradients", "gradgrad", "graph_def")
"""Every check :func:`opcheck` knows, in the order it runs them."""

# (rtol, atol) when two kernels compute the same floating values: a few ulps,
# plus an absolute margin for results near zero.  Integers and booleans: exact.
_TOLERANCES = {dtypes_lib.float16: (1e-2, 1e-3), dtypes_lib.float32: (2e-5, 1e-5),
               dtypes_lib.float64: (1e-7, 1e-9)}


@dataclasses.dataclass
class CheckResult:
    """The outcome of one check.

    Attributes:
        name: the check (one of :data:`CHECKS`).
        status: ``"passed"``, ``"failed"`` or ``"skipped"``.
        detail: what was checked, why it failed, or why it did not apply.
    """

    name: str
    status: str
    detail: str = ""


@dataclasses.dataclass
class OpCheckReport:
    """What :func:`opcheck` found for one op.

    Attributes:
        op_type: the type of the op that ``op_fn`` built.
        results: one :class:`CheckResult` per check run.
    """

    op_type: str
    results: list = dataclasses.field(default_factory=list)

    @property
    def failed(self):
        """The names of the checks that failed."""
        return [r.name for r in self.results if r.status == "failed"]

    @property
    def passed(self):
        """True when no check failed."""
        return not self.failed

    def __getitem__(self, name):
        """The :class:`CheckResult` of check ``name``."""
        for result in self.results:
            if result.name == name:
                return result
        raise KeyError("opcheck ran no check named '%s'" % name)

    def __str__(self):
        lines = ["opcheck of op '%s':" % self.op_type]
        for r in self.results:
            lines.append("  %-9s %-7s %s" % (r.name, r.status, r.detail.replace("\n", "\n" + " " * 20)))
        return "\n".join(lines)


class _Skip(Exception):
    """A check that does not apply to this op; the message says why."""


def opcheck(op_fn, inputs, checks=CHECKS, dtypes=None, raise_on_failure=True):
    """Checks an op's shape function, kernels, dtypes, gradients and GraphDef form.

    Args:
        op_fn: builds the op from placeholders: ``op_fn(*tensors)`` returns
            the op's output Tensor (or a list of them), e.g. ``tf.nn.relu`` or
            ``lambda x: tf.reduce_sum(x, axis=1)``.  The op checked is the one
            that produced the first output.
        inputs: the values to feed, one array per argument of ``op_fn``; their
            dtypes are the placeholders' dtypes.
        checks: the names of the checks to run (default: all of :data:`CHECKS`).
        dtypes: the dtypes the ``dtypes`` check covers (default: the op's
            type constraint).
        raise_on_failure: raise when a check fails (default), or return the
            report either way.

    Returns:
        An :class:`OpCheckReport`.

    Raises:
        AssertionError: naming each check that failed, with the report.
        ValueError: for an unknown check name, or when ``op_fn`` builds a
            stateful op (its values differ from run to run: nothing to compare).
    """
    __tracebackhide__ = True  # pylint: disable=unused-variable
    unknown = sorted(set(checks) - set(CHECKS))
    if unknown:
        raise ValueError("opcheck knows the checks %s, not %s" % (", ".join(CHECKS), unknown))
    case = _Case(op_fn, [np.asarray(v) for v in inputs])
    if case.stateful_ops:
        raise ValueError("opcheck compares values, but op_fn builds the stateful op%s %s: "
                         "their values differ from run to run"
                         % ("s" if len(case.stateful_ops) > 1 else "",
                            ", ".join("'%s'" % t for t in case.stateful_ops)))
    report = OpCheckReport(case.op_type)
    runners = {"shape": _check_shape, "devices": _check_devices,
               "dtypes": lambda c: _check_dtypes(c, dtypes), "gradients": _check_gradients,
               "gradgrad": _check_gradgrad, "graph_def": _check_graph_def}
    for name in (n for n in CHECKS if n in checks):
        report.results.append(_run_check(name, runners[name], case))
    if report.failed and raise_on_failure:
        raise AssertionError("opcheck: op '%s' failed check%s %s\n%s"
                             % (case.op_type, "s" if len(report.failed) > 1 else "",
                                ", ".join(report.failed), report))
    return report


def _run_check(name, check, case):
    """Runs one check; a failure of any kind is recorded, not raised."""
    try:
        detail = check(case)
    except _Skip as skip:
        return CheckResult(name, "skipped", str(skip))
    except AssertionError as error:
        return CheckResult(name, "failed", str(error))
    except Exception as error:  # pylint: disable=broad-except - a kernel may raise anything
        return CheckResult(name, "failed", "%s: %s" % (type(error).__name__, error))
    return CheckResult(name, "passed", detail)


# ---- building and running the op ---------------------------------------------------------
@dataclasses.dataclass
class _Built:
    """One graph holding the op: its placeholders and the outputs ``op_fn`` returned."""

    graph: Graph
    placeholders: list
    outputs: list

    @property
    def op(self):
        return self.outputs[0].op

    def run(self, values):
        with Session(graph=self.graph) as session:
            return session.run(self.outputs, dict(zip(self.placeholders, values)))


class _Case:
    """``op_fn`` and its inputs, built into fresh graphs as each check needs."""

    def __init__(self, op_fn, values):
        self.op_fn = op_fn
        self.values = values
        self.registry = get_registry()
        built = self.build()
        self.op_type = built.op.type
        self.op_def = self.registry.op_def(self.op_type)
        self.input_dtypes = [t.dtype.base_dtype for t in built.op.inputs]
        self.stateful_ops = [op.type for op in built.graph.get_operations()
                             if self.registry.op_def(op.type).stateful]

    def build(self, values=None, device=None, known_shapes=True):
        """The op built on placeholders shaped like ``values`` (default: the
        inputs), on ``device`` when given."""
        values = self.values if values is None else values
        graph = Graph()
        with graph.as_default():
            placeholders = [array_ops.placeholder(dtypes_lib.as_dtype(v.dtype),
                                                  v.shape if known_shapes else None,
                                                  name="input_%d" % i)
                            for i, v in enumerate(values)]
            if device is None:
                outputs = self.op_fn(*placeholders)
            else:
                with graph.device(device):
                    outputs = self.op_fn(*placeholders)
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        if not outputs or not all(isinstance(t, Tensor) for t in outputs):
            raise TypeError("op_fn must return a Tensor or a list of Tensors, got %r" % (outputs,))
        return _Built(graph, placeholders, outputs)

    def cast_inputs(self, dtype):
        """The inputs with those typed like the first one (the op's ``T``) cast to ``dtype``."""
        typed = self.values[0].dtype
        return [_cast(v, dtype) if v.dtype == typed else v for v in self.values]

    def devices_with_kernel(self, dtypes):
        """``/device:TYPE:0`` of every device type other than the CPU that exists
        here and has a kernel for the op at input ``dtypes``."""
        names = []
        for factory in self.registry.device_factories():
            kind = factory.device_type
            if kind != "CPU" and factory.count() > 0 and \
                    self.registry.has_kernel(self.op_type, kind, dtypes):
                names.append("/device:%s:0" % kind)
        return names


def _cast(value, dtype):
    """``value`` as NumPy dtype of ``dtype``: rounded for integers, nonzero for bools."""
    np_dtype = dtype.as_numpy_dtype
    if dtype.is_bool:
        return value != 0
    if dtype.is_integer:
        value = np.round(value)
        return np.abs(value).astype(np_dtype) if dtype.is_unsigned else value.astype(np_dtype)
    return value.astype(np_dtype)


def _assert_close(got, want, what, dtype=None, exact=False):
    """Asserts two lists of results agree: same shape, values to the tolerance
    of ``dtype`` (default: their own), exactly for non-floats or when ``exact``."""
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape:
            raise AssertionError("%s: output %d has shape %s, expected %s" % (what, k, g.shape, w.shape))
        if g.dtype.kind in "fc" and not exact:
            rtol, atol = _TOLERANCES.get(dtype or dtypes_lib.as_dtype(g.dtype), (1e-5, 1e-6))
            if not np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True):
                excess = np.abs(g - w) - (atol + rtol * np.abs(w))
                worst = np.unravel_index(np.nanargmax(excess), g.shape) if g.ndim else ()
                raise AssertionError(
                    "%s: output %d differs (rtol %g, atol %g); the worst element %s is %r, "
                    "expected %r" % (what, k, rtol, atol, list(map(int, worst)), g[worst], w[worst]))
        elif not np.array_equal(g, w, equal_nan=g.dtype.kind in "fc"):
            raise AssertionError("%s: output %d is %r, expected %r" % (what, k, g, w))


# ---- the checks -------------------------------------------------------------------------
def _check_shape(case):
    built = case.build()
    values = built.run(case.values)
    _assert_static_matches(built.outputs, values, "known input shapes")
    unknown = case.build(known_shapes=False)
    unknown_values = unknown.run(case.values)
    _assert_static_matches(unknown.outputs, unknown_values, "unknown input shapes")
    _assert_close(unknown_values, values, "with unknown input shapes vs known")
    return "static %s agree with the kernel's %s" % (
        ", ".join(str(t.shape) for t in built.outputs),
        ", ".join(str(np.shape(v)) for v in values))


def _assert_static_matches(outputs, values, when):
    for tensor, value in zip(outputs, values):
        value = np.asarray(value)
        if not tensor.shape.is_compatible_with(value.shape):
            raise AssertionError("with %s, output '%s' has static shape %s but the kernel "
                                 "returned shape %s" % (when, tensor.name, tensor.shape, value.shape))
        if value.dtype != tensor.dtype.base_dtype.as_numpy_dtype:
            raise AssertionError("with %s, output '%s' has static dtype %s but the kernel "
                                 "returned %s" % (when, tensor.name, tensor.dtype.name, value.dtype))


def _check_devices(case):
    devices = case.devices_with_kernel(case.input_dtypes)
    if not devices:
        raise _Skip("no device other than the CPU has a kernel for %s (%s)"
                    % (case.op_type, ", ".join(d.name for d in case.input_dtypes)))
    expected = case.build().run(case.values)
    for device in devices:
        _assert_close(case.build(device=device).run(case.values), expected,
                      "%s kernel vs CPU kernel" % device)
    return "%s agree with the CPU" % ", ".join(devices)


def _check_dtypes(case, dtypes):
    wanted = [dtypes_lib.as_dtype(d) for d in (dtypes or case.op_def.type_constraint or ())]
    if not wanted:
        raise _Skip("the op has no type constraint; pass dtypes= to cover more than %s"
                    % case.input_dtypes[0].name)
    base = case.build().run(case.values)
    covered, missing = [], []
    for dtype in wanted:
        op_dtypes = [dtype if d == case.input_dtypes[0] else d for d in case.input_dtypes]
        if not any(case.registry.has_kernel(case.op_type, k, op_dtypes)
                   for k in case.registry.kernel_device_types(case.op_type)):
            missing.append(dtype.name)
            continue
        values = case.cast_inputs(dtype)
        built = case.build(values)
        got = built.run(values)
        _assert_static_matches(built.outputs, got, "inputs of dtype %s" % dtype.name)
        if dtype.is_floating and case.input_dtypes[0].is_floating:
            lower = min(dtype, case.input_dtypes[0], key=lambda d: np.finfo(d.as_numpy_dtype).bits)
            _assert_close([np.asarray(g, np.float64) for g in got],
                          [np.asarray(b, np.float64) for b in base],
                          "%s result vs %s result" % (dtype.name, case.input_dtypes[0].name), lower)
        for device in case.devices_with_kernel(op_dtypes):
            _assert_close(case.build(values, device=device).run(values), got,
                          "%s kernel vs CPU kernel at %s" % (device, dtype.name))
        covered.append(dtype.name)
    return "ran %s%s" % (", ".join(covered), "; no kernel anywhere for %s" % ", ".join(missing)
                         if missing else "")


def _gradient_case(case):
    """``(built, values, xs)``: the op built for gradient checks — in float64 when
    a float64 kernel exists — and the floating placeholders to differentiate."""
    gradient = case.registry.gradient_def(case.op_type)
    if gradient is None:
        raise AssertionError("op '%s' has no gradient: register one, or declare the op not "
                             "differentiable" % case.op_type)
    if gradient.fn is None:
        raise _Skip("declared not differentiable%s" % (": " + gradient.reason if gradient.reason
                                                        else ""))
    values = case.values
    if case.input_dtypes[0].is_floating and any(
            k.accepts([dtypes_lib.float64] * len(case.input_dtypes))
            for k in case.registry.kernel_defs(case.op_type) if k.device_type == "CPU"):
        values = case.cast_inputs(dtypes_lib.float64)
    built = case.build(values)
    xs = [(p, v) for p, v in zip(built.placeholders, values) if p.dtype.is_floating]
    ys = [y for y in built.outputs if y.dtype.is_floating]
    if not xs or not ys:
        raise _Skip("no floating input or output to differentiate")
    return built, values, xs, ys


def _check_gradients(case):
    built, values, xs, ys = _gradient_case(case)
    with built.graph.as_default(), Session(graph=built.graph) as session:
        for y in ys:
            _check_against_differences(check_gradients, y, built, values, xs, session)
    return "analytic = numeric for %s (%s)" % (", ".join(p.name for p, _ in xs), xs[0][0].dtype.name)


def _check_gradgrad(case):
    built, values, xs, ys = _gradient_case(case)
    with built.graph.as_default(), Session(graph=built.graph) as session:
        for y in ys:
            _check_against_differences(gradgradcheck, y, built, values, xs, session)
    return "the gradient's gradient agrees with differences of the gradient"


def _check_against_differences(checker, y, built, values, xs, session):
    """``checker`` (:func:`check_gradients` or :func:`gradgradcheck`) of ``y``
    with respect to the placeholders ``xs``, the other placeholders fed their values."""
    differentiated = {id(p) for p, _ in xs}
    others = {p: v for p, v in zip(built.placeholders, values) if id(p) not in differentiated}
    x_values = [v for _, v in xs]
    checker(y, [p for p, _ in xs], x_values if len(xs) > 1 else x_values[0],
            session=session, extra_feed_dict=others)


def _check_graph_def(case):
    built = case.build()
    expected = built.run(case.values)
    graph_def = built.graph.as_graph_def()
    graph = Graph()
    with graph.as_default():
        names = [t.name for t in built.outputs] + [p.name for p in built.placeholders]
        imported = import_graph_def(graph_def, return_elements=names, name="")
    n = len(built.outputs)
    outputs, placeholders = imported[:n], imported[n:]
    with Session(graph=graph) as session:
        got = session.run(outputs, dict(zip(placeholders, case.values)))
    if outputs[0].op.type != case.op_type:
        raise AssertionError("the imported op is a '%s', not a '%s'" % (outputs[0].op.type, case.op_type))
    _assert_close(got, expected, "imported GraphDef vs original graph", exact=True)
    return "%d node(s) exported and imported; same values" % len(graph_def.node)
