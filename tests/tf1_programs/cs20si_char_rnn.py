""" CS20si (Stanford, 2018): ``examples/11_char_rnn.py``, a character-level
language model: ``MultiRNNCell`` of GRU cells in ``tf.nn.dynamic_rnn``
with a sequence length from the one-hot input, an ``in_state`` of
``placeholder_with_default`` fed back while sampling, ``tf.layers.dense``
logits and ``tf.multinomial`` sampling.

Added, as the lecture's exercise suggests: the same model with
``LSTMCell``\\ s (a tuple of ``LSTMStateTuple`` states, fed back as one
nested ``feed_dict`` key) and a ``tf.contrib.seq2seq.sequence_loss``.
Shortened: the Trump-tweets file is replaced by a small repeated text,
40 training steps, hidden sizes [32, 16], 10 generated characters.  Seeds
fixed; added for the sweep: NumPy-seeded trainable variables, so the
losses compare with TensorFlow's (the samples are random).
"""

import os

import numpy as np

import minitf as tf

TEXT = ("the quick brown fox jumps over the lazy dog. " * 40)


def vocab_encode(text, vocab):
    return [vocab.index(x) + 1 for x in text if x in vocab]


def vocab_decode(array, vocab):
    return ''.join([vocab[x - 1] for x in array])


def read_data(text, vocab, window, overlap):
    for start in range(0, len(text) - window, overlap):
        chunk = text[start: start + window]
        chunk = vocab_encode(chunk, vocab)
        chunk += [0] * (window - len(chunk))
        yield chunk


def read_batch(stream, batch_size):
    batch = []
    for element in stream:
        batch.append(element)
        if len(batch) == batch_size:
            yield batch
            batch = []
    yield batch


class CharRNN(object):
    def __init__(self, model, cell='gru'):
        self.model = model
        self.cell = cell
        self.vocab = sorted(set(TEXT))
        self.seq = tf.placeholder(tf.int32, [None, None])
        self.temp = tf.constant(1.5)
        self.hidden_sizes = [32, 16]
        self.batch_size = 16
        self.lr = 0.01
        self.skip_step = 20
        self.num_steps = 25  # for RNN unrolled
        self.len_generated = 10
        self.gstep = tf.Variable(0, dtype=tf.int32, trainable=False, name='global_step')

    def create_rnn(self, seq):
        if self.cell == 'gru':
            layers = [tf.nn.rnn_cell.GRUCell(size) for size in self.hidden_sizes]
        else:
            layers = [tf.nn.rnn_cell.LSTMCell(size) for size in self.hidden_sizes]
        cells = tf.nn.rnn_cell.MultiRNNCell(layers)
        batch = tf.shape(seq)[0]
        zero_states = cells.zero_state(batch, dtype=tf.float32)
        if self.cell == 'gru':
            self.in_state = tuple([tf.placeholder_with_default(state, [None, state.shape[1]])
                                   for state in zero_states])
        else:
            self.in_state = tuple(
                tf.nn.rnn_cell.LSTMStateTuple(
                    tf.placeholder_with_default(state.c, [None, state.c.shape[1]]),
                    tf.placeholder_with_default(state.h, [None, state.h.shape[1]]))
                for state in zero_states)
        # this line to calculate the real length of seq
        # all seq are padded to be of the same length, which is num_steps
        length = tf.reduce_sum(tf.reduce_max(tf.sign(seq), 2), 1)
        self.output, self.out_state = tf.nn.dynamic_rnn(cells, seq, length, self.in_state)

    def create_model(self):
        seq = tf.one_hot(self.seq, len(self.vocab))
        self.create_rnn(seq)
        self.logits = tf.layers.dense(self.output, len(self.vocab), None)
        loss = tf.nn.softmax_cross_entropy_with_logits(logits=self.logits[:, :-1],
                                                       labels=seq[:, 1:])
        self.loss = tf.reduce_sum(loss)
        self.seq_loss = tf.contrib.seq2seq.sequence_loss(
            self.logits[:, :-1], tf.minimum(self.seq[:, 1:], len(self.vocab) - 1),
            tf.cast(tf.sign(self.seq[:, 1:]), tf.float32))
        # sample the next character from Maxwell-Boltzmann Distribution
        # with temperature temp. It works equally well without tf.exp
        self.sample = tf.multinomial(tf.exp(self.logits[:, -1] / self.temp), 1)[:, 0]
        self.opt = tf.train.AdamOptimizer(self.lr).minimize(self.loss, global_step=self.gstep)

    def train(self):
        saver = tf.train.Saver()
        start = 0
        self.losses = []
        with tf.Session() as sess:
            writer = tf.summary.FileWriter('graphs/gist', sess.graph)
            sess.run(tf.global_variables_initializer())
            seeded = np.random.RandomState(11)
            for v in tf.trainable_variables():
                sess.run(v.assign(seeded.uniform(-0.2, 0.2, v.shape.as_list())
                                  .astype(np.float32)))

            ckpt = tf.train.get_checkpoint_state(os.path.dirname('checkpoints/' + self.model + '/checkpoint'))
            if ckpt and ckpt.model_checkpoint_path:
                saver.restore(sess, ckpt.model_checkpoint_path)

            iteration = self.gstep.eval()
            stream = read_data(TEXT, self.vocab, self.num_steps, overlap=self.num_steps // 2)
            data = read_batch(stream, self.batch_size)
            while iteration < 40:
                batch = next(data)
                if len(batch) < self.batch_size:
                    stream = read_data(TEXT, self.vocab, self.num_steps,
                                       overlap=self.num_steps // 2)
                    data = read_batch(stream, self.batch_size)
                    batch = next(data)

                batch_loss, seq_loss, _ = sess.run([self.loss, self.seq_loss, self.opt],
                                                   {self.seq: batch})
                if (iteration + 1) % self.skip_step == 0:
                    print('Iter {}. \n    Loss {}. Time {}'.format(iteration, batch_loss, 0))
                    self.losses.append((float(batch_loss), float(seq_loss)))
                    self.samples = self.online_infer(sess)
                    saver.save(sess, 'checkpoints/' + self.model + '/char-rnn', iteration)
                iteration += 1
            writer.close()

    def online_infer(self, sess):
        """ Generate sequence one character at a time, based on the previous character
        """
        samples = []
        for seed in ['t', 'q']:
            sentence = seed
            state = None
            for _ in range(self.len_generated):
                batch = [vocab_encode(sentence[-1], self.vocab)]
                feed = {self.seq: batch}
                if state is not None:  # for the first decoder step, the state is None
                    if self.cell == 'gru':
                        for i in range(len(state)):
                            feed.update({self.in_state[i]: state[i]})
                    else:
                        feed.update({self.in_state: state})  # a nested key
                index, state = sess.run([self.sample, self.out_state], feed)
                sentence += vocab_decode(index, self.vocab)
            samples.append(sentence)
            print('\t' + sentence)
        return samples


def main(cell):
    model = 'trump_tweets_' + cell
    os.makedirs('checkpoints/' + model, exist_ok=True)
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        lm = CharRNN(model, cell)
        lm.create_model()
        lm.train()
        names = [v.op.name for v in tf.trainable_variables()]
    return lm, names


gru, gru_names = main('gru')
lstm, lstm_names = main('lstm')

# What the sweep compares with TensorFlow 2.21 (tests/test_tf1_programs_sweep.py).
results = {
    "gru_losses": gru.losses,
    "lstm_losses": lstm.losses,
    "gru_variables": gru_names,
    "lstm_variables": lstm_names,
    "sample_lengths": [len(s) for s in gru.samples + lstm.samples],
    "lstm_state": [type(lstm.out_state).__name__, type(lstm.out_state[0]).__name__,
                   [s.h.shape.as_list() for s in lstm.out_state]],
    "output": [gru.output.shape.as_list(), gru.logits.shape.as_list()],
    "checkpoints": sorted(os.listdir('checkpoints/trump_tweets_lstm')),
}
