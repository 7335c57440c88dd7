// Guard zones around the buffers a kernel is handed. A kernel that writes one element past its rows
// corrupts its caller's neighbouring data (the next head, K beside Q in a fused QKV tensor) and no
// numerical check sees it. So the validated entry points (pe/api.h) can call a kernel on a guarded copy:
// its rows laid out with a gap after every row (a row's length and more, so that a write up to one row
// past lands in a gap), canary zones before and after, protected pages around large copies (a far write
// faults at once), pass-through channels and padding rows compared bit for bit. After the call every
// element outside the rows must hold what it held before; otherwise the call throws KernelFault naming
// where, and the caller's buffer is left as it was. A correct kernel gives the same bits guarded or not:
// the contract (pe/batch.h) lets rows sit at any strides.
#pragma once

namespace pe {

enum class KernelGuard {
  Off,      // every kernel called on the caller's buffer
  Outside,  // kernels not built into libpe (plugins, users' variants) guarded: the default
  All,      // every kernel guarded (the property suites)
};

// The mode of the calling thread (a call over a thread pool is guarded once, by its caller).
KernelGuard kernel_guard() noexcept;

// Where a guarded RoPE call's rows sit. Gapped: a gap after every row, so that a write past a row lands
// outside every row. Callers: at the caller's own strides, zones before and after (the layout a kernel's
// fast path for contiguous rows takes, and the one the benchmarks time). Alternate (the default): one or
// the other by the call's shape and first position, the same for the same case, so that the properties'
// cases see both and a failure reproduces.
enum class GuardLayout { Alternate, Gapped, Callers };
GuardLayout guard_layout() noexcept;

// Sets the calling thread's mode (and layout) for a scope: benchmarks check a kernel guarded in the
// layout they time (GuardLayout::Callers), then time it bare (KernelGuard::Off).
class ScopedKernelGuard {
 public:
  explicit ScopedKernelGuard(KernelGuard mode, GuardLayout layout = guard_layout()) noexcept;
  ~ScopedKernelGuard();
  ScopedKernelGuard(const ScopedKernelGuard&) = delete;
  ScopedKernelGuard& operator=(const ScopedKernelGuard&) = delete;

 private:
  KernelGuard previous_mode_;
  GuardLayout previous_layout_;
};

}  // namespace pe
