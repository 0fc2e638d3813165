#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py --use-checkpoint-args --load ckpt --seq-length 2048 --micro-batch-size 2 --global-batch-size 64 --bf16
