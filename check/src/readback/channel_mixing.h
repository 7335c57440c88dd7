// Which input channels each rotated output channel mixes, and at which of the given frequencies, read back
// from the data (issue 32): a rotation makes y_c = a·x_i + b·x_j with a and b the same for every head of a
// token. The two channels come from their squared correlations with y_c summed over tokens; a least-squares
// fit per token confirms them (residual within the angle tolerance) and gives a and b, whose angle
// atan2(±b, a) at every token's position names the frequency θ_k that turned it. Names the pairing no
// layout checks (rotate_half against an interleaved cos/sin table, a fixed permutation of the channels)
// when neither layout's convention fits. Needs 4 heads or more (the rows that share a position).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "explain/convention_fit.h"
#include "pe/plan.h"

namespace pe::check {

struct MixedChannel {
  std::size_t channel = 0;                  // output channel, within the head
  std::optional<std::size_t> own, partner;  // the input channels mixed (own: the channel itself, or the
                                            // first when it is not among them); nullopt: undetermined
  std::vector<std::size_t> frequencies;     // every k whose θ_k turned it at every token (slow pairs at
                                            // small positions leave several); empty: none did
};

struct ChannelMixing {
  std::vector<MixedChannel> channels;  // the plan's rotated output channels
  std::size_t tokens = 0, heads = 0;
  std::string words, support;  // empty words: as the given layout pairs and reads them, or too few heads
  bool fits = false;           // every channel determined and described
};

ChannelMixing recover_channel_mixing(const RopeData& d, const RopePlan& plan, std::size_t max_tokens = 16);

}  // namespace pe::check
