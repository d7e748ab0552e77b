"""A ``tf.contrib.layers`` CNN in the style of the TF 1.x "tf.contrib.layers"
MNIST tutorials (TF's ``tutorials/layers`` predecessor and the slim-style
Hvass/sjchoi86 notebooks): ``arg_scope`` over ``conv2d``/``fully_connected``
with ``xavier_initializer``, ``l2_regularizer`` and ``batch_norm`` as the
normalizer (``is_training`` placeholder, ``UPDATE_OPS`` dependencies),
``max_pool2d``, ``flatten``, ``dropout``; the regularization losses summed
with ``apply_regularization`` and ``tf.losses.get_regularization_losses``.

Shortened: 14x14 synthetic images, 8 and 16 filters, 20 steps.  Added for
the sweep: NumPy-seeded trainable variables, so the numbers compare with
TensorFlow's (tf_slim's ``contrib.layers`` there).
"""

import numpy as np

import minitf as tf

layers = tf.contrib.layers
arg_scope = tf.contrib.framework.arg_scope

rng = np.random.RandomState(0)
labels_data = rng.randint(0, 4, 32)
images_data = rng.rand(32, 14, 14, 1).astype(np.float32) * 0.2
for i, label in enumerate(labels_data):
    images_data[i, 3 * label:3 * label + 3, :, 0] += 0.8

x = tf.placeholder(tf.float32, [None, 14, 14, 1], name='x')
y = tf.placeholder(tf.int64, [None], name='y')
is_training = tf.placeholder(tf.bool, [], name='is_training')


def model(inputs, is_training):
    batch_norm_params = {'is_training': is_training, 'decay': 0.9, 'updates_collections': None}
    with arg_scope([layers.conv2d, layers.fully_connected],
                   weights_initializer=layers.xavier_initializer(),
                   weights_regularizer=layers.l2_regularizer(0.0005),
                   normalizer_fn=layers.batch_norm,
                   normalizer_params=batch_norm_params):
        net = layers.conv2d(inputs, 8, [3, 3], scope='conv1')
        net = layers.max_pool2d(net, [2, 2], scope='pool1')
        net = layers.conv2d(net, 16, [3, 3], scope='conv2')
        net = layers.max_pool2d(net, [2, 2], scope='pool2')
        net = layers.flatten(net, scope='flatten')
        net = layers.fully_connected(net, 32, scope='fc3')
        net = layers.dropout(net, keep_prob=0.75, is_training=is_training, scope='dropout3')
        logits = layers.fully_connected(net, 4, activation_fn=None, normalizer_fn=None,
                                        scope='fco')
    return logits, net


logits, features = model(x, is_training)
xent = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
reg_losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
reg = layers.apply_regularization(layers.l2_regularizer(0.0005),
                                  [v for v in tf.trainable_variables() if 'weights' in v.name])
total_loss = xent + tf.add_n(reg_losses)
global_step = tf.contrib.framework.get_or_create_global_step()
train_op = tf.train.MomentumOptimizer(0.05, 0.9).minimize(total_loss, global_step=global_step)
accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))

losses = []
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    seeded = np.random.RandomState(3)
    for v in tf.trainable_variables():
        sess.run(v.assign(seeded.uniform(-0.3, 0.3, v.shape.as_list()).astype(np.float32)))
    for step in range(20):
        loss_value, _ = sess.run([xent, train_op],
                                 {x: images_data, y: labels_data, is_training: False})
        losses.append(float(loss_value))
    eval_loss, eval_acc, reg_value = sess.run([xent, accuracy, reg],
                                              {x: images_data, y: labels_data,
                                               is_training: False})
    moving_mean = sess.run(tf.get_default_graph().get_tensor_by_name(
        'conv1/BatchNorm/moving_mean:0'))

results = {
    "variables": [(v.op.name, v.shape.as_list()) for v in tf.global_variables()],
    "reg_losses": len(reg_losses),
    "losses": losses[::5] + [losses[-1]],
    "eval": [float(eval_loss), float(eval_acc), float(reg_value)],
    "moving_mean": moving_mean.tolist(),
    "logits": [logits.name, logits.shape.as_list()],
    "features": features.shape.as_list(),
}
