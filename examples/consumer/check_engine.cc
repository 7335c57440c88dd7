// The check engine as a library (pe::check): an engine's own test calls it on its kernel's output in
// memory, as `pe-suite check` does on dumped files. The kernel here is Hugging Face's float32 RoPE
// (inv_freq = 1 / base^(2j/d), cos/sin of p·inv_freq, q·cos + rotate_half(q)·sin) at positions near 10^6;
// with CONSUMER_FLIP_SIGN it rotates the other way, which the check must fail and name.
//   check_engine            exit 0 when the verdict is what the build expects, else 1
#include <pe/check/check.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

int main() {
  const std::size_t tokens = 64, heads = 4, dim = 128, half = dim / 2;
  const double base = 500000.0;
  std::vector<std::int64_t> positions(tokens);
  std::vector<double> x(tokens * heads * dim), y(x.size());
  for (std::size_t t = 0; t < tokens; ++t) positions[t] = 1000000 + static_cast<std::int64_t>(7 * t);
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)));
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t j = 0; j < half; ++j) {
      const float inv_freq = 1.0f / std::pow(static_cast<float>(base), static_cast<float>(2 * j) / dim);
      float angle = static_cast<float>(positions[t]) * inv_freq;
#ifdef CONSUMER_FLIP_SIGN
      angle = -angle;
#endif
      const float c = std::cos(angle), s = std::sin(angle);
      for (std::size_t h = 0; h < heads; ++h) {
        const std::size_t row = (t * heads + h) * dim;
        const auto a = static_cast<float>(x[row + j]), b = static_cast<float>(x[row + j + half]);
        y[row + j] = a * c - b * s;  // rotate_half: (-x2, x1)
        y[row + j + half] = b * c + a * s;
      }
    }
  }
  pe::check::RopeRequest request;
  request.x = {x, {tokens, heads, dim}, pe::DType::F32, "q"};
  request.y = {y, {tokens, heads, dim}, pe::DType::F32, "q_rot"};
  request.positions.values = positions;
  request.spec.base = base;
  request.spec.layout = pe::Layout::HalfSplit;
  const pe::check::Report report = pe::check::check_rope(request, pe::check::Names());
  std::fputs(report.text.c_str(), stdout);
#ifdef CONSUMER_FLIP_SIGN
  const bool expected = !report.passed && report.text.find("inverse rotation") != std::string::npos;
#else
  const bool expected = report.passed;
#endif
  return expected ? 0 : 1;
}
