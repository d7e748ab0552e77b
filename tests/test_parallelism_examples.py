"""Data parallelism and model parallelism across device processes, as TF1 programs did them.

Both examples run with ``device_count={"CPU": 3}``: ``/cpu:1`` and ``/cpu:2``
are separate OS processes, so every tensor between them crosses as a
Send/Recv pair.  Each result is compared *exactly* with the same model on one
device.  The data-parallel inputs are small integers stored as float32, so
every sum is exact whatever order the shards add it in (floating-point
addition is not associative); the model-parallel example runs the very same
ops on the very same values, only elsewhere, so it matches for any floats.
The same examples are in ``notebooks/06_devices_and_send_recv.ipynb``.
"""

import os

import numpy as np
import pytest

import minitf as tf

pytestmark = pytest.mark.timeout(120)

THREE_CPUS = tf.ConfigProto(device_count={"CPU": 3})
ONE_CPU = tf.ConfigProto(device_count={"CPU": 1})
CPU = "/job:localhost/replica:0/task:0/device:CPU:%d"


def _integers(rng, shape, low=-3, high=3):
    return rng.randint(low, high + 1, size=shape).astype(np.float32)


# ---- data parallelism: one model, the batch split across devices ------------------------
def _data_parallel(workers, batch, weights, bias):
    """The parameters live on /cpu:0; each worker computes the model on its shard.

    Returns the fed placeholder and ``(predictions, loss)``: the shards'
    predictions concatenated back in batch order and their losses added.
    """
    x = tf.placeholder(tf.float32, batch.shape, name="x")
    with tf.device("/cpu:0"):
        w = tf.Variable(weights, name="w")
        b = tf.Variable(bias, name="b")
        shards = tf.split(x, len(workers), axis=0, name="shards")
    predictions, losses = [], []
    for i, (worker, shard) in enumerate(zip(workers, shards)):
        with tf.device(worker), tf.name_scope("replica_%d" % i):
            y = tf.nn.relu(tf.matmul(shard, w) + b)
            predictions.append(y)
            losses.append(tf.reduce_sum(y * y))
    with tf.device("/cpu:0"):
        return x, (tf.concat(predictions, axis=0), tf.add_n(losses))


def test_data_parallel_matches_one_device_exactly():
    rng = np.random.RandomState(0)
    batch, weights = _integers(rng, (8, 5)), _integers(rng, (5, 3))
    bias = np.array([1.0, -1.0, 0.5], np.float32)
    x, fetches = _data_parallel(["/cpu:1", "/cpu:2"], batch, weights, bias)
    with tf.Session(config=THREE_CPUS) as sess:
        sess.run(tf.global_variables_initializer())
        split = sess.run(fetches, {x: batch})
        parts = sess.partition_graphs(fetches, {x: batch})
        pids = sess._device_processes.pids()
    tf.reset_default_graph()
    x, fetches = _data_parallel(["/cpu:0"], batch, weights, bias)
    with tf.Session(config=ONE_CPU) as sess:
        sess.run(tf.global_variables_initializer())
        whole = sess.run(fetches, {x: batch})
    expected = np.maximum(batch @ weights + bias, 0)
    np.testing.assert_array_equal(whole[0], expected)
    np.testing.assert_array_equal(split[0], whole[0])
    assert split[1] == whole[1] == np.sum(expected * expected)
    # each worker computed half of the batch in its own process
    assert sorted(parts) == [CPU % i for i in range(3)]
    for i in (1, 2):
        types = [op.type for op in parts[CPU % i].get_operations()]
        assert types.count("MatMul") == 1 and "_Recv" in types and "_Send" in types
        recv = next(op for op in parts[CPU % i].get_operations()
                    if op.type == "_Recv" and op.get_attr("tensor_name") == "shards:%d" % (i - 1))
        assert recv.get_attr("send_device") == CPU % 0
    assert len(set(pids)) == 2 and os.getpid() not in pids


def test_data_parallel_keeps_working_over_many_steps():
    rng = np.random.RandomState(1)
    weights = _integers(rng, (5, 3))
    bias = np.zeros(3, np.float32)
    batch = _integers(rng, (12, 5))
    x, fetches = _data_parallel(["/cpu:1", "/cpu:2"], batch, weights, bias)
    with tf.Session(config=THREE_CPUS) as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(5):
            batch = _integers(rng, (12, 5))
            predictions, loss = sess.run(fetches, {x: batch})
            expected = np.maximum(batch @ weights, 0)
            np.testing.assert_array_equal(predictions, expected)
            assert loss == np.sum(expected * expected)


# ---- model parallelism: the layers of one model on different devices ----------------------
def _two_layer_model(x, params, layer_devices):
    """Layer 1 (matmul + bias + relu) on one device, layer 2 (matmul + bias) on another."""
    w1, b1, w2, b2 = params
    with tf.device(layer_devices[0]), tf.name_scope("layer1"):
        w1 = tf.Variable(w1, name="w")
        b1 = tf.Variable(b1, name="b")
        hidden = tf.nn.relu(tf.matmul(x, w1) + b1, name="hidden")
    with tf.device(layer_devices[1]), tf.name_scope("layer2"):
        w2 = tf.Variable(w2, name="w")
        b2 = tf.Variable(b2, name="b")
        return tf.add(tf.matmul(hidden, w2), b2, name="logits")


def _model_params(rng):
    return (rng.standard_normal((6, 16)).astype(np.float32),
            rng.standard_normal(16).astype(np.float32),
            rng.standard_normal((16, 4)).astype(np.float32),
            rng.standard_normal(4).astype(np.float32))


def _run_model(layer_devices, config, params, batch):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [None, 6], name="x")
        logits = _two_layer_model(x, params, layer_devices)
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            return sess.run(logits, {x: batch}), sess.partition_graphs(logits, {x: batch})


def test_model_parallel_matches_one_device_exactly():
    rng = np.random.RandomState(2)
    params = _model_params(rng)
    batch = rng.standard_normal((10, 6)).astype(np.float32)  # any floats: same ops, same order
    split, parts = _run_model(["/cpu:1", "/cpu:2"], THREE_CPUS, params, batch)
    whole, single = _run_model([None, None], ONE_CPU, params, batch)
    w1, b1, w2, b2 = params
    np.testing.assert_allclose(whole, np.maximum(batch @ w1 + b1, 0) @ w2 + b2, rtol=1e-5)
    np.testing.assert_array_equal(split, whole)
    assert list(single) == [CPU % 0]
    # what crosses from layer 1's process to layer 2's is the hidden activation, once
    recvs = [op for op in parts[CPU % 2].get_operations() if op.type == "_Recv"]
    assert [op.get_attr("tensor_name") for op in recvs] == ["layer1/hidden:0"]
    assert recvs[0].get_attr("send_device") == CPU % 1
    assert {op.type for op in parts[CPU % 1].get_operations()} >= {"MatMul", "Add", "Relu"}


def test_model_parallel_with_in_process_devices_matches_too():
    rng = np.random.RandomState(3)
    params = _model_params(rng)
    batch = rng.standard_normal((3, 6)).astype(np.float32)
    threads = tf.ConfigProto(device_count={"CPU": 3}, device_processes=False)
    in_process, _ = _run_model(["/cpu:1", "/cpu:2"], threads, params, batch)
    processes, _ = _run_model(["/cpu:1", "/cpu:2"], THREE_CPUS, params, batch)
    np.testing.assert_array_equal(in_process, processes)
