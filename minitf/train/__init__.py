"""``tf.train``: training and keeping models — optimizers, checkpoints, queues.

Each concept lives in its own module; this package re-exports the TF1 names.
"""

# Checkpoints: Saver, the state file, reading checkpoints, meta graphs.
from minitf.train.checkpoint_state import (
    CheckpointState, checkpoint_exists, get_checkpoint_mtimes, get_checkpoint_state,
    latest_checkpoint, update_checkpoint_state)
from minitf.train.checkpoint_utils import (
    NewCheckpointReader, list_variables, load_checkpoint, load_variable)
from minitf.train.saver import Saver, export_meta_graph, import_meta_graph
from minitf.train.saver_builder import SaverDef

# Input pipelines: queue runners and the coordinator that stops their threads.
from minitf.train import queue_runner  # noqa: E402 - tf.train.queue_runner.QueueRunner
from minitf.train.coordinator import Coordinator, LooperThread  # noqa: E402
from minitf.train.queue_runner import (  # noqa: E402
    QueueRunner, add_queue_runner, start_queue_runners)
