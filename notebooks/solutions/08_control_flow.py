"""Solutions to the exercises of notebook 08, *Control flow*.

Each ``# %% Exercise N.M`` section is one exercise's complete cell; the
notebook's starter cell is generated from it (``minitf.labs.exercises``).
The cells run after the notebook's setup cell (NumPy and minitf imported).
"""

import numpy as np

import minitf as tf

# %% Exercise 8.1
# Exercise 8.1: an absolute value with tf.cond.
def cond_abs(x):
    """``|x|`` for a scalar tensor ``x``, built with ``tf.cond`` (not ``tf.abs``)."""
    # BEGIN SOLUTION tf.cond(predicate, true_fn, false_fn): two lambdas
    return tf.cond(x >= 0, lambda: tf.identity(x), lambda: tf.negative(x))
    # END SOLUTION

# %% Exercise 8.2
# Exercise 8.2: a factorial with tf.while_loop.
def factorial(n):
    """``n!`` for a scalar int32 tensor ``n`` (``0! = 1``), built with ``tf.while_loop``."""
    # BEGIN SOLUTION loop variables (i, product) starting at (1, 1); multiply while i <= n
    _, product = tf.while_loop(lambda i, product: i <= n,
                               lambda i, product: (i + 1, product * i),
                               (tf.constant(1), tf.constant(1)))
    return product
    # END SOLUTION

# %% Exercise 8.3
# Exercise 8.3: a running product with tf.scan.
def running_product(elems):
    """``[e0, e0*e1, e0*e1*e2, ...]`` for a 1-D tensor ``elems``, built with ``tf.scan``."""
    # BEGIN SOLUTION tf.scan(fn(accumulated, element), elems)
    return tf.scan(lambda accumulated, element: accumulated * element, elems)
    # END SOLUTION
