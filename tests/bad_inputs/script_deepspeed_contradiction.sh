#!/bin/bash
DS_CONFIG=ds_config.json
cat <<EOT > $DS_CONFIG
{"train_micro_batch_size_per_gpu": 2, "zero_optimization": {"stage": 2}}
EOT
deepspeed --num_nodes 1 --num_gpus 8 pretrain_gpt.py --tensor-model-parallel-size 2 \
  --pipeline-model-parallel-size 2 --num-layers 24 --hidden-size 1024 --num-attention-heads 16 \
  --seq-length 1024 --max-position-embeddings 1024 --fp16 \
  --deepspeed --deepspeed_config $DS_CONFIG --zero-stage 2
