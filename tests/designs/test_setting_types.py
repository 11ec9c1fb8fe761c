"""Every registered design checks its settings against its fields' types, and the ranges of the shared ones."""

from __future__ import annotations

import re
from dataclasses import fields

import numpy as np
import pytest

from labelwise.designs import DESIGNS, make_design

SETTINGS = [(name, f.name, f.type) for name, cls in sorted(DESIGNS.items()) for f in fields(cls)]


@pytest.mark.parametrize(("design", "setting", "kind"), SETTINGS)
def test_every_setting_refuses_a_value_of_the_wrong_type(design, setting, kind):
    wrong = [1] if "str" in kind else "abc"  # text where a number or a flag belongs, else a list
    with pytest.raises(ValueError, match=rf"^design '{design}': {setting}: must be .*, got {re.escape(repr(wrong))}$"):
        make_design(design, **{setting: wrong})


@pytest.mark.parametrize(("design", "setting"), [(n, s) for n, s, k in SETTINGS if k == "int"])
def test_an_int_setting_refuses_a_fraction_and_takes_a_numpy_integer(design, setting):
    with pytest.raises(ValueError, match=rf"{setting}: must be an integer, got 2.5$"):
        make_design(design, **{setting: 2.5})
    value = getattr(make_design(design, **{setting: np.int64(2)}), setting)
    assert value == 2 and type(value) is int


@pytest.mark.parametrize("design", [n for n, s, _ in SETTINGS if s == "lam"])
def test_a_whole_number_for_a_float_setting_is_stored_as_a_float(design):
    value = make_design(design, lam=1).lam
    assert value == 1.0 and type(value) is float


@pytest.mark.parametrize("design", [n for n, s, _ in SETTINGS if s == "n_strata"])
def test_n_strata_must_be_positive(design):
    with pytest.raises(ValueError, match=rf"^design '{design}': n_strata: must be at least 1, got 0$"):
        make_design(design, n_strata=0)


@pytest.mark.parametrize("design", [n for n, s, _ in SETTINGS if s == "lam"])
@pytest.mark.parametrize("lam", [-0.1, 1.5])
def test_lam_must_lie_in_the_unit_interval(design, lam):
    with pytest.raises(ValueError, match=rf"^design '{design}': lam: must lie in \[0, 1\], got {lam}$"):
        make_design(design, lam=lam)


def test_a_flag_takes_only_true_or_false():
    assert make_design("online-poisson", tail_floor=np.bool_(False)).tail_floor is False
    with pytest.raises(ValueError, match="tail_floor: must be true or false, got 1$"):
        make_design("online-poisson", tail_floor=1)


def test_a_missing_value_is_refused():
    with pytest.raises(ValueError, match="hedge: must be a number, got nan$"):
        make_design("online-poisson", hedge=float("nan"))
