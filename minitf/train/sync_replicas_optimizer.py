"""``tf.train.SyncReplicasOptimizer``: synchronous data parallelism with backup workers.

In *asynchronous* training every worker applies its own gradients to the
variables on the parameter servers whenever it has them: fast, but a worker
may compute its gradient on weights that others have changed since (a *stale*
gradient).  The synchronous scheme of the TF paper (section 4.4, figure 7)
aggregates instead:

1. every replica computes its gradients and puts them into one
   ``ConditionalAccumulator`` per variable, on that variable's parameter
   server, tagged with the global step the replica read (its *local step*);
2. the **chief** takes ``replicas_to_aggregate`` gradients out of each
   accumulator (``take_grad`` blocks until that many have arrived), applies
   their mean with the wrapped optimizer and increments the global step;
3. the chief then puts one *token* per replica into the **token queue**; a
   replica waits for a token before it starts its next step, and the token
   carries the new global step, which becomes its local step.

An accumulator drops a gradient whose local step is older than its own
global step: a replica that was too slow for step *t* cannot spoil step
*t + 1*.  So with ``total_num_replicas > replicas_to_aggregate`` the extra
replicas are **backup workers** — each step completes as soon as the
fastest ``replicas_to_aggregate`` gradients have arrived, and a straggler's
late gradient is discarded instead of delaying everyone (Chen et al.,
"Revisiting Distributed Synchronous SGD", 2016).

Who runs what:

* every worker runs the ``train_op`` returned by :meth:`apply_gradients`
  (apply my gradients, then wait for a token);
* the chief also runs a queue runner whose op takes the aggregated
  gradients, applies them and hands out the tokens
  (:meth:`get_chief_queue_runner`);
* :meth:`make_session_run_hook` does the set-up of both for a
  ``MonitoredTrainingSession``.

Mirrors ``tensorflow/python/training/sync_replicas_optimizer.py``.
"""

from minitf.framework.graph import GraphKeys
from minitf.framework.indexed_slices import IndexedSlices
from minitf.ops import accumulator_ops, array_ops, control_flow_ops, data_flow_ops
from minitf.ops import state_ops, variables
from minitf.platform import tf_logging as logging
from minitf.train import queue_runner
from minitf.train.optimizer import Optimizer
from minitf.train.session_manager import SessionManager, report_uninitialized_variables
from minitf.train.session_run_hook import SessionRunHook


class SyncReplicasOptimizer(Optimizer):
    """Aggregates the gradients of several replicas before applying them.

    Args:
        opt: the optimizer that applies the aggregated gradients.
        replicas_to_aggregate: how many gradients make one update.
        total_num_replicas: how many replicas compute gradients (default
            ``replicas_to_aggregate``); those beyond ``replicas_to_aggregate``
            are backup workers.
        variable_averages: an ``ExponentialMovingAverage`` updated after each
            aggregated step (optional).
        variables_to_average: the variables it averages.
        use_locking: passed to the wrapped optimizer's updates.
        name: the name scope of the accumulator ops.
    """

    def __init__(self, opt, replicas_to_aggregate, total_num_replicas=None,
                 variable_averages=None, variables_to_average=None, use_locking=False,
                 name="sync_replicas"):
        if total_num_replicas is None:
            total_num_replicas = replicas_to_aggregate
        super().__init__(use_locking, name)
        logging.info("SyncReplicasV2: replicas_to_aggregate=%s; total_num_replicas=%s",
                     replicas_to_aggregate, total_num_replicas)
        self._opt = opt
        self._replicas_to_aggregate = replicas_to_aggregate
        self._total_num_replicas = total_num_replicas
        self._tokens_per_step = max(total_num_replicas, replicas_to_aggregate)
        self._variable_averages = variable_averages
        self._variables_to_average = variables_to_average
        self._gradients_applied = False
        self._global_step = None
        self._sync_token_queue = None
        self._chief_queue_runner = None
        self._accumulator_list = []  # (accumulator, device) per variable with a gradient
        self._local_step = None
        self.local_step_init_op = None
        self.chief_init_op = None
        self.ready_for_local_init_op = None

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's gradients (each replica computes its own)."""
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Adds the accumulators, the aggregated update and the token queue.

        Returns:
            The op each replica runs per step: it puts the replica's gradients
            into the accumulators, then waits for a token and takes its global
            step as the replica's new local step.

        Raises:
            ValueError: without gradients or without a ``global_step`` (it is
                what tells a stale gradient from a fresh one).
        """
        grads_and_vars = list(grads_and_vars)
        if not grads_and_vars:
            raise ValueError("Must supply at least one variable")
        if global_step is None:
            raise ValueError("Global step is required to check staleness")
        graph = global_step.graph
        self._global_step = global_step
        with graph.as_default():
            self._create_local_step(graph, global_step)
            with graph.name_scope(self._name):
                apply_ops, aggregated = self._accumulate(graph, grads_and_vars)
            var_list = [var for _, var in grads_and_vars]
            with graph.device(global_step.device), graph.name_scope(None):
                update_op = self._opt.apply_gradients(zip(aggregated, var_list), global_step)
                train_op = self._wait_for_token(graph, apply_ops)
                sync_op = self._hand_out_tokens(graph, update_op)
            self._chief_queue_runner = queue_runner.QueueRunner(self._sync_token_queue,
                                                                [sync_op])
            self.chief_init_op = control_flow_ops.group(
                self.local_step_init_op, *self._set_accumulator_steps(graph, global_step))
        self._gradients_applied = True
        return train_op

    def _create_local_step(self, graph, global_step):
        """The replica's local step: a local variable on the worker (not on a ps task)."""
        local_anchor = control_flow_ops.no_op()
        with graph.colocate_with(local_anchor):
            self._local_step = variables.Variable(
                0, trainable=False, collections=[GraphKeys.LOCAL_VARIABLES],
                dtype=global_step.dtype.base_dtype, name="sync_rep_local_step")
        self.local_step_init_op = state_ops.assign(self._local_step, global_step)
        self.ready_for_local_init_op = report_uninitialized_variables(
            variables.global_variables())

    def _accumulate(self, graph, grads_and_vars):
        """One accumulator per variable, on its device: ``(apply ops, aggregated grads)``."""
        apply_ops, aggregated = [], []
        for grad, var in grads_and_vars:
            if grad is None:
                aggregated.append(None)
                continue
            with graph.device(var.device):
                accumulator, apply_op, taken = self._accumulator_for(grad, var)
            apply_ops.append(apply_op)
            aggregated.append(taken)
            self._accumulator_list.append((accumulator, var.device))
        return apply_ops, aggregated

    def _accumulator_for(self, grad, var):
        shared_name = var.name + "/grad_accum"
        if isinstance(grad, IndexedSlices):
            accumulator = accumulator_ops.SparseConditionalAccumulator(
                grad.dtype, shape=(), shared_name=shared_name)
            return (accumulator,
                    accumulator.apply_indexed_slices_grad(grad, local_step=self._local_step),
                    accumulator.take_indexed_slices_grad(self._replicas_to_aggregate))
        accumulator = accumulator_ops.ConditionalAccumulator(
            grad.dtype, shape=var.get_shape(), shared_name=shared_name)
        return (accumulator, accumulator.apply_grad(grad, local_step=self._local_step),
                accumulator.take_grad(self._replicas_to_aggregate))

    def _wait_for_token(self, graph, apply_ops):
        """The replica's train op: after its gradients are in, take a token."""
        self._sync_token_queue = data_flow_ops.FIFOQueue(
            -1, self._global_step.dtype.base_dtype, shapes=(), name="sync_token_q",
            shared_name="sync_token_q")
        with graph.control_dependencies(apply_ops):
            token = self._sync_token_queue.dequeue()
        return state_ops.assign(self._local_step, token)

    def _hand_out_tokens(self, graph, update_op):
        """The chief's op: after the update, one token (the new global step) per replica."""
        with graph.control_dependencies([update_op]):
            tokens = array_ops.fill([self._tokens_per_step], self._global_step)
            sync_op = self._sync_token_queue.enqueue_many((tokens,))
        if self._variable_averages is not None:
            with graph.control_dependencies([sync_op]):
                sync_op = self._variable_averages.apply(self._variables_to_average)
        return sync_op

    def _set_accumulator_steps(self, graph, global_step):
        """Ops giving each accumulator the chief's global step (after a restore)."""
        ops = []
        for accumulator, device in self._accumulator_list:
            with graph.device(device):
                ops.append(accumulator.set_global_step(global_step, name="SetGlobalStep"))
        return ops

    def get_chief_queue_runner(self):
        """The queue runner the chief starts: it aggregates, applies and hands out tokens.

        Raises:
            ValueError: before :meth:`apply_gradients`.
        """
        if not self._gradients_applied:
            raise ValueError("Should be called after apply_gradients().")
        return self._chief_queue_runner

    def get_init_tokens_op(self, num_tokens=-1):
        """An op filling the token queue so that the replicas can take their first step.

        Args:
            num_tokens: how many tokens; -1 means ``replicas_to_aggregate``.

        Raises:
            ValueError: before :meth:`apply_gradients`, or with fewer tokens
                than the first step needs.
        """
        if not self._gradients_applied:
            raise ValueError("get_init_tokens_op() should be called after apply_gradients().")
        tokens_needed = self._replicas_to_aggregate - self._total_num_replicas
        if num_tokens == -1:
            num_tokens = self._replicas_to_aggregate
        elif num_tokens < tokens_needed:
            raise ValueError("Too few tokens to finish the first step: %d (given) vs %d "
                             "(needed)" % (num_tokens, tokens_needed))
        graph = self._global_step.graph
        with graph.as_default(), graph.device(self._global_step.device), \
                graph.name_scope(None):
            if num_tokens <= 0:
                return control_flow_ops.no_op(name="no_init_tokens")
            tokens = array_ops.fill([num_tokens], self._global_step)
            return self._sync_token_queue.enqueue_many((tokens,))

    def make_session_run_hook(self, is_chief, num_tokens=-1):
        """A hook doing this optimizer's set-up in a ``MonitoredTrainingSession``."""
        return _SyncReplicasOptimizerHook(self, is_chief, num_tokens)

    # The wrapped optimizer owns the slots.
    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self):
        return self._opt.variables()


class _SyncReplicasOptimizerHook(SessionRunHook):
    """Initializes the local step and, on the chief, the tokens and the queue runner."""

    def __init__(self, sync_optimizer, is_chief, num_tokens):
        self._sync_optimizer = sync_optimizer
        self._is_chief = is_chief
        self._num_tokens = num_tokens

    def begin(self):
        optimizer = self._sync_optimizer
        if not optimizer._gradients_applied:
            raise ValueError("SyncReplicasOptimizer.apply_gradient should be called before "
                             "using the hook.")
        self._ready_for_local_init_op = optimizer.ready_for_local_init_op
        if self._is_chief:
            self._local_init_op = optimizer.chief_init_op
            self._q_runner = optimizer.get_chief_queue_runner()
            self._init_tokens_op = optimizer.get_init_tokens_op(self._num_tokens)
        else:
            self._local_init_op = optimizer.local_step_init_op
            self._q_runner = None
            self._init_tokens_op = None

    def after_create_session(self, session, coord):
        ready, message = SessionManager._ready(self._ready_for_local_init_op, session)
        if not ready:
            raise RuntimeError("Init operations did not make model ready for "
                               "SyncReplicasOptimizer local_init. Init op: %s, error: %s"
                               % (self._local_init_op.name, message))
        session.run(self._local_init_op)
        if self._init_tokens_op is not None:
            session.run(self._init_tokens_op)
        if self._q_runner is not None:
            self._q_runner.create_threads(session, coord=coord, daemon=True, start=True)


__all__ = ["SyncReplicasOptimizer"]
