"""How the session file encodes what it stores: pool arrays, item ids, generator states and the design's set-up.

* Arrays are compressed ``.npy`` bytes (zlib, ``LWZ`` prefix); float64
  columns that float32 holds exactly are stored as float32; large integer
  columns in the narrowest integer type holding them, with their own type
  (``LWN`` prefix: a tenth of the bytes to decompress for labels and
  predictions).  Files written before compression hold plain ``.npy``
  blobs, still read.
* Item ids ``0..N-1`` are stored as their count (``LWR``); string ids as
  their UTF-8 bytes joined by NUL (``LWS``, zlib-compressed), so the file and
  the memory they take are proportional to the bytes of the ids.
* The design's set-up (a started :class:`~labelwise.designs.Sampler`) is
  pickled without the pool, the measure and the generator, its large
  integer arrays in the narrowest integer type that holds them, and
  unpickled by a loader that only builds labelwise classes and NumPy arrays.
"""

from __future__ import annotations

import io
import json
import pickle
import zlib

import numpy as np

__all__ = ["decode_array", "dump_sampler", "dump_state", "encode_array", "load_sampler", "load_state"]

_ZIP, _RANGE, _STRINGS, _NARROWED = b"LWZ", b"LWR", b"LWS", b"LWN"

#: Integer arrays of at least this many elements are stored in the narrowest integer type holding their values.
_NARROW_FROM = 1 << 12


def _narrowest(arr: np.ndarray) -> np.dtype:
    """The smallest integer type holding every value of ``arr`` (its own type if no smaller one does)."""
    small = np.result_type(np.min_scalar_type(int(arr.min())), np.min_scalar_type(int(arr.max())))
    return small if small.kind in "iu" else arr.dtype


def encode_array(arr: np.ndarray) -> bytes:
    """Compact bytes of a pool array (see the module docstring)."""
    if arr.dtype == object:
        return _STRINGS + zlib.compress("\x00".join(arr.tolist()).encode("utf-8"), 1)
    if arr.ndim == 1 and arr.dtype.kind in "iu" and arr.size and arr[0] == 0 and np.all(np.diff(arr) == 1):
        return _RANGE + str(arr.size).encode()
    if arr.dtype == np.float64:
        small = arr.astype(np.float32)
        if np.array_equal(small, arr, equal_nan=True):
            arr = small
    if arr.dtype.kind in "iu" and arr.size >= _NARROW_FROM:
        small_type = _narrowest(arr)
        if small_type.itemsize < arr.dtype.itemsize:  # its own type, then the compressed narrow array
            return _NARROWED + arr.dtype.str.encode() + b"\x00" + zlib.compress(_npy(arr.astype(small_type)), 1)
    raw = _npy(arr)
    packed = zlib.compress(raw, 1)
    # scores rarely compress: stored raw they open without a decompression pass (1 s at 10^7 items)
    return _ZIP + packed if len(packed) < 0.8 * len(raw) else raw


def _npy(arr: np.ndarray) -> bytes:
    """``arr`` as ``.npy`` bytes."""
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return buf.getvalue()


def decode_array(data: bytes) -> np.ndarray:
    """The array :func:`encode_array` encoded (float32 columns come back as float64)."""
    head, body = data[:3], data[3:]
    if head == _STRINGS:
        return np.array(zlib.decompress(body).decode("utf-8").split("\x00"), dtype=object)
    if head == _RANGE:
        return np.arange(int(body), dtype=np.int64)
    if head == _NARROWED:
        dtype, _, packed = body.partition(b"\x00")
        return np.load(io.BytesIO(zlib.decompress(packed)), allow_pickle=False).astype(dtype.decode())
    arr = np.load(io.BytesIO(zlib.decompress(body) if head == _ZIP else data), allow_pickle=False)
    return arr.astype(np.float64) if arr.dtype == np.float32 else arr


def dump_state(state: dict) -> str:
    """JSON of a bit generator's state (MT19937 and Philox states hold arrays)."""

    def enc(v):
        if isinstance(v, np.ndarray):
            return {"__ndarray__": v.tolist(), "dtype": str(v.dtype)}
        if isinstance(v, dict):
            return {k: enc(x) for k, x in v.items()}
        if isinstance(v, np.integer):
            return int(v)
        return v

    return json.dumps(enc(state))


def load_state(obj):
    """The state :func:`dump_state` wrote (after ``json.loads``)."""
    if isinstance(obj, dict):
        if "__ndarray__" in obj:
            return np.asarray(obj["__ndarray__"], dtype=obj["dtype"])
        return {k: load_state(v) for k, v in obj.items()}
    return obj


# ------------------------------------------------------------ the design's set-up
_POOL_FIELDS = ("preds", "scores", "probs", "labels", "features", "item_ids")
_NUMPY = {"dtype", "ndarray", "_frombuffer", "_reconstruct", "scalar"}
_BUILTINS = {"set", "frozenset", "slice", "range", "complex"}


def _layout(arr: np.ndarray) -> tuple:
    """Where an array's elements sit: equal for an array and any whole view of it."""
    return arr.__array_interface__["data"][0], arr.shape, arr.strides, arr.dtype.str


def _widened(arr: np.ndarray, dtype: str) -> np.ndarray:
    """``arr`` back in the integer type it was set up in (see :func:`dump_sampler`)."""
    return arr.astype(dtype)


def dump_sampler(sampler) -> bytes:
    """A started sampler, without the pool, measure and generator it shares with the session (zlib)."""
    pool = sampler.pool
    shared = {id(pool): "pool", id(sampler.measure): "measure", id(sampler.rng): "rng"}
    fields = [f for f in _POOL_FIELDS if getattr(pool, f) is not None]
    shared.update({id(getattr(pool, f)): f"pool.{f}" for f in fields})
    arrays = {_layout(getattr(pool, f)): f"pool.{f}" for f in fields}

    class _Pickler(pickle.Pickler):
        def persistent_id(self, obj):
            key = shared.get(id(obj))
            if key is None and isinstance(obj, np.ndarray) and obj.dtype != object:
                key = arrays.get(_layout(obj))
            return key

        def reducer_override(self, obj):
            if isinstance(obj, np.ndarray) and obj.dtype.kind in "iu" and obj.size >= _NARROW_FROM:
                small = _narrowest(obj)
                if small.itemsize < obj.dtype.itemsize:
                    return _widened, (obj.astype(small), obj.dtype.str)
            return NotImplemented

    buf = io.BytesIO()
    _Pickler(buf, protocol=5).dump(sampler)
    return zlib.compress(buf.getvalue(), 1)


def load_sampler(data: bytes, pool, measure, rng):
    """The sampler :func:`dump_sampler` stored, sharing ``pool``, ``measure`` and ``rng``.

    Only labelwise classes, NumPy arrays and a few builtin containers are
    built: a tampered file cannot run code through it.
    """
    objects = {"pool": pool, "measure": measure, "rng": rng}
    objects.update({f"pool.{f}": getattr(pool, f) for f in _POOL_FIELDS})

    class _Unpickler(pickle.Unpickler):
        def find_class(self, module, name):
            found = super().find_class(module, name)
            if (module.startswith("labelwise.") and isinstance(found, type)) or found is _widened or (
                    module.split(".")[0] == "numpy" and (name in _NUMPY or module == "numpy.dtypes")) or (
                    module == "builtins" and name in _BUILTINS):
                return found
            raise pickle.UnpicklingError(f"{module}.{name} is not part of a design's set-up")

        def persistent_load(self, pid):
            return objects[pid]

    return _Unpickler(io.BytesIO(zlib.decompress(data))).load()
