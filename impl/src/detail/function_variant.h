// Variants whose kernels are plain functions: one per compiled Highway target, registered only
// where the CPU supports that target (calling another would be an illegal instruction).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "pe/variant.h"

namespace pe::detail {

using TableFn = void (*)(const SinusoidalPlan&, std::span<const std::int64_t>, Buffer);
using TableAtFn = void (*)(const SinusoidalPlan&, std::span<const double>, Buffer);
using AddFn = void (*)(const SinusoidalPlan&, std::span<const std::int64_t>, std::span<const std::uint8_t>,
                       Buffer);
using RotateFn = void (*)(const RopePlan&, const RopeBatch&, RopeDirection, Buffer);
using SlopesFn = void (*)(const AlibiPlan&, Buffer);
using BiasFn = void (*)(const AlibiPlan&, std::span<const std::int64_t>, std::span<const std::int64_t>,
                        Buffer);

class FunctionSinusoidal final : public SinusoidalVariant {
 public:
  FunctionSinusoidal(std::string name, Contract contract, TableFn table_fn, TableAtFn table_at_fn,
                     AddFn add_fn)
      : SinusoidalVariant(std::move(name), std::move(contract)),
        table_(table_fn),
        table_at_(table_at_fn),
        add_(add_fn) {}
  void table(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
             Buffer out) const noexcept override {
    table_(plan, positions, out);
  }
  void table_at(const SinusoidalPlan& plan, std::span<const double> positions,
                Buffer out) const noexcept override {
    table_at_(plan, positions, out);
  }
  void add(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
           std::span<const std::uint8_t> padding, Buffer embeddings) const noexcept override {
    add_(plan, positions, padding, embeddings);
  }

 private:
  TableFn table_;
  TableAtFn table_at_;
  AddFn add_;
};

class FunctionRope final : public RopeVariant {
 public:
  FunctionRope(std::string name, Contract contract, RotateFn rotate)
      : RopeVariant(std::move(name), std::move(contract)), rotate_(rotate) {}
  void apply(const RopePlan& plan, const RopeBatch& batch, RopeDirection direction,
             Buffer x) const noexcept override {
    rotate_(plan, batch, direction, x);
  }

 private:
  RotateFn rotate_;
};

class FunctionAlibi final : public AlibiVariant {
 public:
  FunctionAlibi(std::string name, Contract contract, SlopesFn slopes_fn, BiasFn bias_fn)
      : AlibiVariant(std::move(name), std::move(contract)), slopes_(slopes_fn), bias_(bias_fn) {}
  void slopes(const AlibiPlan& plan, Buffer out) const noexcept override { slopes_(plan, out); }
  void bias(const AlibiPlan& plan, std::span<const std::int64_t> queries, std::span<const std::int64_t> keys,
            Buffer out) const noexcept override {
    bias_(plan, queries, keys, out);
  }

 private:
  SlopesFn slopes_;
  BiasFn bias_;
};

// One compiled Highway target of the variant `name` ("sinusoidal.hwy"): registers make("NAME@TARGET")
// ("sinusoidal.hwy@AVX2") where the CPU supports `target`, and make("NAME"), the dispatcher, where
// `target` is `dispatched` (detail::dispatched_target). Each target's pass of foreach_target calls it
// once, so exactly one pass registers the plain name. Through PE_REGISTER_HWY_* (hwy_register.h).
bool register_hwy_target(std::string_view name, std::int64_t target, std::int64_t dispatched,
                         std::unique_ptr<Variant> (*make)(std::string name));

}  // namespace pe::detail
