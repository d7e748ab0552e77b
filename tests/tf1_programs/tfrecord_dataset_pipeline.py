"""TF 1.x guide "Importing Data" (``programmers_guide/datasets.md``): consuming
TFRecord data with ``tf.data.TFRecordDataset`` and a ``_parse_function`` of
``tf.parse_single_example``; the records are written as in TF's
``examples/how_tos/reading_data/convert_to_records.py``.

Each record holds an image (``image_raw`` bytes, decoded with ``tf.decode_raw``),
its label, a variable-length list of tag ids (``VarLenFeature``) and a float
score.  Two pipelines read them: one densifies the tags inside ``map`` with
``tf.sparse_tensor_to_dense`` and pads batches, the other returns the
``SparseTensor`` from ``map`` and batches it.  Shortened: 10 tiny 4x4 images
instead of MNIST's 55000.
"""

import os

import numpy as np

import minitf as tf


def _int64_feature(value):
  return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))


def _int64_list_feature(values):
  return tf.train.Feature(int64_list=tf.train.Int64List(value=values))


def _bytes_feature(value):
  return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))


def _float_feature(value):
  return tf.train.Feature(float_list=tf.train.FloatList(value=[value]))


def convert_to(images, labels, name, directory='data'):
  """Converts a dataset to tfrecords."""
  num_examples = images.shape[0]
  rows = images.shape[1]
  cols = images.shape[2]
  depth = images.shape[3]

  filename = os.path.join(directory, name + '.tfrecords')
  print('Writing', filename)
  with tf.python_io.TFRecordWriter(filename) as writer:
    for index in range(num_examples):
      image_raw = images[index].tostring() if hasattr(images[index], 'tostring') else images[index].tobytes()
      example = tf.train.Example(
          features=tf.train.Features(
              feature={
                  'height': _int64_feature(rows),
                  'width': _int64_feature(cols),
                  'depth': _int64_feature(depth),
                  'label': _int64_feature(int(labels[index])),
                  'tags': _int64_list_feature(list(range(index % 4))),
                  'score': _float_feature(index / 10.0),
                  'image_raw': _bytes_feature(image_raw)
              }))
      writer.write(example.SerializeToString())
  return filename


rng = np.random.RandomState(0)
images = rng.randint(0, 256, size=(10, 4, 4, 1)).astype(np.uint8)
labels = np.arange(10) % 3
if not os.path.exists('data'):
  os.makedirs('data')
filename = convert_to(images, labels, 'train')

# The records read back as Example messages.
record_iterator = tf.python_io.tf_record_iterator(path=filename)
first = tf.train.Example()
first.ParseFromString(next(record_iterator))
height = int(first.features.feature['height'].int64_list.value[0])
restored = np.frombuffer(first.features.feature['image_raw'].bytes_list.value[0], dtype=np.uint8)
num_records = 1 + sum(1 for _ in record_iterator)


# Transforms a scalar string `example_proto` into a pair of a scalar string and
# a scalar integer, representing an image and its label, respectively.
def _parse_function(example_proto):
  features = {"image_raw": tf.FixedLenFeature((), tf.string, default_value=""),
              "label": tf.FixedLenFeature((), tf.int64, default_value=0),
              "score": tf.FixedLenFeature([], tf.float32),
              "tags": tf.VarLenFeature(tf.int64)}
  parsed_features = tf.parse_single_example(example_proto, features)
  image = tf.decode_raw(parsed_features["image_raw"], tf.uint8)
  image = tf.reshape(image, [4, 4, 1])
  image = tf.cast(image, tf.float32) * (1. / 255) - 0.5
  tags = tf.sparse_tensor_to_dense(parsed_features["tags"])
  return image, tags, parsed_features["score"], parsed_features["label"]


filenames = [filename]
dataset = tf.data.TFRecordDataset(filenames)
dataset = dataset.map(_parse_function)
dataset = dataset.padded_batch(4, padded_shapes=([4, 4, 1], [None], [], []))
iterator = dataset.make_one_shot_iterator()
next_image, next_tags, next_score, next_label = iterator.get_next()


# The second pipeline keeps the tags sparse through map and batch.
def _parse_sparse(example_proto):
  parsed = tf.parse_single_example(example_proto, {"tags": tf.VarLenFeature(tf.int64),
                                                   "label": tf.FixedLenFeature([], tf.int64)})
  return parsed["tags"], parsed["label"]


sparse_dataset = tf.data.TFRecordDataset(filenames).map(_parse_sparse).batch(5)
sparse_iterator = sparse_dataset.make_initializable_iterator()
sparse_tags, sparse_label = sparse_iterator.get_next()
dense_tags = tf.sparse_tensor_to_dense(sparse_tags, default_value=-1)

batches = []
with tf.Session() as sess:
  try:
    while True:
      image_v, tags_v, score_v, label_v = sess.run(
          [next_image, next_tags, next_score, next_label])
      batches.append((image_v, tags_v, score_v, label_v))
  except tf.errors.OutOfRangeError:
    print('Done: %d batches' % len(batches))
  sess.run(sparse_iterator.initializer)
  sparse_value, dense_value, sparse_labels = sess.run([sparse_tags, dense_tags, sparse_label])

# What the sweep compares with TensorFlow 2.21 (tests/test_tf1_programs_sweep.py).
results = {
    "num_records": num_records,
    "height": height,
    "restored_ok": bool((restored.reshape(4, 4, 1) == images[0]).all()),
    "output_types": [t.name for t in dataset.output_types],
    "output_shapes": [s.as_list() for s in dataset.output_shapes],
    "batch_sizes": [len(b[3]) for b in batches],
    "tags": [b[1].tolist() for b in batches],
    "scores": [b[2].tolist() for b in batches],
    "labels": [b[3].tolist() for b in batches],
    "image_sum": float(sum(b[0].sum() for b in batches)),
    "image_dtype": batches[0][0].dtype.name,
    "sparse_class": type(sparse_tags).__name__,
    "sparse_output_classes": [c.__name__ for c in sparse_dataset.output_classes],
    "sparse_output_shapes": [s.as_list() for s in sparse_dataset.output_shapes],
    "sparse_static_shape": sparse_tags.shape.as_list(),
    "sparse_shapes": [sparse_tags.indices.shape.as_list(), sparse_tags.values.shape.as_list(),
                      sparse_tags.dense_shape.shape.as_list()],
    "sparse_value": [sparse_value.indices.tolist(), sparse_value.values.tolist(),
                     sparse_value.dense_shape.tolist()],
    "sparse_dense": dense_value.tolist(),
    "sparse_labels": sparse_labels.tolist(),
}
