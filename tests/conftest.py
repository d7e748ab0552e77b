"""Shared fixtures: a fresh default graph per test, a session, the device list.

``DEVICES`` is the one list op tests are parametrized over (STYLE 11): a device
whose backend is not installed or finds no hardware is skipped loudly.

By default it holds only ``/cpu:0``, so CI stays fast; the environment
variable ``MINITF_TEST_DEVICES`` (comma-separated ``cpu``, ``gpu`` or device
names such as ``/gpu:1``) widens it, e.g. ``MINITF_TEST_DEVICES=cpu,gpu``
runs every device-parametrized op suite on the OpenCL device as well.

In the op suites (:data:`ORACLE_SUITES`) every generated step is also checked
against the reference interpreter (``run_plan``): see :func:`interpreter_oracle`.

Every kernel's results are checked against its op's declared dtypes and
inferred shapes (``MINITF_CHECK_KERNELS=1``, set here before minitf is
imported, inherited by device processes; ``MINITF_CHECK_KERNELS=0`` turns it
off): see :mod:`minitf.runtime.executors.kernel_checks`.
"""

import fnmatch
import os

os.environ.setdefault("MINITF_CHECK_KERNELS", "1")  # before minitf is imported
# The OpenCL GEMM keeps the heuristic choice: no timing runs, no cache file in ~/.cache.
os.environ.setdefault("MINITF_GEMM_AUTOTUNE", "0")

import numpy as np
import pytest

import minitf as tf
from minitf.registry import get_registry
from minitf.runtime import session as session_module
from minitf.runtime.executors import step as step_module
from minitf.runtime.executors.interpreter import run_plan

TEST_DEVICES_ENV = "MINITF_TEST_DEVICES"
_SHORT_NAMES = {"cpu": "/cpu:0", "gpu": "/gpu:0"}


def _devices_from_env(spec):
    """The device names ``spec`` (``"cpu,gpu"``) chooses; ``["/cpu:0"]`` when empty."""
    names = [_SHORT_NAMES.get(s.strip().lower(), s.strip()) for s in spec.split(",")]
    return [n for n in names if n] or ["/cpu:0"]


DEVICES = _devices_from_env(os.environ.get(TEST_DEVICES_ENV, ""))


@pytest.fixture(autouse=True)
def fresh_default_graph():
    """Every test starts from an empty default graph."""
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


@pytest.fixture
def sess():
    """A session on the default graph, closed after the test."""
    with tf.Session() as session:
        yield session


@pytest.fixture(params=DEVICES)
def device(request):
    """Each device op tests run on (skipped with a reason when absent)."""
    kind = tf.DeviceSpec.from_string(request.param).device_type
    registry = get_registry()
    if kind and registry.device_factory(kind.upper()) is None:
        plugin, reason = registry.unavailable_devices().get(kind.upper(), (None, "no plugin"))
        pytest.skip("%s=%s asks for %s, but no %s device is registered: %s"
                    % (TEST_DEVICES_ENV, os.environ.get(TEST_DEVICES_ENV), request.param,
                       kind.upper(), reason))
    return request.param


@pytest.fixture
def made_steps(monkeypatch):
    """The steps sessions make, in order: what ``make_step`` (or, for a step on
    several devices, ``MultiDeviceStep``) returned to ``session.py``."""
    made = []

    def recording(make):
        def make_and_record(*args, **kwargs):
            step = make(*args, **kwargs)
            made.append(step)
            return step
        return make_and_record
    monkeypatch.setattr(session_module, "make_step", recording(session_module.make_step))
    monkeypatch.setattr(session_module, "MultiDeviceStep",
                        recording(session_module.MultiDeviceStep))
    return made


def run_on(device, build, *arrays):
    """Builds ``build(*placeholders)`` on ``device``, feeds ``arrays``, returns the result.

    Example:
        run_on("/cpu:0", lambda x, y: tf.add(x, y), np.ones(3), np.ones(3))
    """
    graph = tf.Graph()
    with graph.as_default():
        placeholders = [tf.placeholder(tf.as_dtype(a.dtype), a.shape) for a in map(np.asarray, arrays)]
        with tf.device(device):
            out = build(*placeholders)
        with tf.Session(graph=graph) as session:
            return session.run(out, dict(zip(placeholders, arrays)))


def on_gpu(device):
    """Whether ``device`` (``"/gpu:0"``) names a GPU."""
    return tf.DeviceSpec.from_string(device).device_type == "GPU"


def device_config(device):
    """The session config for a test of ``device``: on a GPU, soft placement lets an
    op without a GPU kernel run on the CPU, as TF's ``test_session(use_gpu=True)``
    does — the test then checks the rest of the graph on the GPU."""
    return tf.ConfigProto(allow_soft_placement=True) if on_gpu(device) else None


def run_without_gpu_kernel(device, op_type, build, *arrays):
    """``run_on`` for an op the GPU device has no kernel for (docs/concepts/opencl.rst,
    "Ops without a GPU kernel"): pinned to ``/gpu:0`` it is TF's placer error naming
    the op type, and with ``allow_soft_placement=True`` it runs on the CPU."""
    if not on_gpu(device):
        return run_on(device, build, *arrays)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="no supported kernel for GPU devices is available for op type %s"
                       % op_type):
        run_on(device, build, *arrays)
    graph = tf.Graph()
    with graph.as_default():
        placeholders = [tf.placeholder(tf.as_dtype(a.dtype), a.shape) for a in arrays]
        with tf.device(device):
            out = build(*placeholders)
        with tf.Session(graph=graph, config=device_config(device)) as session:
            return session.run(out, dict(zip(placeholders, arrays)))


# ---- the oracle: every generated step of the op suites checked against the interpreter ----
#
# The generated step (executors/generated.py) is the fast path; the reference
# interpreter (executors/interpreter.py, ``run_plan``) is the specification.
# While an op suite runs, every step the session compiles is wrapped: it runs
# the generated code as usual, then runs ``run_plan`` on the same feeds and
# checks that both give exactly the same values (dtype, shape, NaNs in the
# same places) or fail with the same error class.  Steps that are not
# deterministic or have effects (a stateful op: variables, queues, random ops,
# _Send/_Recv) are not run twice, and neither are steps on a device whose
# values do not live in host memory.
ORACLE_SUITES = ("test_*_ops.py", "test_*_gradients.py")


class OracleMismatch(AssertionError):
    """The generated step and the reference interpreter disagree."""


@pytest.fixture(autouse=True)
def interpreter_oracle(request, monkeypatch):
    """In the op suites, checks each generated step against ``run_plan``."""
    if not any(fnmatch.fnmatch(request.path.name, p) for p in ORACLE_SUITES):
        yield
        return
    mismatches = []
    compile_plan = step_module.compile_plan

    def compile_checked(plan, traced=False, cancellation=None):
        step = compile_plan(plan, traced=traced, cancellation=cancellation)
        if not _deterministic_on_host(plan):
            return step

        def checked_step(feeds, *, deadline=None, trace=None):
            try:
                values = step(feeds, deadline=deadline, trace=trace)
            except Exception as error:
                _check_raises_too(plan, feeds, error, mismatches)
                raise
            _check_same_values(plan, feeds, values, mismatches)
            return values
        checked_step.source = step.source
        return checked_step

    monkeypatch.setattr(step_module, "compile_plan", compile_checked)
    yield
    # A test that catches broad exceptions could swallow an OracleMismatch:
    # one that did not already fail the test fails it here.
    report = getattr(request.node, "rep_call", None)
    if mismatches and report is not None and report.passed:
        pytest.fail("\n".join(mismatches), pytrace=False)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keeps each phase's report on the item (``item.rep_call``) for fixtures to read."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, "rep_" + report.when, report)


def _deterministic_on_host(plan):
    """Whether running ``plan`` twice must give the same values, read from host memory."""
    if any(node.op.op_def.stateful or "seed" in node.op.op_def.attrs for node in plan.nodes):
        return False
    return all(node.ctx.device.host_memory for node in plan.nodes)


def _mismatch(mismatches, message):
    mismatches.append(message)
    raise OracleMismatch(message)


def _interpreted(plan, feeds):
    """The interpreter's values; NumPy's FP warnings off, as the generated step has them
    when it silences them for a whole step (the values are what is compared)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return run_plan(plan, feeds)


def _check_raises_too(plan, feeds, error, mismatches):
    try:
        _interpreted(plan, feeds)
    except Exception as expected:  # pylint: disable=broad-except
        if type(expected) is not type(error):
            _mismatch(mismatches, "the generated step raised %s but the interpreter %s: %s"
                      % (type(error).__name__, type(expected).__name__, expected))
        return
    _mismatch(mismatches, "the generated step raised %s but the interpreter did not: %s"
              % (type(error).__name__, error))


def _check_same_values(plan, feeds, values, mismatches):
    expected = _interpreted(plan, feeds)
    for k, (got, want) in enumerate(zip(values, expected)):
        got_array, want_array = np.asarray(got), np.asarray(want)
        same = (type(got) is type(want) and got_array.dtype == want_array.dtype
                and got_array.shape == want_array.shape
                and np.array_equal(got_array, want_array,
                                   equal_nan=got_array.dtype.kind in "fc"))
        if not same:
            _mismatch(mismatches, "fetch %d '%s': the generated step gave %s %r, the "
                      "interpreter %s %r" % (k, _fetched_tensor(plan, k).name,
                                             type(got).__name__, got, type(want).__name__, want))


def _fetched_tensor(plan, k):
    src = plan.fetches[k]
    return plan.feeds[src.index] if src.is_feed else plan.nodes[src.node].op.outputs[src.index]
