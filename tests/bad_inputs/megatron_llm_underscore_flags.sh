#!/bin/bash
torchrun --nproc_per_node 8 finetune.py --tensor_model_parallel_size 4 --pipeline_model_parallel_size 1 --num_layers 32 --hidden_size 4096 --use_rms_norm --glu_activation swiglu
