#!/usr/bin/env python3
"""Positions read back from the data: RoPE rows rotated at positions other than the ones given must fail
with the pattern named on the "the data fits:" line, as the engines' position bugs produce it (HF's
rotate_half in float64, stored as float32):

  a decode or KV-cache offset dropped   rows rotated by p - offset (FlashInfer PR #847): offsets 1000,
                                        65536, 2^20 (1 is a convention the diagnosis already names)
  the offset added twice                p + offset (mlx-lm #1805/#1806)
  int64 position ids read as int32      the low 32 bits (FlashInfer PR #1129)
  a packed batch                        offsets that change between the sequences (exllama PR #101)
  left padding                          one cache_position for every row of a left-padded batch, so the
                                        padded rows' positions start late (unsloth #3699)
  not rotated                           every row holds its input
  rows left unrotated                   a block of rows copied through (MLX's fast path before 0.32)
  axes exchanged                        8 heads, row (t, h) turned by h (a cos/sin cache indexed by the head)
  a decode step not rotated             one token at 5000 left as its input: the decode offset dropped

and "undetermined" where float32 angles at positions near 2^30 cannot separate p from p ± 1.

    positions_test.py PE_SUITE_EXECUTABLE WORK_DIR
"""

import numpy as np
from cli_cases import finish, judge, report, setup

PE, WORK, RNG = setup(20261203)
T, H, D = 24, 1, 128
x = RNG.standard_normal((T, H, D))


def rope(positions, angle_dtype=np.float64):
    inv_freq = 1.0 / (1e4 ** (np.arange(0, D, 2, dtype=np.float64) / D))
    freqs = (np.asarray(positions, dtype=angle_dtype)[:, None] * inv_freq.astype(angle_dtype)[None, :]).astype(
        np.float64)
    emb = np.concatenate([freqs, freqs], axis=-1)
    rot = np.concatenate([-x[..., D // 2:], x[..., :D // 2]], axis=-1)
    return x * np.cos(emb)[:, None, :] + rot * np.sin(emb)[:, None, :]


def check_command(name, given, y, *extra):
    """The `check` command of x -> y (saved as float32) at the given positions (saved as int64)."""
    xf, yf, pf = WORK / f"{name}_x.npy", WORK / f"{name}_y.npy", WORK / f"{name}_pos.npy"
    np.save(xf, x.astype(np.float32))
    np.save(yf, y.astype(np.float32))
    np.save(pf, np.asarray(given, dtype=np.int64))
    return [PE, "check", "--family", "rope", "--input", str(xf), "--output", str(yf), "--positions-file", str(pf),
            *extra]


def case(name, given, rotated, words, angle_dtype=np.float64, expect_pass=False):
    # The data's angles are float64 (but for the undetermined case): held to rope.hwy's contract, since
    # the float32 class's budget at millions of positions allows errors of order one.
    return judge(name, check_command(name, given, rope(rotated, angle_dtype), "--contract", "rope.hwy"), expect_pass,
                 words)


start = 3_000_000
given = np.arange(start, start + T)
case("correct", given, given, (), expect_pass=True)
case("shift_1", given, given - 1, "positions shifted by -1")
for offset in (1000, 65536, 2 ** 20):
    case(f"offset_dropped_{offset}", given, given - offset, f"every row rotated by p-{offset}")
case("offset_added_twice", given, given + 4096, "every row rotated by p+4096")
big = np.arange(2 ** 32 + 100, 2 ** 32 + 100 + T)
case("int32_truncation", big, big - 2 ** 32, "truncated to 32 bits")
# From 2^31 on, int64 ids read as int32 wrap to negative positions: check searches below 0 there.
wrap = np.arange(2 ** 31 + 100, 2 ** 31 + 100 + T)
case("int32_wrap", wrap, wrap - 2 ** 32, "wrapping to negative ones (int64 position ids read as int32: 2147483748 read as -2147483548)")
# Three sequences of 8 packed in one batch: the given positions restart at each, the kernel's did not.
restart = np.concatenate([np.arange(8), np.arange(8), np.arange(8)]) + 500
case("packed_not_reset", restart, np.arange(500, 500 + T), "consecutive positions 500, 501")
# Left padding: rows 0..7 are padding (the given positions start at the first real token); one
# cache_position rotates every row from 0, so the real tokens are 8 positions late.
left = np.concatenate([np.zeros(8, dtype=np.int64), np.arange(T - 8)])
case("left_padding", left, np.arange(T), "consecutive positions 0, 1")
# Offsets that change between sequences without being one arange: named as runs of rows.
runs = np.concatenate([np.arange(8) + 100, np.arange(8) + 200, np.arange(8) + 300])
case("packed_offsets", runs, runs + np.repeat([0, 7, 7000], 8), "change between runs of rows")
case("not_rotated", given, np.zeros(T, dtype=np.int64), "the data was not rotated")

# The last 8 rows copied through unrotated (a fast path that skipped a block's tail).
unrotated = rope(given)
unrotated[16:] = x[16:]
judge("rows_left_unrotated", check_command("rows_unrotated", given, unrotated, "--contract", "rope.hwy"), False,
      ["8 of 24 rows hold their input unchanged", "token 16", "rows left unrotated",
       "every other row is within budget"])

# Eight heads (issue 50): rows turned by their head index (a cos/sin cache indexed by the head), in a prefill
# and in a decode step, name the exchanged axes; a decode step whose output is its input lists its dropped
# offset; the correct kernel passes.
def rope_rows(xr, turns):
    """xr [tokens, heads, D] with row (t, h) turned by turns[t, h] (rotate_half, base 10^4, float64)."""
    inv_freq = 1.0 / (1e4 ** (np.arange(0, D, 2, dtype=np.float64) / D))
    emb = np.concatenate([turns[..., None] * inv_freq, turns[..., None] * inv_freq], axis=-1)
    rot = np.concatenate([-xr[..., D // 2:], xr[..., :D // 2]], axis=-1)
    return xr * np.cos(emb) + rot * np.sin(emb)


def heads_case(name, given, turns, expect_pass, words):
    xr = RNG.standard_normal((len(given), 8, D))
    xf, yf, pf = WORK / f"{name}_x.npy", WORK / f"{name}_y.npy", WORK / f"{name}_pos.npy"
    np.save(xf, xr.astype(np.float32))
    np.save(yf, rope_rows(xr, turns).astype(np.float32))
    np.save(pf, np.asarray(given, dtype=np.int64))
    out = judge(name, [PE, "check", "--family", "rope", "--input", str(xf), "--output", str(yf), "--positions-file",
                       str(pf)], expect_pass, words)
    if expect_pass:
        report(f"{name}_no_false_words", "exchanged" not in out and "decode offset" not in out, "", out[-2000:])


heads = np.arange(8, dtype=np.float64)
for name, given in (("prefill", np.arange(3000, 3000 + T)), ("decode", np.array([5000]))):
    heads_case(f"head_index_{name}", given, np.broadcast_to(heads, (len(given), 8)), False,
               "the sequence and head axes exchanged")
    heads_case(f"heads_correct_{name}", given, np.broadcast_to(given[:, None], (len(given), 8)).astype(np.float64),
               True, ())
heads_case("decode_offset_dropped", np.array([5000]), np.zeros((1, 8)), False,
           "the decode offset dropped (every step at position 0)")

# float32 angles near 2^30: off by 2^20 at best, yet p and p +- 1 cannot be told apart there.
far = np.arange(2 ** 30, 2 ** 30 + T)
out = case("undetermined", far, far - 2 ** 20, (), np.float32)
report("undetermined_said", "positions read back from the data: undetermined" in out and "the data fits:" not in out)

# A check that cannot fail must not pass: the dump computed at 0..23 checked as if at 2^30.. or 2^40.. (where
# the float32 class's budget reaches any output's error in most elements) exits 1 UNDECIDABLE, naming the band
# and a contract that decides; at its true positions it passes.
dump = rope(np.arange(T))
# Past every contract's largest position (2^31) none decides: a contract promises nothing beyond it.
for start in (1 << 30, 1 << 40):
    out = judge(f"far_dump_{start}", check_command(f"far_{start}", np.arange(start, start + T), dump), False)
    decides, largest = (("a contract that decides there: rope.hwy", 1 << 24) if start < 1 << 31 else
                        ("no registered contract decides there", 1 << 31))
    said = ("\nverdict: UNDECIDABLE" in out and "undecidable: positions >= 1000000000:" in out and
            decides in out and f"largest position {largest})" in out and
            "decides there: rope.diffusers_f64" not in out)
    report(f"far_dump_undecidable_{start}", said, detail=out[-2000:])
judge("far_dump_at_its_positions", check_command("far_0", np.arange(T), dump), True)

finish("positions_test")
