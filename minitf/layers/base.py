"""``tf.layers.Layer``: an object that owns variables and builds ops with them.

A layer's life has three moments, each with its own job:

1. **Construction** stores the configuration (units, initializers ...) and
   picks the layer's ``name``.  No op and no variable is made yet: the
   input's shape (and so the kernel's) is unknown.
2. **The first call** (``layer(inputs)`` or ``layer.apply(inputs)``) opens
   the layer's *variable scope*, chosen now as ``tf.variable_scope(None,
   default_name="dense")`` would: ``dense``, then ``dense_1`` ... inside the
   current scope.  ``build(input_shape)`` creates the variables with
   ``tf.get_variable`` (so they are named ``dense/kernel``), then
   ``call(inputs)`` builds the ops, in the scope's name scope (``dense/MatMul``).
3. **Later calls** re-enter the same scope with ``reuse=True``: no new
   variable, the same weights applied to new inputs (``dense/MatMul_1``).

The functional forms (``tf.layers.dense(x, 10, name="fc1", reuse=True)``)
make a new layer per call; ``name`` fixes its variable scope and ``reuse``
shares the variables a previous call made under that name::

    y1 = tf.layers.dense(x1, 10, name="fc1")               # creates fc1/kernel
    y2 = tf.layers.dense(x2, 10, name="fc1", reuse=True)   # shares it

Weight regularizers (``kernel_regularizer=lambda w: 0.01 * tf.nn.l2_loss(w)``)
and activity regularizers put their losses in
``GraphKeys.REGULARIZATION_LOSSES``; update ops (batch normalisation's moving
averages) go to ``GraphKeys.UPDATE_OPS``.  A training loop adds both.

tf.layers is written against the public ``tf.*`` API, the way a user would
write a layer (TF's own tf.layers sit on Keras the same way).

Mirrors ``tensorflow/python/layers/base.py`` (TF 1.x, graph mode).
"""

import re

from minitf.framework import dtypes
from minitf.framework.graph import GraphKeys, get_default_graph
from minitf.framework.tensor_conversion import convert_to_tensor
from minitf.framework.tensor_shape import TensorShape
from minitf.ops import array_ops, math_ops, unary_ops
from minitf.ops.variable_scope import get_variable, variable_scope
from minitf.ops.variables import global_variables

_LAYER_NAME_UIDS_KEY = ("__layer_name_uids",)
_KNOWN_KWARGS = ("activity_regularizer", "_scope", "_reuse")


# ---- names --------------------------------------------------------------------------------
def _to_snake_case(name):
    """``Conv2D -> conv2d``, ``MaxPooling2D -> max_pooling2d`` (Keras's rule)."""
    intermediate = re.sub("(.)([A-Z][a-z0-9]+)", r"\1_\2", name)
    return re.sub("([a-z])([A-Z])", r"\1_\2", intermediate).lower()


def _unique_layer_name(base_name):
    """``dense_1``, ``dense_2`` ...: one counter per base name and graph.

    This is the layer's ``name``, not its variable scope.  As in TF1 the two
    can differ: the first unnamed Dense layer is *named* ``dense_1`` but puts
    its variables in scope ``dense`` (scopes count from zero, within the
    enclosing scope).
    """
    graph = get_default_graph()
    counters = graph.get_collection(_LAYER_NAME_UIDS_KEY)
    if not counters:
        counters = [{}]
        graph.add_to_collection(_LAYER_NAME_UIDS_KEY, counters[0])
    uids = counters[0]
    uids[base_name] = uids.get(base_name, 0) + 1
    return "%s_%d" % (base_name, uids[base_name])


def _add_to_collection(key, elements):
    """Adds each of ``elements`` not already there to the graph collection ``key``."""
    graph = get_default_graph()
    present = {id(e) for e in graph.get_collection(key)}
    for element in elements:
        if id(element) not in present:
            graph.add_to_collection(key, element)
            present.add(id(element))


# ---- what a layer accepts -------------------------------------------------------------------
class InputSpec:
    """The rank, dtype and known dimensions a layer accepts (``tf.layers.InputSpec``).

    Args:
        dtype: the expected dtype, or None.
        shape: the expected shape (None entries match anything), or None.
        ndim, max_ndim, min_ndim: bounds on the rank.
        axes: ``{axis: size}``, sizes that must match (``{-1: 784}`` after a
            Dense layer was built for 784 inputs).
    """

    def __init__(self, dtype=None, shape=None, ndim=None, max_ndim=None, min_ndim=None,
                 axes=None):
        self.dtype = None if dtype is None else dtypes.as_dtype(dtype)
        self.shape = None if shape is None else TensorShape(shape)
        self.ndim = self.shape.ndims if shape is not None else ndim
        self.max_ndim = max_ndim
        self.min_ndim = min_ndim
        self.axes = dict(axes or {})

    def check(self, inputs, layer_name):
        """Raises TF's ValueError when ``inputs`` does not fit this spec."""
        shape = inputs.shape
        rank = shape.ndims

        def fail(what):
            raise ValueError("Input 0 of layer %s is incompatible with the layer: %s. Full "
                             "shape received: %s" % (layer_name, what, shape))
        if self.dtype is not None and inputs.dtype.base_dtype != self.dtype:
            fail("expected dtype=%s, found dtype=%s" % (self.dtype.name, inputs.dtype.name))
        if rank is None:
            return
        if self.ndim is not None and rank != self.ndim:
            fail("expected ndim=%d, found ndim=%d" % (self.ndim, rank))
        if self.max_ndim is not None and rank > self.max_ndim:
            fail("expected max_ndim=%d, found ndim=%d" % (self.max_ndim, rank))
        if self.min_ndim is not None and rank < self.min_ndim:
            fail("expected min_ndim=%d, found ndim=%d" % (self.min_ndim, rank))
        for axis, size in self.axes.items():
            actual = shape[axis].value
            if size is not None and actual not in (size, None):
                fail("expected axis %d of input shape to have value %d" % (axis, size))
        if self.shape is not None and not shape.is_compatible_with(self.shape):
            fail("expected shape=%s, found shape=%s" % (self.shape, shape))


# ---- the Layer ------------------------------------------------------------------------------
class Layer:
    """The base class of ``tf.layers``: variables made once, ops on every call.

    Subclasses override ``build(input_shape)`` (create the variables with
    :meth:`add_weight`, then ``self.built = True``) and ``call(inputs)``
    (build the ops).

    Args:
        trainable: put the layer's variables in ``TRAINABLE_VARIABLES``.
        name: the layer's name and, for a layer class, the default name of
            its variable scope (``Dense(4, name="d")`` twice gives scopes
            ``d`` and ``d_1``).  Default: ``dense_1``, ``dense_2`` ... and scope
            ``dense``, ``dense_1`` ...
        dtype: the dtype of the variables; default: the first input's.
        activity_regularizer: ``fn(output) -> loss``; the loss divided by the
            batch size is added to ``REGULARIZATION_LOSSES``.
        _scope, _reuse: used by the functional forms (``tf.layers.dense(...,
            name, reuse)``): a fixed variable scope, opened now, and its reuse.

    Attributes:
        built: whether the variables exist.
        input_spec: the :class:`InputSpec` inputs are checked against.
    """

    def __init__(self, trainable=True, name=None, dtype=None, **kwargs):
        for kwarg in kwargs:
            if kwarg not in _KNOWN_KWARGS:
                raise TypeError("Keyword argument not understood: %s" % kwarg)
        self.trainable = trainable
        self.built = False
        self.input_spec = None
        self._dtype = None if dtype is None else dtypes.as_dtype(dtype)
        self._activity_regularizer = kwargs.get("activity_regularizer")
        self._reuse = kwargs.get("_reuse")
        self._trainable_weights = []
        self._non_trainable_weights = []
        self._updates = []
        self._losses = []
        if name:
            self._name, self._base_name = name, name
        else:
            self._base_name = _to_snake_case(type(self).__name__)
            self._name = _unique_layer_name(self._base_name)
        self._scope = None
        self._current_scope = None
        if kwargs.get("_scope"):
            with variable_scope(kwargs["_scope"]) as captured_scope:
                self._scope = captured_scope

    # ---- properties --------------------------------------------------------------------
    @property
    def name(self):
        return self._name

    @property
    def dtype(self):
        """The variables' dtype name (``"float32"``), None before the first call."""
        return None if self._dtype is None else self._dtype.name

    @property
    def scope_name(self):
        """The layer's variable scope (``"dense_1"``), known after the first call."""
        if self._scope is None:
            raise ValueError('No name available for layer scope because the layer "%s" has '
                             "not been used yet. The scope name is determined the first time "
                             "the layer instance is called." % self._name)
        return self._scope.name

    @property
    def trainable_weights(self):
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self):
        if self.trainable:
            return list(self._non_trainable_weights)
        return self._trainable_weights + self._non_trainable_weights

    @property
    def weights(self):
        """All the layer's variables, the trainable ones first."""
        return self.trainable_weights + self.non_trainable_weights

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    @property
    def updates(self):
        """The update ops the layer made (also in ``GraphKeys.UPDATE_OPS``)."""
        return list(self._updates)

    @property
    def losses(self):
        """The regularization losses the layer made (also in ``REGULARIZATION_LOSSES``)."""
        return list(self._losses)

    # ---- what subclasses override --------------------------------------------------------
    def build(self, input_shape):
        """Creates the variables for inputs of ``input_shape``."""
        del input_shape
        self.built = True

    def call(self, inputs, **kwargs):
        """The layer's computation; the base layer is the identity."""
        del kwargs
        return inputs

    # ---- variables, losses, updates --------------------------------------------------------
    def add_weight(self, name, shape, dtype=None, initializer=None, regularizer=None,
                   trainable=None, constraint=None, partitioner=None):
        """Creates (or, when reusing, gets) the variable ``<scope>/<name>``.

        Args:
            name: the variable's name in the layer's scope (``"kernel"``).
            shape: its shape.
            dtype: default: the layer's dtype, else float32.
            initializer: default: the variable scope's, else Glorot uniform.
            regularizer: ``fn(variable) -> loss``, added to
                ``REGULARIZATION_LOSSES`` (under ``<name>/Regularizer``) when
                the variable is new.
            trainable: default True; False (or a non-trainable layer) keeps it
                out of ``TRAINABLE_VARIABLES``.
            constraint: a projection optimizers apply after each update.
            partitioner: must be None (minitf has no partitioned variables).

        Returns:
            The variable.
        """
        trainable = True if trainable is None else trainable
        dtype = dtype or self._dtype or dtypes.float32
        self._set_scope(None)
        existing = {id(v) for v in global_variables()}
        graph = get_default_graph()
        with variable_scope(self._scope, reuse=self.built or self._reuse,
                            auxiliary_name_scope=False) as scope:
            self._current_scope = scope
            with graph.name_scope(scope.original_name_scope):
                variable = get_variable(
                    name, shape=shape, dtype=dtype, initializer=initializer,
                    trainable=trainable and self.trainable, constraint=constraint,
                    partitioner=partitioner)
                if regularizer is not None and id(variable) not in existing:
                    with graph.name_scope(name + "/Regularizer"):
                        self.add_loss(regularizer(variable))
        if trainable and self.trainable:
            self._trainable_weights.append(variable)
        else:
            self._non_trainable_weights.append(variable)
        return variable

    def add_loss(self, losses):
        """Records ``losses`` (a tensor or list) and adds them to ``REGULARIZATION_LOSSES``."""
        losses = [loss for loss in (losses if isinstance(losses, list) else [losses])
                  if loss is not None]
        self._losses.extend(losses)
        _add_to_collection(GraphKeys.REGULARIZATION_LOSSES, losses)

    def add_update(self, updates):
        """Records update ops; ``__call__`` adds them to ``GraphKeys.UPDATE_OPS``."""
        self._updates.extend(updates if isinstance(updates, list) else [updates])

    # ---- calling ------------------------------------------------------------------------------
    def _set_scope(self, scope=None):
        """Chooses the layer's variable scope, once: ``scope`` or the current
        scope's unique sub-scope named after the layer."""
        if self._scope is not None:
            return
        if self._reuse:
            with variable_scope(scope if scope is not None else self._base_name) as captured:
                self._scope = captured
        else:
            with variable_scope(scope, default_name=self._base_name) as captured:
                self._scope = captured

    def __call__(self, inputs, *args, **kwargs):
        """Builds the layer on its first call, then applies it to ``inputs``.

        Args:
            inputs: a tensor (or a value convertible to one).
            *args, **kwargs: passed to ``call`` (``training=`` for dropout and
                batch normalisation); ``scope=`` names the variable scope on
                the first call.

        Returns:
            The output tensor.
        """
        self._set_scope(kwargs.pop("scope", None))
        graph = get_default_graph()
        with variable_scope(self._scope, reuse=True if self.built else self._reuse,
                            auxiliary_name_scope=False) as scope:
            self._current_scope = scope
            with graph.name_scope(scope.original_name_scope):
                inputs = convert_to_tensor(inputs)
                if self.input_spec is not None:
                    self.input_spec.check(inputs, self._name)
                if not self.built:
                    if self._dtype is None:
                        self._dtype = inputs.dtype.base_dtype
                    self.build(inputs.shape)
                    self.built = True
                    if self.input_spec is not None:
                        self.input_spec.check(inputs, self._name)
                outputs = self.call(inputs, *args, **kwargs)
                if self._activity_regularizer is not None:
                    self._add_activity_loss(outputs)
        _add_to_collection(GraphKeys.UPDATE_OPS, self._updates)
        return outputs

    def apply(self, inputs, *args, **kwargs):
        """The same as calling the layer (``layer.apply(x) == layer(x)``)."""
        return self(inputs, *args, **kwargs)

    def _add_activity_loss(self, outputs):
        """``activity_regularizer(outputs) / batch_size``, as a regularization loss."""
        with get_default_graph().name_scope("ActivityRegularizer"):
            loss = self._activity_regularizer(outputs)
            batch_size = unary_ops.cast(array_ops.shape(outputs)[0], loss.dtype.base_dtype)
            self.add_loss(math_ops.truediv(loss, batch_size))

    def __repr__(self):
        return "<tf.layers.%s '%s'>" % (type(self).__name__, self._name)
