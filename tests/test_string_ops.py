"""``tf.strings`` and TF1's top-level string functions, with TF's values and errors.

The expected values are those TensorFlow gives for the same calls.
"""

import numpy as np
import pytest

import minitf as tf


def _run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def _list(array):
    return np.asarray(array, dtype=object).tolist()


# ---- join -------------------------------------------------------------------------------------
def test_join_broadcasts_scalars():
    joined = tf.strings.join(["a", ["b", "c"], tf.constant("d")], separator="-")
    assert joined.shape.as_list() == [2] and joined.op.type == "StringJoin"
    assert _list(_run(joined)) == [b"a-b-d", b"a-c-d"]
    assert _run(tf.string_join(["x", "y"])) == b"xy"
    with pytest.raises(ValueError):
        tf.strings.join([["a", "b"], ["b", "c", "d"]])
    left, right = tf.placeholder(tf.string, [None]), tf.placeholder(tf.string, [None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="shapes do not match"):
        _run(tf.strings.join([left, right]), {left: ["a"], right: ["b", "c"]})


def test_reduce_join_order_of_axes():
    a = [["a", "b"], ["c", "d"]]
    results = _run([tf.reduce_join(a, 0), tf.reduce_join(a, 1), tf.reduce_join(a, [0, 1]),
                    tf.reduce_join(a, [1, 0]), tf.reduce_join(a),
                    tf.strings.reduce_join(a, 0, keep_dims=True, separator=".")])
    assert _list(results[0]) == [b"ac", b"bd"] and _list(results[1]) == [b"ab", b"cd"]
    assert results[2:5] == [b"acbd", b"abcd", b"abcd"]
    assert _list(results[5]) == [[b"a.c", b"b.d"]]


# ---- split ------------------------------------------------------------------------------------
def test_string_split_is_sparse_and_splits_at_each_delimiter_character():
    split = tf.string_split(["a b  c", "d"])
    assert isinstance(split, tf.SparseTensor)
    assert split.indices.shape.as_list() == [None, 2] and split.dense_shape.shape == [2]
    value = _run(split)
    assert value.indices.tolist() == [[0, 0], [0, 1], [0, 2], [1, 0]]
    assert _list(value.values) == [b"a", b"b", b"c", b"d"]
    assert value.dense_shape.tolist() == [2, 3]
    kept = _run(tf.string_split(["a,b;,c"], delimiter=",;", skip_empty=False))
    assert _list(kept.values) == [b"a", b"b", b"", b"c"] and kept.dense_shape.tolist() == [1, 4]
    chars = _run(tf.string_split(["abc", ""], delimiter=""))
    assert _list(chars.values) == [b"a", b"b", b"c"] and chars.dense_shape.tolist() == [2, 3]


def test_strings_split_follows_python_str_split():
    words = _run(tf.strings.split(["  a b  c ", "d"]))  # whitespace runs, no empties
    assert _list(words.values) == [b"a", b"b", b"c", b"d"]
    assert words.dense_shape.tolist() == [2, 3]
    fields = _run(tf.strings.split(["1<>2<><>3"], sep="<>"))
    assert _list(fields.values) == [b"1", b"2", b"", b"3"]
    limited = _run(tf.strings.split("a,b,c", sep=",", maxsplit=1))  # a scalar is one row
    assert _list(limited.values) == [b"a", b"b,c"] and limited.indices.tolist() == [[0, 0], [0, 1]]
    with pytest.raises(NotImplementedError, match="RaggedTensor"):
        tf.strings.split(["a"], result_type="RaggedTensor")
    with pytest.raises(ValueError, match="rank 1"):
        tf.string_split([["a"]])


# ---- conversions ------------------------------------------------------------------------------
def test_string_to_number():
    floats, ints = _run([tf.string_to_number(["1.5", " 2", "3e2", "-inf"]),
                         tf.strings.to_number(["12", "-7 "], out_type=tf.int64)])
    assert floats.dtype == np.float32 and floats.tolist() == [1.5, 2.0, 300.0, -np.inf]
    assert ints.dtype == np.int64 and ints.tolist() == [12, -7]
    for text, out_type in [("x", tf.float32), ("1.5", tf.int32), ("99999999999", tf.int32),
                           ("0x10", tf.int64), ("1_0", tf.float64)]:
        op = tf.string_to_number([text], out_type=out_type)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="StringToNumberOp could not correctly convert string: %s"
                           % text):
            _run(op)
    with pytest.raises(TypeError):
        tf.string_to_number(["1"], out_type=tf.uint8)


def test_as_string_uses_printf_formats():
    results = _run([tf.as_string([1.5, 2.0]), tf.as_string([1, -2]), tf.as_string([True, False]),
                    tf.as_string([1.5], precision=2), tf.as_string([1.5e10], shortest=True),
                    tf.as_string([1.5e10], scientific=True), tf.as_string([3], width=4, fill="0"),
                    tf.strings.as_string(7, width=3)])
    assert [_list(r) for r in results[:7]] == [
        [b"1.500000", b"2.000000"], [b"1", b"-2"], [b"true", b"false"], [b"1.50"], [b"1.5e+10"],
        [b"1.500000e+10"], [b"0003"]]
    assert results[7] == b"  7"
    with pytest.raises(ValueError, match="both scientific and shortest"):
        tf.as_string([1.0], scientific=True, shortest=True)
    with pytest.raises(ValueError, match="precision"):
        tf.as_string([1], precision=2)
    with pytest.raises(TypeError):
        tf.as_string(["a"])


# ---- length, substrings, case, whitespace -----------------------------------------------------
def test_length_in_bytes_and_characters():
    text = ["ab", "\u00e9t\u00e9", ""]
    in_bytes, in_chars = _run([tf.strings.length(text), tf.strings.length(text, unit="UTF8_CHAR")])
    assert in_bytes.dtype == np.int32
    assert in_bytes.tolist() == [2, 5, 0] and in_chars.tolist() == [2, 3, 0]
    with pytest.raises(ValueError, match="unit"):
        tf.strings.length(text, unit="CHAR")


def test_substr():
    results = _run([tf.strings.substr(["hello", "ab"], 1, 3), tf.substr(["hello"], -2, 3),
                    tf.strings.substr("hello", [1, 2], [2, 1]),
                    tf.strings.substr(["hello", "ab"], 1, -1),
                    tf.strings.substr(["\u00e9t\u00e9"], 1, 1, unit="UTF8_CHAR")])
    assert [_list(r) for r in results] == [[b"ell", b"b"], [b"lo"], [b"el", b"l"],
                                           [b"ello", b"b"], ["t".encode()]]
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="pos 3 out of range for string b'ab' at index 1"):
        _run(tf.strings.substr(["hello", "ab"], 3, 3))
    with pytest.raises(ValueError, match="same shape"):
        tf.strings.substr(["a"], [0, 1], [1])


def test_case_and_strip():
    assert _list(_run(tf.strings.lower(["AbC", "x1"]))) == [b"abc", b"x1"]
    assert _list(_run(tf.strings.upper(["AbC"]))) == [b"ABC"]
    assert _list(_run(tf.strings.strip([" \tpad \n", "x"]))) == [b"pad", b"x"]


# ---- regular expressions ----------------------------------------------------------------------
def test_regex_replace():
    static = tf.strings.regex_replace(["aab", "xy"], "a+", "<\\0>")
    assert static.op.type == "StaticRegexReplace"
    pattern = tf.placeholder(tf.string, [])
    dynamic = tf.regex_replace(["aab", "xy"], pattern, "\\1\\1", replace_global=False)
    assert dynamic.op.type == "RegexReplace"
    assert _list(_run(static)) == [b"<aa>b", b"xy"]
    assert _list(_run(dynamic, {pattern: "(a)"})) == [b"aaab", b"xy"]
    assert _run(tf.regex_replace("a\\b", "\\\\", "\\\\\\\\")) == b"a\\\\b"  # \\ is a backslash
    with pytest.raises(tf.errors.InvalidArgumentError, match="Invalid pattern: \\("):
        _run(tf.regex_replace(["aab"], "(", "x"))
