// ALiBi (Press et al., 2022, "Train Short, Test Long"): no rotation and no table of angles, a bias
// added to attention's scores, bias[h, i, j] = -m_h·(i - j) for query position i and key position j.
// Engines agree on the bias and keep disagreeing on the slopes m_h: the parameters name the
// conventions, the plan computes each head's slope exponent exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "pe/types.h"

namespace pe {

// How the n heads' slopes follow from max_bias b.
enum class AlibiSlopes : std::uint8_t {
  // The paper's rule for n a power of two and its interpolation for others, as HF's
  // build_alibi_tensor (BLOOM, MPT, Falcon), ggml and vLLM compute it: n' = 2^⌊log2 n⌋,
  // m0 = 2^(-b/n'), m1 = 2^(-b/(2n')); head h < n' gets m0^(h+1), head h >= n' gets m1^(2(h-n')+1).
  Interpolated,
  // The geometric rule applied to n directly, 2^(-b(h+1)/n): the same as Interpolated for powers of
  // two, different otherwise (what a port that skips the interpolation computes).
  Direct,
};

// What the bias table holds for query position i and key position j.
enum class AlibiForm : std::uint8_t {
  Causal,     // -m·(i - j): the paper's; the entries with j > i are what attention's mask hides
  Symmetric,  // -m·|i - j|: encoders and ggml's mask (llama.cpp fills KQ_mask with -|i - j|)
  Bloom,      // m·j: BLOOM's build_alibi_tensor; it differs from Causal by -m·i per row, which
              // softmax ignores
};

std::string_view to_string(AlibiSlopes s) noexcept;
std::string_view to_string(AlibiForm f) noexcept;
std::optional<AlibiSlopes> parse_alibi_slopes(std::string_view s) noexcept;
std::optional<AlibiForm> parse_alibi_form(std::string_view s) noexcept;

// Largest head count a plan accepts (the slopes are a table of n doubles).
inline constexpr std::int64_t kMaxAlibiHeads = std::int64_t{1} << 20;
// Largest max_bias: beyond it the last slopes fall below double's normal range.
inline constexpr double kMaxAlibiBias = 1000;

struct AlibiParams {
  std::int64_t n_heads = 0;
  double max_bias = 8;  // the paper's b = 8 (ggml's default max_alibi_bias)
  AlibiSlopes slopes = AlibiSlopes::Interpolated;
  AlibiForm form = AlibiForm::Causal;
  Layout layout = Layout::Hqk;
};

// Validated parameters (InvalidArgument naming n_heads, max_bias or layout) and each head's slope
// m_h = 2^(-E_h) with E_h = max_bias·power(h)/denominator(h): power is the k of m0^k or m1^k, which
// formulations that raise a rounded m0 to the k-th power lose accuracy with.
class AlibiPlan {
 public:
  explicit AlibiPlan(const AlibiParams& params);

  const AlibiParams& params() const noexcept { return params_; }
  std::size_t n_heads() const noexcept { return static_cast<std::size_t>(params_.n_heads); }
  double max_bias() const noexcept { return params_.max_bias; }
  AlibiForm form() const noexcept { return params_.form; }
  // n' = 2^⌊log2 n⌋ (Interpolated), or n (Direct).
  std::int64_t base_heads() const noexcept { return base_heads_; }
  std::int64_t power(std::size_t h) const noexcept;
  std::int64_t denominator(std::size_t h) const noexcept;
  // E_h = max_bias·power/denominator in double (one rounding of each operation).
  double exponent(std::size_t h) const noexcept;
  // 2^(-E_h) in double: exp2 (glibc, < 0.51 ULP) of the rounded exponent.
  double slope(std::size_t h) const noexcept { return slopes_[h]; }
  // The integer the slope multiplies for query position i and key position j: j - i (Causal),
  // -|i - j| (Symmetric), j (Bloom). Exact: positions are at most 2^53.
  std::int64_t multiplier(std::int64_t i, std::int64_t j) const noexcept {
    switch (params_.form) {
      case AlibiForm::Causal:
        return j - i;
      case AlibiForm::Symmetric:
        return i > j ? j - i : i - j;
      case AlibiForm::Bloom:
        return j;
    }
    return 0;
  }

 private:
  AlibiParams params_;
  std::int64_t base_heads_ = 1;
  std::vector<double> slopes_;
};

}  // namespace pe
