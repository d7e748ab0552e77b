"""Shared fixtures: a fresh default graph per test, a session, the device list.

``DEVICES`` is the one list op tests are parametrized over (STYLE 11): a device
whose backend is not installed or finds no hardware is skipped loudly.

By default it holds only ``/cpu:0``, so CI stays fast; the environment
variable ``MINITF_TEST_DEVICES`` (comma-separated ``cpu``, ``gpu`` or device
names such as ``/gpu:1``) widens it, e.g. ``MINITF_TEST_DEVICES=cpu,gpu``
runs every device-parametrized op suite on the OpenCL device as well.
"""

import os

import numpy as np
import pytest

import minitf as tf
from minitf.registry import get_registry

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
