"""WGSL for ``eigvals`` of small real matrices: LAPACK's ``dgeev`` path for eigenvalues only, one
thread a matrix working on it in place in a global-memory scratch buffer (``providers/wgpu_hqr.py``
runs it; stacks run in parallel).

Per matrix, as ``dgeev`` with ``jobvl = jobvr = 'N'`` (Reference-LAPACK, ported with 1-based
indices through ``hh(i, j)`` / ``hs(i, j, v)``):

- ``dgeev``'s scaling: the largest ``|a_ij|`` outside ``[sqrt(safmin) / ulp, its reciprocal]``
  scales the matrix into that range (the eigenvalues are scaled back at the end); an element that
  is not finite raises flag 0 (NumPy's "Array must not contain infs or NaNs") and stops;
- ``dgebal('B')``: permutations isolating eigenvalues (rows, then columns, with zeros off the
  diagonal), then scaling of rows and columns by powers of 2 until their norms are within a factor
  0.95 (at most ``MAX_BALANCE_PASSES`` passes: LAPACK has no bound; a GPU thread must have one);
  the scale factors sit in the eigenvalues' imaginary slots meanwhile;
- ``dgehd2``: Householder reduction of rows and columns ``ilo..ihi`` to upper Hessenberg form
  (``dlarfg``, scaled 2-norms);
- ``dhseqr`` / ``dlahqr`` with ``wantt = wantz = false``: the isolated eigenvalues copied, then the
  double-shift Francis QR iteration with deflation on the active block ``l..i``: the small
  subdiagonal test (Ahues and Tisseur's), exceptional shifts every 10th iteration without a
  deflation (``dat1 = 3/4``, ``dat2 = -0.4375``), the bulge chase by 3-element reflectors, at most
  ``30 * max(10, nh)`` iterations a block (flag 1: "Eigenvalues did not converge");
  1x1 blocks give real eigenvalues, 2x2 blocks ``dlanv2``'s standardization (a complex conjugate
  pair, or two real ones).

Output per matrix ``b`` at ``O[4 + b * 2n ..]``: the ``n`` real parts, then the ``n`` imaginary
parts, in LAPACK's order (positions on the diagonal); ``O[0]``: a matrix not finite, ``O[1]``: no
convergence, ``O[2]``: an imaginary part is not zero (NumPy then returns complex eigenvalues),
``O[3]``: a matrix unfinished after the last dispatch.

The work is cut into units with a bound on their loop iterations (phase 0: the scaling; 1, 2: a
permutation pass; 3: a balancing row; 4: a Hessenberg column; 5: a QR iteration; 6: the end), and
each matrix keeps its phase and loop variables in ``S``: lavapipe (Mesa's llvmpipe) ends every
loop of an invocation once 65535 iterations have run in all, so there the kernel runs with a budget
(``CPU_BUDGET``) and one matrix a workgroup, dispatched until done (``providers/wgpu_hqr.py``);
other adapters take one dispatch without a budget.

>>> src = hqr_source("f64")
>>> "fn lanv2" in src and "fn larfg" in src
True
"""

from __future__ import annotations

import functools

from .wgsl_hqr_lib import HELPERS as _HELPERS
from .wgsl_linalg import _shader

THREADS = 64                 # matrices a workgroup (one thread each)
MAX_BALANCE_PASSES = 200     # dgebal's scaling sweeps (each changes some scale by a power of 2)
NS = 11                      # state slots a matrix (S)
FLAG_COUNT = 4               # O[0..4): not finite, not converged, complex, unfinished
CPU_BUDGET = 60000           # loop iterations a dispatch on lavapipe (which ends loops after 65535)

# dlamch: 'S' (safe minimum), 'P' (eps * base), 'E' (eps); dlanv2's SAFMN2 = 2^int(log2(S / P) / 2);
# dgebal's SFMIN1 = S / P; dlarfg's SAFMIN = S / E; dgeev's SMLNUM = sqrt(S) / P.
_CONSTS = {
    "f64": {"SAFMIN": 2.0 ** -1022, "ULP": 2.0 ** -52, "SAFMN2": 2.0 ** -485, "SFMIN1": 2.0 ** -970,
            "RFGMIN": 2.0 ** -969, "SMLNUM": 2.0 ** -459},
    "f32": {"SAFMIN": 2.0 ** -126, "ULP": 2.0 ** -23, "SAFMN2": 2.0 ** -51, "SFMIN1": 2.0 ** -103,
            "RFGMIN": 2.0 ** -102, "SMLNUM": 2.0 ** -40},
}

# The state a matrix keeps between dispatches (S[sb + 0..NS)), and the stop when the next unit of
# work could pass the budget of loop iterations (lavapipe ends every loop of an invocation after
# 65535 iterations in all: Mesa's gallivm loop limiter).
_SAVE = """S[sb] = T(phase); S[sb + 1u] = T(klo); S[sb + 2u] = T(lhi); S[sb + 3u] = T(cur);
S[sb + 4u] = T(kdefl); S[sb + 5u] = T(its); S[sb + 6u] = anrm; S[sb + 7u] = cscale;
S[sb + 8u] = select(T(0), T(1), noconv); S[sb + 9u] = T(passes); S[sb + 10u] = T(lq);
if (prm[4] != 0u && phase != 7) { O[3] = T(1); }
return;"""


def _stop(cost: str) -> str:
    return f"if (used + ({cost}) > budget) {{ {_SAVE} }}\n      used = used + ({cost});\n"


_HEAD_STATE = """  let mi = id * THREADSu + lid;
  if (mi >= prm[0]) { return; }
  let n = i32(prm[1]);
  let nu = prm[1];
  let nn = nu * nu;
  gn = n;
  gb = mi * nn;
  let ob = FLAGSu + mi * 2u * nu;
  let sb = mi * NSu;
  let budget = prm[3];
  var used = 0u;
  var phase = 0;
  var klo = 1;
  var lhi = n;
  var cur = 0;
  var kdefl = 0;
  var its = 0;
  var anrm = T(0);
  var cscale = T(0);
  var noconv = true;
  var passes = 0;
  var lq = 0;
  if (prm[2] == 0u) {
    phase = i32(S[sb]); klo = i32(S[sb + 1u]); lhi = i32(S[sb + 2u]); cur = i32(S[sb + 3u]);
    kdefl = i32(S[sb + 4u]); its = i32(S[sb + 5u]); anrm = S[sb + 6u]; cscale = S[sb + 7u];
    noconv = S[sb + 8u] != T(0); passes = i32(S[sb + 9u]); lq = i32(S[sb + 10u]);
  }
  if (phase == 7) { return; }
  let cperm = 3u * nn + nu + 16u;
  let cscl = 8u * nu + 2u * FEXPu + 16u;
  let chess = 4u * nn + 27u * nu + 64u;
  let csweep = nu * (2u * nu + 45u) + 2u * nu + 64u;
"""

# phase 0: dgeev's finiteness check and scaling into [SMLNUM, 1 / SMLNUM]
_SCALE = """  if (phase == 0) {
    used = 2u * nn + 8u;
    for (var e = 0u; e < nn; e++) {
      let x = W[gb + e];
      if (!ga_isfinite_S(x)) {
        O[0] = T(1);
        phase = 7;
        S[sb] = T(7);
        return;
      }
      anrm = max(anrm, abs(x));
    }
    if (anrm > T(0) && anrm < T(SMLNUM)) { cscale = T(SMLNUM); }
    if (anrm > T(1) / T(SMLNUM)) { cscale = T(1) / T(SMLNUM); }
    if (cscale != T(0)) {
      let f = cscale / anrm;
      for (var e = 0u; e < nn; e++) { W[gb + e] = W[gb + e] * f; }
    }
    phase = 1;
  }
"""

# phases 1 - 3: dgebal('B'): rows isolated (a pass a unit), columns isolated, then scaling (a row a
# unit); klo = ilo, lhi = ihi; the scale factors of rows klo..lhi in O[ob + n + i - 1]
_BALANCE = """  if (phase == 1) {
    loop {
      if (!noconv) { phase = 2; noconv = true; break; }
      """ + _stop("cperm") + """      noconv = false;
      let l0 = lhi;
      var isolated = false;
      for (var i = l0; i >= 1; i--) {
        var canswap = true;
        for (var j = 1; j <= lhi; j++) {
          if (i != j && hh(i, j) != T(0)) { canswap = false; break; }
        }
        if (canswap) {
          if (i != lhi) {
            for (var r = 1; r <= lhi; r++) { swap(r, i, r, lhi); }
            for (var c = klo; c <= n; c++) { swap(i, c, lhi, c); }
          }
          noconv = true;
          if (lhi == 1) { isolated = true; break; }
          lhi = lhi - 1;
        }
      }
      if (isolated) { phase = 4; cur = klo; break; }
    }
  }
  if (phase == 2) {
    loop {
      if (!noconv) {
        for (var i = klo; i <= lhi; i++) { O[ob + u32(n + i - 1)] = T(1); }
        phase = 3; cur = klo; noconv = false; passes = 1;
        break;
      }
      """ + _stop("cperm") + """      noconv = false;
      let k0 = klo;
      for (var j = k0; j <= lhi; j++) {
        var canswap = true;
        for (var i = klo; i <= lhi; i++) {
          if (i != j && hh(i, j) != T(0)) { canswap = false; break; }
        }
        if (canswap) {
          if (j != klo) {
            for (var r = 1; r <= lhi; r++) { swap(r, j, r, klo); }
            for (var c = klo; c <= n; c++) { swap(j, c, klo, c); }
          }
          noconv = true;
          klo = klo + 1;
        }
      }
    }
  }
  if (phase == 3) {
    loop {
      if (cur > lhi) {
        if (!noconv || passes >= MAXPASS) { phase = 4; cur = klo; break; }
        noconv = false; passes = passes + 1; cur = klo;
      }
      """ + _stop("cscl") + """      let i = cur;
      cur = cur + 1;
      var c = colnrm(i, klo, lhi);
      var r = rownrm(i, klo, lhi);
      var ca = T(0);
      for (var q = 1; q <= lhi; q++) { ca = max(ca, abs(hh(q, i))); }
      var ra = T(0);
      for (var q = klo; q <= n; q++) { ra = max(ra, abs(hh(i, q))); }
      if (c == T(0) || r == T(0)) { continue; }
      var g = r / T(2);
      var f = T(1);
      let s = c + r;
      loop {
        if (!(c < g && max(max(f, c), ca) < T(0.5) / T(SFMIN1) && min(min(r, g), ra) > T(2) * T(SFMIN1))) { break; }
        f = f * T(2); c = c * T(2); ca = ca * T(2); r = r / T(2); g = g / T(2); ra = ra / T(2);
      }
      g = c / T(2);
      loop {
        if (!(g >= r && max(r, ra) < T(0.5) / T(SFMIN1) && min(min(f, c), min(g, ca)) > T(2) * T(SFMIN1))) { break; }
        f = f / T(2); c = c / T(2); g = g / T(2); ca = ca / T(2); r = r * T(2); ra = ra * T(2);
      }
      if (c + r >= T(0.95) * s) { continue; }
      let sci = O[ob + u32(n + i - 1)];
      if (f < T(1) && sci < T(1)) {
        if (f * sci <= T(SFMIN1)) { continue; }
      }
      if (f > T(1) && sci > T(1)) {
        if (sci >= (T(1) / T(SFMIN1)) / f) { continue; }
      }
      g = T(1) / f;
      O[ob + u32(n + i - 1)] = sci * f;
      noconv = true;
      for (var q = klo; q <= n; q++) { hs(i, q, hh(i, q) * g); }
      for (var q = 1; q <= lhi; q++) { hs(q, i, hh(q, i) * f); }
    }
  }
"""

# phase 4: dgehd2 on rows and columns ilo..ihi, a column a unit (the reflectors are not kept);
# then dhseqr's isolated eigenvalues and the start of the QR iteration (cur = i, lq = l)
_HESSENBERG = """  if (phase == 4) {
    let ilo = klo;
    let ihi = lhi;
    loop {
      if (cur > ihi - 1) {
        phase = 5;
        for (var q = 1; q <= n; q++) {
          if (q < ilo || q > ihi || ilo == ihi) {
            O[ob + u32(q - 1)] = hh(q, q);
            O[ob + u32(n + q - 1)] = T(0);
          }
        }
        cur = select(ihi, ilo - 1, ilo == ihi);
        lq = ilo; its = 0; kdefl = 0;
        break;
      }
      """ + _stop("chess") + """      let i = cur;
      cur = cur + 1;
      var alpha = hh(i + 1, i);
      var tau = T(0);
      if (ihi - i > 1) {
        var xnorm = colnrm(i, i + 2, ihi);
        if (xnorm != T(0)) {
          var beta = -sgn(lapy2(alpha, xnorm), alpha);
          var knt = 0;
          if (abs(beta) < T(RFGMIN)) {
            loop {
              knt = knt + 1;
              for (var q = i + 2; q <= ihi; q++) { hs(q, i, hh(q, i) / T(RFGMIN)); }
              beta = beta / T(RFGMIN);
              alpha = alpha / T(RFGMIN);
              if (!(abs(beta) < T(RFGMIN) && knt < 20)) { break; }
            }
            xnorm = colnrm(i, i + 2, ihi);
            beta = -sgn(lapy2(alpha, xnorm), alpha);
          }
          tau = (beta - alpha) / beta;
          let sc = T(1) / (alpha - beta);
          for (var q = i + 2; q <= ihi; q++) { hs(q, i, hh(q, i) * sc); }
          for (var q = 0; q < knt; q++) { beta = beta * T(RFGMIN); }
          alpha = beta;
        }
      }
      if (tau != T(0)) {
        for (var r = 1; r <= ihi; r++) {
          var w = hh(r, i + 1);
          for (var q = i + 2; q <= ihi; q++) { w = w + hh(r, q) * hh(q, i); }
          w = w * tau;
          hs(r, i + 1, hh(r, i + 1) - w);
          for (var q = i + 2; q <= ihi; q++) { hs(r, q, hh(r, q) - w * hh(q, i)); }
        }
        for (var c = i + 1; c <= n; c++) {
          var w = hh(i + 1, c);
          for (var q = i + 2; q <= ihi; q++) { w = w + hh(q, i) * hh(q, c); }
          w = w * tau;
          hs(i + 1, c, hh(i + 1, c) - w);
          for (var q = i + 2; q <= ihi; q++) { hs(q, c, hh(q, c) - w * hh(q, i)); }
        }
      }
      hs(i + 1, i, alpha);
      for (var q = i + 2; q <= ihi; q++) { hs(q, i, T(0)); }
    }
  }
"""

# phase 5: dlahqr (wantt = wantz = false) on the active block lq..cur, an iteration a unit;
# eigenvalues into O[ob + i - 1] (real) and O[ob + n + i - 1] (imaginary)
_HQR = """  if (phase == 5) {
    let ilo = klo;
    let ihi = lhi;
    let nh = ihi - ilo + 1;
    let smlnum = T(SAFMIN) * (T(nh) / T(ULP));
    let itmax = 30 * max(10, nh);
    loop {
      let i = cur;
      if (i < ilo) { phase = 6; break; }
      if (its > itmax) {
        O[1] = T(1);
        phase = 7;
        S[sb] = T(7);
        return;
      }
      """ + _stop("csweep") + """      var k = i;
      loop {
        if (k < lq + 1) { break; }
        if (abs(hh(k, k - 1)) <= smlnum) { break; }
        var tst = abs(hh(k - 1, k - 1)) + abs(hh(k, k));
        if (tst == T(0)) {
          if (k - 2 >= ilo) { tst = tst + abs(hh(k - 1, k - 2)); }
          if (k + 1 <= ihi) { tst = tst + abs(hh(k + 1, k)); }
        }
        if (abs(hh(k, k - 1)) <= T(ULP) * tst) {
          let ab = max(abs(hh(k, k - 1)), abs(hh(k - 1, k)));
          let ba = min(abs(hh(k, k - 1)), abs(hh(k - 1, k)));
          let aa = max(abs(hh(k, k)), abs(hh(k - 1, k - 1) - hh(k, k)));
          let bb = min(abs(hh(k, k)), abs(hh(k - 1, k - 1) - hh(k, k)));
          let s = aa + ab;
          if (ba * (ab / s) <= max(smlnum, T(ULP) * (bb * (aa / s)))) { break; }
        }
        k = k - 1;
      }
      let l = k;
      lq = l;
      if (l > ilo) { hs(l, l - 1, T(0)); }
      if (l >= i - 1) {
        if (l == i) {
          O[ob + u32(i - 1)] = hh(i, i);
          O[ob + u32(n + i - 1)] = T(0);
        } else {
          var rt: array<T, 4>;
          lanv2(hh(i - 1, i - 1), hh(i - 1, i), hh(i, i - 1), hh(i, i), &rt);
          O[ob + u32(i - 2)] = rt[0];
          O[ob + u32(n + i - 2)] = rt[1];
          O[ob + u32(i - 1)] = rt[2];
          O[ob + u32(n + i - 1)] = rt[3];
        }
        kdefl = 0;
        cur = l - 1;
        lq = ilo;
        its = 0;
        continue;
      }
      its = its + 1;
      kdefl = kdefl + 1;
      let i1 = l;
      let i2 = i;
      var h11 = T(0);
      var h12 = T(0);
      var h21 = T(0);
      var h22 = T(0);
      if (kdefl % 20 == 0) {
        let s = abs(hh(i, i - 1)) + abs(hh(i - 1, i - 2));
        h11 = T(0.75) * s + hh(i, i);
        h12 = T(-0.4375) * s;
        h21 = s;
        h22 = h11;
      } else if (kdefl % 10 == 0) {
        let s = abs(hh(l + 1, l)) + abs(hh(l + 2, l + 1));
        h11 = T(0.75) * s + hh(l, l);
        h12 = T(-0.4375) * s;
        h21 = s;
        h22 = h11;
      } else {
        h11 = hh(i - 1, i - 1);
        h21 = hh(i, i - 1);
        h12 = hh(i - 1, i);
        h22 = hh(i, i);
      }
      let s = abs(h11) + abs(h12) + abs(h21) + abs(h22);
      var rt1r = T(0);
      var rt1i = T(0);
      var rt2r = T(0);
      var rt2i = T(0);
      if (s != T(0)) {
        h11 = h11 / s;
        h21 = h21 / s;
        h12 = h12 / s;
        h22 = h22 / s;
        let tr = (h11 + h22) / T(2);
        let det = (h11 - tr) * (h22 - tr) - h12 * h21;
        let rtdisc = sqrt(abs(det));
        if (det >= T(0)) {
          rt1r = tr * s;
          rt2r = rt1r;
          rt1i = rtdisc * s;
          rt2i = -rt1i;
        } else {
          rt1r = tr + rtdisc;
          rt2r = tr - rtdisc;
          if (abs(rt1r - h22) <= abs(rt2r - h22)) {
            rt1r = rt1r * s;
            rt2r = rt1r;
          } else {
            rt2r = rt2r * s;
            rt1r = rt2r;
          }
        }
      }
      var m = i - 2;
      var v1 = T(0);
      var v2 = T(0);
      var v3 = T(0);
      loop {
        var h21s = hh(m + 1, m);
        var s2 = abs(hh(m, m) - rt2r) + abs(rt2i) + abs(h21s);
        h21s = hh(m + 1, m) / s2;
        v1 = h21s * hh(m, m + 1) + (hh(m, m) - rt1r) * ((hh(m, m) - rt2r) / s2) - rt1i * (rt2i / s2);
        v2 = h21s * (hh(m, m) + hh(m + 1, m + 1) - rt1r - rt2r);
        v3 = h21s * hh(m + 2, m + 1);
        s2 = abs(v1) + abs(v2) + abs(v3);
        v1 = v1 / s2;
        v2 = v2 / s2;
        v3 = v3 / s2;
        if (m == l) { break; }
        let h00 = abs(hh(m, m - 1)) * (abs(v2) + abs(v3));
        let h01 = T(ULP) * abs(v1) * (abs(hh(m - 1, m - 1)) + abs(hh(m, m)) + abs(hh(m + 1, m + 1)));
        if (h00 <= h01) { break; }
        m = m - 1;
      }
      for (var kk = m; kk <= i - 1; kk++) {
        let nr = min(3, i - kk + 1);
        if (kk > m) {
          v1 = hh(kk, kk - 1);
          v2 = hh(kk + 1, kk - 1);
          if (nr == 3) { v3 = hh(kk + 2, kk - 1); }
        }
        let t1 = larfg(nr, &v1, &v2, &v3);
        if (kk > m) {
          hs(kk, kk - 1, v1);
          hs(kk + 1, kk - 1, T(0));
          if (kk < i - 1) { hs(kk + 2, kk - 1, T(0)); }
        } else if (m > l) {
          hs(kk, kk - 1, hh(kk, kk - 1) * (T(1) - t1));
        }
        let t2 = t1 * v2;
        let t3 = t1 * v3;
        let three = nr == 3;
        for (var j = kk; j <= i2; j++) {
          var sum = hh(kk, j) + v2 * hh(kk + 1, j);
          if (three) { sum = sum + v3 * hh(kk + 2, j); }
          hs(kk, j, hh(kk, j) - sum * t1);
          hs(kk + 1, j, hh(kk + 1, j) - sum * t2);
          if (three) { hs(kk + 2, j, hh(kk + 2, j) - sum * t3); }
        }
        for (var j = i1; j <= select(i, min(kk + 3, i), three); j++) {
          var sum = hh(j, kk) + v2 * hh(j, kk + 1);
          if (three) { sum = sum + v3 * hh(j, kk + 2); }
          hs(j, kk, hh(j, kk) - sum * t1);
          hs(j, kk + 1, hh(j, kk + 1) - sum * t2);
          if (three) { hs(j, kk + 2, hh(j, kk + 2) - sum * t3); }
        }
      }
    }
  }
"""

# phase 6: dgeev's eigenvalues scaled back; the complex flag
_FINISH = """  if (phase == 6) {
    var cplx = false;
    for (var q = 0u; q < 2u * nu; q++) {
      var x = O[ob + q];
      if (cscale != T(0)) {
        x = (x / cscale) * anrm;
        O[ob + q] = x;
      }
      if (q >= nu && x != T(0)) { cplx = true; }
    }
    if (cplx) { O[2] = T(1); }
    phase = 7;
    S[sb] = T(7);
  }
"""



@functools.cache
def hqr_source(t: str, threads: int = THREADS) -> str:
    """``prm``: [batch, n, first, budget, last]: resume the eigenvalue computation of each ``n x n``
    matrix of ``W`` (contiguous; overwritten) from its state in ``S`` (``first``: from the start),
    stopping where the next unit of work would pass ``budget`` loop iterations; results to
    ``O[4 + b * 2n ..]`` (real parts, then imaginary parts), the flags in ``O[0..4)`` (``last``: a
    matrix not finished raises ``O[3]``). ``threads``: matrices a workgroup (1: each loop counts
    for one matrix alone, as the budget assumes)."""
    fexp = 970 if t == "f64" else 104
    body = (_HEAD_STATE + _SCALE + _BALANCE + _HESSENBERG + _HQR + _FINISH
            + "  " + _SAVE.replace("\n", "\n  ") + "\n")
    text = _HELPERS + "\n"
    for name, value in _CONSTS[t].items():
        body = body.replace(name, repr(value))
        text = text.replace(name, repr(value))
    body = (body.replace("THREADS", str(threads)).replace("FLAGS", str(FLAG_COUNT)).replace("NSu", f"{NS}u")
            .replace("MAXPASS", str(MAX_BALANCE_PASSES)).replace("FEXP", str(fexp)))
    return _shader(t, ["W:read_write:T", "O:read_write:T", "S:read_write:T"], body.replace("_S(", f"_{t}("),
                   text.replace("_S(", f"_{t}("), wg=threads)


@functools.cache
def flags_source(t: str) -> str:
    """``prm``: [count]: clear ``O[0..count)``, the flags (one thread)."""
    body = "  if (id == 0u && lid == 0u) { for (var q = 0u; q < prm[0]; q++) { O[q] = T(0); } }\n"
    return _shader(t, ["O:read_write:T"], body, wg=1)
