// Umbrella header: everything a user of pe-suite's implementations needs.
#pragma once

#include "pe/api.h"           // IWYU pragma: export
#include "pe/batch.h"         // IWYU pragma: export
#include "pe/contract.h"      // IWYU pragma: export
#include "pe/errors.h"        // IWYU pragma: export
#include "pe/half.h"          // IWYU pragma: export
#include "pe/kernel_guard.h"  // IWYU pragma: export
#include "pe/plan.h"          // IWYU pragma: export
#include "pe/register.h"      // IWYU pragma: export
#include "pe/types.h"         // IWYU pragma: export
#include "pe/variant.h"       // IWYU pragma: export
