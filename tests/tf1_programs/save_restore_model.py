"""Save and Restore a model using TensorFlow (aymericdamien/TensorFlow-Examples,
``examples/4_Utils/save_restore_model.py``).

A multilayer perceptron trained for a few epochs, saved with
``tf.train.Saver``, restored in a second session and trained further.
Changed as in the sweep of issue 15: ``model_path`` is ``./model/model.ckpt``
(a directory that does not exist yet, which TF's checkpoint writer creates).
Shortened: synthetic "MNIST" (784 inputs, 10 classes), 32 hidden units per
layer, 3 + 4 epochs of 4 batches; NumPy-seeded weights for the sweep.
"""

from __future__ import print_function

import numpy as np

import minitf as tf


class Batches:
    def __init__(self, seed, n=128):
        rng = np.random.RandomState(seed)
        labels = rng.randint(0, 10, n)
        self.images = rng.rand(n, 784).astype(np.float32) * 0.3
        for i, label in enumerate(labels):
            self.images[i, 70 * label:70 * label + 60] += 0.7
        self.labels = np.eye(10, dtype=np.float32)[labels]
        self.num_examples = n
        self.position = 0

    def next_batch(self, batch_size):
        start, self.position = self.position, (self.position + batch_size) % self.num_examples
        return self.images[start:start + batch_size], self.labels[start:start + batch_size]


train_data = Batches(0)
test_data = Batches(1)

# Parameters
learning_rate = 0.01
batch_size = 32
display_step = 1
model_path = "./model/model.ckpt"

# Network Parameters
n_hidden_1 = 32 # 1st layer number of features
n_hidden_2 = 32 # 2nd layer number of features
n_input = 784 # MNIST data input (img shape: 28*28)
n_classes = 10 # MNIST total classes (0-9 digits)

# tf Graph input
x = tf.placeholder("float", [None, n_input])
y = tf.placeholder("float", [None, n_classes])


# Create model
def multilayer_perceptron(x, weights, biases):
    # Hidden layer with RELU activation
    layer_1 = tf.add(tf.matmul(x, weights['h1']), biases['b1'])
    layer_1 = tf.nn.relu(layer_1)
    # Hidden layer with RELU activation
    layer_2 = tf.add(tf.matmul(layer_1, weights['h2']), biases['b2'])
    layer_2 = tf.nn.relu(layer_2)
    # Output layer with linear activation
    out_layer = tf.matmul(layer_2, weights['out']) + biases['out']
    return out_layer

# Store layers weight & bias
weights = {
    'h1': tf.Variable(tf.random_normal([n_input, n_hidden_1])),
    'h2': tf.Variable(tf.random_normal([n_hidden_1, n_hidden_2])),
    'out': tf.Variable(tf.random_normal([n_hidden_2, n_classes]))
}
biases = {
    'b1': tf.Variable(tf.random_normal([n_hidden_1])),
    'b2': tf.Variable(tf.random_normal([n_hidden_2])),
    'out': tf.Variable(tf.random_normal([n_classes]))
}

# Construct model
pred = multilayer_perceptron(x, weights, biases)

# Define loss and optimizer
cost = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=pred, labels=y))
optimizer = tf.train.AdamOptimizer(learning_rate=learning_rate).minimize(cost)

# Initialize the variables (i.e. assign their default value)
init = tf.global_variables_initializer()

# 'Saver' op to save and restore all the variables
saver = tf.train.Saver()
costs = []

# Running first session
print("Starting 1st session...")
with tf.Session() as sess:

    # Run the initializer
    sess.run(init)
    seeded = np.random.RandomState(2)
    for v in tf.trainable_variables():
        sess.run(v.assign(seeded.normal(0, 0.1, v.shape.as_list()).astype(np.float32)))

    # Training cycle
    for epoch in range(3):
        avg_cost = 0.
        total_batch = int(train_data.num_examples/batch_size)
        # Loop over all batches
        for i in range(total_batch):
            batch_x, batch_y = train_data.next_batch(batch_size)
            # Run optimization op (backprop) and cost op (to get loss value)
            _, c = sess.run([optimizer, cost], feed_dict={x: batch_x,
                                                          y: batch_y})
            # Compute average loss
            avg_cost += c / total_batch
        # Display logs per epoch step
        if epoch % display_step == 0:
            print("Epoch:", '%04d' % (epoch+1), "cost=", \
                "{:.9f}".format(avg_cost))
            costs.append(float(avg_cost))
    print("First Optimization Finished!")

    # Test model
    correct_prediction = tf.equal(tf.argmax(pred, 1), tf.argmax(y, 1))
    # Calculate accuracy
    accuracy = tf.reduce_mean(tf.cast(correct_prediction, "float"))
    first_accuracy = accuracy.eval({x: test_data.images, y: test_data.labels})
    print("Accuracy:", first_accuracy)

    # Save model weights to disk
    save_path = saver.save(sess, model_path)
    print("Model saved in file: %s" % save_path)

# Running a new session
print("Starting 2nd session...")
with tf.Session() as sess:
    # Initialize variables
    sess.run(init)

    # Restore model weights from previously saved model
    saver.restore(sess, model_path)
    print("Model restored from file: %s" % save_path)
    restored_accuracy = accuracy.eval({x: test_data.images, y: test_data.labels})

    # Resume training
    for epoch in range(4):
        avg_cost = 0.
        total_batch = int(train_data.num_examples / batch_size)
        # Loop over all batches
        for i in range(total_batch):
            batch_x, batch_y = train_data.next_batch(batch_size)
            # Run optimization op (backprop) and cost op (to get loss value)
            _, c = sess.run([optimizer, cost], feed_dict={x: batch_x,
                                                          y: batch_y})
            # Compute average loss
            avg_cost += c / total_batch
        # Display logs per epoch step
        if epoch % display_step == 0:
            print("Epoch:", '%04d' % (epoch + 1), "cost=", \
                "{:.9f}".format(avg_cost))
            costs.append(float(avg_cost))
    print("Second Optimization Finished!")

    # Test model
    correct_prediction = tf.equal(tf.argmax(pred, 1), tf.argmax(y, 1))
    # Calculate accuracy
    accuracy = tf.reduce_mean(tf.cast(correct_prediction, "float"))
    final_accuracy = accuracy.eval({x: test_data.images, y: test_data.labels})
    print("Accuracy:", final_accuracy)

results = {
    "save_path": save_path,
    "costs": costs,
    "accuracies": [float(first_accuracy), float(restored_accuracy), float(final_accuracy)],
    "latest": tf.train.latest_checkpoint('./model'),
    "saved_variables": sorted(name for name, _ in tf.train.list_variables('./model')),
}
