"""``tf.initializers``: the initializers under their short TF1 names.

``tf.initializers.zeros()`` is ``tf.zeros_initializer()``, and so on; the
classes live in :mod:`minitf.ops.init_ops`.  The namespace also holds the ops
that *run* initializers: ``tf.initializers.global_variables()`` is
``tf.global_variables_initializer()``.

Mirrors ``tf.compat.v1.initializers``.
"""

from minitf.ops.init_ops import (  # noqa: F401 - the namespace's contents
    Constant as constant,
    GlorotNormal as glorot_normal,
    GlorotUniform as glorot_uniform,
    Identity as identity,
    Ones as ones,
    RandomNormal as random_normal,
    RandomUniform as random_uniform,
    TruncatedNormal as truncated_normal,
    VarianceScaling as variance_scaling,
    Zeros as zeros,
    he_normal, he_uniform, lecun_normal, lecun_uniform)
from minitf.ops.variables import (  # noqa: F401
    global_variables_initializer as global_variables,
    local_variables_initializer as local_variables,
    variables_initializer as variables)
