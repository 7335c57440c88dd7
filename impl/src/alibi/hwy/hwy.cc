// alibi.hwy (the best target this CPU has) and alibi.hwy@<TARGET> (each compiled Highway
// target this CPU supports). A bias row is one head and query over every key: the keys are
// converted to double in vectors, the exact distance formed there (positions <= 2^53), multiplied by
// the plan's double slope, and the product rounded to the output type (float32 by DemoteTo;
// bfloat16/float16 through a double block, one rounding each).
//
// Contract (derived): the slope as alibi.exact's (2·ln2·E·u in the exponent: c1 = 22.2; exp2
// 1.02u); the product rounded in double, u (ck = 2.1); then rounded into the output type, u_out
// (c0 = 1): alibi.exact's bound, without its single rounding.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "alibi/hwy/hwy.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "detail/alibi_scalar.h"
#include "detail/hwy_register.h"
#include "pe/detail/convert.h"

#ifndef PE_ALIBI_HWY_CONTRACT_
#define PE_ALIBI_HWY_CONTRACT_
namespace pe::alibi_hwy {
inline const Contract kContract = detail::alibi_exact_contract();

// A head count's worth of scalars: the same on every target.
inline void Slopes(const AlibiPlan& plan, Buffer out) {
  detail::with_typed(out, [&](auto* y) {
    using Out = std::remove_pointer_t<decltype(y)>;
    for (std::size_t h = 0; h < plan.n_heads(); ++h) y[h] = detail::store_as<Out>(plan.slope(h));
  });
}
}  // namespace pe::alibi_hwy
#endif

HWY_BEFORE_NAMESPACE();
namespace pe::alibi_hwy::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// m·(k - q), m·-|k - q| or m·k for one key, as the vector lanes compute it.
inline double ScalarBias(AlibiForm form, double m, double q, double k) {
  switch (form) {
    case AlibiForm::Causal:
      return m * (k - q);
    case AlibiForm::Symmetric:
      return m * -std::fabs(k - q);
    case AlibiForm::Bloom:
      return m * k;
  }
  return 0;
}

template <class D>
HWY_INLINE hn::Vec<D> VectorBias(D d, AlibiForm form, hn::Vec<D> m, hn::Vec<D> q, hn::Vec<D> k) {
  switch (form) {
    case AlibiForm::Causal:
      return hn::Mul(m, hn::Sub(k, q));
    case AlibiForm::Symmetric:
      return hn::Mul(m, hn::Neg(hn::Abs(hn::Sub(k, q))));
    case AlibiForm::Bloom:
      break;
  }
  (void)d;
  return hn::Mul(m, k);
}

template <class Out>
void Rows(const AlibiPlan& plan, std::span<const std::int64_t> queries, std::span<const std::int64_t> keys,
          Out* out) {
  const hn::ScalableTag<double> dd;
  const hn::RebindToSigned<decltype(dd)> di;
  const std::size_t N = hn::Lanes(dd), K = keys.size();
  const AlibiForm form = plan.form();
  for (std::size_t h = 0; h < plan.n_heads(); ++h) {
    const double m = plan.slope(h);
    const auto vm = hn::Set(dd, m);
    for (const std::int64_t query : queries) {
      const double q = static_cast<double>(query);
      const auto vq = hn::Set(dd, q);
      std::size_t k = 0;
      for (; k + N <= K; k += N) {
        const auto vk = hn::ConvertTo(dd, hn::LoadU(di, keys.data() + k));
        const auto v = VectorBias(dd, form, vm, vq, vk);
        if constexpr (std::is_same_v<Out, double>) {
          hn::StoreU(v, dd, out + k);
        } else if constexpr (std::is_same_v<Out, float>) {
          const hn::Rebind<float, decltype(dd)> df;
          hn::StoreU(hn::DemoteTo(df, v), df, out + k);
        } else {
          HWY_ALIGN double block[hn::MaxLanes(dd)];
          hn::Store(v, dd, block);
          for (std::size_t l = 0; l < N; ++l) out[k + l] = detail::store_as<Out>(block[l]);
        }
      }
      for (; k < K; ++k) out[k] = detail::store_as<Out>(ScalarBias(form, m, q, static_cast<double>(keys[k])));
      out += K;
    }
  }
}

void Bias(const AlibiPlan& plan, std::span<const std::int64_t> queries, std::span<const std::int64_t> keys,
          Buffer out) {
  detail::with_typed(out, [&](auto* y) { Rows(plan, queries, keys, y); });
}

}  // namespace pe::alibi_hwy::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

// Outside the target region: registration code is compiled for the baseline only.
namespace pe::alibi_hwy::HWY_NAMESPACE {
namespace {
PE_REGISTER_HWY_ALIBI("alibi.hwy", kContract, Slopes, Bias);
}  // namespace
}  // namespace pe::alibi_hwy::HWY_NAMESPACE
