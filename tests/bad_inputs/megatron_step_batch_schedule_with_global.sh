#!/bin/bash
# --step-batch-size-schedule beside --global-batch-size: Megatron's arguments.py refuses the pair.
torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 --num-attention-heads 16 \
  --seq-length 1024 --max-position-embeddings 1024 --micro-batch-size 2 --global-batch-size 64 \
  --step-batch-size-schedule "0:16 1B:64" --bf16
