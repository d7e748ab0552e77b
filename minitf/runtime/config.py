"""Session configuration: ``ConfigProto``, ``GPUOptions``, ``GraphOptions``, ``RunOptions``,
``RunMetadata``.

TF1 passes these as protocol buffers; minitf mirrors their fields as plain
Python objects with the same names and defaults, so ``tf.ConfigProto(
device_count={'CPU': 2}, log_device_placement=True)`` reads as it does in TF.
Where one crosses to another process (a client's session options to a
cluster's master, a step's timings back), ``to_proto``/``from_proto`` turn it
into TF's own message (``config_pb2``, ``step_stats_pb2``) and back.
"""

import os
import re
import time

from minitf.framework import protos


class GPUOptions:
    """``tf.GPUOptions``: memory behaviour of GPU devices."""

    def __init__(self, allow_growth=False, per_process_gpu_memory_fraction=0.0,
                 visible_device_list=""):
        self.allow_growth = allow_growth
        self.per_process_gpu_memory_fraction = per_process_gpu_memory_fraction
        self.visible_device_list = visible_device_list


class RewriterConfig:
    """``rewriter_config_pb2.RewriterConfig``: which rewrite passes run on a step.

    Each pass of :mod:`minitf.runtime.passes` has a switch with TF's field
    name, a *Toggle*: ``DEFAULT`` and ``ON`` run it, ``OFF`` skips it
    (``AGGRESSIVE`` runs it as ``ON`` does)::

        off = RewriterConfig(arithmetic_optimization=RewriterConfig.OFF)
        tf.Session(config=tf.ConfigProto(graph_options=tf.GraphOptions(rewrite_options=off)))

    ``disable_model_pruning`` skips the removal of ``Identity`` ops and
    ``disable_meta_optimizer`` skips every pass.  TF's other fields
    (``layout_optimizer``, ``memory_optimization`` ...) name passes minitf
    does not have; they are accepted and kept in ``unused``.
    """

    DEFAULT = 0
    ON = 1
    OFF = 2
    AGGRESSIVE = 3

    def __init__(self, constant_folding=DEFAULT, dependency_optimization=DEFAULT,
                 arithmetic_optimization=DEFAULT, common_subgraph_elimination=DEFAULT,
                 loop_optimization=DEFAULT, disable_model_pruning=False,
                 disable_meta_optimizer=False, **unused):
        self.constant_folding = constant_folding
        self.dependency_optimization = dependency_optimization
        self.arithmetic_optimization = arithmetic_optimization
        self.common_subgraph_elimination = common_subgraph_elimination
        self.loop_optimization = loop_optimization
        self.disable_model_pruning = disable_model_pruning
        self.disable_meta_optimizer = disable_meta_optimizer
        self.unused = unused

    def enabled(self, switch):
        """Whether the pass with this switch runs: a Toggle field's name, or
        ``"model_pruning"`` (TF's ``disable_model_pruning``, inverted)."""
        if self.disable_meta_optimizer:
            return False
        if switch == "model_pruning":
            return not self.disable_model_pruning
        return getattr(self, switch) != RewriterConfig.OFF

    _TOGGLES = ("constant_folding", "dependency_optimization", "arithmetic_optimization",
                "common_subgraph_elimination", "loop_optimization")

    def to_dict(self):
        """The fields as keyword arguments of TF's message."""
        fields = {name: getattr(self, name) for name in self._TOGGLES}
        fields.update(disable_model_pruning=self.disable_model_pruning,
                      disable_meta_optimizer=self.disable_meta_optimizer)
        return fields

    @classmethod
    def from_proto(cls, proto):
        """The switches a ``rewriter_config_pb2.RewriterConfig`` holds."""
        return cls(**{name: getattr(proto, name) for name in cls._TOGGLES},
                   disable_model_pruning=proto.disable_model_pruning,
                   disable_meta_optimizer=proto.disable_meta_optimizer)


class OptimizerOptions:
    """``tf.OptimizerOptions``: graph-level optimizations; minitf reads ``global_jit_level``.

    ``global_jit_level=OptimizerOptions.ON_1`` (or ``ON_2``) turns on the
    XLA-style fusion of elementwise ops into generated kernels on devices that
    can fuse (:mod:`minitf.runtime.passes.xla_fusion`); ``OFF`` and
    ``DEFAULT`` leave it to ``tf.xla.experimental.jit_scope``.  TF's other
    fields (``do_constant_folding``, ``opt_level`` ...) are accepted and kept
    in ``unused``: :class:`RewriterConfig` switches minitf's rewrites.
    """

    # GlobalJitLevel, as TF numbers it.
    DEFAULT = 0
    OFF = -1
    ON_1 = 1
    ON_2 = 2

    def __init__(self, global_jit_level=DEFAULT, **unused):
        self.global_jit_level = global_jit_level
        self.unused = unused


class GraphOptions:
    """``tf.GraphOptions``: how a step's graph is prepared.

    Args:
        rewrite_options: a :class:`RewriterConfig` (default: every pass on).
        optimizer_options: an :class:`OptimizerOptions` (its ``global_jit_level``
            turns on elementwise fusion).
        global_jit_level: a shorthand for ``optimizer_options=OptimizerOptions(
            global_jit_level=...)`` (minitf's; TF's message has no such field).
        **unused: TF's other fields (``infer_shapes`` ...), kept but without effect.
    """

    def __init__(self, rewrite_options=None, optimizer_options=None, global_jit_level=None,
                 **unused):
        self.rewrite_options = rewrite_options or RewriterConfig()
        self.optimizer_options = optimizer_options or OptimizerOptions()
        if global_jit_level is not None:
            self.optimizer_options = OptimizerOptions(global_jit_level,
                                                      **self.optimizer_options.unused)
        self.unused = unused

    @property
    def global_jit(self):
        """Whether every fusable op may be fused (``ON_1``/``ON_2``), not only
        those created inside ``tf.xla.experimental.jit_scope()``.

        At ``DEFAULT`` the environment decides, as in TF:
        ``TF_XLA_FLAGS=--tf_xla_auto_jit=1`` (or ``2``) turns fusion on for
        every session that does not set a level itself.
        """
        level = self.optimizer_options.global_jit_level
        if level == OptimizerOptions.DEFAULT:
            level = _auto_jit_from_environment()
        return level in (OptimizerOptions.ON_1, OptimizerOptions.ON_2)


def _auto_jit_from_environment():
    """The level ``--tf_xla_auto_jit`` sets in ``TF_XLA_FLAGS`` (``DEFAULT`` if none);
    TF's ``single-gpu(N)`` form counts as ``N``, and ``fusible`` (only the ops
    that fuse — all minitf fuses) as ``ON_1``."""
    match = re.search(r"--tf_xla_auto_jit=(?:single-gpu\()?(-?\d|fusible)",
                      os.environ.get("TF_XLA_FLAGS", ""))
    if match is None:
        return OptimizerOptions.DEFAULT
    return OptimizerOptions.ON_1 if match.group(1) == "fusible" else int(match.group(1))


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
        device_count: the number of devices per type, e.g. ``{"CPU": 4}``;
            exact for every type (TF: a maximum for GPUs), 0 removes a type,
            and a type left out gets what its plugin offers
            (:mod:`~minitf.runtime.device_set`).
        log_device_placement: print where each op is placed.
        allow_soft_placement: move ops whose requested device cannot run them.
        inter_op_parallelism_threads: threads running independent ops (0: default).
        intra_op_parallelism_threads: threads inside one kernel (advisory).
        gpu_options: a :class:`GPUOptions`.
        operation_timeout_in_ms: default deadline of every run (0: none).
        device_processes: serve the extra devices of a host-memory type
            (``/cpu:1`` ...) from their own OS processes (minitf's
            multi-device simulation); False keeps them in-process.
        experimental: a :class:`ConfigProto.Experimental`.
        device_filters: in a cluster, the device name prefixes a session may
            use (e.g. ``["/job:ps", "/job:worker/task:1"]``; empty: all).
        graph_options: a :class:`GraphOptions` (the rewrite passes' switches).
    """

    Experimental = _Experimental

    def __init__(self, device_count=None, log_device_placement=False, allow_soft_placement=False,
                 inter_op_parallelism_threads=0, intra_op_parallelism_threads=0,
                 gpu_options=None, operation_timeout_in_ms=0, use_per_session_threads=False,
                 device_processes=True, experimental=None, device_filters=(), graph_options=None,
                 **unused):
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
        self.graph_options = graph_options or GraphOptions()
        self.unused = unused

    def to_proto(self):
        """TF's ``config_pb2.ConfigProto`` of these options (``device_processes``,
        minitf's own, has no field there and stays behind)."""
        gpu = self.gpu_options
        return protos.load("config_pb2").ConfigProto(
            device_count=self.device_count,
            log_device_placement=self.log_device_placement,
            allow_soft_placement=self.allow_soft_placement,
            inter_op_parallelism_threads=self.inter_op_parallelism_threads,
            intra_op_parallelism_threads=self.intra_op_parallelism_threads,
            gpu_options=dict(allow_growth=gpu.allow_growth,
                             per_process_gpu_memory_fraction=gpu.per_process_gpu_memory_fraction,
                             visible_device_list=gpu.visible_device_list),
            operation_timeout_in_ms=self.operation_timeout_in_ms,
            use_per_session_threads=self.use_per_session_threads,
            device_filters=self.device_filters,
            experimental=dict(executor_type=self.experimental.executor_type),
            graph_options=dict(
                rewrite_options=self.graph_options.rewrite_options.to_dict(),
                optimizer_options=dict(global_jit_level=(
                    self.graph_options.optimizer_options.global_jit_level))))

    @classmethod
    def from_proto(cls, proto):
        """The options a ``config_pb2.ConfigProto`` holds."""
        gpu = proto.gpu_options
        return cls(device_count=dict(proto.device_count),
                   log_device_placement=proto.log_device_placement,
                   allow_soft_placement=proto.allow_soft_placement,
                   inter_op_parallelism_threads=proto.inter_op_parallelism_threads,
                   intra_op_parallelism_threads=proto.intra_op_parallelism_threads,
                   gpu_options=GPUOptions(gpu.allow_growth, gpu.per_process_gpu_memory_fraction,
                                          gpu.visible_device_list),
                   operation_timeout_in_ms=proto.operation_timeout_in_ms,
                   use_per_session_threads=proto.use_per_session_threads,
                   device_filters=list(proto.device_filters),
                   experimental=_Experimental(proto.experimental.executor_type),
                   graph_options=GraphOptions(
                       RewriterConfig.from_proto(proto.graph_options.rewrite_options),
                       OptimizerOptions(
                           proto.graph_options.optimizer_options.global_jit_level)))


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

    def to_proto(self):
        """TF's ``config_pb2.RunOptions`` of these options."""
        return protos.load("config_pb2").RunOptions(
            trace_level=self.trace_level, timeout_in_ms=self.timeout_in_ms,
            output_partition_graphs=self.output_partition_graphs)

    @classmethod
    def from_proto(cls, proto):
        """The options a ``config_pb2.RunOptions`` holds."""
        return cls(proto.trace_level, proto.timeout_in_ms, proto.output_partition_graphs)


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

    def to_proto(self):
        """TF's ``step_stats_pb2.NodeExecStats`` (the op type lives in ``timeline_label``)."""
        return protos.load("step_stats_pb2").NodeExecStats(
            node_name=self.node_name, timeline_label=self.timeline_label,
            all_start_micros=self.all_start_micros, op_start_rel_micros=self.op_start_rel_micros,
            op_end_rel_micros=self.op_end_rel_micros,
            all_end_rel_micros=self.all_end_rel_micros, thread_id=self.thread_id)


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

    def to_proto(self):
        """TF's ``step_stats_pb2.StepStats`` of these timings."""
        step_stats_pb2 = protos.load("step_stats_pb2")
        return step_stats_pb2.StepStats(dev_stats=[
            step_stats_pb2.DeviceStepStats(device=d.device,
                                           node_stats=[n.to_proto() for n in d.node_stats])
            for d in self.dev_stats])

    @staticmethod
    def trace_from_proto(proto):
        """The ``{device: [(op, start, end), ...]}`` trace a ``StepStats`` message
        records, on this process's ``perf_counter`` clock (the inverse of
        :meth:`from_trace` and :meth:`to_proto`, for a step that ran elsewhere);
        each ``op`` has the ``name`` and ``type`` of a traced op."""
        trace = {}
        for device in proto.dev_stats:
            for node in device.node_stats:
                start = node.all_start_micros / 1e6 - _WALL_MINUS_PERF
                op = _TracedOp(node.node_name, node.timeline_label.partition(" = ")[2]
                               .partition("(")[0])
                trace.setdefault(device.device, []).append(
                    (op, start, start + node.op_end_rel_micros / 1e6))
        return trace


class _TracedOp:
    """An op of a step that ran in another process: its name and type."""

    def __init__(self, name, op_type):
        self.name = name
        self.type = op_type


class RunMetadata:
    """``tf.RunMetadata``: what a traced ``Session.run`` reports.

    Besides TF's ``step_stats`` (each op's timings), a ``FULL_TRACE`` run of a
    local session fills ``rewrites``: the rewrite passes that planned the step,
    each an :class:`~minitf.runtime.passes.AppliedPass` with the step's op
    count before and after it (``"arithmetic_optimization: 3 -> 1 ops"``).
    TF logs Grappler's work instead; the list is minitf's addition.
    """

    def __init__(self):
        self.step_stats = StepStats()
        self.partition_graphs = []
        self.rewrites = []
