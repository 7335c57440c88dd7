// RopePlans kept process-wide by their exact parameters: a plan is a pure function of its RopeParams, and
// a check builds the same plan several times per call (check's own, measure()'s, the reference's), each
// one a powl per pair plus the turn steps' long double trigonometry (issue 53: 6 plans, 96 powl calls in
// a check of 8 tokens). Only plans that validated are kept; invalid parameters are validated, and throw,
// on every call.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pe/plan.h"

namespace pe::detail {

// Every field of the parameters, bit for bit (doubles by their bits: -0 and 0 are two keys, which costs
// a plan at most).
std::string rope_plan_key(const RopeParams& p);

// The plan kept under `key`, or null.
std::shared_ptr<const RopePlan> kept_rope_plan(const std::string& key);
// Keeps a copy of `plan` under `key` (thread-safe; at most a few hundred plans: then they start over).
void keep_rope_plan(const std::string& key, const RopePlan& plan);
// Forgets every kept plan and ladder (a test compares a kept plan with one built afresh).
void forget_rope_plans();

// The unscaled ladders (plan.cc's form_powers) kept by base, form and pair count: configs that differ in
// their scaling alone share one (a verify_rope run draws a few bases and head sizes under every scaling; each
// new plan's powl per pair was a fifth of its check's setup). The base by its value (significand and
// exponent).
std::string powers_key(const RopeForm& form, std::size_t n_pairs, long double base);
std::shared_ptr<const std::vector<long double>> kept_powers(const std::string& key);
void keep_powers(const std::string& key, std::vector<long double> w);

}  // namespace pe::detail
