"""Between-graph replicated training, the TF1 way: run it under the launcher.

Every task of the cluster runs this same script; ``TF_CONFIG`` (set by the
launcher) says which task it is::

    .venv/bin/python -m minitf.cluster --ps 1 --workers 2 -- \\
        .venv/bin/python examples/between_graph_sgd.py --steps 20

* a parameter server (``ps``) starts its ``tf.train.Server`` and serves for
  ever (``server.join()``); the launcher stops it when the chief is done;
* each worker builds the same graph, with the variables placed on
  ``/job:ps`` by ``tf.train.replica_device_setter`` and the rest on itself,
  and runs plain SGD steps through ``tf.Session(server.target)``; all workers
  update the same variables on the parameter server (asynchronous training);
* the chief (worker 0) initializes the variables; the other workers wait
  until it has, then train too.  The chief prints the final loss.

The model fits ``y = 2x`` with one weight, so the loss falls towards 0.
"""

import argparse
import time

import minitf as tf
from minitf.distributed.tf_config import TFConfigClusterResolver, server_from_tf_config


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="SGD steps per worker")
    parser.add_argument("--learning-rate", type=float, default=0.05)
    args = parser.parse_args()

    resolver = TFConfigClusterResolver()
    server = server_from_tf_config()
    if resolver.task_type == "ps":
        server.join()  # never returns: parameter servers only serve
    is_chief = resolver.task_type == "worker" and resolver.task_id == 0

    worker_device = "/job:worker/task:%d" % resolver.task_id
    with tf.device(tf.train.replica_device_setter(worker_device=worker_device,
                                                  cluster=resolver.cluster_spec())):
        global_step = tf.train.get_or_create_global_step()
        w = tf.Variable(0.0, name="w")
        x = tf.constant([1.0, 2.0, 3.0])
        loss = tf.reduce_mean(tf.square(w * x - 2.0 * x))
        train = tf.train.GradientDescentOptimizer(args.learning_rate).minimize(
            loss, global_step=global_step)
    uninitialized = tf.report_uninitialized_variables()

    # Each worker uses only the parameter servers and itself (TF1's usual
    # between-graph setting): it neither waits for nor fails with the others.
    config = tf.ConfigProto(device_filters=["/job:ps", worker_device])
    with tf.Session(server.target, config=config) as sess:
        if is_chief:
            sess.run(tf.global_variables_initializer())
        else:
            while len(sess.run(uninitialized)):  # the chief initializes
                time.sleep(0.05)
        for _ in range(args.steps):
            sess.run(train)
        print("%s:%d done, global step %d" % (resolver.task_type, resolver.task_id,
                                              sess.run(global_step)), flush=True)
        if is_chief:
            print("final loss %.6f" % sess.run(loss), flush=True)


if __name__ == "__main__":
    main()
