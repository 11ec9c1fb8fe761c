"""The file of a durable session: its set-up cache, opening and resuming it, the write lock.

:class:`SessionFile` is the part of :class:`~labelwise.session.Session`
that reads and writes its SQLite file (:mod:`labelwise.store`).
:meth:`SessionFile.open` rebuilds a session from the file: the pool, the
draws, the labels replayed call by call as they arrived (so adaptive designs
end in the same state) and the random generator's state.  Every write holds
the file's write lock and first re-reads the file if another process wrote
to it since (:meth:`SessionFile._writing`).  The design's set-up (a sampler
that has seen no label) is stored with the file under a digest of
labelwise's code, so opening a session does not redo it unless the code
changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Self

import numpy as np

from .designs import design_from_spec
from .ledger import DrawLedger
from .measures import Measure, measure_from_spec
from .session_systems import resumed_sampler
from .store import Store, StoreError
from .store.answers import load_answers
from .store.codec import dump_sampler, load_sampler
from .store.withdrawals import load_withdrawn

__all__ = ["SessionFile"]


@cache
def _setup_tag() -> bytes:
    """Prefix of a stored set-up: a digest of labelwise's code, so a set-up stored by other code is redone."""
    digest = hashlib.sha256()
    for source in sorted(Path(__file__).parent.rglob("*.py")):
        digest.update(source.read_bytes())
    return b"setup " + digest.hexdigest().encode() + b"\n"


class SessionFile:
    """:meth:`open`, :meth:`close` and the file writes of :class:`~labelwise.session.Session`."""

    def _save_setup(self) -> None:
        """Store the design's set-up (a sampler that has seen no label), so opening the file skips it."""
        if self.store is not None:
            self.store.put_cache("sampler", _setup_tag() + dump_sampler(self.sampler))

    def _plan_for(self, budget: int) -> None:
        """Plan the design for ``budget`` labels if nothing was drawn yet and no budget was set (``run``), and
        keep the budget and the new set-up in the file, so that it reopens as this session."""
        with self._writing():  # on the file's latest state: another process may have drawn meanwhile
            if self.budget is not None or len(self.draws):
                return
            self.budget = budget
            self.sampler = self.design.start(self.pool, self.measure, rng=self.rng, budget=budget, oracle=self.oracle)
            if self.store is not None:
                self.store.keep_budget(budget, _setup_tag() + dump_sampler(self.sampler), self.rng.bit_generator.state)
                self._unsaved_setup = None

    @classmethod
    def open(cls, path: str | Path, measure: Measure | None = None) -> Self:
        """Resume a session from its file: pool, draws, labels and generator state.

        Parameters
        ----------
        path : str or Path
        measure : Measure, optional
            Required when the session's measure was user-defined (not stored).
        """
        store = Store.open(path)
        try:
            return cls._resume(store, measure)
        except BaseException:
            store.close()
            raise

    @classmethod
    def _resume(cls, store: Store, measure: Measure | None) -> Self:
        with store.reading():  # one snapshot: no other command's write lands in between
            config, state, revision = store.config(), store.rng_state(), store.revision()
            pool, draws, setup = store.load_pool(), store.load_draws(), store.cached("sampler")
            items, labels, calls, answered = store.load_labels()
            corrected, deferred, states = store.load_relabels(), store.load_deferred(), store.design_states()
            excluded, further, withdrawn = store.load_excluded(), load_answers(store), load_withdrawn(store)
        if config["measure"] is None and measure is None:
            raise ValueError("this session uses a user-defined measure: pass it again with measure=")
        name = str(state.get("bit_generator", "PCG64"))
        kind = getattr(np.random, name, None)
        if not (isinstance(kind, type) and issubclass(kind, np.random.BitGenerator)):
            raise StoreError(f"{str(store.path)!r}: unknown random generator {name!r} in the session file")
        # the seed sequence carries the hash seed (designs drawing by the item hash read it), the state the stream
        hash_seed = config.get("hash_seed")
        bit_generator = kind() if hash_seed is None else kind(np.random.SeedSequence(int(hash_seed)))
        bit_generator.state = state
        rng = np.random.Generator(bit_generator)
        measure = measure if measure is not None else measure_from_spec(config["measure"])
        sampler, tag = None, _setup_tag()
        if setup is not None and setup.startswith(tag):  # a set-up stored by other code is redone
            try:
                sampler = load_sampler(memoryview(setup)[len(tag):], pool, measure, rng)  # no copy
            except Exception:  # noqa: BLE001 - an unreadable set-up is only a lost shortcut
                sampler = None
        # files written before the oracle mode was the session's keep it in the design's spec
        oracle = config.get("oracle") or config["design"].get("oracle", "deterministic")
        self = cls(pool, measure, design_from_spec(config["design"]), oracle=oracle, budget=config.get("budget"),
                   seed=rng, level=float(config.get("level", 0.95)), sampler=sampler)
        if sampler is None:  # redone (the file's was stored by other code): kept, before any label, for the
            self.sampler = resumed_sampler(self, config)  # next write, so later opens skip it again
            self._unsaved_setup = dump_sampler(self.sampler)
        self._draw_parts = [draws] if len(draws) else []
        self.stage = int(draws.round.max()) + 1 if len(draws) else 0
        self.store, self._revision, self.deferred = store, revision, deferred
        if isinstance(self.ledger, DrawLedger):
            self.ledger.extend(len(draws))
        self.ledger.exclude(excluded)
        # replay the labels call by call, as they arrived, so adaptive designs end in the same state
        for chunk in np.split(np.arange(items.size), np.flatnonzero(np.diff(calls)) + 1):
            if chunk.size:
                self.ledger.record(answered[chunk], items[chunk], labels[chunk])
                self.sampler.observe(items[chunk], labels[chunk])
        self.ledger.correct(*corrected)  # corrections reach the estimates, not the design (as when made)
        if isinstance(self.ledger, DrawLedger):
            self.ledger.add_answers(*further)
        self.ledger.withdraw(*withdrawn)
        self.sampler.set_state(states)
        return self

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Hold the file's write lock, on the file's latest state: re-read it if another process wrote since.

        A failed write leaves memory possibly ahead of the file: the next write re-reads it.
        """
        if self.store is None:
            yield
            return
        done = False
        try:
            with self.store.writing():
                if self.store.revision() != self._revision:
                    self.__dict__.update(type(self)._resume(self.store, self.measure).__dict__)
                yield
                if self._unsaved_setup is not None:
                    self.store.put_cache("sampler", _setup_tag() + self._unsaved_setup)
                    self._unsaved_setup = None
                self._revision = self.store.revision()
            done = True
        finally:
            if not done:
                self._revision = -1

    def close(self) -> None:
        """Close the session file (the session stays usable in memory)."""
        if self.store is not None:
            self.store.close()
            self.store = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
