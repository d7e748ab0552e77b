"""Typed attrs: ops declared in TF's ``REGISTER_OP`` attr syntax, checked when built.

``minitf.registry.op_def.AttrSpec`` reads the declarations,
``minitf.framework.op_attrs`` checks each op against them in
``Graph.create_op`` (TF's ``_apply_op_helper`` classes and messages), and an
op whose dtypes no kernel takes is refused there too.
"""

import numpy as np
import pytest

import minitf as tf
from minitf.framework.tensor_shape import TensorShape
from minitf.ops.common_shapes import unchanged_shape
from minitf.ops.op_def_library import apply_op
from minitf.registry import OpDef, hookimpl, register_plugin, unregister_plugin
from minitf.registry.op_def import AttrSpec

# ---- reading declarations ------------------------------------------------------------------


@pytest.mark.parametrize("declaration,kind,allowed,minimum,default", [
    ("beta: float = 1.0", "float", None, None, 1.0),
    ("N: int >= 1", "int", None, 1, None),
    ("ksize: list(int) >= 4", "list(int)", None, 4, None),
    ("shape: shape", "shape", None, None, None),
    ("dtype: type", "type", None, None, None),
    ("padding: {'SAME', 'VALID'}", "string", ("SAME", "VALID"), None, None),
    ("flag: bool = false", "bool", None, None, False),
    ("name: string", "string", None, None, None),
    ("data_format: string = 'NHWC'", "string", None, None, "NHWC"),
    ("dilations: list(int) = [1, 1, 1, 1]", "list(int)", None, None, [1, 1, 1, 1]),
    ("T: {float32, float64}", "type", (tf.float32, tf.float64), None, None),
    ("out_type: {int32, int64} = int32", "type", (tf.int32, tf.int64), None, tf.int32),
    ("dtypes: list({float, double})", "list(type)", (tf.float32, tf.float64), None, None),
])
def test_declarations_are_read_as_tf_writes_them(declaration, kind, allowed, minimum, default):
    spec = AttrSpec.parse(declaration, tf.as_dtype)
    assert (spec.kind, spec.allowed, spec.minimum) == (kind, allowed, minimum)
    assert spec.required == (default is None)
    if default is not None:
        assert spec.default == default


@pytest.mark.parametrize("declaration,match", [
    ("beta float", "Cannot parse attr declaration"),
    ("beta: real = 1.0", "unknown kind 'real'"),
    ("beta: float = one", "the default 'one' is not a literal"),
    ("padding: {}", "empty set"),
])
def test_a_malformed_declaration_is_refused_naming_it(declaration, match):
    with pytest.raises(ValueError, match=match):
        AttrSpec.parse(declaration)


def test_the_type_attr_becomes_the_type_constraint_and_is_no_kernel_attr():
    op_def = OpDef("Typed", inputs=("x",), attrs=("T: {float32, float64}", "beta: float = 1.0"))
    assert op_def.type_constraint == (tf.float32, tf.float64)
    assert op_def.attrs == {"beta": 1.0}  # what a kernel receives
    with pytest.raises(ValueError, match="declares its dtypes twice"):
        OpDef("Twice", inputs=("x",), attrs=("T: {float32}",), type_constraint=(tf.float32,))
    with pytest.raises(ValueError, match="declares an attr twice"):
        OpDef("Dup", attrs=("a: int", "a: float"))


def test_untyped_declarations_keep_working():
    op_def = OpDef("Old", inputs=("x",), attrs={"tag": ""})
    assert op_def.attrs == {"tag": ""} and op_def.attr_specs == ()


# ---- checking ops when the graph is built ------------------------------------------------
SCALE = OpDef("TypedScale", inputs=("x",), shape_fn=unchanged_shape,
              attrs=("T: {float32, float64}", "beta: float = 1.0", "N: int >= 1",
                     "mode: {'up', 'down'} = 'up'", "flag: bool = false",
                     "sizes: list(int) >= 2 = [1, 1]", "out: {int32, int64} = int32",
                     "shape: shape = None"),
              doc="x * beta (a test op with one attr of each kind).")


def scale_kernel(ctx, x, beta, N, mode, flag, sizes, out, shape):
    return (x * beta).astype(x.dtype)


class ScalePlugin:
    @hookimpl
    def minitf_register_ops(self, registry):
        registry.register_op(SCALE)

    @hookimpl
    def minitf_register_kernels(self, registry):
        registry.register_kernel("TypedScale", "CPU", scale_kernel, dtypes=["float32"])

    @hookimpl
    def minitf_register_gradients(self, registry):
        registry.register_gradient(
            "TypedScale", lambda op, grad: [grad * op.get_attr("beta")])


@pytest.fixture
def scale_plugin():
    plugin = ScalePlugin()
    register_plugin(plugin, name="typed_attrs_test")
    yield plugin
    unregister_plugin(plugin)


def scale(x, **attrs):
    return apply_op(SCALE, [x], attrs=attrs, name="TypedScale")


def test_defaults_are_recorded_and_values_converted(scale_plugin, sess):
    x = tf.constant([1.0, 2.0])
    y = scale(x, N=2, beta=3, sizes=(2, np.int64(3)), out="int64")
    op = y.op
    assert op.get_attr("beta") == 3.0 and type(op.get_attr("beta")) is float
    assert op.get_attr("sizes") == [2, 3] and op.get_attr("out") == tf.int64
    assert op.get_attr("mode") == "up" and op.get_attr("flag") is False  # defaults recorded
    assert op.get_attr("shape") is None
    assert op.get_attr("T") == tf.float32
    np.testing.assert_allclose(sess.run(y), [3.0, 6.0])


def test_a_gradient_reads_a_default_attr(scale_plugin, sess):
    x = tf.constant([1.0, 2.0])
    y = scale(x, N=1)  # beta left out
    np.testing.assert_allclose(sess.run(tf.gradients(tf.reduce_sum(y), x)[0]), [1.0, 1.0])


def test_a_default_that_is_a_bool_in_tfs_syntax():
    op_def = OpDef("B", inputs=("x",), attrs=("flag: bool = true",))
    assert op_def.attrs == {"flag": True}


@pytest.mark.parametrize("attrs,error,match", [
    ({"N": 1, "bogus": 1}, TypeError, "TypedScale got an unexpected attr 'bogus'"),
    ({}, TypeError, "No argument found for attr N for TypedScale"),
    ({"N": "two"}, TypeError, "Expected int for argument 'N' not 'two'"),
    ({"N": 1.5}, TypeError, "Expected int for argument 'N' not 1.5"),
    ({"N": 1, "beta": "x"}, TypeError, "Expected float for argument 'beta' not 'x'"),
    ({"N": 1, "flag": 1}, TypeError, "Expected bool for argument 'flag' not 1"),
    ({"N": 1, "sizes": 3}, TypeError, "Expected list for attr sizes, obtained int"),
    ({"N": 1, "out": "no_such_type"}, TypeError, "Expected DataType for argument 'out'"),
    ({"N": 1, "out": tf.float32}, TypeError,
     "Value passed to parameter 'out' has DataType float32 not in list of allowed values: "
     "int32, int64"),
    ({"N": 1, "shape": "abc"}, TypeError, "Expected a TensorShape for argument 'shape'"),
    ({"N": 1, "T": tf.float32}, TypeError, "Should not specify value for inferred attr 'T'"),
    ({"N": 0}, ValueError, "Attr 'N' of 'TypedScale' Op passed 0 less than minimum 1"),
    ({"N": 1, "sizes": [1]}, ValueError,
     "Attr 'sizes' of 'TypedScale' Op passed list of length 1 less than minimum 2"),
    ({"N": 1, "mode": "sideways"}, ValueError,
     "Attr 'mode' of 'TypedScale' Op passed string 'sideways' not in: \"up\", \"down\""),
])
def test_bad_attrs_are_refused_when_built_naming_the_op(scale_plugin, attrs, error, match):
    with pytest.raises(error, match=match) as info:
        scale(tf.constant([1.0]), **attrs)
    assert "op 'TypedScale' of type TypedScale" in str(info.value)
    assert all(op.type != "TypedScale" for op in tf.get_default_graph().get_operations())


def test_a_shape_attr_becomes_a_tensor_shape(scale_plugin):
    y = scale(tf.constant([1.0]), N=1, shape=[None, 3])
    assert isinstance(y.op.get_attr("shape"), TensorShape)
    assert y.op.get_attr("shape").as_list() == [None, 3]


def test_a_dtype_without_any_kernel_is_refused_listing_the_kernels_dtypes(scale_plugin):
    """float64 passes TypedScale's type constraint, but its only kernel takes float32."""
    with pytest.raises(TypeError) as info:
        scale(tf.constant([1.0], tf.float64), N=1)
    message = str(info.value)
    assert "No kernel of op TypedScale takes input dtypes [float64]" in message
    assert "CPU: float32" in message
    with pytest.raises(TypeError, match="not in list of allowed values"):  # the constraint
        scale(tf.constant([1], tf.int32), N=1)


def test_ops_without_kernels_are_not_refused():
    """A declared op with no kernel anywhere (rewritten away or run by the executor)."""
    op_def = OpDef("NoKernelAnywhere", inputs=("x",), attrs=("T: {float32}",),
                   shape_fn=unchanged_shape)
    y = apply_op(op_def, [tf.constant([1.0])])
    assert y.op.type == "NoKernelAnywhere"


# ---- the converted core ops ----------------------------------------------------------------
def test_core_ops_check_their_attrs_when_built():
    x = tf.placeholder(tf.float32, [1, 4, 4, 1])
    with pytest.raises(ValueError, match="Attr 'padding' of 'MaxPool' Op passed string 'X'"):
        tf.get_default_graph().create_op(
            "MaxPool", [x], attrs={"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1],
                                   "padding": "X"})
    with pytest.raises(ValueError, match="passed list of length 2 less than minimum 4"):
        tf.get_default_graph().create_op(
            "MaxPool", [x], attrs={"ksize": [2, 2], "strides": [1, 1, 1, 1],
                                   "padding": "SAME"})
    with pytest.raises(TypeError, match="Expected bool for argument 'transpose_a' not 1"):
        tf.matmul([[1.0]], [[2.0]], transpose_a=1)
    with pytest.raises(TypeError, match="'output_type' has DataType float32 not in list"):
        tf.argmax([1.0, 2.0], output_type=tf.float32)
    with pytest.raises(ValueError, match="Attr 'N' of 'ShapeN' Op passed 0 less than minimum"):
        tf.shape_n([])
    with pytest.raises(TypeError, match="Expected float for argument 'alpha'"):
        tf.nn.leaky_relu(tf.constant([1.0]), alpha="steep")


def test_core_ops_record_their_defaults():
    x = tf.placeholder(tf.float32, [2, 3])
    y = tf.get_default_graph().create_op("LeakyRelu", [x])
    assert y.get_attr("alpha") == pytest.approx(0.2)
    assert y.get_attr("T") == tf.float32
    assert tf.matmul(x, x, transpose_b=True).op.get_attr("transpose_a") is False
    lrn = tf.nn.lrn(tf.placeholder(tf.float32, [1, 2, 2, 3]), depth_radius=2, bias=1)
    assert type(lrn.op.get_attr("bias")) is float and lrn.op.get_attr("depth_radius") == 2


def test_an_untyped_op_answers_get_attr_with_its_declared_default():
    op_def = OpDef("OldStyle", inputs=("x",), attrs={"tag": "default tag"},
                   shape_fn=unchanged_shape)
    y = apply_op(op_def, [tf.constant([1.0])])
    assert y.op.get_attr("tag") == "default tag"
    with pytest.raises(ValueError, match="has no attr named 'nope'"):
        y.op.get_attr("nope")


def test_typed_ops_round_trip_through_a_graph_def(sess):
    x = tf.placeholder(tf.float32, [1, 4, 4, 1], name="x")
    y = tf.nn.max_pool(x, 2, 2, "SAME", name="pool")
    z = tf.nn.leaky_relu(tf.reduce_sum(y, axis=[1, 2], keepdims=True), alpha=0.5, name="z")
    graph_def = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default() as graph:
        tf.import_graph_def(graph_def, name="")
        pool, out = graph.get_operation_by_name("pool"), graph.get_tensor_by_name("z:0")
        assert pool.get_attr("ksize") == [1, 2, 2, 1] and pool.get_attr("padding") == "SAME"
        assert out.op.get_attr("alpha") == pytest.approx(0.5)
        value = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1) - 8
        with tf.Session(graph=graph) as imported:
            np.testing.assert_allclose(imported.run(out, {"x:0": value}),
                                       sess.run(z, {x: value}))
        assert graph.as_graph_def().node[1].attr == graph_def.node[1].attr
