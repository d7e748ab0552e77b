"""A small TF1 between-graph training program for the distributed-training fault tests.

Every task of the cluster runs it with ``TF_CONFIG`` set, as a real job would
run under a launcher.  A ps task serves; a worker fits ``w`` to a fixed target
with ``MonitoredTrainingSession`` (asynchronous SGD, or ``--sync`` with
``SyncReplicasOptimizer``), and prints one line per event, which the tests
read to know where training is (each line is one write, so that a
thread's traceback on stderr cannot split it)::

    STEP task=1 global=17      a step of this worker finished (global step after it)
    SAVING step=20             the chief starts a checkpoint (a listener)
    SAVED step=20              ... and finished it
    DONE task=0                training ended on this worker

``--ballast-mb`` adds a large untrained variable on the ps so that a
checkpoint takes long enough to kill the chief in the middle of one.
"""

import argparse
import sys
import time

import numpy as np

import minitf as tf
from minitf.distributed.tf_config import TFConfigClusterResolver, server_from_tf_config

TARGET = np.arange(8, dtype=np.float32) / 8.0


def report(line):
    """Writes ``line`` and its newline at once: ``print`` writes them apart."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


class _SaveReporter(tf.train.CheckpointSaverListener):
    def before_save(self, session, global_step_value):
        report("SAVING step=%d" % global_step_value)

    def after_save(self, session, global_step_value):
        report("SAVED step=%d" % global_step_value)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sync", action="store_true")
    parser.add_argument("--replicas-to-aggregate", type=int)
    parser.add_argument("--last-step", type=int, default=100)
    parser.add_argument("--checkpoint-dir", required=True)
    parser.add_argument("--save-steps", type=int, default=10)
    parser.add_argument("--ballast-mb", type=int, default=0)
    parser.add_argument("--step-delay", type=float, default=0.0, help="seconds before a step")
    parser.add_argument("--step-timeout", type=float, default=10.0)
    args = parser.parse_args()

    resolver = TFConfigClusterResolver()
    server = server_from_tf_config()
    if resolver.task_type == "ps":
        server.join()
    task = resolver.task_id
    is_chief = task == 0
    num_workers = resolver.cluster_spec().num_tasks("worker")
    worker_device = "/job:worker/task:%d" % task
    with tf.device(tf.train.replica_device_setter(worker_device=worker_device,
                                                  cluster=resolver.cluster_spec())):
        global_step = tf.train.get_or_create_global_step()
        w = tf.Variable(tf.zeros([8]), name="w")
        if args.ballast_mb:
            tf.Variable(tf.zeros([args.ballast_mb * 2 ** 18]), trainable=False, name="ballast")
        x = tf.random_uniform([8], 0.5, 1.5)
        loss = tf.reduce_mean(tf.square(w * x - TARGET * x))
        optimizer = tf.train.GradientDescentOptimizer(0.2)
        if args.sync:
            optimizer = tf.train.SyncReplicasOptimizer(
                optimizer, replicas_to_aggregate=args.replicas_to_aggregate or num_workers,
                total_num_replicas=num_workers)
        train_op = optimizer.minimize(loss, global_step=global_step)
    hooks = [tf.train.StopAtStepHook(last_step=args.last_step)]
    if args.sync:
        hooks.append(optimizer.make_session_run_hook(is_chief))
    saver_hook = tf.train.CheckpointSaverHook(args.checkpoint_dir, save_steps=args.save_steps,
                                              listeners=[_SaveReporter()])
    config = tf.ConfigProto(allow_soft_placement=True, device_filters=["/job:ps", worker_device],
                            operation_timeout_in_ms=int(args.step_timeout * 1000))
    with tf.train.MonitoredTrainingSession(
            master=server.target, is_chief=is_chief, checkpoint_dir=args.checkpoint_dir,
            hooks=hooks, chief_only_hooks=[saver_hook], config=config,
            save_checkpoint_secs=None, save_summaries_steps=None, save_summaries_secs=None,
            log_step_count_steps=None, stop_grace_period_secs=5) as sess:
        while not sess.should_stop():
            time.sleep(args.step_delay)
            _, step = sess.run([train_op, global_step])
            report("STEP task=%d global=%d" % (task, step))
    report("DONE task=%d" % task)


if __name__ == "__main__":
    main()
