#!/bin/bash
# As Megatron-MoE-ModelZoo's best-practice scripts do: the training command is built by another script.
export MODEL=Mixtral-8x22B
PP=1 TP=1 EP=8 NNODES=4 bash ./sbatch_benchmarking.sh --moe-router-force-load-balancing
