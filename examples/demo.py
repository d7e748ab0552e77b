"""The demo `make demo` runs: build a small graph, run parts of it, train nothing yet.

It shows phase 1 (building a graph: nothing is computed) and phase 2 (running
parts of it in a Session, feeding placeholders, keeping variable state).
"""

import minitf as tf


def main():
    x = tf.placeholder(tf.float32, shape=[None, 3], name="x")
    w = tf.Variable([[1.0], [2.0], [3.0]], name="w")
    b = tf.Variable(0.5, name="b")
    y = tf.matmul(x, w) + b
    step = tf.assign_add(b, 1.0)

    print("Phase 1 built these ops (nothing has run yet):")
    for op in tf.get_default_graph().get_operations():
        print("   %-16s %s" % (op.type, op.name))
    print("y is", y)

    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        batch = [[1.0, 1.0, 1.0], [0.0, 1.0, 0.0]]
        print("y(x) =", sess.run(y, feed_dict={x: batch}).ravel())
        sess.run(step)
        print("after b += 1:", sess.run(y, feed_dict={x: batch}).ravel())


if __name__ == "__main__":
    main()
