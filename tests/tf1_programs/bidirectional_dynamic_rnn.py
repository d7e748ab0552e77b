"""A bidirectional LSTM sequence tagger with ``tf.nn.bidirectional_dynamic_rnn``,
in the style of the TF 1.x NER/POS-tagging tutorials (Guillaume Genthial's
"Sequence Tagging with Tensorflow", also the bidirectional part of the
sjchoi86 and CS20si RNN notes): word ids through ``embedding_lookup``,
``LSTMCell`` forward and backward with ``sequence_length``,
``tf.concat([output_fw, output_bw], axis=-1)``, a projection shared over
time steps, masked cross-entropy with ``tf.sequence_mask``.

Shortened: 12 sentences of up to 7 words, vocabulary 20, 5 tags, 25 Adam
steps.  The initial values are NumPy-seeded (after initialization), so the
numbers compare with TensorFlow's.
"""

import numpy as np

import minitf as tf

rng = np.random.RandomState(0)
lengths_data = rng.randint(2, 8, 12)
word_data = np.zeros((12, 7), np.int32)
tag_data = np.zeros((12, 7), np.int32)
for i, n in enumerate(lengths_data):
    word_data[i, :n] = rng.randint(1, 20, n)
    tag_data[i, :n] = word_data[i, :n] % 5

word_ids = tf.placeholder(tf.int32, shape=[None, None], name="word_ids")
sequence_lengths = tf.placeholder(tf.int32, shape=[None], name="sequence_lengths")
labels = tf.placeholder(tf.int32, shape=[None, None], name="labels")
hidden_size_lstm = 8
ntags = 5

with tf.variable_scope("words"):
    _word_embeddings = tf.get_variable(name="_word_embeddings", dtype=tf.float32,
                                       shape=[20, 6])
    word_embeddings = tf.nn.embedding_lookup(_word_embeddings, word_ids,
                                             name="word_embeddings")

with tf.variable_scope("bi-lstm"):
    cell_fw = tf.nn.rnn_cell.LSTMCell(hidden_size_lstm)
    cell_bw = tf.nn.rnn_cell.LSTMCell(hidden_size_lstm)
    (output_fw, output_bw), (state_fw, state_bw) = tf.nn.bidirectional_dynamic_rnn(
        cell_fw, cell_bw, word_embeddings,
        sequence_length=sequence_lengths, dtype=tf.float32)
    output = tf.concat([output_fw, output_bw], axis=-1)

with tf.variable_scope("proj"):
    W = tf.get_variable("W", dtype=tf.float32, shape=[2 * hidden_size_lstm, ntags])
    b = tf.get_variable("b", shape=[ntags], dtype=tf.float32, initializer=tf.zeros_initializer())
    nsteps = tf.shape(output)[1]
    output = tf.reshape(output, [-1, 2 * hidden_size_lstm])
    pred = tf.matmul(output, W) + b
    logits = tf.reshape(pred, [-1, nsteps, ntags])

labels_pred = tf.cast(tf.argmax(logits, axis=-1), tf.int32)
losses = tf.nn.sparse_softmax_cross_entropy_with_logits(logits=logits, labels=labels)
mask = tf.sequence_mask(sequence_lengths)
losses = tf.boolean_mask(losses, mask)
loss = tf.reduce_mean(losses)
train_op = tf.train.AdamOptimizer(0.05).minimize(loss)

feed = {word_ids: word_data, sequence_lengths: lengths_data, labels: tag_data}
history = []
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    seeded = np.random.RandomState(8)
    for v in tf.trainable_variables():
        sess.run(v.assign(seeded.uniform(-0.4, 0.4, v.shape.as_list()).astype(np.float32)))
    for step in range(25):
        _, loss_value = sess.run([train_op, loss], feed)
        history.append(float(loss_value))
    fw_value, bw_value, state_value, pred_value = sess.run(
        [output_fw, output_bw, state_bw, labels_pred], feed)

short = int(np.argmin(lengths_data))
results = {
    "losses": history[::6] + [history[-1]],
    "variables": [(v.op.name, v.shape.as_list()) for v in tf.trainable_variables()],
    "shapes": [output_fw.shape.as_list(), output_bw.shape.as_list(), logits.shape.as_list(),
               state_fw.c.shape.as_list()],
    "state_type": type(state_bw).__name__,
    "padding_zero": bool((fw_value[short, lengths_data[short]:] == 0).all()
                         and (bw_value[short, lengths_data[short]:] == 0).all()),
    "bw_first_step_is_final_state": bool(np.allclose(bw_value[:, 0], state_value.h)),
    "state_h": state_value.h[:2].tolist(),
    "accuracy": float(np.mean([(pred_value[i, :n] == tag_data[i, :n]).mean()
                               for i, n in enumerate(lengths_data)])),
}
