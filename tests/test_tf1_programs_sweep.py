"""The acceptance sweep of issue 15: whole TF1 tutorial programs, run unchanged.

Each file in ``tests/tf1_programs/`` is a program of a public TF1 tutorial
collection (its docstring names which, and what was shortened), written for
``import minitf as tf``.  The test runs it in a fresh directory and compares
the ``results`` dict it leaves with the one TensorFlow 2.21's ``compat.v1``
produced for the same program (``tests/data/tf1_programs_sweep.json``,
recorded by ``tests/data/make_tf1_programs_sweep.py``; the suite never
imports TensorFlow).

Ints, strings, booleans, shapes and names must be equal; floats equal to a
relative 1e-4 (programs only report floats that their seeds make
comparable: values computed from fixed data or NumPy-seeded weights).
"""

import json
import math
import os

import pytest

import minitf as tf

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "tf1_programs")
with open(os.path.join(HERE, "data", "tf1_programs_sweep.json")) as f:
    EXPECTED = json.load(f)
SLOW = {"cs20si_char_rnn"}  # over 5 s
RTOL, ATOL = 1e-4, 1e-5


def run_program(name):
    """Executes ``tests/tf1_programs/<name>.py`` as ``__main__`` in the current
    directory; returns its ``results`` as JSON values (tuples become lists)."""
    path = os.path.join(PROGRAMS, name + ".py")
    namespace = {"__name__": "__main__", "__file__": path}
    with open(path) as f:
        code = compile(f.read(), path, "exec")
    try:
        exec(code, namespace)
    except SystemExit as e:  # tf.app.run() exits when main returns
        if e.code not in (None, 0):
            raise
    return json.loads(json.dumps(namespace["results"]))


def assert_same(actual, expected, where="results"):
    """``actual == expected``, floats to RTOL/ATOL, with the path of a difference."""
    if isinstance(expected, float) or isinstance(actual, float):
        assert isinstance(actual, (int, float)) and not isinstance(actual, bool), where
        assert math.isclose(actual, expected, rel_tol=RTOL, abs_tol=ATOL), (
            "%s: %r != %r" % (where, actual, expected))
    elif isinstance(expected, dict):
        assert isinstance(actual, dict) and sorted(actual) == sorted(expected), (
            "%s: keys %s != %s" % (where, sorted(actual), sorted(expected)))
        for key in expected:
            assert_same(actual[key], expected[key], "%s[%r]" % (where, key))
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), (
            "%s: %r != %r" % (where, actual, expected))
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, "%s[%d]" % (where, i))
    else:
        assert actual == expected, "%s: %r != %r" % (where, actual, expected)


def _params():
    names = sorted(n[:-3] for n in os.listdir(PROGRAMS) if n.endswith(".py"))
    return [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in names]


@pytest.mark.parametrize("name", _params())
def test_program_matches_tensorflow(name, tmp_path, monkeypatch):
    assert name in EXPECTED, "no TF results recorded: run tests/data/make_tf1_programs_sweep.py"
    monkeypatch.chdir(tmp_path)
    tf.reset_default_graph()
    assert_same(run_program(name), EXPECTED[name])


def test_assert_same_reports_the_difference():
    assert_same({"a": [1, 2.0]}, {"a": [1, 2.00001]})
    with pytest.raises(AssertionError, match=r"results\['a'\]\[1\]"):
        assert_same({"a": [1, 2.5]}, {"a": [1, 2.0]})
    with pytest.raises(AssertionError, match="keys"):
        assert_same({"a": 1}, {"b": 1})
    with pytest.raises(AssertionError):
        assert_same([True], [1.0])
