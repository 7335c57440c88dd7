"""A fused RoPE + append into a paged KV cache, checked from the cache before and after the kernel (issue 51):
vLLM's `reshape_and_cache` after its rotary op and `concat_and_cache_mla` (MLA's compressed kv beside the rotated
k_pe), FlashInfer's `append_paged_kv_cache` after `apply_rope`, flash-attention's `flash_attn_with_kvcache(k=...,
rotary_cos=...)`. The slots `slot_mapping` names must hold the keys rotated at their positions (check_rope's verdict
on them: its budget, its diagnosis); every other element of the cache must be bit-identical to before (a write
to a neighbouring slot, a block past the table, a padded token's slot -1 written anyway); MLA's compressed part
must be the given ckv, bit for bit.

Cache layouts: "NHD" [blocks, block_size, heads, head_dim] (vLLM's flash backends, FlashInfer's default), "HND"
[blocks, heads, block_size, head_dim] (FlashInfer's other), and MLA's [blocks, block_size, kv_lora_rank + rope
dim] (no heads axis), where x is k_pe [tokens, rope dim] and ckv [tokens, kv_lora_rank]."""
import numpy as np

from . import _native
from ._keywords import checked

_check_rope = checked(_native.check_rope)

LAYOUTS = ("NHD", "HND")


class CacheReport:
    """check_rope_cache's verdict: `.passed`, the written slots' RoPE check (`.rotation`, a Report), the elements
    outside them that changed (`.moved`, the first 8 such slots: slot, block, offset, elements changed, the
    first one's head, channel, before and after), MLA's ckv
    mismatches (`.ckv`), what the changes fit (`.diagnosis`), and the text."""

    def __init__(self, rotation, moved, ckv, diagnosis, text):
        self.rotation, self.moved, self.ckv, self.diagnosis, self.text = rotation, moved, ckv, diagnosis, text
        self.passed = (rotation is None or rotation.passed) and not moved and not ckv

    def __bool__(self):
        return self.passed

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"<pe_suite.CacheReport {'PASS' if self.passed else 'FAIL'}>"


def _numpy(a, name):
    """(a as a numpy array, "bfloat16" for a torch bfloat16 tensor read as its uint16 bits, else None)."""
    if hasattr(a, "detach"):
        import torch
        t = a.detach().cpu().contiguous()
        if t.dtype == torch.bfloat16:
            return t.view(torch.int16).numpy().view(np.uint16), "bfloat16"
        return t.numpy(), None
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{name}: expected a numpy array or a torch tensor, got {type(a).__name__}")
    return a, None


def _bits(a):
    return np.ascontiguousarray(a).view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.itemsize])


def _slots(cache, layout, name):
    """The cache as [slots, heads, width] (a view where the layout allows), and block_size."""
    if cache.ndim == 3:  # MLA: [blocks, block_size, kv_lora_rank + rope dim], one "head"
        return cache.reshape(cache.shape[0] * cache.shape[1], 1, cache.shape[2]), cache.shape[1]
    if cache.ndim != 4:
        raise ValueError(f"{name}: expected [blocks, block_size, heads, head_dim] (NHD), [blocks, heads, block_size, "
                         f"head_dim] (HND) or MLA's [blocks, block_size, width]; got shape {cache.shape}")
    if layout == "HND":
        cache = cache.transpose(0, 2, 1, 3)
    return cache.reshape(cache.shape[0] * cache.shape[1], cache.shape[2], cache.shape[3]), cache.shape[1]


def _validate(x, before, after, slots, layout):
    if layout not in LAYOUTS:
        raise ValueError(f"cache_layout: expected one of {', '.join(LAYOUTS)}; got {layout!r}")
    if before.shape != after.shape or before.dtype != after.dtype:
        raise ValueError(f"cache_after: shape {after.shape} {after.dtype} differs from cache_before's "
                         f"{before.shape} {before.dtype}")
    if slots.ndim != 1 or slots.shape[0] != x.shape[0] or not np.issubdtype(slots.dtype, np.integer):
        raise ValueError(f"slot_mapping: expected one integer per token ({x.shape[0]}); got shape {slots.shape} "
                         f"{slots.dtype}")


def _written(slots, n_slots):
    """The tokens that write (slot >= 0), checked: each slot in the cache, none written twice."""
    tokens = np.nonzero(slots >= 0)[0]
    bad = tokens[slots[tokens] >= n_slots]
    if bad.size:
        raise ValueError(f"slot_mapping: token {bad[0]}'s slot {slots[bad[0]]} lies past the cache's {n_slots} slots")
    seen, counts = np.unique(slots[tokens], return_counts=True)
    if (counts > 1).any():
        raise ValueError(f"slot_mapping: slot {seen[counts > 1][0]} is written by more than one token")
    if (slots < -1).any():
        raise ValueError(f"slot_mapping: {slots[slots < -1][0]} (a slot is >= 0, or -1 for a padded token)")
    return tokens


def _moved(before, after, written, block_size, limit=8):
    """Slots outside the written ones with changed bits: (how many elements, how many slots, the first `limit`
    slots as dicts: slot, block, offset, elements changed, the first one's head, channel, before and after)."""
    changed = _bits(before) != _bits(after)
    changed[written] = False
    per_slot = changed.reshape(changed.shape[0], -1).sum(axis=1)
    moved = np.nonzero(per_slot)[0]
    out = []
    for s in moved[:limit]:
        h, c = np.argwhere(changed[s])[0]
        out.append({"slot": int(s), "block": int(s) // block_size, "offset": int(s) % block_size,
                    "elements": int(per_slot[s]), "head": int(h), "channel": int(c),
                    "before": before[s, h, c].item(), "after": after[s, h, c].item()})
    return int(per_slot.sum()), len(moved), out


def _fits_moved(slot, tokens, slots, x, positions, after, rope_part, keywords):
    """The token whose key, rotated, the moved slot holds (its check passes there), nearest slots first; None."""
    order = sorted(tokens, key=lambda t: abs(int(slots[t]) - slot))[:4]
    for t in order:
        y = after[slot:slot + 1, :, rope_part]
        r = _check_rope(x[t:t + 1], y, np.asarray(positions)[..., t:t + 1], **keywords)
        if r.passed:
            return int(t)
    return None


def check_rope_cache(x, positions, cache_before, cache_after, slot_mapping, *, cache_layout="NHD", ckv=None,
                     dtype=None, **rope_keywords):
    """Check a fused RoPE + paged-cache append (module docstring). x: the keys before rotation, [tokens, heads,
    head_dim] (MLA: k_pe [tokens, rope dim]); positions: one per token; cache_before/cache_after: the cache around
    the kernel's call; slot_mapping: each token's slot, block·block_size + offset (-1: a padded token, nothing
    written); cache_layout: "NHD" or "HND" (MLA's 3-D cache has no heads axis); ckv: MLA's compressed kv [tokens,
    kv_lora_rank], expected at the front of each written slot. dtype and every other keyword as check_rope's
    (base, layout, scaling, hf_config, contract, ...). Returns a CacheReport; the caller's arrays are not written."""
    (x, xt), (before, bt), (after, _) = (_numpy(x, "x"), _numpy(cache_before, "cache_before"),
                                        _numpy(cache_after, "cache_after"))
    slots = np.asarray(_numpy(slot_mapping, "slot_mapping")[0])
    dtype = dtype or bt or xt
    mla = before.ndim == 3
    x = x.reshape(x.shape[0], 1, x.shape[-1]) if mla and x.ndim == 2 else x
    _validate(x, before, after, slots, cache_layout)
    before_s, block_size = _slots(before, cache_layout, "cache_before")
    after_s, _ = _slots(after, cache_layout, "cache_after")
    tokens = _written(slots, before_s.shape[0])
    width = before_s.shape[2]
    nope = width - x.shape[-1] if mla else 0
    if (not mla and width != x.shape[-1]) or nope < 0 or before_s.shape[1] != x.shape[1]:
        raise ValueError(f"cache_before: its slots hold {before_s.shape[1]} head(s) x {width} channels; x is "
                         f"{x.shape[1]} x {x.shape[-1]}")
    rope_part = slice(nope, width)
    keywords = dict(rope_keywords, **({"dtype": dtype} if dtype else {}))
    lines = [f"paged cache: {before_s.shape[0]} slots ({before_s.shape[0] // block_size} blocks x {block_size}), "
             f"{'MLA (ckv ' + str(nope) + ' + rope ' + str(x.shape[-1]) + ')' if mla else cache_layout}, "
             f"{len(tokens)} of {len(slots)} tokens written"]
    rotation = None
    if len(tokens):
        rotation = _check_rope(x[tokens], after_s[slots[tokens]][:, :, rope_part],
                                      np.asarray(positions)[..., tokens], **keywords)
        lines += ["written slots (the rotated keys):", str(rotation).rstrip()]
    ckv_bad = []
    if mla and ckv is not None:
        c, _ = _numpy(ckv, "ckv")
        if c.shape != (len(slots), nope):
            raise ValueError(f"ckv: expected [tokens, kv_lora_rank] = ({len(slots)}, {nope}); got {c.shape}")
        diff = np.argwhere(_bits(after_s[slots[tokens], 0, :nope]) != _bits(np.ascontiguousarray(c[tokens])))
        ckv_bad = [{"token": int(tokens[t]), "channel": int(ch)} for t, ch in diff[:8]]
        lines.append(f"ckv: {len(diff)} element(s) of the compressed part differ from the given ckv"
                     if len(diff) else "ckv: the compressed part is the given ckv, bit for bit")
    count, n_slots, moved = _moved(before_s, after_s, slots[tokens], block_size)
    diagnosis = []
    if count:
        lines.append(f"outside the written slots: {count} element(s) in {n_slots} slot(s) changed (they must keep "
                     f"their bits); first:")
        lines += [f"  slot {m['slot']} (block {m['block']}, offset {m['offset']}): {m['elements']} element(s), "
                  f"first head {m['head']} channel {m['channel']}: {m['before']!r} -> {m['after']!r}" for m in moved]
        for slot in [m["slot"] for m in moved[:4]]:
            t = _fits_moved(slot, tokens, slots, x, positions, after_s, rope_part, keywords)
            if t is not None:
                diagnosis.append(f"token {t}'s rotated key written at slot {slot}, not at its slot {int(slots[t])} "
                                 f"(slot_mapping): off by {slot - int(slots[t])}")
        lines += [f"the data fits: {d}" for d in diagnosis] or ["undetermined: no token's rotated key fits the "
                                                                "changed slots"]
    else:
        lines.append("outside the written slots: every element keeps its bits")
    report = CacheReport(rotation, moved, ckv_bad, diagnosis, "")
    lines.append(f"verdict: {'PASS' if report.passed else 'FAIL'}")
    report.text = "\n".join(lines) + "\n"
    return report
