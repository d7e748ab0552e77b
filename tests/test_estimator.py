"""tf.estimator: numpy_input_fn, feature columns, tf.metrics, Estimator and the canned models.

Expected values come from NumPy: gradient-descent trajectories written out
by hand, least-squares solutions, and metrics recomputed from the
predictions the model itself returns.
"""

import importlib.util
import os
import pathlib

import numpy as np
import pytest

import minitf as tf

ROOT = pathlib.Path(__file__).resolve().parents[1]
numpy_input_fn = tf.estimator.inputs.numpy_input_fn


def _batches(input_fn, limit=100):
    """Runs ``input_fn``'s tensors in a fresh graph until OutOfRangeError."""
    out = []
    with tf.Graph().as_default():
        tensors = input_fn()
        with tf.Session() as sess:
            for _ in range(limit):
                try:
                    out.append(sess.run(tensors))
                except tf.errors.OutOfRangeError:
                    break
    return out


# ---- numpy_input_fn --------------------------------------------------------------------------
def test_numpy_input_fn_requires_explicit_shuffle():
    x = {"a": np.arange(4.0)}
    with pytest.raises(ValueError, match="shuffle must be provided"):
        numpy_input_fn(x, np.arange(4))
    with pytest.raises(ValueError, match="shuffle must be provided"):
        numpy_input_fn(x, np.arange(4), shuffle=1)


def test_numpy_input_fn_batches_and_epochs_in_order():
    x = {"a": np.arange(10.0).reshape(5, 2), "b": np.arange(5)}
    y = np.arange(5) * 10
    batches = _batches(numpy_input_fn(x, y, batch_size=4, num_epochs=2, shuffle=False))
    assert [len(labels) for _, labels in batches] == [4, 4, 2]
    labels = np.concatenate([labels for _, labels in batches])
    np.testing.assert_array_equal(labels, np.concatenate([y, y]))
    features_a = np.concatenate([features["a"] for features, _ in batches])
    np.testing.assert_array_equal(features_a, np.concatenate([x["a"], x["a"]]))
    features_b = np.concatenate([features["b"] for features, _ in batches])
    np.testing.assert_array_equal(features_b * 10, labels)


def test_numpy_input_fn_repeats_forever_with_full_batches():
    input_fn = numpy_input_fn({"a": np.arange(3.0)}, np.arange(3), batch_size=2,
                              num_epochs=None, shuffle=False)
    with tf.Graph().as_default():
        features, labels = input_fn()
        assert labels.shape.as_list() == [2]  # known: every batch is full
        with tf.Session() as sess:
            seen = np.concatenate([sess.run(labels) for _ in range(6)])
    np.testing.assert_array_equal(seen, [0, 1, 2] * 4)


def test_numpy_input_fn_shuffles_each_epoch():
    n = 50
    input_fn = numpy_input_fn({"a": np.arange(n)}, np.arange(n), batch_size=n, num_epochs=2,
                              shuffle=True)
    (f1, l1), (f2, l2) = _batches(input_fn)
    for features, labels in ((f1, l1), (f2, l2)):
        np.testing.assert_array_equal(features["a"], labels)  # rows stay together
        np.testing.assert_array_equal(np.sort(labels), np.arange(n))  # a permutation
    assert not np.array_equal(l1, np.arange(n))
    assert not np.array_equal(l1, l2)


def test_numpy_input_fn_array_x_and_no_y():
    x = np.arange(6.0).reshape(3, 2)
    (features,) = _batches(numpy_input_fn(x, batch_size=5, shuffle=False))
    np.testing.assert_array_equal(features, x)


def test_numpy_input_fn_dict_y():
    x = {"a": np.arange(3.0)}
    y = {"t1": np.arange(3), "t2": -np.arange(3)}
    ((features, labels),) = _batches(numpy_input_fn(x, y, shuffle=False))
    assert sorted(labels) == ["t1", "t2"]
    np.testing.assert_array_equal(labels["t2"], -features["a"])


def test_numpy_input_fn_checks_data_when_called():
    mismatched = numpy_input_fn({"a": np.arange(3)}, np.arange(4), shuffle=False)
    with tf.Graph().as_default(), pytest.raises(ValueError, match="mismatched"):
        mismatched()
    with tf.Graph().as_default(), pytest.raises(TypeError, match="x must be a dict or array"):
        numpy_input_fn([1, 2, 3], shuffle=False)()
    duplicate = numpy_input_fn({"a": np.arange(3)}, {"a": np.arange(3)}, shuffle=False)
    with tf.Graph().as_default(), pytest.raises(ValueError, match="duplicate keys"):
        duplicate()
    with tf.Graph().as_default(), pytest.raises(ValueError, match="empty dict"):
        numpy_input_fn({}, shuffle=False)()


# ---- feature columns ---------------------------------------------------------------------------
def test_numeric_column_checks_its_arguments():
    column = tf.feature_column.numeric_column("x", shape=3, default_value=0.5)
    assert column.shape == (3,) and column.default_value == (0.5, 0.5, 0.5)
    assert column.name == "x" and column.dtype == tf.float32
    with pytest.raises(ValueError, match="greater than 0"):
        tf.feature_column.numeric_column("x", shape=[0])
    with pytest.raises(TypeError, match="must be integer"):
        tf.feature_column.numeric_column("x", shape=[1.5])
    with pytest.raises(ValueError, match="convertible to float"):
        tf.feature_column.numeric_column("x", dtype=tf.string)
    with pytest.raises(TypeError, match="normalizer_fn must be a callable"):
        tf.feature_column.numeric_column("x", normalizer_fn=3)
    with pytest.raises(ValueError, match="shape of default_value"):
        tf.feature_column.numeric_column("x", shape=[2], default_value=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="key must be a string"):
        tf.feature_column.numeric_column(3)


def test_input_layer_sorts_columns_by_name_and_normalizes():
    b = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    a = np.array([5, 6], np.int64)  # a [batch] vector becomes [batch, 1]
    columns = [tf.feature_column.numeric_column("b", shape=[2]),
               tf.feature_column.numeric_column("a", dtype=tf.int64,
                                                normalizer_fn=lambda t: t * 2)]
    with tf.Graph().as_default():
        net = tf.feature_column.input_layer({"a": a, "b": b}, columns)
        assert net.dtype == tf.float32 and net.shape.as_list() == [2, 3]
        with tf.Session() as sess:
            value = sess.run(net)
    np.testing.assert_array_equal(value, np.hstack([2 * a[:, None], b]))


def test_input_layer_errors():
    column = tf.feature_column.numeric_column("a")
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="not in features dictionary"):
            tf.feature_column.input_layer({"b": [1.0]}, [column])
        with pytest.raises(ValueError, match="must not be empty"):
            tf.feature_column.input_layer({"a": [1.0]}, [])
        with pytest.raises(ValueError, match="Duplicate feature column"):
            tf.feature_column.input_layer({"a": [1.0]}, [column, column])


def test_linear_model_variables_and_value():
    x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    z = np.array([0.5, -1.0], np.float32)
    columns = [tf.feature_column.numeric_column("x", shape=[2]),
               tf.feature_column.numeric_column("z")]
    with tf.Graph().as_default():
        logits = tf.feature_column.linear_model({"x": x, "z": z}, columns, units=3)
        names = sorted(v.op.name for v in tf.global_variables())
        assert names == ["linear_model/bias_weights", "linear_model/x/weights",
                         "linear_model/z/weights"]
        by_name = {v.op.name: v for v in tf.global_variables()}
        wx = np.arange(6.0, dtype=np.float32).reshape(2, 3)
        wz = np.array([[1.0, -1.0, 2.0]], np.float32)
        bias = np.array([0.1, 0.2, 0.3], np.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert not sess.run(logits).any()  # zero-initialised
            sess.run([tf.assign(by_name["linear_model/x/weights"], wx),
                      tf.assign(by_name["linear_model/z/weights"], wz),
                      tf.assign(by_name["linear_model/bias_weights"], bias)])
            value = sess.run(logits)
    np.testing.assert_allclose(value, x @ wx + z[:, None] @ wz + bias, rtol=1e-6)


def _run(tensors, init=True):
    with tf.Session() as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        return sess.run(tensors)


def test_indicator_of_identity_column_is_multi_hot():
    day = tf.feature_column.categorical_column_with_identity("day", num_buckets=4)
    pair = tf.feature_column.categorical_column_with_identity("pair", num_buckets=3,
                                                              default_value=0)
    columns = [tf.feature_column.indicator_column(day), tf.feature_column.indicator_column(pair)]
    features = {"day": np.array([2, 0, 3]), "pair": np.array([[1, 1], [2, 7], [-1, 2]])}
    with tf.Graph().as_default():
        net = tf.feature_column.input_layer(features, columns)
        assert net.shape.as_list() == [3, 7]
        value = _run(net)
    expected_day = np.eye(4)[[2, 0, 3]]
    expected_pair = np.array([[0, 2, 0], [1, 0, 1], [1, 0, 1]])  # 7 and -1 -> default 0
    np.testing.assert_array_equal(value, np.hstack([expected_day, expected_pair]))


def test_out_of_range_id_fails_at_run_time():
    day = tf.feature_column.categorical_column_with_identity("day", num_buckets=4)
    with tf.Graph().as_default():
        net = tf.feature_column.input_layer({"day": np.array([1, 4])},
                                            [tf.feature_column.indicator_column(day)])
        with pytest.raises(tf.errors.InvalidArgumentError):
            _run(net)
        with pytest.raises(ValueError, match="wrap a categorical column"):
            tf.feature_column.input_layer({"day": np.array([1])}, [day])


def test_bucketized_column():
    x = tf.feature_column.numeric_column("x", shape=[2])
    buckets = tf.feature_column.bucketized_column(x, boundaries=[0.0, 10.0])
    assert buckets.name == "x_bucketized" and buckets._num_buckets == 6
    values = np.array([[-5.0, 0.0], [5.0, 10.0], [20.0, 9.99]], np.float32)
    with tf.Graph().as_default():
        dense = tf.feature_column.input_layer({"x": values}, [buckets])
        ids = buckets._get_ids({"x": values})
        dense_value, ids_value = _run([dense, ids])
    expected_buckets = np.digitize(values, [0.0, 10.0])  # bins[i-1] <= x < bins[i]
    np.testing.assert_array_equal(ids_value, expected_buckets + [0, 3])
    np.testing.assert_array_equal(dense_value, np.eye(3)[expected_buckets].reshape(3, 6))
    with pytest.raises(ValueError, match="sorted list"):
        tf.feature_column.bucketized_column(x, [3.0, 1.0])
    with pytest.raises(ValueError, match="numeric_column"):
        tf.feature_column.bucketized_column(buckets, [1.0])


def test_embedding_column_combines_table_rows():
    tags = tf.feature_column.categorical_column_with_identity("tags", num_buckets=5)
    mean_of = tf.feature_column.embedding_column(tags, dimension=3)
    sum_of = tf.feature_column.embedding_column(tags, dimension=3, combiner="sum")
    ids = np.array([[0, 4], [2, 2]])
    table = np.arange(15.0, dtype=np.float32).reshape(5, 3)
    with tf.Graph().as_default():
        with tf.variable_scope("mean"):
            mean_net = tf.feature_column.input_layer({"tags": ids}, [mean_of])
        with tf.variable_scope("sum"):
            sum_net = tf.feature_column.input_layer({"tags": ids}, [sum_of])
        names = sorted(v.op.name for v in tf.trainable_variables())
        assert names == ["mean/input_layer/tags_embedding/embedding_weights",
                         "sum/input_layer/tags_embedding/embedding_weights"]
        with tf.Session() as sess:
            sess.run([tf.assign(v, table) for v in tf.global_variables()])
            mean_value, sum_value = sess.run([mean_net, sum_net])
    np.testing.assert_allclose(mean_value, table[ids].mean(axis=1))
    np.testing.assert_allclose(sum_value, table[ids].sum(axis=1))
    with pytest.raises(ValueError, match="Invalid dimension"):
        tf.feature_column.embedding_column(tags, dimension=0)


def test_linear_model_with_a_categorical_column():
    day = tf.feature_column.categorical_column_with_identity("day", num_buckets=3)
    with tf.Graph().as_default():
        cols_to_vars = {}
        logits = tf.feature_column.linear_model({"day": np.array([2, 0, 2])}, [day], units=2,
                                                cols_to_vars=cols_to_vars)
        (weights,) = cols_to_vars[day]
        assert weights.op.name == "linear_model/day/weights"
        assert weights.shape.as_list() == [3, 2]
        table = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run([tf.assign(weights, table), tf.assign(cols_to_vars["bias"][0], [0.5, -0.5])])
            value = sess.run(logits)
    np.testing.assert_allclose(value, table[[2, 0, 2]] + [0.5, -0.5])


# ---- tf.metrics ----------------------------------------------------------------------------------
def test_metrics_accumulate_over_batches():
    labels = tf.placeholder(tf.int64, [None])
    predictions = tf.placeholder(tf.int64, [None])
    values = tf.placeholder(tf.float32, [None])
    weights = tf.placeholder(tf.float32, [None])
    accuracy = tf.metrics.accuracy(labels, predictions)
    mean = tf.metrics.mean(values, weights=weights)
    precision = tf.metrics.precision(labels, predictions)
    recall = tf.metrics.recall(labels, predictions)
    assert "accuracy/total:0" in [v.name for v in tf.local_variables()]
    assert not tf.global_variables()
    batches = [([1, 0, 1], [1, 1, 0], [1.0, 2.0, 3.0], [1.0, 0.0, 2.0]),
               ([0, 1], [0, 1], [4.0, 5.0], [1.0, 1.0])]
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        assert sess.run(accuracy[0]) == 0.0  # no batch yet
        for y, p, v, w in batches:
            sess.run([accuracy[1], mean[1], precision[1], recall[1]],
                     {labels: y, predictions: p, values: v, weights: w})
        results = sess.run([accuracy[0], mean[0], precision[0], recall[0]])
    y = np.array([1, 0, 1, 0, 1])
    p = np.array([1, 1, 0, 0, 1])
    v = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    w = np.array([1.0, 0.0, 2.0, 1.0, 1.0])
    tp = np.sum((y == 1) & (p == 1))
    expected = [np.mean(y == p), np.sum(v * w) / np.sum(w), tp / np.sum(p == 1),
                tp / np.sum(y == 1)]
    np.testing.assert_allclose(results, expected, rtol=1e-6)


def test_auc_matches_pairwise_ranking():
    rng = np.random.RandomState(3)
    labels = rng.randint(0, 2, size=40)
    scores = np.round(rng.uniform(size=40), 2)  # on the thresholds' grid: no ties within a bin
    auc, update = tf.metrics.auc(labels, scores.astype(np.float32), num_thresholds=101)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        sess.run(update)
        value = sess.run(auc)
    positive, negative = scores[labels == 1], scores[labels == 0]
    wins = (positive[:, None] > negative[None, :]) + 0.5 * (positive[:, None] == negative[None, :])
    assert value == pytest.approx(wins.mean(), abs=0.02)


def test_checkpoint_of_a_layers_graph_skips_private_collection_keys(tmp_path):
    # tf.layers keeps its name counters under a tuple key; as in TF, the meta
    # graph serialises only collections with string keys.
    with tf.Graph().as_default():
        tf.layers.dense(tf.zeros([1, 2]), 3)
        graph = tf.get_default_graph()
        assert any(not isinstance(key, str) for key in graph._collections)
        assert all(isinstance(key, str) for key in graph.get_all_collection_keys())
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "model.ckpt"))
    with tf.Graph().as_default() as graph:
        tf.train.import_meta_graph(path + ".meta")
        assert all(isinstance(k, str) for k in graph.get_all_collection_keys())
        assert [v.op.name for v in tf.trainable_variables()] == ["dense/kernel", "dense/bias"]


# ---- EstimatorSpec and RunConfig -----------------------------------------------------------------
def test_estimator_spec_checks_its_mode():
    ModeKeys = tf.estimator.ModeKeys
    with tf.Graph().as_default():
        loss = tf.constant(1.0)
        with pytest.raises(ValueError, match="Missing train_op"):
            tf.estimator.EstimatorSpec(ModeKeys.TRAIN, loss=loss)
        with pytest.raises(ValueError, match="Missing loss"):
            tf.estimator.EstimatorSpec(ModeKeys.EVAL)
        with pytest.raises(ValueError, match="Missing predictions"):
            tf.estimator.EstimatorSpec(ModeKeys.PREDICT)
        with pytest.raises(ValueError, match="Loss must be scalar"):
            tf.estimator.EstimatorSpec(ModeKeys.EVAL, loss=tf.constant([1.0, 2.0]))
        with pytest.raises(TypeError, match="eval_metric_ops"):
            tf.estimator.EstimatorSpec(ModeKeys.EVAL, loss=loss, eval_metric_ops={"m": loss})
        spec = tf.estimator.EstimatorSpec(ModeKeys.EVAL, loss=tf.constant([2.0]))
        assert spec.loss.shape.ndims == 0 and spec.predictions == {}
    assert ModeKeys.PREDICT == "infer"


def test_run_config():
    config = tf.estimator.RunConfig()
    assert config.save_checkpoints_secs == 600 and config.save_checkpoints_steps is None
    config = config.replace(save_checkpoints_steps=10, tf_random_seed=3)
    assert config.save_checkpoints_steps == 10 and config.save_checkpoints_secs is None
    assert config.tf_random_seed == 3 and config.keep_checkpoint_max == 5
    with pytest.raises(ValueError, match="Can not provide both"):
        tf.estimator.RunConfig(save_checkpoints_steps=1, save_checkpoints_secs=1)
    with pytest.raises(ValueError, match="not supported"):
        config.replace(learning_rate=1)


# ---- Estimator with a custom model_fn ------------------------------------------------------------
LEARNING_RATE = 0.1


def _linear_model_fn(features, labels, mode, params):
    """y = w * x + b, mean squared error, plain gradient descent."""
    w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
    b = tf.get_variable("b", [], initializer=tf.zeros_initializer())
    prediction = w * tf.cast(features["x"], tf.float32) + b
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions={"y": prediction})
    loss = tf.reduce_mean(tf.square(prediction - tf.cast(labels, tf.float32)))
    optimizer = tf.train.GradientDescentOptimizer(params["learning_rate"])
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(
        mode, loss=loss, train_op=train_op,
        eval_metric_ops={"mae": tf.metrics.mean_absolute_error(labels, prediction)})


def _gradient_descent(x, y, steps, lr=LEARNING_RATE):
    """The same model trained by hand, full batch: w, b after ``steps`` steps."""
    w = b = 0.0
    for _ in range(steps):
        residual = w * x + b - y
        w, b = w - lr * 2 * np.mean(residual * x), b - lr * 2 * np.mean(residual)
    return w, b


def _line_data(n=20, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1.0, 1.0, size=n).astype(np.float32)
    y = (2.0 * x - 1.0 + 0.1 * rng.normal(size=n)).astype(np.float32)
    return x, y


def _line_estimator(model_dir, **config):
    return tf.estimator.Estimator(_linear_model_fn, model_dir=str(model_dir),
                                  params={"learning_rate": LEARNING_RATE},
                                  config=tf.estimator.RunConfig(**config))


def test_training_resumes_from_checkpoints(tmp_path):
    x, y = _line_data()
    full_batch = numpy_input_fn({"x": x}, y, batch_size=len(x), num_epochs=None, shuffle=False)
    estimator = _line_estimator(tmp_path)
    estimator.train(full_batch, steps=5)
    assert estimator.get_variable_value("global_step") == 5
    assert estimator.latest_checkpoint() == os.path.join(str(tmp_path), "model.ckpt-5")
    np.testing.assert_allclose([estimator.get_variable_value("w"),
                                estimator.get_variable_value("b")],
                               _gradient_descent(x, y, 5), rtol=1e-5)
    # A new Estimator object on the same directory continues from step 5.
    again = _line_estimator(tmp_path)
    again.train(full_batch, steps=3)
    assert again.get_variable_value("global_step") == 8
    np.testing.assert_allclose([again.get_variable_value("w"), again.get_variable_value("b")],
                               _gradient_descent(x, y, 8), rtol=1e-5)
    # max_steps counts the global step: 10 means 2 more, then nothing.
    again.train(full_batch, max_steps=10)
    assert again.get_variable_value("global_step") == 10
    again.train(full_batch, max_steps=10)
    assert again.get_variable_value("global_step") == 10
    np.testing.assert_allclose(again.get_variable_value("w"), _gradient_descent(x, y, 10)[0],
                               rtol=1e-5)
    assert sorted(again.get_variable_names()) == ["b", "global_step", "w"]


def test_checkpoints_every_n_steps_and_keep_max(tmp_path):
    x, y = _line_data()
    input_fn = numpy_input_fn({"x": x}, y, batch_size=5, num_epochs=None, shuffle=False)
    estimator = _line_estimator(tmp_path, save_checkpoints_steps=3, keep_checkpoint_max=2)
    estimator.train(input_fn, steps=10)
    state = tf.train.get_checkpoint_state(str(tmp_path))
    kept = [os.path.basename(p) for p in state.all_model_checkpoint_paths]
    assert kept == ["model.ckpt-9", "model.ckpt-10"]


class _RecordingListener(tf.estimator.CheckpointSaverListener):
    def __init__(self, stop_at=None):
        self.calls = []
        self.stop_at = stop_at

    def begin(self):
        self.calls.append("begin")

    def before_save(self, session, global_step_value):
        self.calls.append(("before", global_step_value))

    def after_save(self, session, global_step_value):
        self.calls.append(("after", global_step_value))
        return global_step_value == self.stop_at

    def end(self, session, global_step_value):
        self.calls.append(("end", global_step_value))


def test_saving_listeners_see_every_checkpoint(tmp_path):
    x, y = _line_data()
    input_fn = numpy_input_fn({"x": x}, y, batch_size=5, num_epochs=None, shuffle=False)
    estimator = _line_estimator(tmp_path, save_checkpoints_steps=10)
    listener = _RecordingListener()
    estimator.train(input_fn, steps=25, saving_listeners=[listener])
    saves = [0, 10, 20, 25]
    assert listener.calls == (["begin"] + [(when, s) for s in saves for when in
                                           ("before", "after")] + [("end", 25)])
    stopper = _RecordingListener(stop_at=35)  # saves every 10 steps from 25
    estimator.train(input_fn, steps=100, saving_listeners=[stopper])
    assert estimator.get_variable_value("global_step") == 35
    with pytest.raises(TypeError, match="CheckpointSaverListener"):
        estimator.train(input_fn, steps=1, saving_listeners=[object()])


def test_train_and_evaluate_evaluates_each_new_checkpoint(tmp_path):
    x, y = _line_data()
    estimator = _line_estimator(tmp_path, save_checkpoints_steps=10)
    evaluated_at = []
    evaluate = estimator.evaluate

    def recording_evaluate(*args, **kwargs):
        results = evaluate(*args, **kwargs)
        evaluated_at.append(int(results["global_step"]))
        return results
    estimator.evaluate = recording_evaluate
    train_spec = tf.estimator.TrainSpec(
        numpy_input_fn({"x": x}, y, batch_size=len(x), num_epochs=None, shuffle=False),
        max_steps=25)
    eval_spec = tf.estimator.EvalSpec(
        numpy_input_fn({"x": x}, y, batch_size=len(x), shuffle=False), steps=None,
        throttle_secs=0)
    metrics, exports = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    assert evaluated_at == [10, 20, 25] and exports == []
    assert metrics["global_step"] == 25
    w, b = _gradient_descent(x, y, 25)
    assert metrics["loss"] == pytest.approx(np.mean((w * x + b - y) ** 2), rel=1e-4)
    with pytest.raises(ValueError, match="max_steps > 0"):
        tf.estimator.TrainSpec(train_spec.input_fn, max_steps=0)
    with pytest.raises(TypeError, match="must be callable"):
        tf.estimator.EvalSpec("not a function")


def test_training_stops_when_the_input_ends(tmp_path):
    x, y = _line_data(n=20)
    two_epochs = numpy_input_fn({"x": x}, y, batch_size=8, num_epochs=2, shuffle=False)
    estimator = _line_estimator(tmp_path)
    estimator.train(two_epochs)  # 40 examples in batches of 8
    assert estimator.get_variable_value("global_step") == 5


def test_custom_model_fn_reaches_the_least_squares_solution(tmp_path):
    x, y = _line_data(n=50, seed=1)
    estimator = _line_estimator(tmp_path)
    estimator.train(numpy_input_fn({"x": x}, y, batch_size=50, num_epochs=None, shuffle=False),
                    steps=300)
    design = np.stack([x, np.ones_like(x)], axis=1)
    (w, b), *_ = np.linalg.lstsq(design, y, rcond=None)
    assert estimator.get_variable_value("w") == pytest.approx(w, abs=1e-3)
    assert estimator.get_variable_value("b") == pytest.approx(b, abs=1e-3)
    # evaluate: the model's metric and loss against NumPy on the restored weights.
    results = estimator.evaluate(numpy_input_fn({"x": x}, y, batch_size=50, shuffle=False))
    assert sorted(results) == ["global_step", "loss", "mae"]
    assert results["global_step"] == 300
    residual = estimator.get_variable_value("w") * x + estimator.get_variable_value("b") - y
    assert results["loss"] == pytest.approx(np.mean(residual ** 2), rel=1e-4)
    assert results["mae"] == pytest.approx(np.mean(np.abs(residual)), rel=1e-4)
    # predict: one dict per example.
    predictions = list(estimator.predict(numpy_input_fn({"x": x[:3]}, shuffle=False)))
    assert [sorted(p) for p in predictions] == [["y"]] * 3
    np.testing.assert_allclose([p["y"] for p in predictions], (residual + y)[:3], rtol=1e-5)


def test_estimator_argument_checks(tmp_path):
    def no_features(inputs, labels, mode):
        return None
    with pytest.raises(ValueError, match="must include features"):
        tf.estimator.Estimator(no_features)
    with pytest.raises(ValueError, match="does not include params"):
        tf.estimator.Estimator(lambda features, labels, mode: None, params={"a": 1})
    with pytest.raises(ValueError, match="both in constructor and RunConfig"):
        tf.estimator.Estimator(_linear_model_fn, model_dir=str(tmp_path / "a"),
                               config=tf.estimator.RunConfig(model_dir=str(tmp_path / "b")))
    estimator = _line_estimator(tmp_path)
    input_fn = numpy_input_fn({"x": np.ones(4)}, np.ones(4), shuffle=False)
    with pytest.raises(ValueError, match="both steps and max_steps"):
        estimator.train(input_fn, steps=1, max_steps=1)
    with pytest.raises(ValueError, match="steps > 0"):
        estimator.train(input_fn, steps=0)
    with pytest.raises(ValueError, match="Could not find trained model"):
        estimator.get_variable_names()


def test_model_fn_must_return_an_estimator_spec(tmp_path):
    estimator = tf.estimator.Estimator(lambda features, labels, mode: 1.0,
                                       model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="should return an EstimatorSpec"):
        estimator.train(numpy_input_fn({"x": np.ones(2)}, np.ones(2), shuffle=False), steps=1)


def test_nan_loss_stops_training(tmp_path):
    def model_fn(features, labels, mode):
        w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
        loss = tf.log(w * 0.0 - 1.0)  # log(-1) = nan
        train_op = tf.assign_add(tf.train.get_global_step(), 1)
        return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)
    estimator = tf.estimator.Estimator(model_fn, model_dir=str(tmp_path))
    with pytest.raises(RuntimeError, match="NaN loss"):
        estimator.train(numpy_input_fn({"x": np.ones(2)}, np.ones(2), num_epochs=None,
                                       shuffle=False), steps=3)


def test_input_fn_may_return_a_dataset(tmp_path):
    x, y = _line_data()

    def input_fn(params):
        assert params == {"learning_rate": LEARNING_RATE}
        return tf.data.Dataset.from_tensor_slices(({"x": x}, y)).batch(len(x)).repeat()
    estimator = _line_estimator(tmp_path)
    estimator.train(input_fn, steps=4)
    np.testing.assert_allclose(estimator.get_variable_value("w"), _gradient_descent(x, y, 4)[0],
                               rtol=1e-5)


# ---- canned estimators ---------------------------------------------------------------------------
def _softmax(logits):
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def _iris_classifier(model_dir, **kwargs):
    columns = [tf.feature_column.numeric_column("x", shape=[4])]
    return tf.estimator.DNNClassifier(
        hidden_units=[10, 20, 10], feature_columns=columns, n_classes=3,
        model_dir=str(model_dir), config=tf.estimator.RunConfig(tf_random_seed=7), **kwargs)


def test_dnn_classifier_variables_evaluate_and_predict(tmp_path):
    x, y = tf.datasets.load_iris()
    classifier = _iris_classifier(tmp_path)
    classifier.train(numpy_input_fn({"x": x}, y, batch_size=32, num_epochs=None, shuffle=True),
                     steps=20)
    names = classifier.get_variable_names()
    for layer, shape in (("hiddenlayer_0", (4, 10)), ("hiddenlayer_1", (10, 20)),
                         ("hiddenlayer_2", (20, 10)), ("logits", (10, 3))):
        assert classifier.get_variable_value("dnn/%s/kernel" % layer).shape == shape
        assert "dnn/%s/bias" % layer in names
    assert "global_step" in names

    predictions = list(classifier.predict(numpy_input_fn({"x": x}, shuffle=False)))
    assert len(predictions) == 150
    first = predictions[0]
    assert {"logits", "probabilities", "class_ids", "classes"} <= set(first)
    assert first["class_ids"].shape == (1,) and first["class_ids"].dtype == np.int64
    assert first["probabilities"].shape == (3,) and first["logits"].shape == (3,)
    assert first["classes"][0] == str(first["class_ids"][0]).encode()
    logits = np.stack([p["logits"] for p in predictions])
    probabilities = np.stack([p["probabilities"] for p in predictions])
    class_ids = np.concatenate([p["class_ids"] for p in predictions])
    np.testing.assert_allclose(probabilities, _softmax(logits), rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(class_ids, np.argmax(logits, axis=1))

    # The metrics, recomputed from these predictions: loss is the mean over
    # batches of the *summed* cross-entropy (TF1's default loss reduction).
    batch_size = 32
    results = classifier.evaluate(numpy_input_fn({"x": x}, y, batch_size=batch_size,
                                                 shuffle=False))
    assert sorted(results) == ["accuracy", "average_loss", "global_step", "loss"]
    assert results["global_step"] == 20
    cross_entropy = -np.log(probabilities[np.arange(150), y])
    batch_sums = [cross_entropy[i:i + batch_size].sum() for i in range(0, 150, batch_size)]
    assert results["accuracy"] == pytest.approx(np.mean(class_ids == y), abs=1e-6)
    assert results["average_loss"] == pytest.approx(cross_entropy.mean(), rel=1e-4)
    assert results["loss"] == pytest.approx(np.mean(batch_sums), rel=1e-4)

    only_ids = list(classifier.predict(numpy_input_fn({"x": x[:4]}, shuffle=False),
                                       predict_keys=["class_ids"]))
    assert [sorted(p) for p in only_ids] == [["class_ids"]] * 4
    (batch,) = classifier.predict(numpy_input_fn({"x": x[:4]}, batch_size=4, shuffle=False),
                                  yield_single_examples=False)
    assert batch["probabilities"].shape == (4, 3) and batch["class_ids"].shape == (4, 1)
    with pytest.raises(ValueError, match="at least one output"):
        next(classifier.predict(numpy_input_fn({"x": x}, shuffle=False), predict_keys=["nope"]))


def test_dnn_classifier_rejects_float_labels_and_bad_n_classes(tmp_path):
    columns = [tf.feature_column.numeric_column("x")]
    with pytest.raises(ValueError, match="n_classes must be > 2"):
        tf.estimator.DNNClassifier([4], columns, n_classes=1, model_dir=str(tmp_path))
    classifier = tf.estimator.DNNClassifier([4], columns, n_classes=3, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match="Labels dtype should be integer"):
        classifier.train(numpy_input_fn({"x": np.ones(3)}, np.ones(3, np.float32),
                                        shuffle=False), steps=1)


def test_binary_classifier_metrics(tmp_path):
    rng = np.random.RandomState(0)
    x = rng.normal(size=(60, 2)).astype(np.float32)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(np.int64)
    classifier = tf.estimator.LinearClassifier(
        [tf.feature_column.numeric_column("x", shape=[2])], model_dir=str(tmp_path))
    classifier.train(numpy_input_fn({"x": x}, y, batch_size=20, num_epochs=None, shuffle=True),
                     steps=30)
    assert classifier.get_variable_value("linear/linear_model/x/weights").shape == (2, 1)
    predictions = list(classifier.predict(numpy_input_fn({"x": x}, shuffle=False)))
    first = predictions[0]
    assert first["logits"].shape == (1,) and first["logistic"].shape == (1,)
    assert first["probabilities"].shape == (2,)
    logistic = np.concatenate([p["logistic"] for p in predictions])
    class_ids = np.concatenate([p["class_ids"] for p in predictions])
    np.testing.assert_array_equal(class_ids, (logistic > 0.5).astype(np.int64))
    results = classifier.evaluate(numpy_input_fn({"x": x}, y, batch_size=60, shuffle=False))
    assert sorted(results) == sorted([
        "accuracy", "accuracy_baseline", "auc", "auc_precision_recall", "average_loss",
        "global_step", "label/mean", "loss", "precision", "prediction/mean", "recall"])
    tp = np.sum((class_ids == 1) & (y == 1))
    assert results["accuracy"] == pytest.approx(np.mean(class_ids == y), abs=1e-6)
    assert results["label/mean"] == pytest.approx(y.mean())
    assert results["accuracy_baseline"] == pytest.approx(max(y.mean(), 1 - y.mean()))
    assert results["prediction/mean"] == pytest.approx(logistic.mean(), rel=1e-5)
    assert results["precision"] == pytest.approx(tp / np.sum(class_ids == 1))
    assert results["recall"] == pytest.approx(tp / np.sum(y == 1))
    log_loss = -np.mean(y * np.log(logistic) + (1 - y) * np.log(1 - logistic))
    assert results["average_loss"] == pytest.approx(log_loss, rel=1e-4)
    assert results["accuracy"] > 0.9


def test_linear_regressor_recovers_known_coefficients(tmp_path):
    rng = np.random.RandomState(0)
    x = rng.uniform(-1.0, 1.0, size=(200, 2)).astype(np.float32)
    y = (3.0 * x[:, 0] - 2.0 * x[:, 1] + 0.5).astype(np.float32)
    columns = [tf.feature_column.numeric_column("x1"), tf.feature_column.numeric_column("x2")]
    regressor = tf.estimator.LinearRegressor(columns, model_dir=str(tmp_path))
    features = {"x1": x[:, 0], "x2": x[:, 1]}
    regressor.train(numpy_input_fn(features, y, batch_size=20, num_epochs=None, shuffle=True),
                    steps=400)
    weights = [regressor.get_variable_value("linear/linear_model/%s" % name)
               for name in ("x1/weights", "x2/weights", "bias_weights")]
    assert [w.shape for w in weights] == [(1, 1), (1, 1), (1,)]
    np.testing.assert_allclose(np.concatenate([w.ravel() for w in weights]), [3.0, -2.0, 0.5],
                               atol=0.02)
    results = regressor.evaluate(numpy_input_fn(features, y, batch_size=50, shuffle=False))
    assert sorted(results) == ["average_loss", "global_step", "label/mean", "loss",
                               "prediction/mean"]
    assert results["label/mean"] == pytest.approx(y.mean(), rel=1e-5)
    predictions = list(regressor.predict(numpy_input_fn(features, shuffle=False)))
    values = np.concatenate([p["predictions"] for p in predictions])
    assert predictions[0]["predictions"].shape == (1,)
    assert results["average_loss"] == pytest.approx(np.mean((values - y) ** 2), rel=1e-3)
    assert results["loss"] == pytest.approx(50 * results["average_loss"], rel=1e-3)


def test_iris_dnn_classifier_reaches_ninety_percent(tmp_path):
    x, y = tf.datasets.load_iris()
    (x_train, y_train), (x_test, y_test) = tf.datasets.train_test_split(
        x, y, test_fraction=0.2, seed=0)
    classifier = _iris_classifier(tmp_path)
    classifier.train(numpy_input_fn({"x": x_train}, y_train, batch_size=32, num_epochs=None,
                                    shuffle=True), steps=1000)
    results = classifier.evaluate(numpy_input_fn({"x": x_test}, y_test, shuffle=False))
    assert results["global_step"] == 1000
    assert results["accuracy"] >= 0.9


def test_iris_example_prints_its_test_accuracy(tmp_path, capsys):
    spec = importlib.util.spec_from_file_location("iris_dnn", ROOT / "examples" / "iris_dnn.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    results = example.main(["--model-dir", str(tmp_path)])
    printed = capsys.readouterr().out
    assert "Test accuracy: %.4f" % results["accuracy"] in printed
    assert results["accuracy"] >= 0.9 and results["global_step"] == 1000
    assert printed.count(" -> ") == 3


def test_dnn_regressor_with_weights_dropout_and_two_outputs(tmp_path):
    rng = np.random.RandomState(1)
    x = rng.normal(size=(40, 3)).astype(np.float32)
    y = np.stack([x.sum(axis=1), x[:, 0] - x[:, 1]], axis=1).astype(np.float32)
    w = rng.uniform(0.0, 2.0, size=40).astype(np.float32)
    features = {"x": x, "w": w}
    regressor = tf.estimator.DNNRegressor(
        [8], [tf.feature_column.numeric_column("x", shape=[3])], label_dimension=2,
        weight_column="w", dropout=0.3, model_dir=str(tmp_path),
        optimizer=lambda: tf.train.AdamOptimizer(0.01))
    regressor.train(numpy_input_fn(features, y, batch_size=10, num_epochs=None, shuffle=True),
                    steps=20)
    assert "dnn/hiddenlayer_0/kernel/Adam" in regressor.get_variable_names()
    predict_fn = numpy_input_fn(features, shuffle=False)
    first = np.stack([p["predictions"] for p in regressor.predict(predict_fn)])
    second = np.stack([p["predictions"] for p in regressor.predict(predict_fn)])
    assert first.shape == (40, 2)
    np.testing.assert_array_equal(first, second)  # no dropout outside training
    results = regressor.evaluate(numpy_input_fn(features, y, batch_size=40, shuffle=False))
    squared = (first - y) ** 2
    assert results["average_loss"] == pytest.approx(
        np.sum(w[:, None] * squared) / (2 * np.sum(w)), rel=1e-4)
    assert results["loss"] == pytest.approx(np.sum(w[:, None] * squared), rel=1e-4)
    assert results["label/mean"] == pytest.approx(np.sum(w[:, None] * y) / (2 * np.sum(w)),
                                                  rel=1e-4)


def test_canned_estimators_with_categorical_columns(tmp_path):
    rng = np.random.RandomState(2)
    day = rng.randint(0, 5, size=100)
    hour = rng.uniform(0.0, 24.0, size=100).astype(np.float32)
    y = ((day % 2 == 1) ^ (hour >= 12.0)).astype(np.int64)  # no linear function of day, hour
    features = {"day": day, "hour": hour}
    day_column = tf.feature_column.categorical_column_with_identity("day", 5)
    hour_column = tf.feature_column.bucketized_column(
        tf.feature_column.numeric_column("hour"), [6.0, 12.0, 18.0])
    train_fn = numpy_input_fn(features, y, batch_size=50, num_epochs=None, shuffle=True)
    eval_fn = numpy_input_fn(features, y, batch_size=100, shuffle=False)

    dnn = tf.estimator.DNNClassifier(
        [16], [tf.feature_column.embedding_column(day_column, 2),
               tf.feature_column.indicator_column(hour_column)],
        model_dir=str(tmp_path / "dnn"), optimizer="Adam",
        config=tf.estimator.RunConfig(tf_random_seed=1))
    dnn.train(train_fn, steps=200)
    table = "dnn/input_from_feature_columns/input_layer/day_embedding/embedding_weights"
    assert dnn.get_variable_value(table).shape == (5, 2)
    assert dnn.evaluate(eval_fn)["accuracy"] == 1.0

    linear = tf.estimator.LinearClassifier([day_column, hour_column],
                                           model_dir=str(tmp_path / "linear"),
                                           config=tf.estimator.RunConfig(tf_random_seed=1))
    linear.train(train_fn, steps=50)
    assert linear.get_variable_value("linear/linear_model/day/weights").shape == (5, 1)
    assert linear.get_variable_value("linear/linear_model/hour_bucketized/weights").shape == (4, 1)
    # An additive model of day and hour cannot express the XOR: better than chance, not perfect.
    assert 0.5 < linear.evaluate(eval_fn)["accuracy"] < 1.0
