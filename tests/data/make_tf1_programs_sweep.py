"""Records TensorFlow 2.21's results for the programs in tests/tf1_programs/.

Run once with TensorFlow 2.21, tf-keras 2.21 (TF 2.21's ``tf.nn.rnn_cell``
needs it) and tf-slim installed (the test suite never imports them)::

    /tmp/tfvenv/bin/python tests/data/make_tf1_programs_sweep.py [program ...]

Each program is written for ``import minitf as tf``; here the name ``minitf``
is bound to ``tensorflow.compat.v1`` (v2 behaviour off) before the program is
run, and ``minitf.contrib`` to the TF1 ``contrib`` names it uses, taken from
TF's own successors: ``tf_slim`` for ``contrib.layers``/``framework``,
``tf.nn.rnn_cell`` for ``contrib.rnn``, and re-typings of TF 1.15's
``contrib.seq2seq.sequence_loss`` and ``contrib.opt.LazyAdamOptimizer``.
Each program runs in a fresh temporary directory, and its module-level
``results`` dict is stored in tests/data/tf1_programs_sweep.json, which
tests/test_tf1_programs_sweep.py compares with minitf's run.
"""

import json
import os
import sys
import tempfile
import types

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tf.nn.rnn_cell needs tf_keras in TF 2.21
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "..", "tf1_programs")
OUTPUT = os.path.join(HERE, "tf1_programs_sweep.json")


def sequence_loss(logits, targets, weights, average_across_timesteps=True,
                  average_across_batch=True, softmax_loss_function=None, name=None):
    """TF 1.15's tf.contrib.seq2seq.sequence_loss (the default arguments)."""
    with tf.name_scope(name, "sequence_loss", [logits, targets, weights]):
        num_classes = tf.shape(logits)[2]
        logits_flat = tf.reshape(logits, [-1, num_classes])
        targets = tf.reshape(targets, [-1])
        if softmax_loss_function is None:
            crossent = tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=targets, logits=logits_flat)
        else:
            crossent = softmax_loss_function(labels=targets, logits=logits_flat)
        crossent *= tf.reshape(weights, [-1])
        if average_across_timesteps and average_across_batch:
            crossent = tf.div_no_nan(tf.reduce_sum(crossent), tf.reduce_sum(weights))
        else:
            batch_size = tf.shape(logits)[0]
            sequence_length = tf.shape(logits)[1]
            crossent = tf.reshape(crossent, [batch_size, sequence_length])
            if average_across_timesteps:
                crossent = tf.div_no_nan(tf.reduce_sum(crossent, axis=[1]),
                                         tf.reduce_sum(weights, axis=[1]))
            if average_across_batch:
                crossent = tf.div_no_nan(tf.reduce_sum(crossent, axis=[0]),
                                         tf.reduce_sum(weights, axis=[0]))
        return crossent


class LazyAdamOptimizer(tf.train.AdamOptimizer):
    """TF 1.15's tf.contrib.opt.LazyAdamOptimizer, re-typed."""

    def _apply_sparse(self, grad, var):
        beta1_power, beta2_power = self._get_beta_accumulators()
        beta1_power = tf.cast(beta1_power, var.dtype.base_dtype)
        beta2_power = tf.cast(beta2_power, var.dtype.base_dtype)
        lr_t = tf.cast(self._lr_t, var.dtype.base_dtype)
        beta1_t = tf.cast(self._beta1_t, var.dtype.base_dtype)
        beta2_t = tf.cast(self._beta2_t, var.dtype.base_dtype)
        epsilon_t = tf.cast(self._epsilon_t, var.dtype.base_dtype)
        lr = (lr_t * tf.sqrt(1 - beta2_power) / (1 - beta1_power))
        m = self.get_slot(var, "m")
        m_t = tf.scatter_update(m, grad.indices,
                                beta1_t * tf.gather(m, grad.indices) +
                                (1 - beta1_t) * grad.values, use_locking=self._use_locking)
        v = self.get_slot(var, "v")
        v_t = tf.scatter_update(v, grad.indices,
                                beta2_t * tf.gather(v, grad.indices) +
                                (1 - beta2_t) * tf.square(grad.values),
                                use_locking=self._use_locking)
        m_t_slice = tf.gather(m_t, grad.indices)
        v_t_slice = tf.gather(v_t, grad.indices)
        denominator_slice = tf.sqrt(v_t_slice) + epsilon_t
        var_update = tf.scatter_sub(var, grad.indices, lr * m_t_slice / denominator_slice,
                                    use_locking=self._use_locking)
        return tf.group(var_update, m_t, v_t)


def contrib_module():
    from tensorflow.python.framework import ops
    from tensorflow.python.ops import control_flow_ops
    # tf_slim 1.1 predates the removal of these two names from TF's internals.
    ops.Tensor = getattr(ops, "Tensor", tf.Tensor)
    control_flow_ops.cond = getattr(control_flow_ops, "cond", tf.cond)
    import tf_slim
    contrib = types.ModuleType("minitf.contrib")
    rnn = types.ModuleType("minitf.contrib.rnn")
    for name in ("BasicLSTMCell", "LSTMCell", "GRUCell", "BasicRNNCell", "MultiRNNCell",
                 "DropoutWrapper", "LSTMStateTuple", "RNNCell"):
        setattr(rnn, name, getattr(tf.nn.rnn_cell, name))
    rnn.static_rnn = tf.nn.static_rnn
    rnn.static_bidirectional_rnn = tf.nn.static_bidirectional_rnn
    layers = types.ModuleType("minitf.contrib.layers")
    for name in ("fully_connected", "conv2d", "flatten", "batch_norm", "max_pool2d",
                 "avg_pool2d", "dropout", "l2_regularizer", "l1_regularizer",
                 "xavier_initializer", "variance_scaling_initializer",
                 "apply_regularization", "arg_scope", "linear"):
        setattr(layers, name, getattr(tf_slim, name))
    framework = types.ModuleType("minitf.contrib.framework")
    framework.arg_scope = tf_slim.arg_scope
    framework.get_or_create_global_step = tf.train.get_or_create_global_step
    seq2seq = types.ModuleType("minitf.contrib.seq2seq")
    seq2seq.sequence_loss = sequence_loss
    opt = types.ModuleType("minitf.contrib.opt")
    opt.LazyAdamOptimizer = LazyAdamOptimizer
    for name, module in (("rnn", rnn), ("layers", layers), ("framework", framework),
                         ("seq2seq", seq2seq), ("opt", opt)):
        setattr(contrib, name, module)
        sys.modules["minitf.contrib." + name] = module
    return contrib


def install_minitf_alias():
    tf.contrib = contrib_module()
    sys.modules["minitf"] = tf
    sys.modules["minitf.contrib"] = tf.contrib


def run_program(path):
    """Runs one program in a fresh directory; returns its ``results`` dict."""
    namespace = {"__name__": "__main__", "__file__": path}
    cwd = os.getcwd()
    tf.reset_default_graph()
    with tempfile.TemporaryDirectory() as scratch:
        os.chdir(scratch)
        try:
            with open(path) as f:
                code = compile(f.read(), path, "exec")
            try:
                exec(code, namespace)
            except SystemExit as e:
                if e.code not in (None, 0):
                    raise
        finally:
            os.chdir(cwd)
    return json.loads(json.dumps(namespace["results"]))


def main(names):
    install_minitf_alias()
    recorded = {}
    if os.path.exists(OUTPUT):
        with open(OUTPUT) as f:
            recorded = json.load(f)
    names = names or sorted(n[:-3] for n in os.listdir(PROGRAMS)
                            if n.endswith(".py") and not n.startswith("_"))
    for name in names:
        print("==== %s" % name, flush=True)
        recorded[name] = run_program(os.path.join(PROGRAMS, name + ".py"))
    with open(OUTPUT, "w") as f:  # one program per line, for readable diffs
        f.write("{\n%s\n}\n" % ",\n".join("%s: %s" % (json.dumps(name), json.dumps(
            recorded[name], sort_keys=True)) for name in sorted(recorded)))


if __name__ == "__main__":
    main(sys.argv[1:])
