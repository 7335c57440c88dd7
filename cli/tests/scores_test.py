#!/usr/bin/env python3
"""`pe-suite check --family scores`: pre-softmax attention scores [heads, queries, keys] with the encoding inside,
against the exact scores of --q and --k given before it. Written here from the published definitions, in float32
as engines compute them: flash-attention's alibi_slopes ("-alibi_slope * |i + seqlen_k - seqlen_q - j|", the ALiBi
paper's get_slopes, the causal mask at -inf), and HF's rotate_half RoPE applied to q and k before scale·q·kᵀ.
Bottom-right alignment passes; the query offset dropped (top-left), keys left unrotated and a missing softmax
scale fail, named; bad input is refused naming the flag.

    scores_test.py PE_SUITE_EXECUTABLE WORK_DIR
"""

import math

import numpy as np
from cli_cases import finish, judge, judge_bad, setup

PE, WORK, RNG = setup(2026120651)
Q, K, H, HK, D, BASE = 4, 64, 8, 2, 64, 10000.0
q = RNG.standard_normal((Q, H, D)).astype(np.float32)
k = RNG.standard_normal((K, HK, D)).astype(np.float32)
np.save(WORK / "q.npy", q)
np.save(WORK / "k.npy", k)


def get_slopes(n):
    start = 2 ** (-2 ** -(math.log2(n) - 3))
    return [start * start ** i for i in range(n)]


def dots(rq, rk, scale):
    kk = np.repeat(rk, H // HK, axis=1)
    return (np.einsum("ihc,jhc->hij", rq.astype(np.float32), kk.astype(np.float32)) * np.float32(scale)).astype(np.float32)


def alibi_scores(query_offset=True, scale=D ** -0.5):
    s = dots(q, k, scale)
    i = np.arange(Q)[:, None] + (K - Q if query_offset else 0)
    j = np.arange(K)[None, :]
    slopes = np.array(get_slopes(H), dtype=np.float32)[:, None, None]
    s = (s - slopes * np.abs(i - j).astype(np.float32)).astype(np.float32)
    return np.where((j > i)[None], -np.inf, s).astype(np.float32)


def rotate(x, positions):
    inv = (1.0 / (BASE ** (np.arange(0, D, 2).astype(np.float32) / D))).astype(np.float32)
    freqs = positions.astype(np.float32)[:, None] * inv[None, :]
    emb = np.concatenate([freqs, freqs], axis=-1)
    rot = np.concatenate([-x[..., D // 2:], x[..., :D // 2]], axis=-1)
    return (x * np.cos(emb)[:, None] + rot * np.sin(emb)[:, None]).astype(np.float32)


def rope_scores(query_offset=True, rotate_keys=True):
    keys = np.arange(K)
    queries = keys[K - Q:] if query_offset else np.arange(Q)
    return dots(rotate(q, queries), rotate(k, keys) if rotate_keys else k, D ** -0.5)


def command(name, scores, *extra):
    np.save(WORK / f"{name}.npy", scores)
    return [PE, "check", "--family", "scores", str(WORK / f"{name}.npy"), "--q", str(WORK / "q.npy"), "--k",
            str(WORK / "k.npy"), *extra]


judge("alibi_bottom_right", command("alibi", alibi_scores(), "--alibi-form", "symmetric"), True)
judge("alibi_offset_dropped", command("alibi_top_left", alibi_scores(query_offset=False), "--alibi-form", "symmetric"),
      False, "the query offset dropped: queries numbered from 0, not from 60")
judge("alibi_no_scale", command("alibi_unscaled", alibi_scores(scale=1.0), "--alibi-form", "symmetric"), False,
      "no softmax scale")
judge("rope_inside", command("rope", rope_scores(), "--encoding", "rope", "--base", str(BASE)), True)
judge("rope_keys_unrotated", command("rope_k", rope_scores(rotate_keys=False), "--encoding", "rope", "--base",
                                     str(BASE)), False, "keys not rotated")
judge("rope_offset_dropped", command("rope_top_left", rope_scores(query_offset=False), "--encoding", "rope", "--base",
                                     str(BASE)), False, "the query offset dropped")
judge("rope_positions_given", command("rope_given", rope_scores(), "--encoding", "rope", "--base", str(BASE),
                                      "--queries", f"{K - Q}:{K}", "--keys", f"0:{K}"), True)
# bfloat16 q and k (as uint16 bits, --dtype bf16) beside float32 scores, FlashInfer's way: rotated in float32,
# stored in bfloat16, the dot product in float32.
def bf16_bits(a):
    b = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def from_bits(u):
    return (u.astype(np.uint32) << 16).view(np.float32)


qb, kb = from_bits(bf16_bits(q)), from_bits(bf16_bits(k))
np.save(WORK / "qb.npy", bf16_bits(q))
np.save(WORK / "kb.npy", bf16_bits(k))
rq = from_bits(bf16_bits(rotate(qb, np.arange(K - Q, K))))
rk = from_bits(bf16_bits(rotate(kb, np.arange(K))))
np.save(WORK / "bf16_scores.npy", dots(rq, rk, D ** -0.5))
judge("rope_bf16_qk_f32_scores", [PE, "check", "--family", "scores", str(WORK / "bf16_scores.npy"), "--q",
                                  str(WORK / "qb.npy"), "--k", str(WORK / "kb.npy"), "--dtype", "bf16", "--encoding",
                                  "rope", "--base", str(BASE)], True)
judge_bad("no_q", [PE, "check", "--family", "scores", str(WORK / "alibi.npy"), "--k", str(WORK / "k.npy")],
          ["--q"])
judge_bad("rope_flag_without_rope", command("x1", alibi_scores(), "--base", "500000"), ["--base", "--encoding rope"])
judge_bad("alibi_flag_with_rope", command("x2", rope_scores(), "--encoding", "rope", "--max-bias", "8"),
          ["--max-bias", "--encoding alibi"])
judge_bad("scores_shape", command("x3", alibi_scores()[:, :2]), ["TABLE", "[heads, queries, keys]"])
judge_bad("q_flag_elsewhere", [PE, "check", "--family", "rope", "--input", str(WORK / "q.npy"), "--output",
                               str(WORK / "q.npy"), "--positions", "0:4", "--q", str(WORK / "q.npy")],
          ["--q", "--family scores only"])
judge_bad("bad_encoding", command("x4", alibi_scores(), "--encoding", "t5"), ["--encoding", "rope, alibi or none"])
finish("scores")
