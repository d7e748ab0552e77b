"""Writes ``tf1_public_names.txt``: the public names of TF1's API, as TensorFlow exports them.

The list is the reference of ``tests/test_tf1_names.py``, which checks which of
these names ``import minitf as tf`` still lacks.  It holds every public name
(no leading underscore) of ``tf.compat.v1`` and of the submodules TF1
tutorials use, one dotted name a line, sorted (``nn.nce_loss``, ``train.Saver``;
a top-level name has no dot).  A name that is itself a module (``nn.rnn_cell``)
is listed, its contents are not.

Made once with TensorFlow 2.21 (the test suite never imports TensorFlow).
TF 2.21 serves ``tf.compat.v1.layers`` from the legacy Keras package
``tf_keras``, so that goes on the path first (into a folder of its own, the
TensorFlow environment unchanged)::

    pip download --no-deps -d /tmp/tfk_dl "tf_keras==2.21.*"
    /tmp/tfvenv/bin/pip install --no-deps --target /tmp/tfk_site /tmp/tfk_dl/tf_keras-*.whl
    PYTHONPATH=/tmp/tfk_site TF_USE_LEGACY_KERAS=1 \
        /tmp/tfvenv/bin/python tests/data/make_tf1_public_names.py

TensorFlow 2.21's ``tf.compat.v1`` is TF 1.15's API surface as TF2 keeps it.
"""

import os
import types

import tensorflow as tf

SUBMODULES = ("nn", "train", "layers", "losses", "metrics", "math", "image", "data", "io",
              "python_io", "strings", "sparse", "random", "summary", "initializers",
              "graph_util", "saved_model")

OUTPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf1_public_names.txt")


def public_names(module):
    """The public attribute names of ``module`` (TF's API modules list them in ``dir``)."""
    return [name for name in dir(module) if not name.startswith("_")]


def tf1_names():
    v1 = tf.compat.v1
    names = set(public_names(v1))
    for submodule in SUBMODULES:
        module = getattr(v1, submodule)
        assert isinstance(module, types.ModuleType), submodule
        names.update("%s.%s" % (submodule, name) for name in public_names(module))
    return sorted(names)


def main():
    names = tf1_names()
    tmp = OUTPUT + ".tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write("".join(name + "\n" for name in names))
    os.replace(tmp, OUTPUT)
    print("%d names written to %s" % (len(names), OUTPUT))


if __name__ == "__main__":
    main()
