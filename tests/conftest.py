"""Shared fixtures: a fresh default graph per test, a session, the device list.

``DEVICES`` is the one list op tests are parametrized over (STYLE 11): a device
whose backend is not installed or finds no hardware is skipped loudly.
"""

import numpy as np
import pytest

import minitf as tf

DEVICES = ["/cpu:0"]


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
    return request.param


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
