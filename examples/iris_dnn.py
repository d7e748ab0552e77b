"""Classify Iris flowers with ``tf.estimator.DNNClassifier`` — TF1's premade-estimator example.

The program of TensorFlow 1.x's "Premade Estimators" guide, only the import
differs: four numeric feature columns, a network with hidden layers of 10,
20 and 10 units, three classes.  20% of the flowers (stratified, fixed seed)
are held out; the classifier trains on the rest through
``tf.estimator.inputs.numpy_input_fn``, then reports its accuracy on the
held-out part, and predicts the species of three new flowers.

Training resumes from ``--model-dir`` when it already holds checkpoints: run
the program twice with the same directory and the second run continues at
the global step where the first stopped.

Run it::

    .venv/bin/python examples/iris_dnn.py
    .venv/bin/python examples/iris_dnn.py --steps 2000 --model-dir /tmp/iris_model
"""

import argparse
import tempfile

import numpy as np

import minitf as tf
from minitf.datasets import load_iris, train_test_split


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000, help="training steps (default 1000)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--model-dir", default=None,
                        help="checkpoint directory (default: a new temporary one)")
    parser.add_argument("--seed", type=int, default=0, help="split and graph-level seed")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    features, labels, feature_names, class_names = load_iris(return_names=True)
    (x_train, y_train), (x_test, y_test) = train_test_split(
        features, labels, test_fraction=0.2, seed=args.seed)

    def as_dict(x):  # one feature per measurement, keyed by its name
        return {name: x[:, i] for i, name in enumerate(feature_names)}

    columns = [tf.feature_column.numeric_column(name) for name in feature_names]
    classifier = tf.estimator.DNNClassifier(
        hidden_units=[10, 20, 10], feature_columns=columns, n_classes=3,
        model_dir=args.model_dir or tempfile.mkdtemp(prefix="iris_dnn_"),
        config=tf.estimator.RunConfig(tf_random_seed=args.seed))

    classifier.train(
        input_fn=tf.estimator.inputs.numpy_input_fn(
            as_dict(x_train), y_train, batch_size=args.batch_size, num_epochs=None,
            shuffle=True),
        steps=args.steps)

    results = classifier.evaluate(
        input_fn=tf.estimator.inputs.numpy_input_fn(as_dict(x_test), y_test, shuffle=False))
    print("global step %d, test loss %.4f" % (results["global_step"], results["average_loss"]))
    print("Test accuracy: %.4f" % results["accuracy"])

    new_flowers = np.array([[5.1, 3.3, 1.7, 0.5],
                            [5.9, 3.0, 4.2, 1.5],
                            [6.9, 3.1, 5.4, 2.1]], dtype=np.float32)
    # list(): read predict's generator to its end, so that it closes its graph and
    # session now (zip would leave it suspended, holding them, until collected).
    predictions = list(classifier.predict(
        input_fn=tf.estimator.inputs.numpy_input_fn(as_dict(new_flowers), shuffle=False)))
    for flower, prediction in zip(new_flowers, predictions):
        class_id = prediction["class_ids"][0]
        print("%s -> %s (%.1f%%)" % (flower, class_names[class_id],
                                     100 * prediction["probabilities"][class_id]))
    return results


if __name__ == "__main__":
    main()
