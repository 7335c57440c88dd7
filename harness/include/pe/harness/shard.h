// An array task's part of a sweep or a census, "I/N": read the same way by every command, the property
// binary ($PE_SHARD) and the merge. Light on purpose: the argument parsers include it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

namespace pe::census {

// The most tasks one run may be split into (a merge lists what is missing; N bounds that list).
inline constexpr std::size_t kMaxShards = std::size_t{1} << 20;

// "I/N" (digits only, I < N <= kMaxShards) as (I, N); nothing for anything else.
std::optional<std::pair<std::size_t, std::size_t>> parse_shard(const std::string& text);

}  // namespace pe::census
