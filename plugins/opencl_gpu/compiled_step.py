"""The compiled GPU step: a partition's kernel launches prepared once, replayed every run.

The generated step (:mod:`minitf.runtime.executors.generated`) calls one
Python kernel per op; each computes shapes, chooses a kernel, allocates its
output from the pool, packs arguments and enqueues — about 15 µs of host
time per op on PoCL, for kernels that often take less.  Yet with static
shapes every one of those decisions comes out the same in every run.  So,
as CUDA graphs and XLA do, the OpenCL device compiles a partition into a
list of ready actions:

1. **Record.**  The first run with given feed shapes is an ordinary run of
   the generated step with a :class:`Recorder` listening: every launch (its
   kernel, range and arguments), every buffer allocated, which op did it.
2. **Plan the buffers.**  Every buffer allocated in the run holds a *value*
   used from its first to its last action (a fetched value to the end).  A
   greedy interval assignment (:func:`assign_buffers`) gives each value a
   buffer of the step, reusing one whose previous value's last reader comes
   before — the queue runs actions in order, so that is safe.
   ``Replay.stats`` says how many buffers serve how many values.
3. **Bind.**  Each launch gets a kernel object of its own (``clCreateKernel``) with every
   argument set once (``Kernel.set_arg``).  Only what changes between runs is
   bound per run: the buffers of variables, which an update replaces
   (``ApplyGradientDescent`` writes a new buffer, as on the CPU).
4. **Replay.**  Later runs with the same feed shapes copy the feeds into
   their buffers, enqueue the launches (``enqueue_nd_range_kernel``, the bare
   cost) and return the fetched buffers: no Python kernel, no allocation but
   the variables' new values, no wait — the session's one download of a
   fetch is the step's one wait.

Some ops cannot be replayed blindly, and stay **live**: they run their
Python kernel in every replay, at their place in the order, and their
outputs are copied into the planned buffers.  They are the stateful ops
other than variables (a random op draws new numbers every run) and the ops
that read device data on the host or upload host data while running (a
label check that narrows int64 to int32, a ``_Recv``).  A live op whose
output shape differs from the recording abandons the replay before anything
is assigned, and the generated step runs instead.  The generated step also
runs for a run with a deadline (it checks it between ops), for a run while
another is replaying, and when a live op returns host memory.
``MINITF_OPENCL_COMPILED_STEP=0`` turns compiling off.
"""

import dataclasses
import os
import threading

import numpy as np

from minitf.plugin import Ref, errors, located_error

from minitf_opencl_gpu import programs
from minitf_opencl_gpu.memory import DeviceArray

ENV_VAR = "MINITF_OPENCL_COMPILED_STEP"

#: Stateful ops a replay repeats as launches: variables and the updates that
#: replace their buffers.  Other stateful ops stay live.
VARIABLE_OPS = frozenset({"VariableV2", "Assign", "AssignAdd", "AssignSub",
                          "ApplyGradientDescent", "ApplyMomentum", "ApplyAdam",
                          "ApplyAdagrad", "ApplyRMSProp"})

#: Feed-shape signatures recorded per step (a few batch sizes); others run uncompiled.
MAX_SIGNATURES = 4


def compile_partition(device, plan, compile_step):
    """A :class:`CompiledStep` for ``plan`` on ``device`` (None when turned off)."""
    if os.environ.get(ENV_VAR, "1").strip() == "0" or not plan.nodes:
        return None
    return CompiledStep(device, plan, compile_step)


class CompiledStep:
    """A step (same protocol as the generated one) that replays recorded launches.

    Attributes:
        fallback: the generated step, run when no replay applies.
        replays: feed signature -> its :class:`Replay`, or why it has none (a string).
    """

    def __init__(self, device, plan, compile_step):
        self.device = device
        self.plan = plan
        self.fallback = compile_step(plan)
        self.source = self.fallback.source
        self._compile_step = compile_step
        self._recording_step = None     # made at the first recording (it binds constants)
        self.replays = {}
        self._lock = threading.Lock()

    def __call__(self, feed_dict, *, deadline=None, trace=None):
        # One run at a time uses the step's buffers; a concurrent run, or
        # one with a deadline, takes the generated step.
        if deadline is not None or not self._lock.acquire(blocking=False):
            return self.fallback(feed_dict, deadline=deadline, trace=trace)
        try:
            values = [np.asarray(v) for v in feed_dict.values()]
            key = tuple((v.shape, v.dtype) for v in values)
            replay = self.replays.get(key)
            if isinstance(replay, Replay):
                results = replay(values)
                if results is not None:
                    return results
            elif replay is None and len(self.replays) < MAX_SIGNATURES:
                return self._record(key, feed_dict)
            return self.fallback(feed_dict, trace=trace)
        finally:
            self._lock.release()

    def _record(self, key, feed_dict):
        if self._recording_step is None:
            self._recording_step = self._compile_step(_recording_plan(self.plan))
        recorder = Recorder(self.plan, self.device)
        programs.recording.recorder = recorder
        try:
            results = self._recording_step(feed_dict)
        finally:
            programs.recording.recorder = None
        self.replays[key] = recorder.replay(self.device, results, self._recording_step)
        return results


def _recording_plan(plan):
    """``plan`` with kernels and feed converters that tell the recorder what runs."""
    nodes = [dataclasses.replace(node, kernel=_announcing(node.kernel, i))
             for i, node in enumerate(plan.nodes)]
    converters = [_announcing_feed(convert, i) for i, convert in enumerate(plan.feed_converters)]
    return dataclasses.replace(plan, nodes=tuple(nodes), feed_converters=tuple(converters))


def _announcing(kernel, index):
    def run(ctx, *inputs, **attrs):
        recorder = programs.recorder()
        if recorder is None:
            return kernel(ctx, *inputs, **attrs)
        recorder.begin(index, inputs)
        result = kernel(ctx, *inputs, **attrs)
        recorder.end(result)
        return result
    return run


def _announcing_feed(convert, index):
    def run(value):
        recorder = programs.recorder()
        if recorder is None:
            return convert(value)
        recorder.feeding = True
        try:
            out = convert(value)
        finally:
            recorder.feeding = False
        recorder.fed(index, out)
        return out
    return run


@dataclasses.dataclass
class Value:
    """One buffer's content in the recorded run: a *value*, not a buffer (a buffer
    freed and allocated again holds two values).

    ``kind``: ``"step"`` (allocated during the run), ``"feed"``, or
    ``"outside"`` (a buffer the run found: a constant, a variable's value).
    """

    kind: str
    nbytes: int
    mem: object
    start: int = None   # the first action using it
    end: int = -1       # the last action using it


@dataclasses.dataclass
class NodeRecord:
    """One op of the recorded run: the launches it made and, for a live op, its values."""

    index: int
    first_launch: int
    last_launch: int = None
    live: bool = False
    inputs: tuple = ()      # per input: ("device", value id, shape, dtype) or ("as is", x)
    outputs: tuple = ()     # per output: (value id, shape, dtype) or None (empty)


class Recorder:
    """What one run of the generated step did, told by the device and
    :mod:`~minitf_opencl_gpu.programs` while ``programs.recording.recorder`` is set."""

    def __init__(self, plan, device):
        self.plan = plan
        self.device = device
        self._variable_buffers = set()   # buffer addresses of the variables seen
        self.feeding = False
        self.launches = []      # (kernel, global size, local size, arguments)
        self.nodes = []         # NodeRecord per op run, in order
        self.values = []        # Value per value id
        self.current = {}       # buffer address -> value id
        self.feeds = {}         # feed index -> (value id, dtype)
        self.variables = {}     # Ref -> its value (DeviceArray) when first seen
        self.problem = None

    def _value_of(self, mem):
        address = mem.int_ptr
        vid = self.current.get(address)
        if vid is None:
            vid = self.current[address] = len(self.values)
            self.values.append(Value("outside", mem.size, mem))
        return vid

    def _describe(self, x):
        if isinstance(x, DeviceArray) and x.data is not None:
            return ("device", self._value_of(x.data), x.shape, x.dtype)
        return ("as is", x)

    # ---- told by the step, the device and the launcher ------------------------------------
    def begin(self, index, inputs):
        op = self.plan.nodes[index].op
        live = op.op_def.stateful and op.type not in VARIABLE_OPS
        for x in inputs:
            if isinstance(x, Ref):
                self.saw_variable(x)
        self.nodes.append(NodeRecord(index, len(self.launches), live=live,
                                     inputs=tuple(self._describe(x) for x in inputs)))

    def end(self, result):
        node = self.nodes[-1]
        node.last_launch = len(self.launches)
        if isinstance(result, Ref):
            self.saw_variable(result)
        outputs = self.plan.nodes[node.index].num_outputs
        results = () if outputs == 0 else (result,) if outputs == 1 else tuple(result)
        node.outputs = tuple(self._describe(x) for x in results)
        if node.live and any(kind != "device" and not _is_empty(x) and x is not None
                             for kind, x, *_ in node.outputs):
            self.refuse("returned host memory from an op that must run live")

    def launched(self, kernel, global_size, local_size, args):
        entries = tuple(("value", arg) if isinstance(arg, np.generic) or arg is None
                        else ("buffer", self._value_of(arg)) for arg in args)
        self.launches.append((kernel, global_size, local_size, entries))

    def allocated(self, array):
        self.current[array.data.int_ptr] = len(self.values)
        self.values.append(Value("feed" if self.feeding else "step",
                                 array.allocation.size, array.data))

    def uploaded(self):
        self.make_live()

    def downloaded(self):
        self.make_live()

    def make_live(self):
        """The running op touched host data: it must run live in every replay."""
        if self.feeding:
            return
        if not self.nodes or self.nodes[-1].last_launch is not None:
            self.refuse("moved data between host and device outside any op")
        else:
            self.nodes[-1].live = True

    def refuse(self, what):
        if self.problem is None:
            node = self.nodes[-1] if self.nodes else None
            op = None if node is None else self.plan.nodes[node.index].op
            self.problem = what if op is None else "%s '%s' %s" % (op.type, op.name, what)

    def fed(self, index, array):
        if isinstance(array, DeviceArray) and array.data is not None:
            self.feeds[index] = (self._value_of(array.data), array.dtype)
        else:
            self.refuse("a feed became no device buffer")

    def saw_variable(self, ref):
        """Notes a variable and its value before the step.

        Two variables may hold one buffer (``Assign`` stores the assigned
        array itself: two biases initialised from one ``tf.zeros``).  A replay
        must know which variable each launch reads, so the second one gets a
        private copy first — the same values, in a buffer of its own.
        """
        if ref in self.variables:
            return
        value = ref.value
        if value is not None and value.data is not None:
            if value.data.int_ptr in self._variable_buffers:
                value = ref.value = self._private_copy(value)
            self._variable_buffers.add(value.data.int_ptr)
            self._value_of(value.data)
        self.variables[ref] = value

    def _private_copy(self, value):
        import pyopencl as cl
        with programs.not_recording():
            copy = self.device.allocate(value.shape, value.dtype)
        cl.enqueue_copy(self.device.queue, copy.data, value.data, byte_count=value.nbytes)
        return copy

    # ---- after the run ------------------------------------------------------------------------
    def replay(self, device, results, keep_alive):
        """The :class:`Replay` of this recording, or a string saying why there is none."""
        if self.problem is not None:
            return self.problem
        reads, writes = {}, {}
        for ref, before in self.variables.items():
            if before is not None and before.data is not None:
                vid = self._value_of(before.data)
                if self.values[vid].kind == "outside":
                    reads[vid] = ref
            after = ref.value
            if after is before:
                continue
            vid = None if after is None or after.data is None else self.current.get(
                after.data.int_ptr)
            if vid is None or self.values[vid].kind != "step":
                return "a variable was given a value the step did not compute"
            if vid in writes:
                return "two variables were given one value"
            writes[vid] = (ref, after.shape, after.dtype)
        fetches = []
        for result in results:
            if isinstance(result, DeviceArray) and result.data is not None:
                fetches.append(("device", self._value_of(result.data), result.shape,
                                result.dtype))
            elif isinstance(result, (DeviceArray, np.ndarray, np.generic)):
                fetches.append(("as is", result))  # empty, or host data from static shapes
            else:
                return "a fetch is not a tensor value"
        actions = self._actions()
        live_outputs = {o[1] for a in actions if isinstance(a, NodeRecord)
                        for o in a.outputs if o[0] == "device"}
        if live_outputs & set(writes):
            return "a variable was given the output of an op that runs live"
        self._lifetimes(actions, fetches)
        return Replay(device, self, actions, reads, writes, fetches, keep_alive)

    def _actions(self):
        """Launch indices and live NodeRecords, in the order they ran."""
        actions, done = [], 0
        for node in self.nodes:
            if node.live:
                actions.extend(range(done, node.first_launch))
                actions.append(node)
                done = node.last_launch
        actions.extend(range(done, len(self.launches)))
        return actions

    def _lifetimes(self, actions, fetches):
        def use(vid, at):
            value = self.values[vid]
            value.start = at if value.start is None else min(value.start, at)
            value.end = max(value.end, at)
        for at, action in enumerate(actions):
            if isinstance(action, NodeRecord):
                for described in action.inputs + action.outputs:
                    if described[0] == "device":
                        use(described[1], at)
            else:
                for kind, item in self.launches[action][3]:
                    if kind == "buffer":
                        use(item, at)
        for vid, _ in self.feeds.values():
            use(vid, -1)
        for fetch in fetches:
            if fetch[0] == "device":
                use(fetch[1], len(actions))


def _is_empty(x):
    return isinstance(x, DeviceArray) and x.data is None


def assign_buffers(values):
    """``({value id: buffer index}, [buffer byte sizes])``: the liveness plan.

    ``values``: ``{value id: Value}``, the values that need a buffer of the
    step, with their first and last action.  They are taken in the order they
    begin; each reuses the smallest free buffer large enough — free once the
    last action using its previous value comes before the new value's first
    action — or gets a new one.
    """
    assignment, sizes, busy_until = {}, [], []
    for vid in sorted(values, key=lambda v: (values[v].start, v)):
        value = values[vid]
        free = [b for b, size in enumerate(sizes)
                if busy_until[b] < value.start and size >= value.nbytes]
        if free:
            chosen = min(free, key=lambda b: sizes[b])
        else:
            chosen = len(sizes)
            sizes.append(value.nbytes)
            busy_until.append(0)
        busy_until[chosen] = value.end
        assignment[vid] = chosen
    return assignment, sizes


class _Stale(Exception):
    """A live op's output no longer has the recorded shape: the replay does not apply."""


class Replay:
    """The prepared actions of one recorded run.

    Attributes:
        stats: ``{"launches", "live_ops", "values", "buffers", "rebound"}`` —
            the launches replayed, the ops run live, the values the step
            computes into buffers of its own, the buffers the liveness plan
            needs for them, the kernel arguments bound per run (variables).
    """

    def __init__(self, device, recorder, actions, reads, writes, fetches, keep_alive):
        self.device = device
        self.queue = device.queue
        self._keep_alive = keep_alive   # the recording step holds the constants' buffers
        values, plan = recorder.values, recorder.plan
        planned = {vid: v for vid, v in enumerate(values)
                   if v.kind != "outside" and vid not in writes and v.start is not None}
        assignment, sizes = assign_buffers(planned)
        self._buffers = [device.allocate((size,), np.uint8) for size in sizes]
        self._buffer_of = {vid: self._buffers[b] for vid, b in assignment.items()}
        self._values = values
        self._read_index = {vid: i for i, vid in enumerate(reads)}
        self._write_index = {vid: i for i, vid in enumerate(writes)}
        self._reads = [[reads[vid], [], None] for vid in reads]   # ref, slots, first reader
        self._writes = [[ref, shape, dtype, []] for ref, shape, dtype in writes.values()]
        op_of_launch = {}
        for node in recorder.nodes:
            for launch in range(node.first_launch, node.last_launch):
                op_of_launch[launch] = plan.nodes[node.index].op
        self.actions, self.ops = [], []
        for action in actions:
            if isinstance(action, NodeRecord):
                node = plan.nodes[action.index]
                self.actions.append(_LiveOp(self, node, action))
                self.ops.append(node.op)
            else:
                kernel, global_size, local_size, entries = recorder.launches[action]
                op = op_of_launch.get(action)
                self.actions.append((self._bind(kernel, entries, op), global_size, local_size))
                self.ops.append(op)
        self._feeds = [(index, self._buffer_of[vid].data, dtype)
                       for index, (vid, dtype) in sorted(recorder.feeds.items())]
        self._fetches = [_copier(fetch[1]) if fetch[0] == "as is" else
                         self.resolver(fetch[1], fetch[2], fetch[3]) for fetch in fetches]
        self._uploads = []
        self.stats = {"launches": sum(isinstance(a, tuple) for a in self.actions),
                      "live_ops": sum(isinstance(a, _LiveOp) for a in self.actions),
                      "values": len(planned), "buffers": len(sizes),
                      "rebound": sum(len(r[1]) for r in self._reads)
                      + sum(len(w[3]) for w in self._writes)}

    def _bind(self, kernel, entries, op):
        """A new kernel object of ``kernel``'s function with its arguments set, but the
        variables' (set per run).

        Made with ``clCreateKernel`` (OpenCL 1.2), not ``clCloneKernel``: cloning
        is OpenCL 2.1, which drivers reporting 1.2 (and some 3.0 ones) lack.
        """
        import pyopencl as cl
        bound = cl.Kernel(kernel.program, kernel.function_name)
        for position, (kind, item) in enumerate(entries):
            if kind == "value":
                bound.set_arg(position, item)
            elif item in self._read_index:
                read = self._reads[self._read_index[item]]
                read[1].append((bound, position))
                read[2] = read[2] or op
            elif item in self._write_index:
                self._writes[self._write_index[item]][3].append((bound, position))
            else:
                bound.set_arg(position, self.mem_of(item))
        return bound

    def mem_of(self, vid):
        """The buffer value ``vid`` lives in during a replay (not for variables)."""
        buffer = self._buffer_of.get(vid)
        return self._values[vid].mem if buffer is None else buffer.data

    def resolver(self, vid, shape, dtype):
        """``resolve(read_values, written) -> DeviceArray`` of value ``vid`` in a replay."""
        if vid in self._write_index:
            i = self._write_index[vid]
            return lambda read_values, written: written[i]
        if vid in self._read_index:
            i = self._read_index[vid]
            return lambda read_values, written: read_values[i]
        buffer = self._buffer_of.get(vid)
        array = DeviceArray(shape, dtype, _Borrowed(self._values[vid].mem) if buffer is None
                            else buffer.allocation)
        return lambda read_values, written: array

    def __call__(self, feeds):
        """Runs the step again; returns the fetched values, or None if it is stale.

        Nothing here waits for the device (but a live op that reads device
        data): the copies are enqueued, their events keep the host arrays alive.
        """
        import pyopencl as cl
        queue, enqueue = self.queue, cl.enqueue_nd_range_kernel
        self._uploads = [
            cl.enqueue_copy(queue, mem, np.ascontiguousarray(feeds[index], dtype),
                            is_blocking=False)
            for index, mem, dtype in self._feeds]
        read_values = []
        for ref, slots, reader in self._reads:
            try:
                value = ref.get()
            except errors.OpError as error:
                raise error if reader is None else located_error(error, reader) from None
            for kernel, position in slots:
                kernel.set_arg(position, value.data)
            read_values.append(value)
        written = []
        for ref, shape, dtype, slots in self._writes:
            out = self.device.allocate(shape, dtype)
            for kernel, position in slots:
                kernel.set_arg(position, out.data)
            written.append(out)
        at = 0
        try:
            for at, action in enumerate(self.actions):
                if action.__class__ is tuple:
                    enqueue(queue, action[0], action[1], action[2])
                else:
                    action(read_values, written)
        except _Stale:
            return None
        except Exception as error:
            if self.ops[at] is None:
                raise
            raise located_error(error, self.ops[at]) from error
        for (ref, _, _, _), value in zip(self._writes, written):
            ref.value = value
        return tuple(fetch(read_values, written) for fetch in self._fetches)


def _copier(value):
    """``fetch(read_values, written)`` of a host value: a copy each run, as the
    generated step returns a constant."""
    if isinstance(value, np.ndarray):
        return lambda read_values, written: value.copy()
    return lambda read_values, written: value


class _LiveOp:
    """An op that runs its Python kernel in every replay; its outputs are copied
    into their planned buffers."""

    def __init__(self, replay, node, record):
        self.node = node
        self.queue = replay.queue
        self.inputs = [replay.resolver(d[1], d[2], d[3]) if d[0] == "device" else d[1]
                       for d in record.inputs]
        self.outputs = [None if d[0] != "device" else (d[2], replay.mem_of(d[1]))
                        for d in record.outputs]

    def __call__(self, read_values, written):
        import pyopencl as cl
        node = self.node
        inputs = [x(read_values, written) if callable(x) else x for x in self.inputs]
        result = node.kernel(node.ctx, *inputs, **node.attrs)
        results = () if not self.outputs else (result,) if len(self.outputs) == 1 else result
        for out, target in zip(results, self.outputs):
            if target is None:
                continue
            shape, mem = target
            if not isinstance(out, DeviceArray) or tuple(out.shape) != tuple(shape):
                raise _Stale()
            if out.data.int_ptr != mem.int_ptr:
                cl.enqueue_copy(self.queue, mem, out.data, byte_count=out.nbytes)


class _Borrowed:
    """An allocation the replay does not own (a constant's buffer)."""

    __slots__ = ("mem", "size", "pool")

    def __init__(self, mem):
        self.mem, self.size, self.pool = mem, mem.size, None
