"""``tf.train.replica_device_setter``: variables on parameter servers, the rest on workers.

In data-parallel training with parameter servers, the state of the model (its
variables) lives on the tasks of the ``ps`` job and every worker runs its own
copy of the computation.  Rather than wrap each variable in its own
``tf.device``, a program builds its model inside one block whose argument is a
*device function*: the graph calls it with every new ``Operation`` and it
answers with a device::

    cluster = tf.train.ClusterSpec({"ps": ["ps0:2222", "ps1:2222"],
                                    "worker": ["w0:2222", "w1:2222", "w2:2222"]})
    with tf.device(tf.train.replica_device_setter(cluster=cluster)):
        v1 = tf.Variable(...)    # /job:ps/task:0
        v2 = tf.Variable(...)    # /job:ps/task:1
        v3 = tf.Variable(...)    # /job:ps/task:0
        y = tf.matmul(x, v1)     # /job:worker

Ops of a type in ``ps_ops`` (the variables) go to ``ps_device`` with a task
that ``ps_strategy`` picks -- round-robin unless told otherwise; every other op
goes to ``worker_device``.  What the op already asks for (from a ``tf.device``
block inside this one) is kept: the setter only fills the fields left unset,
so ``tf.device("/cpu:0")`` inside gives ``/job:worker/device:CPU:0``.

Ops made under ``tf.colocate_with(v)`` never reach the setter: they take
``v``'s device (the graph does that, as TF's does).  This is how a variable's
initializer and ``read``, an optimizer's slots (Adam's ``m`` and ``v``) and
the updates of the variable all land on the variable's ps task.

Mirrors ``tensorflow/python/training/device_setter.py`` (TF 1.x) and, for the
load-balancing strategy, ``tf.contrib.training.GreedyLoadBalancingStrategy``
and ``tf.contrib.training.byte_size_load_fn`` (in TF's
``contrib/training/python/training/device_setter.py``).  minitf has no
``tf.contrib``: those two are exported as ``tf.train.GreedyLoadBalancingStrategy``
and ``tf.train.byte_size_load_fn``.
"""

from minitf.distributed.cluster_spec import ClusterSpec
from minitf.framework.device_spec import DeviceSpec
from minitf.framework.tensor_shape import TensorShape
from minitf.platform import tf_logging as logging

# The op types whose outputs are model state, placed on the ps job by default
# (TF's list; only ``VariableV2`` exists in minitf today, the others are kept
# so that a graph imported from TF, or a later op, is placed as TF places it).
STANDARD_PS_OPS = (
    "Variable", "VariableV2", "AutoReloadVariable", "MutableHashTable",
    "MutableHashTableV2", "MutableHashTableOfTensors", "MutableHashTableOfTensorsV2",
    "MutableDenseHashTable", "MutableDenseHashTableV2", "VarHandleOp",
)


class _RoundRobinStrategy:
    """Chooses ps tasks 0, 1, ..., n-1, 0, 1, ... for successive ps ops.

    The default ``ps_strategy`` of :func:`replica_device_setter`; not for
    direct use.
    """

    def __init__(self, num_tasks):
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op):
        task = self._next_task
        self._next_task = (self._next_task + 1) % self._num_tasks
        return task


class GreedyLoadBalancingStrategy:
    """Puts each ps op on the ps task with the least load so far.

    The load of an op is ``load_fn(op)``; the strategy keeps the running total
    of each task and gives a new op to the least loaded one (the lowest index
    on a tie), then adds the op's load to it.  With :func:`byte_size_load_fn`
    it balances the bytes of the variables: a large variable followed by two
    small ones puts the large one alone on task 0 and both small ones on
    task 1, where round-robin would stack the third onto the large one.

    Example:
        >>> strategy = tf.train.GreedyLoadBalancingStrategy(2, tf.train.byte_size_load_fn)
        >>> with tf.device(tf.train.replica_device_setter(ps_tasks=2,
        ...                                               ps_strategy=strategy)):
        ...     big = tf.Variable(tf.zeros([1000]))
        ...     small1 = tf.Variable(tf.zeros([10]))
        ...     small2 = tf.Variable(tf.zeros([10]))
        >>> [v.device for v in (big, small1, small2)]
        ['/job:ps/task:0', '/job:ps/task:1', '/job:ps/task:1']

    Mirrors ``tf.contrib.training.GreedyLoadBalancingStrategy`` (TF 1.x).
    """

    def __init__(self, num_tasks, load_fn):
        """Creates the strategy.

        Args:
            num_tasks: the number of ps tasks to balance over.
            load_fn: ``load_fn(op) -> number``, the load ``op`` puts on its task.
        """
        self._num_tasks = num_tasks
        self._load_fn = load_fn
        self._ps_loads = [0] * num_tasks

    def __call__(self, op):
        """Returns the ps task index for ``op`` and charges it ``load_fn(op)``."""
        task = min(range(self._num_tasks), key=self._ps_loads.__getitem__)
        self._ps_loads[task] += self._load_fn(op)
        return task


def byte_size_load_fn(op):
    """The size in bytes of the single output of ``op`` (a variable's contents).

    Meant as the ``load_fn`` of :class:`GreedyLoadBalancingStrategy` for
    ``VariableV2`` ops, but any op with one fully-defined output will do.

    Args:
        op: an ``Operation`` with one output.

    Returns:
        The number of bytes of that output: elements times the dtype's size.

    Raises:
        ValueError: if ``op`` has not exactly one output, or its shape (from
            the output or, for a variable, its ``shape`` attr) is not fully defined.

    Mirrors ``tf.contrib.training.byte_size_load_fn`` (TF 1.x).
    """
    if len(op.outputs) != 1:
        raise ValueError("Op %s must have a single output" % op)
    output = op.outputs[0]
    shape = output.get_shape()
    if not shape.is_fully_defined() and op.type in STANDARD_PS_OPS:
        # A variable's declared shape, as TF falls back to it (its ``shape`` attr).
        shape = TensorShape(op.get_attr("shape"))
    shape.assert_is_fully_defined()
    return shape.num_elements() * output.dtype.base_dtype.size


class _ReplicaDeviceChooser:
    """The device function :func:`replica_device_setter` returns (its bound
    :meth:`device_function`); not for direct use."""

    def __init__(self, ps_tasks, ps_device, worker_device, merge_devices, ps_ops, ps_strategy):
        self._ps_tasks = ps_tasks
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = ps_ops
        self._ps_strategy = ps_strategy

    def device_function(self, op):
        """The device of ``op``: the setter's choice merged under ``op.device``.

        ``op.device`` holds what the ``tf.device`` blocks inside the setter's
        asked for; those fields win.  The ps task is only chosen (and the
        strategy only consulted) when the op's own job, if any, is the ps job.
        """
        if not self._merge_devices and op.device:
            return op.device
        current = DeviceSpec.from_string(op.device)
        if self._ps_tasks and self._ps_device and op.type in self._ps_ops:
            device = DeviceSpec.from_string(self._ps_device)
            if device.job and (current.job is None or current.job == device.job):
                device.task = self._ps_strategy(op)
        else:
            device = DeviceSpec.from_string(self._worker_device or "")
        device.merge_from(current)
        return device.to_string()


def replica_device_setter(ps_tasks=0, ps_device="/job:ps", worker_device="/job:worker",
                          merge_devices=True, cluster=None, ps_ops=None, ps_strategy=None):
    """Returns a device function for ``tf.device`` that places replicated training.

    Ops whose type is in ``ps_ops`` (variables) go to ``ps_device`` on the
    task ``ps_strategy(op)`` chooses; all other ops go to ``worker_device``.
    Device requests from ``tf.device`` blocks *inside* the setter's are merged
    in and win, field by field: ``tf.device("/cpu:0")`` inside gives workers'
    ops ``/job:worker/device:CPU:0``.

    Example:
        >>> cluster = {"ps": ["ps0:2222", "ps1:2222"], "worker": ["w0:2222"]}
        >>> with tf.device(tf.train.replica_device_setter(cluster=cluster)):
        ...     v1 = tf.Variable(1.0)
        ...     v2 = tf.Variable(2.0)
        ...     v3 = tf.Variable(3.0)
        ...     total = v1 + v2 + v3
        >>> [v.device for v in (v1, v2, v3)], total.device
        (['/job:ps/task:0', '/job:ps/task:1', '/job:ps/task:0'], '/job:worker')

    Args:
        ps_tasks: the number of ps tasks; ignored when ``cluster`` is given.
        ps_device: the device of the ps job (default ``"/job:ps"``); empty:
            no ps job, variables are placed like other ops.
        worker_device: the device of the other ops (default ``"/job:worker"``,
            often ``"/job:worker/task:%d" % task_index``).
        merge_devices: True (recommended): fill in only the fields an inner
            ``tf.device`` left unset.  False: an op with any device request
            keeps it untouched.
        cluster: a ``tf.train.ClusterSpec``, a dict for one or a
            ``ClusterDef``; its ps job (named by ``ps_device``) gives ``ps_tasks``.
        ps_ops: the op types to place on the ps job (default
            :data:`STANDARD_PS_OPS`).
        ps_strategy: ``ps_strategy(op) -> task index`` for each ps op (default:
            round-robin over the ps tasks); e.g. :class:`GreedyLoadBalancingStrategy`.

    Returns:
        The device function, or None (for ``tf.device(None)``: no placement)
        when there are no ps tasks -- ``ps_tasks`` is 0 and no ``cluster``, or
        ``cluster`` has no ps job.

    Raises:
        TypeError: if ``cluster`` is not a cluster, or ``ps_strategy`` is not callable.

    Mirrors ``tf.train.replica_device_setter`` (TF 1.x).
    """
    if cluster is not None:
        cluster_spec = ClusterSpec(cluster).as_dict()
        ps_job_name = DeviceSpec.from_string(ps_device).job
        if ps_job_name not in cluster_spec or cluster_spec[ps_job_name] is None:
            return None
        ps_tasks = len(cluster_spec[ps_job_name])
    if ps_tasks == 0:
        return None
    if ps_ops is None:
        ps_ops = list(STANDARD_PS_OPS)
    if not merge_devices:
        logging.warning("DEPRECATION: It is recommended to set merge_devices=true in "
                        "replica_device_setter")
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    chooser = _ReplicaDeviceChooser(ps_tasks, ps_device, worker_device, merge_devices,
                                    ps_ops, ps_strategy)
    return chooser.device_function
