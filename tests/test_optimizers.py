"""The tf.train optimizers against hand-written NumPy updates, over several steps.

Each reference below is the textbook form of the optimizer (the paper's
equations, written independently of the kernels' algebra), run on the same
loss ``sum(c * w + w**3 / 3)`` whose gradient ``c + w**2`` changes every step.
"""

import numpy as np
import pytest

import minitf as tf

STEPS = 4
C = np.array([[0.5, -1.0, 2.0], [0.25, -0.3, 1.5]])
W0 = np.array([[1.0, -2.0, 0.5], [0.3, 0.7, -1.1]])


def _grad(w):
    return C + w * w


# ---- NumPy references: state dict in, new w out -----------------------------------------
def ref_gradient_descent(lr):
    def step(w, g, s, t):
        return w - lr * g
    return step


def ref_momentum(lr, mu, nesterov=False):
    def step(w, g, s, t):
        s["a"] = mu * s.get("a", 0.0) + g
        return w - lr * (g + mu * s["a"]) if nesterov else w - lr * s["a"]
    return step


def ref_adagrad(lr, init=0.1):
    def step(w, g, s, t):
        s["n"] = s.get("n", init) + g ** 2
        return w - lr * g / np.sqrt(s["n"])
    return step


def ref_adagrad_da(lr, l1=0.0, l2=0.0, init=0.1):
    def step(w, g, s, t):
        s["z"] = s.get("z", 0.0) + g
        s["n"] = s.get("n", init) + g ** 2
        shrunk = np.maximum(np.abs(s["z"]) - l1 * t, 0.0)   # t = global_step + 1
        return -lr * np.sign(s["z"]) * shrunk / (l2 * t * lr + np.sqrt(s["n"]))
    return step


def ref_adadelta(lr, rho, eps):
    def step(w, g, s, t):
        s["Eg2"] = rho * s.get("Eg2", 0.0) + (1 - rho) * g ** 2
        dx = np.sqrt(s.get("Edx2", 0.0) + eps) / np.sqrt(s["Eg2"] + eps) * g
        s["Edx2"] = rho * s.get("Edx2", 0.0) + (1 - rho) * dx ** 2
        return w - lr * dx
    return step


def ref_adam(lr, b1, b2, eps):
    def step(w, g, s, t):
        s["m"] = b1 * s.get("m", 0.0) + (1 - b1) * g
        s["v"] = b2 * s.get("v", 0.0) + (1 - b2) * g ** 2
        # beta1**t and beta2**t, kept (as in TF) in float32 variables.
        s["p1"] = np.float32(b1) * s.get("p1", np.float32(1.0))
        s["p2"] = np.float32(b2) * s.get("p2", np.float32(1.0))
        lr_t = lr * np.sqrt(1 - float(s["p2"])) / (1 - float(s["p1"]))
        return w - lr_t * s["m"] / (np.sqrt(s["v"]) + eps)
    return step


def ref_rmsprop(lr, decay, mu, eps, centered=False):
    def step(w, g, s, t):
        s["ms"] = decay * s.get("ms", 1.0) + (1 - decay) * g ** 2
        s["mg"] = decay * s.get("mg", 0.0) + (1 - decay) * g
        variance = s["ms"] - s["mg"] ** 2 if centered else s["ms"]
        s["mom"] = mu * s.get("mom", 0.0) + lr * g / np.sqrt(variance + eps)
        return w - s["mom"]
    return step


def ref_ftrl(lr, lr_power=-0.5, l1=0.0, l2=0.0, init=0.1, l2_shrinkage=0.0):
    """McMahan et al. (2013), Algorithm 1, with a general power of n."""
    p = -lr_power

    def step(w, g, s, t):
        n = s.get("n", np.full_like(w, init))
        sigma = ((n + g ** 2) ** p - n ** p) / lr
        s["z"] = s.get("z", 0.0) + g + 2 * l2_shrinkage * w - sigma * w
        s["n"] = n + g ** 2
        z = s["z"]
        return np.where(np.abs(z) <= l1, 0.0,
                        -(z - np.sign(z) * l1) / (s["n"] ** p / lr + 2 * l2))
    return step


def _f32(x):
    """A hyper-parameter as the optimizer sees it: TF converts Python floats to
    float32 tensors, then casts them to the variable's dtype."""
    return float(np.float32(x))


CASES = {
    "sgd": (lambda: tf.train.GradientDescentOptimizer(0.1), ref_gradient_descent(_f32(0.1))),
    "momentum": (lambda: tf.train.MomentumOptimizer(0.1, 0.9), ref_momentum(_f32(0.1), _f32(0.9))),
    "nesterov": (lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
                 ref_momentum(_f32(0.1), _f32(0.9), nesterov=True)),
    "adagrad": (lambda: tf.train.AdagradOptimizer(0.2, initial_accumulator_value=0.3),
                ref_adagrad(_f32(0.2), init=0.3)),
    "adagrad_da": (lambda: tf.train.AdagradDAOptimizer(
        0.2, tf.train.get_or_create_global_step()), ref_adagrad_da(_f32(0.2))),
    "adagrad_da_l1_l2": (lambda: tf.train.AdagradDAOptimizer(
        0.2, tf.train.get_or_create_global_step(), l1_regularization_strength=0.4,
        l2_regularization_strength=0.3), ref_adagrad_da(_f32(0.2), l1=_f32(0.4), l2=_f32(0.3))),
    "adadelta": (lambda: tf.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-6),
                 ref_adadelta(_f32(1.0), _f32(0.9), _f32(1e-6))),
    "adam": (lambda: tf.train.AdamOptimizer(0.1, 0.8, 0.95, 1e-7),
             ref_adam(_f32(0.1), _f32(0.8), _f32(0.95), _f32(1e-7))),
    "rmsprop": (lambda: tf.train.RMSPropOptimizer(0.05, decay=0.8, epsilon=1e-6),
                ref_rmsprop(_f32(0.05), _f32(0.8), _f32(0.0), _f32(1e-6))),
    "rmsprop_momentum": (lambda: tf.train.RMSPropOptimizer(0.05, decay=0.8, momentum=0.5,
                                                          epsilon=1e-6),
                         ref_rmsprop(_f32(0.05), _f32(0.8), _f32(0.5), _f32(1e-6))),
    "rmsprop_centered": (lambda: tf.train.RMSPropOptimizer(
        0.05, decay=0.8, momentum=0.5, epsilon=1e-6, centered=True),
        ref_rmsprop(_f32(0.05), _f32(0.8), _f32(0.5), _f32(1e-6), centered=True)),
    "ftrl": (lambda: tf.train.FtrlOptimizer(0.3), ref_ftrl(_f32(0.3))),
    "ftrl_l1_l2_power": (lambda: tf.train.FtrlOptimizer(
        0.3, learning_rate_power=-0.7, l1_regularization_strength=0.2,
        l2_regularization_strength=0.1),
        ref_ftrl(_f32(0.3), lr_power=_f32(-0.7), l1=_f32(0.2), l2=_f32(0.1))),
    "ftrl_v2_shrinkage": (lambda: tf.train.FtrlOptimizer(
        0.3, l1_regularization_strength=0.05, l2_shrinkage_regularization_strength=0.2),
        ref_ftrl(_f32(0.3), l1=_f32(0.05), l2_shrinkage=_f32(0.2))),
}


def _cube_loss(w):
    return tf.reduce_sum(w * C + w * w * w / 3.0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("case", sorted(CASES))
def test_updates_match_numpy_over_several_steps(case, dtype, sess):
    make_optimizer, reference = CASES[case]
    w = tf.Variable(W0.astype(dtype), name="w")
    global_step = tf.train.get_or_create_global_step()
    train = make_optimizer().minimize(_cube_loss(w), global_step=global_step)
    sess.run(tf.global_variables_initializer())
    expected, state = W0.copy(), {}
    for t in range(1, STEPS + 1):
        expected = reference(expected, _grad(expected), state, t)
        sess.run(train)
        actual = sess.run(w)
        assert actual.dtype == dtype
        tolerance = dict(rtol=1e-12, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5,
                                                                                 atol=2e-6)
        np.testing.assert_allclose(actual, expected, err_msg="%s step %d" % (case, t),
                                   **tolerance)
    assert sess.run(global_step) == STEPS


# ---- the graph an optimizer builds --------------------------------------------------
def test_one_fused_update_op_per_variable_named_like_tf():
    w = tf.Variable([1.0, 2.0], name="w")
    b = tf.Variable(0.5, name="b")
    train = tf.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(w * w) + b)
    graph = tf.get_default_graph()
    assert train.name == "Adam" and train.type == "NoOp"
    assert graph.get_operation_by_name("Adam/update_w/ApplyAdam").type == "ApplyAdam"
    assert graph.get_operation_by_name("Adam/update_b/ApplyAdam").type == "ApplyAdam"
    assert [op.type for op in graph.get_operations()].count("ApplyAdam") == 2
    assert train in graph.get_collection(tf.GraphKeys.TRAIN_OP)


def test_slots_get_slot_and_variables():
    w = tf.Variable([1.0, 2.0], name="w")
    b = tf.Variable(0.5, name="b")
    opt = tf.train.AdamOptimizer(0.1)
    opt.minimize(tf.reduce_sum(w * w) + b)
    assert opt.get_slot_names() == ["m", "v"]
    assert opt.get_slot(w, "m").name == "w/Adam:0"
    assert opt.get_slot(w, "v").name == "w/Adam_1:0"
    assert opt.get_slot(w, "nope") is None
    assert opt.get_slot(w, "m").shape.as_list() == [2]
    assert not opt.get_slot(w, "m").trainable
    assert [v.name for v in opt.variables()] == [
        "b/Adam:0", "b/Adam_1:0", "beta1_power:0", "beta2_power:0", "w/Adam:0", "w/Adam_1:0"]
    assert opt.get_slot(w, "m") in tf.global_variables()
    assert opt.get_slot(w, "m") not in tf.trainable_variables()


def test_rmsprop_slot_names_follow_tf_order():
    w = tf.Variable([1.0, 2.0], name="w")
    opt = tf.train.RMSPropOptimizer(0.1, centered=True)
    opt.minimize(tf.reduce_sum(w * w))
    assert opt.get_slot_names() == ["mg", "momentum", "rms"]
    assert [opt.get_slot(w, n).name for n in ("rms", "mg", "momentum")] == [
        "w/RMSProp:0", "w/RMSProp_1:0", "w/RMSProp_2:0"]


def test_adam_beta_powers_advance_after_each_step(sess):
    w = tf.Variable([1.0, 2.0], name="w")
    opt = tf.train.AdamOptimizer(0.1, beta1=0.8, beta2=0.9)
    train = opt.minimize(tf.reduce_sum(w * w))
    beta1_power, beta2_power = opt._get_beta_accumulators()
    sess.run(tf.global_variables_initializer())
    for _ in range(3):
        sess.run(train)
    np.testing.assert_allclose(sess.run([beta1_power, beta2_power]), [0.8 ** 4, 0.9 ** 4],
                               rtol=1e-6)


def test_update_op_checks_shapes_when_built():
    w = tf.Variable([1.0, 2.0], name="w")
    opt = tf.train.GradientDescentOptimizer(0.1)
    with pytest.raises(ValueError, match="ApplyGradientDescent"):
        opt.apply_gradients([(tf.constant([1.0, 2.0, 3.0]), w)])
    with pytest.raises(ValueError, match="rank 0"):
        tf.train.GradientDescentOptimizer(tf.constant([0.1, 0.2])).apply_gradients(
            [(tf.constant([1.0, 2.0]), w)])


def test_uninitialized_slot_fails_at_run_time(sess):
    w = tf.Variable([1.0, 2.0], name="w")
    train = tf.train.MomentumOptimizer(0.1, 0.9).minimize(tf.reduce_sum(w * w))
    sess.run(w.initializer)
    with pytest.raises(tf.errors.FailedPreconditionError, match="w/Momentum"):
        sess.run(train)


# ---- minimize / compute_gradients / apply_gradients -------------------------------------
def test_global_step_increments_and_train_op_is_the_increment(sess):
    w = tf.Variable(3.0, name="w")
    step = tf.train.get_or_create_global_step()
    train = tf.train.GradientDescentOptimizer(0.25).minimize(w * w, global_step=step)
    assert train.type == "AssignAdd" and train.name == "GradientDescent"
    sess.run(tf.global_variables_initializer())
    for _ in range(3):
        sess.run(train)
    assert sess.run(step) == 3
    assert tf.train.global_step(sess, step) == 3
    assert sess.run(w) == pytest.approx(3.0 * 0.5 ** 3)   # w -= 0.25 * 2w halves w


def test_var_list_restricts_the_update(sess):
    w = tf.Variable(1.0, name="w")
    b = tf.Variable(1.0, name="b")
    train = tf.train.GradientDescentOptimizer(0.5).minimize(w * b, var_list=[w])
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    assert sess.run([w, b]) == [pytest.approx(0.5), pytest.approx(1.0)]


def test_variables_without_gradient_are_skipped(sess):
    w = tf.Variable(2.0, name="w")
    unused = tf.Variable(7.0, name="unused")
    opt = tf.train.GradientDescentOptimizer(0.5)
    grads_and_vars = opt.compute_gradients(w * w)
    assert [v for _, v in grads_and_vars] == [w, unused]
    assert grads_and_vars[1][0] is None
    train = opt.apply_gradients(grads_and_vars)
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    assert sess.run([w, unused]) == [pytest.approx(0.0), pytest.approx(7.0)]


def test_no_gradients_is_a_value_error():
    w = tf.Variable(2.0, name="w")
    opt = tf.train.GradientDescentOptimizer(0.5)
    with pytest.raises(ValueError, match="No gradients provided for any variable, check your "
                                         "graph"):
        opt.minimize(tf.constant(2.0) * 3.0, var_list=[w])
    with pytest.raises(ValueError, match="No gradients provided for any variable: "):
        opt.apply_gradients([(None, w)])
    with pytest.raises(ValueError, match="No variables provided"):
        opt.apply_gradients([])


def test_compute_gradients_argument_errors():
    opt = tf.train.GradientDescentOptimizer(0.5)
    with pytest.raises(ValueError, match="No variables to optimize"):
        opt.compute_gradients(tf.constant(1.0))
    w = tf.Variable(2.0, name="w")
    with pytest.raises(ValueError, match="gate_gradients"):
        opt.compute_gradients(w * w, gate_gradients=7)
    with pytest.raises(ValueError, match="Invalid type"):
        opt.compute_gradients(tf.constant(1), var_list=[w])
    with pytest.raises(NotImplementedError, match="Trying to update a Tensor"):
        opt.compute_gradients(w * w, var_list=[tf.constant(1.0)])
    with pytest.raises(TypeError, match="Gradient must be convertible"):
        opt.apply_gradients([(object(), w)])


def test_gate_graph_and_callable_loss(sess):
    w = tf.Variable(2.0, name="w")
    opt = tf.train.GradientDescentOptimizer(0.5)
    [(grad, var)] = opt.compute_gradients(lambda: w * w, gate_gradients=opt.GATE_GRAPH)
    sess.run(tf.global_variables_initializer())
    assert var is w and sess.run(grad) == pytest.approx(4.0)


def test_learning_rate_can_be_a_placeholder(sess):
    w = tf.Variable(1.0, name="w")
    lr = tf.placeholder(tf.float32, [], name="lr")
    train = tf.train.MomentumOptimizer(lr, 0.5).minimize(w * w)
    sess.run(tf.global_variables_initializer())
    expected, accum = 1.0, 0.0
    for rate in (0.1, 0.3, 0.05):
        accum = 0.5 * accum + 2 * expected
        expected -= rate * accum
        sess.run(train, {lr: rate})
        assert sess.run(w) == pytest.approx(expected, rel=1e-6)


def test_learning_rate_can_be_a_decayed_tensor(sess):
    w = tf.Variable(1.0, name="w")
    step = tf.train.get_or_create_global_step()
    lr = tf.train.exponential_decay(0.2, step, decay_steps=2, decay_rate=0.5, staircase=True)
    train = tf.train.GradientDescentOptimizer(lr).minimize(w * w, global_step=step)
    sess.run(tf.global_variables_initializer())
    expected = 1.0
    for t in range(5):
        expected -= 0.2 * 0.5 ** (t // 2) * 2 * expected
        sess.run(train)
    assert sess.run(w) == pytest.approx(expected, rel=1e-6)


def test_gradient_clipping_pattern(sess):
    w = tf.Variable([3.0, 0.0], name="w")
    b = tf.Variable(4.0, name="b")
    loss = tf.reduce_sum(w * w) / 2.0 + b * b / 2.0     # gradients: w and b
    opt = tf.train.GradientDescentOptimizer(1.0)
    grads, variables = zip(*opt.compute_gradients(loss))
    clipped, norm = tf.clip_by_global_norm(grads, 1.0)
    train = opt.apply_gradients(zip(clipped, variables))
    sess.run(tf.global_variables_initializer())
    assert sess.run(norm) == pytest.approx(5.0)
    sess.run(train)
    np.testing.assert_allclose(sess.run(w), [3.0 - 0.6, 0.0], rtol=1e-6)
    assert sess.run(b) == pytest.approx(4.0 - 0.8)


def test_clip_by_value_pattern(sess):
    w = tf.Variable([3.0, -0.2], name="w")
    opt = tf.train.GradientDescentOptimizer(1.0)
    grads_and_vars = [(tf.clip_by_value(g, -1.0, 1.0), v)
                      for g, v in opt.compute_gradients(tf.reduce_sum(w * w))]
    train = opt.apply_gradients(grads_and_vars)
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    np.testing.assert_allclose(sess.run(w), [2.0, 0.2], rtol=1e-6)


def test_constraint_is_applied_after_the_update(sess):
    w = tf.Variable([0.5, -0.5], name="w", constraint=lambda v: tf.clip_by_value(v, 0.0, 1.0))
    train = tf.train.GradientDescentOptimizer(1.0).minimize(-tf.reduce_sum(w))
    sess.run(tf.global_variables_initializer())
    sess.run(train)
    np.testing.assert_allclose(sess.run(w), [1.0, 0.5])


def test_a_fetched_value_does_not_change_when_the_variable_is_updated(sess):
    """The kernels write in place, but never into an array the user holds."""
    w = tf.Variable([1.0, 2.0], name="w")
    train = tf.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(w * w))
    sess.run(tf.global_variables_initializer())
    before = sess.run(w)
    history = []
    for _ in range(3):
        sess.run(train)
        history.append(sess.run(w))
    np.testing.assert_array_equal(before, [1.0, 2.0])
    assert not np.array_equal(history[0], history[1])
    assert not np.array_equal(history[1], history[2])


def test_constructor_argument_errors():
    with pytest.raises(ValueError, match="initial_accumulator_value must be positive"):
        tf.train.AdagradOptimizer(0.1, initial_accumulator_value=0.0)
    with pytest.raises(ValueError, match="learning_rate_power"):
        tf.train.FtrlOptimizer(0.1, learning_rate_power=0.5)
    with pytest.raises(ValueError, match="l1_regularization_strength"):
        tf.train.FtrlOptimizer(0.1, l1_regularization_strength=-1.0)


# ---- the global step ----------------------------------------------------------------------
def test_global_step_helpers():
    assert tf.train.get_global_step() is None
    step = tf.train.get_or_create_global_step()
    assert step.name == "global_step:0"
    assert step.dtype.base_dtype == tf.int64 and step.shape.as_list() == []
    assert not step.trainable
    assert tf.get_default_graph().get_collection(tf.GraphKeys.GLOBAL_STEP) == [step]
    assert tf.train.get_global_step() is step
    assert tf.train.get_or_create_global_step() is step
    with pytest.raises(ValueError, match="already exists"):
        tf.train.create_global_step()


def test_global_step_found_by_name_and_checked():
    step = tf.Variable(0.0, name="global_step")
    with pytest.raises(TypeError, match="integer"):
        tf.train.get_global_step()
    with pytest.raises(TypeError, match="scalar"):
        tf.train.assert_global_step(tf.Variable([1, 2], name="steps"))
    del step


# ---- clipping by norm ------------------------------------------------------------------------
def test_clip_ops_against_numpy(sess):
    a = np.array([3.0, 0.0, -1.0], np.float32)
    b = np.array([[4.0, 2.0]], np.float32)
    norm = np.sqrt(np.sum(a ** 2) + np.sum(b ** 2))
    clipped, global_norm = tf.clip_by_global_norm([a, None, b], 2.0)
    assert clipped[1] is None
    results = sess.run([clipped[0], clipped[2], global_norm, tf.global_norm([a, b])])
    np.testing.assert_allclose(results[0], a * 2.0 / norm, rtol=1e-6)
    np.testing.assert_allclose(results[1], b * 2.0 / norm, rtol=1e-6)
    assert results[2] == pytest.approx(norm) and results[3] == pytest.approx(norm)
    unchanged, _ = tf.clip_by_global_norm([a], 100.0)
    np.testing.assert_allclose(sess.run(unchanged[0]), a, rtol=1e-6)
    rows = np.array([[3.0, 4.0], [0.0, 0.0], [0.3, 0.4]], np.float32)
    row_norms = np.linalg.norm(rows, axis=1, keepdims=True)
    expected = rows * 1.0 / np.maximum(row_norms, 1.0)
    np.testing.assert_allclose(sess.run(tf.clip_by_norm(rows, 1.0, axes=[1])), expected,
                               rtol=1e-6)
    np.testing.assert_allclose(sess.run(tf.clip_by_norm(a, 1.0)), a / np.linalg.norm(a),
                               rtol=1e-6)
    avg = sess.run(tf.clip_by_average_norm(a, 0.5))
    np.testing.assert_allclose(avg, a * 0.5 * min(a.size / np.linalg.norm(a), 1 / 0.5),
                               rtol=1e-6)


def test_clip_by_global_norm_of_inf_is_nan(sess):
    clipped, _ = tf.clip_by_global_norm([np.array([1.0, 2.0], np.float32)], 1.0,
                                        use_norm=tf.constant(np.inf))
    assert np.all(np.isnan(sess.run(clipped[0])))
    with pytest.raises(TypeError, match="sequence"):
        tf.clip_by_global_norm(tf.constant([1.0]), 1.0)


def test_training_resumes_exactly_from_a_checkpoint(tmp_path):
    """Slots, beta powers and the global step are ordinary variables: Saver keeps them."""
    w = tf.Variable([1.0, 2.0], name="w")
    step = tf.train.get_or_create_global_step()
    opt = tf.train.AdamOptimizer(0.1)
    train = opt.minimize(tf.reduce_sum(w * w), global_step=step)
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train)
        path = saver.save(sess, str(tmp_path / "model"), global_step=step)
        sess.run(train)
        uninterrupted = sess.run(w)
    assert {name for name, _ in tf.train.list_variables(path)} == {
        "w", "w/Adam", "w/Adam_1", "beta1_power", "beta2_power", "global_step"}
    with tf.Session() as sess:
        saver.restore(sess, path)
        assert sess.run(step) == 3
        sess.run(train)
        np.testing.assert_array_equal(sess.run(w), uninterrupted)


def test_slot_and_non_slot_names_follow_the_scopes():
    """As in TF: slots nest in the variable scope, Adam's powers in the name scope."""
    with tf.variable_scope("layer"):
        w = tf.get_variable("w", [2], initializer=tf.zeros_initializer())
    with tf.name_scope("train"):
        adam = tf.train.AdamOptimizer(0.1)
        train = adam.minimize(tf.reduce_sum(w * w))
    assert train.name == "train/Adam"
    assert [v.name for v in adam.variables()] == [
        "layer/w/Adam:0", "layer/w/Adam_1:0", "train/beta1_power:0", "train/beta2_power:0"]
    with tf.variable_scope("outer"):
        momentum = tf.train.MomentumOptimizer(0.1, 0.9)
        momentum.minimize(tf.reduce_sum(w * w))
    assert momentum.get_slot(w, "momentum").name == "outer/layer/w/Momentum:0"
