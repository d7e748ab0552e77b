""" Bi-directional Recurrent Neural Network (aymericdamien/TensorFlow-Examples,
``examples/3_NeuralNetworks/bidirectional_rnn.py``).

A Bi-directional Recurrent Neural Network (LSTM) implementation example using
TensorFlow library, on MNIST rows as time steps (``tf.contrib.rnn``'s
``BasicLSTMCell`` and ``static_bidirectional_rnn``).

Shortened: synthetic 28x28 "digits" (a bright band whose row depends on the
class) instead of the MNIST download, 16 hidden units, 40 steps of batch 32;
learning rate 0.1.  Added for the sweep: after initialization the trainable
variables are overwritten with NumPy-seeded values, so the losses can be
compared with TensorFlow's.
"""

from __future__ import print_function

import numpy as np

import minitf as tf
from minitf.contrib import rnn


class SyntheticMnist:
    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)

    def next_batch(self, batch_size):
        labels = self.rng.randint(0, 10, batch_size)
        images = self.rng.rand(batch_size, 28, 28).astype(np.float32) * 0.3
        for i, label in enumerate(labels):
            images[i, 2 * label:2 * label + 4, :] += 0.7
        return images.reshape(batch_size, 784), np.eye(10, dtype=np.float32)[labels]


train = SyntheticMnist(0)
test = SyntheticMnist(1)

# Training Parameters
learning_rate = 0.1
training_steps = 40
batch_size = 32
display_step = 10

# Network Parameters
num_input = 28 # MNIST data input (img shape: 28*28)
timesteps = 28 # timesteps
num_hidden = 16 # hidden layer num of features
num_classes = 10 # MNIST total classes (0-9 digits)

# tf Graph input
X = tf.placeholder("float", [None, timesteps, num_input])
Y = tf.placeholder("float", [None, num_classes])

# Define weights
weights = {
    # Hidden layer weights => 2*n_hidden because of forward + backward cells
    'out': tf.Variable(tf.random_normal([2*num_hidden, num_classes]))
}
biases = {
    'out': tf.Variable(tf.random_normal([num_classes]))
}


def BiRNN(x, weights, biases):

    # Prepare data shape to match `rnn` function requirements
    # Current data input shape: (batch_size, timesteps, n_input)
    # Required shape: 'timesteps' tensors list of shape (batch_size, num_input)

    # Unstack to get a list of 'timesteps' tensors of shape (batch_size, num_input)
    x = tf.unstack(x, timesteps, 1)

    # Define lstm cells with tensorflow
    # Forward direction cell
    lstm_fw_cell = rnn.BasicLSTMCell(num_hidden, forget_bias=1.0)
    # Backward direction cell
    lstm_bw_cell = rnn.BasicLSTMCell(num_hidden, forget_bias=1.0)

    # Get lstm cell output
    try:
        outputs, _, _ = rnn.static_bidirectional_rnn(lstm_fw_cell, lstm_bw_cell, x,
                                              dtype=tf.float32)
    except Exception: # Old TensorFlow version only returns outputs not states
        outputs = rnn.static_bidirectional_rnn(lstm_fw_cell, lstm_bw_cell, x,
                                        dtype=tf.float32)

    # Linear activation, using rnn inner loop last output
    return tf.matmul(outputs[-1], weights['out']) + biases['out'], outputs


logits, outputs = BiRNN(X, weights, biases)
prediction = tf.nn.softmax(logits)

# Define loss and optimizer
loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(
    logits=logits, labels=Y))
optimizer = tf.train.GradientDescentOptimizer(learning_rate=learning_rate)
train_op = optimizer.minimize(loss_op)

# Evaluate model (with test logits, for dropout to be disabled)
correct_pred = tf.equal(tf.argmax(prediction, 1), tf.argmax(Y, 1))
accuracy = tf.reduce_mean(tf.cast(correct_pred, tf.float32))

# Initialize the variables (i.e. assign their default value)
init = tf.global_variables_initializer()

losses = []
# Start training
with tf.Session() as sess:

    # Run the initializer
    sess.run(init)
    # For the sweep: NumPy-seeded weights, in the order the variables were made.
    seeded = np.random.RandomState(42)
    for v in tf.trainable_variables():
        sess.run(v.assign(seeded.uniform(-0.3, 0.3, v.shape.as_list()).astype(np.float32)))

    for step in range(1, training_steps+1):
        batch_x, batch_y = train.next_batch(batch_size)
        # Reshape data to get 28 seq of 28 elements
        batch_x = batch_x.reshape((batch_size, timesteps, num_input))
        # Run optimization op (backprop)
        sess.run(train_op, feed_dict={X: batch_x, Y: batch_y})
        if step % display_step == 0 or step == 1:
            # Calculate batch loss and accuracy
            loss, acc = sess.run([loss_op, accuracy], feed_dict={X: batch_x,
                                                                 Y: batch_y})
            losses.append(float(loss))
            print("Step " + str(step) + ", Minibatch Loss= " + \
                  "{:.4f}".format(loss) + ", Training Accuracy= " + \
                  "{:.3f}".format(acc))

    print("Optimization Finished!")

    # Calculate accuracy for 128 mnist test images
    test_len = 128
    test_data, test_label = test.next_batch(test_len)
    test_data = test_data.reshape((-1, timesteps, num_input))
    test_accuracy = sess.run(accuracy, feed_dict={X: test_data, Y: test_label})
    print("Testing Accuracy:", test_accuracy)

# What the sweep compares with TensorFlow 2.21 (tests/test_tf1_programs_sweep.py).
results = {
    "losses": losses,
    "test_accuracy": float(test_accuracy),
    "outputs": [len(outputs), outputs[-1].shape.as_list(), outputs[-1].name],
    "variables": [(v.name, v.shape.as_list()) for v in tf.trainable_variables()],
}
