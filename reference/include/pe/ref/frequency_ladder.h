// The unscaled RoPE frequencies of a whole table at the wide tier, without a power per pair: the values of
// pow(b, -2k/dim) as ScalingRule<Real>::unscaled(k) gives them (the exponent rounded once to Real, then the
// correctly rounded power), bit for bit. A check of a new config fills a table of 64 such powers (~10 µs
// each) before its first element, and verify_rope draws a new config per case (issue 53).
//
// How: at W = P + 64 bits (P: Real's precision), r = b^(-2/dim), then b^(q_k) = r^k · b^(δ_k) with
// δ_k = q_k + 2k/dim the exponent's own rounding (|δ_k| <= 2^-P), b^δ = 1 + δ ln b + (δ ln b)²/2.
// Relative error of the result, in units of 2^-W: r's exponent and power 1 + |ln b|·2/dim, raised to the
// k-th power k(1 + |ln b|·2/dim); the k - 1 products; δ_k's rounding |ln b|·2k/dim; the series' roundings
// and truncation 4: at most 2k + 4k|ln b|/dim + 4 (2k + 2|ln b| + 4 for k < dim/2), second-order terms
// covered by taking the bound at the next power of two and |ln b| + 1. Each value is rounded to P only where
// that bound decides the rounding (mpfr_can_round); elsewhere the power is taken as before.
#pragma once

#include <cstdint>
#include <vector>

#include "pe/ref/real.h"

namespace pe::ref {

// b^RN(-2k/dim) for k = 0 .. count-1, each correctly rounded to Real (count <= dim/2, b > 1).
std::vector<Real> unscaled_frequencies(const Real& b, std::int64_t dim, std::size_t count);

// How many values unscaled_frequencies took by a power (its bound did not decide them), in this process.
std::uint64_t frequency_ladder_fallbacks() noexcept;

}  // namespace pe::ref
