"""``TF_CONFIG``: the cluster, and this process's task in it, from the environment.

A launcher (Kubernetes, a batch scheduler, ``python -m minitf launch``, a
shell script) starts every task of a cluster with the same program and tells
each one who it is through one environment variable, ``TF_CONFIG``, holding
JSON::

    TF_CONFIG='{"cluster": {"ps":     ["ps0:2222"],
                            "worker": ["w0:2222", "w1:2222"]},
                "task":    {"type": "worker", "index": 1},
                "rpc_layer": "grpc"}'

``cluster`` is what ``tf.train.ClusterSpec`` takes, ``task`` names this
process's job and task index, and the optional ``rpc_layer`` is the protocol
(``"grpc"``); ``session_master`` may name the master a client should use.
:class:`TFConfigClusterResolver` reads it (``tf.distribute.cluster_resolver.
TFConfigClusterResolver``), and :func:`server_from_tf_config` starts this
task's ``tf.train.Server`` from it, so one script runs unchanged under any
launcher::

    server = server_from_tf_config()                # this task's server
    if TFConfigClusterResolver().task_type == "ps":
        server.join()                                # parameter servers just serve

Mirrors ``tensorflow/python/distribute/cluster_resolver/
tfconfig_cluster_resolver.py``: the variable is read again on every call
(a launcher may set it after the resolver is made), and the constructor's
arguments override what it says.  Unlike TF, a malformed ``TF_CONFIG`` fails
with a message that names the variable and the field at fault.
"""

import json
import os

from minitf.distributed.cluster_spec import ClusterSpec

#: The environment variable read.
TF_CONFIG_ENV = "TF_CONFIG"


def load_tf_config(environ=None):
    """The parsed ``TF_CONFIG`` (``{}`` when unset or empty).

    Args:
        environ: the environment to read; ``os.environ`` by default.

    Returns:
        A dict, e.g. ``{"cluster": {...}, "task": {"type": ..., "index": ...}}``.

    Raises:
        ValueError: if the variable is not valid JSON, or not a JSON object,
            or its ``cluster`` or ``task`` entries have the wrong form.
    """
    environ = os.environ if environ is None else environ
    text = environ.get(TF_CONFIG_ENV, "")
    if not text.strip():
        return {}
    try:
        config = json.loads(text)
    except ValueError as error:
        raise ValueError("%s is not valid JSON (%s): %r" % (TF_CONFIG_ENV, error, text)) from None
    if not isinstance(config, dict):
        raise ValueError("%s must be a JSON object such as {\"cluster\": {...}, \"task\": "
                         "{\"type\": \"worker\", \"index\": 0}}, got %r" % (TF_CONFIG_ENV, text))
    if "cluster" in config and not isinstance(config["cluster"], dict):
        raise ValueError("%s[\"cluster\"] must map job names to lists of addresses, got %r"
                         % (TF_CONFIG_ENV, config["cluster"]))
    if "task" in config and not isinstance(config["task"], dict):
        raise ValueError("%s[\"task\"] must be an object {\"type\": ..., \"index\": ...}, got %r"
                         % (TF_CONFIG_ENV, config["task"]))
    return config


def format_master_url(master, rpc_layer=None):
    """``"grpc://host:port"`` for ``master="host:port", rpc_layer="grpc"``; the
    address unchanged without an ``rpc_layer``."""
    return "%s://%s" % (rpc_layer, master) if rpc_layer else master


class TFConfigClusterResolver:
    """The cluster and this task, as the ``TF_CONFIG`` environment variable gives them.

    Example:
        >>> os.environ["TF_CONFIG"] = json.dumps({
        ...     "cluster": {"ps": ["localhost:2222"], "worker": ["localhost:2223"]},
        ...     "task": {"type": "worker", "index": 0}, "rpc_layer": "grpc"})
        >>> resolver = TFConfigClusterResolver()
        >>> resolver.task_type, resolver.task_id
        ('worker', 0)
        >>> resolver.master()
        'grpc://localhost:2223'

    Mirrors ``tf.distribute.cluster_resolver.TFConfigClusterResolver``.
    """

    def __init__(self, task_type=None, task_id=None, rpc_layer=None, environment=None):
        """Creates a resolver.

        Args:
            task_type: overrides ``TF_CONFIG["task"]["type"]``.
            task_id: overrides ``TF_CONFIG["task"]["index"]``.
            rpc_layer: overrides ``TF_CONFIG["rpc_layer"]`` (e.g. ``"grpc"``).
            environment: the environment the cluster runs in (TF's ``"google"``
                or ``None``); only reported back by :attr:`environment`.
        """
        self._task_type = task_type
        self._task_id = task_id
        self._rpc_layer = rpc_layer
        self._environment = environment

    # ---- this task -------------------------------------------------------------

    @property
    def task_type(self):
        """This task's job name (``"worker"``), or None when ``TF_CONFIG`` names none."""
        if self._task_type is not None:
            return str(self._task_type)
        task = load_tf_config().get("task", {})
        return str(task["type"]) if "type" in task else None

    @task_type.setter
    def task_type(self, task_type):
        self._task_type = task_type

    @property
    def task_id(self):
        """This task's index in its job, or None when ``TF_CONFIG`` names none.

        Raises:
            ValueError: if ``TF_CONFIG["task"]["index"]`` is not an integer.
        """
        if self._task_id is not None:
            return int(self._task_id)
        task = load_tf_config().get("task", {})
        if "index" not in task:
            return None
        try:
            return int(task["index"])
        except (TypeError, ValueError):
            raise ValueError("%s[\"task\"][\"index\"] must be an integer, got %r"
                             % (TF_CONFIG_ENV, task["index"])) from None

    @task_id.setter
    def task_id(self, task_id):
        self._task_id = task_id

    @property
    def rpc_layer(self):
        """The protocol tasks talk over (``"grpc"``), or None when unspecified."""
        if self._rpc_layer is not None:
            return self._rpc_layer
        return load_tf_config().get("rpc_layer")

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer):
        self._rpc_layer = rpc_layer

    @property
    def environment(self):
        """The environment given to the constructor (TF reads no key for it)."""
        return self._environment

    # ---- the cluster -------------------------------------------------------------

    def cluster_spec(self):
        """The cluster of ``TF_CONFIG["cluster"]`` (an empty ClusterSpec without one).

        Raises:
            ValueError, TypeError: for a malformed ``TF_CONFIG`` (see
                :func:`load_tf_config` and ``ClusterSpec``).
        """
        return ClusterSpec(load_tf_config().get("cluster", {}))

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        """The target a TF1 ``Session`` of this task should connect to.

        In order: ``TF_CONFIG["session_master"]`` if set; ``""`` (an in-process
        session) for a cluster without jobs or with one job of one task;
        otherwise the address of the task ``(task_type, task_id)`` — by
        default this task — prefixed with the rpc layer: ``"grpc://host:port"``.
        Without any rpc layer the bare ``"host:port"`` is returned, as TF does.

        Args:
            task_type: the job of the master task; this task's by default.
            task_id: the index of the master task; this task's by default.
            rpc_layer: the protocol; :attr:`rpc_layer` by default.

        Raises:
            ValueError: if no task is named (no ``task`` in ``TF_CONFIG`` and
                no arguments), or the cluster has no such task.
        """
        session_master = load_tf_config().get("session_master")
        if session_master is not None:
            return session_master
        cluster = self.cluster_spec()
        jobs = cluster.jobs
        if not jobs or (len(jobs) == 1 and len(cluster.job_tasks(jobs[0])) == 1):
            return ""
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        rpc_layer = self.rpc_layer if rpc_layer is None else rpc_layer
        if task_type is None or task_id is None:
            raise ValueError(
                "Cannot tell which task is the master: %s has no \"task\": {\"type\": ..., "
                "\"index\": ...}; pass task_type and task_id." % TF_CONFIG_ENV)
        return format_master_url(cluster.task_address(task_type, task_id), rpc_layer)

    def __repr__(self):
        return "<TFConfigClusterResolver task=%s:%s rpc_layer=%s>" % (
            self.task_type, self.task_id, self.rpc_layer)


def server_from_tf_config(config=None, start=True):
    """Creates this task's ``tf.train.Server`` from ``TF_CONFIG``.

    The server joins the cluster of ``TF_CONFIG["cluster"]`` as task
    ``TF_CONFIG["task"]["index"]`` of job ``TF_CONFIG["task"]["type"]``, over
    ``TF_CONFIG["rpc_layer"]`` (``"grpc"`` by default)::

        server = server_from_tf_config()
        with tf.Session(server.target) as sess: ...

    Args:
        config: a ``tf.ConfigProto`` with the default options of the
            server's sessions.
        start: start the server before returning it.

    Returns:
        A ``tf.train.Server``.

    Raises:
        ValueError: if ``TF_CONFIG`` is unset or malformed, names no task, or
            names a task that its cluster does not contain.
    """
    from minitf.distributed.server import Server  # the server needs grpc: load on use

    resolver = TFConfigClusterResolver()
    cluster = resolver.cluster_spec()
    if not cluster:
        raise ValueError("%s names no cluster: set it to JSON such as {\"cluster\": {\"worker\": "
                         "[\"localhost:2222\"]}, \"task\": {\"type\": \"worker\", \"index\": 0}}"
                         % TF_CONFIG_ENV)
    job_name, task_index = resolver.task_type, resolver.task_id
    if job_name is None or task_index is None:
        raise ValueError("%s has no \"task\": {\"type\": ..., \"index\": ...} saying which "
                         "task of the cluster this process is" % TF_CONFIG_ENV)
    if job_name not in cluster.jobs or task_index not in cluster.task_indices(job_name):
        raise ValueError("%s names task %s:%d, which its cluster %s does not contain"
                         % (TF_CONFIG_ENV, job_name, task_index, cluster))
    return Server(cluster, job_name=job_name, task_index=task_index,
                  protocol=resolver.rpc_layer or "grpc", config=config, start=start)
