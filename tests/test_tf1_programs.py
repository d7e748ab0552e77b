"""TF1 course programs, trimmed, that must run with only ``import minitf as tf``.

Each test is the shape of a 2016-2019 tutorial program that once failed on
minitf (the compatibility sweep of issue 2), with expectations computed by
NumPy or by hand.
"""

import numpy as np
import pytest

import minitf as tf


def test_hello_world_strings_are_bytes(sess):
    hello = tf.constant("Hello, TensorFlow!")
    assert sess.run(hello) == b"Hello, TensorFlow!"
    assert sess.run(hello).decode() == "Hello, TensorFlow!"
    words = tf.placeholder(tf.string, [None])
    np.testing.assert_array_equal(sess.run(words, {words: ["a", "é"]}),
                                  np.array([b"a", "é".encode("utf-8")], dtype=object))
    assert repr(tf.placeholder("float")) == 'Tensor("Placeholder_1:0", dtype=float32)'


def test_tf_print_passes_through_and_prints(sess, capfd):
    a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    b = tf.Print(a, [a, tf.shape(a)], message="a is: ")
    np.testing.assert_array_equal(sess.run(b + 1), [[2.0, 3.0], [4.0, 5.0]])
    # TF1 prints 3 entries per tensor by default, with "..." where it cut.
    assert capfd.readouterr().err == "a is: [[1 2][3...]...][2 2]\n"
    once = tf.Print(a, [tf.reduce_sum(a)], message="sum=", first_n=1, summarize=-1)
    sess.run(once)
    sess.run(once)
    assert capfd.readouterr().err == "sum=[10]\n"
    grad, = tf.gradients(tf.reduce_sum(tf.Print(a, [a]) * 3.0), a)
    np.testing.assert_array_equal(sess.run(grad), np.full((2, 2), 3.0))


def test_asserts_as_control_dependencies(sess):
    a = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    with tf.control_dependencies([tf.assert_equal(tf.shape(a)[0], 2), tf.assert_positive(a)]):
        c = tf.identity(a)
    np.testing.assert_array_equal(sess.run(c), [[1.0, 2.0], [3.0, 4.0]])
    # Known operands are checked while the graph is built, as in TF1.
    with pytest.raises(tf.errors.InvalidArgumentError, match="not equal"):
        tf.assert_equal(tf.constant(1), tf.constant(2), message="not equal")
    x = tf.placeholder(tf.float32, [None])
    check = tf.assert_non_negative(x, message="x >= 0")
    assert check.type == "Assert"
    assert check.name == "assert_non_negative/assert_less_equal/Assert/Assert"
    sess.run(check, {x: [0.0, 1.0]})
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"assertion failed: \[x >= 0\]"):
        sess.run(check, {x: [1.0, -2.0]})
    with pytest.raises(ValueError, match="must have rank 2"):
        tf.assert_rank(x, 2)


def test_logging_and_flags(caplog):
    tf.logging.set_verbosity(tf.logging.INFO)
    with caplog.at_level(tf.logging.INFO, logger="tensorflow"):
        tf.logging.info("step %d", 3)
        tf.logging.debug("hidden")
    assert [r.getMessage() for r in caplog.records] == ["step 3"]
    flags = tf.flags.FlagValues()
    tf.app.flags.DEFINE_integer("batch_size", 32, "batch size", flag_values=flags)
    tf.app.flags.DEFINE_float("lr", 0.1, "learning rate", flag_values=flags)
    tf.app.flags.DEFINE_boolean("fast", False, "go fast", flag_values=flags)
    tf.app.flags.DEFINE_string("name", "x", "a name", flag_values=flags)
    rest = flags(["prog", "--batch_size=8", "--fast", "extra"])
    assert (flags.batch_size, flags.lr, flags.fast, flags.name, rest) == (
        8, 0.1, True, "x", ["prog", "extra"])
    assert flags(["prog", "--nofast"]) == ["prog"] and flags.fast is False
    assert flags(["prog", "--fast=true"]) == ["prog"] and flags.fast is True


def test_mnist_eval_with_in_top_k_and_top_k(sess):
    rng = np.random.RandomState(0)
    logits_value = rng.randn(6, 4).astype(np.float32)
    labels_value = np.array([0, 1, 2, 3, 0, 1])
    logits = tf.constant(logits_value)
    correct = tf.nn.in_top_k(logits, labels_value, 2)
    values, indices = tf.nn.top_k(logits, k=2)
    assert correct.dtype == tf.bool and values.shape.as_list() == [6, 2]
    order = np.argsort(-logits_value, axis=1)[:, :2]
    np.testing.assert_array_equal(sess.run(indices), order)
    np.testing.assert_array_equal(sess.run(values), np.take_along_axis(logits_value, order, 1))
    np.testing.assert_array_equal(
        sess.run(correct), [label in row for label, row in zip(labels_value, order)])
    precision = tf.reduce_sum(tf.cast(correct, tf.int32))
    assert sess.run(precision) == sum(label in row for label, row in zip(labels_value, order))
    # Ties are all in the top k.
    assert sess.run(tf.nn.in_top_k([[1.0, 1.0, 0.0]], [1], 1)).tolist() == [True]


def test_top_k_gradient():
    x = tf.placeholder(tf.float64, [2, 4])
    values, _ = tf.nn.top_k(x, k=2)
    x_value = np.array([[0.3, -1.0, 2.0, 0.7], [1.5, 0.1, -0.4, 0.9]])
    with tf.Session():
        error = tf.test.compute_gradient_error(x, [2, 4], values, [2, 2], x_init_value=x_value)
    assert error < 1e-6


def test_embeddings_and_count_nonzero(sess):
    table = np.arange(12.0).reshape(4, 3)
    embeddings = tf.Variable(table, name="embeddings")
    ids = tf.placeholder(tf.int32, [None, 2])
    looked_up = tf.nn.embedding_lookup(embeddings, ids)
    assert looked_up.name == "embedding_lookup/Identity:0"  # TF 1.15+ ends with an Identity
    assert looked_up.shape.as_list() == [None, 2, 3]
    grad, = tf.gradients(tf.reduce_sum(looked_up), embeddings)
    sess.run(tf.global_variables_initializer())
    np.testing.assert_array_equal(sess.run(looked_up, {ids: [[3, 0]]}), table[[[3, 0]]])
    dense = sess.run(tf.convert_to_tensor(grad), {ids: [[3, 0], [3, 3]]})
    np.testing.assert_array_equal(dense[:, 0], [1, 0, 0, 3])
    x = tf.constant([[0, 1, 2], [0, 0, 5]])
    assert sess.run(tf.count_nonzero(x)) == 3
    np.testing.assert_array_equal(sess.run(tf.count_nonzero(x, axis=1)), [2, 1])
    assert tf.count_nonzero(x).dtype == tf.int64


def test_tensorboard_course_program(tmp_path):
    """Linear regression logging loss and weights every step, as the TensorBoard tutorials."""
    rng = np.random.RandomState(1)
    x_data = rng.rand(20, 3).astype(np.float32)
    y_data = x_data @ np.array([[1.0], [2.0], [3.0]], np.float32)
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    with tf.name_scope("model"):
        w = tf.Variable(tf.zeros([3, 1]), name="w")
        prediction = tf.matmul(x, w)
    loss = tf.reduce_mean(tf.square(prediction - y))
    tf.summary.scalar("loss", loss)
    tf.summary.histogram("weights", w)
    merged = tf.summary.merge_all()
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    w_value = np.zeros((3, 1), np.float32)
    expected_losses = []
    with tf.Session() as sess:
        writer = tf.summary.FileWriter(str(tmp_path), sess.graph)
        sess.run(tf.global_variables_initializer())
        for step in range(3):
            summary, _ = sess.run([merged, train], {x: x_data, y: y_data})
            writer.add_summary(summary, step)
            error = x_data @ w_value - y_data
            expected_losses.append(np.mean(error ** 2))
            w_value = w_value - 0.1 * 2 * x_data.T @ error / len(x_data)
        writer.close()
    (path,) = tmp_path.glob("events.out.tfevents.*")
    events = [e for e in tf.train.summary_iterator(str(path)) if e.HasField("summary")]
    losses = [{v.tag: v for v in e.summary.value}["loss"].simple_value for e in events]
    np.testing.assert_allclose(losses, expected_losses, rtol=1e-5)
    assert [e.step for e in events] == [0, 1, 2]


def test_tf_losses_regression_and_classification(sess):
    """tf.losses with a regularized variable, as in the TF1 "Estimators/losses" tutorials."""
    rng = np.random.RandomState(4)
    x_value = rng.randn(16, 4).astype(np.float32)
    y_value = rng.randn(16, 1).astype(np.float32)
    labels = rng.randint(0, 3, 16)
    onehot = np.eye(3, dtype=np.float32)[labels]
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 1])
    w = tf.get_variable("w", [4, 1], initializer=tf.constant_initializer(0.1),
                        regularizer=lambda t: 0.01 * tf.nn.l2_loss(t))
    w2 = tf.get_variable("w2", [4, 3], initializer=tf.constant_initializer(0.2))
    pred, logits = tf.matmul(x, w), tf.matmul(x, w2)
    mse = tf.losses.mean_squared_error(labels=y, predictions=pred)
    weighted = tf.losses.mean_squared_error(y, pred, weights=2.0)
    mae = tf.losses.absolute_difference(y, pred)
    huber = tf.losses.huber_loss(y, pred)
    xent = tf.losses.softmax_cross_entropy(onehot_labels=onehot, logits=logits)
    sparse = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    sig = tf.losses.sigmoid_cross_entropy(multi_class_labels=onehot, logits=logits)
    per_row = tf.losses.mean_squared_error(y, pred, weights=np.r_[np.ones(8), np.zeros(8)][:, None])
    assert mse.name == "mean_squared_error/value:0"
    assert weighted.op.name == "mean_squared_error_1/value"
    assert len(tf.losses.get_losses()) == 8
    reg = tf.losses.get_regularization_loss()
    total = tf.losses.get_total_loss()
    sess.run(tf.global_variables_initializer())
    results = sess.run([mse, weighted, mae, huber, xent, sparse, sig, per_row, reg, total],
                       {x: x_value, y: y_value})
    p = x_value @ np.full((4, 1), 0.1)
    z = x_value @ np.full((4, 3), 0.2)
    log_softmax = z - np.log(np.exp(z).sum(1, keepdims=True))
    error = np.abs(p - y_value)
    expected = [
        np.mean((p - y_value) ** 2), 2 * np.mean((p - y_value) ** 2), np.mean(error),
        np.mean(np.where(error <= 1, 0.5 * error ** 2, error - 0.5)),
        -np.mean((onehot * log_softmax).sum(1)), -np.mean(log_softmax[np.arange(16), labels]),
        np.mean(np.maximum(z, 0) - z * onehot + np.log1p(np.exp(-np.abs(z)))),
        np.mean((p[:8] - y_value[:8]) ** 2), 0.01 * 0.5 * 4 * 0.1 ** 2]
    expected.append(sum(expected[:8]) + expected[8])
    np.testing.assert_allclose(results, expected, rtol=1e-5)


def test_running_sums_ranges_and_identity(sess):
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32)
    np.testing.assert_array_equal(sess.run(tf.cumsum(a, axis=1)), np.cumsum(a, 1))
    np.testing.assert_array_equal(sess.run(tf.cumprod(a, axis=0)), np.cumprod(a, 0))
    np.testing.assert_array_equal(sess.run(tf.cumsum([1, 2, 3], exclusive=True, reverse=True)),
                                  [5, 3, 0])
    np.testing.assert_array_equal(sess.run(tf.cumprod([2, 3, 4], exclusive=True)), [1, 2, 6])
    line = tf.linspace(0.0, 1.0, 5)
    assert line.shape.as_list() == [5] and line.dtype == tf.float32
    np.testing.assert_allclose(sess.run(line), np.linspace(0, 1, 5))
    np.testing.assert_array_equal(sess.run(tf.eye(2, 3)), np.eye(2, 3))
    np.testing.assert_array_equal(sess.run(tf.eye(2, batch_shape=[3])),
                                  np.tile(np.eye(2), (3, 1, 1)))
    values, indices = tf.nn.top_k(a, 2)
    assert tf.nn.top_k(a, 2).indices.name.startswith("TopKV2")
    np.testing.assert_array_equal(sess.run(indices), [[2, 1], [2, 1]])


def test_v2_era_spellings_of_the_v1_api(sess):
    tf.disable_eager_execution()
    tf.disable_v2_behavior()
    assert tf.executing_eagerly() is False and tf.VERSION == tf.__version__
    with pytest.raises(NotImplementedError, match="no eager execution"):
        tf.enable_eager_execution()
    assert tf.math.log is tf.log and tf.math.reduce_sum is tf.reduce_sum
    assert tf.random.normal is tf.random_normal and tf.random.set_random_seed is tf.set_random_seed
    assert sess.run(tf.shape(tf.random.uniform([2, 3]))).tolist() == [2, 3]


def test_mnist_with_summaries_program(tmp_path):
    """The shape of TF's tutorials/mnist/mnist_with_summaries.py: gfile-managed log dirs,
    ``variable_summaries`` under name scopes, separate train and test writers."""
    log_dir = str(tmp_path / "logs")
    if tf.gfile.Exists(log_dir):
        tf.gfile.DeleteRecursively(log_dir)
    tf.gfile.MakeDirs(log_dir)

    def variable_summaries(var):
        with tf.name_scope("summaries"):
            mean = tf.reduce_mean(var)
            tf.summary.scalar("mean", mean)
            with tf.name_scope("stddev"):
                stddev = tf.sqrt(tf.reduce_mean(tf.square(var - mean)))
            tf.summary.scalar("stddev", stddev)
            tf.summary.scalar("max", tf.reduce_max(var))
            tf.summary.scalar("min", tf.reduce_min(var))
            tf.summary.histogram("histogram", var)

    weights_value = np.arange(12, dtype=np.float32).reshape(3, 4) / 10
    with tf.name_scope("layer1"):
        with tf.name_scope("weights"):
            weights = tf.Variable(weights_value)
            variable_summaries(weights)
    merged = tf.summary.merge_all()
    with tf.Session() as sess:
        train_writer = tf.summary.FileWriter(log_dir + "/train", sess.graph)
        test_writer = tf.summary.FileWriter(log_dir + "/test")
        sess.run(tf.global_variables_initializer())
        train_writer.add_summary(sess.run(merged), 0)
        test_writer.add_summary(sess.run(merged), 10)
        train_writer.close()
        test_writer.close()
    assert sorted(tf.gfile.ListDirectory(log_dir)) == ["test", "train"]
    (path,) = tf.gfile.Glob(log_dir + "/test/events.out.tfevents.*")
    (event,) = [e for e in tf.train.summary_iterator(path) if e.HasField("summary")]
    values = {v.tag: v for v in event.summary.value}
    # As in TF, names are unique case-insensitively: the scope "max" meets the op "Max".
    prefix = "layer1/weights/summaries/"
    tags = ("mean_1", "stddev_1", "max_1", "min_1")
    assert event.step == 10 and sorted(values) == sorted(
        prefix + tag for tag in tags + ("histogram",))
    np.testing.assert_allclose(
        [values[prefix + t].simple_value for t in tags],
        [weights_value.mean(), weights_value.std(), weights_value.max(), weights_value.min()],
        rtol=1e-6)
    assert values[prefix + "histogram"].histo.num == 12


def test_conv2d_transpose_is_the_adjoint_of_conv2d(sess):
    """<conv2d(x, f), y> == <x, conv2d_transpose(y, f)>, the decoder's upsampling."""
    rng = np.random.RandomState(6)
    x = rng.rand(2, 8, 8, 5)
    f = rng.rand(3, 3, 5, 3)
    y = rng.rand(2, 4, 4, 3)
    up = tf.nn.conv2d_transpose(tf.constant(y), tf.constant(f), output_shape=[2, 8, 8, 5],
                                strides=[1, 2, 2, 1], padding="SAME")
    assert up.op.name == "conv2d_transpose" and up.shape.as_list() == [2, 8, 8, 5]
    down = tf.nn.conv2d(tf.constant(x), tf.constant(f), strides=[1, 2, 2, 1], padding="SAME")
    up_value, down_value = sess.run([up, down])
    np.testing.assert_allclose(np.sum(down_value * y), np.sum(x * up_value), rtol=1e-10)
    with pytest.raises(ValueError, match="channels"):
        tf.nn.conv2d_transpose(tf.constant(y), tf.constant(f[:, :, :, :2]), [2, 8, 8, 5],
                               [1, 2, 2, 1])
