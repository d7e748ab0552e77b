"""Without a usable OpenCL device the GPU plugin registers nothing and says why.

Runs everywhere (with or without pyopencl and a driver): the environment
variable ``MINITF_OPENCL_DEVICES=none`` chooses no device.
"""

import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_plugins_command_says_why_there_is_no_gpu():
    env = dict(os.environ, MINITF_OPENCL_DEVICES="none")
    run = subprocess.run([sys.executable, "-m", "minitf", "plugins"], capture_output=True,
                         text=True, cwd=str(ROOT), env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    section = run.stdout.split("Device types registered as unavailable", 1)[1]
    row = [line for line in section.splitlines() if line.split()[:2] == ["GPU", "opencl_gpu"]]
    assert row, run.stdout
    assert "pyopencl" in row[0] or "MINITF_OPENCL_DEVICES" in row[0] or "OpenCL" in row[0]
    devices = run.stdout.split("Devices", 1)[1].split("\n\n", 1)[0]
    assert "GPU:0" not in devices
