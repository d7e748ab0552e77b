"""Optimizers applying sparse gradients (``IndexedSlices``) as TF1's ``SparseApply*`` ops.

Every optimizer is given the same IndexedSlices of a 5x3 variable: rows 3, 0
and 3 again.  The expectations are hand-written NumPy: the two rows of index
3 summed first (``_apply_sparse_duplicate_indices``), then the optimizer's
formula applied to rows 0 and 3 only.  The other rows of the variable *and
of its slots* must not move at all — compared exactly.  Adam is the
exception TF1 makes: its moments decay in every row.
"""

import numpy as np
import pytest

import minitf as tf
from minitf.ops import training_ops

VAR0 = (np.arange(15.0).reshape(5, 3) / 10.0 - 0.7).astype(np.float32)
INDICES = [3, 0, 3]
VALUES = np.array([[0.1, -0.2, 0.3], [0.5, 0.6, -0.7], [0.2, 0.4, -0.1]], np.float32)
TOUCHED = [0, 3]
UNTOUCHED = [1, 2, 4]
STEPS = 3


def _summed_rows():
    """Row -> the summed gradient of that row (what the optimizers see)."""
    rows = {}
    for index, value in zip(INDICES, VALUES.astype(np.float64)):
        rows[index] = rows.get(index, 0.0) + value
    return rows


def _slices(values=VALUES, indices=INDICES):
    return tf.IndexedSlices(tf.constant(values), tf.constant(indices), tf.constant([5, 3]))


def _train(optimizer, slot_names, steps=STEPS, global_step=None):
    """``steps`` updates with the slices; the variable's and its slots' values."""
    var = tf.Variable(VAR0, name="var")
    train = optimizer.apply_gradients([(_slices(), var)], global_step=global_step)
    slots = {name: optimizer.get_slot(var, name) for name in slot_names}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        slots0 = sess.run(slots)
        for _ in range(steps):
            sess.run(train)
        return sess.run(var), sess.run(slots), slots0


def _reference(update, slots0, steps=STEPS):
    """``update(var_row, slot_rows..., grad_row)`` -> new rows, applied to the touched rows."""
    var = VAR0.astype(np.float64).copy()
    slots = {name: value.astype(np.float64).copy() for name, value in slots0.items()}
    for _ in range(steps):
        for row, grad in _summed_rows().items():
            new = update(var[row], *[slots[name][row] for name in slots], grad)
            var[row] = new[0]
            for name, value in zip(slots, new[1:]):
                slots[name][row] = value
    return var, slots


def _check(optimizer, update, slot_names, **kwargs):
    var, slots, slots0 = _train(optimizer, slot_names, **kwargs)
    expected_var, expected_slots = _reference(update, slots0)
    np.testing.assert_allclose(var, expected_var, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(var[UNTOUCHED], VAR0[UNTOUCHED])
    for name in slot_names:
        np.testing.assert_allclose(slots[name], expected_slots[name], rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(slots[name][UNTOUCHED], slots0[name][UNTOUCHED])
    assert not np.allclose(var[TOUCHED], VAR0[TOUCHED])


# ---- one optimizer at a time -------------------------------------------------------------
def test_gradient_descent_subtracts_each_row_scatter_sub():
    def update(var, g):
        return (var - 0.1 * g,)
    _check(tf.train.GradientDescentOptimizer(0.1), update, [])
    ops = {op.type for op in tf.get_default_graph().get_operations()}
    assert "ScatterSub" in ops and "Unique" not in ops  # repeated rows need no summing


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum(nesterov):
    def update(var, accum, g):
        accum = accum * 0.9 + g
        step = 0.1 * g + 0.1 * 0.9 * accum if nesterov else 0.1 * accum
        return var - step, accum
    _check(tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=nesterov), update, ["momentum"])
    assert "SparseApplyMomentum" in {op.type for op in tf.get_default_graph().get_operations()}


def test_rmsprop():
    def update(var, rms, mom, g):
        rms = 0.8 * rms + 0.2 * g * g
        mom = 0.5 * mom + 0.1 * g / np.sqrt(rms + 1e-6)
        return var - mom, rms, mom
    _check(tf.train.RMSPropOptimizer(0.1, decay=0.8, momentum=0.5, epsilon=1e-6), update,
           ["rms", "momentum"])


def test_centered_rmsprop():
    def update(var, rms, mg, mom, g):
        rms = 0.8 * rms + 0.2 * g * g
        mg = 0.8 * mg + 0.2 * g
        mom = 0.5 * mom + 0.1 * g / np.sqrt(rms - mg * mg + 1e-6)
        return var - mom, rms, mg, mom
    _check(tf.train.RMSPropOptimizer(0.1, decay=0.8, momentum=0.5, epsilon=1e-6, centered=True),
           update, ["rms", "mg", "momentum"])


def test_adagrad_sums_repeated_rows_before_squaring():
    def update(var, accum, g):
        accum = accum + g * g          # the square of the sum, not the sum of the squares
        return var - 0.1 * g / np.sqrt(accum), accum
    _check(tf.train.AdagradOptimizer(0.1), update, ["accumulator"])
    ops = {op.type for op in tf.get_default_graph().get_operations()}
    assert {"Unique", "UnsortedSegmentSum", "SparseApplyAdagrad"} <= ops


def test_adagrad_da():
    """The variable is recomputed from the accumulators, with ``t = global_step + 1``."""
    global_step = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")
    optimizer = tf.train.AdagradDAOptimizer(0.1, global_step, l1_regularization_strength=0.01,
                                            l2_regularization_strength=0.2)
    names = ["gradient_accumulator", "gradient_squared_accumulator"]
    var, slots, slots0 = _train(optimizer, names, global_step=global_step)
    expected = VAR0.astype(np.float64).copy()
    g_acc, gg_acc = (slots0[name].astype(np.float64) for name in names)
    for t in range(1, STEPS + 1):
        for row, g in _summed_rows().items():
            g_acc[row] += g
            gg_acc[row] += g * g
            shrunk = np.maximum(np.abs(g_acc[row]) - 0.01 * t, 0)
            expected[row] = (-0.1 * np.sign(g_acc[row]) * shrunk
                             / (0.2 * t * 0.1 + np.sqrt(gg_acc[row])))
    np.testing.assert_allclose(var, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(var[UNTOUCHED], VAR0[UNTOUCHED])
    for name, value in zip(names, (g_acc, gg_acc)):
        np.testing.assert_allclose(slots[name], value, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(slots[name][UNTOUCHED], slots0[name][UNTOUCHED])


def _ftrl_update(l2_shrinkage):
    lr, l1, l2, power = 0.1, 0.01, 0.2, -0.5

    def update(var, accum, linear, g):
        new_accum = accum + g * g
        g_linear = g + 2 * l2_shrinkage * var
        linear = linear + g_linear - (new_accum ** -power - accum ** -power) / lr * var
        quadratic = new_accum ** -power / lr + 2 * l2
        var = np.where(np.abs(linear) > l1, (np.sign(linear) * l1 - linear) / quadratic, 0.0)
        return var, new_accum, linear
    return update


@pytest.mark.parametrize("l2_shrinkage", [0.0, 0.3])
def test_ftrl(l2_shrinkage):
    optimizer = tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.01,
                                       l2_regularization_strength=0.2,
                                       l2_shrinkage_regularization_strength=l2_shrinkage)
    _check(optimizer, _ftrl_update(l2_shrinkage), ["accum", "linear"])
    op_type = "SparseApplyFtrlV2" if l2_shrinkage else "SparseApplyFtrl"
    assert op_type in {op.type for op in tf.get_default_graph().get_operations()}


def test_adadelta():
    def update(var, accum, accum_update, g):
        accum = 0.9 * accum + 0.1 * g * g
        step = np.sqrt(accum_update + 1e-6) / np.sqrt(accum + 1e-6) * g
        accum_update = 0.9 * accum_update + 0.1 * step * step
        return var - 1.0 * step, accum, accum_update
    _check(tf.train.AdadeltaOptimizer(1.0, rho=0.9, epsilon=1e-6), update,
           ["accum", "accum_update"])


def test_adam_decays_its_moments_in_every_row_as_tf1_does():
    """Step 1 touches rows 3 and 0, step 2 only row 1: rows 0 and 3 keep moving
    on their decayed moments in step 2 (TF1's Adam is not lazy)."""
    var = tf.Variable(VAR0)
    indices = tf.placeholder(tf.int32, [None])
    values = tf.placeholder(tf.float32, [None, 3])
    optimizer = tf.train.AdamOptimizer(0.1, beta1=0.9, beta2=0.99, epsilon=1e-8)
    train = optimizer.apply_gradients(
        [(tf.IndexedSlices(values, indices, tf.constant([5, 3])), var)])
    feeds = [(INDICES, VALUES), ([1], VALUES[:1])]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step_indices, step_values in feeds:
            sess.run(train, {indices: step_indices, values: step_values})
        got_var, got_m, got_v = sess.run([var, optimizer.get_slot(var, "m"),
                                          optimizer.get_slot(var, "v")])
    w, m, v = VAR0.astype(np.float64).copy(), np.zeros((5, 3)), np.zeros((5, 3))
    for t, (step_indices, step_values) in enumerate(feeds, start=1):
        g = np.zeros((5, 3))
        np.add.at(g, step_indices, step_values.astype(np.float64))
        m, v = 0.9 * m + 0.1 * g, 0.99 * v + 0.01 * g * g
        w -= 0.1 * np.sqrt(1 - 0.99 ** t) / (1 - 0.9 ** t) * m / (np.sqrt(v) + 1e-8)
    np.testing.assert_allclose(got_m, m, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(got_v, v, rtol=1e-5, atol=1e-9)
    np.testing.assert_allclose(got_var, w, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got_var[[2, 4]], VAR0[[2, 4]])  # never touched: m stays 0
    ops = {op.type for op in tf.get_default_graph().get_operations()}
    assert "ScatterAdd" in ops and "ApplyAdam" not in ops


# ---- the bug this fixes: untouched rows of an embedding no longer move ---------------------
@pytest.mark.parametrize("make", [
    lambda: tf.train.MomentumOptimizer(0.1, 0.9),
    lambda: tf.train.RMSPropOptimizer(0.1, momentum=0.9),
    lambda: tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.1),
    lambda: tf.train.AdagradOptimizer(0.1),
], ids=["momentum", "rmsprop", "ftrl", "adagrad"])
def test_rows_not_looked_up_keep_their_values_over_several_steps(make):
    emb = tf.Variable(VAR0)
    ids = tf.placeholder(tf.int32, [None])
    train = make().minimize(tf.reduce_sum(tf.square(tf.nn.embedding_lookup(emb, ids))))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train, {ids: [0, 1]})
        after_first = sess.run(emb)
        for _ in range(3):
            sess.run(train, {ids: [2]})    # rows 0 and 1 have a velocity now
        final = sess.run(emb)
    np.testing.assert_array_equal(final[[0, 1]], after_first[[0, 1]])
    np.testing.assert_array_equal(final[[3, 4]], VAR0[[3, 4]])
    assert not np.allclose(final[2], VAR0[2])


# ---- the SparseApply* ops themselves -----------------------------------------------------------
def test_a_sparse_apply_op_given_repeated_indices_applies_them_in_turn(sess):
    var = tf.Variable(np.ones((3, 2), np.float32))
    accum = tf.Variable(np.full((3, 2), 0.1, np.float32))
    update = training_ops.sparse_apply_adagrad(var, accum, 0.5, tf.constant([[1.0, 2.0],
                                                                             [3.0, 4.0]]),
                                               tf.constant([1, 1]))
    sess.run(tf.global_variables_initializer())
    got = sess.run(update)
    expected_var, expected_accum = np.ones(2), np.full(2, 0.1)
    for g in ([1.0, 2.0], [3.0, 4.0]):
        expected_accum += np.square(g)
        expected_var -= 0.5 * np.array(g) / np.sqrt(expected_accum)
    np.testing.assert_allclose(got[1], expected_var, rtol=1e-5)
    np.testing.assert_allclose(sess.run(accum)[1], expected_accum, rtol=1e-6)
    np.testing.assert_array_equal(got[[0, 2]], np.ones((2, 2)))


def test_a_sparse_apply_op_rejects_an_index_out_of_range(sess):
    var = tf.Variable(np.ones((3, 2), np.float32))
    accum = tf.Variable(np.zeros((3, 2), np.float32))
    update = training_ops.sparse_apply_momentum(var, accum, 0.1, tf.ones([2, 2]),
                                                tf.constant([0, 3]), 0.9)
    sess.run(tf.global_variables_initializer())
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Index 3 at offset 1 in indices is out of range"):
        sess.run(update)
    np.testing.assert_array_equal(sess.run(var), np.ones((3, 2)))


def test_sparse_apply_shapes_and_dtypes_are_checked_when_built():
    var = tf.Variable(np.ones((3, 2), np.float32))
    accum = tf.Variable(np.zeros((3, 2), np.float32))

    def build(grad, indices):
        return training_ops.sparse_apply_momentum(var, accum, 0.1, grad, indices, 0.9)

    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 1"):
        build(tf.ones([1, 2]), tf.constant([0, 1]))
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        build(tf.ones([1, 2]), tf.constant([[0]]))
    with pytest.raises(ValueError, match="input 'grad' has shape"):
        build(tf.ones([1, 3]), tf.constant([0]))
    with pytest.raises(TypeError, match="'indices' has DataType float32"):
        build(tf.ones([1, 2]), tf.constant([0.0]))
    with pytest.raises(ValueError, match="Shape must be rank 0"):
        training_ops.sparse_apply_momentum(var, accum, [0.1], tf.ones([1, 2]), [0], 0.9)


# ---- the scatter ops -------------------------------------------------------------------------
def test_scatter_add_sub_update(sess):
    v = tf.Variable(np.zeros((3, 2), np.float32))
    sess.run(v.initializer)
    added = sess.run(tf.scatter_add(v, [2, 0, 2], [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]))
    np.testing.assert_array_equal(added, [[2, 2], [0, 0], [4, 4]])  # row 2 named twice
    np.testing.assert_array_equal(sess.run(tf.scatter_sub(v, [[0], [1]], 1.0)),
                                  [[1, 1], [-1, -1], [4, 4]])          # a scalar for each row
    np.testing.assert_array_equal(sess.run(tf.scatter_update(v, [1], [[7.0, 8.0]])),
                                  [[1, 1], [7, 8], [4, 4]])
    assert tf.scatter_add(v, [0], [[1.0, 1.0]]).dtype.is_ref


def test_scatter_errors(sess):
    v = tf.Variable(np.zeros((3, 2), np.float32))
    with pytest.raises(ValueError, match="updates must have the shape indices.shape"):
        tf.scatter_add(v, [0], [[1.0, 2.0, 3.0]])
    with pytest.raises(TypeError, match="variable reference"):
        tf.scatter_add(tf.zeros([3, 2]), [0], [[1.0, 2.0]])
    sess.run(v.initializer)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = 5 is not in "
                                                             r"\[0, 3\)"):
        sess.run(tf.scatter_add(v, [0, 5], [[1.0, 2.0], [3.0, 4.0]]))


def test_lazy_adam_updates_only_the_named_rows(sess):
    """``tf.contrib.opt.LazyAdamOptimizer``: m, v and the variable change only in
    the rows of the gradient (repeated rows added up first)."""
    table = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    var = tf.Variable(table)
    grad = tf.IndexedSlices(tf.constant([[0.5, 1.0], [0.25, 0.5], [1.0, -1.0]], tf.float64),
                            tf.constant([2, 0, 2]), tf.constant([3, 2]))
    optimizer = tf.contrib.opt.LazyAdamOptimizer(0.1)
    train = optimizer.apply_gradients([(grad, var)])
    m_slot, v_slot = optimizer.get_slot(var, "m"), optimizer.get_slot(var, "v")
    sess.run(tf.global_variables_initializer())
    rows = {0: np.array([0.25, 0.5]), 2: np.array([1.5, 0.0])}
    value, m, v = table.copy(), np.zeros((3, 2)), np.zeros((3, 2))
    for t in (1, 2):
        sess.run(train)
        lr = 0.1 * np.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
        for row, g in rows.items():
            m[row] = 0.9 * m[row] + 0.1 * g
            v[row] = 0.999 * v[row] + 0.001 * g * g
            value[row] -= lr * m[row] / (np.sqrt(v[row]) + 1e-8)
    # (the hyperparameters are float32 constants cast to float64, as in TF)
    np.testing.assert_allclose(sess.run(var), value, rtol=1e-6)
    np.testing.assert_allclose(sess.run(m_slot), m, rtol=1e-6)
    np.testing.assert_allclose(sess.run(v_slot), v, rtol=1e-4)
    np.testing.assert_array_equal(sess.run(var)[1], table[1])  # untouched: no momentum step
    with pytest.raises(AttributeError, match="minitf does not provide tf.contrib.opt.Nadam"):
        tf.contrib.opt.NadamOptimizer  # noqa: B018
