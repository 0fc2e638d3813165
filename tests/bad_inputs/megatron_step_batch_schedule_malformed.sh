#!/bin/bash
# --step-batch-size-schedule written with dashes: not Megatron-Core's THRESHOLD:BATCH steps.
torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 --num-attention-heads 16 \
  --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 2 \
  --step-batch-size-schedule "0-32 10B-128" --bf16
