"""WGSL helpers of ``render/wgsl_hqr.py`` (LAPACK's small routines, one thread a matrix): the matrix
``W`` of the thread's problem read and written with 1-based indices (``hh(i, j)``, ``hs(i, j, v)``:
``gb``, ``gn``: its offset and order), Fortran's ``SIGN``, ``dlapy2``, scaled 2-norms (``dnrm2``),
``dlarfg`` for the 3-element reflectors of the QR sweep, ``dlanv2`` (the standardized 2x2 Schur
block and its eigenvalues). ``T`` is the element type, ``_S(`` its helper suffix, the capitalized
constants (``RFGMIN``, ``ULP``, ``SAFMN2``) those of ``wgsl_hqr._CONSTS``.

>>> "fn lanv2" in HELPERS
True
"""

from __future__ import annotations

HELPERS = """var<private> gb: u32;
var<private> gn: i32;

fn hh(i: i32, j: i32) -> T { return W[gb + u32((i - 1) * gn + j - 1)]; }
fn hs(i: i32, j: i32, v: T) { W[gb + u32((i - 1) * gn + j - 1)] = v; }

// Fortran's SIGN(a, b): |a| with the sign of b
fn sgn(a: T, b: T) -> T { return select(abs(a), -abs(a), ga_signbit_S(b)); }

// dlapy2: sqrt(x^2 + y^2) without needless overflow
fn lapy2(x: T, y: T) -> T {
  let w = max(abs(x), abs(y));
  let z = min(abs(x), abs(y));
  if (z == T(0)) { return w; }
  let q = z / w;
  return w * sqrt(T(1) + q * q);
}

// 2-norm of (x2, x3), scaled
fn nrm2(x2: T, x3: T) -> T {
  let m = max(abs(x2), abs(x3));
  if (m == T(0)) { return T(0); }
  let a = x2 / m;
  let b = x3 / m;
  return m * sqrt(a * a + b * b);
}

// 2-norm of column c, rows r0..r1 (scaled: the largest magnitude first)
fn colnrm(c: i32, r0: i32, r1: i32) -> T {
  var m = T(0);
  for (var r = r0; r <= r1; r++) { m = max(m, abs(hh(r, c))); }
  if (m == T(0)) { return T(0); }
  var s = T(0);
  for (var r = r0; r <= r1; r++) { let q = hh(r, c) / m; s = s + q * q; }
  return m * sqrt(s);
}

// 2-norm of row r, columns c0..c1 (scaled)
fn rownrm(r: i32, c0: i32, c1: i32) -> T {
  var m = T(0);
  for (var c = c0; c <= c1; c++) { m = max(m, abs(hh(r, c))); }
  if (m == T(0)) { return T(0); }
  var s = T(0);
  for (var c = c0; c <= c1; c++) { let q = hh(r, c) / m; s = s + q * q; }
  return m * sqrt(s);
}

fn swap(i0: i32, j0: i32, i1: i32, j1: i32) {
  let t0 = hh(i0, j0);
  hs(i0, j0, hh(i1, j1));
  hs(i1, j1, t0);
}

// dlarfg for nr = 2 or 3 (alpha, x2[, x3]): beta into alpha, v's tail into x, returns tau
fn larfg(nr: i32, pa: ptr<function, T>, p2: ptr<function, T>, p3: ptr<function, T>) -> T {
  if (nr <= 1) { return T(0); }
  var x2 = *p2;
  var x3 = select(T(0), *p3, nr == 3);
  var xnorm = nrm2(x2, x3);
  if (xnorm == T(0)) { return T(0); }
  var alpha = *pa;
  var beta = -sgn(lapy2(alpha, xnorm), alpha);
  var knt = 0;
  if (abs(beta) < T(RFGMIN)) {
    loop {
      knt = knt + 1;
      x2 = x2 / T(RFGMIN);
      x3 = x3 / T(RFGMIN);
      beta = beta / T(RFGMIN);
      alpha = alpha / T(RFGMIN);
      if (!(abs(beta) < T(RFGMIN) && knt < 20)) { break; }
    }
    xnorm = nrm2(x2, x3);
    beta = -sgn(lapy2(alpha, xnorm), alpha);
  }
  let tau = (beta - alpha) / beta;
  let sc = T(1) / (alpha - beta);
  *p2 = x2 * sc;
  if (nr == 3) { *p3 = x3 * sc; }
  for (var j = 0; j < knt; j++) { beta = beta * T(RFGMIN); }
  *pa = beta;
  return tau;
}

// dlanv2: the Schur factorization of a real 2x2 block in standard form; its eigenvalues
fn lanv2(a0: T, b0: T, c0: T, d0: T, r: ptr<function, array<T, 4>>) {
  var a = a0;
  var b = b0;
  var c = c0;
  var d = d0;
  var cs = T(1);
  var sn = T(0);
  if (c == T(0)) {
  } else if (b == T(0)) {
    let temp = d;
    d = a;
    a = temp;
    b = -c;
    c = T(0);
  } else if ((a - d) == T(0) && ga_signbit_S(b) != ga_signbit_S(c)) {
  } else {
    var temp = a - d;
    var p = T(0.5) * temp;
    let bcmax = max(abs(b), abs(c));
    let bcmis = min(abs(b), abs(c)) * sgn(T(1), b) * sgn(T(1), c);
    var scale = max(abs(p), bcmax);
    var z = (p / scale) * p + (bcmax / scale) * bcmis;
    if (z >= T(4) * T(ULP)) {
      z = p + sgn(sqrt(scale) * sqrt(z), p);
      a = d + z;
      d = d - (bcmax / z) * bcmis;
      let tau = lapy2(c, z);
      cs = z / tau;
      sn = c / tau;
      b = b - c;
      c = T(0);
    } else {
      var count = 0;
      var sigma = b + c;
      loop {
        count = count + 1;
        scale = max(abs(temp), abs(sigma));
        if (scale >= T(1) / T(SAFMN2)) {
          sigma = sigma * T(SAFMN2);
          temp = temp * T(SAFMN2);
          if (count <= 20) { continue; }
        }
        if (scale <= T(SAFMN2)) {
          sigma = sigma / T(SAFMN2);
          temp = temp / T(SAFMN2);
          if (count <= 20) { continue; }
        }
        break;
      }
      p = T(0.5) * temp;
      var tau = lapy2(sigma, temp);
      cs = sqrt(T(0.5) * (T(1) + abs(sigma) / tau));
      sn = -(p / (tau * cs)) * sgn(T(1), sigma);
      let aa = a * cs + b * sn;
      let bb = -a * sn + b * cs;
      let cc = c * cs + d * sn;
      let dd = -c * sn + d * cs;
      a = aa * cs + cc * sn;
      b = (bb * cs) + (dd * sn);
      c = -(aa * sn) + (cc * cs);
      d = -bb * sn + dd * cs;
      temp = T(0.5) * (a + d);
      a = temp;
      d = temp;
      if (c != T(0)) {
        if (b != T(0)) {
          if (ga_signbit_S(b) == ga_signbit_S(c)) {
            let sab = sqrt(abs(b));
            let sac = sqrt(abs(c));
            p = sgn(sab * sac, c);
            tau = T(1) / sqrt(abs(b + c));
            a = temp + p;
            d = temp - p;
            b = b - c;
            c = T(0);
          }
        } else {
          b = -c;
          c = T(0);
        }
      }
    }
  }
  (*r)[0] = a;
  (*r)[2] = d;
  if (c == T(0)) {
    (*r)[1] = T(0);
    (*r)[3] = T(0);
  } else {
    (*r)[1] = sqrt(abs(b)) * sqrt(abs(c));
    (*r)[3] = -(*r)[1];
  }
}
"""
