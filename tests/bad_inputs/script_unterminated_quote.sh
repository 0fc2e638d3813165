#!/bin/bash
TP=2
OPTS="--tensor-model-parallel-size $TP
torchrun --nnodes 1 --nproc_per_node 8 pretrain_gpt.py $OPTS --num-layers 24
