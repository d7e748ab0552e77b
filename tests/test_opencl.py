"""The OpenCL GPU plugin, checked against the NumPy CPU plugin (the specification).

Every kernel runs the same graph on ``/gpu:0`` and ``/cpu:0`` and the results
must agree: exactly for integers and booleans, at float32 tolerances for
floats.  Shapes include broadcasting, sizes that are no multiple of the
matmul tile, and empty tensors.  The whole module is skipped — loudly, with
the reason the plugin recorded — where no OpenCL platform exists; ``make
test`` installs PoCL where it can so that CI runs it.
"""

import warnings

import numpy as np
import pytest

import minitf as tf
from minitf.ops import padding_ops
from minitf.registry import get_registry

_registry = get_registry()
_unavailable = _registry.unavailable_devices().get("GPU")
_SKIP_REASON = "OpenCL GPU tests SKIPPED: %s" % (_unavailable[1] if _unavailable else
                                                 "no GPU device registered")
pytestmark = pytest.mark.skipif(_registry.device_factory("GPU") is None, reason=_SKIP_REASON)
if _registry.device_factory("GPU") is None:
    # Loud even without -rs: a warning lands in pytest's warnings summary.
    warnings.warn(pytest.PytestWarning(_SKIP_REASON))

RNG = np.random.RandomState(1234)


def run_both(build, *arrays, config=None):
    """``(gpu result, cpu result)`` of ``build(*placeholders)`` fed ``arrays``."""
    results = []
    for device in ("/gpu:0", "/cpu:0"):
        graph = tf.Graph()
        with graph.as_default():
            placeholders = [tf.placeholder(tf.as_dtype(np.asarray(a).dtype), np.shape(a))
                            for a in arrays]
            with tf.device(device):
                out = build(*placeholders)
            with tf.Session(graph=graph, config=config) as session:
                results.append(session.run(out, dict(zip(placeholders, arrays))))
    return results


def assert_same(gpu, cpu, rtol=2e-5, atol=2e-6):
    if isinstance(cpu, (list, tuple)):
        assert len(gpu) == len(cpu)
        for g, c in zip(gpu, cpu):
            assert_same(g, c, rtol, atol)
        return
    gpu, cpu = np.asarray(gpu), np.asarray(cpu)
    assert gpu.shape == cpu.shape and gpu.dtype == cpu.dtype, (gpu.shape, cpu.shape, gpu.dtype)
    if cpu.dtype.kind == "f":
        np.testing.assert_allclose(gpu, cpu, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(gpu, cpu)


def check(build, *arrays, **tolerances):
    gpu, cpu = run_both(build, *arrays)
    assert_same(gpu, cpu, **tolerances)


def uniform(*shape, low=-2.0, high=2.0, dtype=np.float32):
    return RNG.uniform(low, high, size=shape).astype(dtype)


# ---- the device -------------------------------------------------------------------------
def test_gpu_device_is_listed_and_described():
    with tf.Session() as sess:
        gpus = [d for d in sess.list_devices() if d.device_type == "GPU"]
    assert gpus[0].name.endswith("device:GPU:0") and gpus[0].memory_limit_bytes > 0


def test_values_stay_on_the_device_between_ops():
    """A chain of ops on /gpu:0 is one partition: no Send/Recv inside the step."""
    with tf.device("/gpu:0"):
        x = tf.placeholder(tf.float32, [4])
        y = tf.reduce_sum(tf.nn.relu(x * 2.0 - 1.0))
    with tf.Session() as sess:
        graphs = sess.partition_graphs(y, {x: np.ones(4)})
        assert list(graphs) == ["/job:localhost/replica:0/task:0/device:GPU:0"]
        ops = {op.type for g in graphs.values() for op in g.get_operations()}
        assert "_Send" not in ops and "_Recv" not in ops
        assert sess.run(y, {x: [1, -1, 0.5, 2]}) == pytest.approx(1 + 0 + 0 + 3)


def test_cross_device_edges_copy_through_send_and_recv():
    with tf.device("/cpu:0"):
        a = tf.constant([1.0, 2.0, 3.0])
    with tf.device("/gpu:0"):
        b = a * 10.0
    with tf.device("/cpu:0"):
        c = b + 1.0
    with tf.Session() as sess:
        graphs = sess.partition_graphs(c)
        types = {name[-5:]: {op.type for op in g.get_operations()} for name, g in graphs.items()}
        assert "_Recv" in types["GPU:0"] and "_Send" in types["GPU:0"]
        np.testing.assert_allclose(sess.run(c), [11.0, 21.0, 31.0])


def test_pool_reuses_buffers_across_steps():
    with tf.device("/gpu:0"):
        x = tf.placeholder(tf.float32, [64, 64])
        y = tf.reduce_sum(tf.matmul(tf.nn.relu(x), x) + 1.0)
    value = uniform(64, 64)
    with tf.Session() as sess:
        sess.run(y, {x: value})
        gpu = sess._local_worker.devices["/job:localhost/replica:0/task:0/device:GPU:0"]
        before = gpu.memory_stats()["driver_allocations"]
        for _ in range(3):
            sess.run(y, {x: value})
        assert gpu.memory_stats()["driver_allocations"] == before


def test_allow_growth_chooses_exact_size_classes():
    from minitf_opencl_gpu.memory import BufferPool
    assert BufferPool(None, 1 << 30, 1 << 30, exact=False).size_class(1000) == 1024
    assert BufferPool(None, 1 << 30, 1 << 30, exact=True).size_class(1000) == 1024
    assert BufferPool(None, 1 << 30, 1 << 30, exact=True).size_class(1100) == 1280
    assert BufferPool(None, 1 << 30, 1 << 30, exact=False).size_class(1100) == 2048


def test_out_of_device_memory_is_resource_exhausted_naming_op_and_size():
    with tf.device("/gpu:0"):
        y = tf.fill([1000, 1000], 2.0, name="big_fill")
    config = tf.ConfigProto(gpu_options=tf.GPUOptions(per_process_gpu_memory_fraction=1e-7))
    with tf.Session(config=config) as sess:
        with pytest.raises(tf.errors.ResourceExhaustedError) as info:
            sess.run(y)
    message = str(info.value)
    assert "4000000 bytes" in message and "[1000,1000]" in message
    assert "big_fill" in message and "test_opencl.py" in message


def test_build_failure_reports_the_build_log_and_the_op():
    from minitf_opencl_gpu import programs
    from minitf_opencl_gpu.kernels.table import run
    from minitf.registry import hookimpl, register_plugin, unregister_plugin
    from minitf.registry.op_def import OpDef

    programs.register_source("broken_for_test", "__kernel void f(__global float *z) { z[0] = ; }")

    class Plugin:
        @hookimpl
        def minitf_register_ops(self, registry):
            registry.register_op(OpDef("BrokenForTest", inputs=("x",),
                                       shape_fn=lambda op: [op.inputs[0].shape]))

        @hookimpl
        def minitf_register_kernels(self, registry):
            def broken(ctx, x):
                run(ctx, "broken_for_test", "f", x.dtype, 1, x)
                return x
            registry.register_kernel("BrokenForTest", "GPU", broken)

    plugin = Plugin()
    register_plugin(plugin, name="broken_for_test")
    try:
        from minitf.ops.op_def_library import apply_op
        with tf.device("/gpu:0"):
            x = tf.placeholder(tf.float32, [2])
            y = apply_op(_registry.op_def("BrokenForTest"), [x], name="needs_broken")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InternalError) as info:
                sess.run(y, {x: [1.0, 2.0]})
    finally:
        unregister_plugin(plugin)
    message = str(info.value)
    assert "Build log" in message and "broken_for_test.cl" in message
    assert "needs_broken" in message


def test_soft_placement_falls_back_to_cpu_and_logs_it(capfd):
    with tf.device("/gpu:0"):
        m = tf.constant([[2.0, 0.0], [0.0, 4.0]])
        inverse = tf.matrix_inverse(m, name="no_gpu_kernel")
        total = tf.reduce_sum(inverse, name="on_gpu")
    config = tf.ConfigProto(allow_soft_placement=True, log_device_placement=True)
    with tf.Session(config=config) as sess:
        assert sess.run(total) == pytest.approx(0.75)
    err = capfd.readouterr().err
    assert "no_gpu_kernel: (MatrixInverse): /job:localhost/replica:0/task:0/device:CPU:0" in err
    assert "on_gpu: (Sum): /job:localhost/replica:0/task:0/device:GPU:0" in err


def test_without_soft_placement_a_missing_gpu_kernel_is_an_error():
    with tf.device("/gpu:0"):
        inverse = tf.matrix_inverse(tf.constant([[2.0]]))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="no supported kernel for GPU"):
            sess.run(inverse)


# ---- elementwise ------------------------------------------------------------------------
UNARY = ["negative", "abs", "sign", "square", "exp", "expm1", "sin", "cos", "tanh", "sigmoid",
         "floor", "ceil", "round", "nn.relu", "nn.relu6", "nn.elu", "nn.selu", "nn.softplus",
         "nn.softsign", "is_nan", "is_finite"]
POSITIVE = ["sqrt", "rsqrt", "reciprocal", "log", "log1p"]


def _op(name):
    fn = tf
    for part in name.split("."):
        fn = getattr(fn, part)
    return fn


@pytest.mark.parametrize("name", UNARY + POSITIVE)
def test_unary_ops(name):
    x = uniform(3, 7) if name not in POSITIVE else uniform(3, 7, low=0.1, high=3.0)
    x[0, 0] = 0.5  # round half to even
    check(_op(name), x, rtol=1e-5, atol=1e-6)


def test_unary_int_and_empty():
    check(lambda x: [tf.negative(x), tf.abs(x), tf.square(x)], np.arange(-3, 4, dtype=np.int32))
    check(tf.exp, np.zeros((0, 3), np.float32))


BROADCASTS = [((3, 5), (3, 5)), ((3, 5), (5,)), ((3, 1), (1, 5)), ((), (4,)), ((4,), ()),
              ((2, 3, 1, 4), (3, 5, 1)), ((7,), (1,)), ((0, 3), (3,)), ((1, 1, 1), (2, 1, 3))]
BINARY = ["add", "subtract", "multiply", "truediv", "maximum", "minimum", "squared_difference",
          "floordiv", "floormod", "pow"]


@pytest.mark.parametrize("shapes", BROADCASTS, ids=str)
@pytest.mark.parametrize("name", BINARY)
def test_binary_ops_broadcast(name, shapes):
    low = 0.5 if name == "pow" else -2.0
    check(_op(name), uniform(*shapes[0], low=low), uniform(*shapes[1], low=0.5), rtol=1e-5)


@pytest.mark.parametrize("shapes", BROADCASTS[:6], ids=str)
def test_comparisons_and_logic(shapes):
    a = RNG.randint(-2, 3, size=shapes[0]).astype(np.float32)
    b = RNG.randint(-2, 3, size=shapes[1]).astype(np.float32)
    check(lambda x, y: [tf.equal(x, y), tf.not_equal(x, y), tf.less(x, y),
                        tf.less_equal(x, y), tf.greater(x, y), tf.greater_equal(x, y),
                        tf.logical_and(tf.less(x, y), tf.greater(x, -1.0)),
                        tf.logical_or(tf.equal(x, y), tf.logical_not(tf.less(x, 0.0)))], a, b)


@pytest.mark.parametrize("n", [1, 3, 4, 5, 255, 256, 257, 1031, 4 * 64 * 3 + 2])
def test_four_elements_per_work_item_cover_every_size(n):
    # Same-shape binary and unary kernels give each work item four elements
    # and round the launch up: the tail (n % 4) and the padding items must
    # be right for floats, integers and bool outputs alike.
    a, b = uniform(n), uniform(n)
    i, j = RNG.randint(-9, 9, size=n).astype(np.int64), RNG.randint(-9, 9, size=n).astype(np.int64)
    gpu, _ = run_both(lambda x, y, p, q: [x + y, x * y, tf.exp(x), tf.less(x, y), p - q,
                                          tf.logical_not(tf.equal(p, q))], a, b, i, j)
    expected = [a + b, a * b, np.exp(a), a < b, i - j, i != j]
    for got, want in zip(gpu, expected):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("shapes", [((6, 5), (5,)), ((5,), (6, 5)), ((2, 3, 4), (1, 3, 4)),
                                    ((1, 3, 4), (2, 3, 4)), ((4, 3), (4, 1))], ids=str)
def test_rows_repeated_along_leading_axes(shapes):
    # A bias-like row (repeated along leading axes only) takes the i % m
    # kernels; a column ((4, 1)) must still take the general broadcast.
    a, b = uniform(*shapes[0]), uniform(*shapes[1], low=0.5)
    gpu, _ = run_both(lambda x, y: [x + y, x - y, y / x, tf.less(x, y)], a, b)
    for got, want in zip(gpu, [a + b, a - b, b / a, a < b]):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_integer_math_on_device_matches():
    a = RNG.randint(-50, 50, size=(4, 6)).astype(np.int64)
    b = RNG.randint(-50, 50, size=(6,)).astype(np.int64)
    check(lambda x, y: [x + y, x - y, x * y, tf.maximum(x, y), tf.minimum(x, y),
                        tf.equal(x, y), tf.less(x, y)], a, b)


def test_fused_activation_gradients():
    x = uniform(4, 9)
    x[0, :3] = [0.0, 6.0, -0.0]

    def grads(x):
        ys = [tf.nn.relu(x), tf.nn.relu6(x * 4), tf.nn.elu(x), tf.nn.selu(x), tf.sigmoid(x),
              tf.tanh(x), tf.nn.softplus(x), tf.nn.softsign(x), tf.sqrt(tf.abs(x) + 1),
              tf.math.rsqrt(tf.abs(x) + 1) if hasattr(tf, "math") else tf.rsqrt(tf.abs(x) + 1),
              tf.reciprocal(tf.abs(x) + 1), tf.nn.leaky_relu(x, 0.3)]
        return [tf.gradients(tf.reduce_sum(y * y), x)[0] for y in ys]
    check(grads, x, rtol=1e-5, atol=1e-5)


def test_cast_select_fill_addn():
    x = uniform(3, 4) * 3
    c = RNG.rand(3, 4) > 0.5

    def build(x, c):
        return [tf.cast(x, tf.int32), tf.cast(x, tf.bool), tf.cast(c, tf.float32),
                tf.cast(tf.cast(x, tf.int64), tf.float32),
                tf.where(c, x, -x), tf.where(c[:, 0], x, x * 2),
                tf.fill([2, 3], 7.5), tf.zeros_like(x), tf.ones_like(x),
                tf.add_n([x, x * 2, x * 3])]
    check(build, x, c)


def test_sigmoid_cross_entropy():
    check(lambda x, z: tf.nn.sigmoid_cross_entropy_with_logits(labels=z, logits=x),
          uniform(5, 3) * 10, (RNG.rand(5, 3) > 0.5).astype(np.float32))


# ---- reductions -------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1, [0, 2], [1, 2], [0, 1, 2]], ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(axis, keepdims):
    x = uniform(3, 33, 5, low=0.5, high=1.5)

    def build(x):
        return [f(x, axis=axis, keepdims=keepdims) for f in
                (tf.reduce_sum, tf.reduce_mean, tf.reduce_max, tf.reduce_min, tf.reduce_prod)]
    check(build, x, rtol=1e-5, atol=1e-5)


def test_reductions_large_empty_and_bool():
    big = uniform(100000)
    check(lambda x: [tf.reduce_sum(x), tf.reduce_max(x), tf.reduce_mean(x)], big,
          rtol=1e-4, atol=1e-3)
    empty = np.zeros((0, 4), np.float32)
    check(lambda x: [tf.reduce_sum(x, 0), tf.reduce_max(x, 1), tf.reduce_sum(x)], empty)
    b = RNG.rand(4, 5) > 0.3
    check(lambda x: [tf.reduce_any(x, 1), tf.reduce_all(x, 0), tf.reduce_all(x)], b)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_argmax_argmin(axis):
    x = RNG.randint(0, 4, size=(6, 9)).astype(np.float32)  # ties: the first wins
    check(lambda x: [tf.argmax(x, axis), tf.argmin(x, axis),
                     tf.argmax(x, axis, output_type=tf.int32)], x)


# ---- matmul -------------------------------------------------------------------------------
MATMULS = [(1, 1, 1), (17, 33, 9), (64, 64, 64), (16, 24, 8), (40, 7, 130), (3, 0, 4),
           (0, 3, 4), (9, 65, 8)]


@pytest.mark.parametrize("m,k,n", MATMULS, ids=str)
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul(m, k, n, ta, tb):
    a = uniform(*((k, m) if ta else (m, k)))
    b = uniform(*((n, k) if tb else (k, n)))
    check(lambda x, y: tf.matmul(x, y, transpose_a=ta, transpose_b=tb), a, b,
          rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shapes", [((2, 5, 9), (2, 9, 3)), ((4, 3, 8, 16), (16, 8)),
                                    ((1, 7, 4), (3, 4, 9)), ((2, 1, 6, 8), (3, 8, 8))],
                         ids=str)
def test_batched_matmul(shapes):
    check(lambda x, y: [tf.matmul(x, y), tf.matmul(x, tf.matrix_transpose(y), adjoint_b=True)],
          uniform(*shapes[0]), uniform(*shapes[1]), rtol=1e-4, atol=1e-4)


# ---- nn -------------------------------------------------------------------------------------
def test_softmax_family_and_losses():
    logits = uniform(6, 7) * 5
    labels = np.eye(7, dtype=np.float32)[RNG.randint(0, 7, 6)] * 0.7 + 0.1 / 7
    sparse = RNG.randint(0, 7, 6).astype(np.int64)

    def build(x, y, s):
        dense = tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=x)
        sparse_loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=s, logits=x)
        return [tf.nn.softmax(x), tf.nn.log_softmax(x), dense, sparse_loss,
                tf.gradients(tf.reduce_sum(dense), x)[0],
                tf.gradients(tf.reduce_sum(sparse_loss), x)[0], tf.nn.l2_loss(x)]
    check(build, logits, labels, sparse, rtol=1e-5, atol=1e-5)


def test_sparse_cross_entropy_with_bad_label_is_nan_on_gpu():
    """TF's GPU kernel gives NaN for a label out of range (the CPU one raises)."""
    with tf.device("/gpu:0"):
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.constant([0, 9]), logits=tf.constant([[1.0, 2.0], [3.0, 4.0]]))
    with tf.Session() as sess:
        value = sess.run(loss)
    assert np.isfinite(value[0]) and np.isnan(value[1])


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
def test_bias_add_and_its_gradient(data_format):
    x = uniform(2, 3, 4, 5)
    bias = uniform(5 if data_format == "NHWC" else 3)

    def build(x, b):
        y = tf.nn.bias_add(x, b, data_format=data_format)
        return [y, tf.gradients(tf.reduce_sum(y * y), b)[0]]
    check(build, x, bias, rtol=1e-5, atol=1e-5)


CONVS = [((2, 7, 6, 3), (3, 3, 3, 4), 1, "SAME", 1), ((1, 9, 9, 2), (3, 2, 2, 5), 2, "VALID", 1),
         ((2, 8, 8, 1), (3, 3, 1, 2), 1, "SAME", 2), ((1, 5, 5, 3), (1, 1, 3, 3), 1, "VALID", 1),
         ((3, 6, 7, 2), (2, 3, 2, 9), 2, "SAME", 1)]


@pytest.mark.parametrize("x_shape,w_shape,stride,padding,dilation", CONVS, ids=str)
def test_conv2d_and_gradients(x_shape, w_shape, stride, padding, dilation):
    def build(x, w):
        y = tf.nn.conv2d(x, w, [1, stride, stride, 1], padding,
                         dilations=[1, dilation, dilation, 1])
        dx, dw = tf.gradients(tf.reduce_sum(y * y), [x, w])
        return [y, dx, dw]
    check(build, uniform(*x_shape), uniform(*w_shape), rtol=1e-4, atol=1e-4)


POOLS = [((2, 7, 7, 3), 2, 2, "VALID"), ((1, 7, 6, 2), 3, 2, "SAME"), ((2, 5, 5, 1), 3, 1, "SAME"),
         ((1, 4, 4, 2), 2, 2, "SAME")]


@pytest.mark.parametrize("shape,k,s,padding", POOLS, ids=str)
def test_pooling_and_gradients(shape, k, s, padding):
    x = RNG.permutation(int(np.prod(shape))).reshape(shape).astype(np.float32) / 10

    def build(x):
        maxed = tf.nn.max_pool(x, [1, k, k, 1], [1, s, s, 1], padding)
        mean = tf.nn.avg_pool(x, [1, k, k, 1], [1, s, s, 1], padding)
        return [maxed, mean, tf.gradients(tf.reduce_sum(maxed * maxed), x)[0],
                tf.gradients(tf.reduce_sum(mean * mean), x)[0]]
    check(build, x, rtol=1e-5, atol=1e-5)


# ---- array ops ------------------------------------------------------------------------------
def test_array_ops():
    x = uniform(3, 4, 5)

    def build(x):
        return [tf.reshape(x, [5, -1]), tf.transpose(x, [2, 0, 1]), tf.transpose(x),
                tf.concat([x, x * 2], 1), tf.stack([x, x], axis=2),
                tf.slice(x, [1, 0, 2], [2, 3, -1]),
                x[::-1, 1:3, ::2], x[1], x[..., 0], x[:, None, 2], tf.tile(x, [2, 1, 3]),
                tf.pad(x, [[1, 0], [0, 2], [1, 1]]), tf.gather(x, [2, 0, 2], axis=1),
                tf.expand_dims(x, 1), tf.squeeze(x[:, :1]), tf.split(x, [2, 3], axis=2),
                tf.unstack(x, axis=1), tf.shape(x), tf.size(x), tf.rank(x),
                tf.one_hot([0, 3, 1], 4)]
    check(build, x)


def test_array_ops_on_empty_and_integer_tensors():
    check(lambda x: [tf.transpose(x), tf.concat([x, x], 0), tf.reshape(x, [3, 0])],
          np.zeros((0, 3), np.float32))
    check(lambda x: [tf.transpose(x), tf.concat([x, x], 1), x[:, 1:]],
          np.arange(12, dtype=np.int32).reshape(3, 4))


# ---- gradients on /gpu:0 (float64: PoCL has cl_khr_fp64) ---------------------------------------
def test_gradient_checks_on_gpu():
    has_fp64 = _registry.has_kernel("MatMul", "GPU", (tf.float64, tf.float64))
    dtype = tf.float64 if has_fp64 else tf.float32
    np_dtype = dtype.as_numpy_dtype
    x_value = uniform(3, 4, dtype=np_dtype)
    w_value = uniform(4, 2, dtype=np_dtype)
    img_value = uniform(1, 5, 5, 2, dtype=np_dtype)
    with tf.device("/gpu:0"):
        x = tf.placeholder(dtype, [3, 4])
        w = tf.placeholder(dtype, [4, 2])
        y = tf.nn.softmax(tf.tanh(tf.matmul(x, w)) + tf.reduce_mean(x, 1, keepdims=True))
        img = tf.placeholder(dtype, [1, 5, 5, 2])
        filt = tf.constant(uniform(2, 2, 2, 3, dtype=np_dtype))
        pooled = tf.nn.avg_pool(tf.nn.conv2d(img, filt, [1, 1, 1, 1], "SAME"),
                                [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    with tf.Session() as sess:
        tf.test.check_gradients(y, [x, w], [x_value, w_value], session=sess)
        tf.test.check_gradients(pooled, img, img_value, session=sess)


# ---- training --------------------------------------------------------------------------------
def _mlp_losses(device, optimizer, steps=15):
    rng = np.random.RandomState(0)
    data = rng.randn(64, 10).astype(np.float32)
    labels = (data[:, :3].sum(1) > 0).astype(np.int64)
    graph = tf.Graph()
    with graph.as_default(), tf.device(device):
        x = tf.placeholder(tf.float32, [None, 10])
        y = tf.placeholder(tf.int64, [None])
        w1 = tf.Variable(rng.randn(10, 16).astype(np.float32) * 0.3)
        b1 = tf.Variable(tf.zeros([16]))
        w2 = tf.Variable(rng.randn(16, 2).astype(np.float32) * 0.3)
        logits = tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        train = optimizer.minimize(loss)
        init = tf.global_variables_initializer()
    with tf.Session(graph=graph) as sess:
        sess.run(init)
        return [sess.run([loss, train], {x: data, y: labels})[0] for _ in range(steps)]


@pytest.mark.parametrize("make_optimizer", [
    lambda: tf.train.GradientDescentOptimizer(0.5),
    lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    lambda: tf.train.AdamOptimizer(0.05)], ids=["sgd", "momentum", "adam"])
def test_mlp_trains_on_gpu_like_on_cpu(make_optimizer):
    gpu = _mlp_losses("/gpu:0", make_optimizer())
    cpu = _mlp_losses("/cpu:0", make_optimizer())
    np.testing.assert_allclose(gpu, cpu, rtol=1e-4, atol=1e-5)
    assert gpu[-1] < gpu[0]


def test_small_cnn_trains_on_gpu_like_on_cpu():
    rng = np.random.RandomState(1)
    images = rng.rand(8, 8, 8, 1).astype(np.float32)
    labels = (images.mean(axis=(1, 2, 3)) > 0.5).astype(np.int32)
    filters = (rng.randn(3, 3, 1, 4) * 0.3).astype(np.float32)
    dense = (rng.randn(16, 2) * 0.3).astype(np.float32)

    def losses(device):
        graph = tf.Graph()
        with graph.as_default(), tf.device(device):
            x = tf.constant(images)
            w = tf.Variable(filters)
            v = tf.Variable(dense)
            h = tf.nn.max_pool(tf.nn.relu(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")),
                               [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
            h = tf.nn.avg_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
            logits = tf.matmul(tf.reshape(h, [-1, 16]), v)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=tf.constant(labels), logits=logits))
            train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
            init = tf.global_variables_initializer()
        with tf.Session(graph=graph) as sess:
            sess.run(init)
            return [sess.run([loss, train])[0] for _ in range(10)]
    np.testing.assert_allclose(losses("/gpu:0"), losses("/cpu:0"), rtol=1e-4, atol=1e-5)


def test_a_training_step_has_no_host_round_trip():
    """Every op of the step is on /gpu:0: one partition, no Send/Recv; only the
    feeds come in and the fetched loss goes out."""
    with tf.device("/gpu:0"):
        x = tf.placeholder(tf.float32, [8, 3])
        w = tf.Variable(np.ones((3, 2), np.float32))
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        graphs = sess.partition_graphs([loss, train], {x: np.ones((8, 3))})
        assert len(graphs) == 1 and list(graphs)[0].endswith("GPU:0")
        types = {op.type for op in list(graphs.values())[0].get_operations()}
        assert "_Send" not in types and "_Recv" not in types
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        metadata = tf.RunMetadata()
        sess.run([loss, train], {x: np.ones((8, 3))}, options=options, run_metadata=metadata)
    devices = [d.device for d in metadata.step_stats.dev_stats]
    assert devices == ["/job:localhost/replica:0/task:0/device:GPU:0"]


# ---- the worked example of docs/concepts/opencl.rst ---------------------------------------------
def test_the_docs_example_plugin_adds_a_gpu_kernel():
    import importlib.util
    import pathlib
    from minitf.registry import register_plugin, unregister_plugin

    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / "opencl_cube.py"
    spec = importlib.util.spec_from_file_location("opencl_cube", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    register_plugin(module, name="opencl_cube")
    try:
        assert _registry.has_kernel("Cube", "GPU", (tf.float32,))
        x = uniform(5, 3)
        check(lambda x: [module.cube(x), tf.gradients(tf.reduce_sum(module.cube(x)), x)[0]], x,
              rtol=1e-5)
    finally:
        unregister_plugin(module)


# ---- random ops (a counter-based generator: other numbers than the CPU's) ----------------------
def test_random_ops_on_gpu_have_the_right_distributions():
    with tf.device("/gpu:0"):
        normal = tf.random_normal([200, 500], seed=1)
        uniform_ = tf.random_uniform([100000], seed=2)
        truncated = tf.truncated_normal([100000], mean=1.0, stddev=2.0, seed=3)
    with tf.Session() as sess:
        n, u, t = sess.run([normal, uniform_, truncated])
        n_again = sess.run(normal)
    assert abs(n.mean()) < 0.01 and abs(n.std() - 1) < 0.01
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    assert np.abs(t - 1.0).max() <= 4.0 and abs((t - 1.0).std() / 2 - 0.8796) < 0.01
    assert not np.array_equal(n, n_again)  # each run draws anew
    with tf.Session() as sess:  # the same seeded program draws the same numbers
        np.testing.assert_array_equal(sess.run(normal), n)


def test_slicing_scalars_and_fully_indexed_tensors():
    """Indexes that make NumPy return a scalar rather than a view."""
    check(lambda x: [tf.slice(x, [], []), tf.reverse(x, []), tf.transpose(x)],
          np.float32(3.5))
    check(lambda x: [x[1, 2, 3], x[-1, 0, ...], tf.unstack(x[0, 0])], uniform(2, 3, 4))


def test_strided_slice_gradient():
    def build(x):
        y = x[1:, ::-2, 1] * x[:-1, ::2, 2]
        return tf.gradients(tf.reduce_sum(y * y), x)[0]
    check(build, uniform(3, 5, 4), rtol=1e-5, atol=1e-5)


def test_run_time_errors_on_gpu_name_the_users_op():
    with tf.device("/gpu:0"):
        x = tf.placeholder(tf.float32)
        y = tf.reshape(x, [4], name="bad_reshape")
        z = tf.concat([x, tf.ones([2, 4])], 0, name="bad_concat")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="6 values") as info:
            sess.run(y, {x: np.ones((2, 3), np.float32)})
        assert info.value.op is y.op and "[[node bad_reshape" in info.value.message
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="Dimension 1 in both shapes must be equal") as info:
            sess.run(z, {x: np.ones((2, 3), np.float32)})
        assert info.value.op is z.op


def test_float64_kernels_need_fp64_and_devices_can_be_chosen():
    from minitf_opencl_gpu.kernels.table import expand_groups
    from minitf_opencl_gpu.platform import _selected
    assert tf.float64 not in expand_groups(("float",), has_fp64=False)
    assert tf.float64 in expand_groups(("float",), has_fp64=True)

    class Fake:
        def __init__(self, platform, name):
            self.platform_name = platform
            self.cl_device = type("D", (), {"name": name})()
    entries = [(0, 0, Fake("Portable Computing Language", "cpu")),
               (1, 0, Fake("NVIDIA CUDA", "H100"))]
    pick = lambda spec: [t.cl_device.name for _, _, t in _selected(entries, spec)]  # noqa: E731
    assert pick("") == pick("all") == ["cpu", "H100"]
    assert pick("none") == []
    assert pick("1:0") == pick("nvidia") == ["H100"]
    assert pick("H100, 0:0") == ["H100", "cpu"]


def test_a_cast_to_a_dtype_the_device_cannot_hold_is_placed_elsewhere():
    """No float16 tensors live on the OpenCL device: a Cast to float16 has no GPU kernel
    (TF constrains Cast kernels by SrcT and DstT), so pinning it there fails at
    placement, naming the op, and soft placement runs it on the CPU."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        with tf.device("/gpu:0"):
            half = tf.cast(x, tf.float16, name="to_half")
            back = tf.cast(half, tf.float32) + 1.0
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="Cannot assign a device for operation to_half") as info:
                sess.run(back, {x: [1.5, 2.0]})
        assert info.value.op is half.op
        soft = tf.ConfigProto(allow_soft_placement=True)
        with tf.Session(config=soft) as sess:
            np.testing.assert_array_equal(sess.run(back, {x: [1.5, 2.0]}), [2.5, 3.0])
            placed = {op.name: op.device for g in sess.partition_graphs(back).values()
                      for op in g.get_operations()}
    assert "CPU" in placed["to_half"] and "GPU" in placed["add"]


def test_a_float16_random_op_is_placed_where_float16_lives():
    with tf.Graph().as_default():
        with tf.device("/gpu:0"):
            sample = tf.random_normal([1000], dtype=tf.float16, seed=1)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError,
                               match="no supported kernel for GPU devices.*float16"):
                sess.run(sample)
        with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
            values = sess.run(sample)
    assert values.dtype == np.float16 and abs(float(values.mean())) < 0.15


@pytest.mark.parametrize("dtype", [tf.uint8, tf.int8, tf.int16, tf.uint16])
def test_small_integers_cross_from_the_gpu_to_the_cpu(dtype):
    """A Cast on the GPU makes them; a CPU op reads them through _Send/_Recv."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [4])
        with tf.device("/gpu:0"):
            small = tf.cast(x, dtype)
        with tf.device("/cpu:0"):
            wide = tf.cast(small, tf.int32) * 2
        with tf.Session() as sess:
            got_small, got_wide = sess.run([small, wide], {x: [1.0, 2.0, 3.0, 100.0]})
    np.testing.assert_array_equal(got_small, np.array([1, 2, 3, 100], dtype.as_numpy_dtype))
    np.testing.assert_array_equal(got_wide, [2, 4, 6, 200])


def test_gather_gradient_scatter_adds_with_unsorted_segment_sum():
    params = uniform(6, 4)
    ids = np.array([[0, 5, 0], [2, 0, 5]], np.int32)

    def build(p, i):
        picked = tf.gather(p, i)
        return [tf.gradients(tf.reduce_sum(picked * picked), p)[0],
                tf.unsorted_segment_sum(p, tf.constant([1, 0, 1, 3, 0, 1]), 4)]
    check(build, params, ids, rtol=1e-5, atol=1e-5)


def test_control_flow_and_its_gradient_on_gpu():
    def build(x):
        _, looped = tf.while_loop(lambda i, v: i < 4, lambda i, v: (i + 1, tf.tanh(v) * 1.5),
                                  [tf.constant(0), x])
        branched = tf.cond(tf.reduce_sum(x) > 0.0, lambda: x * 3.0, lambda: x - 1.0)
        return [looped, branched, tf.gradients(tf.reduce_sum(looped * branched), x)[0]]
    check(build, uniform(5), rtol=1e-5, atol=1e-5)


def test_a_loop_split_between_gpu_and_cpu_by_soft_placement():
    # Einsum has no OpenCL kernel: soft placement puts it on the CPU, so
    # tensors cross devices in every iteration (keys carry frame and
    # iteration) and the untaken cond branch's dead tensor crosses too.
    # einsum("i,ij->j", a, upper) with an upper triangle of ones is cumsum(a).
    x = tf.placeholder(tf.float32, [3])
    upper = np.triu(np.ones((3, 3), np.float32))

    def cumsum_on_cpu(a):
        return tf.einsum("i,ij->j", a, tf.constant(upper))
    with tf.device("/gpu:0"):
        _, looped = tf.while_loop(lambda i, a: i < 4,
                                  lambda i, a: (i + 1, cumsum_on_cpu(a) * 0.5),
                                  [tf.constant(0), x])
        branched = tf.cond(tf.reduce_sum(x) > 0.0,
                           lambda: cumsum_on_cpu(x), lambda: x - 1.0)
    expected = np.array([1.0, 2.0, 3.0])
    for _ in range(4):
        expected = np.cumsum(expected) * 0.5
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        got_loop, got_cond = sess.run([looped, branched], {x: [1.0, 2.0, 3.0]})
        np.testing.assert_allclose(got_loop, expected, rtol=1e-6)
        np.testing.assert_allclose(got_cond, [1.0, 3.0, 6.0])
        np.testing.assert_allclose(sess.run(branched, {x: [-1.0, -2.0, 0.0]}),
                                   [-2.0, -3.0, -1.0])


# ---- kernels added for the device-parametrized op suites (MINITF_TEST_DEVICES=cpu,gpu) -------
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumsum_and_cumprod(exclusive, reverse):
    x = uniform(3, 5, 4, low=0.5, high=1.5)
    ints = RNG.randint(-3, 4, size=(2, 7)).astype(np.int32)

    def build(x, i):
        scans = []
        for axis in (0, 1, -1):
            scans += [tf.cumsum(x, axis, exclusive=exclusive, reverse=reverse),
                      tf.cumprod(x, axis, exclusive=exclusive, reverse=reverse)]
        return scans + [tf.cumsum(i, 1, exclusive=exclusive, reverse=reverse),
                        tf.cumprod(i, 0, exclusive=exclusive, reverse=reverse)]
    check(build, x, ints, rtol=1e-5, atol=1e-6)
    expected = np.cumsum(x[:, ::-1] if reverse else x, axis=1)
    if exclusive:
        expected = np.concatenate([np.zeros_like(expected[:, :1]), expected[:, :-1]], axis=1)
    got, = run_both(lambda x: tf.cumsum(x, 1, exclusive=exclusive, reverse=reverse), x)[:1]
    np.testing.assert_allclose(got, expected[:, ::-1] if reverse else expected, rtol=1e-5)


def test_cumsum_of_empty_and_its_axis_error():
    check(lambda x: [tf.cumsum(x, 0), tf.cumprod(x, 1)], np.zeros((0, 3), np.float32))
    with tf.device("/gpu:0"):
        bad = tf.cumsum(tf.placeholder(tf.float32, [2, 2]), tf.placeholder(tf.int32, []))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="axis 2 out of range"):
            sess.run(bad, {"Placeholder:0": np.ones((2, 2)), "Placeholder_1:0": 2})


@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC"])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_mirror_pad_and_its_gradient(mode, dtype):
    x = (RNG.uniform(-3, 3, size=(3, 4, 2)) * 10).astype(dtype)
    pads = [[2, 1], [0, 3], [1, 1]] if mode == "REFLECT" else [[3, 0], [4, 2], [2, 2]]

    def build(x):
        padded = tf.pad(x, pads, mode=mode)
        if dtype == np.bool_:
            return [padded, padded]
        return [padded, padding_ops.mirror_pad_grad(padded, pads, mode)]
    gpu, cpu = run_both(build, x)
    assert_same(gpu, cpu, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(gpu[0], np.pad(x, pads, mode=mode.lower()))


def test_mirror_pad_gradient_folds_each_copy_back():
    """Hand-computed: REFLECT [2, 1] of [a, b, c] is [c, b, a, b, c, b]."""
    x = np.array([1.0, 2.0, 3.0], np.float32)
    weights = np.arange(1.0, 7.0, dtype=np.float32)   # d/dpadded of sum(w * padded)
    gpu, _ = run_both(lambda x: tf.gradients(
        tf.reduce_sum(tf.constant(weights) * tf.pad(x, [[2, 1]], mode="REFLECT")), x)[0], x)
    np.testing.assert_allclose(gpu, [3.0, 2.0 + 4.0 + 6.0, 1.0 + 5.0])


def test_mirror_pad_too_wide_is_tfs_error_on_gpu():
    with tf.device("/gpu:0"):
        padded = tf.pad(tf.placeholder(tf.float32, [2]), [[2, 0]], mode="REFLECT",
                        name="too_wide")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="paddings must be less than the dimension size") as info:
            sess.run(padded, {"Placeholder:0": [1.0, 2.0]})
    assert "too_wide" in str(info.value)


def test_integer_pow_relu_matmul_conv_and_pool():
    a = RNG.randint(-4, 5, size=(5, 9)).astype(np.int32)
    e = RNG.randint(0, 5, size=(9,)).astype(np.int32)
    b = RNG.randint(-4, 5, size=(9, 11)).astype(np.int32)
    image = RNG.randint(-9, 10, size=(2, 5, 5, 3)).astype(np.int32)
    kernel = RNG.randint(-2, 3, size=(3, 3, 3, 4)).astype(np.int32)
    check(lambda a, e: [tf.pow(a, e), tf.nn.relu(a), tf.nn.relu6(a * 2),
                        tf.matmul(a, a, transpose_b=True), tf.matmul(a, a, transpose_a=True)],
          a, e)
    check(lambda b: [tf.matmul(b[:8, :9], b),
                     tf.matmul(tf.reshape(b[:8, :8], [2, 4, 8]), tf.reshape(b[:8, :8], [2, 8, 4]))],
          b)
    check(lambda x, k: [tf.nn.conv2d(x, k, [1, 1, 1, 1], "SAME"),
                        tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME")], image, kernel)
    np.testing.assert_array_equal(run_both(tf.pow, a, e)[0], np.power(a, e))


def test_small_integer_casts_and_one_hot_stay_on_the_gpu():
    for dtype in (np.int8, np.int16, np.uint8, np.uint16):
        x = np.array([0, 1, 7, 100], dtype)
        check(lambda x: [tf.truediv(x, tf.constant(2, x.dtype)), tf.cast(x, tf.float32)], x)
    check(lambda i: tf.one_hot(i, 4, dtype=tf.uint8), np.array([0, 3, 5, -1], np.int32))


# ---- ops left without a GPU kernel: soft placement, or a clear error --------------------------
NO_GPU_KERNEL = [
    ("MatrixInverse", lambda: tf.matrix_inverse(tf.constant([[2.0]]), name="the_op")),
    ("Where", lambda: tf.where(tf.constant([True, False, True]), name="the_op")),
    ("Einsum", lambda: tf.einsum("ij->j", tf.constant([[1.0, 2.0]]), name="the_op")),
    ("MatMul", lambda: _half_matmul()),
]


def _half_matmul():
    """A matmul of float16, a dtype the GPU has no kernels for (its inputs made on the CPU)."""
    with tf.device("/cpu:0"):
        a, b = tf.constant([[1.0, 2.0]], tf.float16), tf.constant([[3.0], [4.0]], tf.float16)
    return tf.matmul(a, b, name="the_op")


@pytest.mark.parametrize("op_type,build", NO_GPU_KERNEL, ids=[t for t, _ in NO_GPU_KERNEL])
def test_an_op_without_gpu_kernel_errors_naming_op_and_device(op_type, build):
    """Without soft placement: TF's InvalidArgumentError, naming the op, its type,
    its dtypes and the device; a dtype without a kernel (float16 here, float64 on
    a device without cl_khr_fp64) is the same error."""
    with tf.device("/gpu:0"):
        out = build()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(out)
    message = str(info.value)
    assert "the_op" in message and "GPU:0" in message and op_type in message
    assert "no supported kernel for GPU" in message and "allow_soft_placement" in message
    assert "test_opencl.py" in message


@pytest.mark.parametrize("op_type,build", NO_GPU_KERNEL, ids=[t for t, _ in NO_GPU_KERNEL])
def test_an_op_without_gpu_kernel_runs_on_cpu_under_soft_placement(op_type, build):
    with tf.device("/gpu:0"):
        out = build()
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        value = sess.run(out)
    graph = tf.Graph()  # the same op placed freely: the CPU reference
    with graph.as_default():
        reference = build()
        with tf.Session(graph=graph) as sess:
            np.testing.assert_allclose(np.asarray(value, np.float64),
                                       np.asarray(sess.run(reference), np.float64))


# ---- behaviour that differs from the CPU kernels on purpose, as TF's GPU kernels do ----------
def test_out_of_range_indices_give_zeros_or_are_dropped_as_tfs_gpu_kernels():
    """TF documents it: on GPU a ``tf.gather`` index out of range stores 0, an
    ``unsorted_segment_sum`` id out of range is ignored; the CPU kernels raise."""
    params = tf.placeholder(tf.float32, [3, 2])
    with tf.device("/gpu:0"):
        picked = tf.gather(params, tf.constant([2, -1, 3, 0]))
        summed = tf.unsorted_segment_sum(params, tf.constant([1, 5, -1]), 2)
    value = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
    with tf.Session() as sess:
        got_picked, got_summed = sess.run([picked, summed], {params: value})
    np.testing.assert_array_equal(got_picked, [[5.0, 6.0], [0.0, 0.0], [0.0, 0.0], [1.0, 2.0]])
    np.testing.assert_array_equal(got_summed, [[0.0, 0.0], [1.0, 2.0]])


def test_sparse_cross_entropy_gradient_row_of_a_bad_label_is_nan():
    logits = tf.placeholder(tf.float32, [2, 2])
    with tf.device("/gpu:0"):
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([0, 9]),
                                                              logits=logits)
        grad = tf.gradients(tf.reduce_sum(loss), logits)[0]
    with tf.Session() as sess:
        value = sess.run(grad, {logits: [[1.0, 2.0], [3.0, 4.0]]})
    p = np.exp(1.0) / (np.exp(1.0) + np.exp(2.0))
    np.testing.assert_allclose(value[0], [p - 1.0, 1.0 - p], rtol=1e-5)
    assert np.isnan(value[1]).all()


def test_integer_pow_with_a_negative_exponent_truncates_on_gpu():
    """The CPU kernel raises; a device kernel cannot, so it truncates 1 / a**|b| toward 0."""
    base = tf.placeholder(tf.int32, [5])
    with tf.device("/gpu:0"):
        power = tf.pow(base, tf.constant([-1, -3, -2, -1, 3]))
    with tf.Session() as sess:
        value = sess.run(power, {base: [2, -1, 1, -1, -2]})
    np.testing.assert_array_equal(value, [0, -1, 1, -1, -8])


def test_gather_nd_and_scatter_nd():
    params = uniform(4, 3, 2)
    coords = np.array([[[3, 1], [0, 2]], [[1, 0], [3, 1]]], np.int32)

    def build(p, c):
        return [tf.gather_nd(p, c), tf.gather_nd(p, c[..., :1]), tf.gather_nd(p, c[0, :, :1]),
                tf.scatter_nd(c, tf.constant(np.arange(8.0, dtype=np.float32).reshape(2, 2, 2)),
                              [4, 3, 2]),
                tf.gradients(tf.reduce_sum(tf.gather_nd(p, c) ** 2), p)[0]]
    check(build, params, coords, rtol=1e-5, atol=1e-6)
    p = tf.placeholder(tf.float32, params.shape)
    with tf.device("/gpu:0"):
        picked = tf.gather_nd(p, [[1, 2], [4, 0]])   # out of range: zeros, as TF's GPU kernel
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(picked, {p: params}), [params[1, 2], [0.0, 0.0]])


def test_random_integers_on_gpu_are_drawn_in_host_memory():
    with tf.device("/gpu:0"):
        ints = tf.random_uniform([2000], minval=-3, maxval=4, dtype=tf.int32, seed=7)
    with tf.Session() as sess:
        value = sess.run(ints)
    assert value.dtype == np.int32 and value.min() == -3 and value.max() == 3
    assert set(np.unique(value)) == set(range(-3, 4))


@pytest.mark.parametrize("k", [0, 1, 3, 9])
def test_top_k_ranks_ties_by_index_and_nan_last(k):
    x = RNG.randint(-3, 4, size=(4, 9)).astype(np.float32)   # many ties
    x[1, [2, 5]] = np.nan
    x[2, :2] = [-0.0, 0.0]

    def build(x):
        values, indices = tf.nn.top_k(x, k=k)
        small_v, small_i = tf.nn.top_k(tf.cast(x[2:], tf.int32), k=k)
        return [values, indices, small_v, small_i,
                tf.gradients(tf.reduce_sum(values * values), x)[0]]
    gpu, cpu = run_both(build, x)
    assert_same(gpu, cpu)
    order = np.argsort(-x[0], kind="stable")[:k]
    np.testing.assert_array_equal(gpu[1][0], order)
