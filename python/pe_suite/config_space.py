"""The model-config space verify_rope draws from: HF-style RoPE configs (config.json's rope_theta, head_dim,
partial_rotary_factor, rope_scaling of every rope_type, M-RoPE sections) with realistic parameter ranges and
every shipped config's values (pe_suite/hf_configs, the repository's examples/hf_configs), position
scenarios as engines meet them, shapes and dtypes. The ranges are the shared definition's (config_space.json,
also compiled into the C++ properties: pe/harness/config_space.h); the rules that tie parameters together
(YaRN's max_position_embeddings = original x factor, Llama-3's high = low x ratio, LongRoPE's one factor per
pair) are written here and in properties/support/model_configs.cc. Every draw is a function of a random.Random,
so a seed reproduces a case."""
import json
import math
import pathlib

def _load_space():
    """The model-config space (config_space.json beside this file: harness/data/config_space.json, the file the
    C++ properties compile in; schema pe-suite/config-space/1)."""
    space = json.loads(pathlib.Path(__file__).with_name("config_space.json").read_text())
    if space.get("schema") != "pe-suite/config-space/1":
        raise ValueError(f"config_space.json: schema {space.get('schema')!r}, expected 'pe-suite/config-space/1'")
    return space


SPACE = _load_space()
ROPE_TYPES = tuple(SPACE["rope_types"])
# Drawn only when asked for by name: Gemma 4's "proportional" (transformers 5; earlier versions and most kernels
# written against HF's classic types do not have it) and "xpos" (flash-attention's RotaryEmbedding(scale_base),
# rotary-embedding-torch's use_xpos; no HF config states it: pe-suite's keys xpos_scale_base, xpos_centre and
# xpos_keys at the config's top level do).
OPT_IN_ROPE_TYPES = ("proportional", "xpos")
XPOS_KEYS = ("xpos_scale_base", "xpos_centre", "xpos_keys")
# xPos's exponent |w| = |p - centre|/scale_base at most: its gain zeta_0^w then lies within [0.0067, 150], so
# inputs scaled by 2^4 stay within float16's range; engines use it at a few thousand positions.
XPOS_MAX_EXPONENT = 4
KNOWN_ROPE_TYPES = ROPE_TYPES + OPT_IN_ROPE_TYPES
# The engines whose reading of HF's rope types a drawn config states (apply_semantics): "hf" (transformers), "vllm"
# and "sglang" (one table for dynamic NTK at factor·L, Hunyuan's alpha where rope_scaling gives it, YaRN's
# attention_factor times its mscale), "tgi" (text-generation-inference's SuRotaryEmbedding: LongRoPE's list chosen
# per token, short below original_max_position_embeddings and long from it; its other types are drawn as HF's).
SEMANTICS = ("hf", "vllm", "sglang", "tgi")
FORMS = tuple(SPACE["forms"])
SCENARIOS = tuple(SPACE["scenarios"])
# A table has no length-dependent method: its scenarios are the token positions' alone, not "crossing" (a prefill
# up to a RoPE method's original context, then decode steps past it, then a new sequence: verify_rope's calls).
TABLE_SCENARIOS = tuple(s for s in SCENARIOS if s != "crossing")
DTYPES = tuple(SPACE["dtypes"])
LAYOUTS = tuple(SPACE["layouts"])
# Head dims engines ship (64, 80, 96, 128, 256) and small ones, with tails that no vector width divides.
HEAD_DIMS = tuple(SPACE["head_dims"])


# Methods whose frequencies depend on the call's length (HF's seq_len = max(position_ids) + 1): each call's reference
# is its own, and <q, k> is relative only within one length.
LENGTH_DEPENDENT = ("dynamic", "longrope")


def rope_type_of(config):
    """The config's rope_type as HF reads it (rope_scaling's rope_type, or its older `type`; "mrope" and none are
    the default frequencies)."""
    if "xpos_scale_base" in config:
        return "xpos"
    s = config.get("rope_scaling") or {}
    kind = s.get("rope_type", s.get("type", "default"))
    return "default" if kind == "mrope" else kind


def xpos_reach(config):
    """How far from the centre xPos's drawn positions go: XPOS_MAX_EXPONENT scale_bases."""
    return int(XPOS_MAX_EXPONENT * config["xpos_scale_base"])


def param(kind, name):
    """A method's parameter spec in the space (KeyError naming it when absent)."""
    try:
        return SPACE["methods"][kind][name]
    except KeyError:
        raise KeyError(f"config space: no parameter {kind}.{name}") from None


def value_of(spec, pick, u):
    """A value of the spec from two uniform variates in [0, 1) (pick: a choice's index; u: a range's point), rounded
    as it says: pe::harness::value_of's rule, so both languages draw alike."""
    if "choice" in spec:
        values = spec["choice"]
        v = values[min(len(values) - 1, int(pick * len(values)))]
    elif "uniform" in spec:
        lo, hi = spec["uniform"]
        v = lo + u * (hi - lo)
    else:
        lo, hi = spec["loguniform"]
        v = math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo)))
    if "multiple_of" in spec:  # halves away from zero, as std::round (Python's round() goes to even)
        q = v / spec["multiple_of"]
        v = math.copysign(math.floor(abs(q) + 0.5), q) * spec["multiple_of"]
    if "digits" in spec:
        v = float(f"{v:.{spec['digits']}g}")
    return v


def draw(rng, spec):
    """A value of the spec, or None when the spec's share says it is not given (its `otherwise` drawn instead,
    when it has one)."""
    if "share" in spec and rng.random() >= spec["share"]:
        return draw(rng, spec["otherwise"]) if "otherwise" in spec else None
    return value_of(spec, min(rng.random(), 1 - 2 ** -53), min(rng.random(), 1.0))  # (Hypothesis's may give 1.0)


def _shipped():
    """(rope_type, the config's RoPE keys) of every shipped config that states one plainly."""
    out = []
    folder = pathlib.Path(__file__).with_name("hf_configs")
    for path in sorted(folder.glob("*.json")):
        config = json.loads(path.read_text())
        kind = rope_type_of(config)
        plain = "rope_theta" in config and ("head_dim" in config or "hidden_size" in config)
        if kind not in ROPE_TYPES or not plain or "layer_types" in config or "qk_rope_head_dim" in config:
            continue  # nested (text_config), per-layer RoPE and MLA configs: check_rope's own cases
        keep = {k: config[k] for k in ("rope_theta", "head_dim", "partial_rotary_factor", "rope_scaling",
                                       "max_position_embeddings", "original_max_position_embeddings",
                                       "hidden_size", "num_attention_heads") if k in config}
        out.append((kind, path.name, keep))
    return out


SHIPPED = _shipped()


def check_choices(name, given, known):
    """The declared choices of an argument (dtypes=, rope_types=, ...): a non-empty list of known ones, else
    ValueError naming the argument."""
    if isinstance(given, str) or not given or any(g not in known for g in given):
        raise ValueError(f"{name}: expected a non-empty list of {', '.join(known)}; got {given!r}")


def check_array(array, dtypes):
    """array= ("torch" or "numpy") and the dtypes it can hold."""
    if array not in ("torch", "numpy"):
        raise ValueError(f"array: expected 'torch' or 'numpy'; got {array!r}")
    if array == "numpy" and "bfloat16" in dtypes:
        raise ValueError("dtypes: numpy has no bfloat16; use array='torch' or drop 'bfloat16'")


def draw_scaling(rng, kind, rotary_dim):
    """rope_scaling for `kind` with the space's parameters, and the top-level keys the method reads."""
    top = {}
    if kind == "default":
        return None, top
    if kind not in SPACE["methods"]:
        raise ValueError(f"rope_types: unknown rope_type {kind!r} (known: {', '.join(ROPE_TYPES)})")
    if kind == "linear":
        return {"rope_type": "linear", "factor": draw(rng, param(kind, "factor"))}, top
    if kind == "dynamic":
        top["max_position_embeddings"] = int(draw(rng, param(kind, "max_position_embeddings")))
        return {"rope_type": "dynamic", "factor": draw(rng, param(kind, "factor"))}, top
    if kind == "yarn":
        # The factor a multiple of 1/16, so that max_position_embeddings = original x factor exactly (HF's later
        # versions read YaRN's factor as that ratio).
        s = {"rope_type": "yarn", "factor": draw(rng, param(kind, "factor")),
             "original_max_position_embeddings": int(draw(rng, param(kind, "original_max_position_embeddings")))}
        if (fast := draw(rng, param(kind, "beta_fast"))) is not None:  # the betas are given together
            s["beta_fast"], s["beta_slow"] = fast, draw(rng, param(kind, "beta_slow"))
        if (attention := draw(rng, param(kind, "attention_factor"))) is not None:
            s["attention_factor"] = attention
        top["max_position_embeddings"] = int(s["original_max_position_embeddings"] * s["factor"])
        return s, top
    if kind == "llama3":
        low = draw(rng, param(kind, "low_freq_factor"))
        return {"rope_type": "llama3", "factor": draw(rng, param(kind, "factor")), "low_freq_factor": low,
                "high_freq_factor": low * draw(rng, param(kind, "high_over_low")),
                "original_max_position_embeddings": int(draw(rng, param(kind, "original_max_position_embeddings")))}, top
    if kind == "longrope":  # one factor per pair, ascending as the shipped lists are
        pairs = rotary_dim // 2
        short = sorted(draw(rng, param(kind, "short_factor")) for _ in range(pairs))
        long = sorted(draw(rng, param(kind, "long_factor")) for _ in range(pairs))
        original = int(draw(rng, param(kind, "original_max_position_embeddings")))
        top["original_max_position_embeddings"] = original
        top["max_position_embeddings"] = original * int(draw(rng, param(kind, "max_over_original")))
        return {"rope_type": "longrope", "short_factor": short, "long_factor": long}, top
    if kind == "xpos":  # unscaled RoPE and the gain; the centre follows the positions (draw_case)
        return None, {"xpos_scale_base": draw(rng, param(kind, "scale_base")), "xpos_keys": rng.random() < 0.5}
    if kind == "proportional":  # Gemma 4's keys: the factor and the share of the pairs that turn
        return {"rope_type": "proportional", "factor": draw(rng, param(kind, "factor")),
                "partial_rotary_factor": draw(rng, param(kind, "partial_rotary_factor"))}, top
    raise ValueError(f"rope_types: no rule for rope_type {kind!r} in the config space")


def apply_semantics(rng, config, semantics):
    """The drawn config as an engine of `semantics` reads it, in the keys pe-suite's check takes (HF's config is
    the same for every engine; what it means is not): under "vllm" and "sglang" a dynamic config is Hunyuan's
    alpha (rope_scaling.alpha, the space's share of them) or one table at n = factor·L
    ("dynamic_semantics": "static"), and YaRN's attention_factor multiplies its mscale ("yarn_attention":
    "multiply"). "hf" leaves the config as drawn."""
    if semantics not in SEMANTICS:
        raise ValueError(f"semantics: expected one of {', '.join(SEMANTICS)}; got {semantics!r}")
    s = config.get("rope_scaling")
    if semantics == "hf" or not isinstance(s, dict):
        return config
    kind = rope_type_of(config)
    if semantics == "tgi":
        if kind == "longrope":
            s["longrope_switch"] = "per-token"
        return config
    if kind == "dynamic":
        alpha = draw(rng, param("dynamic", "alpha"))
        if alpha is not None:
            s["alpha"] = alpha
        else:
            s["dynamic_semantics"] = "static"
    elif kind == "yarn" and "attention_factor" in s:
        s["yarn_attention"] = "multiply"
    return config


def semantics_fit(config, semantics):
    """Whether a config (a stored failure's) was drawn under `semantics`: the keys apply_semantics writes are
    present exactly where an engine of `semantics` reads the config otherwise than HF."""
    s = config.get("rope_scaling") if isinstance(config.get("rope_scaling"), dict) else {}
    kind, engine = rope_type_of(config), semantics in ("vllm", "sglang")
    if kind == "longrope":
        return (semantics == "tgi") == (s.get("longrope_switch") == "per-token")
    if kind == "dynamic":
        return engine == ("alpha" in s or s.get("dynamic_semantics") == "static")
    if kind == "yarn" and "attention_factor" in s:
        return engine == (s.get("yarn_attention") == "multiply")
    return True


def draw_config(rng, rope_types, forms):
    """An HF config dict (the keys a RoPE implementation reads), and its form ("text", "partial", "mrope", "axial":
    a diffusers video transformer's config, HunyuanVideo's keys rope_axes_dim and rope_theta)."""
    for _ in range(100):
        config, form = _draw_config(rng, rope_types, forms)
        if valid(config):
            return config, form
    raise ValueError(f"rope_types {rope_types} x forms {forms}: no valid config drawn")


def _draw_config(rng, rope_types, forms):
    kind = rng.choice(rope_types)
    form = rng.choice(forms)
    if kind == "proportional" and form in ("partial", "mrope"):
        form = "text"  # proportional's own partial_rotary_factor is its form (Gemma 4 ships no M-RoPE with it)
    if kind == "xpos" and form in ("mrope", "axial"):
        form = "text"  # xPos reads one position per token
    shipped = [c for k, _, c in SHIPPED if k == kind]
    if shipped and form == "text" and rng.random() < SPACE["shipped_share"]:
        config = json.loads(json.dumps(rng.choice(shipped)))
        config.pop("partial_rotary_factor", None)
        if isinstance(config.get("rope_scaling"), dict):
            config["rope_scaling"].pop("mrope_section", None)
            if config["rope_scaling"].get("type") == "mrope" or not config["rope_scaling"]:
                config["rope_scaling"] = None
        if "head_dim" not in config:
            config["head_dim"] = config["hidden_size"] // config["num_attention_heads"]
        return config, form
    head_dim = rng.choice(HEAD_DIMS)
    if form == "axial":
        return _axial_config(rng, kind, head_dim), form
    config = {"rope_theta": draw(rng, SPACE["rope_theta"]), "head_dim": head_dim}
    rotary_dim = head_dim
    if form == "partial":
        # HF: rotary_dim = int(head_dim * partial_rotary_factor); an even one, at least 2 and below head_dim.
        choices = [f for f in SPACE["partial_rotary_factor"]["choice"]
                   if int(head_dim * f) % 2 == 0 and 2 <= int(head_dim * f) < head_dim]
        if choices:
            config["partial_rotary_factor"] = rng.choice(choices)
            rotary_dim = int(head_dim * config["partial_rotary_factor"])
        else:
            form = "text"
    scaling, top = draw_scaling(rng, kind, rotary_dim)
    config.update(top)
    if form == "mrope":
        pairs = rotary_dim // 2
        if pairs >= 3:
            t = rng.randint(1, pairs - 2)
            h = rng.randint(1, pairs - t - 1)
            section = [t, h, pairs - t - h]
            scaling = dict(scaling or {"rope_type": "default"})
            scaling["mrope_section"] = section
        else:
            form = "text"
    config["rope_scaling"] = scaling
    return config, form


def _axial_config(rng, kind, head_dim):
    """HunyuanVideoTransformer3DModel's keys (each axis its own ladder over rope_axes_dim's channels, at
    rope_theta: HunyuanVideo's 256, Flux's 10000, or a drawn base); axial RoPE takes no scaling, so any other
    rope_type is left invalid (valid() refuses it) and drawn again."""
    pairs = head_dim // 2
    t = rng.randint(1, max(1, pairs - 2))
    h = rng.randint(1, max(1, pairs - t - 1))
    theta = rng.choice([256.0, 10000.0, draw(rng, SPACE["rope_theta"])])
    config = {"_class_name": "HunyuanVideoTransformer3DModel", "attention_head_dim": head_dim, "head_dim": head_dim,
              "rope_theta": theta, "rope_axes_dim": [2 * t, 2 * h, 2 * (pairs - t - h)], "rope_scaling": None}
    if kind != "default":
        config["rope_scaling"], _ = draw_scaling(rng, kind, head_dim)
    return config


def axial_grid(positions, height, width):
    """1-D positions as the (frame, row, column) cells of a video of height x width patches, row-major."""
    return [[p // (height * width) for p in positions], [(p // width) % height for p in positions],
            [p % width for p in positions]]


def draw_positions(rng, scenario, tokens, max_position, threshold=None):
    """Token positions of one call: prefill from 0, a decode step (or several) at an offset, a chunk of a
    chunked prefill, packed sequences that restart at 0, HF's left padding (pads at position 1), or consecutive
    positions across `threshold` (the original context a length-dependent method switches at: crossing_start),
    at the drawn offset where there is none."""
    offset = int(math.exp(rng.uniform(0.0, math.log(max(2, max_position - tokens)))))
    if scenario == "prefill":
        return list(range(tokens))
    if scenario == "crossing" and threshold is not None:
        offset = crossing_start(tokens, threshold, max_position)
    if scenario in ("decode", "chunked", "crossing"):
        return [offset + k for k in range(tokens)]
    if scenario == "packed":
        out = []
        while len(out) < tokens:
            out += list(range(rng.randint(1, max(1, tokens - len(out)))))
        return out[:tokens]
    if scenario == "left_padding":
        pads = rng.randint(0, tokens - 1)
        return [1] * pads + list(range(tokens - pads))
    raise ValueError(f"scenarios: unknown scenario {scenario!r} (known: {', '.join(SCENARIOS)})")


def crossing_start(tokens, threshold, max_position):
    """The first position of a crossing call of `tokens` rows: its prefill (all rows but the last two) ends at
    threshold - 1, its longest length as HF reads it (max(position_ids) + 1 = threshold, not past it), and its
    decode steps start at threshold, each a length past it."""
    return max(0, min(threshold - max(1, tokens - 2), max_position - tokens))


def length_threshold(config):
    """The original context L a config's method switches at with the call's length (LongRoPE's
    original_max_position_embeddings, dynamic NTK's max_position_embeddings), else the one its scaling was
    fitted to (YaRN's and Llama-3's), else None."""
    kind, s = rope_type_of(config), config.get("rope_scaling") or {}
    if kind == "longrope":
        return config.get("original_max_position_embeddings", s.get("original_max_position_embeddings"))
    if kind == "dynamic":
        return config.get("max_position_embeddings")
    return s.get("original_max_position_embeddings") if isinstance(s, dict) else None


def rotary_dim_of(config):
    return int(config["head_dim"] * config.get("partial_rotary_factor", 1.0))


def valid(config):
    """Whether HF's formulas are defined for the config: an even rotary dim of at least 2 (4 under dynamic,
    whose base grows by a power dim / (dim - 2)), M-RoPE sections of at least one pair each summing to the
    pairs, LongRoPE lists of one factor per pair, proportional's share turning at least one pair."""
    rotary, s = rotary_dim_of(config), config.get("rope_scaling") or {}
    if "rope_axes_dim" in config:
        axes = config["rope_axes_dim"]
        return not s and min(axes) >= 2 and all(a % 2 == 0 for a in axes) and sum(axes) == config["head_dim"]
    if rotary < 2 or rotary % 2 or rotary > config["head_dim"] or (rope_type_of(config) == "dynamic" and rotary < 4):
        return False
    if "mrope_section" in s and (min(s["mrope_section"]) < 1 or sum(s["mrope_section"]) != rotary // 2):
        return False
    if rope_type_of(config) == "proportional" and int(s.get("partial_rotary_factor", 1.0) * rotary // 2) < 1:
        return False  # HF's int(F·d // 2) pairs turn: at least one (pe-suite refuses none, naming the factor)
    return all(len(s[k]) == rotary // 2 for k in ("short_factor", "long_factor") if k in s)
