"""The master's planning (minitf/runtime/master.py) and what it promises.

``plan_step`` copies the ops a step needs into a step graph, runs the rewrite
passes on that copy, places and (when several workers run it) partitions it.
The user's graph is never changed; every executor benefits from the passes;
errors and traces still name the user's ops.
"""

import numpy as np
import pytest

import minitf as tf
from minitf.registry import get_registry
from minitf.runtime.config import ConfigProto
from minitf.runtime.device_set import device_specs
from minitf.runtime.executors.control_flow import ControlFlowStep
from minitf.runtime.executors.interpreter import InterpreterStep
from minitf.runtime.executors.parallel import ParallelStep
from minitf.runtime.executors.plan import build_plan
from minitf.runtime.executors.step import make_step
from minitf.runtime.kernel_context import KernelContext
from minitf.runtime.master import plan_step
from minitf.runtime.planning.placer import kernel_dtypes
from minitf.runtime.resources import ResourceManager
from minitf.runtime.worker.service import WorkerService

FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


def _cpu0():
    return get_registry().device_factory("CPU").create(0)


def _gradient_graph():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.ones((3, 2), np.float32), name="w")
    loss = tf.reduce_sum(tf.matmul(x, w), name="loss")
    (grad,) = tf.gradients(loss, [w])
    return x, w, loss, grad


def test_planning_leaves_the_users_graph_unchanged():
    x, _, loss, grad = _gradient_graph()
    graph = tf.get_default_graph()
    before = [(op.name, op.type, [t.name for t in op.inputs]) for op in graph.get_operations()]
    planned = plan_step(graph, [grad], [x], [], [_cpu0()], ConfigProto(), get_registry(),
                        local_devices={"/job:localhost/replica:0/task:0/device:CPU:0"})
    after = [(op.name, op.type, [t.name for t in op.inputs]) for op in graph.get_operations()]
    assert before == after
    assert planned.step.graph is not graph
    assert planned.partitions is None and planned.device.name.endswith("CPU:0")
    # The folded gradient seed is a constant of the step graph, not of the user's.
    step_types = {op.type for op in planned.step.ops}
    assert "Fill" not in step_types and "Const" in step_types
    assert any(op.type == "Fill" for op in graph.get_operations())


def test_step_graph_ops_are_copies_that_remember_the_users_op():
    x, _, loss, _ = _gradient_graph()
    graph = tf.get_default_graph()
    planned = plan_step(graph, [loss], [x], [], [_cpu0()], ConfigProto(), get_registry())
    by_name = {op.name: op for op in planned.step.ops}
    assert by_name["loss"]._original_op is graph.get_operation_by_name("loss")
    assert planned.step.feeds[0].name == "x:0"  # the feed keeps its tensor's name
    assert planned.step.fetches[0].name == "loss:0"


def test_a_step_on_a_device_the_caller_does_not_run_is_partitioned():
    _, _, loss, _ = _gradient_graph()
    planned = plan_step(tf.get_default_graph(), [loss], [], [], [_cpu0()], ConfigProto(),
                        get_registry(), local_devices=())
    assert planned.partitions is not None and list(planned.partitions) == [planned.placement[
        planned.step.fetches[0].op].name]


def _traced_names(sess, fetches, feed_dict=None):
    metadata = tf.RunMetadata()
    values = sess.run(fetches, feed_dict, options=FULL, run_metadata=metadata)
    return values, {n.node_name for dev in metadata.step_stats.dev_stats for n in dev.node_stats}


@pytest.mark.parametrize("config", [
    ConfigProto(inter_op_parallelism_threads=2),
    ConfigProto(experimental=ConfigProto.Experimental(executor_type="INTERPRETER")),
], ids=["parallel", "interpreter"])
def test_constant_folding_benefits_every_executor(config):
    x = tf.placeholder(tf.float32, [2, 3], name="x")
    ones = tf.reshape(tf.fill([3, 2], 2.0, name="fill"), [2, 3], name="reshape")
    y = tf.add(x, ones, name="y")
    feed = np.arange(6, dtype=np.float32).reshape(2, 3)
    with tf.Session(config=config) as sess:
        value, names = _traced_names(sess, y, {x: feed})
    np.testing.assert_array_equal(value, feed + 2.0)
    assert "y" in names
    assert "fill" not in names and "reshape" not in names


def test_a_run_time_error_names_the_users_op_and_line():
    x = tf.placeholder(tf.int32, [None], name="x")
    picked = tf.gather(tf.constant([1, 2, 3]), x, name="picked")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"node picked \(defined at .*"
                                                                 r"test_master.py") as info:
            sess.run(picked, {x: [7]})
    assert info.value.op is tf.get_default_graph().get_operation_by_name("picked")


def _plan_for(fetch, feeds=()):
    device = _cpu0()
    resources = ResourceManager()
    ops = [op for op in tf.get_default_graph().get_operations()
           if op not in {t.op for t in feeds}]
    return build_plan(ops, list(feeds), [fetch],
                      kernel_for=lambda op: get_registry().kernel(op.type, "CPU",
                                                                  kernel_dtypes(op), node=op),
                      ctx_for=lambda op: KernelContext(op, device, resources))


class _Pool:
    """A thread pool stand-in that make_step asks for when it needs one."""

    def __init__(self):
        import concurrent.futures
        self.pool = concurrent.futures.ThreadPoolExecutor(2)
        self.asked = 0

    def __call__(self):
        self.asked += 1
        return self.pool


def test_make_step_chooses_the_executor_by_ops_and_config():
    a = tf.constant(2.0)
    b = a * 3.0
    plan = _plan_for(b)
    pool = _Pool()
    try:
        generated = make_step(plan, ConfigProto(), thread_pool=pool)
        assert hasattr(generated, "source") and pool.asked == 0
        assert isinstance(make_step(plan, ConfigProto(experimental=ConfigProto.Experimental(
            executor_type="INTERPRETER"))), InterpreterStep)
        assert isinstance(make_step(plan, ConfigProto(inter_op_parallelism_threads=2),
                                    thread_pool=pool), ParallelStep)
        tf.reset_default_graph()
        p = tf.constant(True)
        c = tf.cond(p, lambda: tf.constant(1.0), lambda: tf.constant(2.0))
        assert isinstance(make_step(_plan_for(c), ConfigProto()), ControlFlowStep)
        for step in (generated, make_step(plan, ConfigProto(inter_op_parallelism_threads=2),
                                          thread_pool=pool)):
            trace = {}
            assert step({}, deadline=None, trace=trace) == (6.0,)
    finally:
        pool.pool.shutdown()


def test_every_step_kind_returns_a_tuple_in_fetch_order():
    a = tf.constant([1.0, 2.0])
    b = a * 3.0
    plan = _plan_for(b)
    for config in (ConfigProto(), ConfigProto(experimental=ConfigProto.Experimental(
            executor_type="INTERPRETER"))):
        result = make_step(plan, config)({})
        assert isinstance(result, tuple) and len(result) == 1
        np.testing.assert_array_equal(result[0], [3.0, 6.0])


def test_the_worker_service_takes_its_peers_at_construction():
    asked = []

    def peer_for(device_name):
        asked.append(device_name)
        raise LookupError(device_name)
    service = WorkerService([_cpu0()], get_registry(), peer_for=peer_for)
    rendezvous = service.rendezvous(1)
    with pytest.raises(LookupError):
        rendezvous.recv("/job:localhost/replica:0/task:0/device:CPU:7;0000000000000001;"
                        "/job:localhost/replica:0/task:0/device:CPU:0;a:0;0:0")
    assert asked == ["/job:localhost/replica:0/task:0/device:CPU:7"]


def test_device_processes_are_a_factory_opt_in():
    registry = get_registry()
    cpu = registry.device_factory("CPU")
    assert cpu.host_memory
    specs = device_specs(registry, ConfigProto(device_count={"CPU": 3}))
    cpus = [(index, in_process) for factory, index, in_process in specs if factory is cpu]
    assert cpus == [(0, True), (1, False), (2, False)]
    in_process = device_specs(registry, ConfigProto(device_count={"CPU": 3},
                                                    device_processes=False))
    assert all(in_proc for factory, _, in_proc in in_process if factory is cpu)


def test_a_factory_with_device_memory_stays_in_process(monkeypatch):
    registry = get_registry()
    cpu = registry.device_factory("CPU")
    monkeypatch.setattr(type(cpu), "host_memory", False)
    monkeypatch.setattr(type(cpu), "count", lambda self: 3)
    specs = device_specs(registry, ConfigProto(device_count={"CPU": 2}))
    cpus = [(index, in_process) for factory, index, in_process in specs if factory is cpu]
    assert cpus == [(0, True), (1, True)]
