"""Freezing a trained model and serving the ``.pb``, as in TF's
``tensorflow/python/tools/freeze_graph.py`` usage and the well-known
"how to freeze a model and serve it" tutorial (metaflow-ai blog,
``freeze.py``/``load.py``): train, ``saver.save`` into ``./model/``, then in a
new graph ``tf.train.import_meta_graph`` + ``restore`` of
``tf.train.get_checkpoint_state``'s latest checkpoint,
``tf.graph_util.convert_variables_to_constants`` on the output node,
``tf.gfile.GFile(..., "wb").write(output_graph_def.SerializeToString())``;
``load_graph`` parses it into a ``tf.GraphDef`` and ``tf.import_graph_def``\\ s
it under the ``prefix`` name scope.

Shortened: a 2-layer MLP on synthetic data, 30 steps; NumPy-seeded
initial values (``tf.constant_initializer``) so the outputs compare.
"""

import os

import numpy as np

import minitf as tf

rng = np.random.RandomState(0)
x_data = rng.rand(64, 5).astype(np.float32)
y_data = (x_data.sum(axis=1) > 2.5).astype(np.int64)
w1_init = rng.normal(0, 0.5, (5, 8)).astype(np.float32)
w2_init = rng.normal(0, 0.5, (8, 2)).astype(np.float32)

# ---- train and save --------------------------------------------------------------------
x = tf.placeholder(tf.float32, [None, 5], name='x')
y = tf.placeholder(tf.int64, [None], name='y')
with tf.variable_scope('layer1'):
    w1 = tf.get_variable('weights', initializer=tf.constant(w1_init))
    b1 = tf.get_variable('biases', [8], initializer=tf.zeros_initializer())
    h1 = tf.nn.relu(tf.matmul(x, w1) + b1)
with tf.variable_scope('layer2'):
    w2 = tf.get_variable('weights', initializer=tf.constant(w2_init))
    b2 = tf.get_variable('biases', [2], initializer=tf.zeros_initializer())
    logits = tf.add(tf.matmul(h1, w2), b2, name='logits')
output = tf.nn.softmax(logits, name='output')
loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
global_step = tf.train.get_or_create_global_step()
train_op = tf.train.AdamOptimizer(0.05).minimize(loss, global_step=global_step)
saver = tf.train.Saver()
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for step in range(30):
        sess.run(train_op, {x: x_data, y: y_data})
    trained_output = sess.run(output, {x: x_data[:4]})
    saved_path = saver.save(sess, './model/model.ckpt', global_step=global_step)


# ---- freeze.py -------------------------------------------------------------------------
def freeze_graph(model_dir, output_node_names):
    """Extract the sub graph defined by the output nodes and convert
    all its variables into constant
    Args:
        model_dir: the root folder containing the checkpoint state file
        output_node_names: a string, containing all the output node's names,
                            comma separated
    """
    if not tf.gfile.Exists(model_dir):
        raise AssertionError(
            "Export directory doesn't exists. Please specify an export "
            "directory: %s" % model_dir)

    if not output_node_names:
        print("You need to supply the name of a node to --output_node_names.")
        return -1

    # We retrieve our checkpoint fullpath
    checkpoint = tf.train.get_checkpoint_state(model_dir)
    input_checkpoint = checkpoint.model_checkpoint_path

    # We precise the file fullname of our freezed graph
    absolute_model_dir = "/".join(input_checkpoint.split('/')[:-1])
    output_graph = absolute_model_dir + "/frozen_model.pb"

    # We clear devices to allow TensorFlow to control on which device it will load operations
    clear_devices = True

    # We start a session using a temporary fresh Graph
    with tf.Session(graph=tf.Graph()) as sess:
        # We import the meta graph in the current default Graph
        saver = tf.train.import_meta_graph(input_checkpoint + '.meta', clear_devices=clear_devices)

        # We restore the weights
        saver.restore(sess, input_checkpoint)

        # We use a built-in TF helper to export variables to constants
        output_graph_def = tf.graph_util.convert_variables_to_constants(
            sess, # The session is used to retrieve the weights
            tf.get_default_graph().as_graph_def(), # The graph_def is used to retrieve the nodes
            output_node_names.split(",") # The output node names are used to select the usefull nodes
        )

        # Finally we serialize and dump the output graph to the filesystem
        with tf.gfile.GFile(output_graph, "wb") as f:
            f.write(output_graph_def.SerializeToString())
        print("%d ops in the final graph." % len(output_graph_def.node))

    return output_graph_def, output_graph


# ---- load.py ---------------------------------------------------------------------------
def load_graph(frozen_graph_filename):
    # We load the protobuf file from the disk and parse it to retrieve the
    # unserialized graph_def
    with tf.gfile.GFile(frozen_graph_filename, "rb") as f:
        graph_def = tf.GraphDef()
        graph_def.ParseFromString(f.read())

    # Then, we import the graph_def into a new Graph and returns it
    with tf.Graph().as_default() as graph:
        # The name var will prefix every op/nodes in your graph
        # Since we load everything in a new graph, this is not needed
        tf.import_graph_def(graph_def, name="prefix")
    return graph


output_graph_def, frozen_path = freeze_graph('./model', 'output')
graph = load_graph(frozen_path)

# We can verify that we can access the list of operations in the graph
op_names = [op.name for op in graph.get_operations()]

# We access the input and output nodes
x_frozen = graph.get_tensor_by_name('prefix/x:0')
y_frozen = graph.get_tensor_by_name('prefix/output:0')

# We launch a Session
with tf.Session(graph=graph) as sess:
    # Note: we don't nee to initialize/restore anything
    # There is no Variables in this graph, only hardcoded constants
    y_out = sess.run(y_frozen, feed_dict={x_frozen: x_data[:4]})
    print(y_out)

# The frozen graph also goes through tf.train.write_graph as text.
tf.train.write_graph(output_graph_def, './model', 'frozen_model.pbtxt', as_text=True)

# What the sweep compares with TensorFlow 2.21 (tests/test_tf1_programs_sweep.py).
results = {
    "saved_path": saved_path,
    "model_dir": sorted(os.listdir('./model')),
    # TF 1.15+ builds `+` as AddV2 where minitf builds Add (docs/differences.rst).
    "frozen_ops": sorted(node.op for node in output_graph_def.node if 'Add' not in node.op),
    "frozen_nodes": sorted(node.name for node in output_graph_def.node),
    "imported_ops": sorted(op_names),
    "output_shape": y_frozen.shape.as_list(),
    "same_output": bool(np.allclose(y_out, trained_output, atol=1e-6)),
    "y_out": y_out.tolist(),
}
