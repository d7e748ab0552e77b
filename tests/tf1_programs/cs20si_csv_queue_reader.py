"""CS20si (Stanford, 2017): ``examples/05_csv_reader.py``: the heart-disease CSV read
with ``tf.train.string_input_producer``, ``tf.TextLineReader(skip_header_lines=1)``,
``tf.decode_csv`` and ``tf.train.shuffle_batch``, driven by a ``Coordinator``.

Shortened: ``heart.csv`` is written by the program (30 synthetic rows, same
columns: 9 features, ``famhist`` a "Present"/"Absent" string, then the
label).  A second pipeline reads the same file in order with
``tf.train.batch`` and one thread, so its batches can be compared exactly.
"""

import numpy as np

import minitf as tf

DATA_PATH = 'heart.csv'
BATCH_SIZE = 2
N_FEATURES = 9


def write_heart_csv(path, rows=30):
    rng = np.random.RandomState(0)
    with open(path, 'w') as f:
        f.write('sbp,tobacco,ldl,adiposity,famhist,typea,obesity,alcohol,age,chd\n')
        for i in range(rows):
            famhist = 'Present' if rng.rand() < 0.5 else 'Absent'
            values = [160 + i, round(rng.rand() * 12, 2), round(rng.rand() * 7, 2),
                      round(rng.rand() * 40, 2), famhist, 49 + i % 7, 25.3, 97.2, 52 + i]
            f.write(','.join(str(v) for v in values) + ',%d\n' % (i % 2))


def batch_generator(filenames):
    """ filenames is the list of files you want to read from.
    In this case, it contains only heart.csv
    """
    filename_queue = tf.train.string_input_producer(filenames)
    reader = tf.TextLineReader(skip_header_lines=1)  # skip the first line in the file
    _, value = reader.read(filename_queue)

    # record_defaults are the default values in case some of our columns are empty
    # This is also to tell tensorflow the format of our data (the type of the decode result)
    # for this dataset, out of 9 feature columns,
    # 8 of them are floats (some are integers, but to make our features homogenous,
    # we consider them floats), and 1 is string (at position 5)
    # the last column corresponds to the lable is an integer

    record_defaults = [[1.0] for _ in range(N_FEATURES)]
    record_defaults[4] = ['']
    record_defaults.append([1])

    # read in the 10 rows of data
    content = tf.decode_csv(value, record_defaults=record_defaults)

    # convert the 5th column (present/absent) to the binary value 0 and 1
    content[4] = tf.cond(tf.equal(content[4], tf.constant('Present')),
                         lambda: tf.constant(1.0), lambda: tf.constant(0.0))

    # pack all 9 features into a tensor
    features = tf.stack(content[:N_FEATURES])

    # assign the last column to label
    label = content[-1]

    # minimum number elements in the queue after a dequeue, used to ensure
    # that the samples are sufficiently mixed
    # I think 10 times the BATCH_SIZE is sufficient
    min_after_dequeue = 10 * BATCH_SIZE

    # the maximum number of elements in the queue
    capacity = 20 * BATCH_SIZE

    # shuffle the data to generate BATCH_SIZE sample pairs
    data_batch, label_batch = tf.train.shuffle_batch([features, label], batch_size=BATCH_SIZE,
                                                     capacity=capacity,
                                                     min_after_dequeue=min_after_dequeue)

    return data_batch, label_batch, features, label


def generate_batches(data_batch, label_batch):
    batches = []
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(coord=coord)
        for _ in range(10):  # generate 10 batches
            features, labels = sess.run([data_batch, label_batch])
            print(features)
            batches.append((features, labels))
        coord.request_stop()
        coord.join(threads)
    return batches


def main():
    write_heart_csv(DATA_PATH)
    data_batch, label_batch, features, label = batch_generator([DATA_PATH])
    batches = generate_batches(data_batch, label_batch)

    # The same lines in file order: tf.train.batch with one thread.
    ordered_queue = tf.train.string_input_producer([DATA_PATH], shuffle=False, num_epochs=1)
    _, line = tf.TextLineReader(skip_header_lines=1).read(ordered_queue)
    row = tf.decode_csv(line, record_defaults=[[0.0]] * 4 + [['']] + [[0.0]] * 4 + [[0]])
    ordered = tf.train.batch([tf.stack(row[:4]), row[4], row[-1]], batch_size=4,
                             allow_smaller_final_batch=True)
    ordered_batches = []
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        try:
            while not coord.should_stop():
                ordered_batches.append(sess.run(ordered))
        except tf.errors.OutOfRangeError:
            pass
        finally:
            coord.request_stop()
        coord.join(threads)
    return batches, features, label, data_batch, ordered_batches


batches, features, label, data_batch, ordered_batches = main()

# What the sweep compares with TensorFlow 2.21 (tests/test_tf1_programs_sweep.py).
results = {
    "features": [features.shape.as_list(), features.dtype.name],
    "label": [label.shape.as_list(), label.dtype.name],
    "data_batch": [data_batch.shape.as_list(), data_batch.name],
    "batch_shapes": sorted({(b[0].shape, b[1].shape) for b in batches}),
    "famhist_binary": bool(all(set(np.unique(b[0][:, 4])) <= {0.0, 1.0} for b in batches)),
    "ordered_sizes": [len(b[2]) for b in ordered_batches],
    "ordered_first": [ordered_batches[0][0].tolist(), [s.decode() for s in ordered_batches[0][1]],
                      ordered_batches[0][2].tolist()],
    "ordered_labels": np.concatenate([b[2] for b in ordered_batches]).tolist(),
}
