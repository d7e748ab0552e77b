"""TensorFlow's own numbers for the cases of bench_distributed.py, to compare with minitf's.

TensorFlow is not a dependency of minitf: run this with a scratch venv that
has it (``python -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install
tensorflow-cpu``), on the same machine and in the same sitting as
``benchmarks/bench_distributed.py``::

    OPENBLAS_NUM_THREADS=1 /tmp/tfvenv/bin/python benchmarks/tf_reference_distributed.py

It mirrors the minitf benchmark's graphs through ``tf.compat.v1``:

* a tiny step (fed scalar ``+ 1``): in a local session; through a server in
  this process; through a server in another process; through a server in
  this process with the op on a ps task in another process;
* ``RecvTensor`` of a 64 MiB float32 variable on the ps, read by a one-element
  slice on this process's task (a 16-float step gives the fixed cost);
* the course MLP (784-512-512-10, batch 128, SGD) in one process and with its
  variables on the ps (``replica_device_setter``): the per-step overhead.
"""

import json
import os
import socket
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import numpy as np  # noqa: E402
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
ONE_CPU = {"CPU": 1, "GPU": 0}


def free_address():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return "127.0.0.1:%d" % s.getsockname()[1]


def serve(cluster, job):
    """A task in another process; returns its Popen."""
    process = subprocess.Popen([sys.executable, __file__, "serve", json.dumps(cluster), job],
                               stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline().startswith("READY")
    return process


def per_run(sess, fetch, feed, seconds=3.0):
    for _ in range(5):
        sess.run(fetch, feed)
    runs, began = 0, time.perf_counter()
    while time.perf_counter() - began < seconds:
        sess.run(fetch, feed)
        runs += 1
    return (time.perf_counter() - began) / runs


def tiny(device=None):
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, [])
        with tf.device(device):
            y = x + 1.0
    return graph, y, {x: 3.0}


def main():
    config = tf.ConfigProto(device_count=ONE_CPU)
    cluster = {"ps": [free_address()], "worker": [free_address()]}
    ps = serve(cluster, "ps")
    other = serve({"local": [free_address()]}, "local")
    server = tf.train.Server(tf.train.ClusterSpec(cluster), "worker", 0, config=config)
    try:
        graph, y, feed = tiny()
        with tf.Session(graph=graph, config=config) as sess:
            print("tiny step, local session                          %8.1f us"
                  % (per_run(sess, y, feed) * 1e6))
        with tf.Session(server.target, graph=graph, config=config) as sess:
            print("tiny step, server in this process                 %8.1f us"
                  % (per_run(sess, y, feed) * 1e6))
        target = "grpc://" + json.loads(other.stdout.readline())
        with tf.Session(target, graph=graph, config=config) as sess:
            print("tiny step, server in another process              %8.1f us"
                  % (per_run(sess, y, feed) * 1e6))
        graph, y, feed = tiny("/job:ps/task:0")
        with tf.Session(server.target, graph=graph, config=config) as sess:
            print("tiny step, server here, op on a ps in another     %8.1f us"
                  % (per_run(sess, y, feed) * 1e6))
        recv_tensor(server, config)
        mlp(server, cluster, config)
    finally:
        ps.kill()
        other.kill()


def recv_tensor(server, config):
    seconds = {}
    for elements in (16, 16 << 20):
        graph = tf.Graph()
        with graph.as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(tf.zeros([elements]), name="v%d" % elements)
            with tf.device("/job:worker/task:0"):
                first = tf.slice(v * 1.0, [0], [1])
        with tf.Session(server.target, graph=graph, config=config) as sess:
            sess.run(v.initializer)
            seconds[elements] = per_run(sess, first, None)
    transfer = seconds[16 << 20] - seconds[16]
    print("RecvTensor 64 MiB ps -> worker: step %.1f ms, transfer %.1f ms, %.2f GB/s"
          % (seconds[16 << 20] * 1e3, transfer * 1e3, (64 << 20) / transfer / 1e9))


def mlp_graph(device_setter=None):
    graph = tf.Graph()
    with graph.as_default(), tf.device(device_setter):
        step = tf.train.get_or_create_global_step()
        images = tf.placeholder(tf.float32, [128, 784])
        labels = tf.placeholder(tf.int64, [128])
        net, fan_in = images, 784
        for units in (512, 512, 10):
            w = tf.Variable(tf.truncated_normal([fan_in, units], stddev=0.05))
            b = tf.Variable(tf.zeros([units]))
            net = tf.matmul(net, w) + b
            net = tf.nn.relu(net) if units != 10 else net
            fan_in = units
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                             logits=net))
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss, global_step=step)
        init = tf.global_variables_initializer()
    return graph, images, labels, train, init


def mlp(server, cluster, config):
    rng = np.random.default_rng(0)
    x, y = rng.random((128, 784), dtype=np.float32), rng.integers(0, 10, 128)
    graph, images, labels, train, init = mlp_graph()
    with tf.Session(graph=graph, config=config) as sess:
        sess.run(init)
        local = per_run(sess, train, {images: x, labels: y}, 5.0)
    setter = tf.train.replica_device_setter(worker_device="/job:worker/task:0",
                                            cluster=tf.train.ClusterSpec(cluster))
    graph, images, labels, train, init = mlp_graph(setter)
    remote_config = tf.ConfigProto(device_count=ONE_CPU,
                                   device_filters=["/job:ps", "/job:worker/task:0"])
    with tf.Session(server.target, graph=graph, config=remote_config) as sess:
        sess.run(init)
        remote = per_run(sess, train, {images: x, labels: y}, 5.0)
    print("MLP one process %.2f ms/step; 1 worker + 1 ps %.2f ms/step; overhead %.2f ms"
          % (local * 1e3, remote * 1e3, (remote - local) * 1e3))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        cluster, job = json.loads(sys.argv[2]), sys.argv[3]
        task_server = tf.train.Server(tf.train.ClusterSpec(cluster), job, 0,
                                      config=tf.ConfigProto(device_count=ONE_CPU))
        print("READY", flush=True)
        print(json.dumps(task_server.target[len("grpc://"):]), flush=True)
        task_server.join()
    else:
        main()
