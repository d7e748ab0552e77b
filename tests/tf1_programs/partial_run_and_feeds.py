"""Partial execution and feeding, as taught by the TF 1.x API docs
(``Session.partial_run`` docstring example) and CS20si lecture 2
("feed_dict with any feedable tensor", ``tf.Graph.is_feedable``,
``placeholder_with_default``).

The docstring example as written, then partial runs that feed a value
computed by an earlier partial run, the errors TF raises for feeding twice
or fetching what was not set up, and a feed of an intermediate tensor.
"""

import minitf as tf

a = tf.placeholder(tf.float32, shape=[])
b = tf.placeholder(tf.float32, shape=[])
c = tf.placeholder(tf.float32, shape=[])
r1 = tf.add(a, b)
r2 = tf.multiply(r1, c)

errors = []
with tf.Session() as sess:
    h = sess.partial_run_setup([r1, r2], [a, b, c])
    res = sess.partial_run(h, r1, feed_dict={a: 1, b: 2})
    res = sess.partial_run(h, r2, feed_dict={c: res})
    print(res)  # 9.0
    docstring_result = float(res)

    # A partial run per step, each feeding the next.
    h2 = sess.partial_run_setup([r1, r2], [a, b, c])
    first = sess.partial_run(h2, r1, feed_dict={a: 3, b: 4})
    try:
        sess.partial_run(h2, r1, feed_dict={a: 5})
    except tf.errors.InvalidArgumentError as e:
        errors.append(type(e).__name__)
    second = sess.partial_run(h2, r2, feed_dict={c: 2})

    h3 = sess.partial_run_setup([r1], [a, b])
    try:
        sess.partial_run(h3, r2, feed_dict={a: 1, b: 1})
    except tf.errors.InvalidArgumentError as e:
        errors.append(type(e).__name__)

    # CS20si: feed any feedable tensor, e.g. an intermediate result.
    d = tf.add(tf.constant(2.0), tf.constant(3.0))
    e = tf.multiply(d, 3.0)
    fed = sess.run(e, feed_dict={d: 15.0})
    feedable = [tf.get_default_graph().is_feedable(t) for t in (a, d, e)]
    default = tf.placeholder_with_default(tf.constant([1.0, 2.0]), shape=[None])
    defaults = [sess.run(default).tolist(), sess.run(default, {default: [7.0]}).tolist()]

results = {
    "docstring": docstring_result,
    "chained": [float(first), float(second)],
    "errors": errors,
    "fed": float(fed),
    "feedable": feedable,
    "defaults": defaults,
}
