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

#include "pe/alibi.h"
#include "pe/batch.h"
#include "pe/contract.h"
#include "pe/plan.h"
#include "pe/types.h"

namespace pe {

class Variant {
 public:
  virtual ~Variant() = default;
  Variant(const Variant&) = delete;
  Variant& operator=(const Variant&) = delete;

  // "<family>.<backend>[.<tweak>]"; with a layout, "<family>.<layout>.<backend>" names one instance.
  const std::string& name() const noexcept { return name_; }
  // Fixed by the class (SinusoidalVariant, RopeVariant, AlibiVariant), so the API's downcast by family is
  // sound.
  Family family() const noexcept { return family_; }
  const Contract& contract() const noexcept { return contract_; }
  bool supports(Layout layout) const noexcept;
  bool supports(DType dtype) const noexcept;
  // "sinusoidal.interleaved.scalar_f32": the join key of tests, benchmarks and reports.
  std::string instance_name(Layout layout) const;

 protected:
  Variant(std::string name, Family family, Contract contract);

 private:
  // Set by register_variant for a variant libpe registered itself: is_builtin asks on every guarded API
  // call (pe/kernel_guard.h), so it is a flag, not a registry lookup.
  friend std::string register_variant(std::unique_ptr<Variant> variant, const void* where);
  friend bool is_builtin(const Variant& v);
  bool builtin_ = false;
  std::string name_;
  Family family_;
  Contract contract_;
};

class SinusoidalVariant : public Variant {
 public:
  SinusoidalVariant(std::string name, Contract contract)
      : Variant(std::move(name), Family::Sinusoidal, std::move(contract)) {}
  // out[r, :] = PE(scale·positions[r]); out.size == positions.size() · dim. An odd dim's last channel is 0.
  virtual void table(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
                     Buffer out) const noexcept = 0;
  // out[r, :] = PE(scale·positions[r]) at real positions (diffusion timesteps), each the exact binary value
  // given, in the variant's own arithmetic; out as table's. The API has checked every |scale·t| <= 2^53.
  virtual void table_at(const SinusoidalPlan& plan, std::span<const double> positions,
                        Buffer out) const noexcept = 0;
  // emb[r, :] += PE(scale·positions[r]) for every row whose padding flag is 0 (or all rows when empty); an
  // odd dim's last channel unchanged.
  virtual void add(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
                   std::span<const std::uint8_t> padding, Buffer embeddings) const noexcept = 0;
};

class RopeVariant : public Variant {
 public:
  RopeVariant(std::string name, Contract contract)
      : Variant(std::move(name), Family::Rope, std::move(contract)) {}
  // Row (t, h) of x (batch.row(t, h), head_dim channels) rotated by batch.position(t) (Inverse: by
  // its negative). The API has checked that every row lies inside x and that no two overlap.
  virtual void apply(const RopePlan& plan, const RopeBatch& batch, RopeDirection direction,
                     Buffer x) const noexcept = 0;
};

class AlibiVariant : public Variant {
 public:
  AlibiVariant(std::string name, Contract contract)
      : Variant(std::move(name), Family::Alibi, std::move(contract)) {}
  // out[h] = m_h, plan.n_heads() values.
  virtual void slopes(const AlibiPlan& plan, Buffer out) const noexcept = 0;
  // out[h, q, k] = m_h·plan.multiplier(queries[q], keys[k]) in the plan's layout (Hqk).
  virtual void bias(const AlibiPlan& plan, std::span<const std::int64_t> queries,
                    std::span<const std::int64_t> keys, Buffer out) const noexcept = 0;
};

// Every registered variant, sorted by name.
const std::vector<const Variant*>& registry();
// nullptr when no variant has that name.
const Variant* find_variant(std::string_view name);

// Whether `name` is a well-formed variant name of `family`: "<family>.<backend>" with a backend of
// lower-case letters, digits and '_', optionally "@<TARGET>" (upper-case letters, digits, '_').
bool valid_variant_name(std::string_view name, Family family) noexcept;

// Adds a variant to the registry; `where` is an address inside the file (executable or shared library)
// registering it, which becomes its origin (nullptr: libpe itself). Returns "" or, leaving the
// registry unchanged, why not: a malformed name, or one already registered (with its origin).
std::string register_variant(std::unique_ptr<Variant> variant, const void* where);
// The file that registered the variant (libpe's path for the built-in ones).
const std::string& variant_origin(const Variant& v);
// Registered by libpe itself (not by an outside project's binary or a plugin).
bool is_builtin(const Variant& v);

// A variant file registers itself through PE_REGISTER_SINUSOIDAL / _ROPE / _ALIBI
// (pe/register.h), which construct one of these. A malformed or duplicate name aborts at load time.
struct Registrar {
  explicit Registrar(std::unique_ptr<Variant> variant, const void* where = nullptr);
};

}  // namespace pe
