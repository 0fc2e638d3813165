#!/bin/bash
# Megatron-Bridge's launcher inside a loop, as its examples/models/*/slurm_pretrain.sh build it.
for TP in 2 4; do
    CMD="python /opt/Megatron-Bridge/scripts/training/run_recipe.py --recipe llama3_8b_pretrain_config"
    CMD="$CMD model.tensor_model_parallel_size=$TP train.global_batch_size=128"
    srun $CMD
done
