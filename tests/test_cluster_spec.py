"""``tf.train.ClusterSpec``: TF1's map of jobs to tasks to addresses.

The expectations are TF 1.x's documented behaviour (``server_lib.py``): dense
jobs as lists, sparse ones as ``{index: address}``, ``ValueError`` for an
unknown job or task, ``TypeError`` for values of the wrong type, and a real
``tf.train.ClusterDef`` protocol buffer.
"""

import subprocess
import sys

import pytest

import minitf as tf
from minitf.distributed.cluster_spec import ClusterSpec

pytest.importorskip("tensorboard.compat.proto.cluster_pb2")
from tensorboard.compat.proto import cluster_pb2  # noqa: E402

DENSE = {"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}
SPARSE = {"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:2222"]}


def test_exported_as_tf_train_names():
    assert tf.train.ClusterSpec is ClusterSpec
    assert tf.train.ClusterDef is cluster_pb2.ClusterDef
    assert tf.train.JobDef is cluster_pb2.JobDef


# ---- the jobs and their tasks -------------------------------------------------------

def test_dense_jobs():
    cluster = ClusterSpec(DENSE)
    assert cluster.jobs == ["worker", "ps"]  # in the order given, as TF's dict order
    assert cluster.num_tasks("worker") == 3 and cluster.num_tasks("ps") == 2
    assert cluster.task_indices("worker") == [0, 1, 2]
    assert cluster.task_address("worker", 2) == "w2:2222"
    assert cluster.task_address("ps", 0) == "ps0:2222"
    assert cluster.job_tasks("ps") == ["ps0:2222", "ps1:2222"]
    assert cluster.as_dict() == DENSE


def test_tuples_are_lists_of_addresses():
    cluster = ClusterSpec({"ps": ("a:1", "b:1")})
    assert cluster.as_dict() == {"ps": ["a:1", "b:1"]}


def test_sparse_jobs():
    cluster = ClusterSpec(SPARSE)
    assert cluster.num_tasks("worker") == 2
    assert cluster.task_indices("worker") == [1, 3]
    assert cluster.task_address("worker", 3) == "w3:2222"
    # job_tasks stays a list indexed by task, with None where no task is.
    assert cluster.job_tasks("worker") == [None, "w1:2222", None, "w3:2222"]
    assert cluster.as_dict() == {"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:2222"]}


def test_a_sparse_job_that_happens_to_be_dense_is_a_list():
    assert ClusterSpec({"ps": {1: "b:1", 0: "a:1"}}).as_dict() == {"ps": ["a:1", "b:1"]}


def test_task_indices_given_as_strings_are_integers():
    # JSON (TF_CONFIG) can only spell a sparse job's indices as strings.
    cluster = ClusterSpec({"worker": {"2": "w2:2222"}})
    assert cluster.task_indices("worker") == [2]
    assert cluster.task_address("worker", 2) == "w2:2222"


def test_a_job_without_tasks():
    cluster = ClusterSpec({"ps": [], "worker": ["w0:1"]})
    assert cluster.num_tasks("ps") == 0 and cluster.task_indices("ps") == []
    assert cluster.as_dict() == {"ps": {}, "worker": ["w0:1"]}


def test_bytes_names_and_addresses_become_text():
    cluster = ClusterSpec({b"ps": [b"ps0:2222"]})
    assert cluster.jobs == ["ps"] and cluster.task_address("ps", 0) == "ps0:2222"


# ---- errors --------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda c: c.num_tasks("chief"), lambda c: c.task_indices("chief"),
    lambda c: c.task_address("chief", 0), lambda c: c.job_tasks("chief")])
def test_unknown_job_is_a_value_error(call):
    with pytest.raises(ValueError, match=r"^No such job in cluster: 'chief'$"):
        call(ClusterSpec(DENSE))


@pytest.mark.parametrize("job, index", [("worker", 3), ("worker", -1), ("ps", 7)])
def test_unknown_task_is_a_value_error(job, index):
    with pytest.raises(ValueError, match=r"^No task with index %d in job '%s'$" % (index, job)):
        ClusterSpec(DENSE).task_address(job, index)


def test_missing_task_of_a_sparse_job_is_a_value_error():
    with pytest.raises(ValueError, match="No task with index 0 in job 'worker'"):
        ClusterSpec(SPARSE).task_address("worker", 0)


@pytest.mark.parametrize("cluster", [None, "ps:2222", ["ps0:2222"], 42])
def test_not_a_cluster_is_a_type_error(cluster):
    with pytest.raises(TypeError, match="`cluster` must be a dictionary mapping one or more "
                                        "job names to lists of network addresses"):
        ClusterSpec(cluster)


def test_tasks_neither_list_nor_dict_are_a_type_error():
    with pytest.raises(TypeError, match="The tasks for job 'ps' must be a list or a "
                                        "dictionary from integers to strings"):
        ClusterSpec({"ps": "ps0:2222"})


def test_job_name_not_a_string_is_a_type_error():
    with pytest.raises(TypeError, match="Job name 3 must be bytes or unicode"):
        ClusterSpec({3: ["a:1"]})


def test_task_address_not_a_string_is_a_type_error():
    with pytest.raises(TypeError, match="Task address 2222 must be bytes or unicode"):
        ClusterSpec({"ps": [2222]})


def test_task_index_not_an_integer_is_a_value_error():
    with pytest.raises(ValueError, match="Task index 'one' of job 'ps' is not an integer"):
        ClusterSpec({"ps": {"one": "a:1"}})


# ---- the ClusterDef protocol buffer ------------------------------------------------------

def test_as_cluster_def_is_a_sorted_cluster_def():
    cluster_def = ClusterSpec(DENSE).as_cluster_def()
    assert isinstance(cluster_def, cluster_pb2.ClusterDef)
    assert [job.name for job in cluster_def.job] == ["ps", "worker"]  # sorted, deterministic
    worker = cluster_def.job[1]
    assert dict(worker.tasks) == {0: "w0:2222", 1: "w1:2222", 2: "w2:2222"}


def test_cluster_def_keeps_sparse_indices():
    cluster_def = ClusterSpec(SPARSE).as_cluster_def()
    assert dict(cluster_def.job[1].tasks) == {1: "w1:2222", 3: "w3:2222"}


def test_from_a_cluster_def():
    cluster_def = cluster_pb2.ClusterDef(job=[
        cluster_pb2.JobDef(name="ps", tasks={0: "ps0:2222"}),
        cluster_pb2.JobDef(name="worker", tasks={0: "w0:2222", 2: "w2:2222"})])
    cluster = ClusterSpec(cluster_def)
    assert cluster.jobs == ["ps", "worker"]
    assert cluster.as_dict() == {"ps": ["ps0:2222"], "worker": {0: "w0:2222", 2: "w2:2222"}}
    assert cluster.as_cluster_def() == cluster_def


def test_round_trip_through_the_proto_and_its_bytes():
    cluster = ClusterSpec(SPARSE)
    wire = cluster.as_cluster_def().SerializeToString()
    again = ClusterSpec(cluster_pb2.ClusterDef.FromString(wire))
    assert again == cluster and again.as_dict() == cluster.as_dict()


def test_from_another_cluster_spec_is_an_equal_copy():
    original = ClusterSpec(DENSE)
    copy = ClusterSpec(original)
    assert copy == original and copy is not original
    assert copy.as_cluster_def() == original.as_cluster_def()


# ---- equality, truth, printing ---------------------------------------------------------

def test_equality():
    assert ClusterSpec(DENSE) == ClusterSpec(dict(reversed(list(DENSE.items()))))
    assert ClusterSpec({"ps": ["a:1"]}) == ClusterSpec({"ps": {0: "a:1"}})
    assert ClusterSpec({"ps": ["a:1"]}) != ClusterSpec({"ps": ["b:1"]})
    assert ClusterSpec({"ps": ["a:1"]}) != ClusterSpec({"worker": ["a:1"]})
    assert not ClusterSpec({"ps": ["a:1"]}) != ClusterSpec({"ps": ["a:1"]})


def test_bool_is_whether_there_are_jobs():
    assert not ClusterSpec({})
    assert ClusterSpec({"ps": ["a:1"]})


def test_repr_and_str_as_tf():
    cluster = ClusterSpec({"worker": ["w0:1"], "ps": {1: "ps1:1"}})
    expected = "ClusterSpec({'ps': {1: 'ps1:1'}, 'worker': ['w0:1']})"  # jobs sorted
    assert repr(cluster) == expected and str(cluster) == expected
    assert repr(ClusterSpec({})) == "ClusterSpec({})"


# ---- TF's protos load on first use --------------------------------------------------

def test_import_minitf_loads_no_proto_module():
    """``import minitf`` loads neither TF's protos nor the protobuf library (they
    take tens of milliseconds); dict ClusterSpecs need neither, and a missing
    package is an ImportError that says what to install."""
    program = "\n".join([
        "import sys",
        "import minitf as tf",
        "loaded = [m for m in sys.modules if m.startswith(('google.protobuf', 'tensorboard'))]",
        "assert not loaded, loaded",
        "cluster = tf.train.ClusterSpec({'ps': ['a:1']})",
        "assert cluster.task_address('ps', 0) == 'a:1'",
        "sys.modules['tensorboard'] = None  # as if not installed",
        "for use in (lambda: tf.train.ClusterDef, lambda: cluster.as_cluster_def(),",
        "            lambda: tf.GraphDef):",
        "    try:",
        "        use()",
        "    except ImportError as error:",
        "        assert 'pip install protobuf tensorboard' in str(error), error",
        "    else:",
        "        raise AssertionError('no ImportError')",
        "print('ok')"])
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "ok"


def test_unknown_train_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="ServerDefinition"):
        tf.train.ServerDefinition  # noqa: B018
