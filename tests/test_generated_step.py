"""The generated step's source (minitf/runtime/executors/generated.py) reads as documented.

``step.source`` is meant to be printed: a header says what was decided when
the plan was compiled (the constants bound once, the buffers a kernel may
forward), every line of the body names the op it runs (``# Add 'layer/add'``),
and when a kernel fails the line number in the traceback still points at the
op's line.  The docs show a real sample of it (``docs/concepts/
generated_step_sample.txt``, written by ``docs/make_samples.py``): it must
stay what the runtime generates today.
"""

import importlib.util
import pathlib
import re
import traceback

import numpy as np
import pytest

import minitf as tf
from minitf.runtime.executors import generated

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
# "v3_0 = kernel3(ctx3, ...)   # MatMul 'layer/MatMul'": the op a line runs.
OP_COMMENT = re.compile(r" # (\w+) '([^']+)'$")


def _docs_samples():
    """docs/make_samples.py, the script writing the docs' samples, as a module."""
    spec = importlib.util.spec_from_file_location("make_samples", DOCS / "make_samples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


samples = _docs_samples()


def _sample_source(made_steps, options=None):
    """The source of the step a session generates for the docs' sample program."""
    x, y = samples.sample_program()
    feeds = {x: np.linspace(-1.0, 1.0, 32 * 64, dtype=np.float32).reshape(32, 64)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(y, feeds, options=options, run_metadata=tf.RunMetadata() if options else None)
    step = made_steps[-1]
    assert hasattr(step, "source"), "the session did not generate a step: %r" % (step,)
    return step.source


@pytest.fixture
def source(made_steps):
    """The source of the sample program's generated step."""
    return _sample_source(made_steps)


def _body(source):
    """The lines of the step's ``try:`` block (the ops, between feeds and return)."""
    lines = source.splitlines()
    start = lines.index("    try:") + 1
    end = next(i for i, line in enumerate(lines) if line.lstrip().startswith("return ("))
    return lines[start:end]


# ---- every line names its op ------------------------------------------------------------
def test_every_line_running_an_op_names_it(source):
    body = [line for line in _body(source) if "feed" not in line]  # feeds: no op
    assert body and all(OP_COMMENT.search(line) for line in body), source
    kernel_lines = [line for line in body if re.search(r"\bkernel\d+\(", line)]
    assert [OP_COMMENT.search(line).groups() for line in kernel_lines] == [
        ("VariableV2", "layer/w"), ("Identity", "layer/w/read"), ("MatMul", "layer/MatMul"),
        ("Add", "layer/add"), ("Relu", "layer/relu")]
    # A value freed after its last reader is freed on that reader's line.
    assert "del f0, v2_0" in next(line for line in body if line.endswith("# MatMul 'layer/MatMul'")
                                  and "del" in line)


def test_a_traced_step_names_the_op_on_its_timing_lines_too(made_steps):
    timing = [line for line in _body(_sample_source(made_steps, options=FULL)) if "_now()" in line]
    assert len(timing) == 2 * 5                     # start and record, per op run
    assert all(OP_COMMENT.search(line) for line in timing)


# ---- the header: constants bound once, forwarded buffers -----------------------------------
def test_the_header_lists_the_constants_bound_once(source):
    header = [line for line in source.splitlines() if line.startswith("#")]
    (constant,) = [line for line in header if line.startswith("# constant bound once:")]
    assert constant == ("# constant bound once: v1_0 = Const 'ConstantFolding/layer/b_0' "
                        "float32[1, 64]")
    # Bound once, when the step was compiled: read in the body, never assigned there.
    body = "\n".join(_body(source))
    assert "v1_0 = " not in body and "v1_0" in body


def test_the_header_lists_the_buffers_a_kernel_may_forward(source):
    forwards = re.findall(r"^# may forward: (v\d+_\d+) into the output of (\w+) '([^']+)'$",
                          source, re.MULTILINE)
    assert forwards == [("v3_0", "Add", "layer/add"), ("v4_0", "Relu", "layer/relu")]
    # The ReLU line hands the matmul-plus-bias buffer to a forwarding context.
    relu = next(line for line in _body(source) if line.endswith("# Relu 'layer/relu'"))
    assert "ctx5_fw if _refcount(v4_0)" in relu


def test_a_small_value_is_not_worth_forwarding(made_steps):
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    y = tf.nn.relu(tf.matmul(x, tf.ones([3, 3])), name="relu")       # 6 elements
    with tf.Session() as sess:
        sess.run(y, {x: np.ones((2, 3), np.float32)})
    assert "# may forward" not in made_steps[-1].source
    assert 6 < generated.FORWARDING_MIN_ELEMENTS


# ---- line numbers locate errors ----------------------------------------------------------
def test_the_failing_line_of_the_step_is_the_failing_ops_line(made_steps):
    x = tf.placeholder(tf.float32, [None, None], name="x")
    with tf.name_scope("layer"):
        h = tf.matmul(x, tf.ones([64, 64]), name="MatMul")
        y = tf.nn.relu(h + 1.0, name="relu")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"\[\[node layer/MatMul \(defined at .*test_generated_step"
                                 r"\.py:\d+\) \]\]") as info:
            sess.run(y, {x: np.ones((2, 3), np.float32)})      # 3 columns, not 64
    step = made_steps[-1]
    cause = info.value.__cause__                     # the kernel's error, before locating
    assert cause is not None and "[[node" not in str(cause)
    frames = [frame for frame in traceback.extract_tb(cause.__traceback__)
              if frame.filename.startswith("<minitf-step-")]
    assert len(frames) == 1
    (frame,) = frames
    line = step.source.splitlines()[frame.lineno - 1]
    assert line.endswith("# MatMul 'layer/MatMul'")
    # The traceback prints the step's line itself, comment included.
    assert frame.line == line.strip()


# ---- the docs' sample is real output ------------------------------------------------------
def _same_on_every_python(source):
    """``source`` with the one number that depends on the Python version spelt out."""
    return re.sub(r"_refcount\((\w+)\) == \d+", r"_refcount(\1) == SOLE_HOLDER", source)


def test_the_docs_sample_is_what_the_runtime_generates():
    checked_in = (DOCS / "concepts" / "generated_step_sample.txt").read_text()
    assert _same_on_every_python(samples.generated_step_sample()) == \
        _same_on_every_python(checked_in), \
        "docs/concepts/generated_step_sample.txt is out of date: run python docs/make_samples.py"


def test_the_sample_is_the_step_a_session_generates(source):
    assert source == samples.generated_step_sample()


def test_the_source_names_no_file_or_counter(source):
    """So the docs' sample is the same in every run and every process."""
    assert "<minitf-step" not in source
    assert not re.search(r"0x[0-9a-f]{6,}", source)      # no object addresses
