"""The measure registry: names on the command line and kinds in saved specs, in one table.

A measure becomes available by name with one call next to its class::

    @register_measure("specificity")
    class Specificity(BinaryMeasure):
        kind = "specificity"
        ...

after which ``make_measure("specificity,f1", pool, systems="all")`` builds
it for every system and ``measure_from_spec(m.spec())`` rebuilds it from a
session file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from numbers import Integral
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from .base import Measure, combine

if TYPE_CHECKING:
    from ..pool import Pool

__all__ = ["default_measure_name", "make_measure", "measure_from_spec", "measure_names", "register_measure"]

#: ``options(pool, system, arg) -> dict``: constructor arguments a name takes from the pool and from
#: the text after its colon (``"64"`` in ``pr_curve:64``; ``""`` when there is none).
Options = Callable[["Pool", int, str], dict]
F = TypeVar("F", bound=Callable[..., Measure])


@dataclass(frozen=True)
class _Entry:
    factory: Callable[..., Measure]
    options: Options | None
    usage: tuple[str, ...]


_REGISTRY: dict[str, _Entry] = {}


def register_measure(name: str, factory: F | None = None, *, options: Options | None = None,
                     usage: Sequence[str] | None = None, replace: bool = False) -> F | Callable[[F], F]:
    """Make a measure available by ``name`` to :func:`make_measure` and :func:`measure_from_spec`.

    Parameters
    ----------
    name : str
        Lower-case name without ``:`` or ``,``.  It is both the name on the
        command line and, for :func:`measure_from_spec`, the
        ``spec()["measure"]`` of the measures the factory builds.
    factory : callable, optional
        Builds the measure from keyword arguments: those of its spec (all
        but ``"measure"``) and, from a pool, ``system``, ``system_name`` and
        whatever ``options`` returns.  Usually the measure class.  Omit it to
        use ``register_measure`` as a class decorator.
    options : callable, optional
        ``options(pool, system, arg) -> dict`` of further constructor
        arguments when built from a pool: ``arg`` is the text after the
        colon of ``name:arg`` (``""`` when there is none), which is ignored
        when ``options`` is not given.
    usage : sequence of str, optional
        How the name is listed in :func:`measure_names` (default
        ``(name,)``); ``()`` registers an alias that is not listed.
    replace : bool
        Allow replacing a registered name (else a ValueError).

    Returns
    -------
    callable
        ``factory``, or the decorator that registers its argument and returns it.
    """
    if not name or name != name.strip().lower() or any(c in name for c in ":,"):
        raise ValueError(f"register_measure: name must be lower case without ':' or ',', got {name!r}")
    if name in _REGISTRY and not replace:
        raise ValueError(f"register_measure: {name!r} is already registered; pass replace=True to replace it")

    def register(f: F) -> F:
        _REGISTRY[name] = _Entry(f, options, (name,) if usage is None else tuple(usage))
        return f

    return register if factory is None else register(factory)


def default_measure_name(pool: Pool) -> str:
    """The measure a session estimates when none is named: F1 of the positive class on a binary pool, macro F1 on
    a multi-class pool, micro F1 over the labels on a multi-label pool."""
    if pool.label_names:
        return "multilabel_micro_f1"
    return "f1" if pool.n_classes == 2 else "macro_f1"


def measure_names() -> tuple[str, ...]:
    """The registered names as listed to users (``fbeta:<beta>`` for names that take an argument)."""
    return tuple(u for entry in _REGISTRY.values() for u in entry.usage)


def _one(name: str, pool: Pool, system: int) -> Measure:
    key, _, arg = name.strip().lower().partition(":")
    entry = _REGISTRY.get(key)
    if entry is None:
        raise ValueError(f"unknown measure {name!r}; choose from {', '.join(measure_names())}")
    if pool.n_classes > 2 and getattr(entry.factory, "classes", "any") == "binary":
        # a measure of two classes: class 1 would silently be taken against the others merged into one
        raise ValueError(f"measure {key!r} is defined for two classes, and this pool has {_fitting(pool)}")
    sys_name = pool.system_names[system] if pool.n_systems > 1 else None
    kwargs = entry.options(pool, system, arg) if entry.options else {}
    return entry.factory(system=system, system_name=sys_name, **kwargs)


def _fitting(pool: Pool) -> str:
    """The end of the refusal of a two-class measure on ``pool``: its size and every registered measure that fits it.

    A multi-label pool takes the measures of its labels and, on its label sets as classes, those of any number of
    classes (``accuracy`` is then the share of items whose every label is right).
    """
    def of(kind: str) -> str:
        return ", ".join(u for e in _REGISTRY.values() if getattr(e.factory, "classes", "any") == kind for u in e.usage)

    if pool.label_names:
        return (f"{len(pool.label_names)} labels; choose a measure of them all: {of('multilabel')}, or of the label "
                f"sets as classes: {of('any')}")
    return f"{pool.n_classes} classes; choose a measure of them all: {of('any')}"


def make_measure(names: str | Sequence[str], pool: Pool, systems: str | int | Sequence[int] = 0) -> Measure:
    """Build a measure from registered names for one or several systems of ``pool``.

    Parameters
    ----------
    names : str or sequence of str
        Comma-separated names (see :func:`measure_names`), each optionally
        ``name:arg`` (``fbeta:2``, ``pr_curve:64``); several names give a
        vector measure estimated from one sample.
    pool : Pool
        Supplies the systems, label set and score range.
    systems : "all", int or sequence of int
        Which systems to evaluate; several give one component per system.
        On a pool of several systems, component names carry the system's name.

    Returns
    -------
    Measure
        The single measure, or their combination name by name, system by system.

    Raises
    ------
    ValueError
        On an unknown name (listing the registered ones), no name, or a system out of range.
    PoolError
        When the pool lacks a system output the measure needs (predicted labels for F1, probabilities for the
        Brier score), found now rather than at the first estimate.
    """
    if isinstance(names, str):
        names = [n for n in names.split(",") if n.strip()]
    if not names:
        raise ValueError("measure: give at least one measure name, e.g. f1")
    if systems == "all":
        sys_list = list(range(pool.n_systems))
    elif isinstance(systems, Integral):
        sys_list = [systems]
    else:
        sys_list = [int(s) for s in systems]
    for s in sys_list:
        if not 0 <= s < pool.n_systems:
            raise ValueError(f"systems: index {s} out of range; the pool has {pool.n_systems} system(s)")
    measure = combine(*[_one(n, pool, s) for n in names for s in sys_list])
    if pool.n_items:  # the loss of one item reads every output the measure needs (Outputs.require)
        measure.loss(pool.outputs(slice(0, 1)), np.zeros(1, dtype=np.int64))
    return measure


def measure_from_spec(spec: dict) -> Measure:
    """Rebuild a measure from :meth:`Measure.spec` output.

    Parameters
    ----------
    spec : dict
        ``{"measure": <registered name>, <constructor arguments>}``, or
        ``{"combine": [<spec>, ...]}`` for a combined measure.

    Returns
    -------
    Measure
        Equal (``==``) to the measure the spec was taken from.

    Raises
    ------
    ValueError
        If ``spec["measure"]`` is not a registered name.
    """
    if "combine" in spec:
        return combine(*[measure_from_spec(s) for s in spec["combine"]])
    kind = spec["measure"]
    entry = _REGISTRY.get(kind)
    if entry is None:
        raise ValueError(f"measure spec: unknown measure {kind!r}; registered: {', '.join(_REGISTRY)}")
    return entry.factory(**{k: v for k, v in spec.items() if k != "measure"})
