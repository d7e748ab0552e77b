"""TF official tutorials (TF 1.0-1.3): ``examples/how_tos/reading_data/convert_to_records.py``
and ``fully_connected_reader.py``, with the ``mnist.py`` model they import inlined.

The queue-based reader pipeline: ``tf.train.string_input_producer`` with
``num_epochs`` (a local variable), ``tf.TFRecordReader``,
``tf.parse_single_example``, ``tf.decode_raw``, ``tf.train.shuffle_batch``
with two threads, a ``Coordinator`` and the ``OutOfRangeError`` loop.
Shortened: 200 synthetic 28x28 "digits" instead of MNIST, 2 epochs, batch 20,
``min_after_dequeue`` 50 instead of 1000.  The graph-level seed is fixed.
"""

import math
import os.path
import time

import numpy as np

import minitf as tf

# ---- mnist.py -------------------------------------------------------------------------
NUM_CLASSES = 10
IMAGE_SIZE = 28
IMAGE_PIXELS = IMAGE_SIZE * IMAGE_SIZE


def inference(images, hidden1_units, hidden2_units):
  # Hidden 1
  with tf.name_scope('hidden1'):
    weights = tf.Variable(
        tf.truncated_normal([IMAGE_PIXELS, hidden1_units],
                            stddev=1.0 / math.sqrt(float(IMAGE_PIXELS))),
        name='weights')
    biases = tf.Variable(tf.zeros([hidden1_units]),
                         name='biases')
    hidden1 = tf.nn.relu(tf.matmul(images, weights) + biases)
  # Hidden 2
  with tf.name_scope('hidden2'):
    weights = tf.Variable(
        tf.truncated_normal([hidden1_units, hidden2_units],
                            stddev=1.0 / math.sqrt(float(hidden1_units))),
        name='weights')
    biases = tf.Variable(tf.zeros([hidden2_units]),
                         name='biases')
    hidden2 = tf.nn.relu(tf.matmul(hidden1, weights) + biases)
  # Linear
  with tf.name_scope('softmax_linear'):
    weights = tf.Variable(
        tf.truncated_normal([hidden2_units, NUM_CLASSES],
                            stddev=1.0 / math.sqrt(float(hidden2_units))),
        name='weights')
    biases = tf.Variable(tf.zeros([NUM_CLASSES]),
                         name='biases')
    logits = tf.matmul(hidden2, weights) + biases
  return logits


def loss(logits, labels):
  labels = tf.to_int64(labels)
  cross_entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(
      labels=labels, logits=logits, name='xentropy')
  return tf.reduce_mean(cross_entropy, name='xentropy_mean')


def training(loss, learning_rate):
  tf.summary.scalar('loss', loss)
  optimizer = tf.train.GradientDescentOptimizer(learning_rate)
  global_step = tf.Variable(0, name='global_step', trainable=False)
  train_op = optimizer.minimize(loss, global_step=global_step)
  return train_op


# ---- convert_to_records.py ------------------------------------------------------------
def _int64_feature(value):
  return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))


def _bytes_feature(value):
  return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def convert_to(images, labels, name):
  num_examples = labels.shape[0]
  if images.shape[0] != num_examples:
    raise ValueError('Images size %d does not match label size %d.' %
                     (images.shape[0], num_examples))
  rows = images.shape[1]
  cols = images.shape[2]
  depth = images.shape[3]

  filename = os.path.join(FLAGS.train_dir, name + '.tfrecords')
  print('Writing', filename)
  writer = tf.python_io.TFRecordWriter(filename)
  for index in range(num_examples):
    image_raw = images[index].tobytes()
    example = tf.train.Example(features=tf.train.Features(feature={
        'height': _int64_feature(rows),
        'width': _int64_feature(cols),
        'depth': _int64_feature(depth),
        'label': _int64_feature(int(labels[index])),
        'image_raw': _bytes_feature(image_raw)}))
    writer.write(example.SerializeToString())
  writer.close()


# ---- fully_connected_reader.py --------------------------------------------------------
class FLAGS:
  learning_rate = 0.1
  num_epochs = 2
  hidden1 = 32
  hidden2 = 16
  batch_size = 20
  train_dir = 'data'


TRAIN_FILE = 'train.tfrecords'


def read_and_decode(filename_queue):
  reader = tf.TFRecordReader()
  _, serialized_example = reader.read(filename_queue)
  features = tf.parse_single_example(
      serialized_example,
      # Defaults are not specified since both keys are required.
      features={
          'image_raw': tf.FixedLenFeature([], tf.string),
          'label': tf.FixedLenFeature([], tf.int64),
      })

  # Convert from a scalar string tensor (whose single string has
  # length mnist.IMAGE_PIXELS) to a uint8 tensor with shape
  # [mnist.IMAGE_PIXELS].
  image = tf.decode_raw(features['image_raw'], tf.uint8)
  image.set_shape([IMAGE_PIXELS])

  # Convert from [0, 255] -> [-0.5, 0.5] floats.
  image = tf.cast(image, tf.float32) * (1. / 255) - 0.5

  # Convert label from a scalar uint8 tensor to an int32 scalar.
  label = tf.cast(features['label'], tf.int32)

  return image, label


def inputs(train, batch_size, num_epochs):
  if not num_epochs: num_epochs = None
  filename = os.path.join(FLAGS.train_dir, TRAIN_FILE)

  with tf.name_scope('input'):
    filename_queue = tf.train.string_input_producer(
        [filename], num_epochs=num_epochs)

    # Even when reading in multiple threads, share the filename
    # queue.
    image, label = read_and_decode(filename_queue)

    # Shuffle the examples and collect them into batch_size batches.
    # (Internally uses a RandomShuffleQueue.)
    # We run this in two threads to avoid being a bottleneck.
    images, sparse_labels = tf.train.shuffle_batch(
        [image, label], batch_size=batch_size, num_threads=2,
        capacity=50 + 3 * batch_size,
        # Ensures a minimum amount of shuffling of examples.
        min_after_dequeue=50)

    return images, sparse_labels


def run_training():
  """Train MNIST for a number of steps."""
  # Tell TensorFlow that the model will be built into the default Graph.
  with tf.Graph().as_default() as graph:
    tf.set_random_seed(1)
    # Input images and labels.
    images, labels = inputs(train=True, batch_size=FLAGS.batch_size,
                            num_epochs=FLAGS.num_epochs)

    # Build a Graph that computes predictions from the inference model.
    logits = inference(images, FLAGS.hidden1, FLAGS.hidden2)

    # Add to the Graph the loss calculation.
    loss_op = loss(logits, labels)

    # Add to the Graph operations that train the model.
    train_op = training(loss_op, FLAGS.learning_rate)

    # The op for initializing the variables.
    init_op = tf.group(tf.global_variables_initializer(),
                       tf.local_variables_initializer())

    # Create a session for running operations in the Graph.
    sess = tf.Session()

    # Initialize the variables (the trained variables and the
    # epoch counter).
    sess.run(init_op)

    # Start input enqueue threads.
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)

    losses = []
    try:
      step = 0
      while not coord.should_stop():
        start_time = time.time()

        # Run one step of the model.  The return values are
        # the activations from the returned ops plus the loss.
        _, loss_value = sess.run([train_op, loss_op])

        duration = time.time() - start_time
        losses.append(loss_value)

        # Print an overview fairly often.
        if step % 5 == 0:
          print('Step %d: loss = %.2f (%.3f sec)' % (step, loss_value,
                                                     duration))
        step += 1
    except tf.errors.OutOfRangeError:
      print('Done training for %d epochs, %d steps.' % (FLAGS.num_epochs, step))
    finally:
      # When done, ask threads to stop.
      coord.request_stop()

    # Wait for threads to finish.
    coord.join(threads)
    sess.close()
    local_names = [v.op.name for v in tf.local_variables()]
    queue_runners = len(graph.get_collection(tf.GraphKeys.QUEUE_RUNNERS))
  return step, losses, images, labels, local_names, queue_runners


def synthetic_digits(n, rng):
  labels = rng.randint(0, NUM_CLASSES, n)
  images = rng.randint(0, 60, size=(n, IMAGE_SIZE, IMAGE_SIZE, 1))
  for i, label in enumerate(labels):
    images[i, 2 * label:2 * label + 6, 4:24, 0] = 250
  return images.astype(np.uint8), labels


if not os.path.exists(FLAGS.train_dir):
  os.makedirs(FLAGS.train_dir)
train_images, train_labels = synthetic_digits(200, np.random.RandomState(0))
convert_to(train_images, train_labels, 'train')
steps, losses, images, labels, local_names, queue_runners = run_training()

# What the sweep compares with TensorFlow 2.21 (tests/test_tf1_programs_sweep.py).
results = {
    "steps": steps,
    "images": [images.shape.as_list(), images.dtype.name, images.name],
    "labels": [labels.shape.as_list(), labels.dtype.name, labels.name],
    "local_variables": local_names,
    "queue_runners": queue_runners,
    "loss_decreased": bool(np.mean(losses[-5:]) < np.mean(losses[:5])),
}
