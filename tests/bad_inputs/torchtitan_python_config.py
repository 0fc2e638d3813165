# A torchtitan Python config (torchtitan's format since 2026-02), given to `hetsim import torchtitan`.
from torchtitan.config import ParallelismConfig, TrainingConfig
from torchtitan.models.llama3 import model_registry
from torchtitan.trainer import Trainer


def llama3_8b_tp2() -> Trainer.Config:
    return Trainer.Config(
        model_spec=model_registry("8B"),
        training=TrainingConfig(num_tokens_per_microbatch_per_dp_rank=8192, max_context_length=8192),
        parallelism=ParallelismConfig(tensor_parallel_degree=2),
    )
