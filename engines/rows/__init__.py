"""Every row of the matrix, one module per engine; a module imports its engine only inside a row's kernel()."""
import importlib

MODULES = ("transformers_rows", "diffusers_rows", "whisper_rows", "timm_rows", "x_transformers_rows",
           "rotary_embedding_torch_rows", "torchtune_rows", "mlx_rows", "torch_compile_rows", "liger_rows",
           "vllm_rows")


def all_rows():
    rows = []
    for name in MODULES:
        rows += importlib.import_module(f"engines.rows.{name}").ROWS
    return rows
