"""The main job, what ``make demo`` runs: train a fully connected MNIST classifier.

The course's classic first network, written as a TF1 program (only the
import differs): a multilayer perceptron 784-512-512-10 with ReLUs, the
softmax cross-entropy loss, plain SGD (``tf.train.GradientDescentOptimizer``)
on minibatches fed through placeholders.  Every epoch shows a tqdm progress
bar, then prints the epoch's loss and accuracy and the test accuracy, and
saves a checkpoint with ``tf.train.Saver``.  At the end a fresh session
restores the last checkpoint and measures the final test accuracy, which
shows the checkpoint holds the trained model.

Everything is logged for TensorBoard in ``--logdir`` (default
``build/logs/mnist_mlp``): the graph, the training loss and accuracy every few
steps, the test accuracy every epoch, a histogram of every weight and bias
every epoch, and one traced step (``RunOptions(trace_level=FULL_TRACE)``)
whose per-op compute times ``FileWriter.add_run_metadata`` puts in the graph
tab (choose the run ``trace_step_1``).  The program prints the command that
shows them: ``tensorboard --logdir build/logs/mnist_mlp``.

The data, in this order of preference (the program says which it used):

1. ``--data-dir DIR``: MNIST's IDX files in DIR (it fails if they are not there);
2. the MNIST cache, ``$MINITF_DATA/mnist`` or ``~/.cache/minitf/mnist``
   (``--download`` fills it from the network first);
3. ``--fallback-data-dir DIR``, when it holds MNIST's files (``make demo``
   passes the project's ``../shared/data/mnist`` when that exists);
4. otherwise synthetic MNIST-shaped digits drawn on the spot
   (:mod:`minitf.datasets.synthetic_digits`): no file, no network.

When a directory holds only MNIST's test files (10,000 images), they are split
80/20 into a training and a test part.

Run it::

    .venv/bin/python examples/mnist_mlp.py                       # 5 epochs
    .venv/bin/python examples/mnist_mlp.py --data-dir ~/mnist --epochs 10
    .venv/bin/python examples/mnist_mlp.py --help
"""

import argparse
import os
import sys
import time

import numpy as np
from tqdm import tqdm

import minitf as tf
from minitf.datasets import load_mnist, load_synthetic_digits, train_test_split
from minitf.datasets.mnist import cache_dir

NUM_CLASSES = 10
IMAGE_PIXELS = 28 * 28


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=_positive, default=5, help="passes over the training set")
    parser.add_argument("--batch-size", type=_positive, default=128)
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--hidden", type=int, nargs="+", default=[512, 512],
                        help="sizes of the hidden layers (default: 512 512)")
    parser.add_argument("--data-dir", help="a directory holding MNIST's IDX files")
    parser.add_argument("--fallback-data-dir",
                        help="MNIST's IDX files to use when the cache holds none (skipped "
                             "if they are not there either)")
    parser.add_argument("--download", action="store_true",
                        help="download MNIST into the cache when it is not there")
    parser.add_argument("--checkpoint-dir", default=os.path.join("build", "mnist_mlp"),
                        help="where checkpoints are saved (default: build/mnist_mlp)")
    parser.add_argument("--logdir", default=os.path.join("build", "logs", "mnist_mlp"),
                        help="where TensorBoard's event files are written "
                             "(default: build/logs/mnist_mlp)")
    parser.add_argument("--summary-every", type=_positive, default=20,
                        help="log the training loss and accuracy every this many steps")
    parser.add_argument("--train-size", type=int,
                        help="use at most this many training examples (default: all)")
    parser.add_argument("--test-size", type=int,
                        help="use at most this many test examples (default: all)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seeds the data, the initial weights and the shuffling")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    return parser.parse_args(argv)


def _positive(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1, got %d" % value)
    return value


# ---- Data ---------------------------------------------------------------------------
def load_data(data_dir=None, download=False, train_size=None, test_size=None, seed=0,
              fallback_data_dir=None):
    """The training and test sets as float32 ``[n, 784]`` in [0, 1] and int64 labels.

    Returns:
        ``(x_train, y_train), (x_test, y_test), description``, the last
        saying which data was used.
    """
    where = data_dir if data_dir is not None else cache_dir()
    try:
        train, test = _load_mnist_from(where, download=download and data_dir is None)
    except FileNotFoundError:
        if data_dir is not None:
            raise  # asked for MNIST there: say what is missing rather than fall back
        train = test = None
    if test is None and data_dir is None and fallback_data_dir is not None:
        try:
            train, test = _load_mnist_from(fallback_data_dir, download=False)
            where = fallback_data_dir
        except FileNotFoundError:
            pass
    if test is None:
        # Render only what will be used: drawing digits takes a moment.
        train, test = load_synthetic_digits(
            num_train=train_size or 12000, num_test=test_size or 2000, seed=seed)
        source = ("synthetic digits (MNIST not found in %s; put MNIST's files there, or pass "
                  "--data-dir DIR or --download, to train on the real thing)" % where)
    elif train is None:
        train, test = train_test_split(*test, test_fraction=0.2, seed=seed)
        source = ("MNIST from %s (only its 10,000 test images are there: split 80/20 into "
                  "training and test)" % where)
    else:
        source = "MNIST from %s" % where
    train, test = _prepare(*train, train_size), _prepare(*test, test_size)
    description = "%s: %d training and %d test images" % (source, len(train[0]), len(test[0]))
    return train, test, description


def _load_mnist_from(directory, download):
    """``(train, test)`` from ``directory``; ``train`` is None if only the test files are there.

    Raises:
        FileNotFoundError: if the test files are not there.
    """
    test = load_mnist(directory, split="test", download=download)
    try:
        train = load_mnist(directory, split="train", download=download)
    except FileNotFoundError:
        if download:
            raise
        train = None
    return train, test


def _prepare(images, labels, limit):
    images, labels = images[:limit], labels[:limit]
    flat = images.reshape(len(images), IMAGE_PIXELS).astype(np.float32)
    flat /= np.float32(255.0)
    return flat, labels.astype(np.int64)


# ---- Model --------------------------------------------------------------------------
def fully_connected(inputs, units, name, activation=None):
    """``activation(inputs @ weights + biases)``, the course's hand-made dense layer.

    The weights start from a truncated normal scaled by ``sqrt(2 / fan_in)``
    (He et al., 2015), which keeps the activations' scale through ReLU layers.
    """
    with tf.name_scope(name):
        fan_in = int(inputs.shape[1])
        weights = tf.Variable(
            tf.truncated_normal([fan_in, units], stddev=np.sqrt(2.0 / fan_in)), name="weights")
        biases = tf.Variable(tf.zeros([units]), name="biases")
        outputs = tf.matmul(inputs, weights) + biases
        return activation(outputs) if activation is not None else outputs


def build_model(hidden, learning_rate):
    """The graph: placeholders, the MLP, its loss and accuracy, an SGD step, a Saver."""
    images = tf.placeholder(tf.float32, [None, IMAGE_PIXELS], name="images")
    labels = tf.placeholder(tf.int64, [None], name="labels")
    net = images
    for i, units in enumerate(hidden):
        net = fully_connected(net, units, "hidden%d" % (i + 1), activation=tf.nn.relu)
    logits = fully_connected(net, NUM_CLASSES, "softmax_linear")
    with tf.name_scope("loss"):
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    with tf.name_scope("accuracy"):
        correct = tf.equal(tf.argmax(logits, 1), labels)
        accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
    global_step = tf.train.get_or_create_global_step()
    train_op = tf.train.GradientDescentOptimizer(learning_rate).minimize(
        loss, global_step=global_step)
    return {"images": images, "labels": labels, "loss": loss, "accuracy": accuracy,
            "train_op": train_op, "global_step": global_step,
            "saver": tf.train.Saver(max_to_keep=2), **build_summaries(loss, accuracy)}


def build_summaries(loss, accuracy):
    """The summary ops TensorBoard plots.

    ``train_summary``: the minibatch's loss and accuracy (the Scalars tab),
    fetched with the training step.  ``epoch_summary``: a histogram of every
    trainable variable (the Histograms and Distributions tabs) and the test
    accuracy, fed through a placeholder since it is computed over many batches.
    """
    train_summary = tf.summary.merge([tf.summary.scalar("train/loss", loss),
                                      tf.summary.scalar("train/accuracy", accuracy)])
    test_accuracy = tf.placeholder(tf.float32, [], name="test_accuracy")
    epoch_summary = tf.summary.merge(
        [tf.summary.scalar("test/accuracy", test_accuracy)]
        + [tf.summary.histogram("weights/" + v.op.name, v) for v in tf.trainable_variables()])
    return {"train_summary": train_summary, "epoch_summary": epoch_summary,
            "test_accuracy": test_accuracy}


def evaluate(sess, model, images, labels, batch_size=1000):
    """The accuracy on a whole data set, fed in batches."""
    correct = 0.0
    for start in range(0, len(images), batch_size):
        feed = {model["images"]: images[start:start + batch_size],
                model["labels"]: labels[start:start + batch_size]}
        correct += sess.run(model["accuracy"], feed) * len(feed[model["labels"]])
    return correct / max(len(images), 1)


# ---- Training -----------------------------------------------------------------------
def train_epoch(sess, model, images, labels, batch_size, rng, progress, writer=None,
                summary_every=20):
    """One pass over the shuffled training set; returns its mean loss and accuracy.

    With a ``writer`` (a ``tf.summary.FileWriter``), the minibatch loss and
    accuracy are logged every ``summary_every`` steps, and the very first step
    of the training is traced: its ``RunMetadata`` (every op's device and
    compute time) goes to the writer with ``add_run_metadata``.
    """
    order = rng.permutation(len(images))
    batches = tqdm(range(0, len(images), batch_size), desc=progress["desc"], unit="batch",
                   disable=progress["disable"], leave=False, dynamic_ncols=True)
    total_loss = total_correct = 0.0
    seen = 0
    fetches = [model["train_op"], model["loss"], model["accuracy"], model["global_step"],
               model["train_summary"]]
    first_step = sess.run(model["global_step"]) + 1
    for step, start in enumerate(batches):
        index = order[start:start + batch_size]
        feed = {model["images"]: images[index], model["labels"]: labels[index]}
        global_step = first_step + step  # the value of global_step after this run
        trace = writer is not None and global_step == 1
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE) if trace else None
        metadata = tf.RunMetadata() if trace else None
        _, loss, accuracy, global_step, summary = sess.run(fetches, feed, options=options,
                                                           run_metadata=metadata)
        if trace:
            writer.add_run_metadata(metadata, "trace_step_%d" % global_step, global_step)
        if writer is not None and (global_step % summary_every == 0 or global_step == 1):
            writer.add_summary(summary, global_step)
        total_loss += loss * len(index)
        total_correct += accuracy * len(index)
        seen += len(index)
        if step % 20 == 0:
            batches.set_postfix(loss="%.4f" % (total_loss / seen),
                                acc="%.2f%%" % (100 * total_correct / seen))
    batches.close()
    return total_loss / seen, total_correct / seen


def main(argv=None):
    """Trains, checkpoints, restores and tests; returns the final test accuracy."""
    args = parse_args(argv)
    (x_train, y_train), (x_test, y_test), description = load_data(
        args.data_dir, args.download, args.train_size, args.test_size, args.seed,
        args.fallback_data_dir)
    print("Data:", description)

    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(args.seed)
        model = build_model(args.hidden, args.learning_rate)
    layers = "-".join(str(n) for n in [IMAGE_PIXELS] + args.hidden + [NUM_CLASSES])
    print("Model: MLP %s, ReLU, softmax cross-entropy, SGD (learning rate %g, batch %d), "
          "%d epochs" % (layers, args.learning_rate, args.batch_size, args.epochs))

    os.makedirs(args.checkpoint_dir, exist_ok=True)
    prefix = os.path.join(args.checkpoint_dir, "mnist_mlp.ckpt")
    rng = np.random.default_rng(args.seed)
    writer = tf.summary.FileWriter(args.logdir, graph)
    print("TensorBoard logs: %s (view them with: tensorboard --logdir %s)"
          % (args.logdir, args.logdir))
    with tf.Session(graph=graph) as sess, writer:
        sess.run(tf.global_variables_initializer())
        for epoch in range(1, args.epochs + 1):
            began = time.perf_counter()
            progress = {"desc": "epoch %d/%d" % (epoch, args.epochs), "disable": args.no_progress}
            loss, accuracy = train_epoch(sess, model, x_train, y_train, args.batch_size, rng,
                                         progress, writer, args.summary_every)
            test_accuracy = evaluate(sess, model, x_test, y_test)
            summary, step = sess.run([model["epoch_summary"], model["global_step"]],
                                     {model["test_accuracy"]: test_accuracy})
            writer.add_summary(summary, step)
            writer.flush()
            path = model["saver"].save(sess, prefix, global_step=epoch)
            print("epoch %d/%d: loss %.4f, train accuracy %.2f%%, test accuracy %.2f%% "
                  "(%.1f s); saved %s"
                  % (epoch, args.epochs, loss, 100 * accuracy, 100 * test_accuracy,
                     time.perf_counter() - began, path))
            sys.stdout.flush()

    # A new session starts from uninitialized variables: restoring the last
    # checkpoint is what brings the trained model back.
    latest = tf.train.latest_checkpoint(args.checkpoint_dir)
    with tf.Session(graph=graph) as sess:
        model["saver"].restore(sess, latest)
        final_accuracy = evaluate(sess, model, x_test, y_test)
    print("Final test accuracy: %.2f%% on %d test images (model restored from %s)"
          % (100 * final_accuracy, len(x_test), latest))
    print("To see the training in TensorBoard: tensorboard --logdir %s" % args.logdir)
    return final_accuracy


if __name__ == "__main__":
    main()
