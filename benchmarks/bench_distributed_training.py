"""How fast does the course MLP train through a cluster, and what does the cluster add per step?

Part (c) of ``bench_distributed.py`` (which runs it), or on its own.  The
model is the course's MNIST MLP, 784-512-512-10 with ReLUs, softmax
cross-entropy, plain SGD, batches of ``--batch-size`` (128) fed from random
MNIST-shaped arrays (the speed does not depend on the pixels).

* **One process**: ``tf.Session()``, the baseline.
* **A cluster on loopback**: one ps task (``python -m
  minitf.distributed.launch``) holding the variables and the global step, and
  1, 2 or 4 worker processes running this script with ``TF_CONFIG`` (the
  model built under ``replica_device_setter``), asynchronously (each worker
  applies its own gradients) or synchronously (``SyncReplicasOptimizer``
  aggregating every worker's gradient).  Each worker trains for ``--seconds``
  after a warm-up; the cluster's examples/s is the sum of the workers'
  gradients computed in that time (sync: applied or not).
* **Per-step overhead**: the step time of one async worker with the
  parameters on one ps, minus the one-process step time measured in the same
  run.  Goal: at most 2 ms.  What crosses per step: the 669,706 parameters
  to the worker (2.7 MB) and their gradients back (2.7 MB), over the
  same-host shared-memory path (the default) or gRPC (``MINITF_SHM=0``).

Run it from the repository root::

    .venv/bin/python benchmarks/bench_distributed_training.py
    .venv/bin/python benchmarks/bench_distributed_training.py --workers 1 2 --seconds 5

This machine's core count bounds the scaling: with 2 cores, two workers and
the ps already share them, so more workers cannot add examples/s — the
numbers show what the cluster costs, not what more machines would give.

**One BLAS thread per process** (``--blas-threads``, default 1, also for the
one-process baseline): OpenBLAS's threads spin-wait after each product, and
on a machine with fewer cores than busy threads a worker's spinning BLAS
threads take the cores its own RPC threads and the ps need.  On 2 cores that
alone doubled the cluster's step time.  Pass ``--blas-threads 0`` to leave
OpenBLAS's default.
"""

import argparse
import json
import os
import subprocess
import sys
import time

from bench_distributed import TaskProcess, free_address, handle_openblas_coretype

HIDDEN = (512, 512)
PIXELS = 28 * 28
CLASSES = 10
WARMUP_STEPS = 5


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--seconds", type=float, default=8.0, help="timed seconds per run")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--keep-openblas-coretype", action="store_true")
    parser.add_argument("--blas-threads", type=int, default=1,
                        help="OPENBLAS_NUM_THREADS of every process (0: OpenBLAS's default)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--sync", action="store_true", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def build_mlp(tf, batch_size, sync=False, num_workers=1):
    """Placeholders, the MLP, its loss and an SGD step (wrapped for sync)."""
    global_step = tf.train.get_or_create_global_step()
    images = tf.placeholder(tf.float32, [batch_size, PIXELS])
    labels = tf.placeholder(tf.int64, [batch_size])
    net, fan_in = images, PIXELS
    for i, units in enumerate(HIDDEN + (CLASSES,)):
        w = tf.Variable(tf.truncated_normal([fan_in, units], stddev=0.05), name="w%d" % i)
        b = tf.Variable(tf.zeros([units]), name="b%d" % i)
        net = tf.matmul(net, w) + b
        net = tf.nn.relu(net) if units != CLASSES else net
        fan_in = units
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                         logits=net))
    optimizer = tf.train.GradientDescentOptimizer(0.01)
    if sync:
        optimizer = tf.train.SyncReplicasOptimizer(optimizer, num_workers, num_workers)
    return images, labels, optimizer, optimizer.minimize(loss, global_step=global_step)


def random_batch(np, batch_size):
    rng = np.random.default_rng(0)
    return (rng.random((batch_size, PIXELS), dtype=np.float32),
            rng.integers(0, CLASSES, batch_size))


def timed_steps(run, seconds):
    """``(steps, elapsed)`` of calling ``run()`` for about ``seconds``."""
    for _ in range(WARMUP_STEPS):
        run()
    steps, began = 0, time.perf_counter()
    while time.perf_counter() - began < seconds:
        run()
        steps += 1
    return steps, time.perf_counter() - began


# ---- one worker task (this script, run by the cluster below) ---------------------------------
def worker_main(args):
    import numpy as np
    import minitf as tf
    from minitf.distributed.tf_config import TFConfigClusterResolver, server_from_tf_config
    resolver = TFConfigClusterResolver()
    server = server_from_tf_config()
    task, cluster = resolver.task_id, resolver.cluster_spec()
    num_workers = cluster.num_tasks("worker")
    device = "/job:worker/task:%d" % task
    with tf.device(tf.train.replica_device_setter(worker_device=device, cluster=cluster)):
        images, labels, optimizer, train_op = build_mlp(tf, args.batch_size, args.sync,
                                                        num_workers)
    hooks = [optimizer.make_session_run_hook(task == 0)] if args.sync else []
    config = tf.ConfigProto(allow_soft_placement=True, device_filters=["/job:ps", device])
    x, y = random_batch(np, args.batch_size)
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=task == 0,
                                           hooks=hooks, config=config,
                                           save_checkpoint_secs=None, save_summaries_steps=None,
                                           log_step_count_steps=None,
                                           stop_grace_period_secs=1) as sess:
        def step():
            sess.run(train_op, {images: x, labels: y})
        steps, elapsed = timed_steps(step, args.seconds)
        print("RESULT %d %.6f" % (steps, elapsed), flush=True)
        while True:  # sync: the others need this worker's gradients until they are done
            step()


def run_cluster(num_workers, sync, args):
    """Starts a ps and ``num_workers`` workers; returns ``[(steps, seconds)]`` per worker."""
    from minitf.distributed.shared_memory import unlink_segments_of  # after NumPy's settings
    cluster = {"ps": [free_address()], "worker": [free_address() for _ in range(num_workers)]}
    ps = TaskProcess(cluster, "ps", 0)
    workers = []
    try:
        for index in range(num_workers):
            env = dict(os.environ, TF_CONFIG=json.dumps(
                {"cluster": cluster, "task": {"type": "worker", "index": index}}))
            command = [sys.executable, __file__, "--worker", "--seconds", str(args.seconds),
                       "--batch-size", str(args.batch_size)] + (["--sync"] if sync else [])
            workers.append(subprocess.Popen(command, env=env, stdin=subprocess.PIPE,
                                            stdout=subprocess.PIPE, text=True))
        results = []
        for process in workers:
            line = process.stdout.readline()
            while line and not line.startswith("RESULT "):
                line = process.stdout.readline()
            if not line:
                raise RuntimeError("a worker ended without a result")
            steps, seconds = line.split()[1:]
            results.append((int(steps), float(seconds)))
        return results
    finally:
        for process in workers:
            process.kill()
            process.wait()
            process.stdin.close()
            process.stdout.close()
            unlink_segments_of(process.pid)
        ps.stop()


def one_process(tf, np, args):
    """``(steps, seconds)`` of the same model in ``tf.Session()``."""
    graph = tf.Graph()
    with graph.as_default():
        images, labels, _, train_op = build_mlp(tf, args.batch_size)
        init = tf.global_variables_initializer()
    x, y = random_batch(np, args.batch_size)
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        return timed_steps(lambda: sess.run(train_op, {images: x, labels: y}), args.seconds)


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        return worker_main(args)
    handle_openblas_coretype(args.keep_openblas_coretype)
    set_blas_threads(args.blas_threads)
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    import numpy as np
    import minitf as tf
    measure_training(tf, np, args)
    return 0


def set_blas_threads(count):
    """Gives this process and every task it starts ``count`` BLAS threads (before NumPy loads)."""
    if count > 0:
        os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = str(count)


def measure_training(tf, np, args):
    print("(c) the course MLP 784-512-512-10, batch %d, SGD: examples/s (%d CPUs)"
          % (args.batch_size, os.cpu_count()))
    steps, seconds = one_process(tf, np, args)
    local_ms = 1000.0 * seconds / steps
    print("    one process (tf.Session())       %8.0f examples/s   %6.2f ms/step"
          % (steps * args.batch_size / seconds, local_ms))
    for sync in (False, True):
        for workers in args.workers:
            results = run_cluster(workers, sync, args)
            rate = sum(s * args.batch_size / t for s, t in results)
            step_ms = 1000.0 * sum(t / s for s, t in results) / len(results)
            print("    %-5s %d worker%s + 1 ps          %8.0f examples/s   %6.2f ms/step per worker"
                  % ("sync" if sync else "async", workers, " " if workers == 1 else "s",
                     rate, step_ms))
            if not sync and workers == 1:
                overhead = step_ms - local_ms
                print("          per-step overhead of the cluster: %.2f ms (goal: at most 2 ms: %s)"
                      % (overhead, "met" if overhead <= 2.0 else "MISSED"))


if __name__ == "__main__":
    sys.exit(main())
