// Variants and their registry. A variant is one implementation of one family; it declares its
// contract and provides kernels. Kernels never allocate and never throw: they are called only
// through pe/api.h, which validates every argument first.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pe/contract.h"
#include "pe/plan.h"
#include "pe/types.h"

namespace pe {

class Variant {
 public:
  Variant(std::string name, Contract contract);
  virtual ~Variant() = default;
  Variant(const Variant&) = delete;
  Variant& operator=(const Variant&) = delete;

  // "<family>.<backend>[.<tweak>]"; with a layout, "<family>.<layout>.<backend>" names one instance.
  const std::string& name() const noexcept { return name_; }
  Family family() const noexcept { return contract_.family; }
  const Contract& contract() const noexcept { return contract_; }
  bool supports(Layout layout) const noexcept;
  bool supports(DType dtype) const noexcept;
  // "sinusoidal.interleaved.scalar_f32": the join key of tests, benchmarks and reports.
  std::string instance_name(Layout layout) const;

 private:
  std::string name_;
  Contract contract_;
};

class SinusoidalVariant : public Variant {
 public:
  using Variant::Variant;
  // out[r, :] = PE(positions[r]); out.size == positions.size() · dim.
  virtual void table(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
                     Buffer out) const noexcept = 0;
  // emb[r, :] += PE(positions[r]) for every row whose padding flag is 0 (or all rows when empty).
  virtual void add(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
                   std::span<const std::uint8_t> padding, Buffer embeddings) const noexcept = 0;
};

class RopeVariant : public Variant {
 public:
  using Variant::Variant;
  // x[t, h, :] rotated by positions[t] (Inverse: by -positions[t]); x is [tokens, n_heads, head_dim].
  virtual void apply(const RopePlan& plan, std::span<const std::int64_t> positions, std::size_t n_heads,
                     RopeDirection direction, Buffer x) const noexcept = 0;
};

// Every registered variant, sorted by name.
const std::vector<const Variant*>& registry();
// nullptr when no variant has that name.
const Variant* find_variant(std::string_view name);

// A variant file registers itself with `static const pe::Registrar r{std::make_unique<...>()};`.
struct Registrar {
  explicit Registrar(std::unique_ptr<Variant> variant);
};

}  // namespace pe
