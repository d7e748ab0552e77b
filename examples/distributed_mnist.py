"""The course MLP trained by a cluster: parameter servers, replicas, sync or async.

Every task of the cluster runs this same script; ``TF_CONFIG`` says which task
it is, so it runs unchanged under the launcher, Kubernetes or any scheduler
that sets it::

    # asynchronous: each worker applies its own gradients on the ps
    .venv/bin/python -m minitf.cluster --ps 1 --workers 2 -- \\
        .venv/bin/python examples/distributed_mnist.py --epochs 1

    # synchronous, 2 gradients per step, plus a backup worker
    .venv/bin/python -m minitf.cluster --ps 1 --workers 2 --backup 1 -- \\
        .venv/bin/python examples/distributed_mnist.py --epochs 1 --sync

* A parameter server (job ``ps``) serves the variables and never returns.
* Every worker builds the model of ``examples/mnist_mlp.py`` (784-512-512-10,
  ReLU, SGD) under ``tf.train.replica_device_setter``: the variables and the
  global step land on the ps tasks (round-robin), the rest on the worker.
  It trains on its own shuffling of the training set through a
  ``tf.train.MonitoredTrainingSession``.
* With ``--sync`` the optimizer is wrapped in
  ``tf.train.SyncReplicasOptimizer``: each update averages the gradients of
  ``workers`` replicas; the ``--backup`` extra workers (default: the
  launcher's ``MINITF_BACKUP_WORKERS``) make a step complete as soon as the
  fastest ones have sent theirs.  The learning rate is multiplied by the
  number of gradients averaged (the linear scaling rule).
* The chief (worker 0) initializes the variables or restores them from
  ``--checkpoint-dir``, saves checkpoints, and when the global step reaches
  its end reports the test accuracy.  Training stops after ``--epochs``
  passes' worth of examples in all: asynchronously every update uses one
  batch, synchronously ``replicas_to_aggregate`` of them, so the cluster sees
  as many examples as ``examples/mnist_mlp.py --epochs N`` does.

``--straggler-delay S`` makes the last worker sleep S seconds before each of
its steps: the slow machine that backup workers are there to hide.
"""

import argparse
import math
import os
import time

import numpy as np

import minitf as tf
from minitf.cluster import BACKUP_WORKERS_ENV
from minitf.distributed.tf_config import TFConfigClusterResolver, server_from_tf_config
from mnist_mlp import IMAGE_PIXELS, NUM_CLASSES, fully_connected, load_data


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sync", action="store_true",
                        help="synchronous training with SyncReplicasOptimizer")
    parser.add_argument("--backup", type=int,
                        default=int(os.environ.get(BACKUP_WORKERS_ENV, "0")),
                        help="backup workers among the workers (sync only; default: $%s)"
                             % BACKUP_WORKERS_ENV)
    parser.add_argument("--epochs", type=float, default=1.0,
                        help="passes over the training set, all workers together")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--hidden", type=int, nargs="+", default=[512, 512])
    parser.add_argument("--checkpoint-dir", default=os.path.join("build", "distributed_mnist"))
    parser.add_argument("--save-checkpoint-steps", type=int, default=100)
    parser.add_argument("--data-dir", help="a directory holding MNIST's IDX files")
    parser.add_argument("--fallback-data-dir", help="MNIST's files if the cache has none")
    parser.add_argument("--train-size", type=int, help="at most this many training examples")
    parser.add_argument("--test-size", type=int, help="at most this many test examples")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log-every", type=int, default=50, help="steps between loss lines")
    parser.add_argument("--straggler-delay", type=float, default=0.0,
                        help="seconds the last worker sleeps before each step")
    parser.add_argument("--step-timeout", type=float, default=60.0,
                        help="seconds a step may take before it fails (a task that hangs)")
    return parser.parse_args(argv)


def build_model(args, num_workers, worker_device, cluster):
    """The MLP under replica_device_setter; returns a dict of its tensors and ops."""
    with tf.device(tf.train.replica_device_setter(worker_device=worker_device,
                                                  cluster=cluster)):
        global_step = tf.train.get_or_create_global_step()
        images = tf.placeholder(tf.float32, [None, IMAGE_PIXELS], name="images")
        labels = tf.placeholder(tf.int64, [None], name="labels")
        net = images
        for i, units in enumerate(args.hidden):
            net = fully_connected(net, units, "hidden%d" % (i + 1), activation=tf.nn.relu)
        logits = fully_connected(net, NUM_CLASSES, "softmax_linear")
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32))
        if args.sync:
            # Each update averages the gradients of `aggregate` batches: a
            # batch that many times larger, and that many times fewer updates
            # for the same examples.  The learning rate grows with it (the
            # linear scaling rule, Goyal et al. 2017) to learn as much per example.
            aggregate = num_workers - args.backup
            optimizer = tf.train.SyncReplicasOptimizer(
                tf.train.GradientDescentOptimizer(args.learning_rate * aggregate),
                replicas_to_aggregate=aggregate, total_num_replicas=num_workers)
        else:
            optimizer = tf.train.GradientDescentOptimizer(args.learning_rate)
        train_op = optimizer.minimize(loss, global_step=global_step)
    return {"images": images, "labels": labels, "loss": loss, "accuracy": accuracy,
            "train_op": train_op, "global_step": global_step, "optimizer": optimizer}


def last_step(args, num_train, num_workers):
    """The global step at which training ends: ``--epochs`` worth of examples."""
    batches = math.ceil(args.epochs * num_train / args.batch_size)
    per_update = num_workers - args.backup if args.sync else 1
    return max(1, math.ceil(batches / per_update))


def batches(images, labels, batch_size, rng):
    """Minibatches for ever, each epoch in a fresh random order."""
    while True:
        order = rng.permutation(len(images))
        for start in range(0, len(order) - batch_size + 1, batch_size):
            index = order[start:start + batch_size]
            yield images[index], labels[index]


def wait_for_chief(target, config, uninitialized, timeout=600.0):
    """Returns once the chief has initialized (or restored) the variables.

    A non-chief ``MonitoredTrainingSession`` checks this itself, but when the
    model is not ready yet it looks again only 30 s later (TF's
    ``recovery_wait_secs``): a short run would be over by then.
    """
    deadline = time.monotonic() + timeout
    with tf.Session(target, config=config) as sess:
        while len(sess.run(uninitialized)) and time.monotonic() < deadline:
            time.sleep(0.1)


def main(argv=None):
    args = parse_args(argv)
    resolver = TFConfigClusterResolver()
    server = server_from_tf_config()
    if resolver.task_type == "ps":
        server.join()  # never returns: parameter servers only serve
    task = resolver.task_id
    is_chief = task == 0
    cluster = resolver.cluster_spec()
    num_workers = cluster.num_tasks("worker")
    if args.sync and not 0 <= args.backup < num_workers:
        raise SystemExit("--backup must leave at least one worker to aggregate")

    (x_train, y_train), (x_test, y_test), description = load_data(
        args.data_dir, False, args.train_size, args.test_size, args.seed, args.fallback_data_dir)
    if is_chief:
        print("Data:", description, flush=True)
    worker_device = "/job:worker/task:%d" % task
    tf.set_random_seed(args.seed)
    model = build_model(args, num_workers, worker_device, cluster)
    uninitialized = tf.report_uninitialized_variables(tf.global_variables())
    end = last_step(args, len(x_train), num_workers)

    hooks = [tf.train.StopAtStepHook(last_step=end)]
    if args.sync:
        hooks.append(model["optimizer"].make_session_run_hook(is_chief))
    final = tf.train.FinalOpsHook(model["accuracy"], {model["images"]: x_test,
                                                      model["labels"]: y_test})
    # Each worker talks to the parameter servers and itself only (TF1's usual
    # between-graph setting), and no step waits longer than --step-timeout.
    # Soft placement lets the ops that read a ps variable's state (the
    # readiness checks) run beside it: TF's own mnist_replica.py sets it too.
    config = tf.ConfigProto(allow_soft_placement=True, device_filters=["/job:ps", worker_device],
                            operation_timeout_in_ms=int(args.step_timeout * 1000))
    if not is_chief:
        wait_for_chief(server.target, config, uninitialized)
    rng = np.random.default_rng(args.seed + task)
    straggling = args.straggler_delay > 0 and task == num_workers - 1
    steps = 0
    began = time.perf_counter()
    # At the end the chief's queue runner (sync) waits in take_grad for
    # gradients nobody sends any more; the session gives it 5 s, then cancels it.
    with tf.train.MonitoredTrainingSession(
            master=server.target, is_chief=is_chief, checkpoint_dir=args.checkpoint_dir,
            hooks=hooks, chief_only_hooks=[final], config=config,
            save_checkpoint_steps=args.save_checkpoint_steps, save_checkpoint_secs=None,
            save_summaries_steps=None, save_summaries_secs=None,
            log_step_count_steps=None, stop_grace_period_secs=5) as sess:
        for x, y in batches(x_train, y_train, args.batch_size, rng):
            if sess.should_stop():
                break
            if straggling:
                time.sleep(args.straggler_delay)
            _, loss, step = sess.run([model["train_op"], model["loss"], model["global_step"]],
                                     {model["images"]: x, model["labels"]: y})
            steps += 1
            if steps % args.log_every == 0:
                print("worker:%d step %d (global %d): loss %.4f, %.1f s"
                      % (task, steps, step, loss, time.perf_counter() - began), flush=True)
    seconds = time.perf_counter() - began
    print("worker:%d done: %d steps in %.1f s (%.0f examples/s)"
          % (task, steps, seconds, steps * args.batch_size / seconds), flush=True)
    if is_chief:
        print("Final test accuracy: %.2f%% on %d test images after %d global steps (%s)"
              % (100 * final.final_ops_values, len(x_test), end,
                 "sync" if args.sync else "async"), flush=True)


if __name__ == "__main__":
    main()
