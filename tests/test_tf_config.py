"""``TF_CONFIG``: the cluster and this task, read from the environment.

Expectations are TF's documented behaviour of
``tf.distribute.cluster_resolver.TFConfigClusterResolver`` (read the variable
on every call; the constructor's arguments override it; ``master()`` is
``session_master`` if set, ``""`` for a one-task cluster, else the task's
address behind the rpc layer), plus clear errors for a malformed variable.
``server_from_tf_config`` is tested against a stub ``Server``.
"""

import json
import sys
import types

import pytest

import minitf as tf
from minitf.distributed import tf_config
from minitf.distributed.cluster_spec import ClusterSpec
from minitf.distributed.tf_config import TFConfigClusterResolver, server_from_tf_config

CLUSTER = {"chief": ["c0:2222"], "ps": ["ps0:2222", "ps1:2222"],
           "worker": ["w0:2222", "w1:2222"]}


@pytest.fixture
def set_tf_config(monkeypatch):
    """Sets TF_CONFIG for one test: a dict is written as JSON, a str as is."""
    def set_to(value):
        monkeypatch.setenv("TF_CONFIG", value if isinstance(value, str) else json.dumps(value))
    monkeypatch.delenv("TF_CONFIG", raising=False)
    return set_to


def test_exported_as_tf_distribute_cluster_resolver():
    assert tf.distribute.cluster_resolver.TFConfigClusterResolver is TFConfigClusterResolver


def test_reads_cluster_task_and_rpc_layer(set_tf_config):
    set_tf_config({"cluster": CLUSTER, "task": {"type": "worker", "index": 1},
                   "rpc_layer": "grpc"})
    resolver = TFConfigClusterResolver()
    assert resolver.cluster_spec() == ClusterSpec(CLUSTER)
    assert resolver.task_type == "worker" and resolver.task_id == 1
    assert resolver.rpc_layer == "grpc"
    assert resolver.environment is None
    assert resolver.master() == "grpc://w1:2222"


def test_sparse_job_from_json(set_tf_config):
    # JSON object keys are strings: {"1": ...} is task 1.
    set_tf_config({"cluster": {"worker": {"1": "w1:2222"}, "ps": ["ps0:2222"]},
                   "task": {"type": "worker", "index": 1}})
    cluster = TFConfigClusterResolver().cluster_spec()
    assert cluster.task_indices("worker") == [1]
    assert cluster.task_address("worker", 1) == "w1:2222"


def test_the_variable_is_read_on_every_call(set_tf_config):
    resolver = TFConfigClusterResolver()
    set_tf_config({"cluster": CLUSTER, "task": {"type": "ps", "index": 0}})
    assert resolver.task_type == "ps"
    set_tf_config({"cluster": CLUSTER, "task": {"type": "worker", "index": 1}})
    assert resolver.task_type == "worker" and resolver.task_id == 1


def test_arguments_override_the_variable(set_tf_config):
    set_tf_config({"cluster": CLUSTER, "task": {"type": "worker", "index": 1},
                   "rpc_layer": "grpc"})
    resolver = TFConfigClusterResolver(task_type="ps", task_id=0, rpc_layer="grpc+verbs",
                                       environment="google")
    assert (resolver.task_type, resolver.task_id) == ("ps", 0)
    assert resolver.rpc_layer == "grpc+verbs" and resolver.environment == "google"
    assert resolver.master() == "grpc+verbs://ps0:2222"


def test_setters(set_tf_config):
    set_tf_config({"cluster": CLUSTER, "task": {"type": "worker", "index": 0}})
    resolver = TFConfigClusterResolver()
    resolver.task_type, resolver.task_id, resolver.rpc_layer = "chief", 0, "grpc"
    assert resolver.master() == "grpc://c0:2222"


def test_index_as_a_string_is_an_integer(set_tf_config):
    set_tf_config({"cluster": CLUSTER, "task": {"type": "worker", "index": "1"}})
    assert TFConfigClusterResolver().task_id == 1


def test_master_arguments_name_another_task(set_tf_config):
    set_tf_config({"cluster": CLUSTER, "task": {"type": "worker", "index": 1},
                   "rpc_layer": "grpc"})
    resolver = TFConfigClusterResolver()
    assert resolver.master("chief", 0) == "grpc://c0:2222"
    assert resolver.master(task_id=0) == "grpc://w0:2222"
    assert resolver.master(rpc_layer="grpc+mpi") == "grpc+mpi://w1:2222"


def test_master_without_rpc_layer_is_the_bare_address(set_tf_config):
    set_tf_config({"cluster": CLUSTER, "task": {"type": "worker", "index": 0}})
    assert TFConfigClusterResolver().master() == "w0:2222"


def test_session_master_wins(set_tf_config):
    set_tf_config({"cluster": CLUSTER, "task": {"type": "worker", "index": 0},
                   "session_master": "grpc://elsewhere:1"})
    assert TFConfigClusterResolver().master() == "grpc://elsewhere:1"


def test_one_task_cluster_has_an_in_process_master(set_tf_config):
    set_tf_config({"cluster": {"worker": ["w0:2222"]}, "task": {"type": "worker", "index": 0},
                   "rpc_layer": "grpc"})
    assert TFConfigClusterResolver().master() == ""


def test_unset_variable_is_an_empty_config(set_tf_config):
    resolver = TFConfigClusterResolver()
    assert resolver.cluster_spec() == ClusterSpec({}) and not resolver.cluster_spec()
    assert resolver.task_type is None and resolver.task_id is None
    assert resolver.rpc_layer is None
    assert resolver.master() == ""


def test_no_task_section(set_tf_config):
    set_tf_config({"cluster": CLUSTER})
    resolver = TFConfigClusterResolver()
    assert resolver.task_type is None and resolver.task_id is None
    with pytest.raises(ValueError, match="has no \"task\".*pass task_type and task_id"):
        resolver.master()
    assert resolver.master("ps", 1) == "ps1:2222"


def test_master_of_a_task_not_in_the_cluster(set_tf_config):
    set_tf_config({"cluster": CLUSTER, "task": {"type": "evaluator", "index": 0}})
    with pytest.raises(ValueError, match="No such job in cluster: 'evaluator'"):
        TFConfigClusterResolver().master()


# ---- malformed TF_CONFIG -----------------------------------------------------------------

@pytest.mark.parametrize("value, message", [
    ('{"cluster": {"worker": ["w0:2222"]', r"TF_CONFIG is not valid JSON"),
    ("worker:0", r"TF_CONFIG is not valid JSON"),
    ('["w0:2222"]', r"TF_CONFIG must be a JSON object"),
    ('{"cluster": ["w0:2222"]}', r"TF_CONFIG\[\"cluster\"\] must map job names"),
    ('{"task": "worker:0"}', r"TF_CONFIG\[\"task\"\] must be an object"),
])
def test_malformed_variable_is_a_clear_value_error(set_tf_config, value, message):
    set_tf_config(value)
    resolver = TFConfigClusterResolver()
    with pytest.raises(ValueError, match=message):
        resolver.cluster_spec()
    with pytest.raises(ValueError, match=message):
        resolver.task_type  # noqa: B018


def test_index_not_an_integer(set_tf_config):
    set_tf_config({"cluster": CLUSTER, "task": {"type": "worker", "index": "first"}})
    with pytest.raises(ValueError, match=r"TF_CONFIG\[\"task\"\]\[\"index\"\] must be an "
                                         r"integer, got 'first'"):
        TFConfigClusterResolver().task_id  # noqa: B018


def test_bad_cluster_entries_are_cluster_spec_errors(set_tf_config):
    set_tf_config({"cluster": {"worker": "w0:2222"}})
    with pytest.raises(TypeError, match="The tasks for job 'worker' must be a list"):
        TFConfigClusterResolver().cluster_spec()


# ---- server_from_tf_config ------------------------------------------------------------

class StubServer:
    """Records how ``tf.train.Server`` was called."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None,
                 config=None, start=True):
        self.args = dict(server_or_cluster_def=server_or_cluster_def, job_name=job_name,
                         task_index=task_index, protocol=protocol, config=config, start=start)


@pytest.fixture
def stub_server(monkeypatch):
    """Puts :class:`StubServer` where ``minitf.distributed.server.Server`` will live."""
    module = types.ModuleType("minitf.distributed.server")
    module.Server = StubServer
    monkeypatch.setitem(sys.modules, "minitf.distributed.server", module)
    monkeypatch.setattr(sys.modules["minitf.distributed"], "server", module, raising=False)
    return StubServer


def test_server_from_tf_config(set_tf_config, stub_server):
    set_tf_config({"cluster": CLUSTER, "task": {"type": "ps", "index": 1}, "rpc_layer": "grpc"})
    config = tf.ConfigProto(allow_soft_placement=True)
    server = server_from_tf_config(config=config, start=False)
    assert isinstance(server, stub_server)
    assert server.args == dict(server_or_cluster_def=ClusterSpec(CLUSTER), job_name="ps",
                               task_index=1, protocol="grpc", config=config, start=False)


def test_server_from_tf_config_defaults_to_grpc_and_starting(set_tf_config, stub_server):
    set_tf_config({"cluster": CLUSTER, "task": {"type": "worker", "index": "0"}})
    server = server_from_tf_config()
    assert server.args["protocol"] == "grpc" and server.args["start"] is True
    assert server.args["task_index"] == 0 and server.args["config"] is None


@pytest.mark.parametrize("config, message", [
    (None, "TF_CONFIG names no cluster"),
    ({"task": {"type": "worker", "index": 0}}, "TF_CONFIG names no cluster"),
    ({"cluster": CLUSTER}, "TF_CONFIG has no \"task\""),
    ({"cluster": CLUSTER, "task": {"type": "worker"}}, "TF_CONFIG has no \"task\""),
    ({"cluster": CLUSTER, "task": {"type": "evaluator", "index": 0}},
     "TF_CONFIG names task evaluator:0, which its cluster .* does not contain"),
    ({"cluster": CLUSTER, "task": {"type": "worker", "index": 5}},
     "TF_CONFIG names task worker:5, which its cluster .* does not contain"),
])
def test_server_from_tf_config_errors(set_tf_config, stub_server, config, message):
    if config is not None:
        set_tf_config(config)
    with pytest.raises(ValueError, match=message):
        server_from_tf_config()


def test_load_tf_config_reads_a_given_environment():
    environ = {"TF_CONFIG": json.dumps({"task": {"type": "ps", "index": 0}})}
    assert tf_config.load_tf_config(environ) == {"task": {"type": "ps", "index": 0}}
    assert tf_config.load_tf_config({}) == {}
    assert tf_config.load_tf_config({"TF_CONFIG": "  "}) == {}
