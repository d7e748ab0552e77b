"""CS20si (Stanford, 2018): ``examples/04_word2vec.py``, the ``SkipGramModel`` class.

Changed as the lecture suggests trying: the loss is
``tf.nn.sampled_softmax_loss`` instead of ``tf.nn.nce_loss`` and the
optimizer ``AdagradOptimizer`` (sparse gradients of the embedding matrix).
Shortened: the text8 download is replaced by a synthetic corpus streamed by
the same kind of generator, 200 training steps, vocabulary 50.  Seeds fixed.
"""

import os
import random

import numpy as np

import minitf as tf

VOCAB_SIZE = 50
BATCH_SIZE = 16
EMBED_SIZE = 8            # dimension of the word embedding vectors
SKIP_WINDOW = 1           # the context window
NUM_SAMPLED = 10          # number of negative examples to sample
LEARNING_RATE = 0.5
NUM_TRAIN_STEPS = 200
SKIP_STEP = 50


def safe_mkdir(path):
    """ Create a directory if there isn't one already. """
    try:
        os.mkdir(path)
    except OSError:
        pass


def generate_sample(index_words, context_window_size):
    """ Form training pairs according to the skip-gram model. """
    for index, center in enumerate(index_words):
        context = random.randint(1, context_window_size)
        # get a random target before the center word
        for target in index_words[max(0, index - context): index]:
            yield center, target
        # get a random target after the center wrod
        for target in index_words[index + 1: index + context + 1]:
            yield center, target


def batch_gen():
    rng = np.random.RandomState(1)
    index_words, word = [], 0
    for _ in range(20000):
        word = (word + 1) % VOCAB_SIZE if rng.rand() < 0.7 else rng.randint(VOCAB_SIZE)
        index_words.append(word)
    single_gen = generate_sample(index_words, SKIP_WINDOW)
    while True:
        center_batch = np.zeros(BATCH_SIZE, dtype=np.int32)
        target_batch = np.zeros([BATCH_SIZE, 1])
        for index in range(BATCH_SIZE):
            center_batch[index], target_batch[index] = next(single_gen)
        yield center_batch, target_batch


class SkipGramModel:
    """ Build the graph for word2vec model """
    def __init__(self, dataset, vocab_size, embed_size, batch_size, num_sampled, learning_rate):
        self.vocab_size = vocab_size
        self.embed_size = embed_size
        self.batch_size = batch_size
        self.num_sampled = num_sampled
        self.lr = learning_rate
        self.global_step = tf.get_variable('global_step', initializer=tf.constant(0),
                                           trainable=False)
        self.skip_step = SKIP_STEP
        self.dataset = dataset

    def _import_data(self):
        """ Step 1: import data
        """
        with tf.name_scope('data'):
            self.iterator = self.dataset.make_initializable_iterator()
            self.center_words, self.target_words = self.iterator.get_next()

    def _create_embedding(self):
        """ Step 2 + 3: define weights and embedding lookup.
        In word2vec, it's actually the weights that we care about
        """
        with tf.name_scope('embed'):
            self.embed_matrix = tf.get_variable('embed_matrix',
                                                shape=[self.vocab_size, self.embed_size],
                                                initializer=tf.random_uniform_initializer())
            self.embed = tf.nn.embedding_lookup(self.embed_matrix, self.center_words,
                                                name='embedding')

    def _create_loss(self):
        """ Step 4: define the loss function """
        with tf.name_scope('loss'):
            # construct variables for the sampled softmax loss
            nce_weight = tf.get_variable('nce_weight',
                                         shape=[self.vocab_size, self.embed_size],
                                         initializer=tf.truncated_normal_initializer(
                                             stddev=1.0 / (self.embed_size ** 0.5)))
            nce_bias = tf.get_variable('nce_bias', initializer=tf.zeros([VOCAB_SIZE]))

            # define loss function to be sampled softmax loss function
            self.loss = tf.reduce_mean(tf.nn.sampled_softmax_loss(weights=nce_weight,
                                                                  biases=nce_bias,
                                                                  labels=self.target_words,
                                                                  inputs=self.embed,
                                                                  num_sampled=self.num_sampled,
                                                                  num_classes=self.vocab_size),
                                       name='loss')

    def _create_optimizer(self):
        """ Step 5: define optimizer """
        self.optimizer = tf.train.AdagradOptimizer(self.lr).minimize(
            self.loss, global_step=self.global_step)

    def _create_summaries(self):
        with tf.name_scope('summaries'):
            tf.summary.scalar('loss', self.loss)
            tf.summary.histogram('histogram loss', self.loss)
            # because you have several summaries, we should merge them all
            # into one op to make it easier to manage
            self.summary_op = tf.summary.merge_all()

    def build_graph(self):
        """ Build the graph for our model """
        self._import_data()
        self._create_embedding()
        self._create_loss()
        self._create_optimizer()
        self._create_summaries()

    def train(self, num_train_steps):
        saver = tf.train.Saver()  # defaults to saving all variables - in this case embed_matrix, nce_weight, nce_bias

        initial_step = 0
        safe_mkdir('checkpoints')
        self.losses = []
        with tf.Session() as sess:
            sess.run(self.iterator.initializer)
            sess.run(tf.global_variables_initializer())
            ckpt = tf.train.get_checkpoint_state(os.path.dirname('checkpoints/checkpoint'))

            # if that checkpoint exists, restore from checkpoint
            if ckpt and ckpt.model_checkpoint_path:
                saver.restore(sess, ckpt.model_checkpoint_path)

            total_loss = 0.0  # we use this to calculate late average loss in the last SKIP_STEP steps
            writer = tf.summary.FileWriter('graphs/word2vec/lr' + str(self.lr), sess.graph)
            initial_step = self.global_step.eval()

            for index in range(initial_step, initial_step + num_train_steps):
                try:
                    loss_batch, _, summary = sess.run([self.loss, self.optimizer, self.summary_op])
                    writer.add_summary(summary, global_step=index)
                    total_loss += loss_batch
                    if (index + 1) % self.skip_step == 0:
                        print('Average loss at step {}: {:5.1f}'.format(index, total_loss / self.skip_step))
                        self.losses.append(total_loss / self.skip_step)
                        total_loss = 0.0
                        saver.save(sess, 'checkpoints/skip-gram', index)
                except tf.errors.OutOfRangeError:
                    sess.run(self.iterator.initializer)
            writer.close()
            self.final_step = int(self.global_step.eval())


def gen():
    yield from batch_gen()


def main():
    dataset = tf.data.Dataset.from_generator(gen,
                                             (tf.int32, tf.int32),
                                             (tf.TensorShape([BATCH_SIZE]), tf.TensorShape([BATCH_SIZE, 1])))
    model = SkipGramModel(dataset, VOCAB_SIZE, EMBED_SIZE, BATCH_SIZE, NUM_SAMPLED, LEARNING_RATE)
    model.build_graph()
    model.train(NUM_TRAIN_STEPS)
    return model


random.seed(0)
tf.set_random_seed(0)
model = main()

# What the sweep compares with TensorFlow 2.21 (tests/test_tf1_programs_sweep.py).
ckpt = tf.train.get_checkpoint_state('checkpoints')
results = {
    "final_step": model.final_step,
    "loss_decreased": bool(model.losses[-1] < model.losses[0]),
    "embed": model.embed.shape.as_list(),  # its name: see docs/differences.rst
    "loss": [model.loss.name, model.loss.shape.as_list()],
    "data": [model.center_words.shape.as_list(), model.target_words.shape.as_list(),
             model.target_words.dtype.name],
    "latest": os.path.basename(ckpt.model_checkpoint_path),
    "all_checkpoints": [os.path.basename(p) for p in ckpt.all_model_checkpoint_paths],
    "slots": sorted(v.op.name for v in tf.global_variables()),
}
