// Keeping a vector's chosen lanes in a buffer, as the screens do with their percentiles' estimates
// (rope_screen.cc, sinusoidal_screen.cc, alibi_rows_vector.cc). Included inside each file's per-target
// namespace, once per Highway target (hence no include guard), after `hn`, D (doubles), V and M are declared.

// The lanes of `keep` written from `out` on, in order (a whole vector stored: the tails have a vector's room
// to spare); how many. AVX-512 compresses in a register (Highway 1.0.3's Compress of 64-bit lanes copies a
// 2 KiB table per call there, and a compressing store to memory is microcoded on some CPUs); other targets
// lane by lane.
HWY_INLINE std::size_t Keep(V v, M keep, double* out) {
  const D d;
  const std::size_t kept = hn::CountTrue(d, keep);
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  // Stored whatever `kept` (no branch: whether a lane clears the tail's floor is data, not predictable).
  hn::StoreU(V{_mm512_maskz_compress_pd(keep.raw, v.raw)}, d, out);
#else
  if (kept == 0) return 0;
  HWY_ALIGN double lanes[hn::MaxLanes(D())];
  std::uint8_t bits[8] = {};
  hn::StoreU(v, d, lanes);
  hn::StoreMaskBits(d, keep, bits);
  std::size_t k = 0;
  for (std::size_t i = 0; i < hn::Lanes(d); ++i)
    if ((bits[i / 8] >> (i % 8)) & 1) out[k++] = lanes[i];
#endif
  return kept;
}
