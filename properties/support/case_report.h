// A failing property reads like a bug report: the minimal case (the last kernel call of the case RapidCheck
// shrank to, every field by name), its output, and the check engine's diagnosis of the kernel under that
// case's configuration ("the data fits: ..."). The report goes into the GoogleTest failure, where
// `pe-suite verify` prints it.
#pragma once

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstdint>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "pe/errors.h"
#include "pe/harness/instance.h"
#include "pe/harness/typed_buffer.h"
#include "pe/plan.h"

namespace pe::testing {

// One RoPE call made through run_rope below: what went in and what came out (empty when it threw).
struct RopeCall {
  harness::Instance instance;
  RopeParams params;
  std::vector<std::int64_t> positions;  // [n_axes][tokens]
  std::int64_t heads = 1;
  RopeDirection direction = RopeDirection::Forward;
  std::vector<double> x, y;
  std::string fault;  // KernelFault's message when the call wrote outside its rows
};

// harness::rotate_in_place, remembered as the running case's last call.
void run_rope(const harness::Instance& in, const RopePlan& plan, std::span<const std::int64_t> positions,
              std::int64_t heads, harness::TypedBuffer& x, RopeDirection direction = RopeDirection::Forward);

namespace case_log {
void begin_case();
// The case failed: its last call is the failure's (a fault from a call not made through run_rope drops it).
void case_failed(const KernelFault* fault);
void begin_property();
}  // namespace case_log

// The report of a failed property: `description`, RapidCheck's failure text, and the minimal case (the last
// failing case's call, or RapidCheck's counterexample when no RoPE call was made) with its diagnosis.
std::string failure_report(const std::string& description, const std::string& failure,
                           const rc::detail::Example& counterexample);

// rc::check, with a failure reported through GoogleTest by failure_report (the raw counterexample and the
// reproduce string still go to stderr, as rc::check prints them).
template <class Property>
bool check_reporting(const std::string& description, Property&& property) {
  rc::detail::configuration();
  std::cerr << "\n- " << description << std::endl;
  rc::detail::TestMetadata metadata;
  metadata.id = description;
  metadata.description = description;
  case_log::begin_property();
  const auto result = rc::detail::checkTestable(
      [&] {
        case_log::begin_case();
        try {
          return property();
        } catch (const rc::detail::CaseResult& r) {
          if (r.type == rc::detail::CaseResult::Type::Failure) case_log::case_failed(nullptr);
          throw;
        } catch (const rc::GenerationFailure&) {  // a discard
          throw;
        } catch (const KernelFault& e) {
          case_log::case_failed(&e);
          throw;
        } catch (...) {
          case_log::case_failed(nullptr);
          throw;
        }
      },
      metadata);
  rc::detail::printResultMessage(result, std::cerr);
  std::cerr << std::endl;
  rc::detail::FailureResult failure;
  if (result.match(failure)) {
    ADD_FAILURE() << failure_report(description, failure.description, failure.counterExample);
  } else if (rc::detail::GaveUpResult gave_up; result.match(gave_up)) {
    ADD_FAILURE() << "property: " << description << "\nRapidCheck gave up: " << gave_up.description;
  } else if (!result.template is<rc::detail::SuccessResult>()) {
    std::ostringstream message;
    rc::detail::printResultMessage(result, message);
    ADD_FAILURE() << "property: " << description << "\n" << message.str();
  }
  return result.template is<rc::detail::SuccessResult>();
}

}  // namespace pe::testing
