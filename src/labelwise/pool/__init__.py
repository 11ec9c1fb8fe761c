"""The unlabeled pool: item ids and the outputs of one or more systems per item.

* :mod:`~labelwise.pool.core` -- :class:`Pool` and :class:`Outputs`, the in-memory arrays;
* :mod:`~labelwise.pool.checks` -- their validation;
* :mod:`~labelwise.pool.multilabel` -- multi-label pools as ``2^C`` label codes;
* :mod:`~labelwise.pool.readers` -- pool, label and batch files.
"""

from .core import Outputs, Pool
from .errors import PoolError
from .multilabel import (
    MAX_LABELS,
    decode_multilabel,
    encode_multilabel,
    multilabel_joint,
)
from .readers import (
    LabelFileError,
    batch_frame,
    read_labels_file,
    read_pool_file,
    write_batch,
)

__all__ = [
    "MAX_LABELS",
    "LabelFileError",
    "Outputs",
    "Pool",
    "PoolError",
    "batch_frame",
    "decode_multilabel",
    "encode_multilabel",
    "multilabel_joint",
    "read_labels_file",
    "read_pool_file",
    "write_batch",
]
