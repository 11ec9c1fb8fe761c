"""The unlabeled pool: item ids and the outputs of one or more systems per item."""

from .core import MAX_LABELS, Outputs, Pool, PoolError, decode_multilabel, encode_multilabel, multilabel_joint

__all__ = [
    "MAX_LABELS",
    "Outputs",
    "Pool",
    "PoolError",
    "decode_multilabel",
    "encode_multilabel",
    "multilabel_joint",
]
