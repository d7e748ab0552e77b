"""Text preprocessing with TF ops, in the style of the TF 1.x word-count and
vocabulary examples (CS20si's ``tf.unique`` word ids, the Stack-Overflow
classic "count words with ``tf.unique_with_counts``", ``tf.string_split``-free
``tf.strings.split`` + ``tf.py_func`` for a NumPy step) and the CSV-cleaning
snippets of the TF 1.x input-pipeline guides (``tf.strings.regex_replace``,
``tf.string_to_number``, ``tf.as_string``, ``tf.strings.join``,
``tf.strings.substr``, ``tf.strings.length``).

Shortened: a four-line corpus.
"""

import numpy as np

import minitf as tf

lines = tf.constant(["The cat sat on the mat.", "the dog ate the cat",
                     "A cat,  a dog!", "42 cats"])

# Normalize: lower case, strip punctuation, squeeze spaces.
clean = tf.strings.regex_replace(lines, "[^A-Za-z0-9 ]", "")
clean = tf.strings.regex_replace(clean, " +", " ")
words = tf.reshape(tf.strings.split(clean, sep=" ").values, [-1])


def lowercase(array):
    return np.array([w.lower() for w in array], dtype=object)


lower = tf.py_func(lowercase, [words], tf.string, stateful=False, name="lowercase")
vocab, ids, counts = tf.unique_with_counts(lower)
uniq_vals, uniq_idx = tf.unique(tf.constant([1, 1, 2, 4, 4, 4, 7, 8, 8]))

# Numbers as strings and back.
numbers = tf.string_to_number(tf.constant(["3.5", "-2", "1e3"]), out_type=tf.float32)
as_text = tf.as_string(tf.constant([1.5, 2.25]), precision=2)
joined = tf.strings.join([tf.constant(["id", "no"]), tf.as_string(tf.constant([7, 8]))],
                         separator="_")
lengths = tf.strings.length(lines)
prefix = tf.strings.substr(lines, 0, 3)
to_int = tf.strings.to_number(tf.constant(["12", "7"]), out_type=tf.int32)


def add_one(x):
    return (x + 1).astype(np.float32), np.int64(x.size)


plus, size = tf.py_func(add_one, [tf.constant([1.0, 2.0, 3.0])], [tf.float32, tf.int64])

with tf.Session() as sess:
    (vocab_v, ids_v, counts_v, uv, ui, numbers_v, as_text_v, joined_v, lengths_v, prefix_v,
     to_int_v, plus_v, size_v) = sess.run([vocab, ids, counts, uniq_vals, uniq_idx, numbers,
                                           as_text, joined, lengths, prefix, to_int, plus, size])

results = {
    "vocab": [w.decode() for w in vocab_v],
    "ids": ids_v.tolist(),
    "counts": counts_v.tolist(),
    "count_dtypes": [ids.dtype.name, counts.dtype.name, vocab.dtype.name],
    "unique": [uv.tolist(), ui.tolist()],
    "numbers": numbers_v.tolist(),
    "as_text": [s.decode() for s in as_text_v],
    "joined": [s.decode() for s in joined_v],
    "lengths": lengths_v.tolist(),
    "prefix": [s.decode() for s in prefix_v],
    "to_int": [to_int_v.tolist(), to_int.dtype.name],
    "py_func": [plus_v.tolist(), int(size_v), plus.dtype.name, size.dtype.name],
    "shapes": [words.shape.as_list(), lower.shape.ndims, vocab.shape.as_list()],
}
