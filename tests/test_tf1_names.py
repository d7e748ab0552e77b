"""Which of TF1's public names ``import minitf as tf`` provides, and which it still lacks.

``tests/data/tf1_public_names.txt`` lists the public names of ``tf.compat.v1``
and of the submodules TF1 tutorials use, as TensorFlow 2.21 exports them
(made by ``tests/data/make_tf1_public_names.py``).
``tests/data/tf1_missing_names.txt`` lists those minitf does not provide.
The tests hold that list exact, both ways:

* a name minitf had and lost fails (a regression);
* a name of the list that minitf now provides fails too: take it off the
  list, so the list stays the visible gap.

After adding names, rewrite the list with::

    .venv/bin/python -m tests.test_tf1_names --update

The last tests check that the TF1 aliases minitf adds mean what TF's do.
"""

import os
import sys

import numpy as np
import pytest

import minitf as tf

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
PUBLIC_NAMES = os.path.join(DATA, "tf1_public_names.txt")
MISSING_NAMES = os.path.join(DATA, "tf1_missing_names.txt")
_MISSING_HEADER = """\
# TF1's public names (tf1_public_names.txt) that minitf does not provide yet.
# tests/test_tf1_names.py keeps this list exact; rewrite it with
#     .venv/bin/python -m tests.test_tf1_names --update
"""


def _read_names(path):
    with open(path, encoding="ascii") as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


def _provides(dotted_name):
    """Whether ``tf.<dotted_name>`` resolves in minitf."""
    value = tf
    for part in dotted_name.split("."):
        try:
            value = getattr(value, part)
        except AttributeError:
            return False
    return True


def lacking_names():
    """TF1's public names that minitf does not provide, in the list's order."""
    return [name for name in _read_names(PUBLIC_NAMES) if not _provides(name)]


@pytest.fixture(scope="module")
def lacking():
    return set(lacking_names())


def test_the_lists_are_sorted_unique_and_consistent():
    public, missing = _read_names(PUBLIC_NAMES), _read_names(MISSING_NAMES)
    assert public == sorted(set(public)) and len(public) > 1000
    assert missing == sorted(set(missing))
    assert not set(missing) - set(public), "names TF1 does not export"
    # A sample of what TF1 programs use every day, so the reference list is the right one.
    assert {"nn.nce_loss", "train.Saver", "placeholder", "layers.dense", "arg_max"} <= set(public)


def test_no_name_went_missing(lacking):
    lost = sorted(lacking - set(_read_names(MISSING_NAMES)))
    assert not lost, "minitf no longer provides these TF1 names: %s" % lost


def test_the_missing_list_is_exact(lacking):
    found = sorted(set(_read_names(MISSING_NAMES)) - lacking)
    assert not found, ("minitf now provides these names: take them off %s (python -m "
                       "tests.test_tf1_names --update): %s" % (MISSING_NAMES, found))


def test_the_samplers_and_sampled_losses_are_provided(lacking):
    names = ["nn.nce_loss", "nn.sampled_softmax_loss", "nn.compute_accidental_hits",
             "arg_max", "arg_min"]
    for sampler in ("log_uniform", "uniform", "learned_unigram", "fixed_unigram", "all"):
        names += ["nn.%s_candidate_sampler" % sampler, "random.%s_candidate_sampler" % sampler]
    assert not lacking & set(names)


# ---- the aliases mean what TF's mean ----------------------------------------------------------
def test_arg_max_and_arg_min():
    x = np.array([[1.0, 3.0, 2.0], [4.0, 0.0, 5.0]], np.float32)
    with pytest.raises(TypeError):
        tf.arg_max(x)  # TF1: dimension is required
    a, b = tf.arg_max(x, 1), tf.arg_min(x, 0, output_type=tf.int32)
    assert (a.op.type, a.dtype, b.op.type, b.dtype) == ("ArgMax", tf.int64, "ArgMin", tf.int32)
    with tf.Session() as sess:
        got_max, got_min = sess.run([a, b])
    np.testing.assert_array_equal(got_max, np.argmax(x, 1))
    np.testing.assert_array_equal(got_min, np.argmin(x, 0))


def test_deprecated_variable_names():
    v = tf.Variable(1.0)
    w = tf.Variable(2.0, collections=[tf.GraphKeys.LOCAL_VARIABLES])
    assert tf.all_variables() == [v]
    assert tf.initialize_local_variables().type == "NoOp"
    init = tf.initialize_variables([v], name="init_v")
    assert init.name == "init_v"
    with tf.Session() as sess:
        sess.run([init, tf.initialize_local_variables()])
        assert sess.run([v, w]) == [1.0, 2.0]


def test_other_aliases_are_the_same_objects():
    assert tf.reverse_v2 is tf.reverse and tf.OpError is tf.errors.OpError
    assert tf.NoGradient is tf.NotDifferentiable
    assert tf.math.l2_normalize is tf.nn.l2_normalize
    assert tf.math.invert_permutation is tf.invert_permutation
    assert tf.math.scalar_mul is tf.scalar_mul
    assert tf.math.unsorted_segment_sum is tf.unsorted_segment_sum
    assert tf.io.QueueBase is tf.QueueBase and tf.io.RandomShuffleQueue is tf.RandomShuffleQueue
    assert tf.io.PaddingFIFOQueue is tf.PaddingFIFOQueue
    assert tf.train.piecewise_constant_decay is tf.train.piecewise_constant
    assert tf.data.AUTOTUNE == tf.data.experimental.AUTOTUNE == -1
    assert tf.dimension_value(tf.Dimension(3)) == 3 and tf.dimension_value(None) is None
    assert tf.nn.conv2d_backprop_input.__name__ == "conv2d_backprop_input"
    assert tf.nn.conv2d_backprop_filter.__name__ == "conv2d_backprop_filter"


def _update():
    """Rewrites the missing list from what minitf provides now (atomically)."""
    names = lacking_names()
    tmp = MISSING_NAMES + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(_MISSING_HEADER + "".join(name + "\n" for name in names))
    os.replace(tmp, MISSING_NAMES)
    print("%d names missing, written to %s" % (len(names), MISSING_NAMES))


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python -m tests.test_tf1_names --update")
    _update()
