#!/bin/bash
# A DeepSpeed config that is a device, not a file: refused, never read.
deepspeed --num_nodes 1 --num_gpus 8 pretrain_gpt.py --num-layers 4 --hidden-size 256 --num-attention-heads 4 \
  --seq-length 128 --max-position-embeddings 128 --micro-batch-size 1 --deepspeed --deepspeed_config /dev/zero
