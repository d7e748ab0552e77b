"""``tf.train``: training and keeping models — optimizers, checkpoints, queues.

Each concept lives in its own module; this package re-exports the TF1 names.
"""

# Checkpoints: Saver, the state file, reading checkpoints, meta graphs.
from minitf.train.checkpoint_state import (
    CheckpointState, checkpoint_exists, get_checkpoint_mtimes, get_checkpoint_state,
    latest_checkpoint, update_checkpoint_state)
from minitf.train.checkpoint_utils import (
    NewCheckpointReader, init_from_checkpoint, list_variables, load_checkpoint, load_variable)
from minitf.train.saver import Saver, export_meta_graph, import_meta_graph
from minitf.train.saver_builder import SaverDef
from minitf.framework.graph_io import write_graph

# Input pipelines: queue runners and the coordinator that stops their threads.
from minitf.train import queue_runner  # noqa: E402 - tf.train.queue_runner.QueueRunner
from minitf.train.coordinator import Coordinator, LooperThread  # noqa: E402
from minitf.train.queue_runner import (  # noqa: E402
    QueueRunner, add_queue_runner, start_queue_runners)
from minitf.train.input import (  # noqa: E402
    batch, batch_join, input_producer, limit_epochs, range_input_producer, shuffle_batch,
    shuffle_batch_join, slice_input_producer, string_input_producer)

# Optimizers, the global step, learning-rate schedules.
from minitf.train.adadelta import AdadeltaOptimizer  # noqa: E402
from minitf.train.adagrad import AdagradOptimizer  # noqa: E402
from minitf.train.adagrad_da import AdagradDAOptimizer  # noqa: E402
from minitf.train.adam import AdamOptimizer  # noqa: E402
from minitf.train.ftrl import FtrlOptimizer  # noqa: E402
from minitf.train.gradient_descent import GradientDescentOptimizer  # noqa: E402
from minitf.train.learning_rate_decay import (  # noqa: E402
    cosine_decay, cosine_decay_restarts, exponential_decay, inverse_time_decay,
    linear_cosine_decay, natural_exp_decay, noisy_linear_cosine_decay, piecewise_constant,
    polynomial_decay)
from minitf.train.learning_rate_decay import (  # noqa: E402 - TF1's other spelling
    piecewise_constant as piecewise_constant_decay)
from minitf.train.momentum import MomentumOptimizer  # noqa: E402
from minitf.train.optimizer import Optimizer  # noqa: E402
from minitf.train.proximal_adagrad import ProximalAdagradOptimizer  # noqa: E402
from minitf.train.proximal_gradient_descent import (  # noqa: E402
    ProximalGradientDescentOptimizer)
from minitf.train.rmsprop import RMSPropOptimizer  # noqa: E402
from minitf.train.sync_replicas_optimizer import SyncReplicasOptimizer  # noqa: E402
from minitf.train.training_util import (  # noqa: E402
    assert_global_step, create_global_step, get_global_step, get_or_create_global_step,
    global_step)
from minitf.summary import summary_iterator  # noqa: E402 - TF1 spells it tf.train.summary_iterator

# Monitored sessions and their hooks: the TF1 training loop.
from minitf.train.basic_session_run_hooks import (  # noqa: E402
    CheckpointSaverHook, CheckpointSaverListener, FeedFnHook, FinalOpsHook,
    GlobalStepWaiterHook, LoggingTensorHook, NanLossDuringTrainingError, NanTensorHook,
    SecondOrStepTimer, StepCounterHook, StopAtStepHook, SummarySaverHook)
from minitf.train.monitored_session import (  # noqa: E402
    ChiefSessionCreator, MonitoredSession, MonitoredTrainingSession, Scaffold, SessionCreator,
    SingularMonitoredSession, WorkerSessionCreator)
from minitf.train.session_manager import SessionManager  # noqa: E402
from minitf.train.session_run_hook import (  # noqa: E402
    SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues)

# Distributed training: the cluster and its servers, variables on ps tasks.
from minitf.distributed.cluster_spec import ClusterSpec  # noqa: E402
# TF1 has the last two as tf.contrib.training.*; minitf has no contrib.
from minitf.train.device_setter import (  # noqa: E402
    GreedyLoadBalancingStrategy, byte_size_load_fn, replica_device_setter)

# TF's cluster protos, tf.train.ClusterDef and tf.train.JobDef: loaded on first
# use, as every proto module (minitf.framework.protos).
_PROTOS = {"ClusterDef": "cluster_pb2", "JobDef": "cluster_pb2"}
# tf.train.Example and its parts (minitf.framework.example_proto), also on first use.
_EXAMPLE_PROTOS = ("BytesList", "Example", "Feature", "FeatureList", "FeatureLists", "Features",
                   "FloatList", "Int64List", "SequenceExample")
# tf.train.Server and tf.train.ServerDef need grpcio (minitf[distributed]).
_SERVER_NAMES = ("Server", "ServerDef")


def __getattr__(name):
    """``tf.train.ClusterDef``, ``JobDef``, ``Server``, ``ServerDef``, ``Example`` ...:
    imported on first use."""
    if name in _PROTOS:
        from minitf.framework import protos
        return getattr(protos.load(_PROTOS[name]), name)
    if name in _EXAMPLE_PROTOS:
        from minitf.framework import example_proto
        return getattr(example_proto, name)
    if name in _SERVER_NAMES:
        from minitf.distributed import server
        return getattr(server, name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
