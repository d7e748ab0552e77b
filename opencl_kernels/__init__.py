"""The OpenCL C sources of minitf's GPU backend (data files, not Python).

This folder installs as the package ``minitf_opencl_gpu.opencl_kernels`` so
the ``.cl`` files ship inside the wheel; ``minitf_opencl_gpu.programs`` reads
them with :mod:`importlib.resources`.  Each file is written once for an element
type ``T`` (``-D T=float``), see ``programs.py``.
"""
