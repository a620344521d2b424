"""Regression tests for failures the Array API test suite found (docs/conformance.md)."""

from __future__ import annotations

import inspect

import numpy as np

import gpuarray as xp

from .conftest import assert_same


def test_elementwise_functions_have_standard_signatures():
    assert list(inspect.signature(xp.add).parameters) == ["x1", "x2"]
    assert all(p.kind is p.POSITIONAL_ONLY for p in inspect.signature(xp.add).parameters.values())
    assert list(inspect.signature(xp.exp).parameters) == ["x"]
    assert list(inspect.signature(xp.where).parameters) == ["condition", "x1", "x2"]
    axis = inspect.signature(xp.expand_dims).parameters["axis"]
    assert axis.kind is axis.POSITIONAL_OR_KEYWORD


def test_eye_far_diagonal_is_all_zeros(device):
    assert_same(xp.eye(3, 4, k=2**40, device=device), np.zeros((3, 4)))
    assert_same(xp.eye(3, k=-(2**40), dtype=xp.int8, device=device), np.zeros((3, 3), np.int8))


def test_asarray_big_uint64_list_is_exact(device):
    g = xp.asarray([2**63 + 1, 5], dtype=xp.uint64, device=device)
    assert g.tolist() == [2**63 + 1, 5]


def test_empty_boolean_mask(device):
    x = xp.asarray([False], device=device)
    assert x[xp.asarray(np.zeros(0, bool), device=device)].shape == (0,)
    z = xp.zeros((0, 1), device=device)
    assert z[xp.asarray(np.zeros((0, 0), bool), device=device)].shape == (0,)


def test_finfo_fields_are_python_floats():
    info = xp.finfo(xp.float32)
    assert type(info.eps) is float and type(info.max) is float


def test_floor_divide_after_widening_to_int64(device):
    a = xp.asarray(1, device=device)                       # default int (int64 where supported)
    b = xp.asarray(-2, dtype=xp.int8, device=device)
    assert int(a // b) == np.int64(1) // np.int64(-2)
    c = xp.asarray(np.array([-34], np.int64), device=device)
    d = xp.asarray(np.array([-93], np.int8), device=device)
    assert_same(c % d, np.array([-34], np.int64) % np.array([-93], np.int64))
