// A variant's own rows of a diffusion, audio or vision table (pe/harness/sinusoidal_rows.h): what the
// reference's rows are for check and export, computed by a registered sinusoidal variant.
#pragma once

#include "pe/harness/sinusoidal_rows.h"
#include "pe/harness/typed_buffer.h"
#include "pe/types.h"
#include "pe/variant.h"

namespace pe::harness {

// The table [rows.rows(), rows.dim] in `dtype`: each block's channels from sinusoidal_table_at (pe/api.h)
// under the block's params at the row's position on the block's axis, zero rows 0. Throws InvalidArgument
// as sinusoidal_table_at does (naming positions, scale, a form the variant's contract does not cover, the
// dtype or the layout), before anything is returned.
TypedBuffer variant_rows(const Variant& variant, const SinusoidalRows& rows, DType dtype);

}  // namespace pe::harness
