#!/usr/bin/env python3
"""Runs every `pe-suite` example of README.md and docs/*.md as written, so the manual cannot drift from the
command it documents.

    python3 scripts/docs_examples_test.py PATH/TO/pe-suite [--slow] [--only TEXT]

Each ```bash, ```sh or ```console block is an example; its lines that start with `pe-suite ` or `cc ` (the
compiler call that makes a plug-in; in a console block after `$ `) are run in order by bash, in a fresh directory per block, with `pe-suite` on PATH. An
HTML comment on the line before the block steers it:

    <!-- docs-test: setup=inputs,plugin_c expect-exit=1 -->
    <!-- docs-test: skip reason="needs a cluster" -->
    <!-- docs-test: slow reason="the full benchmark grid takes 25 minutes" -->

setup names fixtures (FIXTURES below) run before each command; expect-exit is the exit code every command
of the block must give (default 0), or one per command (expect-exit=0,1); skip and slow need a reason, and
slow blocks run only with --slow.
Prints `docs examples: N passed, M failed, K skipped` (one per command) and exits 1 on any failure.
"""
import argparse
import ast
import math
import os
import pathlib
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```(\w*)\s*$")
DIRECTIVE = re.compile(r"^<!--\s*docs-test:(.*)-->\s*$")
KEYS = {"setup", "expect-exit", "skip", "slow", "reason", "timeout"}
# Flags of pe-suite's commands that take no value; every other --flag takes one (the fixtures' view).
BOOLEAN = {"--heads-first", "--no-rope", "--reference", "--slopes-only", "--exhaustive", "--quick", "--all",
           "--no-bench", "--no-properties"}


class Example:
    def __init__(self, path, line, directives):
        self.path, self.line, self.directives, self.commands, self.errors = path, line, directives, [], []

    def where(self, line=None):
        return f"{self.path.relative_to(ROOT)}:{line or self.line}"


def parse_directives(text):
    out = {}
    for token in shlex.split(text):
        key, _, value = token.partition("=")
        out[key] = value
    return out


def examples_of(path):
    """The blocks of one Markdown file that hold pe-suite commands, with their directives."""
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or not m.group(1):
            i += 1
            continue
        lang, start = m.group(1), i
        previous = next((lines[k] for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        d = DIRECTIVE.match(previous.strip())
        example = Example(path, start + 1, {})
        try:
            example.directives = parse_directives(d.group(1)) if d else {}
        except ValueError as e:
            example.errors.append(f"unreadable docs-test comment: {e}")
        i += 1
        pending, first = "", None
        while i < len(lines) and not lines[i].startswith("```"):
            text = lines[i]
            if lang == "console":
                text = text[2:] if text.startswith("$ ") else ""
            first = first or i + 1
            if text.endswith("\\"):  # a continued command: one line for bash, as the reader types it
                pending += text[:-1]
            else:
                command, pending = (pending + text).strip(), ""
                if command.startswith(("pe-suite ", "cc ")) and lang in ("bash", "sh", "console"):
                    example.commands.append((first, command))
                first = None
            i += 1
        i += 1
        unknown = set(example.directives) - KEYS
        if unknown:
            example.errors.append(f"unknown docs-test keys {sorted(unknown)}")
        if ("skip" in example.directives or "slow" in example.directives) and not example.directives.get("reason"):
            example.errors.append("skip and slow must give a reason=\"...\"")
        if d and not example.commands:
            example.errors.append("docs-test comment on a block without pe-suite commands")
        if example.commands or example.errors:
            yield example


# ---- fixtures: the files an example's commands read, made the way a correct kernel would have written them

def write_npy(path, descr, shape, values):
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (descr, tuple(shape))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"  # numpy pads the header to 64 bytes
    code = {"<i8": "q", "<f8": "d", "<f4": "f"}[descr]
    path.write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1")
                     + struct.pack(f"<{len(values)}{code}", *values))


def read_f32_npy(path):
    data = path.read_bytes()
    size = struct.unpack("<H", data[8:10])[0]
    header = ast.literal_eval(data[10:10 + size].decode("latin1"))
    assert header["descr"] == "<f4" and not header["fortran_order"], f"{path}: {header}"
    body = data[10 + size:]
    return header["shape"], list(struct.unpack(f"<{len(body) // 4}f", body))


def split_options(argv):
    """argv -> (positionals, [(flag, value or None)]) in their order."""
    positional, options, i = [], [], 0
    while i < len(argv):
        if argv[i].startswith("--") and argv[i] not in BOOLEAN and i + 1 < len(argv):
            options.append((argv[i], argv[i + 1]))
            i += 2
        else:
            if argv[i].startswith("--"):
                options.append((argv[i], None))
            else:
                positional.append(argv[i])
            i += 1
    return positional, options


def flatten(options):
    return [x for flag, value in options for x in ((flag,) if value is None else (flag, value))]


class Context:
    def __init__(self, work, exe):
        self.work, self.exe, self.made = work, exe, {}  # made: file -> its mtime when a fixture wrote it

    def missing(self, name):
        """True when NAME is for the fixture to write: absent, or as a fixture wrote it for an earlier command
        (each command gets data matching its own flags); a file an example wrote is left alone."""
        if name is None:
            return False
        path = self.work / name
        return not path.exists() or self.made.get(name) == path.stat().st_mtime_ns

    def wrote(self, name):
        self.made[name] = (self.work / name).stat().st_mtime_ns

    def export(self, args, out):
        r = subprocess.run([self.exe, "export", *args, "--reference", "--out", out], cwd=self.work,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"fixture: pe-suite export {' '.join(args)} --out {out}: {r.stdout}{r.stderr}")
        self.wrote(out)


def positions_of(opts, axes):
    """The token positions of a command: its --positions range, or 64 spread ones for a --positions-file."""
    if "--positions" in opts:
        a, b = (int(x) for x in opts["--positions"].split(":"))
        return [list(range(a, b))] * axes
    return [[i * 997 + 31 * k for i in range(64)] for k in range(axes)]


def fixture_inputs(ctx, argv):
    """check/export: every .npy or config the command reads, from its own flags (census, verify: the configs)."""
    if argv[:1] not in (["check"], ["export"], ["census"], ["verify"]):
        return
    positional, options = split_options(argv[1:])
    opts = dict(options)
    for flag, config in options:  # --hf-config, repeated in a sweep
        if flag == "--hf-config" and not (ctx.work / config).exists() and \
                (ROOT / "examples/hf_configs" / config).exists():
            shutil.copy(ROOT / "examples/hf_configs" / config, ctx.work / config)
    if argv[:1] in (["census"], ["verify"]):
        return
    family = opts.get("--family")
    if family == "alibi":
        if argv[0] == "check" and positional and ctx.missing(positional[0]):
            keep = [(f, v) for f, v in options if f in ("--queries", "--keys", "--max-bias", "--alibi-slopes",
                                                         "--alibi-form", "--dtype")]
            slopes = ["--slopes-only"] if "slopes" in positional[0] else []
            ctx.export(["--family", "alibi", "--heads", "12", *slopes, *flatten(keep)], positional[0])
        return
    axes = len(opts["--mrope-section"].split(",")) if "--mrope-section" in opts else 2 if "--vision" in opts else 1
    positions = positions_of(opts, axes)
    if ctx.missing(opts.get("--positions-file")):
        flat = [p for axis in positions for p in axis]
        write_npy(ctx.work / opts["--positions-file"], "<i8", [axes, len(positions[0])] if axes > 1 else
                  [len(flat)], flat)
        ctx.wrote(opts["--positions-file"])
    if family == "sinusoidal":
        if argv[0] == "check" and positional and ctx.missing(positional[0]):
            keep = [(f, v) for f, v in options if f in ("--positions", "--positions-file", "--dim", "--base",
                                                        "--layout", "--dtype")]
            dim = [] if "--dim" in opts else ["--dim", "128"]  # export needs one; check reads the table's
            ctx.export(["--family", "sinusoidal", *dim, *flatten(keep)], positional[0])
        return
    rotary = int(opts.get("--rotary-dim", opts.get("--dim", 0)) or 0)
    head_dim = max(128, int(opts.get("--rotary-offset", 0)) + rotary)
    if len(positions[0]) > 16384 and not {"--hf-config", "--rotary-dim", "--dim", "--short-factors"} & set(opts):
        head_dim = 16  # 65536 tokens x 128 channels took 75 s of checking; any head dim shows the same thing
    for flag in ("--short-factors", "--long-factors"):  # LongRoPE's lists: one factor per rotary pair
        if ctx.missing(opts.get(flag)):
            n = (rotary or int(head_dim * float(opts.get("--partial-rotary-factor", 1)))) // 2
            write_npy(ctx.work / opts[flag], "<f8", [n], [1.0 + (j if "long" in flag else 0) / n for j in range(n)])
            ctx.wrote(opts[flag])
    x = opts.get("--input")
    if ctx.missing(x):  # any values in [-1, 1] will do: a sinusoidal table of [tokens, head_dim]
        ctx.export(["--family", "sinusoidal", "--dim", str(head_dim), "--positions", f"0:{len(positions[0])}"], x)
    y = opts.get("--output")
    if argv[0] != "check" or not ctx.missing(y):
        return
    if "--no-rope" in opts:  # a NoPE layer: the input, times the attention temperature t(p) when one is given
        shape, values = read_f32_npy(ctx.work / x)
        row = len(values) // shape[0]
        t = [temperature(opts, p) for p in positions[0]]
        write_npy(ctx.work / y, "<f4", shape, [v * t[i // row] for i, v in enumerate(values)])
        ctx.wrote(y)
        return
    dropped = {"--family", "--input", "--output", "--json", "--against", "--max-abs", "--contract", "--rotary-dim",
               "--xpos-scale-base", "--xpos-centre", "--xpos-keys"}
    keep = [(f, v) for f, v in options if f not in dropped]
    dims = [] if "--hf-config" in opts or "--partial-rotary-factor" in opts else ["--dim", str(rotary)]
    ctx.export(["--family", "rope", "--input", x, *dims, *flatten(keep)], y)
    if "--xpos-scale-base" in opts:  # export rotates; xPos's gain per pair after it (docs/commands.md "xPos")
        shape, values = read_f32_npy(ctx.work / y)
        write_npy(ctx.work / y, "<f4", shape, xpos_gained(opts, positions[0], shape[-1], values))


def xpos_gained(opts, positions, head_dim, values):
    """values [tokens, head_dim] (half-split pairs j, j + head_dim/2) times g_j(p) = zeta_j^w, in double."""
    scale_base = float(opts["--xpos-scale-base"])
    centre = int(opts.get("--xpos-centre", (max(positions) + 1) // 2))
    sign = -1 if "--xpos-keys" in opts else 1
    out = list(values)
    for t, p in enumerate(positions):
        w = sign * (p - centre) / scale_base
        for j in range(head_dim // 2):
            g = ((2 * j + 0.4 * head_dim) / (1.4 * head_dim)) ** w
            for c in (j, j + head_dim // 2):
                out[t * head_dim + c] *= g
    return out


def temperature(opts, p):
    """t(p) of docs/commands.md's table, in double: its one rounding into float32 is within the budget."""
    kind = opts.get("--attn-temperature")
    if kind == "llama4":
        return 1 + float(opts.get("--attn-scale", 0.1)) * math.log((p + 1) // int(opts.get("--floor-scale", 8192)) + 1)
    if kind == "mistral":
        return 1 + float(opts.get("--beta", 0.1)) * math.log(1 + p // int(opts["--original-max-position"]))
    return 1.0


def fixture_plugin_c(ctx, argv):
    """examples/plugin_c built by hand as ./libexample_plugin.so (the C compiler, no CMake)."""
    if (ctx.work / "libexample_plugin.so").exists():
        return
    cc = os.environ.get("CC", "cc")
    r = subprocess.run([cc, "-std=c99", "-O2", "-shared", "-fPIC", "-fvisibility=hidden", "-I", str(ROOT / "impl/include"),
                        str(ROOT / "examples/plugin_c/engine_rope.c"), "-lm", "-o", "libexample_plugin.so"],
                       cwd=ctx.work, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"fixture plugin_c: {cc} failed: {r.stderr}")


def fixture_source(ctx, argv):
    """The checkout's headers and examples where a command run from the checkout finds them."""
    for name in ("impl", "examples"):
        if not (ctx.work / name).exists():
            (ctx.work / name).symlink_to(ROOT / name, target_is_directory=True)


FIXTURES = {"inputs": fixture_inputs, "plugin_c": fixture_plugin_c, "source": fixture_source}


def run_example(example, exe, bindir, results):
    d = example.directives
    wants = [int(x) for x in d.get("expect-exit", "0").split(",")]
    if len(wants) == 1:
        wants *= len(example.commands)
    if len(wants) != len(example.commands):
        example.errors.append(f"expect-exit lists {len(wants)} codes for {len(example.commands)} commands")
    fixtures = [f for f in d.get("setup", "").split(",") if f]
    unknown = [f for f in fixtures if f not in FIXTURES]
    if unknown:
        example.errors.append(f"unknown fixtures {unknown} (known: {sorted(FIXTURES)})")
    if example.errors:
        for e in example.errors:
            print(f"FAIL {example.where()}: {e}")
        results["failed"] += max(1, len(example.commands))
        return
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    with tempfile.TemporaryDirectory(prefix="pe-docs-") as work:
        ctx = Context(pathlib.Path(work), exe)
        for (line, command), want in zip(example.commands, wants):
            start = time.monotonic()
            try:
                for name in fixtures:
                    FIXTURES[name](ctx, shlex.split(command, comments=True)[1:])
                r = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True,
                                   timeout=float(d.get("timeout", 600)))
                ok, detail = r.returncode == want, f"exit {r.returncode} (want {want})\n{r.stdout}{r.stderr}"
            except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
                ok, detail = False, str(e)
            results["passed" if ok else "failed"] += 1
            print(f"{'ok  ' if ok else 'FAIL'} {example.where(line)} ({time.monotonic() - start:.1f} s): {command}")
            if not ok:
                print("\n".join("    " + s for s in detail.strip().splitlines()[-30:]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pe_suite", help="the pe-suite binary to run the examples with")
    parser.add_argument("--slow", action="store_true", help="also run the blocks marked slow")
    parser.add_argument("--only", default="", help="run only examples whose file:line or command contains this")
    args = parser.parse_args()
    exe = str(pathlib.Path(args.pe_suite).resolve())
    if not os.access(exe, os.X_OK):
        sys.exit(f"not an executable: {args.pe_suite}")
    results = {"passed": 0, "failed": 0, "skipped": 0}
    with tempfile.TemporaryDirectory(prefix="pe-docs-bin-") as bindir:
        os.symlink(exe, os.path.join(bindir, "pe-suite"))  # `pe-suite` as the examples spell it
        for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
            for example in examples_of(path):
                if args.only and not any(args.only in f"{example.where(l)} {c}" for l, c in example.commands):
                    continue
                d = example.directives
                if not example.errors and ("skip" in d or ("slow" in d and not args.slow)):
                    results["skipped"] += len(example.commands)
                    print(f"skip {example.where()}: {len(example.commands)} command(s): {d['reason']}")
                    continue
                run_example(example, exe, bindir, results)
    print(f"docs examples: {results['passed']} passed, {results['failed']} failed, {results['skipped']} skipped")
    sys.exit(1 if results["failed"] else 0)


if __name__ == "__main__":
    main()
