"""minitf's pytest plugin, registered through the ``pytest11`` entry point.

Installing minitf makes these available to every test file, so a student's
gradient-check test needs no boilerplate::

    @pytest.mark.gradient
    def test_square(gradcheck):
        x = tf.placeholder(tf.float64, [3])
        gradcheck(tf.square(x), x, [1.0, 2.0, 3.0])

Fixtures:
    tf_graph: a fresh Graph, installed as the default graph for the test.
    tf_session: a Session on that graph, closed afterwards.
    gradcheck: ``gradcheck(y, xs, x_values, **tolerances)`` — runs
        :func:`minitf.test.check_gradients` in ``tf_session``.
    gradgradcheck: ``gradgradcheck(y, xs, x_values, **tolerances)`` — runs
        :func:`minitf.test.gradgradcheck` (second derivatives) in ``tf_session``.

A failure is reported at the test's own line: the checker's frames are
hidden (``__tracebackhide__``).

Marker:
    gradient: tags gradient-check tests (``pytest -m gradient`` runs only them).
"""

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "gradient: a gradient-check test (minitf labs)")


@pytest.fixture
def tf_graph():
    """A fresh default graph for one test."""
    from minitf.framework.graph import Graph
    graph = Graph()
    with graph.as_default():
        yield graph


@pytest.fixture
def tf_session(tf_graph):
    """A session on ``tf_graph``, installed as the default session."""
    from minitf.runtime.session import Session
    with Session(graph=tf_graph) as session:
        yield session


@pytest.fixture
def gradcheck(tf_session):
    """Checks analytic gradients against central differences (see check_gradients)."""
    from minitf.test.gradient_checker import check_gradients

    def check(y, xs, x_values, **kwargs):
        __tracebackhide__ = True
        check_gradients(y, xs, x_values, session=tf_session, **kwargs)
    return check


@pytest.fixture(name="gradgradcheck")
def gradgradcheck_fixture(tf_session):
    """Checks second derivatives against central differences (see gradgradcheck)."""
    from minitf.test.gradient_checker import gradgradcheck

    def check(y, xs, x_values, **kwargs):
        __tracebackhide__ = True
        gradgradcheck(y, xs, x_values, session=tf_session, **kwargs)
    return check
