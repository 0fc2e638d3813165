#!/bin/bash
# Megatron-LM's BERT entry point: not a GPT decoder.
torchrun --nproc_per_node 8 --nnodes 1 pretrain_bert.py --num-layers 24 --hidden-size 1024 \
  --num-attention-heads 16 --seq-length 512 --max-position-embeddings 512 --micro-batch-size 4 --fp16
