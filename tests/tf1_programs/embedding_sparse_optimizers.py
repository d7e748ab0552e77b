"""An embedding-bag text classifier trained with each TF1 optimizer, in the
style of the TF 1.x word-embedding tutorials (``tf.nn.embedding_lookup`` of
a ``[vocab, dim]`` table whose gradient is an ``IndexedSlices``; the
optimizers use their ``SparseApply*`` updates), plus
``tf.contrib.opt.LazyAdamOptimizer`` as used for large vocabularies.

The program is the loop many tutorials write to compare optimizers: the same
model, a fresh graph per optimizer, a fixed number of steps.  Shortened:
vocabulary 30, 8 words per sentence, 15 steps.  The table and the classifier
start from NumPy-seeded values (``tf.constant_initializer``), so every number
is comparable with TensorFlow's.
"""

import numpy as np

import minitf as tf

VOCAB_SIZE = 30
EMBEDDING_SIZE = 4
SENTENCE_LENGTH = 8
NUM_CLASSES = 3
STEPS = 15

rng = np.random.RandomState(0)
init_embeddings = rng.uniform(-1, 1, (VOCAB_SIZE, EMBEDDING_SIZE)).astype(np.float32)
init_weights = rng.normal(0, 0.5, (EMBEDDING_SIZE, NUM_CLASSES)).astype(np.float32)
# Words 0-19 only: rows 20-29 of the table never get a gradient.
sentences = rng.randint(0, 20, (16, SENTENCE_LENGTH))
labels = sentences[:, 0] % NUM_CLASSES

OPTIMIZERS = {
    'sgd': lambda: tf.train.GradientDescentOptimizer(0.5),
    'adagrad': lambda: tf.train.AdagradOptimizer(0.5),
    'momentum': lambda: tf.train.MomentumOptimizer(0.1, momentum=0.9),
    'nesterov': lambda: tf.train.MomentumOptimizer(0.1, momentum=0.9, use_nesterov=True),
    'adam': lambda: tf.train.AdamOptimizer(0.05),
    'lazy_adam': lambda: tf.contrib.opt.LazyAdamOptimizer(0.05),
    'rmsprop': lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.5),
    'ftrl': lambda: tf.train.FtrlOptimizer(0.5, l1_regularization_strength=0.001,
                                           l2_regularization_strength=0.001),
    'proximal_adagrad': lambda: tf.train.ProximalAdagradOptimizer(
        0.5, l1_regularization_strength=0.001),
    'proximal_sgd': lambda: tf.train.ProximalGradientDescentOptimizer(
        0.5, l2_regularization_strength=0.01),
    'adadelta': lambda: tf.train.AdadeltaOptimizer(1.0),
}


def train(make_optimizer):
    with tf.Graph().as_default():
        words = tf.placeholder(tf.int32, [None, SENTENCE_LENGTH], name='words')
        targets = tf.placeholder(tf.int64, [None], name='targets')
        embeddings = tf.get_variable('embeddings', initializer=tf.constant(init_embeddings))
        embedded = tf.nn.embedding_lookup(embeddings, words)
        sentence = tf.reduce_mean(embedded, axis=1)
        weights = tf.get_variable('weights', [EMBEDDING_SIZE, NUM_CLASSES],
                                  initializer=tf.constant_initializer(init_weights))
        biases = tf.get_variable('biases', [NUM_CLASSES], initializer=tf.zeros_initializer())
        logits = tf.matmul(sentence, weights) + biases
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=targets, logits=logits))
        optimizer = make_optimizer()
        grads_and_vars = optimizer.compute_gradients(loss)
        grad_types = [isinstance(g, tf.IndexedSlices) for g, _ in grads_and_vars]
        global_step = tf.train.get_or_create_global_step()
        train_op = optimizer.apply_gradients(grads_and_vars, global_step=global_step)
        slots = sorted(v.op.name for v in tf.global_variables()
                       if v not in tf.trainable_variables() and v is not global_step)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = []
            for step in range(STEPS):
                batch = slice(step % 2 * 8, step % 2 * 8 + 8)
                _, loss_value = sess.run([train_op, loss], {words: sentences[batch],
                                                            targets: labels[batch]})
                losses.append(float(loss_value))
            table = sess.run(embeddings)
    untouched = bool((table[20:] == init_embeddings[20:]).all())
    return {
        'losses': losses[::7] + [losses[-1]],
        'table_row0': table[0].tolist(),
        'untouched_rows_kept': untouched,
        'grad_types': grad_types,
        'slots': slots,
    }


results = {name: train(make) for name, make in sorted(OPTIMIZERS.items())}
for name, result in results.items():
    print('%-16s loss %.4f -> %.4f' % (name, result['losses'][0], result['losses'][-1]))
