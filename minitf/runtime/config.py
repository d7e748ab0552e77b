"""Session configuration: ``ConfigProto``, ``GPUOptions``, ``RunOptions``, ``RunMetadata``.

TF1 passes these as protocol buffers; minitf mirrors their fields as plain
Python objects with the same names and defaults, so ``tf.ConfigProto(
device_count={'CPU': 2}, log_device_placement=True)`` reads as it does in TF.
"""

import time


class GPUOptions:
    """``tf.GPUOptions``: memory behaviour of GPU devices."""

    def __init__(self, allow_growth=False, per_process_gpu_memory_fraction=0.0,
                 visible_device_list=""):
        self.allow_growth = allow_growth
        self.per_process_gpu_memory_fraction = per_process_gpu_memory_fraction
        self.visible_device_list = visible_device_list


class _Experimental:
    """``ConfigProto.Experimental``: the options TF keeps apart as experimental.

    Args:
        executor_type: which executor runs a step on one device: ``""``
            (default: the generated straight-line step) or ``"INTERPRETER"``
            (the reference interpreter,
            :mod:`~minitf.runtime.executors.interpreter`).  TF names its
            executors the same way (``"SINGLE_THREADED_EXECUTOR"``).
    """

    def __init__(self, executor_type=""):
        self.executor_type = executor_type


class ConfigProto:
    """``tf.ConfigProto``: how a session uses the machine.

    Args:
        device_count: maximum number of devices per type, e.g. ``{"CPU": 4}``.
        log_device_placement: print where each op is placed.
        allow_soft_placement: move ops whose requested device cannot run them.
        inter_op_parallelism_threads: threads running independent ops (0: default).
        intra_op_parallelism_threads: threads inside one kernel (advisory).
        gpu_options: a :class:`GPUOptions`.
        operation_timeout_in_ms: default deadline of every run (0: none).
        device_processes: serve extra CPU devices (``/cpu:1`` ...) from their own
            OS processes (minitf's multi-device simulation); False keeps them
            in-process.
        experimental: a :class:`ConfigProto.Experimental`.
        device_filters: in a cluster, the device name prefixes a session may
            use (e.g. ``["/job:ps", "/job:worker/task:1"]``; empty: all).
    """

    Experimental = _Experimental

    def __init__(self, device_count=None, log_device_placement=False, allow_soft_placement=False,
                 inter_op_parallelism_threads=0, intra_op_parallelism_threads=0,
                 gpu_options=None, operation_timeout_in_ms=0, use_per_session_threads=False,
                 device_processes=True, experimental=None, device_filters=(), **unused):
        self.device_count = dict(device_count or {})
        self.log_device_placement = log_device_placement
        self.allow_soft_placement = allow_soft_placement
        self.inter_op_parallelism_threads = inter_op_parallelism_threads
        self.intra_op_parallelism_threads = intra_op_parallelism_threads
        self.gpu_options = gpu_options or GPUOptions()
        self.operation_timeout_in_ms = operation_timeout_in_ms
        self.use_per_session_threads = use_per_session_threads
        self.device_processes = device_processes
        self.experimental = experimental or _Experimental()
        self.device_filters = list(device_filters)
        self.unused = unused


class RunOptions:
    """``tf.RunOptions``: per-call options of ``Session.run``."""

    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3

    def __init__(self, trace_level=NO_TRACE, timeout_in_ms=0, output_partition_graphs=False):
        self.trace_level = trace_level
        self.timeout_in_ms = timeout_in_ms
        self.output_partition_graphs = output_partition_graphs


# perf_counter() is precise but has no epoch; step stats report wall-clock micros.
_WALL_MINUS_PERF = time.time() - time.perf_counter()


class NodeExecStats:
    """Timing of one op in one step (``tf.NodeExecStats``)."""

    def __init__(self, node_name, op_type, start, end, thread_id=0):
        self.node_name = node_name
        self.timeline_label = "%s = %s()" % (node_name, op_type)
        self.op_type = op_type
        self.all_start_micros = int((start + _WALL_MINUS_PERF) * 1e6)
        self.op_start_rel_micros = 0
        self.op_end_rel_micros = int((end - start) * 1e6)
        self.all_end_rel_micros = self.op_end_rel_micros
        self.thread_id = thread_id

    def __repr__(self):
        return "<NodeExecStats %s start=%d dur=%dus>" % (
            self.node_name, self.all_start_micros, self.all_end_rel_micros)


class DeviceStepStats:
    """The ops one device ran in a step (``tf.DeviceStepStats``)."""

    def __init__(self, device, node_stats=None):
        self.device = device
        self.node_stats = list(node_stats or [])


class StepStats:
    """Per-device timing of a step: ``dev_stats[i].node_stats`` (``tf.StepStats``)."""

    def __init__(self, dev_stats=None):
        self.dev_stats = list(dev_stats or [])

    @classmethod
    def from_trace(cls, trace):
        """Builds step stats from ``{device: [(op, start, end), ...]}``."""
        return cls([DeviceStepStats(device, [NodeExecStats(op.name, op.type, start, end)
                                             for op, start, end in records])
                    for device, records in trace.items()])


class RunMetadata:
    """``tf.RunMetadata``: what a traced ``Session.run`` reports."""

    def __init__(self):
        self.step_stats = StepStats()
        self.partition_graphs = []
