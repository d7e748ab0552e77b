"""The executor of graphs with dynamic control flow: frames, iterations, dead values.

A graph built by ``tf.cond`` or ``tf.while_loop`` contains the primitives of
:mod:`minitf.ops.control_flow_primitives`.  Straight-line code cannot run it —
how often an op runs is only known at run time — so this executor keeps TF's
per-step state (``ExecutorState`` in TF's ``executor.cc``):

* A **frame** is one activation of a loop body; a nested loop gets a child
  frame per iteration of its parent.  A frame has **iterations**; each
  iteration has its own pending counts and its own values.  A value's identity
  is therefore ``(node, output, frame, iteration)``.
* ``Enter`` moves a value into a child frame (iteration 0; a *constant*
  Enter makes it visible to every iteration), ``NextIteration`` moves it to
  the next iteration, ``Exit`` back to the parent frame.
* A **dead** value is what the untaken output of a ``Switch`` carries.  An
  ordinary op with a dead input does not run: its outputs are dead too.  A
  ``Merge`` runs on its first *live* input (and is dead only if all inputs
  are).  A dead ``NextIteration`` ends its loop; a dead ``Exit`` is passed
  to the parent frame only when the frame finishes without ever producing a
  live value there (a loop inside an untaken branch).
* ``parallel_iterations`` bounds how many iterations of a frame are in flight:
  a ``NextIteration`` that would start one more is deferred until the oldest
  iteration finishes.

The loop is TF's: a ready queue of *tagged nodes* ``(node, frame, iteration,
is_dead)``; ``process`` runs one, ``propagate_outputs`` routes its outputs to
the frame/iteration they belong to and decrements the consumers' pending
counts (``activate_nodes``), and ``node_done`` retires finished iterations and
frames.  This bookkeeping runs on one thread; with ``inter_op_parallelism_threads
> 1`` the kernels of ready ops run at the same time on the session's pool.  The
generated step (:mod:`~minitf.runtime.executors.generated`) stays in charge of
graphs without control flow.
"""

import collections
import concurrent.futures
import heapq
import itertools
import threading
import time
import zlib

from minitf.framework import errors
from minitf.runtime.executors.located_errors import located_error
from minitf.runtime.kernel_context import (check_step, set_frame_iter, set_step_deadline,
                                           set_step_state, step_rendezvous)
from minitf.runtime.values import DEAD, own

CONTROL_FLOW_OP_TYPES = frozenset(
    ["Switch", "Merge", "Enter", "Exit", "NextIteration", "LoopCond", "ControlTrigger"])

# Ops so cheap that the executor runs them on its own thread even when it has
# a pool: handing them to a worker thread would cost far more than the kernel
# (TF's executor likewise runs "inexpensive" kernels inline).
INLINE_OP_TYPES = CONTROL_FLOW_OP_TYPES | {"Identity", "Const"}


def has_control_flow(ops):
    """Whether any of ``ops`` is a control-flow primitive, or a ``_Recv`` that may
    receive a dead value (marked by the partitioner)."""
    return any(op.type in CONTROL_FLOW_OP_TYPES or op._attrs.get("_in_control_flow")
               for op in ops)


def has_loop_recvs(ops):
    """Whether any of ``ops`` is a ``_Recv`` inside a loop frame cut across devices:
    it waits for each iteration's value, so its device's other kernels must run
    on threads of their own (see :mod:`~minitf.runtime.planning.control_loops`)."""
    return any(op._attrs.get("_in_loop") for op in ops)


class ControlFlowInfo:
    """What the executor needs beyond the :class:`ExecutorPlan`, fixed per plan.

    Attributes:
        out_edges: per node, ``(output slot or -1 for control, consumer)`` pairs,
            including the back edges out of NextIteration.
        pending: per node, its number of in-edges from nodes of the plan (for a
            Merge: only its control edges; its data edges are counted apart).
        num_data_inputs: per node, its number of data in-edges from the plan.
        back_edges: per Merge, how many of its inputs come from a NextIteration.
        frame_of: per node, the static name of its frame ("" at top level).
        enter_count: static frame name -> number of Enter nodes into it.
        exits: static frame name -> Exit nodes leaving it.
        fed_merges: Merges with a fed data input (live from the step's start).
    """

    def __init__(self, plan):
        nodes = plan.nodes
        count = len(nodes)
        self.out_edges = [[] for _ in range(count)]
        self.pending = [0] * count
        self.num_data_inputs = [0] * count
        self.back_edges = [0] * count
        for i, node in enumerate(nodes):
            for src in node.inputs:
                if src.is_feed:
                    continue
                self.out_edges[src.node].append((src.index, i))
                self.num_data_inputs[i] += 1
                if node.op.type != "Merge":
                    self.pending[i] += 1
                if nodes[src.node].op.type == "NextIteration":
                    self.back_edges[i] += 1
        # A Merge fed directly (a cond branch's result, fed by the client) has
        # a live input from the start of the step.
        self.fed_merges = [i for i, node in enumerate(nodes) if node.op.type == "Merge"
                           and self.num_data_inputs[i] and any(s.is_feed for s in node.inputs)]
        index_of = {node.op: i for i, node in enumerate(nodes)}
        for i, node in enumerate(nodes):
            for control in node.op.control_inputs:
                if control in index_of:
                    self.out_edges[index_of[control]].append((-1, i))
                    self.pending[i] += 1
        self._find_frames(nodes, index_of)

    def _find_frames(self, nodes, index_of):
        """The static frame of every node, from the frame moves along its inputs."""
        self.frame_of = [""] * len(nodes)
        self.enter_count = collections.Counter()
        self.exits = collections.defaultdict(list)
        parent = {"": None}
        for i, node in enumerate(nodes):  # nodes are in topological order (back edges aside)
            producers = [index_of[t.op] for t in node.op.inputs
                         if t.op in index_of and t.op.type != "NextIteration"]
            producers += [index_of[c] for c in node.op.control_inputs if c in index_of]
            frame = self._output_frame(nodes, producers[0], parent) if producers else ""
            self.frame_of[i] = frame
            if node.op.type == "Enter":
                child = node.op.get_attr("frame_name")
                parent.setdefault(child, frame)
                self.enter_count[child] += 1
            elif node.op.type == "Exit":
                self.exits[frame].append(i)

    def _output_frame(self, nodes, producer, parent):
        op = nodes[producer].op
        if op.type == "Enter":
            return op.get_attr("frame_name")
        if op.type == "Exit":
            return parent.get(self.frame_of[producer]) or ""
        return self.frame_of[producer]


class _Iteration:
    """One iteration of a frame: its pending counts, dead counts and values."""

    def __init__(self, info, first):
        self.pending = list(info.pending)
        self.dead_count = list(info.back_edges) if first else [0] * len(info.pending)
        self.is_dead = set()       # non-Merge nodes with a dead input
        self.live_merges = set()   # Merges that received a live input
        self.fired_merges = set()
        self.values = {}           # (node, slot) -> value
        self.outstanding_ops = 0
        self.outstanding_frame_count = 0


class _Frame:
    """One activation of a loop body (TF's ``FrameState``)."""

    def __init__(self, info, static_name, parent, parent_iter, parallel_iterations):
        self.static_name = static_name
        self.parent = parent
        self.parent_iter = parent_iter
        self.parallel_iterations = max(1, parallel_iterations)
        self.name = static_name if parent is None else "%s;%d;%s" % (parent.name, parent_iter,
                                                                    static_name)
        self.frame_id = zlib.crc32(self.name.encode()) if parent is not None else 0
        self.iterations = {0: _Iteration(info, first=True)}
        self.iteration_count = 0
        self.num_outstanding_iterations = 1
        self.num_pending_inputs = info.enter_count[static_name] if parent is not None else 0
        self.invariants = []        # (node, outputs, is_dead) of constant Enters
        self.invariant_values = {}  # (node, slot) -> value
        self.next_iter_roots = []   # deferred (node, outputs) of NextIteration
        self.live_exits = set()
        self.children = {}          # (iteration, static name) -> child _Frame


class _Tagged:
    """A node ready to run in one frame and iteration (TF's ``TaggedNode``)."""

    __slots__ = ("node", "frame", "iteration", "is_dead")

    def __init__(self, node, frame, iteration, is_dead):
        self.node = node
        self.frame = frame
        self.iteration = iteration
        self.is_dead = is_dead


class ControlFlowStep:
    """``step(feeds, *, deadline=None, trace=None)`` running an ExecutorPlan with control flow.

    Args:
        plan: the ExecutorPlan (its node order is topological, back edges aside).
        pool: optional ``concurrent.futures`` executor: kernels then run on
            its threads (``inter_op_parallelism_threads``) while this thread
            keeps the frames and pending counts.
        cancellation: the session's
            :class:`~minitf.runtime.kernel_context.Cancellation` (None: none).

    The step's deadline and cancellation are checked before every node, so a
    ``tf.while_loop`` stops at the iteration where its time runs out.
    """

    def __init__(self, plan, pool=None, cancellation=None):
        self._plan = plan
        self._cancellation = cancellation
        self._info = ControlFlowInfo(plan)
        self._pool = pool
        self._device = plan.nodes[0].ctx.device.name if plan.nodes else ""

    def __call__(self, feeds, *, deadline=None, trace=None):
        """Runs one step; returns the fetched values as a tuple.

        ``trace`` (a dict) receives ``(op, start, end)`` per op under the device's name.
        """
        records = None if trace is None else trace.setdefault(self._device, [])
        state = _StepState(self._plan, self._info, records, self._pool, deadline,
                           step_rendezvous(), self._cancellation)
        if self._plan.feeds:
            for i, (convert, value) in enumerate(zip(self._plan.feed_converters,
                                                     feeds.values())):
                state.feeds[i] = convert(value)
        saved = set_step_deadline(deadline, self._cancellation)
        try:
            state.run()
        finally:
            set_frame_iter(0, 0)
            set_step_deadline(*saved)
        return tuple(state.fetch(k) for k in range(len(self._plan.fetches)))


def _on_own_thread(fn, *args):
    """``fn(*args)`` on a new daemon thread; returns its Future."""
    future = concurrent.futures.Future()

    def work():
        try:
            future.set_result(fn(*args))
        except BaseException as error:  # handed to whoever waits on the future
            future.set_exception(error)
    threading.Thread(target=work, daemon=True, name="minitf-recv").start()
    return future


class _StepState:
    """The per-step state of one run (TF's ``ExecutorState``)."""

    def __init__(self, plan, info, trace, pool=None, deadline=None, rendezvous=None,
                 cancellation=None):
        self.plan = plan
        self.cancellation = cancellation
        self.info = info
        self.trace = trace
        self.pool = pool
        self.deadline = deadline
        self.rendezvous = rendezvous  # handed to the pool's threads with the deadline
        self.feeds = {}
        self.root = _Frame(info, "", None, 0, 1)
        # The ready queue is ordered by node index (the plan's topological
        # order), so the ops of the top-level frame run in the same order as in
        # the straight-line executor — a blocking _Recv never waits for a _Send
        # this partition has yet to run.
        self.ready = []
        self.sequence = itertools.count()

    # ---- the loop ----------------------------------------------------------------
    def run(self):
        root_iteration = self.root.iterations[0]
        for i in range(len(self.plan.nodes)):
            if self.info.frame_of[i] == "" and self.info.pending[i] == 0 \
                    and self.info.num_data_inputs[i] == 0:
                self.push(_Tagged(i, self.root, 0, False), root_iteration)
        for i in self.info.fed_merges:
            if self.info.frame_of[i] == "":
                root_iteration.live_merges.add(i)
                if self.info.pending[i] == 0:
                    root_iteration.fired_merges.add(i)
                    self.push(_Tagged(i, self.root, 0, False), root_iteration)
        if self.pool is None:
            while self.ready:
                check_step()
                _, _, tagged = heapq.heappop(self.ready)
                self.process(tagged)
        else:
            self.run_on_pool()

    def run_on_pool(self):
        """The same loop, with kernels running on the pool's threads.

        Only kernels leave this thread: inputs are gathered before, outputs
        propagated after, here — so frames and counts need no lock.
        """
        in_flight = {}
        while self.ready or in_flight:
            check_step()
            while self.ready:
                _, _, tagged = heapq.heappop(self.ready)
                node = self.plan.nodes[tagged.node]
                if (tagged.is_dead and node.op.type != "_Send") or node.op.type in INLINE_OP_TYPES:
                    self.process(tagged)  # cheaper here than a trip through the pool
                    continue
                values = self.prepare_inputs(node, tagged.frame, tagged.iteration)
                args = (tagged.node, node, tagged.frame.frame_id, tagged.iteration, values)
                if node.op.type == "_Recv":  # may wait long: a thread of its own, not the pool's
                    future = _on_own_thread(self.call_kernel, *args)
                else:
                    future = self.pool.submit(self.call_kernel, *args)
                in_flight[future] = tagged
            done, _ = concurrent.futures.wait(in_flight,
                                              return_when=concurrent.futures.FIRST_COMPLETED)
            for future in sorted(done, key=lambda f: in_flight[f].node):
                tagged = in_flight.pop(future)
                outputs = future.result()  # a kernel's error ends the step here
                self.propagate_outputs(tagged.node, self.plan.nodes[tagged.node], tagged.frame,
                                       tagged.iteration, outputs, tagged.is_dead)
                self.node_done(tagged.frame, tagged.iteration)

    def push(self, tagged, iteration_state):
        iteration_state.outstanding_ops += 1
        heapq.heappush(self.ready, (tagged.node, next(self.sequence), tagged))

    def process(self, tagged):
        """Runs one tagged node (or passes its deadness on) and propagates its outputs."""
        index = tagged.node
        node = self.plan.nodes[index]
        frame, iteration = tagged.frame, tagged.iteration
        is_dead = tagged.is_dead
        if is_dead and node.op.type != "_Send":
            outputs = [DEAD] * node.num_outputs
        else:
            values = self.prepare_inputs(node, frame, iteration)
            outputs = self.call_kernel(index, node, frame.frame_id, iteration, values)
        self.propagate_outputs(index, node, frame, iteration, outputs, is_dead)
        self.node_done(frame, iteration)

    def call_kernel(self, index, node, frame_id, iteration, values):
        """Runs ``node``'s kernel on ``values``; returns its outputs as a list (dead: DEAD)."""
        if self.pool is not None:
            set_step_state(self.rendezvous, self.deadline, self.cancellation)
        set_frame_iter(frame_id, iteration)
        start = time.perf_counter()
        try:
            outputs = node.kernel(node.ctx, *values, **node.attrs)
        except Exception as error:  # re-raised naming the op and its origin
            raise located_error(error, node.op) from error
        if self.trace is not None:
            self.trace.append((node.op, start, time.perf_counter()))
        if node.num_outputs == 1:
            outputs = [outputs]
        elif node.num_outputs == 0:
            outputs = []
        return [DEAD if v is None else v for v in outputs]

    def prepare_inputs(self, node, frame, iteration):
        """The inputs of ``node`` in ``frame``/``iteration`` (a Merge's missing ones: None)."""
        state = frame.iterations[iteration]
        is_merge = node.op.type == "Merge"
        values = []
        for src, deref in zip(node.inputs, node.deref):
            if src.is_feed:
                value = self.feeds[src.index]
            else:
                key = (src.node, src.index)
                value = state.values.get(key, frame.invariant_values.get(key, DEAD))
            if value is DEAD:
                if not is_merge and node.op.type != "_Send":
                    raise errors.InternalError(node.op.node_def, node.op,
                                               "Input %s of %s has no value" % (src, node.op.name))
                values.append(None if is_merge else DEAD)
            else:
                values.append(value.get() if deref else value)
        return values

    # ---- routing outputs -----------------------------------------------------------
    def propagate_outputs(self, index, node, frame, iteration, outputs, is_dead):
        """Sends ``outputs`` to the frame and iteration their consumers run in."""
        op_type = node.op.type
        if op_type == "Enter":
            child = self.find_or_create_child_frame(frame, iteration, index)
            if node.attrs["is_constant"]:
                self.add_loop_invariant(child, index, outputs, is_dead)
            else:
                self.activate_nodes(index, outputs, is_dead, child, 0)
            child.num_pending_inputs -= 1
            self.cleanup_frame_iterations(child, 0)
        elif op_type == "Exit":
            if not is_dead and outputs[0] is not DEAD:
                frame.live_exits.add(index)
                self.activate_nodes(index, outputs, False, frame.parent, frame.parent_iter)
        elif op_type == "NextIteration":
            if is_dead or outputs[0] is DEAD:
                return  # the loop ends: deadness does not cross into a next iteration
            next_iteration = iteration + 1
            if next_iteration not in frame.iterations:
                if frame.num_outstanding_iterations >= frame.parallel_iterations:
                    frame.next_iter_roots.append((index, outputs))
                    return
                self.start_iteration(frame)
            self.activate_nodes(index, outputs, False, frame, next_iteration)
        else:
            self.activate_nodes(index, outputs, is_dead, frame, iteration)

    def activate_nodes(self, index, outputs, is_dead, frame, iteration):
        """Stores ``outputs`` in (frame, iteration); readies consumers whose inputs are all in."""
        state = frame.iterations[iteration]
        for slot, value in enumerate(outputs):
            state.values[(index, slot)] = DEAD if is_dead else value
        self._activate_consumers(index, outputs, is_dead, frame, iteration, state)

    def _activate_consumers(self, index, outputs, is_dead, frame, iteration, state):
        info = self.info
        nodes = self.plan.nodes
        for slot, dst in info.out_edges[index]:
            dst_dead = is_dead or (slot >= 0 and outputs[slot] is DEAD)
            if nodes[dst].op.type == "Merge":
                if dst in state.fired_merges:
                    continue
                if slot < 0:
                    state.pending[dst] -= 1
                elif dst_dead:
                    state.dead_count[dst] += 1
                else:
                    state.live_merges.add(dst)
                if state.pending[dst] > 0:
                    continue
                if dst in state.live_merges:
                    state.fired_merges.add(dst)
                    self.push(_Tagged(dst, frame, iteration, False), state)
                elif state.dead_count[dst] == info.num_data_inputs[dst]:
                    state.fired_merges.add(dst)
                    self.push(_Tagged(dst, frame, iteration, True), state)
                continue
            if dst_dead:
                state.is_dead.add(dst)
            state.pending[dst] -= 1
            if state.pending[dst] == 0:
                # A ControlTrigger is never dead (TF's executor does the same).
                dead = dst in state.is_dead and nodes[dst].op.type != "ControlTrigger"
                self.push(_Tagged(dst, frame, iteration, dead), state)

    def add_loop_invariant(self, frame, index, outputs, is_dead):
        """A constant Enter's value: visible in every iteration, present and future."""
        frame.invariants.append((index, outputs, is_dead))
        for slot, value in enumerate(outputs):
            frame.invariant_values[(index, slot)] = DEAD if is_dead else value
        for iteration, state in sorted(frame.iterations.items()):
            self._activate_consumers(index, outputs, is_dead, frame, iteration, state)

    # ---- frames and iterations -------------------------------------------------------
    def find_or_create_child_frame(self, frame, iteration, enter_index):
        """The frame an Enter in (frame, iteration) enters: one per activation of a loop."""
        node = self.plan.nodes[enter_index]
        static_name = node.attrs["frame_name"]
        key = (iteration, static_name)
        child = frame.children.get(key)
        if child is None:
            child = _Frame(self.info, static_name, frame, iteration,
                           node.attrs["parallel_iterations"])
            frame.children[key] = child
            frame.iterations[iteration].outstanding_frame_count += 1
        return child

    def start_iteration(self, frame):
        """Opens the next iteration of ``frame``, with the loop invariants already in."""
        frame.iteration_count += 1
        frame.num_outstanding_iterations += 1
        state = _Iteration(self.info, first=False)
        frame.iterations[frame.iteration_count] = state
        for index, outputs, is_dead in frame.invariants:
            self._activate_consumers(index, outputs, is_dead, frame, frame.iteration_count, state)
        return frame.iteration_count

    def node_done(self, frame, iteration):
        frame.iterations[iteration].outstanding_ops -= 1
        self.cleanup_frame_iterations(frame, iteration)

    def is_iteration_done(self, frame, iteration):
        state = frame.iterations[iteration]
        if state.outstanding_ops or state.outstanding_frame_count:
            return False
        if iteration == 0:
            return frame.num_pending_inputs == 0
        return iteration - 1 not in frame.iterations

    def cleanup_frame_iterations(self, frame, iteration):
        """Retires finished iterations in order; then the frame itself once it is done."""
        if frame is self.root:
            return
        while iteration in frame.iterations and self.is_iteration_done(frame, iteration):
            del frame.iterations[iteration]
            frame.num_outstanding_iterations -= 1
            if frame.next_iter_roots:  # a deferred iteration may start now
                roots, frame.next_iter_roots = frame.next_iter_roots, []
                new_iteration = self.start_iteration(frame)
                for index, outputs in roots:
                    self.activate_nodes(index, outputs, False, frame, new_iteration)
            iteration += 1
        if frame.num_pending_inputs == 0 and frame.num_outstanding_iterations == 0:
            self.delete_frame(frame)

    def delete_frame(self, frame):
        """Ends a finished frame: Exits that never produced a live value pass on deadness."""
        parent, parent_iter = frame.parent, frame.parent_iter
        for exit_index in self.info.exits[frame.static_name]:
            if exit_index not in frame.live_exits:
                exit_node = self.plan.nodes[exit_index]
                self.activate_nodes(exit_index, [DEAD] * exit_node.num_outputs, True,
                                    parent, parent_iter)
        del parent.children[(parent_iter, frame.static_name)]
        parent.iterations[parent_iter].outstanding_frame_count -= 1
        self.cleanup_frame_iterations(parent, parent_iter)

    # ---- results ---------------------------------------------------------------------
    def fetch(self, k):
        src = self.plan.fetches[k]
        if src.is_feed:
            value = self.feeds[src.index]
        else:
            value = self.root.iterations[0].values.get((src.node, src.index), DEAD)
        if value is DEAD:
            op = self.plan.nodes[src.node].op
            raise errors.InvalidArgumentError(
                op.node_def, op, "Retval[%d] does not have value: the fetched tensor %s:%d is "
                "dead (it is on a branch of a cond that was not taken)" % (k, op.name, src.index))
        if self.plan.fetch_deref[k]:
            value = value.get()
        return own(value)  # the caller's own copy: it may be a variable's buffer


__all__ = ["ControlFlowStep", "has_control_flow", "has_loop_recvs"]
