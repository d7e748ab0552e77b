"""The OpenCL GEMM: every configuration the tuner may choose computes the same product.

Each configuration of :mod:`minitf_opencl_gpu.gemm_tuning` (the local-memory
``tiled`` kernel and the ``packed`` kernel, in each size the tuner lists
for any device that fits this one) is forced in turn and checked against
NumPy over odd shapes, transposes, batches and broadcast batches.  The
tuner itself is tested with a fake clock: which configuration wins, the
JSON cache on disk, ``MINITF_GEMM_AUTOTUNE=0``.  Nothing here depends on
real timings.
"""

import json

import numpy as np
import pytest

import minitf as tf
from minitf.registry import get_registry

pytestmark = pytest.mark.skipif(get_registry().device_factory("GPU") is None,
                                reason="OpenCL GPU tests SKIPPED: no OpenCL device")

if get_registry().device_factory("GPU") is not None:
    from minitf_opencl_gpu import gemm_tuning, programs
    CL_DEVICE = get_registry().device_factory("GPU").targets[0].cl_device
    ALL_CONFIGS = gemm_tuning.all_configs(CL_DEVICE)
    CANDIDATES = gemm_tuning.candidates(CL_DEVICE)
else:
    CL_DEVICE, ALL_CONFIGS, CANDIDATES = None, [], []

RNG = np.random.RandomState(7)

#: (a shape, b shape, transpose_a, transpose_b): op(A) is M x K, op(B) is K x N.
PRODUCTS = [((1, 1), (1, 1), False, False), ((7, 13), (13, 5), False, False),
            ((65, 129), (129, 33), False, False), ((129, 65), (129, 33), True, False),
            ((65, 129), (33, 129), False, True), ((129, 65), (33, 129), True, True),
            ((13, 7), (5, 13), True, True), ((3, 9, 17), (3, 17, 6), False, False),
            ((3, 1, 9, 17), (4, 6, 17), False, True), ((2, 17, 9), (17, 40), True, False),
            ((1, 16, 16), (5, 16, 16), False, False),
            # Sizes that the packed kernel's blocks divide: operands read in place.
            ((48, 40), (40, 96), False, False), ((40, 48), (40, 96), True, False),
            ((48, 40), (96, 40), False, True), ((2, 48, 24), (24, 96), False, False)]


def values(shape, dtype):
    if np.dtype(dtype).kind == "i":
        return RNG.randint(-9, 10, shape).astype(dtype)
    return RNG.randn(*shape).astype(dtype)


def expected(a, b, ta, tb):
    return np.matmul(np.swapaxes(a, -1, -2) if ta else a, np.swapaxes(b, -1, -2) if tb else b)


def check_products(config, dtype):
    graph = tf.Graph()
    with graph.as_default(), tf.device("/gpu:0"):
        cases = []
        for a_shape, b_shape, ta, tb in PRODUCTS:
            a, b = values(a_shape, dtype), values(b_shape, dtype)
            product = tf.matmul(tf.constant(a), tf.constant(b), transpose_a=ta, transpose_b=tb)
            cases.append((product, expected(a, b, ta, tb)))
    with graph.as_default(), tf.Session() as sess, gemm_tuning.override(config):
        results = sess.run([product for product, _ in cases])
    for (a_shape, b_shape, ta, tb), result, (_, want) in zip(PRODUCTS, results, cases):
        assert result.dtype == want.dtype and result.shape == want.shape
        if want.dtype.kind == "f":
            np.testing.assert_allclose(result, want, rtol=1e-4, atol=1e-4,
                                       err_msg="%s %s %s %s" % (a_shape, b_shape, ta, tb))
        else:
            np.testing.assert_array_equal(result, want)


@pytest.mark.parametrize("config", ALL_CONFIGS, ids=repr)
def test_every_configuration_matches_numpy_float32(config):
    check_products(config, np.float32)


@pytest.mark.parametrize("config", CANDIDATES, ids=repr)
@pytest.mark.parametrize("dtype", [np.float64, np.int32], ids=lambda d: np.dtype(d).name)
def test_candidates_of_this_device_in_other_dtypes(config, dtype):
    if dtype == np.float64 and "cl_khr_fp64" not in CL_DEVICE.extensions:
        pytest.xfail("this OpenCL device has no float64")   # the placer refuses it
    check_products(config, dtype)


@pytest.mark.parametrize("kind", ["tiled", "packed"])
def test_conv2d_and_its_gradients_with_each_kernel(kind):
    """Conv2D is im2col + GEMM; its gradients use the transposed operands."""
    config = next(c for c in ALL_CONFIGS if c.kind == kind)
    x, w = values((2, 7, 6, 3), np.float32), values((3, 3, 3, 4), np.float32)
    results = []
    for device in ("/gpu:0", "/cpu:0"):
        graph = tf.Graph()
        with graph.as_default(), tf.device(device):
            xt, wt = tf.constant(x), tf.constant(w)
            y = tf.nn.conv2d(xt, wt, [1, 2, 1, 1], "SAME")
            outputs = [y] + tf.gradients(tf.reduce_sum(y * y), [xt, wt])
        with graph.as_default(), tf.Session() as sess, gemm_tuning.override(config):
            results.append(sess.run(outputs))
    for gpu, cpu in zip(*results):
        np.testing.assert_allclose(gpu, cpu, rtol=1e-4, atol=1e-4)


def test_transposed_operands_are_read_in_place(monkeypatch):
    """No transpose copy (``strided_gather``) before the product: only GEMM kernels run."""
    names = []
    real_launch = programs.launch

    def recording_launch(queue, kernel, *args, **kwargs):
        names.append(kernel.function_name)
        return real_launch(queue, kernel, *args, **kwargs)

    a, b = values((9, 5), np.float32), values((7, 9), np.float32)
    with tf.Graph().as_default(), tf.device("/gpu:0"):
        product = tf.matmul(tf.constant(a), tf.constant(b), transpose_a=True, transpose_b=True)
        with tf.Session() as sess:
            monkeypatch.setattr(programs, "launch", recording_launch)
            result = sess.run(product)   # the constants are uploaded when the step is made
    np.testing.assert_allclose(result, a.T @ b.T, rtol=1e-5, atol=1e-5)
    assert names and set(names) <= {"gemm_tiled", "pack_a", "pack_b", "pack_a_along_k",
                                    "pack_b_along_k", "gemm_packed"}, names


@pytest.mark.parametrize("config", [c for c in ALL_CONFIGS if c.kind == "packed"], ids=repr)
def test_packed_kernel_packs_only_what_needs_padding(monkeypatch, config):
    """An operand whose blocks divide it (and, for B, with contiguous rows) is read in
    place; only the other one is copied into panels."""
    names = []
    real_launch = programs.launch

    def recording_launch(queue, kernel, *args, **kwargs):
        names.append(kernel.function_name)
        return real_launch(queue, kernel, *args, **kwargs)

    m, n = 240, 192        # divisible by every TM and every block width in float32
    cases = [((m, 40), (40, n), False, False, []), ((40, m), (40, n), True, False, []),
             ((m, 40), (n, 40), False, True, ["pack_b_along_k"]),
             ((m + 1, 40), (40, n), False, False, ["pack_a_along_k"]),
             ((40, m + 1), (40, n + 1), True, False, ["pack_a", "pack_b"])]
    for a_shape, b_shape, ta, tb, packs in cases:
        a, b = values(a_shape, np.float32), values(b_shape, np.float32)
        with tf.Graph().as_default(), tf.device("/gpu:0"):
            product = tf.matmul(tf.constant(a), tf.constant(b), transpose_a=ta, transpose_b=tb)
            with tf.Session() as sess, gemm_tuning.override(config):
                names.clear()
                monkeypatch.setattr(programs, "launch", recording_launch)
                result = sess.run(product)
                monkeypatch.setattr(programs, "launch", real_launch)
        np.testing.assert_allclose(result, expected(a, b, ta, tb), rtol=1e-4, atol=1e-4)
        assert names == packs + ["gemm_packed"], (a_shape, b_shape, ta, tb, names)


# ---- the tuner ----------------------------------------------------------------------------
class FakeTarget:
    cl_device = CL_DEVICE


PRODUCT = (128, 512, 784, False, False)      # (m, n, k, a transposed, b transposed)


def test_autotune_keeps_the_fastest_and_caches_it_on_disk(monkeypatch, tmp_path):
    monkeypatch.setattr(gemm_tuning, "cache_dir", lambda: str(tmp_path))
    monkeypatch.delenv(gemm_tuning.ENV_VAR, raising=False)
    fastest = CANDIDATES[-1]
    fake_seconds = {config: 1.0 + i for i, config in enumerate(CANDIDATES)}
    fake_seconds[fastest] = 0.5
    clock = [0.0]
    timed = []

    def prepare(product):
        assert product == PRODUCT          # timed on the product that asked

        def run_product(config):
            timed.append(config)
            clock[0] += fake_seconds[config]
        return run_product
    monkeypatch.setattr(gemm_tuning.time, "perf_counter", lambda: clock[0])
    target = FakeTarget()
    assert gemm_tuning.config_for(target, prepare, PRODUCT) == fastest
    assert set(timed) == set(CANDIDATES)
    with open(gemm_tuning.cache_path(CL_DEVICE)) as f:
        saved = json.load(f)
    chosen = saved["classes"][gemm_tuning.shape_class(*PRODUCT)]["config"]
    assert gemm_tuning.GemmConfig.from_json(chosen) == fastest
    assert [name for name in tmp_path.iterdir() if name.suffix == ".tmp"] == []

    def must_not_time(product):
        raise AssertionError("the cached choice should be used")
    gemm_tuning._chosen.pop((target, gemm_tuning.shape_class(*PRODUCT)))
    assert gemm_tuning.config_for(FakeTarget(), must_not_time, PRODUCT) == fastest  # from disk
    # Same class (dimensions rounded up to powers of two): no new timing.
    assert gemm_tuning.config_for(target, must_not_time, (100, 300, 1000, False, False)) == fastest


def test_each_shape_class_is_tuned_on_its_own(monkeypatch, tmp_path):
    """A weight gradient (K = 128, transposed A) gets its own choice, next to the
    forward product's in the same cache file."""
    monkeypatch.setattr(gemm_tuning, "cache_dir", lambda: str(tmp_path))
    monkeypatch.delenv(gemm_tuning.ENV_VAR, raising=False)
    gradient = (784, 512, 128, True, False)
    winner = {PRODUCT: CANDIDATES[0], gradient: CANDIDATES[-1]}
    clock = [0.0]

    def prepare(product):
        def run_product(config):
            clock[0] += 0.5 if config == winner[product] else 1.0
        return run_product
    monkeypatch.setattr(gemm_tuning.time, "perf_counter", lambda: clock[0])
    target = FakeTarget()
    assert gemm_tuning.shape_class(*PRODUCT) != gemm_tuning.shape_class(*gradient)
    assert gemm_tuning.config_for(target, prepare, PRODUCT) == CANDIDATES[0]
    assert gemm_tuning.config_for(target, prepare, gradient) == CANDIDATES[-1]
    with open(gemm_tuning.cache_path(CL_DEVICE)) as f:
        classes = json.load(f)["classes"]
    assert {key: gemm_tuning.GemmConfig.from_json(v["config"]) for key, v in classes.items()} == {
        gemm_tuning.shape_class(*PRODUCT): CANDIDATES[0],
        gemm_tuning.shape_class(*gradient): CANDIDATES[-1]}
    for key in list(gemm_tuning._chosen):
        if key[0] is target:
            gemm_tuning._chosen.pop(key)


def test_a_real_product_tunes_its_class_and_is_right(monkeypatch, tmp_path):
    """The tuner with the real runner (the plugin's ``_product_runner``): every
    candidate is timed on the product's shape, and the product comes out right."""
    monkeypatch.setattr(gemm_tuning, "cache_dir", lambda: str(tmp_path))
    monkeypatch.delenv(gemm_tuning.ENV_VAR, raising=False)
    gemm_tuning.forget()
    a, b = values((24, 9), np.float32), values((40, 24), np.float32)
    with tf.Graph().as_default(), tf.device("/gpu:0"):
        product = tf.matmul(tf.constant(a), tf.constant(b), transpose_a=True, transpose_b=True)
        with tf.Session() as sess:
            result = sess.run(product)
    gemm_tuning.forget()
    np.testing.assert_allclose(result, a.T @ b.T, rtol=1e-4, atol=1e-4)
    with open(gemm_tuning.cache_path(CL_DEVICE)) as f:
        entry = json.load(f)["classes"]["TT m16 n64 k32"]
    assert entry["product"] == [9, 40, 24, True, True]
    assert {gemm_tuning.GemmConfig.from_json(c).kind for c, _ in entry["seconds"]} == {
        c.kind for c in CANDIDATES}


def test_shape_classes_round_up_to_powers_of_two():
    assert gemm_tuning.shape_class(128, 512, 784, False, False) == "NN m128 n512 k1024"
    assert gemm_tuning.shape_class(784, 10, 128, True, False) == "TN m1024 n16 k128"
    assert gemm_tuning.shape_class(1, 100000, 3, False, True) == "NT m1 n4096 k4"


def test_autotune_off_uses_the_heuristic(monkeypatch, tmp_path):
    monkeypatch.setattr(gemm_tuning, "cache_dir", lambda: str(tmp_path))
    monkeypatch.setenv(gemm_tuning.ENV_VAR, "0")

    def must_not_time(product):
        raise AssertionError("MINITF_GEMM_AUTOTUNE=0 must not time anything")
    assert gemm_tuning.config_for(FakeTarget(), must_not_time, PRODUCT) == gemm_tuning.heuristic(
        CL_DEVICE)
    assert list(tmp_path.iterdir()) == []


def test_autotune_times_in_turns_and_drops_the_slow(monkeypatch):
    """Every candidate gets a warm-up and a first run; only those within
    ``PRUNE`` times the best race on, one run each per round."""
    fast, slow = CANDIDATES[0], CANDIDATES[-1]
    clock, order = [0.0], []

    def run_product(config):
        order.append(config)
        clock[0] += 10.0 if config == slow else 1.0
    monkeypatch.setattr(gemm_tuning.time, "perf_counter", lambda: clock[0])
    timings = dict(gemm_tuning.autotune(CL_DEVICE, run_product))
    assert timings[slow] == 10.0 and timings[fast] == 1.0
    assert order.count(slow) == 2                         # warm-up and one timed run
    assert order.count(fast) == 1 + gemm_tuning.TUNE_RUNS
    racing = [c for c in CANDIDATES if c != slow]
    rounds = order[2 * len(CANDIDATES):]
    assert rounds == racing * (gemm_tuning.TUNE_RUNS - 1)


def test_a_failing_candidate_is_left_out(monkeypatch):
    def time_config(config):
        if config.kind == "tiled":
            raise RuntimeError("out of resources")
    timings = gemm_tuning.autotune(CL_DEVICE, time_config)
    assert [c for c, _ in timings] == [c for c in CANDIDATES if c.kind != "tiled"]


class SmallGPU:
    """A GPU with small limits, to check the choice of candidates."""

    import types as _types
    platform = _types.SimpleNamespace(name="fake")
    name, driver_version, version = "small gpu", "1", "OpenCL 1.2"
    max_work_group_size = 64
    max_work_item_sizes = [64, 64, 64]
    local_mem_size = 8192
    preferred_vector_width_float = 4
    extensions = ""

    @property
    def type(self):
        import pyopencl as cl
        return cl.device_type.GPU


def test_candidates_respect_the_device_limits():
    device = SmallGPU()
    chosen = gemm_tuning.candidates(device)
    assert chosen and all(gemm_tuning.fits(c, device) for c in chosen)
    assert gemm_tuning.heuristic(device).kind == "tiled"
    tiled = [c for c in chosen if c.kind == "tiled"]
    assert all(c.group_size() <= 64 and c.local_bytes(8) <= 8192 for c in tiled)
    assert gemm_tuning.tiled(64, 64, 16, 4, 4) not in chosen     # 256 items, 8 KiB of doubles
