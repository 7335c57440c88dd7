// Sinusoidal tables as diffusion, audio and vision code builds them (issue 49): rows at real positions
// (diffusion timesteps, grid coordinates), one 1-D sinusoid per block of channels, each block reading one
// axis of the row's position (a 2-D grid's w and h, a video's t, w and h), rows that are all zero (a ViT's
// cls and extra tokens, fairseq's padding_idx). The paper's integer table is the case of one block, one
// axis and no zero row, which measure_sinusoidal (measure.h) checks faster.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pe/harness/measure.h"
#include "pe/plan.h"

namespace pe::harness {

struct SinusoidalBlock {
  std::size_t offset = 0;      // its first channel
  SinusoidalParams params;     // dim: the block's width; the switches its own
  std::size_t axis = 0;        // the position axis it reads
  std::string axis_name = "";  // "w", "h", "t" for grids' messages; "" for one axis
};

struct SinusoidalRows {
  std::size_t dim = 0;                         // channels of a row
  std::vector<SinusoidalBlock> blocks;         // cover [0, dim) in order, without overlap
  std::vector<std::vector<double>> positions;  // [axis][row]; a zero row's are not read
  std::vector<std::uint8_t> zero_rows;         // 1: every channel 0; empty: no such row
  std::size_t rows() const { return zero_rows.empty() ? positions.front().size() : zero_rows.size(); }
  bool zero_row(std::size_t r) const { return !zero_rows.empty() && zero_rows[r] != 0; }
};

// One block of `params` over the whole row at `positions` (one axis), rows `padding_idx` zero where given
// (compared with each position exactly). Throws InvalidArgument naming positions (none, one not finite or
// beyond 2^53) or scale (or positions) where an angle scale·t is not finite or beyond 2^53, as grid_rows
// does.
SinusoidalRows one_axis_rows(const SinusoidalParams& params, std::vector<double> positions,
                             std::optional<std::int64_t> padding_idx = std::nullopt);

// The grids of diffusers' get_2d_sincos_pos_embed and get_3d_sincos_pos_embed (MAE's util/pos_embed.py,
// CogVideoX): `sizes` {H, W} or {T, H, W}; rows flattened row-major over (t,) h, w. 2-D: the first half of
// the channels reads w (the meshgrid's first grid, MAE's "emb_h"), the second h; a coordinate i is
// fl32(fl32(i / fl32(n / base_size)) / fl32(interpolation_scale)) (no division by n / base_size without a
// base_size: MAE's), and `extra_tokens` zero rows come first. 3-D: D/4 channels read t
// (fl32(i / fl32(temporal_interpolation_scale))), then 3D/8 w and 3D/8 h (fl32(i /
// fl32(interpolation_scale))). Each block is `params`' table (switches included) over its width. Throws
// InvalidArgument naming grid, dim, base_size, interpolation_scale, temporal_interpolation_scale or
// extra_tokens.
struct GridSpec {
  std::vector<std::int64_t> sizes;
  std::optional<double> base_size;
  double interpolation_scale = 1, temporal_interpolation_scale = 1;
  std::int64_t extra_tokens = 0;
};
SinusoidalRows grid_rows(const SinusoidalParams& params, const GridSpec& grid);
// The rows a grid has (its cells and extra tokens), before any is built: InvalidArgument naming grid for a
// size outside [1, 2^24] or more than 2^26 cells, extra_tokens outside [0, 2^24].
std::size_t grid_cells(const GridSpec& grid);

// The largest |position| a block reads (zero rows left out): the reference's precision for it.
double axis_reach(const SinusoidalRows& rows, const SinusoidalBlock& block);

// Where a block is scaled (scale != 1) or a row reads a position that is not a whole number, the largest
// |scale| of the blocks (Budget::real_scale: the contracts' c1_scale and subnormal angle term charged on the
// whole table, looser on its whole-number rows, never tighter); 0 where neither.
double rows_real_scale(const SinusoidalRows& rows);

// A row's position band: its largest angle scale·t, rounded down (0 for a zero row). The budget's angle is
// the same: a band and its promise are judged where the angles are.
std::int64_t row_band(const SinusoidalRows& rows, std::size_t r);

// Every element of y [rows, dim] against the exact table (pe/ref/reference.h's Sinusoid per block): the
// fast path's double-double, MPFR where it does not reach. An element's position is its row's band
// (row_band); its budget `budget`'s at its angle scale·p·ω_i and pair index. Each block's exact pairs are
// computed once per distinct position it reads (a grid's axis coordinates), held until the last row reading
// them; the records are measure_sinusoidal_rows_exact's, bit for bit and in its order.
void measure_sinusoidal_rows(const SinusoidalRows& rows, Values y, const Budget& budget, const Sink& sink);
// The same, every pair computed afresh at every row: the reference the cached path is tested against.
void measure_sinusoidal_rows_exact(const SinusoidalRows& rows, Values y, const Budget& budget,
                                   const Sink& sink);

}  // namespace pe::harness
