"""Placement across device types, and values released after their last reader.

A tiny run-time plugin adds a second device type, ``XPU``, with kernels for
``Const`` and ``Add`` only; the test plugin's ``Cube`` has a kernel on the CPU only.  So an
op pinned to ``/device:XPU:0`` that has no XPU kernel is exactly the case soft
placement exists for (TF1's ``allow_soft_placement``).
"""

import gc
import weakref

import numpy as np
import pytest

import minitf as tf
from minitf.ops.common_shapes import unchanged_shape
from minitf.ops.op_def_library import apply_op
from minitf.registry import OpDef, hookimpl, register_plugin, unregister_plugin
from tests.plugin_fixtures import ExtraDevicePlugin, TestPlugin, cube

XPU0 = "/job:localhost/replica:0/task:0/device:XPU:0"
CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"


# Two probes: ``Remember`` keeps a weak reference to the array it outputs,
# ``CheckReleased`` records, when it runs, whether that array is still alive.
REMEMBERED = {}
REMEMBER = OpDef("Remember", inputs=("x",), shape_fn=unchanged_shape, stateful=True,
                 doc="Copies x and remembers the copy weakly.")
CHECK = OpDef("CheckReleased", inputs=("x",), shape_fn=unchanged_shape, stateful=True,
              doc="Identity recording whether Remember's output was freed.")


class ProbePlugin:
    @hookimpl
    def minitf_register_ops(self, registry):
        registry.register_op(REMEMBER)
        registry.register_op(CHECK)

    @hookimpl
    def minitf_register_kernels(self, registry):
        def remember(ctx, x):
            out = np.array(x, copy=True)
            REMEMBERED["ref"] = weakref.ref(out)
            return out

        def check(ctx, x):
            gc.collect()
            REMEMBERED["alive_at_check"] = REMEMBERED["ref"]() is not None
            return x
        registry.register_kernel("Remember", "CPU", remember)
        registry.register_kernel("CheckReleased", "CPU", check)


@pytest.fixture(autouse=True)
def plugins():
    # XPU: never preferred for unconstrained ops, and only Add (plus Const,
    # _Send and _Recv) has a kernel there.
    xpu = ExtraDevicePlugin("XPU", priority=-1, kernels={"Add": lambda ctx, x, y: np.add(x, y)})
    added = [TestPlugin(), ProbePlugin(), xpu]
    for i, plugin in enumerate(added):
        register_plugin(plugin, name="devices_test_%d" % i)
    yield
    for plugin in added:
        unregister_plugin(plugin)


def test_the_test_device_is_listed():
    with tf.Session() as sess:
        names = [d.name for d in sess.list_devices()]
    assert XPU0 in names and CPU0 in names


def test_op_with_a_kernel_runs_where_it_is_pinned(capsys):
    with tf.device("/device:XPU:0"):
        total = tf.add(tf.constant([1.0, 2.0]), 3.0, name="total")
    with tf.Session(config=tf.ConfigProto(log_device_placement=True)) as sess:
        np.testing.assert_array_equal(sess.run(total), [4.0, 5.0])
    assert "total: (Add): " + XPU0 in capsys.readouterr().err


def test_missing_kernel_without_soft_placement_names_op_and_device():
    x = tf.constant([2.0])
    with tf.device("/device:XPU:0"):
        y = cube(x, name="my_cube")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(y)
    message = str(info.value)
    assert "my_cube" in message and "XPU" in message
    assert "(defined at " in message  # where the op was created


def test_soft_placement_moves_the_op_to_a_device_with_a_kernel(capsys):
    x = tf.constant([2.0])
    with tf.device("/device:XPU:0"):
        y = cube(x, name="my_cube")
        z = tf.add(y, 1.0, name="plus_one")
    config = tf.ConfigProto(allow_soft_placement=True, log_device_placement=True)
    with tf.Session(config=config) as sess:
        np.testing.assert_array_equal(sess.run(z), [9.0])
    log = capsys.readouterr().err
    assert "my_cube: (Cube): " + CPU0 in log
    assert "plus_one: (Add): " + XPU0 in log  # its kernel exists: it stays


def test_colocate_with_follows_the_other_op(capsys):
    with tf.device("/device:XPU:0"):
        a = tf.add(tf.constant(1.0), 1.0, name="a")
    with tf.colocate_with(a):
        b = tf.add(a, 2.0, name="b")  # not 1.0: CSE would merge the two constants
    assert b.op.colocation_groups() == ["loc:@a"]
    with tf.Session(config=tf.ConfigProto(log_device_placement=True)) as sess:
        assert sess.run(b) == 4.0
    log = capsys.readouterr().err
    assert "b: (Add): " + XPU0 in log
    assert "b/y: (Const): " + XPU0 in log  # created inside the scope: colocated too


@pytest.mark.parametrize("threads", [1, 4], ids=["straight-line", "parallel"])
def test_a_value_is_released_after_its_last_reader(threads):
    x = tf.placeholder(tf.float32, [1000])
    kept = apply_op(REMEMBER, [x], name="Remember")
    used_once = tf.negative(kept)              # the only reader of ``kept``
    later = apply_op(CHECK, [used_once], name="CheckReleased")
    config = tf.ConfigProto(inter_op_parallelism_threads=threads)
    with tf.Session(config=config) as sess:
        result = sess.run(later, {x: np.ones(1000)})
    np.testing.assert_array_equal(result, -np.ones(1000))
    assert REMEMBERED["alive_at_check"] is False


def test_a_fetched_value_is_kept_until_the_end():
    x = tf.placeholder(tf.float32, [3])
    kept = apply_op(REMEMBER, [x], name="Remember")
    later = apply_op(CHECK, [tf.negative(kept)], name="CheckReleased")
    with tf.Session() as sess:
        kept_value, _ = sess.run([kept, later], {x: [1.0, 2.0, 3.0]})
    assert REMEMBERED["alive_at_check"] is True
    np.testing.assert_array_equal(kept_value, [1.0, 2.0, 3.0])
