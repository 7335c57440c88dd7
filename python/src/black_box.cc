// verify_rope's black-box properties (pe_suite/black_box.py, where their error model and budgets are
// derived) as loops over float64 arrays [tokens, heads, head_dim]: each returns the first element out of its
// budget in C order, or None, and Python words the failure. In numpy each property took a dozen temporaries
// the size of the data and the relative one three full Gram matrices, where only the pairs of tokens s < t
// are read (issue 53). The same double operations in the same order as the numpy they replace (the build has
// -ffp-contract=off), sums over pairs excepted: BLAS's order was its own. A pair's norm is sqrt(a² + b²), not
// hypot (libm's, half the loops' time: 24 tokens × 4 heads × 128, _pair_norms 31 → 16 µs, _first_norm_off
// 39 → 16 µs): every value here is a float32, bfloat16 or float16 input's or output's (or a difference of
// two, one times g²), whose squares neither overflow nor underflow in double, so the two differ by a double's
// rounding or two, 2^-51 relative, against budgets of 2^-20 relative and more.
#include <pybind11/numpy.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "bindings.h"

namespace pe::python {
namespace {

namespace py = pybind11;
using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

double norm2(double a, double b) { return std::sqrt(a * a + b * b); }

// A [tokens, heads, head_dim] array and its rotary pairs: pair j's channels first + j·step and
// second + j·step (black_box.pair_channels' slices).
struct Pairs {
  const double* data;
  std::size_t tokens, heads, dim, pairs, first, second, step;

  double a(std::size_t t, std::size_t h, std::size_t j) const {
    return data[(t * heads + h) * dim + first + j * step];
  }
  double b(std::size_t t, std::size_t h, std::size_t j) const {
    return data[(t * heads + h) * dim + second + j * step];
  }
  double norm(std::size_t t, std::size_t h, std::size_t j) const { return norm2(a(t, h, j), b(t, h, j)); }
};

Pairs pairs_of(const Array& v, py::tuple layout, const char* name) {
  if (v.ndim() != 3) throw py::value_error(std::string(name) + ": expected [tokens, heads, head_dim]");
  const auto at = [&](int i) { return layout[static_cast<std::size_t>(i)].cast<std::size_t>(); };
  const Pairs p{v.data(),
                static_cast<std::size_t>(v.shape(0)),
                static_cast<std::size_t>(v.shape(1)),
                static_cast<std::size_t>(v.shape(2)),
                at(0),
                at(1),
                at(2),
                at(3)};
  if (p.pairs > 0 &&
      (p.first + (p.pairs - 1) * p.step >= p.dim || p.second + (p.pairs - 1) * p.step >= p.dim))
    throw py::value_error(std::string(name) + ": a pair's channel lies beyond head_dim");
  return p;
}

void require_same_shape(const Pairs& p, const Pairs& q, const char* name) {
  if (p.tokens != q.tokens || p.heads != q.heads || p.dim != q.dim)
    throw py::value_error(std::string(name) + ": shape differs from x's");
}

py::object at(std::size_t t, std::size_t h, std::size_t j) { return py::make_tuple(t, h, j); }

// Each pair's norm |x_j| as [tokens, heads, pairs] (black_box.pair_norms): read by all three properties,
// computed once (the norms are the loops' largest cost).
Array pair_norms(const Array& x, py::tuple layout) {
  const Pairs px = pairs_of(x, layout, "x");
  Array out({px.tokens, px.heads, px.pairs});
  double* o = out.mutable_data();
  for (std::size_t t = 0; t < px.tokens; ++t)
    for (std::size_t h = 0; h < px.heads; ++h)
      for (std::size_t j = 0; j < px.pairs; ++j) o[(t * px.heads + h) * px.pairs + j] = px.norm(t, h, j);
  return out;
}

// The norms of x's pairs (pair_norms(x)), checked against x's shape: n(t, h, j).
struct Norms {
  const double* data;
  std::size_t heads, pairs;

  double operator()(std::size_t t, std::size_t h, std::size_t j) const {
    return data[(t * heads + h) * pairs + j];
  }
};

Norms norms_of(const Array& nx, const Pairs& x) {
  if (nx.ndim() != 3 || static_cast<std::size_t>(nx.shape(0)) != x.tokens ||
      static_cast<std::size_t>(nx.shape(1)) != x.heads || static_cast<std::size_t>(nx.shape(2)) != x.pairs)
    throw py::value_error("nx: expected [tokens, heads, pairs], x's pairs' norms");
  return {nx.data(), x.heads, x.pairs};
}

// NORM: the first pair with not | |y_j| - g |x_j| | <= slope |x_j| + floor (slope = 12 u g); nx: x's norms.
py::object first_norm_off(const Array& nx, const Array& y, py::tuple layout, double g, double slope,
                          double floor) {
  const Pairs py_ = pairs_of(y, layout, "y");
  const Norms n = norms_of(nx, py_);
  for (std::size_t t = 0; t < py_.tokens; ++t)
    for (std::size_t h = 0; h < py_.heads; ++h)
      for (std::size_t j = 0; j < py_.pairs; ++j) {
        const double norm_x = n(t, h, j), norm_y = py_.norm(t, h, j);
        if (!(std::fabs(norm_y - g * norm_x) <= slope * norm_x + floor)) return at(t, h, j);
      }
  return py::none();
}

// INVERSE: z = M f(M f(x)) read with each pair's second channel negated; the first pair with not
// |z_j - g^2 x_j| <= slope |x_j| + floor (slope = 24 u g^2); nx: x's norms.
py::object first_inverse_off(const Array& x, const Array& nx, const Array& z, py::tuple layout, double g2,
                             double slope, double floor) {
  const Pairs px = pairs_of(x, layout, "x"), pz = pairs_of(z, layout, "z");
  require_same_shape(px, pz, "z");
  const Norms n = norms_of(nx, px);
  for (std::size_t t = 0; t < px.tokens; ++t)
    for (std::size_t h = 0; h < px.heads; ++h)
      for (std::size_t j = 0; j < px.pairs; ++j) {
        const double off = norm2(pz.a(t, h, j) - g2 * px.a(t, h, j), -pz.b(t, h, j) - g2 * px.b(t, h, j));
        if (!(off <= slope * n(t, h, j) + floor)) return at(t, h, j);
      }
  return py::none();
}

// The relative property's sums: Σ_i a_i·b_i in four vectors of eight partial sums. Below the last multiple
// of 8, term i goes to lane i mod 8 of vector (i / 8) mod 4, in order; the vectors are added as (v0 + v1) +
// (v2 + v3), the rest of the terms go to its lane 0 in order, and its lanes are added as ((l0 + l1) + (l2 +
// l3)) + ((l4 + l5) + (l6 + l7)), as GCC's generic vectors compute them. Elementwise vector arithmetic with
// -ffp-contract=off rounds as the scalar lanes would, so every clone below (AVX-512, AVX2, the baseline's
// SSE2) gives the same bits, and so does the test's replica in Python. Thirty-two independent chains: the
// relative property was a tenth of verify_rope's time in four scalar ones, and one chain of vectors waits on
// each add (issue 53).
using V8 = double __attribute__((vector_size(64)));
#if defined(__x86_64__)
#define PE_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define PE_VECTOR_CLONES  // one build: the same order, in the target's own vectors
#endif

struct Relative {
  const double *n, *nw, *y0, *y1;  // [tokens, heads, pairs] twice, [tokens, heads, dim] twice
  std::size_t tokens, heads, pairs, dim, rotary;
  double g2, unit_u, floor;
};

struct RelativeOff {
  bool found = false;
  std::size_t s = 0, t = 0, h = 0;
  double d0 = 0, d1 = 0, budget = 0;
};

// The first (s < t, h) in C order with not |<y0_s, y0_t> - <y1_s, y1_t>| <= g²(u Σ n_s n_t + 2 Σ (nw_s n_t +
// nw_t n_s)) + floor. The side sums (nw: the norms times the angle errors) are formed only where the pair
// is not within g²(u Σ n_s n_t) + floor already: they are non-negative and every step of the budget's
// arithmetic is monotone in them, so such a pair is within the whole budget too.
PE_VECTOR_CLONES RelativeOff first_off(const Relative& r) {
  // Σ a_i b_i and Σ c_i d_i (c, d may be null) over [0, n), in the order above.
  // Inlined: a lambda compiled on its own would be the baseline's code in every clone.
  const auto sums = [](const double* a, const double* b, const double* c, const double* d, std::size_t n,
                       double* ab, double* cd) __attribute__((always_inline)) {
    V8 u0 = {}, u1 = {}, u2 = {}, u3 = {}, v0 = {}, v1 = {}, v2 = {}, v3 = {};  // named: kept in registers
    const auto add = [&](V8 & to, V8 & to_cd, std::size_t i) __attribute__((always_inline)) {
      V8 va, vb;
      std::memcpy(&va, a + i, sizeof va);
      std::memcpy(&vb, b + i, sizeof vb);
      to += va * vb;
      if (c != nullptr) {
        std::memcpy(&va, c + i, sizeof va);
        std::memcpy(&vb, d + i, sizeof vb);
        to_cd += va * vb;
      }
    };
    std::size_t i = 0;
    for (; i + 32 <= n; i += 32) {
      add(u0, v0, i);
      add(u1, v1, i + 8);
      add(u2, v2, i + 16);
      add(u3, v3, i + 24);
    }
    if (i + 8 <= n) add(u0, v0, i), i += 8;  // i was a multiple of 32: vectors 0, 1, 2 in turn
    if (i + 8 <= n) add(u1, v1, i), i += 8;
    if (i + 8 <= n) add(u2, v2, i), i += 8;
    V8 uu = (u0 + u1) + (u2 + u3), vv = (v0 + v1) + (v2 + v3);
    for (; i < n; ++i) {
      uu[0] += a[i] * b[i];
      if (c != nullptr) vv[0] += c[i] * d[i];
    }
    *ab = ((uu[0] + uu[1]) + (uu[2] + uu[3])) + ((uu[4] + uu[5]) + (uu[6] + uu[7]));
    *cd = ((vv[0] + vv[1]) + (vv[2] + vv[3])) + ((vv[4] + vv[5]) + (vv[6] + vv[7]));
  };
  for (std::size_t s = 0; s < r.tokens; ++s)
    for (std::size_t t = s + 1; t < r.tokens; ++t)
      for (std::size_t h = 0; h < r.heads; ++h) {
        const std::size_t ps = (s * r.heads + h) * r.pairs, pt = (t * r.heads + h) * r.pairs;
        const std::size_t cs = (s * r.heads + h) * r.dim, ct = (t * r.heads + h) * r.dim;
        double both = 0, unused = 0, d0 = 0, d1 = 0;
        sums(r.n + ps, r.n + pt, nullptr, nullptr, r.pairs, &both, &unused);
        sums(r.y0 + cs, r.y0 + ct, r.y1 + cs, r.y1 + ct, r.rotary, &d0, &d1);
        const double off = std::fabs(d0 - d1);
        if (off <= r.g2 * (r.unit_u * both) + r.floor) continue;
        double s_side = 0, t_side = 0;
        sums(r.nw + ps, r.n + pt, r.nw + pt, r.n + ps, r.pairs, &s_side, &t_side);
        const double budget = r.g2 * (r.unit_u * both + 2 * (s_side + t_side)) + r.floor;
        if (!(off <= budget)) return {true, s, t, h, d0, d1, budget};
      }
  return {};
}

// RELATIVE: for tokens s < t and each head, |<y_s, y_t> - <y'_s, y'_t>| <= g^2 (unit_u Σ_j n_sj n_tj +
// 2 Σ_j n_sj n_tj (w_sj + w_tj)) + floor, n = |x_j| (nx), w[T, pairs] the angle errors of both calls
// (black_box.relative_failure): the first (s, t, h) out of it with both dots and the budget, or None.
// n_sj w_sj n_tj is (n_sj w_sj) n_tj, so the products n w are formed once per token, not per pair of tokens.
py::object first_relative_off(const Array& nx, const Array& y0, const Array& y1, py::tuple layout,
                              const Array& w, double g2, double unit_u, double floor) {
  const Pairs p0 = pairs_of(y0, layout, "y"), p1 = pairs_of(y1, layout, "y_shifted");
  require_same_shape(p0, p1, "y_shifted");
  const Norms norms = norms_of(nx, p0);
  if (w.ndim() != 2 || static_cast<std::size_t>(w.shape(0)) != p0.tokens ||
      static_cast<std::size_t>(w.shape(1)) != p0.pairs)
    throw py::value_error("w: expected [tokens, pairs]");
  const std::size_t rotary = 2 * p0.pairs, heads = p0.heads, pairs = p0.pairs;
  if (rotary > p0.dim)
    throw py::value_error("layout: more rotated channels than head_dim");  // the dots read [0, rotary)
  // first_off's early accept reads the side sums as non-negative: refused otherwise, not misjudged.
  for (py::ssize_t i = 0; i < w.size(); ++i)
    if (!(w.data()[i] >= 0)) throw py::value_error("w: expected non-negative angle errors");
  const double* n = norms.data;
  std::vector<double> nw(p0.tokens * heads * pairs);
  for (std::size_t t = 0; t < p0.tokens; ++t)
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t j = 0; j < pairs; ++j)
        nw[(t * heads + h) * pairs + j] = n[(t * heads + h) * pairs + j] * w.data()[t * pairs + j];
  const RelativeOff off =
      first_off({n, nw.data(), p0.data, p1.data, p0.tokens, heads, pairs, p0.dim, rotary, g2, unit_u, floor});
  if (!off.found) return py::none();
  return py::make_tuple(off.s, off.t, off.h, off.d0, off.d1, off.budget);
}

// Whether two arrays hold the same bytes (verify_rope's repeated outputs, compared as bits: -0 and NaN
// payloads count): a memcmp over C-contiguous buffers (numpy's array_equal and torch.equal cost 5-9 µs on a
// small call's output, a tenth of a case's time over its ten comparisons).
bool same_bytes(const py::buffer& a, const py::buffer& b) {
  const py::buffer_info x = a.request(), y = b.request();
  const auto compact = [](const py::buffer_info& v) {
    py::ssize_t step = v.itemsize;
    for (py::ssize_t d = v.ndim; d-- > 0;) {
      if (v.shape[static_cast<std::size_t>(d)] > 1 && v.strides[static_cast<std::size_t>(d)] != step)
        return false;
      step *= v.shape[static_cast<std::size_t>(d)];
    }
    return true;
  };
  if (x.shape != y.shape || x.itemsize != y.itemsize) return false;
  if (x.size == 0) return true;  // (2, 0) has no strides to check
  if (!compact(x) || !compact(y)) throw py::value_error("same_bytes: expected C-contiguous arrays");
  return std::memcmp(x.ptr, y.ptr, static_cast<std::size_t>(x.size * x.itemsize)) == 0;
}

}  // namespace

void add_black_box_functions(py::module_& m) {
  // Private (verify_rope's): layout is pair_channels' (pairs, first, second, step); nx: _pair_norms(x).
  m.def("_pair_norms", pair_norms, py::arg("x"), py::arg("layout"));
  m.def("_same_bytes", same_bytes, py::arg("a"), py::arg("b"));
  m.def("_first_norm_off", first_norm_off, py::arg("nx"), py::arg("y"), py::arg("layout"), py::arg("g"),
        py::arg("slope"), py::arg("floor"));
  m.def("_first_inverse_off", first_inverse_off, py::arg("x"), py::arg("nx"), py::arg("z"), py::arg("layout"),
        py::arg("g2"), py::arg("slope"), py::arg("floor"));
  m.def("_first_relative_off", first_relative_off, py::arg("nx"), py::arg("y0"), py::arg("y1"),
        py::arg("layout"), py::arg("w"), py::arg("g2"), py::arg("unit_u"), py::arg("floor"));
}

}  // namespace pe::python
