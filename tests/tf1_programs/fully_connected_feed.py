"""Trains and Evaluates the MNIST network using a feed dictionary (TF official
tutorials, ``examples/tutorials/mnist/fully_connected_feed.py``, TF 1.x), with
the ``mnist.py`` model it imports inlined: ``argparse`` flags, ``tf.app.run``,
name-scoped ``inference``/``loss``/``training``/``evaluation``, summaries,
a ``Saver`` checkpoint in the log dir, ``do_eval`` with ``in_top_k``.

Shortened: ``input_data.read_data_sets`` is replaced by a small synthetic
DataSet with the same ``next_batch``/``num_examples`` (400 train, 100
validation, 100 test), ``max_steps`` 60, hidden units 16 and 8, evaluation
every 30 steps.  NumPy-seeded weights are assigned after initialization for
the sweep.
"""

from __future__ import absolute_import
from __future__ import division
from __future__ import print_function

import argparse
import math
import os
import sys
import time

import numpy as np

import minitf as tf

NUM_CLASSES = 10
IMAGE_SIZE = 28
IMAGE_PIXELS = IMAGE_SIZE * IMAGE_SIZE

# Basic model parameters as external flags.
FLAGS = None
REPORT = {}


class DataSet(object):
  def __init__(self, seed, n):
    rng = np.random.RandomState(seed)
    self.labels = rng.randint(0, NUM_CLASSES, n)
    self.images = rng.rand(n, IMAGE_PIXELS).astype(np.float32) * 0.3
    for i, label in enumerate(self.labels):
      self.images[i, 70 * label:70 * label + 60] += 0.7
    self.num_examples = n
    self._index = 0

  def next_batch(self, batch_size, fake_data=False):
    start = self._index
    self._index = (self._index + batch_size) % self.num_examples
    return self.images[start:start + batch_size], self.labels[start:start + batch_size]


class DataSets(object):
  def __init__(self):
    self.train = DataSet(0, 400)
    self.validation = DataSet(1, 100)
    self.test = DataSet(2, 100)


def inference(images, hidden1_units, hidden2_units):
  with tf.name_scope('hidden1'):
    weights = tf.Variable(
        tf.truncated_normal([IMAGE_PIXELS, hidden1_units],
                            stddev=1.0 / math.sqrt(float(IMAGE_PIXELS))),
        name='weights')
    biases = tf.Variable(tf.zeros([hidden1_units]), name='biases')
    hidden1 = tf.nn.relu(tf.matmul(images, weights) + biases)
  with tf.name_scope('hidden2'):
    weights = tf.Variable(
        tf.truncated_normal([hidden1_units, hidden2_units],
                            stddev=1.0 / math.sqrt(float(hidden1_units))),
        name='weights')
    biases = tf.Variable(tf.zeros([hidden2_units]), name='biases')
    hidden2 = tf.nn.relu(tf.matmul(hidden1, weights) + biases)
  with tf.name_scope('softmax_linear'):
    weights = tf.Variable(
        tf.truncated_normal([hidden2_units, NUM_CLASSES],
                            stddev=1.0 / math.sqrt(float(hidden2_units))),
        name='weights')
    biases = tf.Variable(tf.zeros([NUM_CLASSES]), name='biases')
    logits = tf.matmul(hidden2, weights) + biases
  return logits


def loss(logits, labels):
  labels = tf.to_int64(labels)
  return tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)


def training(loss, learning_rate):
  # Add a scalar summary for the snapshot loss.
  tf.summary.scalar('loss', loss)
  # Create the gradient descent optimizer with the given learning rate.
  optimizer = tf.train.GradientDescentOptimizer(learning_rate)
  # Create a variable to track the global step.
  global_step = tf.Variable(0, name='global_step', trainable=False)
  # Use the optimizer to apply the gradients that minimize the loss
  # (and also increment the global step counter) as a single training step.
  train_op = optimizer.minimize(loss, global_step=global_step)
  return train_op


def evaluation(logits, labels):
  correct = tf.nn.in_top_k(logits, labels, 1)
  # Return the number of true entries.
  return tf.reduce_sum(tf.cast(correct, tf.int32))


def placeholder_inputs(batch_size):
  images_placeholder = tf.placeholder(tf.float32, shape=(batch_size,
                                                         IMAGE_PIXELS))
  labels_placeholder = tf.placeholder(tf.int32, shape=(batch_size))
  return images_placeholder, labels_placeholder


def fill_feed_dict(data_set, images_pl, labels_pl):
  images_feed, labels_feed = data_set.next_batch(FLAGS.batch_size,
                                                 FLAGS.fake_data)
  feed_dict = {
      images_pl: images_feed,
      labels_pl: labels_feed,
  }
  return feed_dict


def do_eval(sess,
            eval_correct,
            images_placeholder,
            labels_placeholder,
            data_set):
  # And run one epoch of eval.
  true_count = 0  # Counts the number of correct predictions.
  steps_per_epoch = data_set.num_examples // FLAGS.batch_size
  num_examples = steps_per_epoch * FLAGS.batch_size
  for step in range(steps_per_epoch):
    feed_dict = fill_feed_dict(data_set,
                               images_placeholder,
                               labels_placeholder)
    true_count += sess.run(eval_correct, feed_dict=feed_dict)
  precision = float(true_count) / num_examples
  print('Num examples: %d  Num correct: %d  Precision @ 1: %0.04f' %
        (num_examples, true_count, precision))
  return true_count


def run_training():
  """Train MNIST for a number of steps."""
  # Get the sets of images and labels for training, validation, and
  # test on MNIST.
  data_sets = DataSets()

  # Tell TensorFlow that the model will be built into the default Graph.
  with tf.Graph().as_default():
    # Generate placeholders for the images and labels.
    images_placeholder, labels_placeholder = placeholder_inputs(
        FLAGS.batch_size)

    # Build a Graph that computes predictions from the inference model.
    logits = inference(images_placeholder,
                       FLAGS.hidden1,
                       FLAGS.hidden2)

    # Add to the Graph the Ops for loss calculation.
    loss_op = loss(logits, labels_placeholder)

    # Add to the Graph the Ops that calculate and apply gradients.
    train_op = training(loss_op, FLAGS.learning_rate)

    # Add the Op to compare the logits to the labels during evaluation.
    eval_correct = evaluation(logits, labels_placeholder)

    # Build the summary Tensor based on the TF collection of Summaries.
    summary = tf.summary.merge_all()

    # Add the variable initializer Op.
    init = tf.global_variables_initializer()

    # Create a saver for writing training checkpoints.
    saver = tf.train.Saver()

    # Create a session for running Ops on the Graph.
    sess = tf.Session()

    # Instantiate a SummaryWriter to output summaries and the Graph.
    summary_writer = tf.summary.FileWriter(FLAGS.log_dir, sess.graph)

    # And then after everything is built:

    # Run the Op to initialize the variables.
    sess.run(init)
    seeded = np.random.RandomState(4)
    for v in tf.trainable_variables():
      sess.run(v.assign(seeded.normal(0, 0.1, v.shape.as_list()).astype(np.float32)))

    losses = []
    evals = []
    # Start the training loop.
    for step in range(FLAGS.max_steps):
      start_time = time.time()

      # Fill a feed dictionary with the actual set of images and labels
      # for this particular training step.
      feed_dict = fill_feed_dict(data_sets.train,
                                 images_placeholder,
                                 labels_placeholder)

      # Run one step of the model.  The return values are the activations
      # from the `train_op` (which is discarded) and the `loss` Op.  To
      # inspect the values of your Ops or variables, you may include them
      # in the list passed to sess.run() and the value tensors will be
      # returned in the tuple from the call.
      _, loss_value = sess.run([train_op, loss_op],
                               feed_dict=feed_dict)

      duration = time.time() - start_time

      # Write the summaries and print an overview fairly often.
      if step % 10 == 0:
        # Print status to stdout.
        print('Step %d: loss = %.2f (%.3f sec)' % (step, loss_value, duration))
        losses.append(float(loss_value))
        # Update the events file.
        summary_str = sess.run(summary, feed_dict=feed_dict)
        summary_writer.add_summary(summary_str, step)
        summary_writer.flush()

      # Save a checkpoint and evaluate the model periodically.
      if (step + 1) % 30 == 0 or (step + 1) == FLAGS.max_steps:
        checkpoint_file = os.path.join(FLAGS.log_dir, 'model.ckpt')
        saver.save(sess, checkpoint_file, global_step=step)
        # Evaluate against the training set.
        print('Training Data Eval:')
        evals.append(int(do_eval(sess, eval_correct, images_placeholder, labels_placeholder,
                                 data_sets.train)))
        # Evaluate against the validation set.
        print('Validation Data Eval:')
        evals.append(int(do_eval(sess, eval_correct, images_placeholder, labels_placeholder,
                                 data_sets.validation)))
        # Evaluate against the test set.
        print('Test Data Eval:')
        evals.append(int(do_eval(sess, eval_correct, images_placeholder, labels_placeholder,
                                 data_sets.test)))
    REPORT.update(losses=losses, evals=evals, loss_name=loss_op.name,
                  logits=[logits.name, logits.shape.as_list()],
                  eval_correct=[eval_correct.name, eval_correct.dtype.name],
                  variables=[v.op.name for v in tf.global_variables()],
                  checkpoints=sorted(f for f in os.listdir(FLAGS.log_dir) if 'ckpt' in f))


def main(_):
  if tf.gfile.Exists(FLAGS.log_dir):
    tf.gfile.DeleteRecursively(FLAGS.log_dir)
  tf.gfile.MakeDirs(FLAGS.log_dir)
  run_training()


parser = argparse.ArgumentParser()
parser.add_argument('--learning_rate', type=float, default=0.1,
                    help='Initial learning rate.')
parser.add_argument('--max_steps', type=int, default=60,
                    help='Number of steps to run trainer.')
parser.add_argument('--hidden1', type=int, default=16,
                    help='Number of units in hidden layer 1.')
parser.add_argument('--hidden2', type=int, default=8,
                    help='Number of units in hidden layer 2.')
parser.add_argument('--batch_size', type=int, default=20,
                    help='Batch size.  Must divide evenly into the dataset sizes.')
parser.add_argument('--input_data_dir', type=str, default='input_data',
                    help='Directory to put the input data.')
parser.add_argument('--log_dir', type=str, default='logs/fully_connected_feed',
                    help='Directory to put the log data.')
parser.add_argument('--fake_data', default=False, help='If true, uses fake data '
                    'for unit testing.', action='store_true')
results = REPORT  # filled in by run_training (tf.app.run exits)

if __name__ == '__main__':
  FLAGS, unparsed = parser.parse_known_args([])
  tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
