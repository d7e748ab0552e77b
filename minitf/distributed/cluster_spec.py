"""``tf.train.ClusterSpec``: the tasks of a cluster, organised into jobs.

A distributed TensorFlow program runs as several *tasks* (processes), each a
``tf.train.Server`` at a network address.  Tasks that do the same kind of work
form a *job*: parameter servers in ``"ps"``, replicas of the model in
``"worker"``.  A ``ClusterSpec`` is the map job -> task index -> address that
every task and client of a cluster agrees on::

    cluster = tf.train.ClusterSpec({"ps": ["ps0:2222", "ps1:2222"],
                                    "worker": ["w0:2222", "w1:2222", "w2:2222"]})

    job "ps"      task 0  ps0:2222     -> devices /job:ps/replica:0/task:0/...
                  task 1  ps1:2222     -> devices /job:ps/replica:0/task:1/...
    job "worker"  task 0  w0:2222      -> devices /job:worker/replica:0/task:0/...
                  ...

A job may also be *sparse*, ``{"worker": {1: "w1:2222"}}``, so that a task can
be configured without knowing all of its peers.  On the wire the same map is a
``tf.train.ClusterDef`` protocol buffer (a list of ``JobDef(name, tasks)``),
which :meth:`ClusterSpec.as_cluster_def` builds.

Mirrors ``tf.train.ClusterSpec`` (``tensorflow/python/training/server_lib.py``)
in TF 1.x, with its error classes and messages.  Two small differences: job
names and addresses given as ``bytes`` are stored as text, and
``job_tasks`` of a job without tasks is ``[]`` (TF fails on it).
"""

from minitf.framework import protos


class ClusterSpec:
    """Represents a cluster as a set of tasks, organised into jobs.

    Example:
        >>> cluster = ClusterSpec({"worker": ["w0:2222", "w1:2222"],
        ...                        "ps": {1: "ps1:2222"}})
        >>> cluster.jobs
        ['worker', 'ps']
        >>> cluster.num_tasks("worker"), cluster.task_indices("ps")
        (2, [1])
        >>> cluster.task_address("worker", 1)
        'w1:2222'
        >>> cluster.as_dict()
        {'worker': ['w0:2222', 'w1:2222'], 'ps': {1: 'ps1:2222'}}

    Mirrors ``tf.train.ClusterSpec``.
    """

    def __init__(self, cluster):
        """Creates a ``ClusterSpec``.

        Args:
            cluster: a dict mapping each job name to (i) a list of network
                addresses (task ``i`` at ``addresses[i]``) or (ii) a dict from
                task index to address (a sparse job); or another
                ``ClusterSpec``; or a ``tf.train.ClusterDef`` protocol buffer.

        Raises:
            TypeError: if ``cluster`` is none of these, or a job name or an
                address is not a string.
            ValueError: if a task index of a sparse job is not an integer.
        """
        # The cluster as TF keeps it: job name -> {task index: address}, jobs
        # in the order given.  The ClusterDef is built when first asked for.
        self._cluster_def = None
        if isinstance(cluster, dict):
            self._cluster_spec = {_job_name(job): _job_tasks(job, tasks)
                                  for job, tasks in cluster.items()}
        elif isinstance(cluster, ClusterSpec):
            self._cluster_spec = {job: dict(tasks)
                                  for job, tasks in cluster._cluster_spec.items()}
        elif _is_cluster_def(cluster):
            self._cluster_def = cluster
            self._cluster_spec = {job_def.name: dict(job_def.tasks) for job_def in cluster.job}
        else:
            raise TypeError("`cluster` must be a dictionary mapping one or more job names to "
                            "lists of network addresses, or a `ClusterDef` protocol buffer")

    # ---- the jobs and their tasks ---------------------------------------------------

    @property
    def jobs(self):
        """The names of the jobs in this cluster, in the order they were given."""
        return list(self._cluster_spec)

    def num_tasks(self, job_name):
        """The number of tasks defined in job ``job_name``.

        Raises:
            ValueError: if ``job_name`` does not name a job in this cluster.
        """
        return len(self._job(job_name))

    def task_indices(self, job_name):
        """The valid task indices of job ``job_name``, sorted.

        Raises:
            ValueError: if ``job_name`` does not name a job in this cluster.
        """
        return sorted(self._job(job_name))

    def task_address(self, job_name, task_index):
        """The network address of task ``task_index`` of job ``job_name``.

        Raises:
            ValueError: if ``job_name`` does not name a job in this cluster,
                or the job has no task with index ``task_index``.
        """
        job = self._job(job_name)
        try:
            return job[task_index]
        except (KeyError, TypeError):  # TypeError: an unhashable index
            raise ValueError("No task with index %r in job %r" % (task_index, job_name)) from None

    def job_tasks(self, job_name):
        """The addresses of job ``job_name`` as a list indexed by task index.

        For a sparse job the list has ``None`` where no task is defined, so
        its length may exceed :meth:`num_tasks` (TF keeps this list form for
        backwards compatibility).

        Raises:
            ValueError: if ``job_name`` does not name a job in this cluster.
        """
        job = self._job(job_name)
        tasks = [None] * (max(job) + 1 if job else 0)
        for index, address in job.items():
            tasks[index] = address
        return tasks

    def _job(self, job_name):
        """The ``{index: address}`` map of a job; ValueError names an unknown job."""
        try:
            return self._cluster_spec[job_name]
        except (KeyError, TypeError):  # TypeError: an unhashable name
            raise ValueError("No such job in cluster: %r" % (job_name,)) from None

    # ---- other forms of the same cluster ----------------------------------------------

    def as_dict(self):
        """A dict from job name to its tasks, as the constructor takes it.

        A job whose task indices are dense (0, 1, ..., n-1) becomes a list of
        addresses; a sparse one a dict ``{index: address}``; a job without
        tasks ``{}``.
        """
        result = {}
        for job in self.jobs:
            indices = self.task_indices(job)
            if indices and indices[-1] + 1 == len(indices):
                result[job] = self.job_tasks(job)
            else:
                result[job] = {index: self.task_address(job, index) for index in indices}
        return result

    def as_cluster_def(self):
        """This cluster as a ``tf.train.ClusterDef`` protocol buffer.

        Jobs are sorted by name and tasks by index, so that equal clusters give
        identical protos.  A ``ClusterSpec`` built from a ``ClusterDef`` returns
        that proto, as TF does.
        """
        if self._cluster_def is None:
            cluster_pb2 = protos.load("cluster_pb2")
            cluster_def = cluster_pb2.ClusterDef()
            for job_name, tasks in sorted(self._cluster_spec.items()):
                job_def = cluster_def.job.add()
                job_def.name = job_name
                for index, address in sorted(tasks.items()):
                    job_def.tasks[index] = address
            self._cluster_def = cluster_def
        return self._cluster_def

    # ---- comparison and printing --------------------------------------------------

    def __bool__(self):
        """False for a cluster without jobs (``ClusterSpec({})``)."""
        return bool(self._cluster_spec)

    def __eq__(self, other):
        """Equal to a ``ClusterSpec`` with the same tasks at the same addresses.

        As in TF, the comparison is on the ``{job: {index: address}}`` maps,
        so such a dict compares equal too (a dict of lists does not).
        """
        if isinstance(other, ClusterSpec):
            other = other._cluster_spec
        return self._cluster_spec == other

    def __ne__(self, other):
        return not self == other

    __hash__ = None  # mutable-looking and compared by value: unhashable, as in TF

    def __repr__(self):
        as_dict = self.as_dict()
        items = ["%r: %r" % (job, as_dict[job]) for job in sorted(as_dict)]
        return "ClusterSpec({%s})" % ", ".join(items)

    __str__ = __repr__


def _job_name(job):
    """A job name as text; ``TypeError`` for anything but ``str`` or ``bytes``."""
    if isinstance(job, bytes):
        return job.decode("utf-8")
    if not isinstance(job, str):
        raise TypeError("Job name %r must be bytes or unicode" % (job,))
    return job


def _job_tasks(job, tasks):
    """The ``{index: address}`` map of one job given as a list or a dict."""
    if isinstance(tasks, (list, tuple)):
        items = enumerate(tasks)
    elif isinstance(tasks, dict):
        items = tasks.items()
    else:
        raise TypeError("The tasks for job %r must be a list or a dictionary from integers "
                        "to strings." % (job,))
    return {_task_index(job, index): _task_address(address) for index, address in items}


def _task_index(job, index):
    """A task index as an int; sparse jobs read from JSON have string keys ("1")."""
    try:
        return int(index)
    except (TypeError, ValueError):
        raise ValueError("Task index %r of job %r is not an integer" % (index, job)) from None


def _task_address(address):
    """A task address as text; ``TypeError`` for anything but ``str`` or ``bytes``."""
    if isinstance(address, bytes):
        return address.decode("utf-8")
    if not isinstance(address, str):
        raise TypeError("Task address %r must be bytes or unicode" % (address,))
    return address


def _is_cluster_def(value):
    """True for a ``ClusterDef`` proto: minitf's (tensorboard's copy) or TF's own.

    Looked up by the message's name rather than by ``isinstance``, so that a
    ``ClusterSpec`` built from a dict never needs protobuf installed.
    """
    descriptor = getattr(type(value), "DESCRIPTOR", None)
    return getattr(descriptor, "name", None) == "ClusterDef" and hasattr(value, "job")
