"""matmul, tensordot, vecdot and the linalg extension against NumPy on both providers."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.exceptions import AxisError

import gpuarray as xp
from gpuarray.providers import wgpu_matmul
from gpuarray.render.wgsl_matmul import Tiles

from .conftest import assert_same

MATMUL_SHAPES = [
    ((5, 7), (7, 3)),
    ((70, 33), (33, 65)),          # not multiples of any tile
    ((3,), (3,)),
    ((2, 4, 5), (5,)),
    ((4,), (3, 4, 6)),
    ((2, 1, 3, 4), (5, 4, 2)),     # batch broadcasting
    ((0, 3), (3, 4)),
    ((3, 0), (0, 4)),              # K = 0: zeros
    ((2, 0, 4, 3), (3, 5)),
    ((1, 9), (9, 1)),
    ((130, 1), (1, 1)),
    ((1, 200), (200, 150)),
]
MATMUL_DTYPES = ["float32", "float64", "int32", "int8", "uint16", "int64", "uint64", "bool"]


def _rand(shape, dtype, seed=0, scale=4.0):
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) > 0.5
    if dt.kind == "u":
        return rng.integers(0, 9, shape).astype(dt)
    if dt.kind == "i":
        return rng.integers(-9, 9, shape).astype(dt)
    return (rng.standard_normal(shape) * scale).astype(dt)


def _tol(dt, k=1):
    dt = np.dtype(dt)
    if dt == np.float32:
        return {"rtol": 2e-5, "atol": 2e-5 * max(k, 1), "check_signed_zero": False}
    if dt == np.float64:
        return {"rtol": 1e-12, "atol": 1e-12 * max(k, 1), "check_signed_zero": False}
    return {}


@pytest.mark.parametrize("dtype", MATMUL_DTYPES)
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_against_numpy(device, shapes, dtype):
    a, b = _rand(shapes[0], dtype, 1), _rand(shapes[1], dtype, 2)
    got = xp.matmul(xp.asarray(a, device=device), xp.asarray(b, device=device))
    assert_same(got, np.matmul(a, b), **_tol(dtype, a.shape[-1]))


@pytest.mark.parametrize("d1,d2", [("int8", "float32"), ("int32", "uint8"), ("int16", "int64"),
                                   ("float32", "float64"), ("bool", "int16"), ("uint32", "int32")])
def test_matmul_promotion(device, d1, d2):
    a, b = _rand((3, 4), d1, 1), _rand((4, 2), d2, 2)
    got = xp.asarray(a, device=device) @ xp.asarray(b, device=device)
    assert_same(got, a @ b, **_tol(np.result_type(a, b), 4))


def test_matmul_integer_overflow_wraps(device):
    a = np.full((3, 40), 100, np.int8)
    b = np.full((40, 2), 7, np.int8)
    with np.errstate(over="ignore"):
        want = a @ b
    assert_same(xp.asarray(a, device=device) @ xp.asarray(b, device=device), want)
    u = np.full((2, 5), 2**31, np.uint32)
    assert_same(xp.asarray(u, device=device) @ xp.asarray(u.T.copy(), device=device), u @ u.T)


def test_matmul_views_and_prologue(device):
    a, b = _rand((6, 9), "float32", 1), _rand((11, 9), "float32", 2)
    ga, gb = xp.asarray(a, device=device), xp.asarray(b, device=device)
    assert_same(xp.matmul(ga * 2, gb.T), (a * 2) @ b.T, **_tol("float32", 9))
    assert_same(ga[::2, 1:] @ gb[1:9:2, 1:].T, a[::2, 1:] @ b[1:9:2, 1:].T, **_tol("float32", 8))
    assert_same(xp.exp(ga[:, :4]) @ xp.reshape(gb[:8, :], (8, 9))[:4, ::-1],
                np.exp(a[:, :4]) @ b[:8, :][:4, ::-1], rtol=1e-5, atol=1e-4, check_signed_zero=False)
    c = xp.broadcast_to(xp.asarray(b[:1], device=device), (9, 9))
    assert_same(ga @ c, a @ np.broadcast_to(b[:1], (9, 9)), **_tol("float32", 9))


def test_matmul_special_values(device):
    nan, inf = np.nan, np.inf
    a = np.array([[1.0, nan, 0.0], [inf, 1.0, 0.0], [0.0, 0.0, 0.0], [-inf, inf, 1.0]], np.float32)
    b = np.array([[1.0, 0.0], [2.0, 0.0], [3.0, -1.0]], np.float32)
    with np.errstate(invalid="ignore"):
        want = a @ b
    assert_same(xp.asarray(a, device=device) @ xp.asarray(b, device=device), want, check_signed_zero=False)


def test_matmul_operators(device):
    a, b = _rand((3, 4), "float64", 1), _rand((4, 4), "float64", 2)
    ga, gb = xp.asarray(a, device=device), xp.asarray(b, device=device)
    assert_same(ga @ b, a @ b, **_tol("float64", 4))
    r = a @ gb                                  # ndarray.__matmul__ defers to __rmatmul__
    assert isinstance(r, xp.GpuArray)
    assert_same(r, a @ b, **_tol("float64", 4))
    g = xp.asarray(a, device=device)
    g @= gb
    assert_same(g, a @ b, **_tol("float64", 4))
    gi = xp.asarray(np.ones((2, 2), np.int32), device=device)
    with pytest.raises(TypeError):
        gi @= xp.asarray(np.ones((2, 2)), device=device)     # float64 result into int32
    with pytest.raises(ValueError):
        g @= xp.asarray(np.ones((4, 2)), device=device)      # result shape differs


def test_matmul_errors(device):
    g = xp.asarray(np.ones((2, 3), np.float32), device=device)
    with pytest.raises(ValueError, match="core dimension"):
        xp.matmul(g, g)
    with pytest.raises(ValueError):
        xp.matmul(xp.asarray(np.ones((2, 2, 3)), device=device), xp.asarray(np.ones((3, 3, 2)), device=device))
    with pytest.raises(ValueError, match="0-d"):
        xp.matmul(xp.asarray(1.0, device=device), g)
    with pytest.raises(TypeError):
        g @ 2  # noqa: B018
    with pytest.raises(TypeError):
        xp.matmul(g, 2)
    with pytest.raises(TypeError):
        xp.matmul([1.0], [1.0])


@pytest.mark.parametrize("tiles", [Tiles(64, 64, 16, 4, 4), Tiles(32, 32, 16, 2, 2), Tiles(128, 1, 32, 1, 1),
                                   Tiles(1, 128, 32, 1, 1), Tiles(16, 48, 8, 2, 3), Tiles(16, 48, 8, 2, 3, False),
                                   Tiles(8, 8, 3, 1, 1)],
                         ids=str)
def test_matmul_tile_configurations(wgpu_device, monkeypatch, tiles):
    monkeypatch.setattr(wgpu_matmul, "choose_tiles", lambda m, n, k, dt: tiles)
    for s1, s2 in [((37, 29), (29, 41)), ((2, 5, 70), (70, 3)), ((1, 17), (17, 1))]:
        a, b = _rand(s1, "float32", 3), _rand(s2, "float32", 4)
        assert_same(xp.asarray(a, device=wgpu_device) @ xp.asarray(b, device=wgpu_device), a @ b,
                    **_tol("float32", s1[-1]))
        ai, bi = _rand(s1, "int16", 3), _rand(s2, "int16", 4)
        assert_same(xp.asarray(ai, device=wgpu_device) @ xp.asarray(bi, device=wgpu_device), ai @ bi)


def test_tiles_are_checked():
    with pytest.raises(ValueError):
        Tiles(64, 64, 16, 3, 4).check()
    with pytest.raises(ValueError):
        Tiles(128, 128, 8, 1, 1).check()


def test_matmul_is_one_dispatch_with_fused_prologue(wgpu_device):
    a, b = _rand((50, 40), "float32", 1), _rand((30, 40), "float32", 2)
    ga, gb = xp.asarray(a, device=wgpu_device), xp.asarray(b, device=wgpu_device)
    xp.evaluate(ga + 0, gb + 0)              # uploads done
    xp.reset_metrics()
    r = xp.matmul(ga * 2 + 1, gb.T)
    assert xp.metrics()["evaluations"] == 0  # lazy
    xp.evaluate(r)
    xp.synchronize(r.device)        # small work waits for later evaluations to share a submit
    m = xp.metrics()
    assert m["dispatches"] == 1 and m["host_fallbacks"] == 0 and m["submits"] == 1
    assert_same(r, (a * 2 + 1) @ b.T, **_tol("float32", 40))
    # same structure, other sizes and scalars: the compiled pipeline is reused
    a2, b2 = _rand((20, 7), "float32", 5), _rand((9, 7), "float32", 6)
    ga2, gb2 = xp.asarray(a2, device=wgpu_device), xp.asarray(b2, device=wgpu_device)
    xp.evaluate(ga2 + 0, gb2 + 0)
    xp.reset_metrics()
    r2 = xp.matmul(ga2 * 3 + 1, gb2.T)
    xp.evaluate(r2)
    assert xp.metrics()["kernels_compiled"] == 0
    assert_same(r2, (a2 * 3 + 1) @ b2.T, **_tol("float32", 7))


@pytest.mark.parametrize("s1,s2,axes", [((3, 4, 5), (4, 5, 2), 2), ((3, 4), (4, 5), 1), ((2, 3), (4,), 0),
                                        ((3, 4, 5), (5, 3, 2), ([0, 2], [1, 0])), ((2, 3), (3, 2), ((-1,), (0,))),
                                        ((0, 3), (3, 2), 1), ((3, 4), (3, 4), ([0, 1], [0, 1]))], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_tensordot(device, s1, s2, axes, dtype):
    a, b = _rand(s1, dtype, 1), _rand(s2, dtype, 2)
    got = xp.tensordot(xp.asarray(a, device=device), xp.asarray(b, device=device), axes=axes)
    assert_same(got, np.tensordot(a, b, axes=axes), **_tol(dtype, 20))


def test_tensordot_errors(device):
    g = xp.asarray(np.ones((2, 3)), device=device)
    with pytest.raises(ValueError):
        xp.tensordot(g, g, axes=1)
    with pytest.raises(ValueError):
        xp.tensordot(g, g, axes=3)
    with pytest.raises(ValueError):
        xp.tensordot(g, g, axes=-1)
    with pytest.raises(ValueError):
        xp.tensordot(g, g, axes=([0], [0, 1]))


@pytest.mark.parametrize("s1,s2,axis", [((5,), (5,), -1), ((3, 4), (4,), -1), ((2, 1, 3), (4, 3), -1),
                                        ((4, 3), (4, 3), -2), ((2, 4, 3), (2, 1, 3), 0), ((0, 3), (3,), -1),
                                        ((3, 0), (3, 0), -1)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16", "bool"])
def test_vecdot(device, s1, s2, axis, dtype):
    a, b = _rand(s1, dtype, 1), _rand(s2, dtype, 2)
    got = xp.vecdot(xp.asarray(a, device=device), xp.asarray(b, device=device), axis=axis)
    assert_same(got, np.vecdot(a, b, axis=axis), **_tol(dtype, 5))


def test_vecdot_errors(device):
    g = xp.asarray(np.ones((2, 3)), device=device)
    with pytest.raises(ValueError):
        xp.vecdot(g, xp.asarray(np.ones((2, 4)), device=device))
    with pytest.raises(AxisError):
        xp.vecdot(g, g, axis=-3)
    with pytest.raises(AxisError):
        xp.vecdot(g, xp.asarray(np.ones((2, 2, 3)), device=device), axis=0)   # ambiguous


def test_linalg_namespace_reexports():
    assert xp.linalg.matmul is xp.matmul
    assert xp.linalg.tensordot is xp.tensordot
    assert xp.linalg.vecdot is xp.vecdot
    assert xp.linalg.matrix_transpose is xp.matrix_transpose
    assert issubclass(xp.linalg.LinAlgError, ValueError)
    a = _rand((2, 3, 4), "float32")
    assert_same(xp.linalg.matrix_transpose(xp.asarray(a, device="cpu")), np.swapaxes(a, -1, -2))


def test_outer_diagonal_trace(device):
    u, v = _rand((4,), "float32", 1), _rand((3,), "int16", 2)
    gu, gv = xp.asarray(u, device=device), xp.asarray(v, device=device)
    assert_same(xp.linalg.outer(gu, gv), np.linalg.outer(u, v))
    assert_same(xp.linalg.outer(gv > 0, gv < 3), np.linalg.outer(v > 0, v < 3))
    with pytest.raises(ValueError):
        xp.linalg.outer(xp.asarray(np.ones((2, 2)), device=device), gu)
    a = _rand((2, 4, 5), "int32", 3)
    g = xp.asarray(a, device=device)
    for off in (-5, -3, -1, 0, 1, 2, 4, 5, 7):
        d = xp.linalg.diagonal(g, offset=off)
        assert d._node.op == "view"              # no copy
        assert_same(d, np.linalg.diagonal(a, offset=off))
        assert_same(xp.linalg.trace(g, offset=off), np.linalg.trace(a, offset=off))
    assert_same(xp.linalg.diagonal(g[:, ::-1, 1:]), np.linalg.diagonal(a[:, ::-1, 1:]))
    f = _rand((3, 3), "float32", 4)
    assert_same(xp.linalg.trace(xp.asarray(f, device=device)), np.linalg.trace(f), rtol=1e-6)
    assert_same(xp.linalg.trace(g, dtype=xp.float64), np.linalg.trace(a, dtype=np.float64))


@pytest.mark.parametrize("ord", [2, 1, np.inf, -np.inf, 0, 3, 0.5, -1])
@pytest.mark.parametrize("axis", [None, -1, (0, 2)], ids=repr)
def test_vector_norm(device, ord, axis):
    a = _rand((2, 3, 4), "float64", 1)
    a[0, 0, 0] = 0.0
    g = xp.asarray(a, device=device)
    with np.errstate(divide="ignore"):
        want = np.linalg.vector_norm(a, axis=axis, ord=ord)
        assert_same(xp.linalg.vector_norm(g, axis=axis, ord=ord), want, rtol=1e-12)
        assert_same(xp.linalg.vector_norm(g, axis=axis, ord=ord, keepdims=True),
                    np.linalg.vector_norm(a, axis=axis, ord=ord, keepdims=True), rtol=1e-12)
    f = a.astype(np.float32)
    assert_same(xp.linalg.vector_norm(xp.asarray(f, device=device), axis=axis, ord=2),
                np.linalg.vector_norm(f, axis=axis, ord=2), rtol=1e-5)


def test_vector_norm_integers_and_special(device):
    i = np.arange(-3, 4, dtype=np.int32)
    assert_same(xp.linalg.vector_norm(xp.asarray(i, device=device)), np.linalg.vector_norm(i), rtol=1e-12)
    s = np.array([1.0, np.nan, 3.0])
    assert_same(xp.linalg.vector_norm(xp.asarray(s, device=device)), np.linalg.vector_norm(s))
    s = np.array([1.0, np.inf, 3.0])
    assert_same(xp.linalg.vector_norm(xp.asarray(s, device=device), ord=np.inf), np.linalg.vector_norm(s, ord=np.inf))


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
def test_matrix_norm(device, ord):
    a = _rand((2, 3, 4), "float64", 1)
    g = xp.asarray(a, device=device)
    assert_same(xp.linalg.matrix_norm(g, ord=ord), np.linalg.matrix_norm(a, ord=ord), rtol=1e-12)
    assert_same(xp.linalg.matrix_norm(g, ord=ord, keepdims=True),
                np.linalg.matrix_norm(a, ord=ord, keepdims=True), rtol=1e-12)
    with pytest.raises(ValueError):
        xp.linalg.matrix_norm(g, ord=3)


@pytest.mark.parametrize("s1,s2,axis", [((3,), (3,), -1), ((4, 3), (3,), -1), ((3, 4), (3, 1), -2),
                                        ((2, 1, 3), (5, 3), -1), ((3, 2), (3, 2), 0)], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_cross(device, s1, s2, axis, dtype):
    a, b = _rand(s1, dtype, 1), _rand(s2, dtype, 2)
    got = xp.linalg.cross(xp.asarray(a, device=device), xp.asarray(b, device=device), axis=axis)
    assert_same(got, np.linalg.cross(a, b, axis=axis), **_tol(dtype, 3))


def test_cross_errors(device):
    g = xp.asarray(np.ones((2, 3)), device=device)
    with pytest.raises(ValueError):
        xp.linalg.cross(g, g, axis=-2)
    with pytest.raises(AxisError):
        xp.linalg.cross(g, g, axis=-3)
    with pytest.raises(TypeError):
        xp.linalg.cross(g > 0, g > 0)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1, -2])
def test_matrix_power(device, n):
    a = _rand((2, 3, 3), "float64", 1) / 4 + np.eye(3)
    assert_same(xp.linalg.matrix_power(xp.asarray(a, device=device), n), np.linalg.matrix_power(a, n),
                rtol=1e-10, atol=1e-12, check_signed_zero=False)
    i = _rand((3, 3), "int32", 2)
    if n >= 0:
        assert_same(xp.linalg.matrix_power(xp.asarray(i, device=device), n), np.linalg.matrix_power(i, n))
    with pytest.raises(np.linalg.LinAlgError):
        xp.linalg.matrix_power(xp.asarray(np.ones((2, 3)), device=device), 2)


# ---------------------------------------------------------------- decompositions
def _spd(shape, dtype, seed=0):
    a = _rand(shape, "float64", seed, 1.0)
    s = a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])
    return s.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("batch", [(), (3,), (2, 0)], ids=str)
def test_square_decompositions(device, dtype, batch):
    n = 4
    a = _rand(batch + (n, n), dtype, 1, 1.0) + np.eye(n, dtype=dtype) * 3
    s = _spd(batch + (n, n), dtype, 2)
    ga, gs = xp.asarray(a, device=device), xp.asarray(s, device=device)
    # on the wgpu device these five are blocked LU / Cholesky kernels (tests/test_linalg_device.py):
    # NumPy's values to a few ulps, not bit for bit
    tol = {"rtol": 0, "atol": 0} if device.kind == "cpu" else {"rtol": 8 * np.finfo(dtype).eps, "atol": 0}
    assert_same(xp.linalg.det(ga), np.linalg.det(a), **tol)
    sign, logabs = xp.linalg.slogdet(ga)
    want = np.linalg.slogdet(a)
    assert_same(sign, want.sign)
    assert_same(logabs, want.logabsdet, **tol)
    assert_same(xp.linalg.inv(ga), np.linalg.inv(a), rtol=tol["rtol"], atol=tol["rtol"])
    assert_same(xp.linalg.cholesky(gs), np.linalg.cholesky(s), rtol=tol["rtol"], atol=tol["rtol"])
    assert_same(xp.linalg.cholesky(gs, upper=True), np.linalg.cholesky(s, upper=True), rtol=tol["rtol"],
                atol=tol["rtol"])
    w, v = xp.linalg.eigh(gs)
    want_e = np.linalg.eigh(s)
    if device.kind == "cpu":
        assert_same(w, want_e.eigenvalues)
        assert_same(v, want_e.eigenvectors)
        assert_same(xp.linalg.eigvalsh(gs), np.linalg.eigvalsh(s))
    else:       # Jacobi on the device (tests/test_linalg_eigh_device.py): vectors up to sign
        etol = 32 * np.finfo(dtype).eps * float(np.abs(want_e.eigenvalues).max(initial=0))
        assert_same(w, want_e.eigenvalues, atol=etol)
        assert_same(xp.linalg.eigvalsh(gs), want_e.eigenvalues, atol=etol)
        np.testing.assert_allclose(np.abs(np.sum(np.asarray(v) * want_e.eigenvectors, axis=-2)), 1,
                                   atol=64 * float(np.finfo(dtype).eps))
    b = _rand(batch + (n, 2), dtype, 3)
    assert_same(xp.linalg.solve(ga, xp.asarray(b, device=device)), np.linalg.solve(a, b), rtol=tol["rtol"],
                atol=tol["rtol"])
    vec = _rand((n,), dtype, 4)
    assert_same(xp.linalg.solve(ga, xp.asarray(vec, device=device)), np.linalg.solve(a, vec), rtol=tol["rtol"],
                atol=tol["rtol"])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 4, 4), (1, 1), (0, 3), (0, 2, 3)], ids=str)
def test_rectangular_decompositions(device, dtype, shape):
    a = _rand(shape, dtype, 1, 1.0)
    g = xp.asarray(a, device=device)
    # qr runs on the device on wgpu (Householder QR, the same reflectors as LAPACK's): within rounding
    big = max(1.0, float(np.abs(a).max(initial=0)))
    tol = 16 * max(shape) * np.finfo(dtype).eps * big if device.kind == "wgpu" else 0.0
    for mode in ("reduced", "complete"):
        q, r = xp.linalg.qr(g, mode=mode)
        want = np.linalg.qr(a, mode=mode)
        assert_same(q, want.Q, atol=tol, check_signed_zero=not tol)
        assert_same(r, want.R, atol=tol, check_signed_zero=not tol)
    for full in (True, False):
        u, s, vh = xp.linalg.svd(g, full_matrices=full)
        want_s = np.linalg.svd(a, full_matrices=full)
        if device.kind == "cpu" or 0 in shape:
            assert_same(u, want_s.U)
            assert_same(s, want_s.S)
            assert_same(vh, want_s.Vh)
            continue
        # one-sided Jacobi on the device (tests/test_linalg_svd_device.py): vectors up to sign
        k = min(shape[-2:])
        assert_same(s, want_s.S, atol=tol)
        assert u.shape == want_s.U.shape and vh.shape == want_s.Vh.shape
        np.testing.assert_allclose(np.abs(np.sum(np.asarray(u)[..., :k] * want_s.U[..., :k], axis=-2)), 1, atol=tol)
        np.testing.assert_allclose((np.asarray(u)[..., :k] * np.asarray(s)[..., None, :]) @ np.asarray(vh)[..., :k, :],
                                   a, atol=tol)
    assert_same(xp.linalg.svdvals(g), np.linalg.svdvals(a), atol=tol)
    # pinv and matrix_rank from the device's svd on wgpu: pinv within rounding
    assert_same(xp.linalg.pinv(g), np.linalg.pinv(a, rtol=None), atol=16 * tol, check_signed_zero=not tol)
    assert_same(xp.linalg.matrix_rank(g), np.asarray(np.linalg.matrix_rank(a), np.int64))


def test_rank_and_pinv_rtol(device):
    a = np.diag([1.0, 1e-3, 1e-9]) @ _rand((3, 3), "float64", 1)
    g = xp.asarray(a, device=device)
    # on wgpu from the device's svd (one-sided Jacobi): the 1e-9 singular value to about 1e-7 relatively
    prtol = 0.0 if device.kind == "cpu" else 1e-6
    for rtol in (None, 1e-6, 1e-2, 0.5):
        assert_same(xp.linalg.matrix_rank(g, rtol=rtol), np.asarray(np.linalg.matrix_rank(a, rtol=rtol), np.int64))
        assert_same(xp.linalg.pinv(g, rtol=rtol), np.linalg.pinv(a, rtol=rtol), rtol=prtol, atol=prtol,
                    check_signed_zero=not prtol)
    stack = np.stack([a, a])
    rt = np.array([1e-6, 1e-2])
    assert_same(xp.linalg.matrix_rank(xp.asarray(stack, device=device), rtol=xp.asarray(rt, device=device)),
                np.linalg.matrix_rank(stack, rtol=rt).astype(np.int64))
    assert_same(xp.linalg.pinv(xp.asarray(stack, device=device), rtol=xp.asarray(rt, device=device)),
                np.linalg.pinv(stack, rtol=rt))


def test_decomposition_of_integers_and_prologue(device):
    a = np.array([[2, 1], [1, 3]], np.int32)
    g = xp.asarray(a, device=device)
    assert_same(xp.linalg.det(g), np.linalg.det(a))
    assert_same(xp.linalg.inv(g * 2 + g.T), np.linalg.inv(a * 2 + a.T))
    assert_same(xp.linalg.solve(g, xp.asarray(np.array([1, 2]), device=device)), np.linalg.solve(a, [1, 2]))


@pytest.mark.parametrize("dt", ["float32", "complex64"])
def test_eigh_and_slogdet_parts_are_arrays_of_their_own(device, dt):
    """The host path's results (eigh of one matrix, slogdet) are arrays of their own, as NumPy's are, not views of
    one packed result: an update of the vectors in place (scikit-learn's ``svd_flip``) leaves the values as they
    were, and writes no region of a shared array."""
    if dt == "complex64" and not device.supports(np.dtype(dt)):
        pytest.skip(f"{dt} is not supported on {device}")
    a = _rand((6, 6), "float32", 3) + 6 * np.eye(6, dtype=np.float32)
    a = (a + a.T).astype(dt)
    w, v = xp.linalg.eigh(xp.asarray(a, device=device))
    want_w, want_v = np.linalg.eigh(a)
    assert w._view is None and v._view is None
    v *= 2
    v[0] = 0
    assert_same(w, want_w, rtol=2e-5, atol=2e-5)
    got = np.asarray(v)
    assert np.all(got[0] == 0)
    np.testing.assert_allclose(np.abs(got[1:]), 2 * np.abs(want_v[1:]), rtol=2e-4, atol=2e-4)
    stack = np.stack([a, -a, 2 * a])
    sign, logabs = xp.linalg.slogdet(xp.asarray(stack, device=device))
    want = np.linalg.slogdet(stack)
    assert sign._view is None and logabs._view is None and sign.shape == logabs.shape == (3,)
    assert_same(sign, want[0], rtol=1e-5, atol=1e-6)
    assert_same(logabs, want[1], rtol=1e-5)


def test_decompositions_run_on_host_and_stay_on_device(wgpu_device):
    a = _rand((3, 3), "float32", 1) + 3 * np.eye(3, dtype=np.float32)
    g = xp.asarray(a, device=wgpu_device)
    xp.evaluate(g + 0)
    xp.reset_metrics()
    q = xp.linalg.eigvalsh(xp.eye(70, device=wgpu_device) * g[0, 0])      # eigh past 64 rows: LAPACK
    assert xp.metrics()["host_fallbacks"] == 1          # evaluated at the call, on the host
    assert q.device == wgpu_device
    xp.reset_metrics()
    q = xp.linalg.qr(g * 2).R
    assert xp.metrics()["host_fallbacks"] == 0          # Householder QR on the device (_linalg_householder)
    assert q.device == wgpu_device
    xp.reset_metrics()
    r = xp.linalg.inv(g * 2)
    assert xp.metrics()["host_fallbacks"] == 0          # blocked LU on the device (_linalg_lu)
    assert r.device == wgpu_device
    u = r @ g                                           # continues on the device
    xp.evaluate(u)
    assert xp.metrics()["dispatches"] >= 1
    assert_same(u, np.linalg.inv(a * 2) @ a, rtol=1e-5, atol=1e-5, check_signed_zero=False)


def test_linalg_errors(device):
    sing = xp.asarray(np.array([[1.0, 2.0], [2.0, 4.0]]), device=device)
    with pytest.raises(np.linalg.LinAlgError, match="[Ss]ingular"):
        xp.linalg.inv(sing)
    with pytest.raises(xp.linalg.LinAlgError):
        xp.linalg.solve(sing, xp.asarray(np.ones(2), device=device))
    with pytest.raises(xp.linalg.LinAlgError, match="positive definite"):
        xp.linalg.cholesky(xp.asarray(-np.eye(2), device=device))
    rect = xp.asarray(np.ones((2, 3)), device=device)
    for fn in (xp.linalg.det, xp.linalg.inv, xp.linalg.eigh, xp.linalg.cholesky, xp.linalg.slogdet):
        with pytest.raises(xp.linalg.LinAlgError):
            fn(rect)
    with pytest.raises(xp.linalg.LinAlgError):
        xp.linalg.svd(xp.asarray(np.ones(3), device=device))
    with pytest.raises(ValueError):
        xp.linalg.solve(xp.asarray(np.eye(2), device=device), xp.asarray(np.ones(3), device=device))
    with pytest.raises(ValueError):
        xp.linalg.qr(rect, mode="r")
    assert_same(xp.linalg.det(sing), np.linalg.det(np.array([[1.0, 2.0], [2.0, 4.0]])))
