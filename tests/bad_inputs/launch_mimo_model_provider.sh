#!/bin/bash
# Megatron-LM's MIMO trainer builds a multimodal model from --model-provider (as examples/mimo/scripts/run_vlm_train.sh).
torchrun --nproc_per_node 2 --nnodes 1 examples/mimo/train.py \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 \
    --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 2048 \
    --micro-batch-size 4 --global-batch-size 128 --model-provider llava_vlm --bf16
