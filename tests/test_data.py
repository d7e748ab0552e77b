"""tf.data: datasets as graph ops, iterators as session state.

Expected values are written out by hand; semantics (element order, batch
remainders, shuffle seeding, error messages) follow TF 1.x.
"""

import threading

import numpy as np
import pytest

import minitf as tf
from minitf.data import function as function_lib
from minitf.data import structure


def drain(sess, next_element, limit=1000):
    """Runs ``next_element`` until ``OutOfRangeError``; returns the values."""
    values = []
    for _ in range(limit):
        try:
            values.append(sess.run(next_element))
        except tf.errors.OutOfRangeError:
            return values
    raise AssertionError("no OutOfRangeError after %d elements" % limit)


def elements(dataset):
    """All elements of ``dataset`` through a one-shot iterator in a fresh session."""
    next_element = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        return drain(sess, next_element)


def as_lists(values):
    return [np.asarray(v).tolist() for v in values]


def text(value):
    """A fetched string as str (whether the session returns str or bytes)."""
    return value.decode() if isinstance(value, bytes) else value


# ---- structures ------------------------------------------------------------------------
def test_structure_flattens_dicts_by_sorted_key_and_keeps_lists_whole():
    element = ({"b": 1, "a": [2, 3]}, (4,))
    assert structure.flatten(element) == [[2, 3], 1, 4]
    assert structure.pack_sequence_as(element, ["A", "B", "C"]) == ({"b": "B", "a": "A"}, ("C",))
    with pytest.raises(ValueError):
        structure.assert_same_structure((1, 2), (1, (2, 3)))


# ---- sources -------------------------------------------------------------------------
def test_from_tensor_slices_yields_rows_in_order_then_end_of_sequence():
    dataset = tf.data.Dataset.from_tensor_slices([[1, 2], [3, 4], [5, 6]])
    assert dataset.output_types == tf.int32
    assert dataset.output_shapes.as_list() == [2]
    next_element = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert as_lists(sess.run(next_element) for _ in range(3)) == [[1, 2], [3, 4], [5, 6]]
        with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
            sess.run(next_element)
        with pytest.raises(tf.errors.OutOfRangeError):  # and it stays at the end
            sess.run(next_element)


def test_from_tensor_slices_of_nested_tuples_and_dicts():
    dataset = tf.data.Dataset.from_tensor_slices(
        ({"a": [1, 2], "b": [[1.0], [2.0]]}, ([10, 20], ["x", "y"])))
    assert dataset.output_types == ({"a": tf.int32, "b": tf.float32}, (tf.int32, tf.string))
    shapes = dataset.output_shapes
    assert shapes[0]["a"].as_list() == [] and shapes[0]["b"].as_list() == [1]
    assert dataset.output_classes == ({"a": tf.Tensor, "b": tf.Tensor}, (tf.Tensor, tf.Tensor))
    first, second = elements(dataset)
    assert first[0]["a"] == 1 and first[0]["b"].tolist() == [1.0]
    assert first[1][0] == 10 and text(first[1][1]) == "x"
    assert second[0]["a"] == 2 and second[1][0] == 20 and text(second[1][1]) == "y"


def test_from_tensor_slices_rejects_scalars_and_mismatched_sizes():
    with pytest.raises(ValueError, match="rank >= 1"):
        tf.data.Dataset.from_tensor_slices(1.0)
    with pytest.raises(ValueError, match="not compatible"):
        tf.data.Dataset.from_tensor_slices(([1, 2, 3], [1, 2]))


def test_from_tensors_is_one_element():
    dataset = tf.data.Dataset.from_tensors(([1, 2], 3.0))
    assert dataset.output_shapes[0].as_list() == [2]
    (value,) = elements(dataset)
    assert value[0].tolist() == [1, 2] and value[1] == 3.0


@pytest.mark.parametrize("args, expected", [
    ((4,), [0, 1, 2, 3]),
    ((2, 5), [2, 3, 4]),
    ((1, 10, 4), [1, 5, 9]),
    ((5, 0, -2), [5, 3, 1]),
    ((3, 3), []),
])
def test_range(args, expected):
    dataset = tf.data.Dataset.range(*args)
    assert dataset.output_types == tf.int64
    assert [int(v) for v in elements(dataset)] == expected


def test_from_generator_with_types_and_shapes():
    def gen():
        for i in range(3):
            yield i, [1.0] * i

    dataset = tf.data.Dataset.from_generator(gen, (tf.int64, tf.float32), ([], [None]))
    assert dataset.output_types == (tf.int64, tf.float32)
    assert [s.as_list() for s in dataset.output_shapes] == [[], [None]]
    values = elements(dataset)
    assert [int(i) for i, _ in values] == [0, 1, 2]
    assert [v.tolist() for _, v in values] == [[], [1.0], [1.0, 1.0]]
    assert values[1][1].dtype == np.float32


def test_from_generator_is_called_again_for_every_pass():
    dataset = tf.data.Dataset.from_generator(lambda: iter([1, 2]), tf.int32).repeat(3)
    assert dataset.output_shapes.ndims is None
    assert [int(v) for v in elements(dataset)] == [1, 2, 1, 2, 1, 2]


def test_from_generator_element_of_wrong_shape_is_invalid_argument():
    dataset = tf.data.Dataset.from_generator(lambda: iter([[1], [2, 3]]), tf.int32, [1])
    next_element = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert sess.run(next_element).tolist() == [1]
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"shape \(2,\)"):
            sess.run(next_element)


# ---- transformations -----------------------------------------------------------------
def test_batch_keeps_the_remainder_unless_dropped():
    dataset = tf.data.Dataset.range(7)
    kept = dataset.batch(3)
    assert kept.output_shapes.as_list() == [None]
    assert as_lists(elements(kept)) == [[0, 1, 2], [3, 4, 5], [6]]
    dropped = dataset.batch(3, drop_remainder=True)
    assert dropped.output_shapes.as_list() == [3]
    assert as_lists(elements(dropped)) == [[0, 1, 2], [3, 4, 5]]


def test_batch_of_tuples_batches_each_component():
    dataset = tf.data.Dataset.from_tensor_slices(([1, 2, 3], [[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]))
    (a1, b1), (a2, b2) = elements(dataset.batch(2))
    assert a1.tolist() == [1, 2] and b1.tolist() == [[1.0, 1.0], [2.0, 2.0]]
    assert a2.tolist() == [3] and b2.shape == (1, 2)


def test_batch_size_may_be_a_placeholder():
    size = tf.placeholder(tf.int64, [])
    it = tf.data.Dataset.range(5).batch(size).make_initializable_iterator()
    next_element = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer, {size: 2})
        assert as_lists(drain(sess, next_element)) == [[0, 1], [2, 3], [4]]
        sess.run(it.initializer, {size: 4})
        assert as_lists(drain(sess, next_element)) == [[0, 1, 2, 3], [4]]


def test_repeat_then_batch_crosses_epoch_boundaries():
    dataset = tf.data.Dataset.range(3).repeat(2).batch(4)
    assert as_lists(elements(dataset)) == [[0, 1, 2, 0], [1, 2]]


def test_batch_then_repeat_repeats_the_batches():
    dataset = tf.data.Dataset.range(3).batch(2).repeat(2)
    assert as_lists(elements(dataset)) == [[0, 1], [2], [0, 1], [2]]


def test_repeat_forever_with_take():
    dataset = tf.data.Dataset.range(2).repeat().take(5)
    assert [int(v) for v in elements(dataset)] == [0, 1, 0, 1, 0]


@pytest.mark.parametrize("take, skip, expected", [
    (3, 0, [0, 1, 2]), (-1, 2, [2, 3, 4]), (2, 1, [1, 2]), (0, 0, []), (10, -1, [])])
def test_take_and_skip(take, skip, expected):
    dataset = tf.data.Dataset.range(5).skip(skip).take(take)
    assert [int(v) for v in elements(dataset)] == expected


def test_map_passes_tuple_components_as_arguments():
    dataset = tf.data.Dataset.from_tensor_slices(([1, 2, 3], [10, 20, 30]))
    mapped = dataset.map(lambda x, y: {"sum": x + y, "x": x * 2})
    assert mapped.output_types == {"sum": tf.int32, "x": tf.int32}
    assert [(int(e["sum"]), int(e["x"])) for e in elements(mapped)] == [(11, 2), (22, 4), (33, 6)]


def test_map_returning_a_list_gives_a_tuple_and_constants_are_allowed():
    dataset = tf.data.Dataset.from_tensor_slices([[1], [2]]).map(lambda x: [x, x * 2, 7])
    assert dataset.output_types == (tf.int32, tf.int32, tf.int32)
    assert [s.as_list() for s in dataset.output_shapes] == [[1], [1], []]
    values = elements(dataset)
    assert [(a.tolist(), b.tolist(), int(c)) for a, b, c in values] == [([1], [2], 7),
                                                                         ([2], [4], 7)]


def test_map_of_a_dict_element_gets_one_argument():
    dataset = tf.data.Dataset.from_tensor_slices({"a": [1.0, 2.0], "b": [3.0, 4.0]})
    mapped = dataset.map(lambda d: d["a"] * d["b"])
    assert [float(v) for v in elements(mapped)] == [3.0, 8.0]


def test_map_function_is_traced_once_into_its_own_graph():
    calls = []

    def fn(x):
        calls.append(x)
        return x + 1

    dataset = tf.data.Dataset.range(4).map(fn)
    assert len(calls) == 1 and calls[0].graph is not tf.get_default_graph()
    assert [int(v) for v in elements(dataset)] == [1, 2, 3, 4]
    assert len(calls) == 1
    map_op = dataset._variant_tensor.op
    assert map_op.type == "MapDataset" and isinstance(map_op.get_attr("f"), str)


def test_map_function_session_is_made_once_per_initialization(monkeypatch):
    made = []
    instantiate = function_lib.DatasetFunction.instantiate

    def counting_instantiate(fn, captured_values=()):
        made.append(fn)
        return instantiate(fn, captured_values)

    monkeypatch.setattr(function_lib.DatasetFunction, "instantiate", counting_instantiate)
    it = tf.data.Dataset.range(3).map(lambda x: x * 2).repeat(4).make_initializable_iterator()
    next_element = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer)
        assert [int(v) for v in drain(sess, next_element)] == [0, 2, 4] * 4
        assert len(made) == 1  # one private session for all four epochs
        sess.run(it.initializer)
        assert len(drain(sess, next_element)) == 12 and len(made) == 2


def test_map_captures_outer_tensors_as_extra_inputs():
    scale = tf.constant(2, tf.int64, name="scale")
    offset = tf.placeholder(tf.int64, [], name="offset")
    mapped = tf.data.Dataset.range(3).map(lambda x: x * scale + offset)
    map_op = mapped._variant_tensor.op
    assert map_op.type == "MapDataset"
    assert [t.name for t in map_op.inputs[1:]] == ["scale:0", "offset:0"]  # other_arguments
    it = mapped.make_initializable_iterator()
    next_element = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer, {offset: 10})  # captured values are read here
        assert [int(v) for v in drain(sess, next_element)] == [10, 12, 14]
        sess.run(it.initializer, {offset: 100})
        assert [int(v) for v in drain(sess, next_element)] == [100, 102, 104]
    with pytest.raises(ValueError, match="Cannot capture a placeholder"):
        mapped.make_one_shot_iterator()  # as in TF: a one-shot iterator cannot be fed


def test_captures_in_filter_flat_map_and_nested_functions():
    limit = tf.Variable(tf.constant(2, tf.int64), name="limit")
    kept = tf.data.Dataset.range(5).filter(lambda x: x > limit)
    repeats = tf.constant(2, tf.int64)
    nested = tf.data.Dataset.range(1, 3).flat_map(  # the inner map captures from the top
        lambda x: tf.data.Dataset.from_tensors(x).repeat(repeats).map(lambda y: y * repeats))
    returned = tf.data.Dataset.range(2).map(lambda x: (x, repeats))  # an outer tensor returned
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for dataset, expected in [(kept, [3, 4]), (nested, [2, 2, 4, 4])]:
            it = dataset.make_initializable_iterator()
            sess.run(it.initializer)
            assert [int(v) for v in drain(sess, it.get_next())] == expected
        it = returned.make_initializable_iterator()
        sess.run(it.initializer)
        assert [tuple(int(c) for c in v) for v in drain(sess, it.get_next())] == [(0, 2), (1, 2)]


def test_map_cannot_use_tensors_of_an_unrelated_graph():
    with tf.Graph().as_default():
        foreign = tf.constant(2, tf.int64)
    with pytest.raises(ValueError, match="must be from the same graph"):
        tf.data.Dataset.range(3).map(lambda x: x * foreign)


def test_map_error_is_reported_by_get_next():
    dataset = tf.data.Dataset.from_tensor_slices([2, 0]).map(lambda x: tf.floordiv(4, x))
    next_element = dataset.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert sess.run(next_element) == 2
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(next_element)


def test_filter_keeps_elements_where_the_predicate_holds():
    dataset = tf.data.Dataset.range(10).filter(lambda x: tf.equal(x % 3, 0))
    assert [int(v) for v in elements(dataset)] == [0, 3, 6, 9]


def test_filter_on_tuples_then_batch():
    dataset = tf.data.Dataset.from_tensor_slices(([1, 2, 3, 4], [1.0, -1.0, 2.0, -2.0]))
    dataset = dataset.filter(lambda i, v: v > 0).batch(5)
    ((ids, values),) = elements(dataset)
    assert ids.tolist() == [1, 3] and values.tolist() == [1.0, 2.0]


def test_filter_predicate_must_be_a_scalar_bool():
    with pytest.raises(ValueError, match="scalar boolean"):
        tf.data.Dataset.range(3).filter(lambda x: x)


def test_zip_of_nested_datasets_ends_with_the_shortest():
    a = tf.data.Dataset.range(3)
    b = tf.data.Dataset.from_tensor_slices([[1.0, 2.0], [3.0, 4.0]])
    c = tf.data.Dataset.from_tensor_slices(["p", "q", "r"])
    zipped = tf.data.Dataset.zip((a, {"b": b, "c": c}))
    assert zipped.output_types == (tf.int64, {"b": tf.float32, "c": tf.string})
    values = elements(zipped)
    assert len(values) == 2
    assert int(values[1][0]) == 1 and values[1][1]["b"].tolist() == [3.0, 4.0]
    assert text(values[1][1]["c"]) == "q"


def test_concatenate():
    dataset = tf.data.Dataset.range(2).concatenate(tf.data.Dataset.range(5, 7))
    assert [int(v) for v in elements(dataset)] == [0, 1, 5, 6]
    with pytest.raises(TypeError):
        tf.data.Dataset.range(2).concatenate(tf.data.Dataset.from_tensor_slices([1.0]))


@pytest.mark.timeout(10)
def test_prefetch_yields_the_same_elements():
    dataset = tf.data.Dataset.range(20).map(lambda x: x * 2).prefetch(3).batch(8)
    assert as_lists(elements(dataset)) == [list(range(0, 16, 2)), list(range(16, 32, 2)),
                                           list(range(32, 40, 2))]


# ---- shuffle -------------------------------------------------------------------------
def shuffled(seed=None, graph_seed=None, reshuffle=None, epochs=1):
    graph = tf.Graph()
    with graph.as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        dataset = tf.data.Dataset.range(20).shuffle(20, seed=seed,
                                                     reshuffle_each_iteration=reshuffle)
        next_element = dataset.repeat(epochs).make_one_shot_iterator().get_next()
        with tf.Session(graph=graph) as sess:
            return [int(v) for v in drain(sess, next_element)]


def test_shuffle_is_a_permutation():
    values = shuffled()
    assert sorted(values) == list(range(20)) and values != list(range(20))


def test_seeded_shuffle_repeats_across_sessions():
    assert shuffled(seed=7) == shuffled(seed=7)
    assert shuffled(graph_seed=3) == shuffled(graph_seed=3)
    assert shuffled(seed=7) != shuffled(seed=8)


def test_unseeded_shuffle_differs_between_sessions():
    assert shuffled() != shuffled()


def test_reshuffle_each_iteration_controls_epoch_orders():
    two_epochs = shuffled(seed=1, epochs=2)
    assert sorted(two_epochs[:20]) == sorted(two_epochs[20:]) == list(range(20))
    assert two_epochs[:20] != two_epochs[20:]
    fixed = shuffled(seed=1, reshuffle=False, epochs=2)
    assert fixed[:20] == fixed[20:]


def test_small_shuffle_buffer_only_mixes_nearby_elements():
    values = [int(v) for v in elements(tf.data.Dataset.range(10).shuffle(2, seed=5))]
    assert sorted(values) == list(range(10))
    assert values[0] in (0, 1)  # the first draw is from a buffer holding 0 and 1


# ---- iterators -----------------------------------------------------------------------
def test_initializable_iterator_is_reinitialized_with_new_feeds():
    x = tf.placeholder(tf.float32, [None])
    dataset = tf.data.Dataset.from_tensor_slices(x).map(lambda v: v * 10.0)
    it = dataset.make_initializable_iterator()
    next_element = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer, {x: [1.0, 2.0, 3.0]})
        assert sess.run(next_element) == 10.0
        sess.run(it.initializer, {x: [7.0, 8.0]})  # restarts, on the new data
        assert [float(v) for v in drain(sess, next_element)] == [70.0, 80.0]
        sess.run(it.initializer, {x: [5.0]})
        assert [float(v) for v in drain(sess, next_element)] == [50.0]


def test_get_next_before_initialization_fails():
    it = tf.data.Dataset.range(2).make_initializable_iterator()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="not been initialized"):
            sess.run(it.get_next())


def test_one_shot_iterator_cannot_read_placeholders_and_has_no_initializer():
    x = tf.placeholder(tf.float32, [None])
    with pytest.raises(ValueError, match="Cannot capture a placeholder"):
        tf.data.Dataset.from_tensor_slices(x).make_one_shot_iterator()
    it = tf.data.make_one_shot_iterator(tf.data.Dataset.range(2))
    with pytest.raises(ValueError, match="does not have an initializer"):
        it.initializer  # noqa: B018 - the property raises


def test_module_level_iterator_functions_and_ops():
    dataset = tf.data.Dataset.range(3)
    it = tf.data.make_initializable_iterator(dataset)
    assert it.output_types == tf.int64 and it.output_shapes.as_list() == []
    assert it.output_classes is tf.Tensor
    assert it.initializer.type == "MakeIterator"
    next_element = it.get_next()
    assert next_element.op.type == "IteratorGetNext" and next_element.dtype == tf.int64
    assert dataset._variant_tensor.dtype == tf.as_dtype("variant")
    with tf.Session() as sess:
        sess.run(it.initializer)
        assert [int(v) for v in drain(sess, next_element)] == [0, 1, 2]


def test_compat_v1_spellings_of_the_iterator_functions():
    v1 = tf.compat.v1
    one_shot = v1.data.make_one_shot_iterator(v1.data.Dataset.from_tensor_slices([4, 5]))
    fed = v1.placeholder(tf.int64, [])
    initializable = v1.data.make_initializable_iterator(v1.data.Dataset.range(fed))
    assert v1.data.get_output_types(one_shot) == tf.int32
    assert v1.data.get_output_shapes(initializable).as_list() == []
    assert v1.data.get_output_classes(v1.data.Dataset.range(1)) is tf.Tensor
    with v1.Session() as sess:
        assert [int(v) for v in drain(sess, one_shot.get_next())] == [4, 5]
        sess.run(initializable.initializer, {fed: 2})
        assert [int(v) for v in drain(sess, initializable.get_next())] == [0, 1]


def test_iterator_from_structure_switches_between_datasets():
    train = tf.data.Dataset.range(3)
    valid = tf.data.Dataset.range(10, 12)
    it = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
    next_element = it.get_next()
    use_train, use_valid = it.make_initializer(train), it.make_initializer(valid)
    with tf.Session() as sess:
        sess.run(use_train)
        assert [int(v) for v in drain(sess, next_element)] == [0, 1, 2]
        sess.run(use_valid)
        assert [int(v) for v in drain(sess, next_element)] == [10, 11]
    with pytest.raises(TypeError):
        it.make_initializer(tf.data.Dataset.from_tensor_slices([1.0]))


def test_feedable_iterator_reads_from_the_iterator_its_handle_names():
    train = tf.data.Dataset.range(100).repeat()
    valid = tf.data.Dataset.from_tensor_slices(([5.0, 6.0], [[1, 2], [3, 4]]))
    handle = tf.placeholder(tf.string, [])
    feedable = tf.data.Iterator.from_string_handle(handle, train.output_types,
                                                   train.output_shapes)
    next_element = feedable.get_next()
    assert next_element.dtype == tf.int64 and next_element.shape.as_list() == []
    train_it = train.make_one_shot_iterator()
    valid_it = tf.data.Dataset.range(1000, 1002).make_initializable_iterator()
    assert train_it.string_handle() is train_it.string_handle()
    assert train_it.string_handle().dtype == tf.string
    with tf.Session() as sess:
        train_handle, valid_handle = sess.run([train_it.string_handle(),
                                               valid_it.string_handle()])
        sess.run(valid_it.initializer)
        got = [sess.run(next_element, {handle: h})
               for h in (train_handle, train_handle, valid_handle, train_handle, valid_handle)]
        assert [int(v) for v in got] == [0, 1, 1000, 2, 1001]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(next_element, {handle: valid_handle})
        with pytest.raises(tf.errors.InvalidArgumentError, match="names no iterator"):
            sess.run(next_element, {handle: b"no-such-iterator"})
    # Nested structures: the handle carries no structure, from_string_handle gives it.
    pairs = tf.data.Iterator.from_string_handle(handle, valid.output_types, valid.output_shapes)
    x, y = pairs.get_next()
    assert y.shape.as_list() == [2]
    pairs_it = valid.make_one_shot_iterator()
    with tf.Session() as sess:
        h = sess.run(pairs_it.string_handle())
        first = sess.run([x, y], {handle: h})
        assert first[0] == 5.0 and first[1].tolist() == [1, 2]


def test_each_session_has_its_own_iterator_state():
    next_element = tf.data.Dataset.range(3).make_one_shot_iterator().get_next()
    with tf.Session() as first, tf.Session() as second:
        assert first.run(next_element) == 0
        assert first.run(next_element) == 1
        assert second.run(next_element) == 0


@pytest.mark.timeout(10)
def test_threads_sharing_an_iterator_get_distinct_elements():
    next_element = tf.data.Dataset.range(200).map(lambda x: x + 1).make_one_shot_iterator() \
        .get_next()
    seen, lock = [], threading.Lock()
    with tf.Session() as sess:
        def consume():
            for value in drain(sess, next_element):
                with lock:
                    seen.append(int(value))
        threads = [threading.Thread(target=consume) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(5)
    assert sorted(seen) == list(range(1, 201))


def test_training_loop_reads_batches_until_the_end():
    """Fits y = 3x by gradient descent on batches from a dataset, for 20 epochs."""
    xs = np.linspace(-1.0, 1.0, 8).astype(np.float32)
    dataset = tf.data.Dataset.from_tensor_slices((xs, 3.0 * xs)).shuffle(8, seed=0)
    x, y = dataset.batch(4).repeat(20).make_one_shot_iterator().get_next()
    w = tf.Variable(0.0)
    loss = tf.reduce_mean(tf.square(w * x - y))
    (grad,) = tf.gradients(loss, [w])
    train = tf.assign_sub(w, 0.5 * grad)
    steps = 0
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        try:
            while True:
                sess.run(train)
                steps += 1
        except tf.errors.OutOfRangeError:
            pass
        assert steps == 40
        assert sess.run(w) == pytest.approx(3.0, abs=1e-3)


# ---- padded_batch, flat_map, interleave ---------------------------------------------------
def test_padded_batch_pads_to_the_longest_or_to_a_fixed_size():
    ranges = tf.data.Dataset.range(1, 4).map(lambda x: tf.fill([x], x))  # [1] [2 2] [3 3 3]
    longest = ranges.padded_batch(2, padded_shapes=[None])
    assert longest.output_shapes.as_list() == [None, None]
    assert as_lists(elements(longest)) == [[[1, 0], [2, 2]], [[3, 3, 3]]]
    fixed = ranges.map(lambda v: (v, tf.size(v))).padded_batch(
        2, padded_shapes=([4], []), padding_values=(tf.constant(-1, tf.int64), 0),
        drop_remainder=True)
    assert [s.as_list() for s in fixed.output_shapes] == [[2, 4], [2]]
    (values, sizes), = elements(fixed)
    assert values.tolist() == [[1, -1, -1, -1], [2, 2, -1, -1]] and sizes.tolist() == [1, 2]


def test_padded_batch_of_dicts_strings_and_matrices():
    words = tf.data.Dataset.from_tensor_slices((["a", "bc"], [1, 2])).map(
        lambda w, n: {"w": tf.fill(tf.expand_dims(n, 0), w), "n": n})
    batch, = elements(words.padded_batch(2, {"w": [None], "n": []}))
    assert [[text(v) for v in row] for row in batch["w"]] == [["a", ""], ["bc", "bc"]]
    assert batch["n"].tolist() == [1, 2]
    squares = tf.data.Dataset.range(1, 3).map(lambda x: tf.ones(tf.stack([x, x]), tf.int64))
    batch, = elements(squares.padded_batch(2, [-1, 3], padding_values=tf.constant(7, tf.int64)))
    assert batch.tolist() == [[[1, 7, 7], [7, 7, 7]], [[1, 1, 7], [1, 1, 7]]]


def test_padded_batch_errors():
    triples = tf.data.Dataset.from_tensors([1, 2, 3])
    with pytest.raises(ValueError, match="not compatible"):
        triples.padded_batch(1, [2])
    with pytest.raises(ValueError, match="does not match the structure"):
        triples.padded_batch(1, ([3], [3]))
    growing = tf.data.Dataset.range(1, 4).map(lambda x: tf.fill([x], x)).padded_batch(3, [2])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="pad to a smaller size"):
            sess.run(growing.make_one_shot_iterator().get_next())


def test_flat_map_chains_the_datasets_the_function_makes():
    repeated = tf.data.Dataset.range(4).flat_map(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(x))
    assert repeated.output_types == tf.int64 and repeated.output_shapes.as_list() == []
    assert [int(v) for v in elements(repeated)] == [1, 2, 2, 3, 3, 3]
    pairs = tf.data.Dataset.from_tensor_slices(([1, 2], [0.5, 1.5])).flat_map(
        lambda a, b: tf.data.Dataset.from_tensors((a, b)).repeat(2))
    assert as_lists(v for pair in elements(pairs) for v in pair) == [1, 0.5, 1, 0.5, 2, 1.5, 2, 1.5]
    nested = tf.data.Dataset.range(3).flat_map(
        lambda x: tf.data.Dataset.range(x).map(lambda y: y * 10))
    assert [int(v) for v in elements(nested)] == [0, 0, 10]
    with pytest.raises(TypeError, match="must return a `Dataset`"):
        tf.data.Dataset.range(3).flat_map(lambda x: x)


@pytest.mark.parametrize("cycle_length, block_length, expected", [
    (2, 2, [1, 1, 2, 2, 1, 2, 3, 3, 3]),   # worked through TF's loop by hand
    (3, 1, [1, 2, 3, 1, 2, 3, 1, 2, 3]),
    (1, 2, [1, 1, 1, 2, 2, 2, 3, 3, 3]),   # cycle_length 1 is flat_map
])
def test_interleave_takes_blocks_from_a_cycle_of_datasets(cycle_length, block_length, expected):
    mixed = tf.data.Dataset.range(1, 4).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(3), cycle_length, block_length)
    assert [int(v) for v in elements(mixed)] == expected


def test_interleave_replaces_finished_datasets_with_the_next_input():
    mixed = tf.data.Dataset.range(1, 5).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(x), cycle_length=2)
    # Slot 0 runs 1, finds it finished on its next turn, and opens 3 on the turn
    # after (an exhausted or newly opened slot costs a turn, as in TF's loop).
    assert [int(v) for v in elements(mixed)] == [1, 2, 2, 3, 3, 4, 3, 4, 4, 4]


# ---- text files and CSV --------------------------------------------------------------------
def test_text_line_dataset_reads_lines_of_several_files(tmp_path):
    first, second = tmp_path / "a.csv", tmp_path / "b.txt"
    first.write_text("x,y\n1,2\n3,4\n")
    second.write_bytes(b"windows\r\nlines\r\n\r\nno newline at end")
    lines = tf.data.TextLineDataset([str(first), str(second)])
    assert lines.output_types == tf.string and lines.output_shapes.as_list() == []
    assert [text(v) for v in elements(lines)] == [
        "x,y", "1,2", "3,4", "windows", "lines", "", "no newline at end"]


@pytest.mark.parametrize("compression", ["GZIP", "ZLIB"])
def test_text_line_dataset_reads_compressed_files(tmp_path, compression):
    import gzip
    import zlib
    content = "".join("line %d\n" % i for i in range(100)).encode()
    path = tmp_path / "lines.z"
    path.write_bytes(gzip.compress(content) if compression == "GZIP" else zlib.compress(content))
    lines = tf.data.TextLineDataset(str(path), compression_type=compression)
    assert [text(v) for v in elements(lines)] == ["line %d" % i for i in range(100)]


def test_text_line_dataset_errors_come_from_get_next(tmp_path):
    missing = tf.data.TextLineDataset(str(tmp_path / "missing.csv"))  # building is fine
    with tf.Session() as sess:
        with pytest.raises(tf.errors.NotFoundError, match="missing.csv; No such file"):
            sess.run(missing.make_one_shot_iterator().get_next())
    (tmp_path / "bad.gz").write_bytes(b"not gzip at all")
    damaged = tf.data.TextLineDataset(str(tmp_path / "bad.gz"), compression_type="GZIP")
    unknown = tf.data.TextLineDataset(str(tmp_path / "bad.gz"), compression_type="LZ4")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DataLossError, match="bad.gz"):
            sess.run(damaged.make_one_shot_iterator().get_next())
        with pytest.raises(tf.errors.InvalidArgumentError, match="Unsupported compression_type"):
            sess.run(unknown.make_one_shot_iterator().get_next())


def test_text_line_dataset_file_names_from_a_placeholder(tmp_path):
    for name in ("one", "two"):
        (tmp_path / name).write_text("%s-1\n%s-2\n" % (name, name))
    files = tf.placeholder(tf.string, [None])
    it = tf.data.TextLineDataset(files).make_initializable_iterator()
    line = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer, {files: [str(tmp_path / "two")]})
        assert [text(v) for v in drain(sess, line)] == ["two-1", "two-2"]
        sess.run(it.initializer, {files: [str(tmp_path / "one"), str(tmp_path / "two")]})
        assert [text(v) for v in drain(sess, line)] == ["one-1", "one-2", "two-1", "two-2"]


def test_csv_pipeline_with_a_header_per_file(tmp_path):
    for i in range(2):
        (tmp_path / ("part%d.csv" % i)).write_text(
            "a,b,label\n%d.5,\"x,%d\",%d\n" % (i, i, i))
    files = tf.data.Dataset.from_tensor_slices([str(tmp_path / "part0.csv"),
                                                str(tmp_path / "part1.csv")])
    rows = files.flat_map(lambda f: tf.data.TextLineDataset(f).skip(1)).map(
        lambda line: tf.decode_csv(line, [[0.0], [""], [0]]))
    assert rows.output_types == (tf.float32, tf.string, tf.int32)
    values = elements(rows)
    assert [(float(a), text(b), int(c)) for a, b, c in values] == [(0.5, "x,0", 0),
                                                                   (1.5, "x,1", 1)]


def test_decode_csv_types_defaults_and_shapes():
    records = tf.constant([["1,2.5,x,7", "3,,y,"]])  # shape [1, 2]
    columns = tf.decode_csv(records, [[0], [-1.0], [""], tf.constant([9], tf.int64)])
    assert [c.name for c in columns] == ["DecodeCSV:%d" % i for i in range(4)]
    assert [c.dtype for c in columns] == [tf.int32, tf.float32, tf.string, tf.int64]
    assert all(c.shape.as_list() == [1, 2] for c in columns)
    defaults = [op.name for op in tf.get_default_graph().get_operations()
                if op.name.startswith("DecodeCSV/")]
    # the lists become constants in the op's scope; the tensor default is used as it is
    assert defaults == ["DecodeCSV/record_defaults_%d" % i for i in range(3)]
    with tf.Session() as sess:
        a, b, c, d = sess.run(columns)
    assert a.tolist() == [[1, 3]] and b.tolist() == [[2.5, -1.0]] and d.tolist() == [[7, 9]]
    assert [text(v) for v in c[0]] == ["x", "y"]


def test_decode_csv_options():
    with tf.Session() as sess:
        quoted = sess.run(tf.decode_csv('"a,b","c""d",e', [[""]] * 3))
        assert [text(v) for v in quoted] == ["a,b", 'c"d', "e"]
        raw = sess.run(tf.decode_csv('"a,b"', [[""], [""]], use_quote_delim=False))
        assert [text(v) for v in raw] == ['"a', 'b"']
        assert sess.run(tf.decode_csv("1;2", [[0], [0]], field_delim=";")) == [1, 2]
        assert sess.run(tf.decode_csv("1,NA,3", [[0], [7], [0]], na_value="NA")) == [1, 7, 3]
        assert sess.run(tf.decode_csv("1,2,3", [[0], [0]], select_cols=[0, 2])) == [1, 3]


@pytest.mark.parametrize("record, defaults, message", [
    ("1,2", [[0], [0], [0]], "Expect 3 fields but have 2 in record 0"),
    ("1,,3", [[0], [], [0]], "Field 1 is required but missing in record 0!"),
    ("a,2", [[0], [0]], "Field 0 in record 0 is not a valid int32: a"),
    ("1.5,2", [[0], [0]], "Field 0 in record 0 is not a valid int32: 1.5"),
    ("x,2", [[0.0], [0]], "Field 0 in record 0 is not a valid float: x"),
    ("3000000000", [[0]], "not a valid int32: 3000000000"),
    ('"a"b,2', [[""], [0]], "Quote inside a string has to be escaped by another quote"),
])
def test_decode_csv_run_time_errors_follow_tf1(record, defaults, message):
    columns = tf.decode_csv(record, defaults)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            sess.run(columns)


def test_decode_csv_construction_errors():
    with pytest.raises(ValueError, match="Shape of a default must be a length-0 or length-1"):
        tf.decode_csv("1", [[1, 2]])
    with pytest.raises(TypeError, match="CSV column"):
        tf.decode_csv("1", [[True]])
    with pytest.raises(ValueError, match="one character"):
        tf.decode_csv("1", [[0]], field_delim="::")
    with pytest.raises(ValueError, match="select_cols"):
        tf.decode_csv("1", [[0], [0]], select_cols=[2, 1])


def test_string_labels_map_to_class_indices_with_tf_equal():
    names = ("setosa", "versicolor", "virginica")
    species = tf.decode_csv(tf.constant(["5.1,setosa", "6.0,virginica"]), [[0.0], [""]])[1]
    matches = tf.equal(tf.expand_dims(species, 1), names)  # strings compare, as in TF
    assert matches.dtype == tf.bool and matches.shape.as_list() == [2, 3]
    labels = tf.argmax(tf.cast(matches, tf.int32), axis=1)
    with tf.Session() as sess:
        assert sess.run(labels).tolist() == [0, 2]
        assert sess.run(tf.not_equal(species, "setosa")).tolist() == [False, True]


# ---- shard, cache, apply, tf.data.experimental ------------------------------------------------
def test_shard_takes_every_nth_element():
    assert [int(v) for v in elements(tf.data.Dataset.range(10).shard(3, 1))] == [1, 4, 7]
    for num_shards, index, message in [(0, 0, "Number of shards must be greater than zero"),
                                       (2, 2, r"Index must be between 0 and 1 \(currently "
                                              r"index = 2\)")]:
        sharded = tf.data.Dataset.range(3).shard(num_shards, index)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                sess.run(sharded.make_one_shot_iterator().get_next())


def test_cache_replays_the_first_complete_pass():
    calls = []

    def numbers():
        calls.append(1)
        yield from [3, 1, 2]
    source = tf.data.Dataset.from_generator(numbers, tf.int64)
    assert [int(v) for v in elements(source.cache().repeat(3))] == [3, 1, 2] * 3
    assert len(calls) == 1  # epochs 2 and 3 came from the cache
    calls.clear()
    assert len(elements(source.repeat(3))) == 9 and len(calls) == 3
    calls.clear()
    shuffled = tf.data.Dataset.range(6).shuffle(6, seed=2).cache().repeat(2)
    values = [int(v) for v in elements(shuffled)]
    assert values[:6] == values[6:] and sorted(values[:6]) == list(range(6))
    with pytest.raises(NotImplementedError, match="on-disk cache"):
        source.cache("/tmp/cache")


def test_unbatch_and_apply():
    rows = tf.data.Dataset.range(5).batch(2).apply(tf.data.experimental.unbatch())
    assert rows.output_shapes.as_list() == [] and rows.output_types == tf.int64
    assert [int(v) for v in elements(rows)] == [0, 1, 2, 3, 4]
    method_form = tf.data.Dataset.range(5).batch(2).unbatch()
    assert [int(v) for v in elements(method_form)] == [0, 1, 2, 3, 4]
    pairs = tf.data.Dataset.from_tensors(([[1, 2], [3, 4]], ["a", "b"]))
    unbatched = elements(pairs.apply(tf.data.experimental.unbatch()))
    assert [(v[0].tolist(), text(v[1])) for v in unbatched] == [([1, 2], "a"), ([3, 4], "b")]
    with pytest.raises(ValueError, match="scalar components"):
        tf.data.Dataset.range(3).apply(tf.data.experimental.unbatch())
    mismatched = tf.data.Dataset.zip((tf.data.Dataset.range(4).batch(2),
                                      tf.data.Dataset.range(6).batch(3)))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="same batch size"):
            sess.run(mismatched.apply(tf.data.experimental.unbatch())
                     .make_one_shot_iterator().get_next())
    with pytest.raises(TypeError, match="must return a Dataset"):
        tf.data.Dataset.range(3).apply(lambda dataset: 3)


def test_shuffle_and_repeat_gives_a_new_permutation_each_epoch():
    epochs = tf.data.Dataset.range(8).apply(
        tf.data.experimental.shuffle_and_repeat(8, count=3, seed=5))
    values = [int(v) for v in elements(epochs)]
    assert [sorted(values[i:i + 8]) for i in (0, 8, 16)] == [list(range(8))] * 3
    assert len({tuple(values[i:i + 8]) for i in (0, 8, 16)}) > 1
    assert tf.data.experimental.AUTOTUNE == -1


# ---- SparseTensor components (VarLenFeature inside map) -------------------------------------
def _tags_dataset(tmp_path):
    path = str(tmp_path / "tags.tfrecords")
    with tf.python_io.TFRecordWriter(path) as writer:
        for n in range(4):
            tags = tf.train.Feature(int64_list=tf.train.Int64List(value=list(range(10, 10 + n))))
            label = tf.train.Feature(int64_list=tf.train.Int64List(value=[n]))
            writer.write(tf.train.Example(features=tf.train.Features(
                feature={"tags": tags, "label": label})).SerializeToString())

    def parse(record):
        parsed = tf.parse_single_example(record, {"tags": tf.VarLenFeature(tf.int64),
                                                  "label": tf.FixedLenFeature([], tf.int64)})
        return parsed["tags"], parsed["label"]
    return tf.data.TFRecordDataset([path]).map(parse)


def test_map_returning_a_sparse_tensor_batches_it(sess, tmp_path):
    dataset = _tags_dataset(tmp_path)
    assert dataset.output_classes == (tf.SparseTensor, tf.Tensor)
    assert dataset.output_types == (tf.int64, tf.int64)
    assert [s.as_list() for s in dataset.output_shapes] == [[None], []]
    batched = dataset.batch(3)
    assert [s.as_list() for s in batched.output_shapes] == [[None, None], [None]]
    tags, label = batched.make_one_shot_iterator().get_next()
    assert isinstance(tags, tf.SparseTensor) and tags.shape.as_list() == [None, None]
    assert tags.indices.shape.as_list() == [None, 2] and tags.dense_shape.shape.as_list() == [2]
    value, labels = sess.run([tags, label])
    # Rows are the examples; the dense shape is the longest one's.
    np.testing.assert_array_equal(value.indices, [[1, 0], [2, 0], [2, 1]])
    np.testing.assert_array_equal(value.values, [10, 10, 11])
    np.testing.assert_array_equal(value.dense_shape, [3, 2])
    np.testing.assert_array_equal(labels, [0, 1, 2])
    last, _ = sess.run([tags, label])
    np.testing.assert_array_equal(last.dense_shape, [1, 3])
    np.testing.assert_array_equal(last.indices, [[0, 0], [0, 1], [0, 2]])


def test_sparse_components_through_map_unbatch_and_iterators(sess, tmp_path):
    dataset = _tags_dataset(tmp_path)
    # A later map receives the SparseTensor and may densify it.
    dense = dataset.map(lambda tags, label: tf.sparse_tensor_to_dense(tags, default_value=-1))
    assert dense.output_classes is tf.Tensor
    nxt = dense.make_one_shot_iterator().get_next()
    assert [sess.run(nxt).tolist() for _ in range(4)] == [[], [10], [10, 11], [10, 11, 12]]
    # unbatch gives back the elements; from_structure takes output_classes.
    again = dataset.batch(2).unbatch()
    assert again.output_classes == (tf.SparseTensor, tf.Tensor)
    iterator = tf.data.Iterator.from_structure(again.output_types, again.output_shapes,
                                               output_classes=again.output_classes)
    tags, _ = iterator.get_next()
    sess.run(iterator.make_initializer(again))
    assert [sess.run(tags).values.tolist() for _ in range(4)] == [[], [10], [10, 11],
                                                                  [10, 11, 12]]
    with pytest.raises(TypeError, match="classes"):
        iterator.make_initializer(dataset.map(
            lambda tags, label: (tf.sparse_tensor_to_dense(tags), label)))
    with pytest.raises(TypeError, match="padded sparse"):
        dataset.padded_batch(2, padded_shapes=([None], []))
