"""tf.contrib: layers with TF1 contrib's defaults and names, arg_scope, regularizers,
the rnn aliases, seq2seq.sequence_loss, and the AttributeError for the rest."""

import numpy as np
import pytest

import minitf as tf

layers = tf.contrib.layers


def _softmax_xent(logits, labels):
    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return -np.take_along_axis(log_probs, labels[..., None], -1)[..., 0]


# ---- fully_connected, conv2d, pooling, flatten ----------------------------------------------
def test_fully_connected_has_contribs_names_and_a_relu(sess):
    x = tf.placeholder(tf.float32, [None, 3])
    y = layers.fully_connected(x, 4)
    assert y.op.name == "fully_connected/Relu"
    assert [v.name for v in tf.global_variables()] == ["fully_connected/weights:0",
                                                       "fully_connected/biases:0"]
    assert [v.name for v in tf.model_variables()] == ["fully_connected/weights:0",
                                                      "fully_connected/biases:0"]
    z = layers.fully_connected(y, 2, activation_fn=None)
    assert z.op.name == "fully_connected_1/BiasAdd"
    sess.run(tf.global_variables_initializer())
    w0, b0, w1, b1 = sess.run(tf.global_variables())
    sess.run(tf.assign(tf.global_variables()[1], [0.5, -0.5, 1.0, -1.0]))
    xs = np.random.RandomState(0).randn(5, 3).astype(np.float32)
    hidden = np.maximum(xs @ w0 + [0.5, -0.5, 1.0, -1.0], 0)
    np.testing.assert_allclose(sess.run(z, {x: xs}), hidden @ w1 + b1, rtol=1e-5, atol=1e-6)
    # Xavier uniform: |w| <= sqrt(6 / (fan_in + fan_out)).
    assert np.abs(w0).max() <= np.sqrt(6.0 / 7) and b0.tolist() == [0, 0, 0, 0]


def test_fully_connected_scope_reuse_and_collections():
    x = tf.placeholder(tf.float32, [None, 3])
    y = layers.fully_connected(x, 4, scope="fc", variables_collections=["mine"])
    again = layers.fully_connected(x, 4, scope="fc", reuse=True)
    assert len(tf.global_variables()) == 2 and again.op.name == "fc_1/Relu"
    assert [v.name for v in tf.get_collection("mine")] == ["fc/weights:0", "fc/biases:0"]
    normalized = layers.fully_connected(x, 4, normalizer_fn=layers.batch_norm, scope="bn_fc")
    names = [v.name for v in tf.global_variables() if v.name.startswith("bn_fc/")]
    assert names == ["bn_fc/weights:0", "bn_fc/BatchNorm/beta:0", "bn_fc/BatchNorm/moving_mean:0",
                     "bn_fc/BatchNorm/moving_variance:0"]  # no biases before a normalizer
    assert y.shape.as_list() == normalized.shape.as_list() == [None, 4]
    with pytest.raises(ValueError, match="num_outputs type should be one of"):
        layers.fully_connected(x, 4.0)


def test_conv2d_pooling_and_flatten(sess):
    x = tf.placeholder(tf.float32, [2, 6, 6, 3])
    conv = layers.conv2d(x, 4, [3, 3])
    assert conv.shape.as_list() == [2, 6, 6, 4]  # "SAME" padding by default
    assert [v.name for v in tf.global_variables()] == ["Conv/weights:0", "Conv/biases:0"]
    assert tf.global_variables()[0].shape.as_list() == [3, 3, 3, 4]
    pooled = layers.max_pool2d(conv, [2, 2])
    assert pooled.shape.as_list() == [2, 3, 3, 4]  # stride 2, "VALID"
    assert layers.avg_pool2d(conv, 3, stride=1).shape.as_list() == [2, 4, 4, 4]
    flat = layers.flatten(pooled)
    assert flat.shape.as_list() == [2, 36] and flat.op.name.startswith("Flatten/")
    sess.run(tf.global_variables_initializer())
    xs = np.random.RandomState(1).randn(2, 6, 6, 3).astype(np.float32)
    kernel = sess.run(tf.global_variables()[0])
    expected = np.maximum(sess.run(tf.nn.conv2d(xs, kernel, [1, 1, 1, 1], "SAME")), 0)
    np.testing.assert_allclose(sess.run(conv, {x: xs}), expected, rtol=1e-5)
    np.testing.assert_allclose(sess.run(pooled, {x: xs}),
                               expected.reshape(2, 3, 2, 3, 2, 4).max(axis=(2, 4)), rtol=1e-5)
    with pytest.raises(ValueError, match="Invalid data_format"):
        layers.conv2d(x, 4, 3, data_format="channels_last")


def test_dropout_keeps_keep_prob_while_training(sess):
    x = tf.ones([1000])
    dropped = layers.dropout(x, keep_prob=0.25, seed=3)
    kept = sess.run(dropped)
    assert set(np.unique(kept)) <= {0.0, 4.0} and 150 < (kept > 0).sum() < 350
    np.testing.assert_array_equal(sess.run(layers.dropout(x, is_training=False)), np.ones(1000))


# ---- batch_norm ---------------------------------------------------------------------------
def test_batch_norm_defaults_and_update_ops(sess):
    x = tf.placeholder(tf.float32, [4, 3])
    y = layers.batch_norm(x)
    assert [v.name for v in tf.global_variables()] == [
        "BatchNorm/beta:0", "BatchNorm/moving_mean:0", "BatchNorm/moving_variance:0"]  # no gamma
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == 2
    sess.run(tf.global_variables_initializer())
    xs = np.random.RandomState(2).randn(4, 3).astype(np.float32)
    normalized = (xs - xs.mean(0)) / np.sqrt(xs.var(0) + 0.001)
    np.testing.assert_allclose(sess.run(y, {x: xs}), normalized, rtol=1e-4, atol=1e-5)
    sess.run(updates, {x: xs})
    moving_mean = sess.run(tf.global_variables()[1])
    np.testing.assert_allclose(moving_mean, 0.001 * xs.mean(0), rtol=1e-4)  # decay 0.999


def test_batch_norm_with_updates_collections_none_updates_in_place(sess):
    x = tf.placeholder(tf.float32, [4, 2])
    y = layers.batch_norm(x, scale=True, updates_collections=None, decay=0.5)
    assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
    assert "BatchNorm/gamma:0" in [v.name for v in tf.global_variables()]
    sess.run(tf.global_variables_initializer())
    xs = np.arange(8, dtype=np.float32).reshape(4, 2)
    sess.run(y, {x: xs})
    moving_mean = [v for v in tf.global_variables() if "moving_mean" in v.name][0]
    np.testing.assert_allclose(sess.run(moving_mean), 0.5 * xs.mean(0))


# ---- initializers and regularizers -------------------------------------------------------------
def test_initializers_follow_contribs_formulas(sess):
    uniform = layers.xavier_initializer(seed=1)([200, 300])
    normal = layers.variance_scaling_initializer(seed=2)([400, 100])
    avg = layers.variance_scaling_initializer(factor=1.0, mode="FAN_AVG", uniform=True,
                                              seed=3)([3, 3, 8, 16])
    u, n, a = sess.run([uniform, normal, avg])
    limit = np.sqrt(6.0 / 500)
    assert np.abs(u).max() <= limit and abs(u.std() - limit / np.sqrt(3)) < 0.03 * limit
    # A normal truncated at 2 stddevs has 0.8796 of the stddev, here sqrt(1.3 * 2 / fan_in).
    stddev = np.sqrt(1.3 * 2.0 / 400)
    assert np.abs(n).max() <= 2 * stddev and abs(n.std() - 0.8796 * stddev) < 0.03 * stddev
    assert np.abs(a).max() <= np.sqrt(3.0 / ((72 + 144) / 2.0))  # fans times the 3x3 field
    assert layers.xavier_initializer_conv2d is layers.xavier_initializer
    with pytest.raises(TypeError, match="non-floating point type"):
        layers.xavier_initializer(dtype=tf.int32)
    with pytest.raises(TypeError, match="Unknown mode"):
        layers.variance_scaling_initializer(mode="fan_in")


def test_regularizers_and_apply_regularization(sess):
    w = tf.constant([[1.0, -2.0], [3.0, 0.5]])
    v = tf.constant([-1.0, 4.0])
    l2 = layers.l2_regularizer(0.1)(w)
    l1 = layers.l1_regularizer(0.5)(w)
    assert l2.op.name == "l2_regularizer" and l1.op.name == "l1_regularizer"
    assert sess.run(l2) == pytest.approx(0.1 * 14.25 / 2)
    assert sess.run(l1) == pytest.approx(0.5 * 6.5)
    assert layers.l2_regularizer(0.0)(w) is None
    with pytest.raises(ValueError, match="scale cannot be an integer"):
        layers.l2_regularizer(1)
    with pytest.raises(ValueError, match="less than 0"):
        layers.l1_regularizer(-0.5)
    total = layers.apply_regularization(layers.l2_regularizer(1.0), [w, v])
    assert total.op.name == "get_regularization_penalty"
    assert total in tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert sess.run(total) == pytest.approx((14.25 + 17.0) / 2)
    with pytest.raises(ValueError, match="No weights to regularize"):
        layers.apply_regularization(layers.l2_regularizer(1.0))


def test_apply_regularization_defaults_to_the_weights_collection(sess):
    x = tf.placeholder(tf.float32, [None, 3])
    layers.fully_connected(x, 2, variables_collections={"weights": ["weights"]})
    penalty = layers.apply_regularization(layers.l1_regularizer(1.0))
    sess.run(tf.global_variables_initializer())
    weights = sess.run(tf.global_variables()[0])
    assert sess.run(penalty) == pytest.approx(np.abs(weights).sum(), rel=1e-5)


def test_weights_regularizer_adds_a_regularization_loss(sess):
    x = tf.placeholder(tf.float32, [None, 3])
    layers.fully_connected(x, 2, weights_regularizer=layers.l2_regularizer(0.5))
    (loss,) = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    sess.run(tf.global_variables_initializer())
    weights = sess.run(tf.global_variables()[0])
    assert sess.run(loss) == pytest.approx(0.5 * (weights ** 2).sum() / 2, rel=1e-5)


# ---- arg_scope ------------------------------------------------------------------------------
def test_arg_scope_sets_defaults_that_nest_and_yield_to_explicit_arguments():
    x = tf.placeholder(tf.float32, [None, 3])
    with tf.contrib.framework.arg_scope([layers.fully_connected], activation_fn=tf.nn.tanh,
                                        num_outputs=5) as outer:
        assert layers.fully_connected(x).op.type == "Tanh"
        with layers.arg_scope([layers.fully_connected], activation_fn=None):
            inner = layers.fully_connected(x)
            assert inner.op.type == "BiasAdd" and inner.shape.as_list() == [None, 5]
        assert layers.fully_connected(x, activation_fn=tf.nn.sigmoid).op.type == "Sigmoid"
    assert layers.fully_connected(x, 2).op.type == "Relu"  # the scope is gone
    with layers.arg_scope(outer):  # re-entered
        assert layers.fully_connected(x).op.type == "Tanh"


def test_add_arg_scope_and_arg_scope_errors():
    framework = tf.contrib.framework

    @framework.add_arg_scope
    def scaled(x, factor=1.0, offset=0.0):
        return x * factor + offset

    with framework.arg_scope([scaled], factor=3.0):
        assert scaled(2.0) == 6.0 and scaled(2.0, offset=1.0) == 7.0
    assert framework.has_arg_scope(scaled) and framework.arg_scoped_arguments(scaled) == [
        "factor", "offset"]
    with pytest.raises(ValueError, match="is not decorated with @add_arg_scope"):
        with framework.arg_scope([tf.layers.dense], units=3):
            pass
    with pytest.raises(ValueError, match="kwargs must be empty"):
        with framework.arg_scope({}, factor=2.0):
            pass
    with pytest.raises(TypeError, match="list_ops_or_scope must either be"):
        with framework.arg_scope(scaled, factor=2.0):
            pass


# ---- rnn, seq2seq, framework ----------------------------------------------------------------
def test_contrib_rnn_is_the_core_rnn():
    rnn = tf.contrib.rnn
    assert rnn.BasicLSTMCell is tf.nn.rnn_cell.BasicLSTMCell
    assert rnn.LSTMStateTuple is tf.nn.rnn_cell.LSTMStateTuple
    assert rnn.MultiRNNCell is tf.nn.rnn_cell.MultiRNNCell
    assert rnn.static_rnn is tf.nn.static_rnn
    assert rnn.static_bidirectional_rnn is tf.nn.static_bidirectional_rnn
    with pytest.raises(AttributeError, match="minitf does not provide tf.contrib.rnn.dynamic_rnn"):
        rnn.dynamic_rnn  # noqa: B018 - TF1 has it in tf.nn only


def _div_no_nan(x, y):
    return np.where(y == 0, 0.0, x / np.where(y == 0, 1.0, y))


@pytest.mark.parametrize("options, reduce", [
    ({}, lambda l, w: (l * w).sum() / w.sum()),
    ({"average_across_batch": False}, lambda l, w: (l * w).sum(1) / w.sum(1)),
    # The last step has no weight at all: 0, not 0 / 0.
    ({"average_across_timesteps": False}, lambda l, w: _div_no_nan((l * w).sum(0), w.sum(0))),
    ({"average_across_timesteps": False, "average_across_batch": False}, lambda l, w: l * w),
    ({"average_across_timesteps": False, "average_across_batch": False,
      "sum_over_timesteps": True, "sum_over_batch": True},
     lambda l, w: (l * w).sum() / np.count_nonzero(w)),
])
def test_sequence_loss_matches_numpy(sess, options, reduce):
    rng = np.random.RandomState(4)
    logits = rng.randn(2, 3, 5).astype(np.float32)
    targets = rng.randint(0, 5, size=(2, 3))
    weights = np.array([[1, 1, 0], [1, 0, 0]], dtype=np.float32)
    loss = tf.contrib.seq2seq.sequence_loss(logits, targets, weights, **options)
    expected = reduce(_softmax_xent(logits, targets), weights)
    np.testing.assert_allclose(sess.run(loss), expected, rtol=1e-5)


def test_sequence_loss_argument_errors():
    logits, targets = tf.zeros([2, 3, 5]), tf.zeros([2, 3], tf.int32)
    with pytest.raises(ValueError, match="Logits must be a"):
        tf.contrib.seq2seq.sequence_loss(tf.zeros([2, 5]), targets, tf.ones([2, 3]))
    with pytest.raises(ValueError, match="Weights must be a"):
        tf.contrib.seq2seq.sequence_loss(logits, targets, tf.ones([2]))
    with pytest.raises(ValueError, match="cannot be set to True at same time"):
        tf.contrib.seq2seq.sequence_loss(logits, targets, tf.ones([2, 3]),
                                         sum_over_timesteps=True)


def test_framework_global_step_and_missing_names():
    step = tf.contrib.framework.get_or_create_global_step()
    assert step is tf.train.get_or_create_global_step() and step.op.name == "global_step"
    for module, name in [(tf.contrib, "slim"), (tf.contrib, "learn"),
                         (tf.contrib.layers, "optimize_loss"),
                         (tf.contrib.seq2seq, "BasicDecoder")]:
        with pytest.raises(AttributeError, match="minitf does not provide tf.contrib.*%s" % name):
            getattr(module, name)
