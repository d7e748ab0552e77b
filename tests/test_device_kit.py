"""The kit that measures minitf against PyTorch on a lent GPU (benchmarks/README.md).

Those scripts run for real only on a GPU machine, where a mistake costs the
few minutes of device time a session gets; these tests check their parts here:
torch_reference.py's arithmetic and table (PyTorch itself only when it is
installed, which minitf does not require), compare_gpu_goals.py's ratios and
verdicts on hand-chosen numbers, and the shell scripts' syntax.
"""

import importlib.util
import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"


def load(name):
    """A script of benchmarks/ as a module (benchmarks/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / (name + ".py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


torch_reference = load("torch_reference")
compare_gpu_goals = load("compare_gpu_goals")


# -- torch_reference.py ----------------------------------------------------------------------

def test_throughput_formulas():
    # 20 adds of 4 Mi floats, 3 x 4 bytes each per add, in 10 ms: 1006.6 MB per step.
    assert torch_reference.add_chain_gbs(1 << 22, 20, 0.01) == pytest.approx(100.663296)
    # One 2048^2 product is 2 * 2048^3 = 17.18 GFLOP.
    assert torch_reference.matmul_gflops(2048, 1, 0.01) == pytest.approx(1717.986918)
    assert torch_reference.matmul_gflops(1024, 3, 1.0) == pytest.approx(6.442450944)


def test_mlp_shapes_and_names():
    assert torch_reference.mlp_layer_sizes((256,)) == [(784, 256), (256, 10)]
    assert torch_reference.mlp_layer_sizes((512, 512)) == [(784, 512), (512, 512), (512, 10)]
    assert torch_reference.mlp_name((512, 512)) == "mlp_784_512_512_10"


class FakeClock:
    """Stands in for the ``time`` module: each timed call advances it by a scripted duration."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        return self.now


def test_best_times_warms_up_then_keeps_the_best_of_each(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(torch_reference, "time", clock)
    durations = {"a": [100.0, 3.0, 1.0, 2.0], "b": [100.0, 5.0, 6.0, 4.0]}   # first: warm-up

    def timed(name):
        def fn():
            clock.now += durations[name].pop(0)
        return fn
    assert torch_reference.best_times([timed("a"), timed("b")], 3) == [1.0, 4.0]
    assert durations == {"a": [], "b": []}


def test_table_names_every_number():
    results = {"device": "NVIDIA H100", "torch_version": "2.11", "tf32": False,
               "add_size": 4194304, "add_chain": 20, "add_gbs": 2500.0, "add_ms": 0.4,
               "matmul_1024_gflops": 30000.0, "matmul_2048_gflops": 45000.0,
               "op_chain_ops": 200, "per_op_us": 5.5, "one_op_step_us": 20.25,
               "mlp_784_256_10_steps_s": 2000.0, "mlp_784_512_512_10_steps_s": 1500.0}
    table = torch_reference.format_table(results)
    assert table.splitlines()[0] == "torch 2.11 on NVIDIA H100"
    for expected in ("20 chained adds, 4194304 floats", "2500.0 GB/s", "(0.400 ms/step)",
                     "matmul 2048^2 fp32, TF32 off", "45000.0 GFLOP/s", "200 ops", "5.5 us",
                     "20.2 us", "MLP 784-256-10", "2000.0 steps/s", "MLP 784-512-512-10",
                     "1500.0 steps/s"):
        assert expected in table


def test_without_torch_it_says_so(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)    # import torch raises ImportError
    assert torch_reference.main([]) == 0
    assert capsys.readouterr().out == "PyTorch is not installed: no reference numbers\n"


def test_runs_on_cpu_with_small_sizes(tmp_path):
    pytest.importorskip("torch", reason="PyTorch is not a minitf dependency; "
                                        "torch_reference.py runs on the GPU machine, which has it")
    path = tmp_path / "torch.json"
    done = subprocess.run([sys.executable, str(BENCHMARKS / "torch_reference.py"),
                           "--device", "cpu", "--size", "4096", "--repeat", "1", "--steps", "1",
                           "--ops", "10", "--skip-2048", "--json", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    results = json.loads(path.read_text())
    assert results["add_size"] == 4096 and results["tf32"] is False
    for key in ("add_gbs", "matmul_1024_gflops", "per_op_us", "one_op_step_us",
                "mlp_784_256_10_steps_s", "mlp_784_512_512_10_steps_s"):
        assert results[key] > 0
    assert "matmul_2048_gflops" not in results
    assert "MLP 784-512-512-10" in done.stdout


# -- compare_gpu_goals.py --------------------------------------------------------------------

MINITF = {"device": "NVIDIA H100 (OpenCL)", "add_size": 4194304, "add_chain": 20,
          "per_op_us": 6.0, "bare_enqueue_us": 5.0,               # 1.20x <= 1.3: met
          "one_op_step_us": 40.0, "bare_launch_wait_us": 10.0,    # 4.00x <= 3: MISSED
          "fused_add_gbs": 1500.0, "unfused_add_gbs": 600.0,      # 1.25x >= 1: met
          "matmul_1024_gflops": 9000.0, "matmul_2048_gflops": 10000.0,  # 0.25x >= 0.4: MISSED
          "mlp_784_256_10_gpu_steps_s": 800.0}                    # 0.80x >= 1: MISSED
TORCH = {"device": "NVIDIA H100", "torch_version": "2.11", "tf32": False,
         "add_size": 4194304, "add_chain": 20, "add_gbs": 1200.0,
         "matmul_1024_gflops": 30000.0, "matmul_2048_gflops": 40000.0,
         "per_op_us": 12.0, "one_op_step_us": 20.0,
         "mlp_784_256_10_steps_s": 1000.0, "mlp_784_512_512_10_steps_s": 900.0}


def goal_lines(output):
    """``{goal name: line}`` of the goal section of compare_gpu_goals.py's output."""
    lines = output.splitlines()
    section = lines[lines.index("goals:") + 1:lines.index("for information:")]
    return {goal: next(line for line in section if goal in line)
            for goal, *_ in compare_gpu_goals.GOALS}


def run_compare(tmp_path, *minitf_dicts, torch=TORCH):
    paths = []
    for i, numbers in enumerate(minitf_dicts):
        paths += ["--minitf", str(tmp_path / ("minitf%d.json" % i))]
        (tmp_path / ("minitf%d.json" % i)).write_text(json.dumps(numbers))
    (tmp_path / "torch.json").write_text(json.dumps(torch))
    done = subprocess.run([sys.executable, str(BENCHMARKS / "compare_gpu_goals.py"), *paths,
                           "--torch", str(tmp_path / "torch.json")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_compare_prints_each_goal_ratio_and_verdict(tmp_path):
    output = run_compare(tmp_path, MINITF)
    lines = goal_lines(output)
    expected = {"per-op host cost": ("1.20x", "<= 1.30x", "met"),
                "one-op step with fetch": ("4.00x", "<= 3.00x", "MISSED"),
                "fused add chain": ("1.25x", ">= 1.00x", "met"),
                "matmul 2048^2": ("0.25x", ">= 0.40x", "MISSED"),
                "MLP 784-256-10": ("0.80x", ">= 1.00x", "MISSED")}
    for start, (ratio, target, verdict) in expected.items():
        line = next(line for goal, line in lines.items() if goal.startswith(start))
        assert "= " + ratio in line and "target " + target in line
        assert line.split()[-1] == verdict
    assert "warning" not in output
    info = output[output.index("for information:"):]
    assert "0.50x" in info          # unfused add chain 600 / 1200
    assert "0.30x" in info          # matmul 1024^2 9000 / 30000


def test_compare_takes_a_second_minitf_file_and_marks_missing_numbers(tmp_path):
    compiled = {"per_op_us": 99.0, "mlp_784_512_512_10_gpu_steps_s": 450.0}
    output = run_compare(tmp_path, {k: v for k, v in MINITF.items() if k != "matmul_2048_gflops"},
                         compiled)
    lines = goal_lines(output)
    assert "= 1.20x" in lines["per-op host cost vs bare pyopencl enqueue"]   # first file wins
    assert lines["matmul 2048^2 fp32 GFLOP/s vs torch (TF32 off)"].split()[-1] == "n/a"
    big_mlp = next(line for line in output.splitlines() if "784-512-512-10" in line)
    assert big_mlp.endswith("= 0.50x")


def test_compare_warns_when_the_runs_do_not_match(tmp_path):
    output = run_compare(tmp_path, MINITF, torch=dict(TORCH, add_size=65536, tf32=True))
    assert "warning: add chains differ: minitf 20 x 4194304 floats, torch 20 x 65536" in output
    assert "warning: torch's matmul used TF32" in output


def test_compare_reports_a_run_that_wrote_no_file(tmp_path, capsys):
    (tmp_path / "torch.json").write_text(json.dumps(TORCH))
    assert compare_gpu_goals.main(["--minitf", str(tmp_path / "absent.json"),
                                   "--torch", str(tmp_path / "torch.json")]) == 0
    output = capsys.readouterr().out
    assert "absent.json is missing" in output
    assert all(line.split()[-1] == "n/a" for line in goal_lines(output).values())


# -- bench_opencl.py --json, read by compare_gpu_goals.py --------------------------------------

class FakeFactory:
    def create(self, index):
        return object()

    def describe(self, index):
        return "GPU:0 fake"


class FakeRegistry:
    def device_factory(self, kind):
        return FakeFactory()


@pytest.fixture
def fake_bench_opencl(monkeypatch):
    """bench_opencl.py with its measurements replaced by fixed numbers (seconds or rates)."""
    bench = load("bench_opencl")
    monkeypatch.setattr("minitf.registry.get_registry", FakeRegistry)
    monkeypatch.setattr(bench, "bench_bandwidth", lambda *args: (100.0, 90.0, 120.0))
    monkeypatch.setattr(bench, "bench_matmul", lambda tf, n, chain, repeat: (10.0 * n, 1.0 * n))
    monkeypatch.setattr(bench, "bench_op_cost", lambda *args: (6e-6, 5e-6, 40e-6, 10e-6))
    def fake_mlp(tf, names, steps, repeat, hidden=(256,), jit=False):
        rates = {"/gpu:0": len(hidden) * (500.0 if jit else 400.0), "/cpu:0": 300.0}
        return [rates[name] for name in names]
    monkeypatch.setattr(bench, "bench_mlp", fake_mlp)
    monkeypatch.setattr(bench, "bench_fusion", lambda *args: (0.01, 0.05))
    return bench


def test_bench_opencl_writes_what_it_prints(fake_bench_opencl, tmp_path, capsys):
    path = tmp_path / "minitf.json"
    assert fake_bench_opencl.main(["--size", "1000", "--chain", "10", "--json", str(path)]) == 0
    printed = capsys.readouterr().out
    results = json.loads(path.read_text())
    assert results == pytest.approx({
        "device": "GPU:0 fake", "add_size": 1000, "add_chain": 10, "add_gbs": 100.0,
        "add_bare_gbs": 90.0, "add_bare4_gbs": 120.0,
        "matmul_1024_gflops": 10240.0, "matmul_1024_numpy_gflops": 1024.0,
        "matmul_2048_gflops": 20480.0, "matmul_2048_numpy_gflops": 2048.0,
        "op_chain_ops": 200, "per_op_us": 6.0, "bare_enqueue_us": 5.0, "one_op_step_us": 40.0,
        "bare_launch_wait_us": 10.0,
        "mlp_784_256_10_gpu_steps_s": 400.0, "mlp_784_256_10_cpu_steps_s": 300.0,
        "mlp_784_256_10_gpu_jit_steps_s": 500.0,
        # 3 x 4 bytes x 1000 floats x 10 adds = 120 kB per step
        "fused_add_ms": 10.0, "unfused_add_ms": 50.0, "fused_add_gbs": 0.012,
        "unfused_add_gbs": 0.0024})
    assert "(c) per-op cost in a step of 200 ops: 6.0 us  (bare pyopencl enqueue 5.0 us)" in printed
    assert "fused 10.00 ms, unfused 50.00 ms per step -> 5.0x" in printed

    torch_path = tmp_path / "torch.json"
    torch_path.write_text(json.dumps(dict(TORCH, add_size=1000, add_chain=10, add_gbs=0.024)))
    assert compare_gpu_goals.main(["--minitf", str(path), "--torch", str(torch_path)]) == 0
    output = capsys.readouterr().out
    lines = goal_lines(output)
    assert "= 1.20x" in lines["per-op host cost vs bare pyopencl enqueue"]
    assert "= 4.00x" in lines["one-op step with fetch vs bare launch-and-wait"]
    assert "= 0.50x" in lines["fused add chain GB/s vs torch eager"]
    assert "= 0.51x" in lines["matmul 2048^2 fp32 GFLOP/s vs torch (TF32 off)"]
    assert "= 0.40x" in lines["MLP 784-256-10 steps/s vs torch eager"]
    fused_mlp = next(line for line in output.splitlines()
                     if "MLP 784-256-10 fused (jit ON_1) steps/s vs torch eager" in line)
    assert "= 0.50x" in fused_mlp


def test_bench_opencl_only_compiled_writes_the_big_mlp(fake_bench_opencl, tmp_path, capsys):
    path = tmp_path / "compiled.json"
    assert fake_bench_opencl.main(["--only-compiled", "--json", str(path)]) == 0
    results = json.loads(path.read_text())
    assert results["mlp_784_512_512_10_gpu_steps_s"] == 800.0
    assert results["per_op_generated_us"] == pytest.approx(6.0)
    assert "MLP 784-512-512-10, batch 128, SGD: /gpu:0 800.0 steps/s" in capsys.readouterr().out


# -- the shell scripts -----------------------------------------------------------------------

@pytest.mark.parametrize("script", ["gpu_device_check.sh", "prepare_device_wheels.sh"])
def test_shell_script_syntax(script):
    done = subprocess.run(["bash", "-n", str(BENCHMARKS / script)],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


def test_device_check_needs_out(tmp_path):
    """Without $OUT the results would be lost: the script refuses before doing anything."""
    env = {"PATH": "/usr/bin:/bin"}
    done = subprocess.run(["bash", str(BENCHMARKS / "gpu_device_check.sh"), "--local"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode != 0
    assert "set OUT" in done.stderr
