"""Solutions to the exercises of notebook 02, *Automatic differentiation builds graph*.

Each ``# %% Exercise N.M`` section is one exercise's complete cell; the
notebook's starter cell is generated from it (``minitf.labs.exercises``).
The cells run after the notebook's setup cell (NumPy and minitf imported).
"""

import numpy as np

import minitf as tf

# %% Exercise 2.1
# Exercise 2.1: partial derivatives with tf.gradients.
def partials(x0, y0):
    """``[df/dx, df/dy]`` of ``f(x, y) = x * y + sin(x)`` at ``(x0, y0)``, from tf.gradients."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [], name="x")
        y = tf.placeholder(tf.float64, [], name="y")
        f = x * y + tf.sin(x)
        # BEGIN SOLUTION build the gradient ops with tf.gradients, then run them with a feed
        gradients = tf.gradients(f, [x, y])
        with tf.Session() as sess:
            return sess.run(gradients, {x: x0, y: y0})
        # END SOLUTION

# %% Exercise 2.2
# Exercise 2.2: the numeric gradient, by central differences.
def numeric_gradient(f, x, delta=1e-6):
    """The gradient of the scalar NumPy function ``f`` at the array ``x``: element ``i`` is
    ``(f(x + delta * e_i) - f(x - delta * e_i)) / (2 * delta)``."""
    x = np.asarray(x, dtype=np.float64)
    gradient = np.zeros_like(x)
    # BEGIN SOLUTION perturb one element at a time (np.ndindex(x.shape) visits them all)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = delta
        gradient[i] = (f(x + step) - f(x - step)) / (2 * delta)
    # END SOLUTION
    return gradient

# %% Exercise 2.3
# Exercise 2.3: a second derivative.
def second_derivative_of_tanh(x0):
    """``d²/dx² tanh(x)`` at ``x0``, by calling tf.gradients twice."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [], name="x")
        y = tf.tanh(x)
        # BEGIN SOLUTION differentiate y, then differentiate the result again
        (dy,) = tf.gradients(y, x)
        (d2y,) = tf.gradients(dy, x)
        with tf.Session() as sess:
            return sess.run(d2y, {x: x0})
        # END SOLUTION
