"""Placement over a cluster's devices, and device names with jobs and tasks.

The devices here are real CPU devices (and devices of a test type ``XPU``,
preferred over the CPU and with an ``Add`` kernel only) named as a cluster's
master sees them: ``/job:ps/replica:0/task:1/device:CPU:0``.  The placer is
called directly, as the master calls it, with the master's own task as
``default_task``.  Expectations are TF1's: an op whose request names no job
runs on the master's task, ``/job:ps`` means the ps job's task 0, a request
naming a task is honoured exactly, soft placement keeps the task, and an
impossible request lists the cluster's devices.
"""

import numpy as np
import pytest

import minitf as tf
from minitf.framework import errors
from minitf.framework.device_spec import DeviceSpec
from minitf.registry import get_registry, register_plugin, unregister_plugin
from minitf.runtime.planning.placer import device_spec_of, place
from tests.plugin_fixtures import ExtraDevicePlugin

PS0 = "/job:ps/replica:0/task:0/device:CPU:0"
PS1 = "/job:ps/replica:0/task:1/device:CPU:0"
W0 = "/job:worker/replica:0/task:0/device:CPU:0"
W1 = "/job:worker/replica:0/task:1/device:CPU:0"
W0_XPU = "/job:worker/replica:0/task:0/device:XPU:0"
PS1_XPU = "/job:ps/replica:0/task:1/device:XPU:0"
WORKER0 = DeviceSpec.from_string("/job:worker/replica:0/task:0")
WORKER1 = DeviceSpec.from_string("/job:worker/replica:0/task:1")


@pytest.fixture(autouse=True)
def xpu_plugin():
    plugin = ExtraDevicePlugin("XPU", priority=1, kernels={"Add": lambda ctx, x, y: x + y})
    register_plugin(plugin, name="placer_cluster_xpu")
    yield
    unregister_plugin(plugin)


def cluster_devices(*names):
    """Devices named as in a cluster, in the priority order given."""
    registry = get_registry()
    devices = []
    for name in names:
        spec = DeviceSpec.from_string(name)
        devices.append(registry.device_factory(spec.device_type).create(spec.device_index,
                                                                        name=name))
    return devices


def placed(devices=None, **kwargs):
    """Places the default graph's ops; returns {op name: device name}."""
    devices = devices or cluster_devices(PS1, PS0, W1, W0)
    ops = tf.get_default_graph().get_operations()
    placement = place(ops, devices, get_registry(), **kwargs)
    return {op.name: device.name for op, device in placement.items()}


# ---- device names --------------------------------------------------------------------

def test_device_spec_to_string_orders_fields_as_tf():
    spec = DeviceSpec(device_type="CPU", device_index=0, task=1, replica=0, job="ps")
    assert spec.to_string() == "/job:ps/replica:0/task:1/device:CPU:0"
    assert DeviceSpec.from_string("/task:1/job:ps/device:CPU:0/replica:0").to_string() == \
        "/job:ps/replica:0/task:1/device:CPU:0"


def test_device_spec_of_a_cluster_device():
    (device,) = cluster_devices(PS1)
    spec = device_spec_of(device)
    assert (spec.job, spec.replica, spec.task, spec.device_type, spec.device_index) == \
        ("ps", 0, 1, "CPU", 0)


def test_nested_device_blocks_merge_job_task_and_device():
    with tf.device("/job:ps/task:0"):
        with tf.device("/cpu:0"):
            a = tf.constant(1.0, name="a")
        b = tf.constant(2.0, name="b")
    assert a.op.device == "/job:ps/task:0/device:CPU:0"
    assert b.op.device == "/job:ps/task:0"


def test_inner_job_keeps_the_outer_task_as_tf1_merging_does():
    with tf.device("/job:ps/task:1"):
        with tf.device("/job:worker"):
            a = tf.constant(1.0, name="a")
        with tf.device(DeviceSpec(job="worker", task=0)):
            b = tf.constant(1.0, name="b")
        with tf.device(None):
            c = tf.constant(1.0, name="c")
    assert a.op.device == "/job:worker/task:1"
    assert b.op.device == "/job:worker/task:0"
    assert c.op.device == ""


# ---- explicit requests ----------------------------------------------------------------

def test_a_request_naming_a_task_is_honoured():
    with tf.device("/job:ps/task:1"):
        tf.constant(1.0, name="a")
    with tf.device("/job:worker/replica:0/task:1/device:CPU:0"):
        tf.constant(1.0, name="b")
    assert placed(default_task=WORKER0) == {"a": PS1, "b": W1}


def test_a_job_without_a_task_goes_to_the_lowest_task():
    # PS1 comes first in priority order, yet /job:ps means /job:ps/task:0.
    with tf.device("/job:ps"):
        tf.constant(1.0, name="a")
    assert placed(default_task=WORKER0)["a"] == PS0
    assert placed()["a"] == PS0


def test_lowest_task_wins_over_device_priority_then_priority_within_it():
    devices = cluster_devices(PS1_XPU, PS1, PS0, W0_XPU, W0)
    x = tf.constant(1.0, name="x")
    with tf.device("/job:ps"):
        tf.add(x, x, name="on_ps")
    with tf.device("/job:worker/task:0"):
        tf.add(x, x, name="on_worker")
    places = placed(devices, default_task=WORKER0)
    assert places["on_ps"] == PS0              # task 0, though task 1 has an XPU
    assert places["on_worker"] == W0_XPU       # within one task: the preferred device


def test_a_variable_on_a_ps_task_and_its_users():
    with tf.device("/job:ps/task:1"):
        v = tf.Variable(np.ones(3, np.float32), name="v")
    with tf.device("/job:worker/task:0"):
        tf.multiply(v, 2.0, name="y")
    tf.assign_add(v, [1.0, 1.0, 1.0], name="update")
    places = placed(default_task=WORKER1)
    assert places["v"] == PS1 and places["v/Assign"] == PS1
    assert places["update"] == PS1       # takes v's reference: goes where v is
    assert places["y"] == W0


# ---- the default task ------------------------------------------------------------------

def test_ops_without_a_job_are_placed_in_the_default_task():
    with tf.device("/job:ps/task:0"):
        a = tf.constant(1.0, name="a")
        b = tf.constant(2.0, name="b")
    tf.add(a, b, name="sum")  # both inputs on ps: still the master's task
    with tf.device("/device:CPU:0"):
        tf.constant(3.0, name="cpu")
    places = placed(default_task=WORKER1)
    assert places["a"] == places["b"] == PS0
    assert places["sum"] == W1 and places["cpu"] == W1


def test_default_task_may_be_a_string():
    tf.constant(1.0, name="a")
    assert placed(default_task="/job:worker/replica:0/task:1")["a"] == W1


def test_a_request_with_a_task_but_no_job_takes_the_default_job():
    with tf.device("/task:1"):
        tf.constant(1.0, name="a")
    assert placed(default_task=WORKER0)["a"] == W1


def test_default_task_prefers_its_own_best_device():
    devices = cluster_devices(PS0, W0_XPU, W0)
    x = tf.constant(1.0, name="x")
    tf.add(x, x, name="sum")                     # XPU has Add: the preferred device
    tf.subtract(x, x, name="difference")         # no XPU kernel: the task's CPU
    places = placed(devices, default_task=WORKER0)
    assert places["sum"] == W0_XPU and places["difference"] == W0


def test_without_a_default_task_every_device_is_a_candidate():
    # A local session passes no default task: an unconstrained op may go to any
    # device, the first in priority order among the lowest tasks.
    tf.constant(1.0, name="a")
    assert placed(cluster_devices(W1, PS0, W0))["a"] == PS0


def test_local_devices_behave_as_before():
    devices = cluster_devices("/job:localhost/replica:0/task:0/device:CPU:0",
                              "/job:localhost/replica:0/task:0/device:CPU:1")
    with tf.device("/job:localhost/replica:0/task:0/cpu:1"):
        tf.constant(1.0, name="a")
    with tf.device("/cpu:0"):
        tf.constant(1.0, name="b")
    places = placed(devices)
    assert places["a"] == devices[1].name and places["b"] == devices[0].name


# ---- soft placement and errors ------------------------------------------------------------

def test_unknown_task_lists_the_cluster_devices():
    with tf.device("/job:ps/task:7"):
        tf.constant(1.0, name="a")
    with pytest.raises(errors.InvalidArgumentError) as raised:
        placed(default_task=WORKER0)
    message = str(raised.value)
    assert "Operation was explicitly assigned to /job:ps/task:7" in message
    assert "available devices are [ %s, %s, %s, %s ]" % (PS1, PS0, W1, W0) in message


def test_unknown_job_is_an_error():
    with tf.device("/job:chief"):
        tf.constant(1.0, name="a")
    with pytest.raises(errors.InvalidArgumentError, match="explicitly assigned to /job:chief"):
        placed(default_task=WORKER0)


def test_soft_placement_keeps_the_requested_task():
    devices = cluster_devices(PS0, W0_XPU, W1, W0)
    x = tf.constant(1.0, name="x")
    with tf.device("/job:worker/task:0/device:XPU:0"):
        tf.subtract(x, x, name="difference")  # no XPU kernel
    with pytest.raises(errors.InvalidArgumentError, match="Could not satisfy explicit device "
                                                          "specification"):
        placed(devices, default_task=WORKER1)
    places = placed(devices, default_task=WORKER1, allow_soft_placement=True)
    assert places["difference"] == W0        # the same task's CPU, not the default task


def test_soft_placement_of_a_job_less_request_stays_in_the_default_task():
    devices = cluster_devices(PS0, W0, W1)
    with tf.device("/device:GPU:0"):
        tf.constant(1.0, name="a")
    assert placed(devices, default_task=WORKER1, allow_soft_placement=True)["a"] == W1


def test_colocation_with_a_variable_on_another_task():
    with tf.device("/job:ps/task:1"):
        v = tf.Variable(np.ones(3, np.float32), name="v")
    with tf.device("/device:CPU:0"):                 # no job: compatible with v's device
        tf.assign(v, [2.0, 2.0, 2.0], name="compatible")
    assert placed(default_task=WORKER0)["compatible"] == PS1


def test_colocation_contradicting_a_requested_task_is_an_error():
    with tf.device("/job:ps/task:1"):
        v = tf.Variable(np.ones(3, np.float32), name="v")
    with tf.device("/job:ps/task:0"):
        tf.assign(v, [2.0, 2.0, 2.0], name="contradicts")
    with pytest.raises(errors.InvalidArgumentError, match="Cannot colocate nodes contradicts"):
        placed(default_task=WORKER0)
    assert placed(default_task=WORKER0, allow_soft_placement=True)["contradicts"] == PS1


def test_log_device_placement_names_cluster_devices(capsys):
    with tf.device("/job:ps/task:1"):
        tf.constant(1.0, name="a")
    placed(default_task=WORKER0, log_device_placement=True)
    assert "a: (Const): %s" % PS1 in capsys.readouterr().err
